# Design: accumulation of the additive per-class sufficient statistics (counts of the discrete
# event models; weights, means and squared deviations of the diagonal Gaussian and Poisson models).
#  a) Rows arrive grouped by class through `order` (row numbers sorted stably by class) and
#     `class_ptr` (rows of class c are order[class_ptr[c]:class_ptr[c+1]]).
#  b) Threads own whole classes (prange over classes), so each output row is written by one thread in
#     row order: results are identical for any n_threads.
#  c) Counts are added into the float64 outputs (they are running totals for partial_fit).
#  d) The caller validated structure, dtypes, finiteness and sign; nothing is checked here.
#  e) Sparse rows scatter increments over a whole output row, which for a large vocabulary does
#     not stay in cache; large classes are therefore summed into a per-thread scratch row that
#     does, and added to their output row in one sequential pass (count_csr).
from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.stdlib cimport calloc, free

from ._typedefs cimport data_t, fastgen_prefetch, float64_t, intp_t, index_t


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
    float64_t[::1] row_sum_out not None,           # OUT (n_samples,) or (0,): sum of each row
    int n_threads,
):
    """feature_count_out[c, j] += sum of w_i * x_ij over rows i of class c (x_ij > threshold when
    binarize); class_count_out[c] += sum of w_i; row_sum_out[i] = sum_j x_ij (unweighted, not
    binarized) unless it is empty. CSR input validated by the caller; thread-safe.

    A class whose rows hold at least half as many entries as there are features is summed into a
    scratch row of its thread first, then added to its output row in one sequential pass (design
    note e): the scratch row stays in cache from class to class, while the output rows (a
    megabyte each for a 130,000-word vocabulary) are cold, and scattered increments into them wait
    on memory. feature_count_out[c, j] is thus the old value plus the batch's sum (in row order),
    as scikit-learn's feature_count_ += Y.T @ X."""
    cdef intp_t n_classes = class_ptr.shape[0] - 1
    cdef intp_t n_features = feature_count_out.shape[1]
    cdef bint row_sums = row_sum_out.shape[0] != 0
    # no class can reach the scratch threshold when all rows together do not
    cdef bint any_scratch = 2 * <intp_t> X_indptr[X_indptr.shape[0] - 1] >= n_features > 0
    cdef intp_t c, p, r, k, j, start, stop, next_row, n_entries
    cdef double w, v, s
    cdef float64_t *fc_row
    cdef float64_t *target
    cdef float64_t *scratch
    with nogil, parallel(num_threads=n_threads):
        # NULL when out of memory: then every class is counted in place, as small classes are
        scratch = <float64_t *> calloc(n_features, sizeof(float64_t)) if any_scratch else NULL
        for c in prange(n_classes, schedule="dynamic"):
            fc_row = &feature_count_out[c, 0]
            start, stop = class_ptr[c], class_ptr[c + 1]
            n_entries = 0
            for p in range(start, stop):
                r = order[p]
                n_entries = n_entries + X_indptr[r + 1] - X_indptr[r]
            target = scratch if scratch != NULL and 2 * n_entries >= n_features else fc_row
            for p in range(start, stop):
                r = order[p]
                if p + 1 < stop:  # the next row is elsewhere in X: start fetching it now
                    next_row = order[p + 1]
                    fastgen_prefetch(&X_data[X_indptr[next_row]])
                    fastgen_prefetch(&X_indices[X_indptr[next_row]])
                w = sample_weight[r]
                class_count_out[c] += w
                s = 0.0
                if binarize:
                    for k in range(X_indptr[r], X_indptr[r + 1]):
                        v = X_data[k]
                        s = s + v
                        if v > threshold:
                            target[X_indices[k]] += w
                else:
                    for k in range(X_indptr[r], X_indptr[r + 1]):
                        v = X_data[k]
                        s = s + v
                        target[X_indices[k]] += w * v
                if row_sums:
                    row_sum_out[r] = s
            if target != fc_row:  # add the class's sums in one pass, leaving the scratch zero
                for j in range(n_features):
                    fc_row[j] += target[j]
                    target[j] = 0.0
        free(scratch)


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


cdef extern from *:
    """
    /* Branch-free updates over one row (NaN contributes nothing), vectorisable over features. */
    #define FASTGEN_MOMENTS(T)                                                                  \
    static inline void fastgen_sum_##T(double *__restrict wsum, double *__restrict xsum,         \
                                       const T *__restrict x, double w, Py_ssize_t n) {         \
        for (Py_ssize_t j = 0; j < n; j++) {                                                    \
            double v = (double)x[j];                                                            \
            int ok = v == v;                                                                    \
            wsum[j] += ok ? w : 0.0;                                                            \
            xsum[j] += ok ? w * v : 0.0;                                                        \
        }                                                                                       \
    }                                                                                           \
    static inline void fastgen_sqdev_##T(double *__restrict m2, const double *__restrict mean,   \
                                         const T *__restrict x, double w, Py_ssize_t n) {       \
        for (Py_ssize_t j = 0; j < n; j++) {                                                    \
            double d = (double)x[j] - mean[j];                                                  \
            m2[j] += d == d ? w * (d * d) : 0.0;                                                \
        }                                                                                       \
    }
    FASTGEN_MOMENTS(float)
    FASTGEN_MOMENTS(double)
    """
    void fastgen_sum_float(double *wsum, double *xsum, const float *x, double w,
                           Py_ssize_t n) noexcept nogil
    void fastgen_sum_double(double *wsum, double *xsum, const double *x, double w,
                            Py_ssize_t n) noexcept nogil
    void fastgen_sqdev_float(double *m2, const double *mean, const float *x, double w,
                             Py_ssize_t n) noexcept nogil
    void fastgen_sqdev_double(double *m2, const double *mean, const double *x, double w,
                              Py_ssize_t n) noexcept nogil


cdef inline void _sum_row(double *wsum, double *xsum, const floating *x, double w,
                          intp_t n) noexcept nogil:
    if floating is float:
        fastgen_sum_float(wsum, xsum, x, w, n)
    else:
        fastgen_sum_double(wsum, xsum, x, w, n)


cdef inline void _sqdev_row(double *m2, const double *mean, const floating *x, double w,
                            intp_t n) noexcept nogil:
    if floating is float:
        fastgen_sqdev_float(m2, mean, x, w, n)
    else:
        fastgen_sqdev_double(m2, mean, x, w, n)


def moments_dense(
    const floating[:, ::1] X not None,          # IN (n_samples, n_features), NaN = missing
    const intp_t[::1] y_idx not None,             # IN (n_samples,) class of each row
    const float64_t[::1] sample_weight not None,  # IN (n_samples,)
    float64_t[:, ::1] weight_out not None,        # OUT (n_classes, n_features), overwritten
    float64_t[:, ::1] mean_out not None,          # OUT (n_classes, n_features), overwritten
    float64_t[:, ::1] m2_out not None,            # OUT (n_classes, n_features), overwritten
    int n_threads,
):
    """Per class and feature, over the observed (non-NaN) values of the batch: the total weight,
    the weighted mean and the weighted sum of squared deviations from it (two passes, so the
    variance does not suffer the cancellation of sum x^2 - n mean^2). Batches are combined by
    the caller (Chan et al.). Validated by the caller; thread-safe.

    Rows are streamed in order (a class-by-class gather is six times slower on this memory
    access pattern); threads own blocks of features, so results do not depend on n_threads."""
    cdef intp_t n_samples = X.shape[0]
    cdef intp_t n_classes = weight_out.shape[0]
    cdef intp_t n_features = X.shape[1]
    cdef intp_t n_blocks = min(max(n_threads, 1), (n_features + 7) // 8)
    cdef intp_t b, i, c, j, j0, width
    weight_out[:, :] = 0.0
    mean_out[:, :] = 0.0
    m2_out[:, :] = 0.0
    for b in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads):
        j0 = b * n_features // n_blocks
        width = (b + 1) * n_features // n_blocks - j0
        for i in range(n_samples):
            c = y_idx[i]
            _sum_row(&weight_out[c, j0], &mean_out[c, j0], &X[i, j0], sample_weight[i], width)
        for c in range(n_classes):
            for j in range(j0, j0 + width):
                if weight_out[c, j] > 0:
                    mean_out[c, j] = mean_out[c, j] / weight_out[c, j]
        for i in range(n_samples):
            c = y_idx[i]
            _sqdev_row(&m2_out[c, j0], &mean_out[c, j0], &X[i, j0], sample_weight[i], width)


def count_categorical(
    const data_t[:, ::1] X not None,              # IN (n_samples, n_features) codes, <0/NaN missing
    const intp_t[::1] y_idx not None,             # IN (n_samples,)
    const float64_t[::1] sample_weight not None,  # IN (n_samples,)
    const intp_t[::1] offsets not None,           # IN (n_features + 1,) first column of feature j
    float64_t[:, ::1] count_out not None,         # OUT (n_classes, offsets[-1]), added to
    int n_threads,
):
    """count_out[c, offsets[j] + k] += weight of the rows of class c whose feature j is k; missing
    values (negative or NaN) and codes beyond the feature's categories are skipped. Rows are read
    in order (one pass on one thread); thread t owns the classes c with c % n_threads == t, so
    results do not depend on n_threads. Codes validated by the caller (codes_status);
    thread-safe."""
    cdef intp_t n_samples = X.shape[0], n_features = X.shape[1]
    cdef intp_t n_classes = count_out.shape[0]
    cdef intp_t n_parts = max(1, min(n_threads, n_classes))
    cdef intp_t t, c, i, j, k
    cdef double v, w
    for t in prange(n_parts, nogil=True, schedule="static", num_threads=n_parts):
        for i in range(n_samples):
            c = y_idx[i]
            if c % n_parts != t:
                continue
            w = sample_weight[i]
            for j in range(n_features):
                v = X[i, j]
                if not v >= 0:  # negative or NaN: missing
                    continue
                k = <intp_t> v
                if k < offsets[j + 1] - offsets[j]:
                    count_out[c, offsets[j] + k] += w
