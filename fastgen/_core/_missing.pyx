# Design: the missing-value algebra of full-covariance Gaussians, row by row.
#  a) For a row missing the features mi[0..m) and a Gaussian of precision P, the observed part's
#     Mahalanobis distance is d^T P d - u_m^T P_mm^-1 u_m (u = P d with zeros at the missing
#     features; the caller computes U = D @ P for a block of rows with BLAS) and
#     log det S_oo = log det S + log det P_mm (Schur complements). Only the m x m block P_mm is
#     factored: gathered from P, Cholesky-factored in a buffer owned by the thread.
#  b) EM also needs the conditional distribution of the missing block: mean mu_m - P_mm^-1 u_m and
#     covariance P_mm^-1.
#  c) Threads own disjoint rows, so results do not depend on n_threads. A block that is not
#     positive definite (impossible for a valid precision) is counted and reported, never used.
from cython.parallel cimport parallel, prange
from libc.math cimport log, sqrt
from libc.stdlib cimport free, malloc

from ._typedefs cimport float64_t, intp_t


cdef inline bint _cholesky(double *L, intp_t m) noexcept nogil:
    """In-place lower Cholesky factor of the m x m row-major matrix L (lower triangle read)."""
    cdef intp_t i, j, k
    cdef double s
    for j in range(m):
        s = L[j * m + j]
        for k in range(j):
            s -= L[j * m + k] * L[j * m + k]
        if not s > 0:
            return False
        s = sqrt(s)
        L[j * m + j] = s
        for i in range(j + 1, m):
            for k in range(j):
                L[i * m + j] -= L[i * m + k] * L[j * m + k]
            L[i * m + j] /= s
    return True


cdef inline void _forward(const double *L, double *v, intp_t m) noexcept nogil:
    """v <- L^-1 v (L lower triangular, row-major)."""
    cdef intp_t i, k
    for i in range(m):
        for k in range(i):
            v[i] -= L[i * m + k] * v[k]
        v[i] /= L[i * m + i]


cdef inline void _backward(const double *L, double *v, intp_t m) noexcept nogil:
    """v <- L^-T v."""
    cdef intp_t i, k
    for i in range(m - 1, -1, -1):
        for k in range(i + 1, m):
            v[i] -= L[k * m + i] * v[k]
        v[i] /= L[i * m + i]


def schur_terms(
    const float64_t[:, ::1] U not None,        # IN (n_rows, n_features): P @ d for each row
    const intp_t[:, ::1] missing not None,     # IN (n_rows, m) missing features of each row
    const float64_t[:, ::1] P not None,        # IN (n_features, n_features) precision
    float64_t[::1] q_out not None,             # IN/OUT (n_rows,): d^T P d in, distance out
    float64_t[::1] logdet_out not None,        # OUT (n_rows,) log det P_mm
    float64_t[:, ::1] shift_out not None,      # OUT (n_rows, m) P_mm^-1 u_m (if conditional)
    float64_t[:, :, ::1] cov_out not None,     # OUT (n_rows, m, m) P_mm^-1 (if conditional)
    bint conditional,
    int n_threads,
):
    """Schur-complement terms of rows with missing values (see the design note); returns the
    number of rows whose P_mm was not positive definite (0 for a valid precision). Indices and
    shapes validated by the caller; thread-safe."""
    cdef intp_t n_rows = U.shape[0]
    cdef intp_t m = missing.shape[1]
    cdef intp_t r, a, b, k
    cdef intp_t failed = 0
    cdef double s, logdet
    cdef double *L = NULL
    cdef double *v = NULL
    cdef double *e = NULL
    if m == 0:
        logdet_out[:] = 0.0
        return 0
    with nogil, parallel(num_threads=n_threads):
        L = <double *> malloc((m * m + 2 * m) * sizeof(double))
        v = L + m * m
        e = v + m
        for r in prange(n_rows, schedule="static"):
            if L == NULL:
                failed += 1
                continue
            for a in range(m):
                for b in range(a + 1):
                    L[a * m + b] = P[missing[r, a], missing[r, b]]
                v[a] = U[r, missing[r, a]]
            if not _cholesky(L, m):
                failed += 1
                continue
            _forward(L, v, m)
            s = 0.0
            logdet = 0.0
            for a in range(m):
                s = s + v[a] * v[a]
                logdet = logdet + log(L[a * m + a])
            q_out[r] = q_out[r] - s
            logdet_out[r] = 2.0 * logdet
            if conditional:
                _backward(L, v, m)  # P_mm^-1 u_m = L^-T L^-1 u_m
                for a in range(m):
                    shift_out[r, a] = v[a]
                for b in range(m):  # column b of P_mm^-1 = L^-T L^-1 e_b
                    for k in range(m):
                        e[k] = 1.0 if k == b else 0.0
                    _forward(L, e, m)
                    _backward(L, e, m)
                    for a in range(m):
                        cov_out[r, a, b] = e[a]
        free(L)
    return failed
