# Design: single-pass, allocation-free checks that fastgen/_validation.py runs before any kernel.
# They return a status code (0 = valid) and never raise; the Python caller turns a code into a
# ValueError that names the problem. They are the reason the other kernels may run unchecked.
from libc.math cimport INFINITY, isinf, isnan
from libc.stdlib cimport calloc, free

from ._typedefs cimport (data_t, fastgen_cpu_has_avx2_fma, float32_t, float64_t, index_t, int32_t,
                        int64_t, intp_t, uint32_t, uint64_t)


cpdef enum CsrStatus:
    CSR_OK = 0
    CSR_BAD_START = 1       # indptr[0] != 0
    CSR_NOT_MONOTONE = 2    # indptr decreases somewhere
    CSR_BAD_END = 3         # indptr[-1] larger than len(indices)
    CSR_BAD_INDEX = 4       # a column index < 0 or >= n_features
    CSR_OK_UNSORTED = 5     # valid, but the columns of some row do not strictly increase: it may
                            # store a column twice (csr_has_duplicates tells)


cpdef enum ValuesStatus:
    VALUES_OK = 0
    VALUES_NAN = 1
    VALUES_INF = 2
    VALUES_NEGATIVE = 3
    VALUES_OK_WITH_NAN = 4  # valid, and NaN (allowed: missing values) occurs
    VALUES_TOO_LARGE = 5    # a value beyond the model's bound (it would overflow)


cdef int _csr_status(const index_t[::1] indices, const index_t[::1] indptr,
                     intp_t n_features, bint check_order) noexcept nogil:
    # Whether every row's columns strictly increase comes with the same pass over the indices:
    # the places where a column is not above the one before, counted over all entries, are then
    # all where a row starts.
    cdef intp_t n_rows = indptr.shape[0] - 1
    cdef intp_t i, p, end
    cdef int decreasing = 0, out_of_range
    cdef index_t not_above = 0
    cdef intp_t at_starts = 0
    if indptr[0] != 0:
        return CSR_BAD_START
    for i in range(n_rows):
        decreasing |= indptr[i + 1] < indptr[i]
    if decreasing:
        return CSR_NOT_MONOTONE
    end = indptr[n_rows]
    if end > indices.shape[0]:
        return CSR_BAD_END
    if end == 0:
        return CSR_OK
    # indices in [0, limit), compared unsigned; an index type too narrow to reach n_features
    # cannot hold an index >= n_features, so its limit is one above its largest value
    if index_t is int32_t:
        out_of_range = fastgen_index_scan_i32(&indices[0], end, <uint32_t> min(
            <int64_t> n_features, <int64_t> 1 << 31), &not_above if check_order else NULL)
    else:
        out_of_range = fastgen_index_scan_i64(&indices[0], end, <uint64_t> n_features,
                                              &not_above if check_order else NULL)
    if out_of_range:
        return CSR_BAD_INDEX
    if not check_order:
        return CSR_OK
    for i in range(1, n_rows):
        p = indptr[i]
        if 0 < p < end and p != indptr[i - 1]:  # a row starts at p (once for empty rows)
            at_starts += indices[p] <= indices[p - 1]
    return CSR_OK if not_above == at_starts else CSR_OK_UNSORTED


cdef extern from *:
    """
    /* One pass over the values: flags bit 0 = some NaN, bit 1 = some +-inf, bit 2 = some
       negative, bit 3 = some magnitude above bound. On x86 the vectors keep running minima and
       maxima (MINPD/MAXPD return their second operand beside a NaN, so NaN lanes leave them as
       they are) and OR-ed NaN masks, four vectors per step, and the extremes are judged once at
       the end: with SSE2 (always there on x86-64), and with AVX2 where the CPU has it (the scan
       of the 20 Newsgroups-shaped corpus's 1.9 million values took 1.5 ms with SSE2, bound by
       its 38 instructions per 8 values; about the time of reading them from memory with AVX2);
       elsewhere a scalar loop. Integers only need their sign bits OR-ed. */
    #include <math.h>
    #include <stdint.h>
    #define FASTGEN_BASELINE  /* no attribute: the module's own instruction set */
    #define FASTGEN_SCALAR_FLAGS(T, v, bound)                                                  \
        ((v != v) | (((v - v) != (v - v) && v == v) << 1) | ((v < 0) << 2)                      \
         | (((v > (T)bound || -v > (T)bound) && (v - v) == (v - v)) << 3))
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    #define FASTGEN_SIMD_SCAN(NAME, ATTR, T, V, LOAD, OR, UNORD, MIN, MAX, ZERO, MOVEMASK, LANES,   \
                              STORE)                                                              \
    ATTR static int NAME(const T *__restrict x, Py_ssize_t n, double bound) {                     \
        V nan0 = ZERO(), nan1 = ZERO(), lo0 = ZERO(), lo1 = ZERO(), lo2 = ZERO(), lo3 = ZERO();   \
        V hi0 = ZERO(), hi1 = ZERO(), hi2 = ZERO(), hi3 = ZERO();                                 \
        Py_ssize_t k = 0;                                                                         \
        for (; k + 4 * LANES <= n; k += 4 * LANES) {                                              \
            V a = LOAD(x + k), b = LOAD(x + k + LANES);                                           \
            V c = LOAD(x + k + 2 * LANES), d = LOAD(x + k + 3 * LANES);                           \
            nan0 = OR(nan0, OR(UNORD(a, a), UNORD(b, b)));                                        \
            nan1 = OR(nan1, OR(UNORD(c, c), UNORD(d, d)));                                        \
            lo0 = MIN(a, lo0); lo1 = MIN(b, lo1); lo2 = MIN(c, lo2); lo3 = MIN(d, lo3);           \
            hi0 = MAX(a, hi0); hi1 = MAX(b, hi1); hi2 = MAX(c, hi2); hi3 = MAX(d, hi3);           \
        }                                                                                         \
        T lo[LANES], hi[LANES];  /* 0 to start with: neither negative nor above any bound */      \
        STORE(lo, MIN(MIN(lo0, lo1), MIN(lo2, lo3)));                                             \
        STORE(hi, MAX(MAX(hi0, hi1), MAX(hi2, hi3)));                                             \
        int flags = MOVEMASK(OR(nan0, nan1)) != 0;                                                \
        for (int lane = 0; lane < LANES; lane++) {                                                \
            T v = lo[lane], w = hi[lane];                                                         \
            flags |= ((v == -(T)INFINITY || w == (T)INFINITY) << 1)                              \
                   | ((v < 0) << 2) | ((w > (T)bound || -v > (T)bound) << 3);                     \
        }                                                                                         \
        for (; k < n; k++) {                                                                      \
            T v = x[k];                                                                           \
            flags |= FASTGEN_SCALAR_FLAGS(T, v, bound);                                           \
        }                                                                                         \
        return flags;                                                                             \
    }
    FASTGEN_SIMD_SCAN(fastgen_scan_f64_base, FASTGEN_BASELINE, double, __m128d, _mm_loadu_pd,
                      _mm_or_pd, _mm_cmpunord_pd, _mm_min_pd, _mm_max_pd, _mm_setzero_pd,
                      _mm_movemask_pd, 2, _mm_storeu_pd)
    FASTGEN_SIMD_SCAN(fastgen_scan_f32_base, FASTGEN_BASELINE, float, __m128, _mm_loadu_ps,
                      _mm_or_ps, _mm_cmpunord_ps, _mm_min_ps, _mm_max_ps, _mm_setzero_ps,
                      _mm_movemask_ps, 4, _mm_storeu_ps)
    #else
    #define FASTGEN_SCALAR_SCAN(NAME, T)                                                        \
    static int NAME(const T *__restrict x, Py_ssize_t n, double bound) {                        \
        int flags = 0;                                                                          \
        for (Py_ssize_t k = 0; k < n; k++) {                                                    \
            T v = x[k];                                                                         \
            flags |= FASTGEN_SCALAR_FLAGS(T, v, bound);                                         \
        }                                                                                       \
        return flags;                                                                           \
    }
    FASTGEN_SCALAR_SCAN(fastgen_scan_f64_base, double)
    FASTGEN_SCALAR_SCAN(fastgen_scan_f32_base, float)
    #endif
    #define FASTGEN_SIGN_SCAN(NAME, T, MAXV)                                                    \
    static inline int NAME(const T *__restrict x, Py_ssize_t n, double bound) {                 \
        T acc = 0, big = 0;                                                                     \
        for (Py_ssize_t k = 0; k < n; k++) acc |= x[k];  /* the sign bit survives an OR */      \
        if (bound < (double)(MAXV)) {                                                           \
            const T limit = (T)bound;                                                           \
            for (Py_ssize_t k = 0; k < n; k++) big |= (x[k] > limit) | (x[k] < -limit);         \
        }                                                                                       \
        return ((acc < 0) << 2) | ((big != 0) << 3);                                            \
    }
    FASTGEN_SIGN_SCAN(fastgen_scan_i32, int, 2147483647)
    FASTGEN_SIGN_SCAN(fastgen_scan_i64, long long, 9223372036854775807LL)

    /* One pass over CSR column indices idx[0:n], n >= 1: returns 1 if some index is outside
       [0, limit) (compared unsigned: a negative one is huge), and counts in *not_above, if given,
       the k >= 1 with idx[k] <= idx[k - 1]. Flags are OR-ed and counts added without early
       exits, so that the compiler vectorises the loop (the count in the index type: no
       widening). */
    #define FASTGEN_INDEX_SCAN(NAME, ATTR, T, UT)                                                \
    ATTR static int NAME(const T *__restrict idx, Py_ssize_t n, UT limit, T *not_above) {        \
        UT outside = (UT)idx[0] >= limit;                                                        \
        T count = 0;                                                                             \
        if (not_above != NULL) {                                                                 \
            for (Py_ssize_t k = 1; k < n; k++) {                                                 \
                outside |= (UT)idx[k] >= limit;                                                  \
                count += idx[k] <= idx[k - 1];                                                   \
            }                                                                                    \
            *not_above = count;                                                                  \
        } else {                                                                                 \
            for (Py_ssize_t k = 1; k < n; k++) outside |= (UT)idx[k] >= limit;                   \
        }                                                                                        \
        return outside != 0;                                                                     \
    }
    FASTGEN_INDEX_SCAN(fastgen_index_scan_i32_base, FASTGEN_BASELINE, int32_t, uint32_t)
    FASTGEN_INDEX_SCAN(fastgen_index_scan_i64_base, FASTGEN_BASELINE, int64_t, uint64_t)

    /* The AVX2 twins, chosen at run time (fastgen_checks_avx2). */
    #if FASTGEN_HAVE_TARGET_AVX2
    #include <immintrin.h>
    #define fastgen_cmpunord256_pd(a, b) _mm256_cmp_pd((a), (b), _CMP_UNORD_Q)
    #define fastgen_cmpunord256_ps(a, b) _mm256_cmp_ps((a), (b), _CMP_UNORD_Q)
    FASTGEN_SIMD_SCAN(fastgen_scan_f64_avx2, FASTGEN_TARGET_AVX2, double, __m256d,
                      _mm256_loadu_pd, _mm256_or_pd, fastgen_cmpunord256_pd, _mm256_min_pd,
                      _mm256_max_pd, _mm256_setzero_pd, _mm256_movemask_pd, 4, _mm256_storeu_pd)
    FASTGEN_SIMD_SCAN(fastgen_scan_f32_avx2, FASTGEN_TARGET_AVX2, float, __m256,
                      _mm256_loadu_ps, _mm256_or_ps, fastgen_cmpunord256_ps, _mm256_min_ps,
                      _mm256_max_ps, _mm256_setzero_ps, _mm256_movemask_ps, 8, _mm256_storeu_ps)
    FASTGEN_INDEX_SCAN(fastgen_index_scan_i32_avx2, FASTGEN_TARGET_AVX2, int32_t, uint32_t)
    FASTGEN_INDEX_SCAN(fastgen_index_scan_i64_avx2, FASTGEN_TARGET_AVX2, int64_t, uint64_t)
    #define FASTGEN_CHOOSE(NAME, ...) \
        (fastgen_checks_avx2 ? NAME##_avx2(__VA_ARGS__) : NAME##_base(__VA_ARGS__))
    #else
    #define FASTGEN_CHOOSE(NAME, ...) NAME##_base(__VA_ARGS__)
    #endif
    static int fastgen_checks_avx2 = 0;
    /* Use the AVX2 twins if on and the CPU has AVX2 (and FMA, as the scoring kernels ask); returns
       whether they were used before. */
    static int fastgen_checks_use_avx2(int on) {
        int before = fastgen_checks_avx2;
        fastgen_checks_avx2 = FASTGEN_HAVE_TARGET_AVX2 && on && fastgen_cpu_has_avx2_fma();
        return before;
    }
    #define fastgen_scan_f64(x, n, bound) FASTGEN_CHOOSE(fastgen_scan_f64, x, n, bound)
    #define fastgen_scan_f32(x, n, bound) FASTGEN_CHOOSE(fastgen_scan_f32, x, n, bound)
    #define fastgen_index_scan_i32(idx, n, limit, not_above) \
        FASTGEN_CHOOSE(fastgen_index_scan_i32, idx, n, limit, not_above)
    #define fastgen_index_scan_i64(idx, n, limit, not_above) \
        FASTGEN_CHOOSE(fastgen_index_scan_i64, idx, n, limit, not_above)
    """
    int fastgen_scan_f32(const float *x, Py_ssize_t n, double bound) noexcept nogil
    int fastgen_scan_f64(const double *x, Py_ssize_t n, double bound) noexcept nogil
    int fastgen_scan_i32(const int *x, Py_ssize_t n, double bound) noexcept nogil
    int fastgen_scan_i64(const long long *x, Py_ssize_t n, double bound) noexcept nogil
    int fastgen_index_scan_i32(const int32_t *idx, Py_ssize_t n, uint32_t limit,
                               int32_t *not_above) noexcept nogil
    int fastgen_index_scan_i64(const int64_t *idx, Py_ssize_t n, uint64_t limit,
                               int64_t *not_above) noexcept nogil
    int fastgen_checks_use_avx2(int on) noexcept nogil


cdef int _values_status(const data_t[::1] values, bint allow_nan, bint allow_negative,
                        double max_abs) noexcept nogil:
    # A vectorisable pass answers "is anything wrong, and is there NaN?"; only when something
    # is wrong is the first problem located.
    cdef intp_t k, n = values.shape[0]
    cdef double v
    cdef int flags = 0
    if n == 0:
        return VALUES_OK
    if data_t is float32_t:
        flags = fastgen_scan_f32(&values[0], n, max_abs)
    elif data_t is float64_t:
        flags = fastgen_scan_f64(&values[0], n, max_abs)
    elif data_t is int32_t:
        flags = fastgen_scan_i32(<const int *> &values[0], n, max_abs)
    else:
        flags = fastgen_scan_i64(<const long long *> &values[0], n, max_abs)
    if not (flags & 2) and (allow_nan or not (flags & 1)) and (allow_negative or not (flags & 4)) \
            and not (flags & 8):
        return VALUES_OK_WITH_NAN if flags & 1 else VALUES_OK
    for k in range(values.shape[0]):
        v = values[k]
        if isnan(v):
            if not allow_nan:
                return VALUES_NAN
        elif isinf(v):
            return VALUES_INF
        elif v < 0 and not allow_negative:
            return VALUES_NEGATIVE
        elif v > max_abs or -v > max_abs:
            return VALUES_TOO_LARGE
    return VALUES_OK_WITH_NAN if flags & 1 else VALUES_OK


def use_avx2(bint on):
    """Let the scans of values_status and csr_structure_status take their AVX2 twins (on, and
    only where the CPU has AVX2 and FMA; fastgen._core decides at import) or the baseline ones;
    returns whether they took the twins before. Both answer the same."""
    return bool(fastgen_checks_use_avx2(on))


def csr_structure_status(
    const index_t[::1] indices not None,  # IN
    const index_t[::1] indptr not None,   # IN (n_samples + 1,), at least one entry
    intp_t n_features,
    bint check_order=False,
):
    """Return CSR_OK if (indices, indptr) is a valid CSR structure with n_features columns, else
    the first problem found; with check_order, CSR_OK_UNSORTED for a valid one some of whose
    rows' columns do not strictly increase (found in the same pass, for a little more time).
    Only indices[:indptr[-1]] are used by the kernels, so only those are checked."""
    cdef int status
    with nogil:
        status = _csr_status(indices, indptr, n_features, check_order)
    return status


def values_status(
    const data_t[::1] values not None,  # IN
    bint allow_nan,
    bint allow_negative,
    double max_abs=INFINITY,
):
    """Return VALUES_OK if every value is finite, non-negative when required and at most max_abs
    in magnitude, VALUES_OK_WITH_NAN if that holds but for NaN (allowed), else the first problem
    found."""
    cdef int status
    with nogil:
        status = _values_status(values, allow_nan, allow_negative, max_abs)
    return status


def csr_has_duplicates(
    const index_t[::1] indices not None,  # IN
    const index_t[::1] indptr not None,   # IN (n_samples + 1,), a valid structure (csr_structure_status)
    intp_t n_features,
):
    """Return 1 if some row stores a column twice, 0 if not, -1 if out of memory: a per-column
    marker remembers the last row that used each column. Only needed when csr_structure_status
    found a row whose columns do not strictly increase (otherwise none repeats)."""
    cdef intp_t n_rows = indptr.shape[0] - 1
    cdef intp_t i, k
    cdef index_t j
    cdef int found = 0
    cdef intp_t *last_row = <intp_t *> calloc(n_features, sizeof(intp_t))
    if last_row == NULL:
        return -1
    with nogil:
        for i in range(n_rows):
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                if last_row[j] == i + 1:
                    found = 1
                    break
                last_row[j] = i + 1
            if found:
                break
    free(last_row)
    return found


cpdef enum CodesStatus:
    CODES_OK = 0
    CODES_NOT_INTEGER = 1   # a value with a fractional part (or +-inf)
    CODES_TOO_LARGE = 2     # a code that does not fit an index


def codes_status(
    const data_t[:, ::1] X not None,     # IN (n_samples, n_features) category codes
    int64_t[::1] max_out not None,       # OUT (n_features,) largest code per column (-1: none)
):
    """Check category codes: integers (in any dtype), negative or NaN meaning missing; write the
    largest code of each column. Returns CODES_OK or the problem found."""
    cdef intp_t n_samples = X.shape[0], n_features = X.shape[1]
    cdef intp_t i, j
    cdef double v
    cdef int status = CODES_OK
    with nogil:
        for j in range(n_features):
            max_out[j] = -1
        for i in range(n_samples):
            for j in range(n_features):
                v = X[i, j]
                if data_t is float32_t or data_t is float64_t:
                    if v != v:
                        continue
                    if v < 0 and v > -9.0e15 and v == <double> <int64_t> v:
                        continue  # a negative code: missing
                    if v < 0 or v != <double> <int64_t> v or v >= 9.0e15:
                        status = CODES_NOT_INTEGER if v < 9.0e15 else CODES_TOO_LARGE
                        break
                elif v < 0:
                    continue
                if <int64_t> v > max_out[j]:
                    max_out[j] = <int64_t> v
            if status != CODES_OK:
                break
    return status
