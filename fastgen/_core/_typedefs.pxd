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

# Platform helpers, in C (_typedefs.h): software prefetch into every cache level (the rows counted
# next and the table rows scored next come sooner than from the hardware prefetcher), the index of
# the lowest set bit of a nonzero word, and whether this CPU can run the AVX2/FMA builds.
cdef extern from "_typedefs.h":
    void fastgen_prefetch(const void *p) noexcept nogil
    int fastgen_ctz64(uint64_t x) noexcept nogil
    int fastgen_cpu_has_avx2_fma() noexcept nogil
