# Bounds that hold however X changes during a call. X is checked where it lies (a private copy
# would cost 10-20% of a text predict_proba), and the kernels read it without the GIL, so another
# thread may rewrite X.data, X.indices or X.indptr after the check or while a kernel runs. The
# kernels therefore clamp the row pointers they read and check, where they use it, every value of
# X they index an array with: a value that fails is skipped and counted, and the call raises
# changed_during_call's ValueError (the models' Python code, which indexes with X's values in
# a few places, has numpy's bounds checks: an IndexError). Such a call never reads or writes
# outside an array; its numbers, when nothing it indexes with fails, are unspecified (as numpy's
# are for an array rewritten during an operation).
from ._typedefs cimport index_t, intp_t


cdef inline intp_t clamped(intp_t v, intp_t low, intp_t high) noexcept nogil:
    """v within [low, high] (low <= high). A row's entries, read once from indptr:
    start = clamped(indptr[i], 0, nnz); stop = clamped(indptr[i + 1], start, nnz), each assigned
    in the loop so that a prange keeps them private to its thread."""
    v = v if v > low else low
    return v if v < high else high


cdef inline intp_t stored_entries(intp_t n_data, intp_t n_indices, const index_t[::1] indptr,
                                  intp_t n_rows) noexcept nogil:
    """How many entries the kernels may read: indptr[n_rows], within both arrays."""
    cdef intp_t n = indptr[n_rows]
    n = n if n < n_data else n_data
    n = n if n < n_indices else n_indices
    return n if n > 0 else 0


cdef inline bint in_range(intp_t j, intp_t n) noexcept nogil:
    """0 <= j < n, in one comparison."""
    return <size_t> j < <size_t> n


cdef inline int changed_during_call(intp_t n_bad) except -1:
    """Raise when a kernel met values of X it could not use (see above)."""
    if n_bad:
        raise ValueError(
            f"X changed while it was being read ({n_bad} values out of range that were checked "
            "before the call): another thread must not modify an array during a fastgen call"
        )
    return 0
