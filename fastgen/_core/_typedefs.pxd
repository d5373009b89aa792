# Shared scalar and fused types for the fastgen kernels (after scikit-learn's utils/_typedefs.pxd).
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

ctypedef double float64_t
ctypedef float float32_t
ctypedef Py_ssize_t intp_t

# Values of X: float32/float64 as given, and int32/int64 counts as given (CountVectorizer makes
# int64), so that counts are never copied to float just to be read once.
ctypedef fused data_t:
    float32_t
    float64_t
    int32_t
    int64_t

# Integer class labels, in every width and signedness NumPy has.
ctypedef fused label_t:
    int8_t
    int16_t
    int32_t
    int64_t
    uint8_t
    uint16_t
    uint32_t
    uint64_t

# CSR indices/indptr: int32 for ordinary matrices, int64 for matrices with more than 2**31 nonzeros.
ctypedef fused index_t:
    int32_t
    int64_t

# Software prefetch of data read soon (a no-op on compilers without the builtin), into every
# cache level: into the first-level cache too (locality 3), the rows counted next and the table
# rows scored next came 4% sooner than from the second-level cache (locality 1).
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define fastgen_prefetch(p) __builtin_prefetch((const void *)(p), 0, 3)
    #else
    #define fastgen_prefetch(p) ((void)0)
    #endif
    """
    void fastgen_prefetch(const void *p) noexcept nogil


# Index of the lowest set bit of a nonzero 64-bit word.
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define fastgen_ctz64(x) __builtin_ctzll(x)
    #elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
    #include <intrin.h>
    static __inline int fastgen_ctz64(unsigned __int64 x) {
        unsigned long i;
        _BitScanForward64(&i, x);
        return (int)i;
    }
    #else
    static inline int fastgen_ctz64(uint64_t x) {
        int i = 0;
        while (!(x & 1)) { x >>= 1; i++; }
        return i;
    }
    #endif
    """
    int fastgen_ctz64(uint64_t x) noexcept nogil


# Whether this CPU has AVX2 and FMA (then the AVX2/FMA build of the scoring kernels, _jll_avx2, is
# chosen, and the checks' scans take their AVX2 twins), and FASTGEN_TARGET_AVX2, the attribute
# that compiles one function for AVX2/FMA in a module built for the baseline instruction set:
# defined only where the compiler has it and SSE2 is the baseline (gcc or clang on x86-64, as
# _jll_avx2), as FASTGEN_HAVE_TARGET_AVX2.
cdef extern from *:
    """
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    static inline int fastgen_cpu_has_avx2_fma(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    #else
    static inline int fastgen_cpu_has_avx2_fma(void) { return 0; }
    #endif
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #define FASTGEN_HAVE_TARGET_AVX2 1
    #define FASTGEN_TARGET_AVX2 __attribute__((target("avx2,fma")))
    #else
    #define FASTGEN_HAVE_TARGET_AVX2 0
    #endif
    """
    int fastgen_cpu_has_avx2_fma() noexcept nogil
