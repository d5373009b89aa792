# Design: accumulation of the additive per-class sufficient statistics (counts of the discrete
# event models; weights, means and squared deviations of the diagonal Gaussian and Poisson models).
#  a) Rows arrive grouped by class through `order` (row numbers sorted stably by class),
#     `class_ptr` (rows of class c are order[class_ptr[c]:class_ptr[c+1]]) and `weight`, the
#     weight of each entry of `order`. A row may be listed under several classes, with a weight
#     for each (soft class memberships, as EM's); the streaming kernels take the same entries in
#     row order instead (`rows`, `y_idx`, `weight`).
#  b) Threads own whole classes (prange over classes), so each output row is written by one
#     thread in row order: results are identical for any n_threads.
#  c) Counts are added into the float64 outputs (they are running totals for partial_fit).
#  d) The caller validated structure, dtypes, finiteness and sign. What indexes an output, and
#     the values counted, are checked again where they are used (another thread may have
#     rewritten X since: _guard.pxd): row pointers are clamped, row numbers, column indices and
#     codes checked, and counted values (every caller that does not binarize validated them as
#     counts) must leave each sparse row's sum, and each dense count, at least 0 and finite,
#     and each listed count positive, lest a fit leave NaN or negative counts behind (a derived
#     table's listing tests its counts too: _tables.nonzero_counts). A kernel that finds X
#     changed may have counted part of the batch (partial_fit then unfits the model). Kernels
#     allocate only per-thread C buffers, and report a failed allocation by their return value.
#  e) Sparse rows scatter increments over a whole output row, which for a large vocabulary does
#     not stay in cache; large classes are therefore summed into a per-thread scratch row that
#     does, and added to their output row in one sequential pass (count_csr; a thread that cannot
#     have its scratch row counts them in place, as the small ones).
#  f) A sparse first batch may be listed instead (list_csr): each class is summed into the scratch
#     row of its thread and its nonzeros are listed from it by a vectorised test of 64 entries at a
#     time, which reads only the nonzeros back; the dense table, mostly zeros for a large
#     vocabulary, is never written (the model builds it if it is asked for).
#  g) EM's memberships, the entries of note a, are listed from the rows' joint log-likelihoods
#     (soft_members, the E-step): rows are independent there, so threads own rows; it counts
#     each row's entries, then allocates the lists (NumPy) and fills them, in row order.
from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, exp, log
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memmove

import numpy as np

from ._guard cimport changed_during_call, clamped, in_range, rows_in, stored_entries
from ._listing cimport list_nonzero, sum_listed
from ._typedefs cimport data_t, float32_t, float64_t, intp_t, index_t, label_t


def encode_compact(
    const label_t[::1] y not None,   # IN (n_samples,) labels, n_samples >= 1
    label_t[::1] classes_out not None,  # OUT (n_samples,): the distinct labels in [0:returned)
    intp_t[::1] code_out not None,   # OUT (n_samples,): each label's index among them
    intp_t max_span,
):
    """np.unique(y, return_inverse=True) by counting, for labels whose max - min is at most
    max_span: returns how many distinct labels (sorted in classes_out), or -1 (nothing written)
    when they span more or the rank table cannot be allocated (the caller then sorts).
    Differences are taken in uint64, exact for every integer type. A label beyond the first
    pass's range in a later pass (y changed during the call: design d) is the ValueError that
    it changed, and nothing is read or written beyond the rank table."""
    cdef intp_t n = y.shape[0], i, k = -1, bad = 0
    cdef label_t low = y[0], high = y[0], v
    cdef uint64_t span, j, at
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
                at = <uint64_t> y[i] - <uint64_t> low
                if at <= span:
                    rank[at] = 1
                else:
                    bad += 1
            for j in range(span + 1):  # present values get their rank
                if rank[j]:
                    classes_out[k] = <label_t> (<uint64_t> low + j)
                    rank[j] = k
                    k += 1
            for i in range(n):
                at = <uint64_t> y[i] - <uint64_t> low
                if at <= span:
                    code_out[i] = rank[at]
                else:
                    code_out[i] = 0
                    bad += 1
            free(rank)
    changed_during_call(bad)
    return k


def group_rows(
    const intp_t[::1] y_idx not None,      # IN (n_samples,) class of each row, in [0, n_classes)
    intp_t[::1] order_out not None,        # OUT (n_samples,)
    intp_t[::1] class_ptr_out not None,    # OUT (n_classes + 1,)
):
    """The layout of design note a, by a stable counting sort: rows of class c are
    order_out[class_ptr_out[c]:class_ptr_out[c + 1]], in row order. Labels validated by the
    caller (a private copy), but for design d's check: a class beyond [0, n_classes) is the
    ValueError that y changed, and nothing is written for it; every write stays within
    order_out (a row whose valid class differed between the passes could still be misplaced,
    which the caller's copy rules out)."""
    cdef intp_t n_samples = y_idx.shape[0], n_classes = class_ptr_out.shape[0] - 1
    cdef intp_t i, c, bad = 0
    if order_out.shape[0] < n_samples:
        raise ValueError("order_out must have a slot for each row")
    with nogil:
        class_ptr_out[:] = 0
        for i in range(n_samples):
            c = y_idx[i]
            if in_range(c, n_classes):
                class_ptr_out[c + 1] += 1
            else:
                bad += 1
        for c in range(n_classes):
            class_ptr_out[c + 1] += class_ptr_out[c]
        for i in range(n_samples):  # class_ptr_out[c] is class c's next free slot ...
            c = y_idx[i]
            if in_range(c, n_classes) and class_ptr_out[c] < class_ptr_out[c + 1]:
                order_out[class_ptr_out[c]] = i
                class_ptr_out[c] += 1
            else:  # (a class read differently from the first pass: its slots may be full)
                bad += 1
        for c in range(n_classes, 0, -1):  # ... so it ends as class c + 1's start
            class_ptr_out[c] = class_ptr_out[c - 1]
        class_ptr_out[0] = 0
    changed_during_call(bad)


cdef inline double _add_row(const data_t *X_data, const index_t *X_indices, intp_t start,
                            intp_t stop, double w, bint binarize, double threshold,
                            float64_t *target, intp_t n_features, intp_t *bad) noexcept nogil:
    """target[j] += w * x_j (w if x_j > threshold when binarize) over the row's entries
    X_data[start:stop]; returns the sum of x_j. At a column index beyond target[0:n_features]
    it abandons the row, and it counts one in bad for that or (without binarize) for a row
    whose sum is negative or not finite (design d). Called with constant
    binarize, so each use compiles to its own loop. (The sum's check costs about 3% of the
    kernel, the index's nothing measurable; skipping a bad entry instead (continue), or testing
    each value, cost 8-20%: bench/README.)"""
    cdef intp_t k, j
    cdef double v, s = 0.0
    for k in range(start, stop):
        v = X_data[k]
        j = X_indices[k]
        if not in_range(j, n_features):
            bad[0] += 1
            return s
        s = s + v
        if binarize:
            target[j] += w if v > threshold else 0.0  # no branch to mispredict
        else:
            target[j] += w * v
    if not binarize and not (0 <= s < INFINITY):  # (NaN compares false)
        bad[0] += 1
    return s


cdef double _add_class(
    const data_t *X_data, const index_t *X_indices, const index_t[::1] X_indptr, intp_t nnz,
    const intp_t *rows, intp_t n_rows, const float64_t *weight, bint binarize, double threshold,
    float64_t *target, intp_t n_features, float64_t *row_sum, intp_t *read, intp_t *bad,
) noexcept nogil:
    """target[j] += the class's sums over its rows rows[0:n_rows] (weights weight[0:n_rows]), in
    row order; row_sum[p] gets the sum of row rows[p] unless NULL. Returns the sum of the
    weights; adds to read the entries read and to bad the rows that fail design d's checks."""
    cdef intp_t p, r, start, stop
    cdef double s, total = 0.0
    for p in range(n_rows):
        r = rows[p]
        total += weight[p]
        start = clamped(X_indptr[r], 0, nnz)
        stop = clamped(X_indptr[r + 1], start, nnz)
        read[0] += stop - start
        if binarize:
            s = _add_row(X_data, X_indices, start, stop, weight[p], True, threshold, target,
                         n_features, bad)
        else:
            s = _add_row(X_data, X_indices, start, stop, weight[p], False, threshold, target,
                         n_features, bad)
        if row_sum != NULL:
            row_sum[p] = s
    return total


def count_csr(
    const data_t[::1] X_data not None,          # IN
    const index_t[::1] X_indices not None,        # IN
    const index_t[::1] X_indptr not None,         # IN (n_samples + 1,)
    const intp_t[::1] order not None,             # IN (n_entries,) row numbers grouped by class
    const intp_t[::1] class_ptr not None,         # IN (n_classes + 1,)
    const float64_t[::1] weight not None,         # IN (n_entries,) the weight of each entry
    bint binarize,
    double threshold,
    float64_t[:, ::1] feature_count_out not None,  # OUT (n_classes, n_features), added to
    float64_t[::1] class_count_out not None,       # OUT (n_classes,), added to
    float64_t[::1] row_sum_out,                    # OUT (n_entries,) or None: sum of each row
    int n_threads,
):
    """feature_count_out[c, j] += sum of w_p * x_ij over the entries p of class c, i = order[p],
    w_p = weight[p] (x_ij > threshold when binarize); class_count_out[c] += sum of w_p.
    row_sum_out[p] = sum_j x_ij (unweighted, not binarized) unless None. Arguments validated by
    the caller; thread-safe.

    A class whose rows hold at least half as many entries as there are features is summed into a
    scratch row of its thread first, then added to its output row in one sequential pass (design
    note e): feature_count_out[c, j] is then the old value plus the batch's sum (in row order),
    as scikit-learn's feature_count_ += Y.T @ X; a smaller class is added in place. Validated by
    the caller, but for design d's checks (a ValueError when they fail)."""
    cdef intp_t n_features = feature_count_out.shape[1]
    cdef intp_t nnz = stored_entries(X_data.shape[0], X_indices.shape[0], X_indptr)
    cdef intp_t c, p, j, n_entries, read, bad = 0, bad_class
    # no entries at all: nothing is read or written through these
    cdef const intp_t *rows = &order[0] if order.shape[0] else NULL
    cdef const float64_t *weights = &weight[0] if weight.shape[0] else NULL
    cdef float64_t *row_sum = &row_sum_out[0] if row_sum_out is not None and \
        row_sum_out.shape[0] else NULL
    cdef const data_t *data = &X_data[0] if X_data.shape[0] else NULL  # no entries at all: unread
    cdef const index_t *indices = &X_indices[0] if X_indices.shape[0] else NULL
    # no class can reach the scratch threshold when all rows together do not
    cdef bint any_scratch = 2 * nnz >= n_features
    cdef float64_t *scratch = NULL
    cdef float64_t *target
    rows_in(order, X_indptr)
    with nogil, parallel(num_threads=n_threads):
        scratch = <float64_t *> calloc(n_features, sizeof(float64_t)) if any_scratch else NULL
        for c in prange(class_ptr.shape[0] - 1, schedule="dynamic"):
            n_entries = 0  # (a size hint only)
            for p in range(class_ptr[c], class_ptr[c + 1]):
                n_entries = n_entries + X_indptr[order[p] + 1] - X_indptr[order[p]]
            target = scratch if scratch != NULL and 2 * n_entries >= n_features \
                else &feature_count_out[c, 0]
            read = bad_class = 0
            class_count_out[c] += _add_class(
                data, indices, X_indptr, nnz, rows + class_ptr[c],
                class_ptr[c + 1] - class_ptr[c], weights + class_ptr[c], binarize, threshold,
                target, n_features, row_sum + class_ptr[c] if row_sum != NULL else NULL, &read,
                &bad_class)
            bad += bad_class
            if target == scratch:  # one pass: into the output row, the scratch back to zero
                for j in range(n_features):
                    feature_count_out[c, j] += scratch[j]
                    scratch[j] = 0.0
        free(scratch)
    changed_during_call(bad)


cdef intp_t _list_class(
    const data_t *X_data, const index_t *X_indices, const index_t[::1] X_indptr, intp_t nnz,
    const intp_t *rows, intp_t n_rows, const float64_t *weight, bint binarize, double threshold,
    intp_t n_features, float64_t *scratch, float64_t *row_sum, float64_t *class_count,
    intp_t *feature, float64_t *value, intp_t room, float64_t *value_sum, intp_t *bad,
) noexcept nogil:
    """One class of list_csr: its rows summed into scratch (all zero, and left so), its nonzero
    sums listed in feature order into feature and value, their sum (while in cache) in
    *value_sum and its rows' weights in *class_count. Returns how many were listed. The list
    has room for room entries: a class that read more entries than that (X changed since its
    room was counted) lists nothing and counts them in bad (design d)."""
    cdef intp_t m, read = 0, j
    class_count[0] = _add_class(X_data, X_indices, X_indptr, nnz, rows, n_rows, weight,
                                binarize, threshold, scratch, n_features, row_sum, &read, bad)
    if read > room and n_features > room:  # it could list more nonzeros than it has room for
        bad[0] += read
        for j in range(n_features):
            scratch[j] = 0.0
        value_sum[0] = 0.0
        return 0
    m = list_nonzero(scratch, n_features, True, feature, value)
    value_sum[0] = sum_listed(value, m, bad)
    return m


def list_csr(
    const data_t[::1] X_data not None,          # IN
    const index_t[::1] X_indices not None,        # IN
    const index_t[::1] X_indptr not None,         # IN (n_samples + 1,)
    const intp_t[::1] order not None,             # IN (n_entries,) row numbers grouped by class
    const intp_t[::1] class_ptr not None,         # IN (n_classes + 1,)
    const float64_t[::1] weight not None,         # IN (n_entries,) the weight of each entry
    bint binarize,
    double threshold,
    intp_t n_features,
    const intp_t[::1] room,                       # IN (n_classes + 1,) or None: see below
    float64_t[::1] class_count_out not None,      # OUT (n_classes,)
    float64_t[::1] row_sum_out,                   # OUT (n_entries,) or None: sum of each row
    intp_t[::1] ptr_out not None,                 # OUT (n_classes + 1,)
    intp_t[::1] feature_out not None,             # OUT (room[-1] or enough,)
    float64_t[::1] value_out not None,            # OUT (room[-1] or enough,)
    float64_t[::1] sum_out not None,              # OUT (n_classes,)
    int n_threads,
):
    """count_csr's sums of a first batch, listed instead of written to a table (design note f):
    class c's nonzero sums in ptr_out[c]:ptr_out[c + 1] of feature_out and value_out, in feature
    order, as _tables.nonzero_counts lists a written table, their sum (in that order) in
    sum_out[c]; class_count_out[c] = sum of c's weights; row_sum_out as count_csr's.

    Class c needs room for min(n_features, its entries) slots. With room, class c is listed
    first at room[c]:room[c + 1] and threads share the classes; the lists are then moved
    together. Without (None), one thread lists the classes one after another, so the outputs
    need room for the sum over the classes. Returns 0, or -1 when a thread could not allocate
    its scratch row (the outputs are then incomplete). Validated by the caller, but for design
    d's checks (a ValueError when they fail); thread-safe."""
    cdef intp_t n_classes = class_ptr.shape[0] - 1
    cdef intp_t nnz = stored_entries(X_data.shape[0], X_indices.shape[0], X_indptr)
    cdef intp_t c, m, position = 0, failed = 0, bad = 0, bad_class
    # no entries at all: nothing is read or written through these
    cdef const intp_t *rows = &order[0] if order.shape[0] else NULL
    cdef const float64_t *weights = &weight[0] if weight.shape[0] else NULL
    cdef float64_t *row_sum = &row_sum_out[0] if row_sum_out is not None and \
        row_sum_out.shape[0] else NULL
    cdef const data_t *data = &X_data[0] if X_data.shape[0] else NULL  # no entries at all: unread
    cdef const index_t *indices = &X_indices[0] if X_indices.shape[0] else NULL
    cdef intp_t *feature = &feature_out[0]
    cdef float64_t *value = &value_out[0]
    cdef float64_t *scratch = NULL
    rows_in(order, X_indptr)
    if room is None:
        with nogil:
            scratch = <float64_t *> calloc(n_features, sizeof(float64_t))
            failed = scratch == NULL
            for c in range(n_classes if not failed else 0):
                ptr_out[c] = position
                position += _list_class(
                    data, indices, X_indptr, nnz, rows + class_ptr[c],
                    class_ptr[c + 1] - class_ptr[c], weights + class_ptr[c], binarize,
                    threshold, n_features, scratch,
                    row_sum + class_ptr[c] if row_sum != NULL else NULL, &class_count_out[c],
                    feature + position, value + position,
                    min(feature_out.shape[0], value_out.shape[0]) - position,
                    &sum_out[c], &bad)
            ptr_out[n_classes] = position
            free(scratch)
        changed_during_call(bad)
        return -1 if failed else 0
    with nogil, parallel(num_threads=n_threads):
        scratch = <float64_t *> calloc(n_features, sizeof(float64_t))
        for c in prange(n_classes, schedule="dynamic"):
            if scratch == NULL:
                failed += 1
            else:
                bad_class = 0
                ptr_out[c + 1] = _list_class(  # a count for now
                    data, indices, X_indptr, nnz, rows + class_ptr[c],
                    class_ptr[c + 1] - class_ptr[c], weights + class_ptr[c], binarize,
                    threshold, n_features, scratch,
                    row_sum + class_ptr[c] if row_sum != NULL else NULL, &class_count_out[c],
                    feature + room[c], value + room[c], room[c + 1] - room[c], &sum_out[c],
                    &bad_class)
                bad += bad_class
        free(scratch)
    changed_during_call(bad)
    if failed:
        return -1
    with nogil:  # close the gaps between the classes' rooms, in class order
        for c in range(n_classes):
            m = ptr_out[c + 1]
            ptr_out[c] = position
            memmove(feature + position, feature + room[c], m * sizeof(intp_t))
            memmove(value + position, value + room[c], m * sizeof(float64_t))
            position += m
        ptr_out[n_classes] = position
    return 0


def count_dense(
    const data_t[:, ::1] X not None,            # IN (n_samples, n_features)
    const intp_t[::1] order not None,             # IN (n_entries,)
    const intp_t[::1] class_ptr not None,         # IN (n_classes + 1,)
    const float64_t[::1] weight not None,         # IN (n_entries,)
    bint binarize,
    double threshold,
    float64_t[:, ::1] feature_count_out not None,  # OUT (n_classes, n_features), added to
    float64_t[::1] class_count_out not None,       # OUT (n_classes,), added to
    int n_threads,
):
    """Dense twin of count_csr (same contract); every entry is read, zeros add nothing. Without
    binarize, a class whose counts are not all counts afterwards (X changed since its check:
    design d) is the ValueError."""
    cdef intp_t n_classes = class_ptr.shape[0] - 1
    cdef intp_t n_features = X.shape[1]
    cdef intp_t c, p, r, j
    cdef intp_t bad = 0, bad_class
    cdef double w
    cdef float64_t *fc_row
    cdef const data_t *x_row
    for c in prange(n_classes, nogil=True, schedule="dynamic", num_threads=n_threads):
        fc_row = &feature_count_out[c, 0]
        for p in range(class_ptr[c], class_ptr[c + 1]):
            r = order[p]
            w = weight[p]
            class_count_out[c] += w
            x_row = &X[r, 0]
            if binarize:
                for j in range(n_features):
                    if x_row[j] > threshold:
                        fc_row[j] += w
            else:
                for j in range(n_features):
                    fc_row[j] += w * <double> x_row[j]
        if not binarize:
            bad_class = 0
            for j in range(n_features):
                bad_class = bad_class + (not (0 <= fc_row[j] < INFINITY))
            bad += bad_class
    changed_during_call(bad)


cdef inline void _sum_row(double *wsum, double *xsum, const floating *x, double w,
                          intp_t n) noexcept nogil:
    """wsum[j] += w and xsum[j] += w x_j over the observed (non-NaN) x_j of one row, without a
    branch (GCC vectorises the loop, checking at run time that the rows do not overlap)."""
    cdef intp_t j
    cdef double v
    cdef bint ok
    for j in range(n):
        v = x[j]
        ok = v == v
        wsum[j] += w if ok else 0.0
        xsum[j] += w * v if ok else 0.0


cdef inline void _sqdev_row(double *m2, const double *mean, const floating *x, double w,
                            intp_t n) noexcept nogil:
    """m2[j] += w (x_j - mean[j])^2 over the observed x_j of one row, as _sum_row."""
    cdef intp_t j
    cdef double d
    for j in range(n):
        d = x[j] - mean[j]
        m2[j] += w * (d * d) if d == d else 0.0


def moments_dense(
    const floating[:, ::1] X not None,          # IN (n_samples, n_features), NaN = missing
    const intp_t[::1] rows not None,              # IN (n_entries,) the row of each entry
    const intp_t[::1] y_idx not None,             # IN (n_entries,) its class
    const float64_t[::1] weight not None,         # IN (n_entries,) its weight
    float64_t[:, ::1] weight_out not None,        # OUT (n_classes, n_features), overwritten
    float64_t[:, ::1] mean_out not None,          # OUT (n_classes, n_features), overwritten
    float64_t[:, ::1] m2_out not None,            # OUT (n_classes, n_features), overwritten
    int n_threads,
):
    """Per class and feature, over the observed (non-NaN) values of the batch: the total weight,
    the weighted mean and the weighted sum of squared deviations from it (two passes, so the
    variance does not suffer the cancellation of sum x^2 - n mean^2). Batches are combined by
    the caller (Chan et al.). Validated by the caller; thread-safe.

    Entries (rows in row order, a row once per class it counts for) are streamed in order (a
    class-by-class gather is six times slower on this memory access pattern); threads own blocks
    of features, so results do not depend on n_threads."""
    cdef intp_t n_entries = rows.shape[0]
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
        for i in range(n_entries):
            c = y_idx[i]
            _sum_row(&weight_out[c, j0], &mean_out[c, j0], &X[rows[i], j0], weight[i], width)
        for c in range(n_classes):
            for j in range(j0, j0 + width):
                if weight_out[c, j] > 0:
                    mean_out[c, j] = mean_out[c, j] / weight_out[c, j]
        for i in range(n_entries):
            c = y_idx[i]
            _sqdev_row(&m2_out[c, j0], &mean_out[c, j0], &X[rows[i], j0], weight[i], width)


def count_categorical(
    const data_t[:, ::1] X not None,              # IN (n_samples, n_features) codes, <0/NaN missing
    const intp_t[::1] rows not None,              # IN (n_entries,) the row of each entry
    const intp_t[::1] y_idx not None,             # IN (n_entries,) its class
    const float64_t[::1] weight not None,         # IN (n_entries,) its weight
    const intp_t[::1] offsets not None,           # IN (n_features + 1,) first column of feature j
    float64_t[:, ::1] count_out not None,         # OUT (n_classes, offsets[-1]), added to
    int n_threads,
):
    """count_out[c, offsets[j] + k] += the weight of the entries of class c whose row's feature j
    is k; missing values (negative or NaN) and codes beyond the feature's categories are skipped.
    Entries are read in order (one pass on one thread); thread t owns the classes c with
    c % n_threads == t, so results do not depend on n_threads. Codes validated by the caller
    (codes_status); thread-safe."""
    cdef intp_t n_entries = rows.shape[0], n_features = X.shape[1]
    cdef intp_t n_classes = count_out.shape[0]
    cdef intp_t n_parts = max(1, min(n_threads, n_classes))
    cdef intp_t t, c, e, i, j, k
    cdef double v, w
    for t in prange(n_parts, nogil=True, schedule="static", num_threads=n_parts):
        for e in range(n_entries):
            c = y_idx[e]
            if c % n_parts != t:
                continue
            i = rows[e]
            w = weight[e]
            for j in range(n_features):
                if data_t is float32_t or data_t is float64_t:
                    v = X[i, j]
                    # negative or NaN: missing; beyond any feature's categories (and where the
                    # conversion to an integer would be undefined): skipped
                    if not (0 <= v < 9.0e15):
                        continue
                    k = <intp_t> v
                else:
                    k = X[i, j]  # int32 or int64 (= intp_t here): exact; read once (d)
                    if k < 0:
                        continue
                if k < offsets[j + 1] - offsets[j]:
                    count_out[c, offsets[j] + k] += w


def soft_members(
    float64_t[:, ::1] jll not None,      # IN/OUT (n_batch, n_classes): scores; scratch
    const intp_t[::1] rows not None,     # IN (n_rows,): the rows of jll to turn into members
    const float64_t[::1] weights not None,  # IN (n_rows,): their weights, positive
    double floor,                        # posteriors below it are left out
    float64_t[::1] marginal not None,    # OUT (n_rows,): log P(x) of each of those rows
    int n_threads,
):
    """EM's E-step on joint log-likelihoods (design note g): for each listed row i of jll, its
    log P(x) = logsumexp(jll[i]) in marginal, and its soft class memberships, the posteriors
    P(c | x) of at least floor, each times the row's weight, as the entries of design note a in
    row order: returns (row of each entry, its class, its weight). A row with no finite
    log P(x) (NaN, or every score -inf or some +inf) gets NaN in marginal (-inf where jll has no
    classes) and no entry. jll's listed rows are overwritten; all arguments are the
    caller's own arrays (checked for shapes and rows only)."""
    cdef intp_t n_rows = rows.shape[0], n_classes = jll.shape[1]
    cdef intp_t i, c, k
    cdef double m, s, p, w
    cdef double *row
    if weights.shape[0] != n_rows or marginal.shape[0] != n_rows:
        raise ValueError("rows, weights and marginal must have the same length")
    for i in range(n_rows):  # (distinct rows: each thread writes its own)
        if not (rows[i - 1] if i else -1) < rows[i] < jll.shape[0]:
            raise ValueError("rows must be increasing row numbers of jll")
    ptr = np.zeros(n_rows + 1, dtype=np.intp)
    cdef intp_t[::1] entries = ptr
    with nogil:
        for i in prange(n_rows, num_threads=n_threads, schedule="static"):
            row = &jll[rows[i], 0]
            m = -INFINITY
            for c in range(n_classes):
                if row[c] > m:
                    m = row[c]
            s = 0.0
            for c in range(n_classes):
                row[c] = exp(row[c] - m)  # (NaN for a row without a finite maximum)
                s = s + row[c]
            marginal[i] = m + log(s)
            w = weights[i]
            k = 0
            for c in range(n_classes):
                p = row[c] / s
                row[c] = w * p if p >= floor else 0.0
                k = k + (row[c] > 0)
            entries[i + 1] = k
    np.cumsum(ptr, out=ptr)
    n_entries = int(ptr[n_rows])
    rows_out, classes_out = np.empty(n_entries, dtype=np.intp), np.empty(n_entries, dtype=np.intp)
    weights_out = np.empty(n_entries)
    cdef intp_t[::1] member_rows = rows_out, member_classes = classes_out
    cdef float64_t[::1] member_weights = weights_out
    with nogil:
        for i in prange(n_rows, num_threads=n_threads, schedule="static"):
            row = &jll[rows[i], 0]
            k = entries[i]
            for c in range(n_classes):
                if row[c] > 0:
                    member_rows[k] = rows[i]
                    member_classes[k] = c
                    member_weights[k] = row[c]
                    k = k + 1
    return rows_out, classes_out, weights_out
