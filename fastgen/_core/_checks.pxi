# Included by _checks.pyx and _checks_avx2.pyx (the same checks built for the baseline instruction
# set and with -mavx2 -mfma; fastgen/_core/__init__.py picks one at import).
#
# Design: single-pass, allocation-free checks that fastgen/_validation.py runs before any kernel.
# They return a status code (0 = valid); the Python caller turns a code into a ValueError that
# names the problem. They are the reason the other kernels may run unchecked, but for the values
# those index arrays with, which another thread may change after the check (_guard.pxd; the
# duplicate search, which runs after the structure check, guards its indices the same way).
# The scans are written so that the compiler vectorises them: the values' in C++ (_checks.h),
# the others as plain loops that OR flags and add counts without early exits.
from libc.math cimport INFINITY, floor, isinf, isnan
from libc.stdlib cimport calloc, free

from ._guard cimport changed_during_call, clamped, in_range, stored_entries
from ._typedefs cimport (data_t, float32_t, float64_t, index_t, int32_t, int64_t, intp_t, uint32_t,
                        uint64_t)


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
    cdef int decreasing = 0
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
    if _index_scan(&indices[0], end, n_features, &not_above if check_order else NULL):
        return CSR_BAD_INDEX
    if not check_order:
        return CSR_OK
    for i in range(1, n_rows):
        p = indptr[i]
        if 0 < p < end and p != indptr[i - 1]:  # a row starts at p (once for empty rows)
            at_starts += indices[p] <= indices[p - 1]
    return CSR_OK if not_above == at_starts else CSR_OK_UNSORTED


cdef extern from "_checks.h":
    int fastgen_scan_values[T](const T *x, Py_ssize_t n, double bound) noexcept nogil


cdef int _index_scan(const index_t *idx, intp_t n, intp_t n_features,
                     index_t *not_above) noexcept nogil:
    """1 if some idx[k], k < n (n >= 1), is outside [0, n_features), else 0; counts in *not_above,
    if given, the k >= 1 with idx[k] <= idx[k - 1]. Indices are compared unsigned (a negative one is
    huge) and in their own width: an index type too narrow to reach n_features cannot hold an index
    >= n_features, so its limit is one above its largest value."""
    cdef intp_t k
    cdef index_t count = 0
    cdef uint32_t limit32, outside32 = 0
    cdef uint64_t limit64, outside64 = 0
    if index_t is int32_t:
        limit32 = <uint32_t> min(<int64_t> n_features, <int64_t> 1 << 31)
        outside32 = <uint32_t> idx[0] >= limit32
        if not_above != NULL:
            for k in range(1, n):
                outside32 |= <uint32_t> idx[k] >= limit32
                count += idx[k] <= idx[k - 1]
        else:
            for k in range(1, n):
                outside32 |= <uint32_t> idx[k] >= limit32
    else:
        limit64 = <uint64_t> n_features
        outside64 = <uint64_t> idx[0] >= limit64
        if not_above != NULL:
            for k in range(1, n):
                outside64 |= <uint64_t> idx[k] >= limit64
                count += idx[k] <= idx[k - 1]
        else:
            for k in range(1, n):
                outside64 |= <uint64_t> idx[k] >= limit64
    if not_above != NULL:
        not_above[0] = count
    return (outside32 | outside64) != 0


ctypedef fused integer_t:
    int32_t
    int64_t


cdef int _sign_scan(const integer_t *x, intp_t n, double bound) noexcept nogil:
    """The flags of fastgen_scan_values for integers: bit 2 some negative, bit 3 some magnitude above
    bound (the sign bit survives an OR)."""
    cdef intp_t k
    cdef integer_t acc = 0, big = 0, limit
    cdef double largest = 2147483647.0 if integer_t is int32_t else 9223372036854775807.0
    for k in range(n):
        acc |= x[k]
    if bound < largest:  # then it converts to the integer type
        limit = <integer_t> bound
        for k in range(n):
            big |= (x[k] > limit) | (x[k] < -limit)
    return ((acc < 0) << 2) | ((big != 0) << 3)


cdef int _values_status(const data_t[::1] values, bint allow_nan, bint allow_negative,
                        double max_abs) noexcept nogil:
    # A vectorisable pass answers "is anything wrong, and is there NaN?"; only when something
    # is wrong is the first problem located.
    cdef intp_t k, n = values.shape[0]
    cdef double v
    cdef int flags = 0
    if n == 0:
        return VALUES_OK
    if data_t is float32_t or data_t is float64_t:
        flags = fastgen_scan_values(&values[0], n, max_abs)
    else:
        flags = _sign_scan(&values[0], n, max_abs)
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
    cdef intp_t nnz = stored_entries(indices.shape[0], indices.shape[0], indptr)
    cdef intp_t i, k, start, stop
    cdef index_t j
    cdef int found = 0
    cdef intp_t bad = 0
    cdef intp_t *last_row = <intp_t *> calloc(n_features, sizeof(intp_t))
    if last_row == NULL:
        return -1
    with nogil:
        for i in range(n_rows):
            start = clamped(indptr[i], 0, nnz)
            stop = clamped(indptr[i + 1], start, nnz)
            for k in range(start, stop):
                j = indices[k]
                if not in_range(j, n_features):  # X changed since its check (_guard.pxd)
                    bad += 1
                    continue
                if last_row[j] == i + 1:
                    found = 1
                    break
                last_row[j] = i + 1
            if found:
                break
    free(last_row)
    changed_during_call(bad)
    return found


cpdef enum CodesStatus:
    CODES_OK = 0
    CODES_NOT_INTEGER = 1   # a value with a fractional part (or +-inf)
    CODES_TOO_LARGE = 2     # a code that does not fit an index


def codes_status(
    const data_t[:, ::1] X not None,     # IN (n_samples, n_features) category codes
    int64_t[::1] max_out not None,       # OUT (n_features,) largest code per column (-1: none)
):
    """Check category codes: whole numbers (in any dtype), negative or NaN meaning missing; write
    the largest code of each column (a float code must be below 9e15, where every integer is
    exactly representable). Integer codes are compared in their own type, never through a double.
    Returns CODES_OK or the problem found."""
    cdef intp_t n_samples = X.shape[0], n_features = X.shape[1]
    cdef intp_t i, j
    cdef double v
    cdef int64_t code
    cdef int status = CODES_OK
    with nogil:
        for j in range(n_features):
            max_out[j] = -1
        for i in range(n_samples):
            for j in range(n_features):
                if data_t is float32_t or data_t is float64_t:
                    v = X[i, j]
                    if v != v:  # NaN: missing
                        continue
                    if v - v != 0 or floor(v) != v:  # +-inf, or a fractional part
                        status = CODES_NOT_INTEGER
                        break
                    if v < 0:  # missing
                        continue
                    if v >= 9.0e15:
                        status = CODES_TOO_LARGE
                        break
                    code = <int64_t> v
                else:
                    if X[i, j] < 0:
                        continue
                    code = X[i, j]
                if code > max_out[j]:
                    max_out[j] = code
            if status != CODES_OK:
                break
    return status


def raise_x_changed():
    """Raise the ValueError of _guard.pxd, for Python code that finds X changed since its check
    (fastgen/_validation.py's rechecked)."""
    changed_during_call(1)
