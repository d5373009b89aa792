# Included by _jll.pyx (baseline instruction set) and _jll_avx2.pyx (built with -mavx2 -mfma on
# x86-64 and chosen at import time only on CPUs that have both; see fastgen/_core/__init__.py).
#
# Design: scoring kernels for models whose joint log-likelihood is linear in the features,
#     jll[i, c] = bias[c] + sum_j v(x_ij) * table[j, c],
# which covers multinomial (table = log theta), Bernoulli (table = log p - log(1 - p), bias holding
# sum_j log(1 - p)) and complement naive Bayes. v(x) is x, or 1[x > threshold] when binarize is set.
#  a) The table is feature-major (n_features, n_classes) and C-contiguous: a nonzero touches one
#     contiguous row. Rows of upcoming nonzeros are prefetched (the table does not fit in L2), and
#     rows are added four at a time (_axpy.pxd).
#  b) Each row is accumulated in float64 in a buffer owned by its thread, then turned into jll,
#     log-posterior or posterior in the same pass (max-shifted log-sum-exp, _lse.pxd).
#  c) Threads own disjoint output rows, so results do not depend on n_threads.
#  d) Zero values contribute nothing: skipped when the table has infinities (never 0 * -inf),
#     multiplied through otherwise (no branch per nonzero). Inputs were validated by the caller;
#     the row pointers, column indices and Polya counts are checked again where they index an
#     array, since another thread may have rewritten X since (_guard.pxd).
#  e) The same row loops score the Dirichlet-compound-multinomial (Polya) predictive of a
#     multinomial model, which is not linear in the counts: jll[i, c] = bias[c] + sum_j
#     R(a_jc, x_ij) - R(A_c, n_i), R(a, x) = log Gamma(a + x) - log Gamma(a), n_i the row's total
#     count. Its table is n_blocks tables like a linear one, (n_blocks, n_features, n_classes):
#     block k - 1 holds R(a, k) (block 0 is log a), so a whole count up to n_blocks is one row
#     addition as in a linear model, and block 0, read by most nonzeros, is as compact as a
#     linear table. A larger whole count, when the model's counts N are whole and its alpha
#     one number, is gamma[N + x] - gamma[N] per class, from the model's whole counts
#     (n_features, n_classes, int32) and gamma[m] = R(alpha, m); other counts cost R(a, x) per
#     class, from log a, computed once per thread and (feature, count) as long as the thread's
#     cache keeps it. The normaliser has its table too, (n_lengths, n_classes), row n - 1
#     holding R(A_c, n).
from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, exp, floor, log
from libc.stdlib cimport free, malloc

from ._axpy cimport _axpy1, _axpy4
from ._guard cimport changed_during_call, clamped, in_range, stored_entries
from ._lse cimport OUT_JLL, OUT_LOG_PROBA, OUT_PROBA, _finish_row
from ._rising cimport _log_rising
from ._typedefs cimport (
    data_t, fastgen_prefetch, float32_t, float64_t, index_t, int32_t, int64_t, intp_t, uint64_t,
)

# Prefetch distance in nonzeros.
cdef intp_t PREFETCH_AHEAD = 32


cdef inline double _value(double v, bint binarize, double threshold) noexcept nogil:
    if binarize:
        return 1.0 if v > threshold else 0.0
    return v


cdef inline intp_t _accumulate_csr(
    double *acc, const data_t[::1] X_data, const index_t[::1] X_indices, intp_t start,
    intp_t end, intp_t nnz, const floating[:, ::1] table, intp_t n_classes, bint binarize,
    double threshold, bint skip_zeros,
) noexcept nogil:
    """acc += sum over the nonzeros start..end of v(x) * table[j]. With a finite table a zero
    value adds exactly nothing, so only tables with infinities (alpha = 0) need skip_zeros.
    Returns 1, with the row abandoned, at a column index beyond the table (design d), else 0: a
    branch taken never, where selecting a safe index instead delays every row's address (5%
    of a predict_proba)."""
    cdef const floating *rows[4]
    cdef double vals[4]
    cdef intp_t k, q, j, m = 0
    cdef intp_t n_rows = table.shape[0]
    cdef double v
    if not skip_zeros:
        k = start
        while k + 4 <= end:
            _prefetch_rows(X_indices, k + PREFETCH_AHEAD, 4, nnz, table, n_classes)
            for q in range(4):
                j = X_indices[k + q]
                if not in_range(j, n_rows):
                    return 1
                rows[q] = &table[j, 0]
                vals[q] = _value(<double> X_data[k + q], binarize, threshold)
            _axpy4(acc, rows, vals, n_classes)
            k += 4
        for k in range(k, end):
            j = X_indices[k]
            if not in_range(j, n_rows):
                return 1
            _axpy1(acc, &table[j, 0], _value(<double> X_data[k], binarize, threshold), n_classes)
        return 0
    for k in range(start, end):
        _prefetch_rows(X_indices, k + PREFETCH_AHEAD, 1, nnz, table, n_classes)
        v = _value(<double> X_data[k], binarize, threshold)
        if v == 0:
            continue
        j = X_indices[k]
        if not in_range(j, n_rows):
            return 1
        rows[m] = &table[j, 0]
        vals[m] = v
        m += 1
        if m == 4:
            _axpy4(acc, rows, vals, n_classes)
            m = 0
    for q in range(m):
        _axpy1(acc, rows[q], vals[q], n_classes)
    return 0


cdef inline void _prefetch_rows(const index_t[::1] X_indices, intp_t first, intp_t count,
                                intp_t nnz, const floating[:, ::1] table,
                                intp_t n_classes) noexcept nogil:
    """Prefetch the table rows of nonzeros first .. first + count - 1 (those that exist; a hint,
    which never faults, so the indices are not checked)."""
    cdef intp_t k
    cdef intp_t stop = first + count if first + count < nnz else nnz
    for k in range(first, stop):
        _prefetch_span(&table[X_indices[k], 0], n_classes)


cdef inline void _prefetch_span(const floating *row, intp_t n) noexcept nogil:
    """Prefetch row[0:n]."""
    cdef intp_t q = 0
    cdef intp_t per_line = 64 // sizeof(floating)  # table entries per cache line
    while q < n:
        fastgen_prefetch(row + q)
        q += per_line


cdef inline void _accumulate_dense(
    double *acc, const data_t *x, intp_t n_features, const floating[:, ::1] table,
    intp_t n_classes, bint binarize, double threshold,
) noexcept nogil:
    """acc += sum over the nonzero features of x of v(x_j) * table[j]."""
    cdef const floating *rows[4]
    cdef double vals[4]
    cdef intp_t j, q, m = 0
    cdef double v
    for j in range(n_features):
        v = _value(<double> x[j], binarize, threshold)
        if v == 0:
            continue
        rows[m] = &table[j, 0]
        vals[m] = v
        m += 1
        if m == 4:
            _axpy4(acc, rows, vals, n_classes)
            m = 0
    for q in range(m):
        _axpy1(acc, rows[q], vals[q], n_classes)


cdef inline intp_t _prefetch_block(double x, intp_t n_blocks) noexcept nogil:
    """The block a count x reads if it is whole (x - 1, clamped to the blocks), without
    branches: a hint for the prefetch, which a fractional count may get wrong."""
    cdef intp_t b = <intp_t> (x if x < n_blocks else <double> n_blocks) - 1
    return b if b > 0 else 0


# Counts beyond the blocks that gamma does not cover (fractional ones, or any when the model's
# counts are fractional): each thread keeps the rows R(a_j, x) it computed in a direct-mapped
# cache of (feature, count) entries, n_classes + 2 doubles each (the feature, the count, the
# row), since a word's large counts recur across documents (20 Newsgroups' test set: 19,406
# nonzeros above 8, 6,359 distinct). Its size, a power of two, grows with the batch; the largest
# cache (2.9 MB with 20 classes) took the predictive from 3.2x to 2.6x the plug-in's time.
# Each thread's cache is at most MAX_CACHE_BYTES (many classes make a slot large: 1,000 classes
# would otherwise take 131 MB a thread, written whole at every call).
cdef intp_t MAX_CACHE_SLOTS = 16384
cdef intp_t MAX_CACHE_BYTES = 4 << 20


cdef inline intp_t _cache_slots(intp_t n_values, intp_t n_classes) noexcept nogil:
    """About n_values / 16 slots, a power of two in [16, MAX_CACHE_SLOTS], of at most
    MAX_CACHE_BYTES in all (but at least 16 slots)."""
    cdef intp_t n = 16
    while (n < MAX_CACHE_SLOTS and 16 * n < n_values
           and 2 * n * (n_classes + 2) * <intp_t> sizeof(double) <= MAX_CACHE_BYTES):
        n *= 2
    return n


cdef inline void _clear_cache(double *cache, intp_t n_slots, intp_t n_classes) noexcept nogil:
    cdef intp_t s
    for s in range(n_slots):
        cache[s * (n_classes + 2)] = -1.0  # no feature


cdef inline const double *_cached_rising(
    double *cache, intp_t n_slots, const floating *log_a, intp_t j, double x, intp_t n_classes,
) noexcept nogil:
    """The row R(a_jc, x) over the classes, from the cache (computed from log_a, the feature's
    row of block 0, on a miss)."""
    cdef intp_t c
    cdef uint64_t key = <uint64_t> j * 2654435761ULL + <uint64_t> (<int64_t> x) * 40503ULL
    cdef double *slot = cache + <intp_t> (key & <uint64_t> (n_slots - 1)) * (n_classes + 2)
    if slot[0] != <double> j or slot[1] != x:
        slot[0] = <double> j
        slot[1] = x
        for c in range(n_classes):
            slot[2 + c] = _log_rising(exp(log_a[c]), log_a[c], x)
    return slot + 2


cdef inline void _add_whole_rising(double *acc, const int32_t *counts, const float64_t *gamma,
                                   intp_t n_gamma, const floating *log_a, intp_t x,
                                   intp_t n_classes) noexcept nogil:
    """acc += R(alpha + N_c, x) = gamma[N_c + x] - gamma[N_c] for the whole counts N_c of one
    feature, gamma[m] = R(alpha, m) held as a sum of two numbers, the first of which differences
    exactly (rising_prefix in naive_bayes.py); a class whose N_c + x is beyond gamma computes
    it."""
    cdef intp_t c, n
    for c in range(n_classes):
        n = counts[c]
        if n < n_gamma - x:
            acc[c] += ((gamma[2 * (n + x)] - gamma[2 * n])
                       + (gamma[2 * (n + x) + 1] - gamma[2 * n + 1]))
        else:
            acc[c] += _log_rising(exp(log_a[c]), log_a[c], <double> x)


cdef inline intp_t _add_polya(double *acc, const floating[:, :, ::1] blocks, intp_t j, double x,
                              intp_t n_classes, const floating **rows, const double *ones,
                              intp_t m, double *cache, intp_t n_slots,
                              const int32_t[:, ::1] counts, const float64_t[:, ::1] gamma,
                              intp_t n_gamma, intp_t *bad) noexcept nogil:
    """acc += R(a_j, x) of one nonzero: a whole count up to n_blocks queues its block's row in
    rows (added four at a time, m of them queued); any other value is added by _add_beyond
    (which counts in bad a value no count can be). Returns the number of queued rows. Kept this
    small so that the compiler inlines it."""
    if x == 0:
        return m
    if 1 <= x <= blocks.shape[0] and x == floor(x):
        rows[m] = &blocks[<intp_t> x - 1, j, 0]
        m += 1
        if m == 4:
            _axpy4(acc, rows, ones, n_classes)
            m = 0
        return m
    bad[0] += _add_beyond(acc, &blocks[0, j, 0], j, x, n_classes, cache, n_slots,
                          &counts[j, 0] if n_gamma > 0 else NULL,
                          &gamma[0, 0] if n_gamma > 0 else NULL, n_gamma)
    return m


cdef bint _add_beyond(double *acc, const floating *log_a, intp_t j, double x, intp_t n_classes,
                      double *cache, intp_t n_slots, const int32_t *counts,
                      const float64_t *gamma, intp_t n_gamma) noexcept nogil:
    """acc += R(a_j, x) for a count beyond the blocks: from gamma when it covers the whole
    count x, otherwise from the thread's cache (log_a: the feature's row of block 0). Returns
    whether x was no count (negative, NaN or inf: X changed after its check; design d), which
    adds nothing."""
    cdef intp_t c
    cdef const double *row
    if not (0 < x < INFINITY):
        return True
    if n_gamma > 0 and x < n_gamma and x == floor(x):
        _add_whole_rising(acc, counts, gamma, n_gamma, log_a, <intp_t> x, n_classes)
        return False
    row = _cached_rising(cache, n_slots, log_a, j, x, n_classes)
    for c in range(n_classes):
        acc[c] += row[c]
    return False


cdef inline double _accumulate_polya_csr(
    double *acc, const data_t[::1] X_data, const index_t[::1] X_indices, intp_t start,
    intp_t end, intp_t nnz, const floating[:, :, ::1] blocks, intp_t n_classes, double *cache,
    intp_t n_slots, const int32_t[:, ::1] counts, const float64_t[:, ::1] gamma, intp_t n_gamma,
    intp_t *bad,
) noexcept nogil:
    """acc += sum over the nonzeros start..end of R(a_j, x_j) (design e); returns the row's total
    count, and counts in bad a column index that fails design d's check (which abandons the row,
    as _accumulate_csr does) or a count that does (skipped). The row each upcoming nonzero reads
    is prefetched."""
    cdef const floating *rows[4]
    cdef double ones[4]
    cdef intp_t k, q, j, m = 0
    cdef intp_t n_features = blocks.shape[1]
    cdef double x, n = 0.0
    ones[0] = ones[1] = ones[2] = ones[3] = 1.0
    for k in range(start, end):
        q = k + PREFETCH_AHEAD
        if q < nnz:
            _prefetch_span(&blocks[_prefetch_block(<double> X_data[q], blocks.shape[0]),
                                   X_indices[q], 0], n_classes)
        x = <double> X_data[k]
        j = X_indices[k]
        if not in_range(j, n_features):
            bad[0] += 1
            return n
        n += x
        m = _add_polya(acc, blocks, j, x, n_classes, rows, ones, m, cache, n_slots, counts,
                       gamma, n_gamma, bad)
    for q in range(m):
        _axpy1(acc, rows[q], 1.0, n_classes)
    return n


cdef inline double _accumulate_polya_dense(
    double *acc, const data_t *x, intp_t n_features, const floating[:, :, ::1] blocks,
    intp_t n_classes, double *cache, intp_t n_slots, const int32_t[:, ::1] counts,
    const float64_t[:, ::1] gamma, intp_t n_gamma, intp_t *bad,
) noexcept nogil:
    """Dense twin of _accumulate_polya_csr."""
    cdef const floating *rows[4]
    cdef double ones[4]
    cdef intp_t j, q, m = 0
    cdef double v, n = 0.0
    ones[0] = ones[1] = ones[2] = ones[3] = 1.0
    for j in range(n_features):
        v = <double> x[j]  # read once: the sum and the count agree
        n += v
        m = _add_polya(acc, blocks, j, v, n_classes, rows, ones, m, cache, n_slots, counts,
                       gamma, n_gamma, bad)
    for q in range(m):
        _axpy1(acc, rows[q], 1.0, n_classes)
    return n


# A row of a larger total count is refused: its terms R(a, x) and R(A_c, n) grow as n log n and
# cancel to the joint log-likelihood, so float64 would leave it an error of about n log(n)
# 2^-52 nats (1e-5 at this bound, 5e-3 at 1e12; the plug-in's x log(theta) loses far less).
cdef double MAX_POLYA_LENGTH = 1073741824.0  # 2^30
MAX_PREDICTIVE_COUNT = MAX_POLYA_LENGTH  # (PoissonNB's bound on a count, the same)


cdef inline intp_t _subtract_lengths(double *acc, const float64_t[:, ::1] lengths, double n,
                                     intp_t n_classes) noexcept nogil:
    """acc -= R(A_c, n), the Polya normaliser of a row of total count n: row n - 1 of lengths
    for a whole n up to its rows, else computed from log A_c (row 0). Returns 1 for a row
    beyond MAX_POLYA_LENGTH (counted by the caller, which raises), else 0."""
    cdef intp_t c
    cdef const float64_t *row
    cdef double log_total
    if n > MAX_POLYA_LENGTH:
        return 1
    if n == 0:
        return 0
    if 1 <= n <= lengths.shape[0] and n == floor(n):
        row = &lengths[<intp_t> n - 1, 0]
        for c in range(n_classes):
            acc[c] -= row[c]
        return 0
    for c in range(n_classes):
        log_total = lengths[0, c]
        acc[c] -= _log_rising(exp(log_total), log_total, n)
    return 0


def jll_linear_csr(
    const data_t[::1] X_data not None,          # IN
    const index_t[::1] X_indices not None,      # IN
    const index_t[::1] X_indptr not None,       # IN (n_samples + 1,)
    const floating[:, ::1] table not None,      # IN (n_features, n_classes)
    const float64_t[::1] bias not None,         # IN (n_classes,)
    bint binarize,
    double threshold,
    bint skip_zeros,                   # the table has infinities: zero values must be skipped
    int kind,                          # OUT_JLL, OUT_LOG_PROBA or OUT_PROBA (_lse.pxd)
    floating[:, ::1] out not None,              # OUT (n_samples, n_classes)
    int n_threads,
    const floating[:, :, ::1] polya_blocks=None,  # IN (n_blocks, n_features, n_classes)
    const float64_t[:, ::1] polya_lengths=None,  # IN (n_lengths, n_classes): R(A_c, n)
    const int32_t[:, ::1] polya_counts=None,  # IN (n_features, n_classes): whole N_cj, or None
    const float64_t[:, ::1] polya_gamma=None,  # IN (n_gamma, 2): R(alpha, m), with polya_counts
):
    """Score CSR rows with a linear table, or with the Polya arguments given, by the
    Dirichlet-compound-multinomial predictive (design e; table, binarize, threshold and
    skip_zeros unused); returns the number of rows that could not get scratch memory (0 on
    success). Validated by the caller, but for design d's checks (a ValueError when they fail);
    thread-safe."""
    cdef intp_t n_samples = out.shape[0]
    cdef intp_t n_classes = out.shape[1]
    cdef intp_t nnz
    cdef intp_t i, c, start, stop
    cdef intp_t failed = 0, bad = 0, bad_row, too_long = 0
    cdef bint polya = polya_blocks is not None
    cdef intp_t n_gamma = polya_gamma.shape[0] if polya_counts is not None else 0
    cdef intp_t n_slots
    cdef double length
    cdef double *acc = NULL
    if X_indptr.shape[0] != n_samples + 1:  # X.indptr replaced since its check
        changed_during_call(1)
    nnz = stored_entries(X_data.shape[0], X_indices.shape[0], X_indptr)
    n_slots = _cache_slots(nnz, n_classes) if polya else 0
    with nogil, parallel(num_threads=n_threads):
        # the row's accumulator, then (Polya) the thread's cache
        acc = <double *> malloc((n_classes + n_slots * (n_classes + 2)) * sizeof(double))
        if acc != NULL:
            _clear_cache(acc + n_classes, n_slots, n_classes)
        for i in prange(n_samples, schedule="guided"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = bias[c]
            start = clamped(X_indptr[i], 0, nnz)
            stop = clamped(X_indptr[i + 1], start, nnz)
            bad_row = 0
            if polya:
                length = _accumulate_polya_csr(acc, X_data, X_indices, start, stop, nnz,
                                               polya_blocks, n_classes, acc + n_classes,
                                               n_slots, polya_counts, polya_gamma, n_gamma,
                                               &bad_row)
                too_long += _subtract_lengths(acc, polya_lengths, length, n_classes)
            else:
                bad_row = _accumulate_csr(acc, X_data, X_indices, start, stop, nnz, table,
                                          n_classes, binarize, threshold, skip_zeros)
            bad += bad_row + _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    changed_during_call(bad)
    _refuse_long_rows(too_long)
    return failed


cdef int _refuse_long_rows(intp_t n_rows) except -1:
    if n_rows:
        raise ValueError(
            f"{n_rows} row(s) of X have a total count beyond 2^30 (1,073,741,824): the posterior "
            "predictive (predictive=True) of so long a document loses its precision in float64 "
            "(its terms grow as n log n and cancel). Score such rows with predictive=False.")
    return 0


def jll_linear_dense(
    const data_t[:, ::1] X not None,            # IN (n_samples, n_features)
    const floating[:, ::1] table not None,      # IN (n_features, n_classes)
    const float64_t[::1] bias not None,         # IN (n_classes,)
    bint binarize,
    double threshold,
    int kind,
    floating[:, ::1] out not None,              # OUT (n_samples, n_classes)
    int n_threads,
    const floating[:, :, ::1] polya_blocks=None,  # IN (n_blocks, n_features, n_classes)
    const float64_t[:, ::1] polya_lengths=None,  # IN (n_lengths, n_classes)
    const int32_t[:, ::1] polya_counts=None,  # IN (n_features, n_classes)
    const float64_t[:, ::1] polya_gamma=None,  # IN (n_gamma, 2)
):
    """Dense twin of jll_linear_csr (same contract); zero entries are skipped."""
    cdef intp_t n_samples = X.shape[0]
    cdef intp_t n_features = X.shape[1]
    cdef intp_t n_classes = out.shape[1]
    cdef intp_t i, c
    cdef intp_t failed = 0, bad = 0, bad_row, too_long = 0
    cdef bint polya = polya_blocks is not None
    cdef intp_t n_gamma = polya_gamma.shape[0] if polya_counts is not None else 0
    cdef intp_t n_slots = _cache_slots(X.size, n_classes) if polya else 0
    cdef double length
    cdef double *acc = NULL
    with nogil, parallel(num_threads=n_threads):
        # the row's accumulator, then (Polya) the thread's cache
        acc = <double *> malloc((n_classes + n_slots * (n_classes + 2)) * sizeof(double))
        if acc != NULL:
            _clear_cache(acc + n_classes, n_slots, n_classes)
        for i in prange(n_samples, schedule="guided"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = bias[c]
            if polya:
                bad_row = 0
                length = _accumulate_polya_dense(acc, &X[i, 0], n_features, polya_blocks,
                                                 n_classes, acc + n_classes, n_slots,
                                                 polya_counts, polya_gamma, n_gamma, &bad_row)
                bad += bad_row
                too_long += _subtract_lengths(acc, polya_lengths, length, n_classes)
            else:
                _accumulate_dense(acc, &X[i, 0], n_features, table, n_classes, binarize,
                                  threshold)
            bad += _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    changed_during_call(bad)
    _refuse_long_rows(too_long)
    return failed


cdef inline intp_t _row_nan(const double *acc, intp_t n_classes) noexcept nogil:
    """1 if any of the row's n_classes values is NaN, else 0."""
    cdef intp_t c
    for c in range(n_classes):
        if acc[c] != acc[c]:
            return 1
    return 0


def normalize_rows_inplace(
    floating[:, ::1] jll not None,  # IN/OUT (n_samples, n_classes): jll in, `kind` out
    int kind,
    int n_threads,
    bint refuse_nan=False,
):
    """Turn joint log-likelihood rows into log-posteriors or posteriors in place (max-shifted
    log-sum-exp in float64); returns the number of rows without scratch memory (0 on success).
    With ``refuse_nan``, a NaN row (NumPy's product of a row of X that held NaN: X changed since
    its check) is the ValueError that X changed."""
    cdef intp_t n_samples = jll.shape[0]
    cdef intp_t n_classes = jll.shape[1]
    cdef intp_t i, c
    cdef intp_t failed = 0, nan_rows = 0
    cdef double *acc = NULL
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc(n_classes * sizeof(double))
        for i in prange(n_samples, schedule="static"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = jll[i, c]
            if refuse_nan:
                nan_rows += _row_nan(acc, n_classes)
            _finish_row(acc, &jll[i, 0], n_classes, kind)
        free(acc)
    changed_during_call(nan_rows)
    return failed


cdef inline void _accumulate_codes(
    double *acc, const data_t *x, intp_t n_features, const intp_t[::1] offsets,
    const float64_t[:, ::1] table, intp_t n_classes, intp_t *unknown, intp_t *fractional,
) noexcept nogil:
    """acc += the table rows of the row's codes, four at a time; missing values skipped, unknown
    and fractional codes counted (and skipped). The row buffers live on this call's stack, so
    every thread has its own."""
    cdef const float64_t *rows[4]
    cdef double ones[4]
    cdef intp_t j, k, m = 0
    cdef double v
    ones[0] = ones[1] = ones[2] = ones[3] = 1.0
    unknown[0] = 0
    fractional[0] = 0
    for j in range(n_features):
        if data_t is float32_t or data_t is float64_t:
            v = x[j]
            if v != v:  # NaN: missing
                continue
            if v < 0:  # missing, if it is a whole number
                fractional[0] += floor(v) != v
                continue
            if v >= 9.0e15:
                unknown[0] += 1
                continue
            k = <intp_t> v
            fractional[0] += v != <double> k
        else:
            k = <intp_t> x[j]
            if k < 0:
                continue
        if k >= offsets[j + 1] - offsets[j]:
            unknown[0] += 1
            continue
        rows[m] = &table[offsets[j] + k, 0]
        m += 1
        if m == 4:
            _axpy4(acc, rows, ones, n_classes)
            m = 0
    for j in range(m):
        _axpy1(acc, rows[j], 1.0, n_classes)


def jll_categorical(
    const data_t[:, ::1] X not None,            # IN (n_samples, n_features) codes, <0/NaN missing
    const intp_t[::1] offsets not None,         # IN (n_features + 1,)
    const float64_t[:, ::1] table not None,     # IN (offsets[-1], n_classes) log P(x_j = k | c)
    const float64_t[::1] bias not None,         # IN (n_classes,)
    int kind,
    floating[:, ::1] out not None,              # OUT (n_samples, n_classes)
    int n_threads,
):
    """Categorical naive Bayes: jll[i] = bias + sum_j table[offsets[j] + x_ij], skipping missing
    values (negative, NaN) and codes beyond a feature's categories (marginalised, as
    handle_unknown="ignore" asks); table rows are added four at a time. Any code is safe.
    Returns (rows without scratch memory, unknown codes met, non-integer codes met): the caller
    raises for the last two where they are errors. Thread-safe."""
    cdef intp_t n_samples = X.shape[0], n_features = X.shape[1]
    cdef intp_t n_classes = table.shape[1]
    cdef intp_t i, c
    cdef intp_t failed = 0, unknown = 0, fractional = 0, bad = 0
    cdef intp_t unknown_row, fractional_row
    cdef double *acc = NULL
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc(n_classes * sizeof(double))
        for i in prange(n_samples, schedule="static"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = bias[c]
            unknown_row = fractional_row = 0  # assigned in the loop: private to each thread
            _accumulate_codes(acc, &X[i, 0], n_features, offsets, table, n_classes,
                              &unknown_row, &fractional_row)
            unknown += unknown_row
            fractional += fractional_row
            bad += _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    changed_during_call(bad)
    return failed, unknown, fractional


# The output kinds for Python callers (fastgen._base): their one definition is the C enum in
# _lse.pxd, never numbers repeated in Python.
OUTPUT_KINDS = (OUT_JLL, OUT_LOG_PROBA, OUT_PROBA)
