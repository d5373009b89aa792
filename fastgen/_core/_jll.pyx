# Design: scoring kernels for models whose joint log-likelihood is linear in the features,
#     jll[i, c] = bias[c] + sum_j v(x_ij) * table[j, c],
# which covers multinomial (table = log theta), Bernoulli (table = log p - log(1 - p), bias holding
# sum_j log(1 - p)) and complement naive Bayes. v(x) is x, or 1[x > threshold] when binarize is set.
#  a) The table is feature-major (n_features, n_classes) and C-contiguous: a nonzero touches one
#     contiguous row. Rows of upcoming nonzeros are prefetched (the table does not fit in L2).
#  b) Each row is accumulated in float64 in a buffer owned by its thread, then turned into jll,
#     log-posterior or posterior in the same pass (max-shifted log-sum-exp, _lse.pxd).
#  c) Threads own disjoint output rows, so results do not depend on n_threads.
#  d) Zero values contribute nothing (never 0 * -inf). Inputs were validated by the caller.
from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.stdlib cimport free, malloc

from ._lse cimport _finish_row
from ._typedefs cimport fastgen_prefetch, float64_t, index_t, intp_t

# Prefetch distance in nonzeros.
cdef intp_t PREFETCH_AHEAD = 12


def jll_linear_csr(
    const floating[::1] X_data,        # IN
    const index_t[::1] X_indices,      # IN
    const index_t[::1] X_indptr,       # IN (n_samples + 1,)
    const floating[:, ::1] table,      # IN (n_features, n_classes)
    const float64_t[::1] bias,         # IN (n_classes,)
    bint binarize,
    double threshold,
    int kind,                          # OUT_JLL, OUT_LOG_PROBA or OUT_PROBA (_lse.pxd)
    floating[:, ::1] out,              # OUT (n_samples, n_classes)
    int n_threads,
):
    """Score CSR rows with a linear table; returns the number of rows that could not get scratch
    memory (0 on success). Validated by the caller; thread-safe."""
    cdef intp_t n_samples = X_indptr.shape[0] - 1
    cdef intp_t n_classes = table.shape[1]
    cdef intp_t nnz = X_indptr[n_samples]
    cdef intp_t i, k, c, q, ahead
    cdef intp_t failed = 0
    cdef double v
    cdef double *acc = NULL
    cdef const floating *trow
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc(n_classes * sizeof(double))
        for i in prange(n_samples, schedule="guided"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = bias[c]
            for k in range(X_indptr[i], X_indptr[i + 1]):
                ahead = k + PREFETCH_AHEAD
                if ahead < nnz:
                    trow = &table[X_indices[ahead], 0]
                    for q in range(0, n_classes, 8):
                        fastgen_prefetch(trow + q)
                v = X_data[k]
                if binarize:
                    if v <= threshold:
                        continue
                    v = 1.0
                elif v == 0:
                    continue
                trow = &table[X_indices[k], 0]
                for c in range(n_classes):
                    acc[c] += v * trow[c]
            _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    return failed


def jll_linear_dense(
    const floating[:, ::1] X,          # IN (n_samples, n_features)
    const floating[:, ::1] table,      # IN (n_features, n_classes)
    const float64_t[::1] bias,         # IN (n_classes,)
    bint binarize,
    double threshold,
    int kind,
    floating[:, ::1] out,              # OUT (n_samples, n_classes)
    int n_threads,
):
    """Dense twin of jll_linear_csr (same contract); zero entries are skipped."""
    cdef intp_t n_samples = X.shape[0]
    cdef intp_t n_features = X.shape[1]
    cdef intp_t n_classes = table.shape[1]
    cdef intp_t i, j, c
    cdef intp_t failed = 0
    cdef double v
    cdef double *acc = NULL
    cdef const floating *trow
    cdef const floating *xrow
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc(n_classes * sizeof(double))
        for i in prange(n_samples, schedule="guided"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = bias[c]
            xrow = &X[i, 0]
            for j in range(n_features):
                v = xrow[j]
                if binarize:
                    if v <= threshold:
                        continue
                    v = 1.0
                elif v == 0:
                    continue
                trow = &table[j, 0]
                for c in range(n_classes):
                    acc[c] += v * trow[c]
            _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    return failed


def normalize_rows_inplace(
    floating[:, ::1] jll,  # IN/OUT (n_samples, n_classes): jll in, `kind` out
    int kind,
    int n_threads,
):
    """Turn joint log-likelihood rows into log-posteriors or posteriors in place (max-shifted
    log-sum-exp in float64); returns the number of rows without scratch memory (0 on success)."""
    cdef intp_t n_samples = jll.shape[0]
    cdef intp_t n_classes = jll.shape[1]
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
                acc[c] = jll[i, c]
            _finish_row(acc, &jll[i, 0], n_classes, kind)
        free(acc)
    return failed
