# OpenMP shims: real calls when compiled with OpenMP, serial stubs otherwise (sklearn _openmp_helpers).
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    #define FASTGEN_OPENMP 1
    #else
    #define FASTGEN_OPENMP 0
    static int omp_get_max_threads(void) { return 1; }
    #endif
    """
    bint FASTGEN_OPENMP
    int omp_get_max_threads() noexcept nogil
