# OpenMP shims: real calls when compiled with OpenMP, serial stubs otherwise (sklearn _openmp_helpers).
cdef extern from "_openmp.h":
    bint FASTGEN_OPENMP
    int omp_get_max_threads() noexcept nogil
