# Bounds that hold however X changes during a call. X is checked where it lies (a private copy
# would cost 10-20% of a text predict_proba), and the kernels read it without the GIL, so another
# thread may rewrite X.data, X.indices or X.indptr after the check or while a kernel runs. The
# kernels therefore clamp the row pointers they read and check, where they use it, every value of
# X they index an array with (and the row numbers they index indptr with): a value that fails
# abandons its row or is skipped, and is counted, and the call raises changed_during_call's
# XChangedError (a ValueError). Elsewhere: check_X returns an object of its own, whose shape and
# arrays another thread cannot replace (a view of a dense X, a CSR over the arrays it checked);
# scipy's C++ routines only see a copy whose structure was checked after it was made
# (_validation.rechecked); and the models' Python code, which indexes with X's values in a few
# places, has numpy's bounds checks (an IndexError). Such a call never reads or writes outside
# an array; its numbers, when nothing it indexes with fails, are unspecified (as numpy's are for
# an array rewritten during an operation).
from ._typedefs cimport index_t, intp_t


cdef inline bint in_range(intp_t j, intp_t n) noexcept nogil:
    """0 <= j < n, in one comparison."""
    return <size_t> j < <size_t> n


cdef inline intp_t clamped(intp_t v, intp_t low, intp_t high) noexcept nogil:
    """v within [low, high] (low <= high). A row's entries, read once from indptr:
    start = clamped(indptr[i], 0, nnz); stop = clamped(indptr[i + 1], start, nnz), each assigned
    in the loop so that a prange keeps them private to its thread."""
    v = v if v > low else low
    return v if v < high else high


cdef inline intp_t stored_entries(intp_t n_data, intp_t n_indices,
                                  const index_t[::1] indptr) noexcept nogil:
    """How many entries the kernels may read: indptr[-1], within both arrays (0 for an empty
    indptr)."""
    cdef intp_t n
    if indptr.shape[0] == 0:
        return 0
    n = indptr[indptr.shape[0] - 1]
    n = n if n < n_data else n_data
    n = n if n < n_indices else n_indices
    return n if n > 0 else 0


cdef inline int changed_during_call(intp_t n_bad) except -1:
    """Raise when a kernel met values of X it could not use (see above)."""
    if n_bad:
        from fastgen._core._errors import XChangedError  # (rare: imported when raised)
        raise XChangedError(
            "X changed while it was being read: values checked before the call were out of "
            "range during it (another thread must not modify an array during a fastgen call)"
        )
    return 0


cdef inline int rows_in(const intp_t[::1] rows, const index_t[::1] indptr) except -1:
    """changed_during_call unless every row number in rows is a row of indptr (X.indptr
    replaced since its check)."""
    cdef intp_t k, n_rows = indptr.shape[0] - 1
    cdef bint outside = False
    for k in range(rows.shape[0]):
        outside |= not in_range(rows[k], n_rows)
    return changed_during_call(outside)
