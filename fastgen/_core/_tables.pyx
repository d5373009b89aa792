# Design: the feature-major log tables the scoring kernels read, built from the class-major counts
# (n_classes, n_features) that the counting kernels write.
#  a) Text counts are mostly zero, and a zero count's entry is a sum of a per-feature and a
#     per-class term. So a table is written in two steps: every entry gets that sum, then the
#     nonzero counts' entries are overwritten. Their values are computed by the caller with NumPy's
#     vectorised log on compact arrays (a scalar libm log per entry is several times slower), or,
#     for whole-number counts, looked up as they are written in a table of log(n + alpha) that
#     NumPy computed (fill_table's and bernoulli_terms' log_table; libm for the few counts beyond
#     it). ComplementNB's logs are of complements, the sum of a feature's counts over the classes
#     less a class's count: fill_table's complement makes the sums block by block and looks up
#     the logs, as it fills, where the listed counts of the block are in cache (complement_counts
#     and NumPy's logs otherwise: 0.4-0.8 ms less of a 12 ms fit of the 20 Newsgroups-shaped
#     corpus, and 1.8 ms less where NumPy has no vectorised float64 log, AVX2 CPUs).
#  b) nonzero_counts lists the nonzero counts class by class (class_ptr, feature, value), in
#     feature order within a class, so per-class sums over them (segment_sums) are deterministic.
#  c) Every argument was validated by the caller; the kernels only read and write.
#  d) A table larger than the caches (20 MB for 20 Newsgroups) is only written, and read later by
#     scoring: fill_table streams it to memory with non-temporal stores, which do not first read
#     each cache line they write into the cache (a third less memory traffic; fit of the 20
#     Newsgroups-shaped corpus 0.5-0.8 ms faster, calls interleaved in one process).
import numpy as np

from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.math cimport fabs, log
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from ._listing cimport list_nonzero, sum_listed
from ._typedefs cimport float64_t, intp_t

cdef enum:
    # features per block of fill_table: a block of the table (and the pattern it is copied from)
    # stays in the first-level cache while it is written
    FILL_BLOCK = 128
    # fill_table streams tables of this many bytes or more (design note d)
    STREAM_MIN_BYTES = 4 << 20


cdef extern from *:
    """
    /* dst[0:n] = src[0:n] with non-temporal stores where the platform has them (SSE2), else
       memcpy; the stores are ordered with later ones only after fastgen_stream_fence(). */
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    #include <stdint.h>
    #define FASTGEN_STREAM(NAME, T, LANES, STREAM, LOAD)                                          \
    static inline void NAME(T *dst, const T *src, Py_ssize_t n) {                                 \
        Py_ssize_t k = 0;                                                                         \
        for (; k < n && ((uintptr_t)(dst + k) & 15); k++) dst[k] = src[k];  /* to 16 bytes */    \
        for (; k + LANES <= n; k += LANES) STREAM(dst + k, LOAD(src + k));                        \
        for (; k < n; k++) dst[k] = src[k];                                                       \
    }
    FASTGEN_STREAM(fastgen_stream_f64, double, 2, _mm_stream_pd, _mm_loadu_pd)
    FASTGEN_STREAM(fastgen_stream_f32, float, 4, _mm_stream_ps, _mm_loadu_ps)
    #define fastgen_stream_fence() _mm_sfence()
    #else
    #include <string.h>
    #define fastgen_stream_f64(dst, src, n) memcpy((dst), (src), (size_t)(n) * sizeof(double))
    #define fastgen_stream_f32(dst, src, n) memcpy((dst), (src), (size_t)(n) * sizeof(float))
    #define fastgen_stream_fence() ((void)0)
    #endif
    """
    void fastgen_stream_f64(double *dst, const double *src, intp_t n) noexcept nogil
    void fastgen_stream_f32(float *dst, const float *src, intp_t n) noexcept nogil
    void fastgen_stream_fence() noexcept nogil


def nonzero_counts(
    const float64_t[:, ::1] count not None,       # IN (n_classes, n_features)
    intp_t[::1] class_ptr_out not None,           # OUT (n_classes + 1,)
    intp_t[::1] feature_out not None,             # OUT (n_classes * n_features,) capacity
    float64_t[::1] value_out not None,            # OUT same capacity: the nonzero count
    float64_t[::1] class_sum_out not None,        # OUT (n_classes,) sum of each class's counts
):
    """List the nonzero counts class by class, in feature order, in one pass: entries
    class_ptr_out[c]:class_ptr_out[c + 1] of the outputs belong to class c; the per-class sums
    come with the same pass (summed over the listed values, in order)."""
    cdef intp_t n_classes = count.shape[0], n_features = count.shape[1]
    cdef intp_t c, m = 0, start
    cdef intp_t *feature = &feature_out[0]
    cdef float64_t *value = &value_out[0]
    with nogil:
        for c in range(n_classes):
            class_ptr_out[c] = start = m
            # read only (clear is False)
            m += list_nonzero(<float64_t *> &count[c, 0], n_features, False, feature + m,
                              value + m)
            class_sum_out[c] = sum_listed(value + start, m - start)  # still in cache
        class_ptr_out[n_classes] = m


def rest_counts(
    const intp_t[::1] class_ptr not None,         # IN (n_classes + 1,) of a listing
    const float64_t[::1] count not None,          # IN (class_ptr[-1],) the listed counts
    const float64_t[::1] class_total not None,    # IN (n_classes,)
    double shift,
    float64_t[::1] rest_out not None,             # OUT (class_ptr[-1],)
):
    """rest_out[k] = class_total[c] - count[k] for the listed counts k of class c, clamped at 0
    (weighted sums may round below), plus shift (BernoulliNB's smoothing, added in the same
    pass)."""
    cdef intp_t c, k
    cdef double total, v
    with nogil:
        for c in range(class_ptr.shape[0] - 1):
            total = class_total[c]
            for k in range(class_ptr[c], class_ptr[c + 1]):
                v = total - count[k]
                rest_out[k] = (v if v > 0.0 else 0.0) + shift


def bernoulli_terms(
    const intp_t[::1] class_ptr not None,         # IN (n_classes + 1,) of a listing
    const float64_t[::1] count not None,          # IN (class_ptr[-1],) the listed counts N
    const float64_t[::1] class_total not None,    # IN (n_classes,) M
    const float64_t[::1] log_table not None,      # IN log_table[i] = log(i + shift)
    double shift,
    const float64_t[::1] log_norm not None,       # IN (n_classes,) log(M + 2 shift)
    float64_t[::1] absent_sum_out not None,       # OUT (n_classes,)
    float64_t[::1] value_out not None,            # OUT (class_ptr[-1],)
):
    """BernoulliNB's terms of the listed counts, in one pass, the logs taken as fill_table takes
    them from log_table: value_out[k] = log(N + a) - log(R + a) and absent_sum_out[c] = the sum
    over class c's listed k of log(R + a) - log_norm[c], in order, with R = M - N clamped at 0
    and a = shift. The same sums as rest_counts, NumPy's logs and segment_sums give (exactly for
    the logs within the table, to rounding for the others)."""
    cdef intp_t c, k
    cdef double total, norm, s, v, logged_absent
    cdef const float64_t *logs = &log_table[0] if log_table.shape[0] else NULL
    cdef double n_logs = log_table.shape[0]
    with nogil:
        for c in range(class_ptr.shape[0] - 1):
            total, norm, s = class_total[c], log_norm[c], 0.0
            for k in range(class_ptr[c], class_ptr[c + 1]):
                v = total - count[k]
                logged_absent = _logged(v if v > 0.0 else 0.0, logs, n_logs, shift)
                s += logged_absent - norm
                value_out[k] = _logged(count[k], logs, n_logs, shift) - logged_absent
            absent_sum_out[c] = s


def complement_counts(
    const intp_t[::1] feature not None,           # IN (n_listed,) features of a listing
    const float64_t[::1] count not None,          # IN (n_listed,) the listed counts
    const float64_t[:] alpha not None,            # IN (n_features,), may be a stride-0 broadcast
    float64_t[::1] total_out not None,            # OUT (n_features,)
    float64_t[::1] complement_out not None,       # OUT (n_listed,)
):
    """ComplementNB's smoothed counts from a listing: total_out[j] = (sum of feature j's listed
    counts, added in listing order, as feature_count_.sum(axis=0) adds the classes) + alpha[j],
    and complement_out[k] = total_out[feature[k]] - count[k], the other classes' count of the
    listed entry's feature, smoothed. (fill_table's complement makes the same sums block by
    block.)"""
    cdef intp_t j, k, n = feature.shape[0]
    with nogil:
        total_out[:] = 0.0
        for k in range(n):
            total_out[feature[k]] += count[k]
        for j in range(total_out.shape[0]):
            total_out[j] += alpha[j]
        for k in range(n):
            complement_out[k] = total_out[feature[k]] - count[k]


def segment_sums(
    const float64_t[::1] values not None,  # IN (class_ptr[-1],)
    const intp_t[::1] class_ptr not None,  # IN (n_classes + 1,)
    const float64_t[::1] shift not None,   # IN (n_classes,)
    float64_t[::1] out not None,           # OUT (n_classes,)
    float64_t[::1] subtract_from=None,     # IN/OUT (class_ptr[-1],), optional
):
    """out[c] = sum of (values[k] - shift[c]) for k in class_ptr[c]:class_ptr[c + 1], in order
    (subtracting before summing keeps the terms small, so nothing cancels). With subtract_from,
    also subtract_from[k] -= values[k], in the same pass over values."""
    cdef intp_t c, k
    cdef double s, d
    cdef float64_t *minuend = &subtract_from[0] if subtract_from is not None \
        and subtract_from.shape[0] else NULL
    with nogil:
        for c in range(class_ptr.shape[0] - 1):
            s = 0.0
            d = shift[c]
            for k in range(class_ptr[c], class_ptr[c + 1]):
                s += values[k] - d
                if minuend != NULL:  # loop-invariant: the compiler makes two loops of it
                    minuend[k] -= values[k]
            out[c] = s


def fill_table(
    const float64_t[:] feature_term not None,  # IN (n_features,), may be a stride-0 broadcast
    const float64_t[::1] class_term not None,  # IN (n_classes,)
    const intp_t[::1] class_ptr not None,      # IN (n_classes + 1,)
    const intp_t[::1] feature not None,        # IN (class_ptr[-1],)
    const float64_t[::1] value not None,       # IN (class_ptr[-1],)
    const float64_t[::1] value_class_term not None,  # IN (n_classes,)
    floating[:, ::1] table_out not None,       # OUT (n_features, n_classes)
    int n_threads,
    bint negate=False,
    const float64_t[::1] log_table=None,        # IN (n,): log_table[i] = log(i + log_shift)
    double log_shift=0.0,
    bint complement=False,
):
    """table_out[j, c] = feature_term[j] + class_term[c], except at the listed nonzero counts:
    table_out[feature[k], c] = value[k] + value_class_term[c] for k in class_ptr[c]:class_ptr[c+1]
    (-value[k] + value_class_term[c] with negate). With log_table, value[k] stands for its
    log(value[k] + log_shift): log_table[value[k]] for the whole numbers the table covers (the
    counts of text mostly), computed (libm) for any other.

    With complement (ComplementNB; requires log_table), the listed values are counts, and the
    logs are of complements: with T_j the sum of feature j's listed counts (added class by class,
    as complement_counts adds them), feature_term[j] is taken to be log(T_j + log_shift) and
    value[k] stands for log(T_j - value[k] + log_shift), j = feature[k], both logs as above (and
    both negated with negate; the feature_term given is not read). The sums and the logs are
    made block by block while the block's entries are in cache, instead of passes over the whole
    listing.

    Returns a positive number when some entry written is not finite (0: the scoring kernels may
    multiply zeros through instead of skipping them). The sums of the two terms are judged from
    the terms (any not finite, or the largest magnitudes' sum overflowing the table's type), so
    that filling stays a plain vectorised loop; a positive answer may thus be cautious."""
    cdef intp_t n_features = table_out.shape[0], n_classes = table_out.shape[1]
    cdef intp_t n_blocks = (n_features + FILL_BLOCK - 1) // FILL_BLOCK
    cdef intp_t block, part, n_parts, j, j0, j1, c, k, stop
    cdef intp_t nonfinite = 0
    cdef const float64_t *ct = &class_term[0]
    cdef bint take_logs = log_table is not None
    cdef double n_logs = log_table.shape[0] if take_logs else 0.0
    cdef const float64_t *logs = &log_table[0] if n_logs > 0 else NULL  # else never read
    cdef floating *out
    cdef double vt, class_big, x, big = 0.0, x1, x2, x3, big1 = 0.0, big2 = 0.0, big3 = 0.0
    # a broadcast scalar (stride 0) is judged by its one value
    cdef intp_t n_judged = min(n_features, 1) if feature_term.strides[0] == 0 else n_features
    cdef intp_t n_quads
    if n_classes == 0:
        return 0
    if complement and not take_logs:
        raise ValueError("fill_table takes the logs of the complements from a log_table")
    if complement:  # the feature terms are judged as they are made, block by block
        n_judged = 0
    n_quads = n_judged - n_judged % 4
    with nogil:
        for j in range(0, n_quads, 4):  # four running maxima: each waits on the one before
            x, x1, x2, x3 = feature_term[j], feature_term[j + 1], feature_term[j + 2], \
                feature_term[j + 3]
            # x - x is NaN for NaN and +-inf, 0 otherwise
            nonfinite += ((x - x) != 0) + ((x1 - x1) != 0) + ((x2 - x2) != 0) + ((x3 - x3) != 0)
            big, big1 = _larger(big, fabs(x)), _larger(big1, fabs(x1))
            big2, big3 = _larger(big2, fabs(x2)), _larger(big3, fabs(x3))
        for j in range(n_quads, n_judged):
            x = feature_term[j]
            nonfinite += (x - x) != 0
            big = _larger(big, fabs(x))
        big = _larger(_larger(big, big1), _larger(big2, big3))
        vt = 0.0
        for c in range(n_classes):
            x = ct[c]
            nonfinite += (x - x) != 0
            vt = _larger(vt, fabs(x))
        class_big = vt
        x = <floating> (big + vt)
        nonfinite += (x - x) != 0
    # One pass over the table, a block of features at a time (the block stays in cache while
    # every class's entries in it are written). Each thread takes a contiguous range of blocks and
    # keeps a cursor per class into that class's (feature-sorted) entries. A table larger than the
    # caches is written block by block into a buffer of the thread's, then streamed out (note d).
    # When the feature term is one number (a scalar alpha), every row starts the same: a block of
    # such rows is made once per thread and copied (summing the rows took 0.5 ms more of 2.3 ms
    # filling the 20 Newsgroups-shaped corpus's table).
    n_parts = max(1, min(n_threads, n_blocks))
    cdef intp_t[:, ::1] cursor = np.empty((n_parts, n_classes), dtype=np.intp)
    # complement: each part's largest feature term magnitude, and room for a block's feature
    # sums (T_j) and then its feature terms
    cdef float64_t[::1] part_big = np.zeros(n_parts if complement else 0)
    cdef float64_t[:, ::1] block_sums = np.empty((n_parts if complement else 0, 2 * FILL_BLOCK))
    cdef const float64_t *counts = &value[0] if value.shape[0] else NULL  # none: never read
    cdef const intp_t *listed = &feature[0] if feature.shape[0] else NULL  # none: never read
    cdef bint streamed = n_features * n_classes * <intp_t> sizeof(floating) >= STREAM_MIN_BYTES
    cdef bint constant = feature_term.strides[0] == 0 and n_features > 0 and not complement
    # in entries (a float64 memoryview's stride is a multiple of 8 bytes; 0 for a broadcast)
    cdef intp_t term_stride = feature_term.strides[0] // <intp_t> sizeof(float64_t)
    cdef intp_t block_size = FILL_BLOCK * n_classes
    cdef floating *buffer = NULL
    cdef floating *pattern = NULL
    cdef floating *scratch = NULL
    cdef float64_t *sums
    cdef intp_t base
    with nogil, parallel(num_threads=n_parts):
        # NULL (out of memory): the table is written in place, each row summed
        scratch = <floating *> malloc((streamed + constant) * block_size * sizeof(floating)) \
            if streamed or constant else NULL
        buffer = scratch if streamed else NULL
        pattern = scratch + (block_size if streamed else 0) if constant and scratch != NULL \
            else NULL
        if pattern != NULL:
            _fill_rows(pattern, &feature_term[0], 0, ct, FILL_BLOCK, n_classes)
        for part in prange(n_parts, schedule="static"):
            sums = &block_sums[part, 0] if complement else NULL
            j = part * n_blocks // n_parts * FILL_BLOCK
            for c in range(n_classes):
                cursor[part, c] = _lower_bound(listed, class_ptr[c], class_ptr[c + 1], j)
            for block in range(part * n_blocks // n_parts, (part + 1) * n_blocks // n_parts):
                j0 = block * FILL_BLOCK
                j1 = min(j0 + FILL_BLOCK, n_features)
                # feature j's row starts at out + (j - base) * n_classes
                out = buffer if buffer != NULL else &table_out[0, 0]
                base = j0 if buffer != NULL else 0
                if complement:
                    nonfinite += _complement_terms(listed, counts, &class_ptr[0],
                                                   &cursor[part, 0], n_classes, j0, j1, logs,
                                                   n_logs, log_shift, negate, sums,
                                                   sums + FILL_BLOCK, &part_big[part])
                    _fill_rows(out + (j0 - base) * n_classes, sums + FILL_BLOCK, 1, ct, j1 - j0,
                               n_classes)
                elif pattern != NULL:
                    memcpy(out + (j0 - base) * n_classes, pattern,
                           (j1 - j0) * n_classes * sizeof(floating))
                else:
                    _fill_rows(out + (j0 - base) * n_classes, &feature_term[j0], term_stride, ct,
                               j1 - j0, n_classes)
                for c in range(n_classes):
                    vt = value_class_term[c]
                    stop = class_ptr[c + 1]
                    k = cursor[part, c]
                    while k < stop and feature[k] < j1:
                        x = value[k]
                        if complement:  # loop-invariant, as take_logs and negate
                            x = sums[feature[k] - j0] - x
                        if take_logs:
                            x = _logged(x, logs, n_logs, log_shift)
                        # negate is loop-invariant: the compiler makes two loops of it
                        x = <floating> ((-x if negate else x) + vt)
                        out[(feature[k] - base) * n_classes + c] = <floating> x
                        nonfinite += (x - x) != 0
                        k = k + 1
                    cursor[part, c] = k
                if buffer != NULL:
                    if floating is float:
                        fastgen_stream_f32(&table_out[j0, 0], buffer, (j1 - j0) * n_classes)
                    else:
                        fastgen_stream_f64(&table_out[j0, 0], buffer, (j1 - j0) * n_classes)
        if buffer != NULL:
            fastgen_stream_fence()  # the streamed stores are done before the table is read
        free(scratch)
    if complement:
        # the feature terms' largest finite magnitude (the others were counted as they were
        # made) with the class terms' one: a sum that overflows the table's type
        x = <floating> (np.max(part_big) + class_big)
        nonfinite += (x - x) != 0
    return nonfinite


cdef intp_t _complement_terms(
    const intp_t *feature, const float64_t *count, const intp_t *class_ptr, const intp_t *cursor,
    intp_t n_classes, intp_t j0, intp_t j1, const float64_t *logs, double n_logs, double shift,
    bint negate, float64_t *sums, float64_t *terms, float64_t *big,
) noexcept nogil:
    """fill_table's complement: sums[j - j0] = T_j, the sum of feature j's listed counts (class
    by class, from each class's cursor on), and terms[j - j0] = log(T_j + shift) (negated with
    negate), for the block's features j0 <= j < j1; *big becomes the larger of itself and the
    finite terms' largest magnitude. Returns how many terms are not finite."""
    cdef intp_t c, k, i, nonfinite = 0
    cdef double x, b = big[0]
    for i in range(j1 - j0):
        sums[i] = 0.0
    for c in range(n_classes):
        k = cursor[c]
        while k < class_ptr[c + 1] and feature[k] < j1:
            sums[feature[k] - j0] += count[k]
            k = k + 1
    for i in range(j1 - j0):
        x = _logged(sums[i], logs, n_logs, shift)
        terms[i] = -x if negate else x
        if x - x == 0:  # finite
            b = _larger(b, fabs(x))
        else:
            nonfinite += 1
    big[0] = b
    return nonfinite


cdef inline double _logged(double v, const float64_t *logs, double n_logs,
                          double shift) noexcept nogil:
    """log(v + shift), from logs (logs[i] = log(i + shift)) when v is a whole number in range."""
    cdef intp_t i
    if 0.0 <= v < n_logs:  # in range first: converting a larger double to an integer is undefined
        i = <intp_t> v
        if <double> i == v:
            return logs[i]
    return log(v + shift)


cdef inline double _larger(double a, double b) noexcept nogil:
    """max(a, b) for magnitudes whose NaNs are counted apart (one instruction; C's fmax, which
    must return the number beside a NaN, is a library call)."""
    return b if b > a else a


cdef inline intp_t _lower_bound(const intp_t *a, intp_t lo, intp_t hi, intp_t v) noexcept nogil:
    """The first position in the sorted a[lo:hi] whose value is >= v (hi if none)."""
    cdef intp_t mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline void _fill_rows(floating *out, const float64_t *feature_term, intp_t term_stride,
                            const float64_t *class_term, intp_t n_rows,
                            intp_t n) noexcept nogil:
    """out[r * n + c] = feature_term[r * term_stride] + class_term[c] for r < n_rows, c < n: four
    classes at a time down all the rows, their terms held in registers (a loop over the n classes
    of a row is as short as the row: the general case of ComplementNB's table filled 25% slower
    that way)."""
    cdef intp_t r, c = 0
    cdef double t, c0, c1, c2, c3
    cdef floating *o
    while c + 4 <= n:
        c0, c1, c2, c3 = class_term[c], class_term[c + 1], class_term[c + 2], class_term[c + 3]
        for r in range(n_rows):
            t = feature_term[r * term_stride]
            o = out + r * n + c
            o[0] = <floating> (t + c0)
            o[1] = <floating> (t + c1)
            o[2] = <floating> (t + c2)
            o[3] = <floating> (t + c3)
        c += 4
    while c < n:
        c0 = class_term[c]
        for r in range(n_rows):
            out[r * n + c] = <floating> (feature_term[r * term_stride] + c0)
        c += 1
