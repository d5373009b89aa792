# Shared scalar and fused types for the fastgen kernels (after scikit-learn's utils/_typedefs.pxd).
from libc.stdint cimport int32_t, int64_t

ctypedef double float64_t
ctypedef float float32_t
ctypedef Py_ssize_t intp_t

# CSR indices/indptr: int32 for ordinary matrices, int64 for matrices with more than 2**31 nonzeros.
ctypedef fused index_t:
    int32_t
    int64_t

# Software prefetch of a table row (a no-op on compilers without the builtin).
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define fastgen_prefetch(p) __builtin_prefetch((const void *)(p), 0, 1)
    #else
    #define fastgen_prefetch(p) ((void)0)
    #endif
    """
    void fastgen_prefetch(const void *p) noexcept nogil

