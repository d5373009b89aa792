# Included by _jll.pyx and _jll_avx2.pyx, next to _jll.pxi.
#
# Design: scoring kernels of the Gaussian family and of Poisson naive Bayes.
#  a) Diagonal models (GaussianNB, the diagonal/spherical/identity LDA, PoissonNB) add one term per
#     observed feature, jll[i, c] = bias[c] + sum_j term(x_ij; A[j, c], S[j, c]) with
#       Gaussian: term = B[j, c] + S[j, c] * (x - A[j, c])**2   (S = -1/(2 var), B = -log(2 pi var)/2)
#       Poisson:  term = B[j, c] + x * A[j, c]                  (A = log lambda, B = -lambda)
#     Tables are feature-major (n_features, n_classes) float64. `bias` already holds sum_j B[j, c],
#     so a complete row pays only the x-dependent part; a missing (NaN) value is filled in and its
#     whole term subtracted afterwards, so it drops out of the sum (marginalised) without a
#     branch in the inner loops.
#     Poisson's class-independent -log(x!) is added only when the joint log-likelihood is asked for.
#  b) Full-covariance models: the caller multiplies blocks of rows by the whitening matrices with
#     BLAS (Z = (X - shift) @ W); quadratic_finish turns Z into
#       jll[i, c] = const[c] - 0.5 * ||Z[i, block[c]*d : (block[c]+1)*d] - offset[c]||**2
#     and normalises in the same pass.
#  c) Each row is accumulated in float64 in a buffer owned by its thread and finished by
#     _finish_row; threads own disjoint rows, so results do not depend on n_threads.
from libc.math cimport isnan, lgamma

from ._lse cimport OUT_JLL

cdef enum:
    DIAG_GAUSSIAN = 0
    DIAG_POISSON = 1

cdef extern from "_jll_gaussian.h":
    void fastgen_sq_add(double *acc, const double *loc, const double *scale, double x,
                        Py_ssize_t n) noexcept nogil
    void fastgen_sq_add4(double *acc, const double *loc, const double *scale, const double *x,
                         Py_ssize_t n) noexcept nogil
    double fastgen_sq_dist(const double *z, const double *off, Py_ssize_t n) noexcept nogil


cdef inline bint _row_complete(const floating *x, intp_t n) noexcept nogil:
    """No NaN in x[0:n] (one vectorisable pass)."""
    cdef intp_t j
    cdef int nan = 0
    for j in range(n):
        nan |= x[j] != x[j]
    return not nan


cdef inline void _linear_rows(double *acc, const float64_t[:, ::1] A, const double *x,
                              intp_t n_features, intp_t n_classes) noexcept nogil:
    """acc += sum_j x[j] A[j], four rows at a time (buffers on this call's stack: per thread)."""
    cdef const float64_t *rows[4]
    cdef intp_t j = 0, q
    while j + 4 <= n_features:
        for q in range(4):
            rows[q] = &A[j + q, 0]
        _axpy4(acc, rows, &x[j], n_classes)
        j += 4
    while j < n_features:
        _axpy1(acc, &A[j, 0], x[j], n_classes)
        j += 1


def jll_diag_dense(
    const floating[:, ::1] X not None,      # IN (n_samples, n_features), NaN = missing
    const float64_t[:, ::1] A not None,     # IN (n_features, n_classes)
    const float64_t[:, ::1] S not None,     # IN (n_features, n_classes), Gaussian only
    const float64_t[:, ::1] C not None,     # IN (n_features, n_classes) a missing feature's row
    const float64_t[::1] fill not None,     # IN (n_features,) stand-in for a missing value
    const float64_t[::1] bias not None,     # IN (n_classes,) log prior + sum_j B[j]
    int model,                              # DIAG_GAUSSIAN or DIAG_POISSON
    int kind,                               # OUT_JLL, OUT_LOG_PROBA or OUT_PROBA (_lse.pxd)
    floating[:, ::1] out not None,          # OUT (n_samples, n_classes)
    int n_threads,
):
    """Score dense rows of a diagonal model (see the design note); returns the number of rows that
    could not get scratch memory (0 on success). Validated by the caller; thread-safe.

    A missing value is replaced by fill[j] so that every row runs the same branch-free loop,
    four features per pass; then C[j] = B[j] + term(fill[j]) is subtracted, which removes the
    feature from the sum (fill near the class means keeps this free of cancellation)."""
    cdef intp_t n_samples = X.shape[0]
    cdef intp_t n_features = X.shape[1]
    cdef intp_t n_classes = A.shape[1]
    cdef intp_t i, j, c, q, n_missing
    cdef intp_t failed = 0
    cdef double x, row_const
    cdef double *acc = NULL
    cdef double *xrow = NULL
    cdef intp_t *missing = NULL
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc((n_classes + n_features) * sizeof(double)
                                + n_features * sizeof(intp_t))
        xrow = acc + n_classes  # the row in float64, missing values filled in
        missing = <intp_t *> (xrow + n_features)
        for i in prange(n_samples, schedule="static"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = bias[c]
            n_missing = 0
            if _row_complete(&X[i, 0], n_features):
                for j in range(n_features):
                    xrow[j] = X[i, j]
            else:
                for j in range(n_features):  # branch-free: NaN is unpredictable
                    x = X[i, j]
                    xrow[j] = fill[j] if isnan(x) else x
                    missing[n_missing] = j
                    n_missing = n_missing + isnan(x)
            j = 0
            if model == DIAG_GAUSSIAN:
                while j + 4 <= n_features:
                    fastgen_sq_add4(acc, &A[j, 0], &S[j, 0], &xrow[j], n_classes)
                    j = j + 4
                while j < n_features:
                    fastgen_sq_add(acc, &A[j, 0], &S[j, 0], xrow[j], n_classes)
                    j = j + 1
            else:
                _linear_rows(acc, A, xrow, n_features, n_classes)
            for q in range(n_missing):
                _axpy1(acc, &C[missing[q], 0], -1.0, n_classes)
            if model == DIAG_POISSON and kind == OUT_JLL:
                row_const = 0.0  # -log(x!) of the observed counts (a fill of 0 adds nothing)
                for j in range(n_features):
                    row_const = row_const - lgamma(xrow[j] + 1.0)
                for c in range(n_classes):
                    acc[c] = acc[c] + row_const
            _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    return failed


def quadratic_finish(
    const float64_t[:, ::1] Z not None,       # IN (n_samples, n_blocks * n_features) whitened rows
    const float64_t[:, ::1] offset not None,  # IN (n_classes, n_features)
    const intp_t[::1] block not None,         # IN (n_classes,) block of Z used by each class
    const float64_t[::1] const_term not None,  # IN (n_classes,)
    int kind,
    floating[:, ::1] out not None,            # OUT (n_samples, n_classes)
    int n_threads,
):
    """jll[i, c] = const_term[c] - ||Z[i, block c] - offset[c]||^2 / 2, written as `kind`; returns the
    number of rows that could not get scratch memory. Validated by the caller; thread-safe."""
    cdef intp_t n_samples = Z.shape[0]
    cdef intp_t n_features = offset.shape[1]
    cdef intp_t n_classes = offset.shape[0]
    cdef intp_t i, c
    cdef intp_t failed = 0
    cdef double *acc = NULL
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc(n_classes * sizeof(double))
        for i in prange(n_samples, schedule="static"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = const_term[c] - 0.5 * fastgen_sq_dist(&Z[i, block[c] * n_features],
                                                          &offset[c, 0], n_features)
            _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    return failed


# The model kinds for Python callers (fastgen._gaussian), defined once by the enum above.
DIAGONAL_MODELS = (DIAG_GAUSSIAN, DIAG_POISSON)
