# Inline helpers that list the nonzero counts of a row (class-major count tables), shared by
# _tables.nonzero_counts and the counting kernel, which lists a row while it is in cache.
from ._typedefs cimport float64_t, intp_t


cdef inline intp_t list_nonzero(const float64_t *row, intp_t n, double total,
                                intp_t *feature, float64_t *value,
                                float64_t *rest) noexcept nogil:
    """Write the nonzeros of row[0:n] (and total - value, clamped at 0, when rest is given);
    return how many. Branch-free: every entry is written at the next free slot, which advances
    only past nonzeros (so it never passes the number of nonzeros, and room for min(n, nonzeros)
    + 1 entries suffices)."""
    cdef intp_t j, m = 0
    cdef double f, r
    if rest == NULL:
        for j in range(n):
            f = row[j]
            feature[m] = j
            value[m] = f
            m += f != 0
    else:
        for j in range(n):
            f = row[j]
            r = total - f
            feature[m] = j
            value[m] = f
            rest[m] = r if r > 0 else 0.0
            m += f != 0
    return m


cdef inline double sum_listed(const float64_t *value, intp_t m) noexcept nogil:
    """The sum of value[0:m], in order (per-class sums are deterministic)."""
    cdef intp_t k
    cdef double s = 0.0
    for k in range(m):
        s += value[k]
    return s
