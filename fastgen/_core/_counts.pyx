# Design: accumulation of the additive per-class sufficient statistics (counts of the discrete
# event models; weights, means and squared deviations of the diagonal Gaussian and Poisson models).
#  a) Rows arrive grouped by class through `order` (row numbers sorted stably by class) and
#     `class_ptr` (rows of class c are order[class_ptr[c]:class_ptr[c+1]]).
#  b) Threads own whole classes (prange over classes), so each output row is written by one thread in
#     row order: results are identical for any n_threads.
#  c) Counts are added into the float64 outputs (they are running totals for partial_fit).
#  d) The caller validated structure, dtypes, finiteness and sign; nothing is checked here.
from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport isnan

from ._typedefs cimport data_t, float64_t, intp_t, index_t


def count_csr(
    const data_t[::1] X_data not None,          # IN
    const index_t[::1] X_indices not None,        # IN
    const index_t[::1] X_indptr not None,         # IN (n_samples + 1,)
    const intp_t[::1] order not None,             # IN (n_samples,) row numbers grouped by class
    const intp_t[::1] class_ptr not None,         # IN (n_classes + 1,)
    const float64_t[::1] sample_weight not None,  # IN (n_samples,)
    bint binarize,
    double threshold,
    float64_t[:, ::1] feature_count_out not None,  # OUT (n_classes, n_features), added to
    float64_t[::1] class_count_out not None,       # OUT (n_classes,), added to
    int n_threads,
):
    """feature_count_out[c, j] += sum of w_i * x_ij over rows i of class c (x_ij > threshold when
    binarize); class_count_out[c] += sum of w_i. CSR input validated by the caller; thread-safe."""
    cdef intp_t n_classes = class_ptr.shape[0] - 1
    cdef intp_t c, p, r, k
    cdef double w, v
    cdef float64_t *fc_row
    for c in prange(n_classes, nogil=True, schedule="dynamic", num_threads=n_threads):
        fc_row = &feature_count_out[c, 0]
        for p in range(class_ptr[c], class_ptr[c + 1]):
            r = order[p]
            w = sample_weight[r]
            class_count_out[c] += w
            if binarize:
                for k in range(X_indptr[r], X_indptr[r + 1]):
                    if X_data[k] > threshold:
                        fc_row[X_indices[k]] += w
            else:
                for k in range(X_indptr[r], X_indptr[r + 1]):
                    fc_row[X_indices[k]] += w * <double> X_data[k]


def count_dense(
    const data_t[:, ::1] X not None,            # IN (n_samples, n_features)
    const intp_t[::1] order not None,             # IN (n_samples,)
    const intp_t[::1] class_ptr not None,         # IN (n_classes + 1,)
    const float64_t[::1] sample_weight not None,  # IN (n_samples,)
    bint binarize,
    double threshold,
    float64_t[:, ::1] feature_count_out not None,  # OUT (n_classes, n_features), added to
    float64_t[::1] class_count_out not None,       # OUT (n_classes,), added to
    int n_threads,
):
    """Dense twin of count_csr (same contract); every entry is read, zeros add nothing."""
    cdef intp_t n_classes = class_ptr.shape[0] - 1
    cdef intp_t n_features = X.shape[1]
    cdef intp_t c, p, r, j
    cdef double w
    cdef float64_t *fc_row
    cdef const data_t *x_row
    for c in prange(n_classes, nogil=True, schedule="dynamic", num_threads=n_threads):
        fc_row = &feature_count_out[c, 0]
        for p in range(class_ptr[c], class_ptr[c + 1]):
            r = order[p]
            w = sample_weight[r]
            class_count_out[c] += w
            x_row = &X[r, 0]
            if binarize:
                for j in range(n_features):
                    if x_row[j] > threshold:
                        fc_row[j] += w
            else:
                for j in range(n_features):
                    fc_row[j] += w * <double> x_row[j]


def moments_dense(
    const floating[:, ::1] X not None,          # IN (n_samples, n_features), NaN = missing
    const intp_t[::1] order not None,             # IN (n_samples,)
    const intp_t[::1] class_ptr not None,         # IN (n_classes + 1,)
    const float64_t[::1] sample_weight not None,  # IN (n_samples,)
    float64_t[:, ::1] weight_out not None,        # OUT (n_classes, n_features), overwritten
    float64_t[:, ::1] mean_out not None,          # OUT (n_classes, n_features), overwritten
    float64_t[:, ::1] m2_out not None,            # OUT (n_classes, n_features), overwritten
    int n_threads,
):
    """Per class and feature, over the observed (non-NaN) values of the batch: the total weight,
    the weighted mean and the weighted sum of squared deviations from it (two passes, so the
    variance does not suffer the cancellation of sum x^2 - n mean^2). Batches are combined by
    the caller (Chan et al.). Validated by the caller; thread-safe."""
    cdef intp_t n_classes = class_ptr.shape[0] - 1
    cdef intp_t n_features = X.shape[1]
    cdef intp_t c, p, r, j
    cdef double w, x, d
    cdef float64_t *w_row
    cdef float64_t *m_row
    cdef float64_t *s_row
    for c in prange(n_classes, nogil=True, schedule="dynamic", num_threads=n_threads):
        w_row = &weight_out[c, 0]
        m_row = &mean_out[c, 0]
        s_row = &m2_out[c, 0]
        for j in range(n_features):
            w_row[j] = 0.0
            m_row[j] = 0.0
            s_row[j] = 0.0
        for p in range(class_ptr[c], class_ptr[c + 1]):
            r = order[p]
            w = sample_weight[r]
            for j in range(n_features):
                x = X[r, j]
                if not isnan(x):
                    w_row[j] += w
                    m_row[j] += w * x
        for j in range(n_features):
            if w_row[j] > 0:
                m_row[j] = m_row[j] / w_row[j]
            else:
                m_row[j] = 0.0
        for p in range(class_ptr[c], class_ptr[c + 1]):
            r = order[p]
            w = sample_weight[r]
            for j in range(n_features):
                x = X[r, j]
                if not isnan(x):
                    d = x - m_row[j]
                    s_row[j] += w * (d * d)
