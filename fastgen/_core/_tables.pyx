# Design: the feature-major log tables the scoring kernels read, built from the class-major counts
# (n_classes, n_features) that the counting kernels write or list.
#  a) Text counts are mostly zero, and a zero count's entry is a sum of a per-feature and a
#     per-class term. So a table is written in two steps: every entry gets that sum, then the
#     nonzero counts' entries are overwritten with values the caller computed (with NumPy's
#     vectorised log, on the compact arrays of the listing).
#  b) nonzero_counts lists the nonzero counts class by class (class_ptr, feature, value), in
#     feature order within a class, so per-class sums over them (segment_sums) are deterministic.
#  c) Every argument was validated by the caller; the kernels only read and write. fill_table
#     allocates per-thread C buffers and reports a failed allocation by its return value.
#  d) A table of STREAM_MIN_BYTES or more (20 MB for 20 Newsgroups) is only written here, and read
#     later by scoring: fill_table writes it a block at a time into a buffer of the thread's and
#     copies each block out with non-temporal stores (_tables.h), which do not first read the
#     cache lines they write.
from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.math cimport fabs, log
from libc.stdlib cimport free, malloc

from ._listing cimport list_nonzero, sum_listed
from ._rising cimport _log_rising
from ._typedefs cimport float64_t, intp_t

cdef enum:
    # features per block of fill_table: a block of the table stays in the first-level cache while
    # every class's entries in it are written
    FILL_BLOCK = 128
    # fill_table streams tables of this many bytes or more (design note d)
    STREAM_MIN_BYTES = 4 << 20


cdef extern from "_tables.h":
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
    come with the same pass (summed over the listed values, in order). Returns how many listed
    counts are negative or NaN (a fit's X changed while it was counted: design note d)."""
    cdef intp_t n_classes = count.shape[0], n_features = count.shape[1]
    cdef intp_t c, m = 0, start, bad = 0
    cdef intp_t *feature = &feature_out[0]
    cdef float64_t *value = &value_out[0]
    with nogil:
        for c in range(n_classes):
            class_ptr_out[c] = start = m
            # read only (clear is False)
            m += list_nonzero(<float64_t *> &count[c, 0], n_features, False, feature + m,
                              value + m)
            class_sum_out[c] = sum_listed(value + start, m - start, &bad)  # still in cache
        class_ptr_out[n_classes] = m
    return bad


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


def complement_counts(
    const intp_t[::1] feature not None,           # IN (n_listed,) features of a listing
    const float64_t[::1] count not None,          # IN (n_listed,) the listed counts
    const float64_t[:] alpha not None,            # IN (n_features,), may be a stride-0 broadcast
    float64_t[::1] total_out not None,            # OUT (n_features,)
    float64_t[::1] complement_out not None,       # OUT (n_listed,)
):
    """ComplementNB's smoothed counts from a listing: total_out[j] = (sum of feature j's listed
    counts, added in listing order, as feature_count_.sum(axis=0) adds the classes) + alpha[j],
    and complement_out[k] = (that sum - count[k]) + alpha[j], j = feature[k]: the other
    classes' count of the listed entry's feature, smoothed. The count is taken from the sum
    before alpha is added, so that a complement of zero stays exactly zero (a count of 2e7 and
    an alpha of 1e-10 smooth it to 1e-10, not to 0) and, clamped at 0 (weighted sums may round
    below a count), never goes below alpha."""
    cdef intp_t j, k, n = feature.shape[0]
    cdef double v
    with nogil:
        total_out[:] = 0.0
        for k in range(n):
            total_out[feature[k]] += count[k]
        for k in range(n):
            j = feature[k]
            v = total_out[j] - count[k]
            complement_out[k] = (v if v > 0.0 else 0.0) + alpha[j]
        for j in range(total_out.shape[0]):
            total_out[j] += alpha[j]


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
):
    """table_out[j, c] = feature_term[j] + class_term[c], except at the listed nonzero counts:
    table_out[feature[k], c] = value[k] + value_class_term[c] for k in class_ptr[c]:class_ptr[c+1]
    (each class's features in increasing order). Validated by the caller; thread-safe.

    Returns -1 when a thread could not allocate its buffers (the table is then incomplete), else
    a number > 0 when some entry written is not finite, 0 when all are (then the scoring kernels
    may multiply zeros through instead of skipping them). The sums of the two terms are judged
    from the terms (any not finite, or the largest magnitudes' sum overflowing the table's type),
    so that filling stays a plain vectorised loop; a positive answer may thus be cautious."""
    cdef intp_t n_features = table_out.shape[0], n_classes = table_out.shape[1]
    cdef intp_t n_blocks = (n_features + FILL_BLOCK - 1) // FILL_BLOCK
    cdef intp_t n_parts = max(1, min(n_threads, n_blocks))
    cdef intp_t j, c, part, nonfinite = 0, failed = 0
    # a broadcast scalar (stride 0) is judged by its one value
    cdef intp_t n_judged = min(n_features, 1) if feature_term.strides[0] == 0 else n_features
    # in entries (a float64 memoryview's stride is a multiple of 8 bytes; 0 for a broadcast)
    cdef intp_t term_stride = feature_term.strides[0] // <intp_t> sizeof(float64_t)
    cdef bint streamed = n_features * n_classes * <intp_t> sizeof(floating) >= STREAM_MIN_BYTES
    cdef double x, big = 0.0, class_big = 0.0
    cdef intp_t *cursor = NULL
    cdef floating *buffer = NULL
    if n_classes == 0:
        return 0
    with nogil:
        for j in range(n_judged):
            x = feature_term[j]
            nonfinite += (x - x) != 0  # x - x is NaN for NaN and +-inf, 0 otherwise
            big = _larger(big, fabs(x))
        for c in range(n_classes):
            x = class_term[c]
            nonfinite += (x - x) != 0
            class_big = _larger(class_big, fabs(x))
        x = <floating> (big + class_big)
        nonfinite += (x - x) != 0
    # Each thread takes a contiguous range of blocks of features, keeping a cursor per class into
    # that class's (feature-sorted) listed entries; a streamed table's blocks go through the
    # thread's buffer (design note d).
    with nogil, parallel(num_threads=n_parts):
        cursor = <intp_t *> malloc(n_classes * sizeof(intp_t))
        buffer = <floating *> malloc(FILL_BLOCK * n_classes * sizeof(floating)) \
            if streamed else NULL
        for part in prange(n_parts, schedule="static"):
            if cursor == NULL or (streamed and buffer == NULL):
                failed += 1
            else:
                nonfinite += _fill_blocks(
                    &feature_term[0] if n_features else NULL, term_stride, &class_term[0],
                    &class_ptr[0], &feature[0] if feature.shape[0] else NULL,
                    &value[0] if value.shape[0] else NULL, &value_class_term[0],
                    &table_out[0, 0] if n_features else NULL, n_classes, n_features,
                    part * n_blocks // n_parts, (part + 1) * n_blocks // n_parts, cursor, buffer)
        if buffer != NULL:
            fastgen_stream_fence()  # the streamed stores are done before the table is read
        free(cursor)
        free(buffer)
    return -1 if failed else nonfinite


cdef intp_t _fill_blocks(
    const float64_t *feature_term, intp_t term_stride, const float64_t *class_term,
    const intp_t *class_ptr, const intp_t *feature, const float64_t *value,
    const float64_t *value_class_term, floating *table, intp_t n_classes, intp_t n_features,
    intp_t first_block, intp_t stop_block, intp_t *cursor, floating *buffer,
) noexcept nogil:
    """fill_table's blocks first_block:stop_block, written in place, or through buffer (room for
    FILL_BLOCK rows) unless it is NULL. Returns how many listed entries written are not
    finite."""
    cdef intp_t block, j0, j1, c, k, stop, base, nonfinite = 0
    cdef double vt, x
    cdef floating *out
    for c in range(n_classes):
        cursor[c] = _lower_bound(feature, class_ptr[c], class_ptr[c + 1], first_block * FILL_BLOCK)
    for block in range(first_block, stop_block):
        j0 = block * FILL_BLOCK
        j1 = min(j0 + FILL_BLOCK, n_features)
        # feature j's row starts at out + (j - base) * n_classes
        out = buffer if buffer != NULL else table
        base = j0 if buffer != NULL else 0
        _fill_rows(out + (j0 - base) * n_classes, feature_term + j0 * term_stride, term_stride,
                   class_term, j1 - j0, n_classes)
        for c in range(n_classes):
            vt = value_class_term[c]
            stop = class_ptr[c + 1]
            k = cursor[c]
            while k < stop and feature[k] < j1:
                x = <floating> (value[k] + vt)
                out[(feature[k] - base) * n_classes + c] = <floating> x
                nonfinite += (x - x) != 0
                k = k + 1
            cursor[c] = k
        if buffer != NULL:
            if floating is float:
                fastgen_stream_f32(table + j0 * n_classes, buffer, (j1 - j0) * n_classes)
            else:
                fastgen_stream_f64(table + j0 * n_classes, buffer, (j1 - j0) * n_classes)
    return nonfinite


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
    classes at a time down all the rows, their terms held in registers (design note a's first
    step)."""
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


def log_rising(
    const float64_t[::1] a not None,    # IN (n,): a > 0
    const float64_t[::1] x not None,    # IN (n,): x >= 0
    float64_t[::1] out not None,        # OUT (n,)
):
    """out = R(a, x) = lgamma(a + x) - lgamma(a), elementwise, by the scoring kernels' series
    (_rising.pxd), for the evidence and the derivations in Python."""
    cdef intp_t i, n = a.shape[0]
    if x.shape[0] != n or out.shape[0] != n:
        raise ValueError("a, x and out must have the same length")
    with nogil:
        for i in range(n):
            out[i] = _log_rising(a[i], log(a[i]), x[i])
