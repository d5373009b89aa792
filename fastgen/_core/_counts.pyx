# Design: accumulation of the additive per-class sufficient statistics (counts of the discrete
# event models; weights, means and squared deviations of the diagonal Gaussian and Poisson models).
#  a) Rows arrive grouped by class through `order` (row numbers sorted stably by class) and
#     `class_ptr` (rows of class c are order[class_ptr[c]:class_ptr[c+1]]).
#  b) Threads own whole classes (prange over classes), so each output row is written by one thread in
#     row order: results are identical for any n_threads.
#  c) Counts are added into the float64 outputs (they are running totals for partial_fit); the first
#     batch may write them instead.
#  d) The caller validated structure, dtypes, finiteness and sign; nothing is checked here.
#  e) Sparse rows scatter increments over a whole output row, which for a large vocabulary does
#     not stay in cache; large classes are therefore summed into a per-thread scratch row that
#     does, and added to their output row in one sequential pass (count_csr).
#  f) The first batch's counts may also be listed only (count_csr without feature_count_out): every
#     class is summed in the scratch row and listed from it, and the dense table, mostly zeros for
#     a large vocabulary, is never written (the model builds it if it is asked for). The scratch
#     row is listed by a vectorised test of 64 entries at a time, which reads only the nonzeros
#     back. A class with few entries for the vocabulary instead marks the features it touches in
#     a bitmap as they are summed, and only those are read back (testing every feature would
#     cost more than marking its entries).
from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.stdint cimport uint64_t, uintptr_t
from libc.stdlib cimport calloc, free
from libc.string cimport memmove, memset

from ._listing cimport fastgen_nonzero_bits64, list_marked, list_nonzero, sum_listed
from ._typedefs cimport (data_t, fastgen_prefetch, float32_t, float64_t, intp_t, index_t,
                        label_t)

cdef enum:
    # count_csr fetches rows ahead for an X of this many bytes (values and indices) or more: a
    # smaller one stays in the caches, where fetching ahead only costs instructions
    PREFETCH_MIN_BYTES = 4 << 20
    # a listed class marks the features it touches when it has fewer than n_features / this many
    # entries (design note f; marking costs about three times more per entry than the vectorised
    # test costs per feature: 20 Newsgroups-shaped classes, at 0.7 entries per feature, counted
    # and listed in 5.6 ms scanning against 6.2 ms marking, calls interleaved in one process)
    MARK_PER_ENTRY = 3


def encode_compact(
    const label_t[::1] y not None,   # IN (n_samples,) labels, n_samples >= 1
    label_t[::1] classes_out not None,  # OUT (n_samples,): the distinct labels in [0:returned)
    intp_t[::1] code_out not None,   # OUT (n_samples,): each label's index among them
    intp_t max_span,
):
    """np.unique(y, return_inverse=True) by counting, for labels whose max - min is at most
    max_span: returns how many distinct labels (sorted in classes_out), or -1 (nothing written)
    when they span more or the rank table cannot be allocated (the caller then sorts).
    Differences are taken in uint64, exact for every integer type."""
    cdef intp_t n = y.shape[0], i, k = -1
    cdef label_t low = y[0], high = y[0], v
    cdef uint64_t span, j
    cdef intp_t *rank = NULL
    with nogil:
        for i in range(1, n):
            v = y[i]
            low = v if v < low else low
            high = v if v > high else high
        span = <uint64_t> high - <uint64_t> low
        if span <= <uint64_t> max_span:
            rank = <intp_t *> calloc(span + 1, sizeof(intp_t))
        if rank != NULL:
            k = 0
            for i in range(n):
                rank[<uint64_t> y[i] - <uint64_t> low] = 1
            for j in range(span + 1):  # present values get their rank
                if rank[j]:
                    classes_out[k] = <label_t> (<uint64_t> low + j)
                    rank[j] = k
                    k += 1
            for i in range(n):
                code_out[i] = rank[<uint64_t> y[i] - <uint64_t> low]
            free(rank)
    return k


def group_rows(
    const intp_t[::1] y_idx not None,      # IN (n_samples,) class of each row, in [0, n_classes)
    intp_t[::1] order_out not None,        # OUT (n_samples,)
    intp_t[::1] class_ptr_out not None,    # OUT (n_classes + 1,)
):
    """The layout of design note a, by a stable counting sort: rows of class c are
    order_out[class_ptr_out[c]:class_ptr_out[c + 1]], in row order. Labels validated by the
    caller."""
    cdef intp_t n_samples = y_idx.shape[0], n_classes = class_ptr_out.shape[0] - 1
    cdef intp_t i, c
    with nogil:
        class_ptr_out[:] = 0
        for i in range(n_samples):
            class_ptr_out[y_idx[i] + 1] += 1
        for c in range(n_classes):
            class_ptr_out[c + 1] += class_ptr_out[c]
        for i in range(n_samples):  # class_ptr_out[c] is class c's next free slot ...
            c = y_idx[i]
            order_out[class_ptr_out[c]] = i
            class_ptr_out[c] += 1
        for c in range(n_classes, 0, -1):  # ... so it ends as class c + 1's start
            class_ptr_out[c] = class_ptr_out[c - 1]
        class_ptr_out[0] = 0


cdef inline void _prefetch_lines(const void *first, const void *end) noexcept nogil:
    """Start fetching every 64-byte cache line that holds a byte of [first, end)."""
    cdef uintptr_t line = (<uintptr_t> first) & ~(<uintptr_t> 63)
    while line < <uintptr_t> end:
        fastgen_prefetch(<const void *> line)
        line += 64


cdef inline void _prefetch_row(const data_t *X_data, const index_t *X_indices, intp_t start,
                               intp_t stop) noexcept nogil:
    """Start fetching the cache lines of a row's entries start:stop: rows taken by class are
    scattered over X, so the hardware prefetcher, which follows sequential streams, cannot
    foresee them (a whole row ahead: 6.3 instead of 7.5 ms counting the 20 Newsgroups-shaped
    corpus)."""
    _prefetch_lines(X_data + start, X_data + stop)
    _prefetch_lines(X_indices + start, X_indices + stop)


cdef inline double _add_row(const data_t *X_data, const index_t *X_indices, intp_t start,
                            intp_t stop, double w, bint binarize, double threshold,
                            float64_t *target, uint64_t *touched) noexcept nogil:
    """target[j] += w * x_j (w if x_j > threshold when binarize) over the row's entries
    X_data[start:stop]; marks j in the bitmap touched unless NULL; returns the sum of x_j. Called
    with constant binarize and touched, so each of the four uses compiles to its own loop."""
    cdef intp_t k, j
    cdef double v, s = 0.0
    for k in range(start, stop):
        v = X_data[k]
        s = s + v
        j = X_indices[k]
        if binarize:
            target[j] += w if v > threshold else 0.0  # no branch to mispredict
        else:
            target[j] += w * v
        if touched != NULL:
            touched[j >> 6] |= (<uint64_t> 1) << (j & 63)
    return s


cdef inline intp_t _list_touched(float64_t *row, uint64_t *touched, intp_t n_features,
                                 intp_t *feature, float64_t *value) noexcept nogil:
    """List the nonzeros of row among the features marked in touched, in feature order, as
    list_nonzero lists them, and clear both: the row is zero wherever it is not marked, so only
    the 64 entries around a marked one are tested (a marked entry may have summed to zero). The
    row is padded with zeros to a multiple of 64 entries. Returns how many."""
    cdef intp_t b, m = 0
    cdef uint64_t bits
    for b in range((n_features + 63) >> 6):
        bits = touched[b]
        if bits != 0:
            touched[b] = 0
            bits &= fastgen_nonzero_bits64(row + (b << 6))
            m += list_marked(row, b << 6, bits, True, feature + m, value + m)
    return m


cdef intp_t _count_class(
    const data_t *X_data, const index_t *X_indices, const index_t *X_indptr,
    const intp_t *rows, intp_t n_rows, const float64_t *sample_weight,
    bint binarize, double threshold, bint overwrite, intp_t n_features, bint prefetch,
    float64_t *fc_row, float64_t *class_count, float64_t *row_sum, float64_t *scratch,
    uint64_t *touched, intp_t *nz_feature, float64_t *nz_value, float64_t *nz_sum,
) noexcept nogil:
    """Count one class's rows (rows[0:n_rows]) into fc_row and *class_count (added to, or
    written when overwrite), through scratch (all zero, and left so; NULL: none) when the class
    has enough entries (design note e). row_sum (indexed by row number) gets the rows' sums unless
    NULL. With prefetch, each row is fetched while the one before is counted. Returns 0.

    fc_row NULL: listed only (design note f; requires scratch, padded with zeros to a multiple of
    64 entries, the bitmap touched of n_features bits, all zero and left so, and overwrite): the
    class is summed into scratch, and its
    nonzeros listed in nz_feature and nz_value, in feature order (room for min(n_features,
    entries)), their sum in *nz_sum; returns how many. A class with fewer entries than there
    are features / MARK_PER_ENTRY marks the ones it touches in the bitmap and lists only those; a
    larger one lists by testing its whole scratch row (cheaper than marking every entry)."""
    cdef intp_t p, r, next_row, j, n_entries = 0, m
    cdef double w, s
    cdef bint listing = fc_row == NULL, marking
    cdef float64_t *target = fc_row
    for p in range(n_rows):
        r = rows[p]
        n_entries = n_entries + X_indptr[r + 1] - X_indptr[r]
    if listing or (scratch != NULL and 2 * n_entries >= n_features):
        target = scratch
    elif overwrite:
        memset(fc_row, 0, n_features * sizeof(float64_t))
    if overwrite:
        class_count[0] = 0.0
    marking = listing and MARK_PER_ENTRY * n_entries < n_features
    for p in range(n_rows):
        r = rows[p]
        if prefetch and p + 1 < n_rows:  # the next row is elsewhere in X: fetch it all now
            next_row = rows[p + 1]
            _prefetch_row(X_data, X_indices, X_indptr[next_row], X_indptr[next_row + 1])
        w = sample_weight[r]
        class_count[0] += w
        if marking and binarize:
            s = _add_row(X_data, X_indices, X_indptr[r], X_indptr[r + 1], w, True, threshold,
                         target, touched)
        elif marking:
            s = _add_row(X_data, X_indices, X_indptr[r], X_indptr[r + 1], w, False, threshold,
                         target, touched)
        elif binarize:
            s = _add_row(X_data, X_indices, X_indptr[r], X_indptr[r + 1], w, True, threshold,
                         target, NULL)
        else:
            s = _add_row(X_data, X_indices, X_indptr[r], X_indptr[r + 1], w, False, threshold,
                         target, NULL)
        if row_sum != NULL:
            row_sum[r] = s
    if listing:  # listed from the scratch, which is cleared
        if marking:
            m = _list_touched(target, touched, n_features, nz_feature, nz_value)
        else:
            m = list_nonzero(target, n_features, True, nz_feature, nz_value)
        nz_sum[0] = sum_listed(nz_value, m)  # still in cache
        return m
    if target != fc_row:  # one pass: the class's sums into its row, the scratch back to zero
        if overwrite:
            for j in range(n_features):
                fc_row[j] = target[j]
                target[j] = 0.0
        else:
            for j in range(n_features):
                fc_row[j] += target[j]
                target[j] = 0.0
    return 0


def count_csr(
    const data_t[::1] X_data not None,          # IN
    const index_t[::1] X_indices not None,        # IN
    const index_t[::1] X_indptr not None,         # IN (n_samples + 1,)
    const intp_t[::1] order not None,             # IN (n_samples,) row numbers grouped by class
    const intp_t[::1] class_ptr not None,         # IN (n_classes + 1,)
    const float64_t[::1] sample_weight not None,  # IN (n_samples,)
    bint binarize,
    double threshold,
    float64_t[:, ::1] feature_count_out,           # OUT (n_classes, n_features), or None: listed
    float64_t[::1] class_count_out not None,       # OUT (n_classes,)
    int n_threads,
    *,
    bint overwrite=False,
    intp_t n_features=-1,                          # without feature_count_out
    float64_t[::1] row_sum_out=None,               # OUT (n_samples,): sum of each row
    const intp_t[::1] nz_room=None,                # IN (n_classes + 1,): see below
    intp_t[::1] nz_ptr_out=None,                   # OUT (n_classes + 1,)
    intp_t[::1] nz_feature_out=None,               # OUT (nz_room[-1],)
    float64_t[::1] nz_value_out=None,              # OUT (nz_room[-1],)
    float64_t[::1] nz_sum_out=None,                # OUT (n_classes,)
):
    """feature_count_out[c, j] += sum of w_i * x_ij over rows i of class c (x_ij > threshold when
    binarize); class_count_out[c] += sum of w_i; with overwrite, both are written instead (= the
    batch's sums; a class without rows gets zeros). row_sum_out[i] = sum_j x_ij (unweighted, not
    binarized) if given. Arguments validated by the caller; thread-safe.

    A class whose rows hold at least half as many entries as there are features is summed into a
    scratch row of its thread first, then added to its output row in one sequential pass (design
    note e): the scratch row stays in cache from class to class, while the output rows (a
    megabyte each for a 130,000-word vocabulary) are cold, and scattered increments into them wait
    on memory. feature_count_out[c, j] is thus the old value plus the batch's sum (in row order),
    as scikit-learn's feature_count_ += Y.T @ X.

    Listed only (feature_count_out None, design note f; requires overwrite, n_features and the
    nz_ outputs): the sums are not written to a table but listed class by class, as
    _tables.nonzero_counts lists a written table: class c's nonzeros in nz_ptr_out[c]:nz_ptr_out[c
    + 1] of nz_feature_out and nz_value_out, in feature order, their sum in nz_sum_out[c]. The
    outputs need room for min(n_features, c's entries) slots per class c. Threads share the
    classes only when nz_room gives each class its room (nz_room[c]:nz_room[c + 1]); otherwise the
    classes are counted and listed in order, on one thread. Raises MemoryError if a thread cannot
    have its scratch row and bitmap."""
    cdef intp_t n_classes = class_ptr.shape[0] - 1
    cdef bint listing = feature_count_out is None
    if not listing:
        n_features = feature_count_out.shape[1]
    if listing != (nz_feature_out is not None) or (listing and not (
            overwrite and n_features >= 0 and nz_ptr_out is not None
            and nz_value_out is not None and nz_sum_out is not None)):
        raise ValueError("count_csr lists only without a table, with overwrite, the nz_ outputs "
                         "and n_features")
    cdef float64_t *row_sum = &row_sum_out[0] if row_sum_out is not None else NULL
    # no class can reach the scratch threshold when all rows together do not
    cdef bint any_scratch = listing or 2 * <intp_t> X_indptr[X_indptr.shape[0] - 1] >= n_features
    cdef intp_t n_words = (n_features + 63) >> 6 if listing else 0
    # a listed scratch row is padded with zeros to whole words of the bitmap (_list_touched)
    cdef intp_t scratch_length = n_words << 6 if listing else n_features
    # rows are fetched ahead when X does not stay in the caches
    cdef bint prefetch = X_indptr[X_indptr.shape[0] - 1] * <intp_t> (
        sizeof(data_t) + sizeof(index_t)) >= PREFETCH_MIN_BYTES
    cdef intp_t c, m, position = 0, failed = 0
    cdef float64_t *scratch = NULL
    cdef uint64_t *touched = NULL
    cdef intp_t *nz_feature = &nz_feature_out[0] if listing else NULL
    cdef float64_t *nz_value = &nz_value_out[0] if listing else NULL
    cdef const data_t *data = &X_data[0] if X_data.shape[0] else NULL  # no entries at all: unread
    cdef const index_t *indices = &X_indices[0] if X_indices.shape[0] else NULL
    if n_threads == 1 or n_classes < 2 or (listing and nz_room is None):
        # one thread lists the classes in order, each right after the one before
        with nogil:
            scratch = <float64_t *> calloc(scratch_length, sizeof(float64_t)) \
                if any_scratch else NULL
            touched = <uint64_t *> calloc(n_words, sizeof(uint64_t)) if listing else NULL
            failed = listing and (scratch == NULL or touched == NULL)
            for c in range(n_classes if not failed else 0):
                m = _count_class(data, indices, &X_indptr[0],
                                 &order[0] + class_ptr[c], class_ptr[c + 1] - class_ptr[c],
                                 &sample_weight[0], binarize, threshold, overwrite, n_features,
                                 prefetch,
                                 NULL if listing else &feature_count_out[c, 0],
                                 &class_count_out[c], row_sum, scratch, touched,
                                 nz_feature + position if listing else NULL,
                                 nz_value + position if listing else NULL,
                                 &nz_sum_out[c] if listing else NULL)
                if listing:
                    nz_ptr_out[c] = position
                    position += m
            free(scratch)
            free(touched)
        if failed:
            raise MemoryError("could not allocate the counting kernel's scratch row or bitmap")
        if listing:
            nz_ptr_out[n_classes] = position
        return
    with nogil, parallel(num_threads=n_threads):
        # NULL when out of memory: then every class is counted in place, as small classes are
        scratch = <float64_t *> calloc(scratch_length, sizeof(float64_t)) \
                if any_scratch else NULL
        touched = <uint64_t *> calloc(n_words, sizeof(uint64_t)) if listing else NULL
        for c in prange(n_classes, schedule="dynamic"):
            if listing and (scratch == NULL or touched == NULL):
                failed += 1
            else:
                m = _count_class(data, indices, &X_indptr[0],
                                 &order[0] + class_ptr[c], class_ptr[c + 1] - class_ptr[c],
                                 &sample_weight[0], binarize, threshold, overwrite, n_features,
                                 prefetch,
                                 NULL if listing else &feature_count_out[c, 0],
                                 &class_count_out[c], row_sum, scratch, touched,
                                 nz_feature + nz_room[c] if listing else NULL,
                                 nz_value + nz_room[c] if listing else NULL,
                                 &nz_sum_out[c] if listing else NULL)
                if listing:
                    nz_ptr_out[c + 1] = m  # a count for now
        free(scratch)
        free(touched)
    if failed:
        raise MemoryError("could not allocate the counting kernel's scratch row or bitmap")
    if listing:  # close the gaps between the classes' rooms, in class order
        with nogil:
            for c in range(n_classes):
                m = nz_ptr_out[c + 1]
                nz_ptr_out[c] = position
                memmove(nz_feature + position, nz_feature + nz_room[c], m * sizeof(intp_t))
                memmove(nz_value + position, nz_value + nz_room[c], m * sizeof(float64_t))
                position += m
            nz_ptr_out[n_classes] = position


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
                if data_t is float32_t or data_t is float64_t:
                    v = X[i, j]
                    # negative or NaN: missing; beyond any feature's categories (and where the
                    # conversion to an integer would be undefined): skipped
                    if not (0 <= v < 9.0e15):
                        continue
                    k = <intp_t> v
                else:
                    if X[i, j] < 0:
                        continue
                    k = X[i, j]  # int32 or int64 (= intp_t here): exact
                if k < offsets[j + 1] - offsets[j]:
                    count_out[c, offsets[j] + k] += w
