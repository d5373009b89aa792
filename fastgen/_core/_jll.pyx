# Scoring kernels for the baseline instruction set (the code is in _jll.pxi).
include "_jll.pxi"
include "_jll_gaussian.pxi"


cdef extern from *:
    """
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    static int fastgen_cpu_has_avx2_fma(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    #else
    static int fastgen_cpu_has_avx2_fma(void) { return 0; }
    #endif
    """
    int fastgen_cpu_has_avx2_fma() noexcept nogil


def cpu_has_avx2_fma():
    """True if this CPU can run the AVX2/FMA build of the scoring kernels (_jll_avx2)."""
    return bool(fastgen_cpu_has_avx2_fma())
