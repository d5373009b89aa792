# Inline helpers that list the nonzero counts of a row (class-major count tables), shared by
# _tables.nonzero_counts and the counting kernel, which lists a row while it is in cache.
from libc.stdint cimport uint64_t

from ._typedefs cimport fastgen_ctz64, float64_t, intp_t


# Bit q set where row[q] != 0, for q in 0:64, by a vectorised test (C: _listing.h).
cdef extern from "_listing.h":
    uint64_t fastgen_nonzero_bits64(const float64_t *row) noexcept nogil


cdef inline intp_t list_marked(float64_t *row, intp_t first, uint64_t bits, bint clear,
                               intp_t *feature, float64_t *value) noexcept nogil:
    """Write row[first + q] for the bits q set in bits, which are exactly the nonzeros there, in
    order (with clear, the entries read are zeroed); return how many. The slots written do not
    depend on the values read, so one entry does not wait for the one before to arrive from the
    cache. Called with constant clear, so each use compiles to its own loop."""
    cdef intp_t j, m = 0
    while bits != 0:
        j = first + fastgen_ctz64(bits)
        bits &= bits - 1
        feature[m] = j
        value[m] = row[j]
        if clear:
            row[j] = 0.0
        m += 1
    return m


cdef inline intp_t list_nonzero(float64_t *row, intp_t n, bint clear, intp_t *feature,
                                float64_t *value) noexcept nogil:
    """list_marked over all of row[0:n]: the nonzeros found 64 at a time by a vectorised test
    (then only they are read back), in feature order; the row is only written with clear.
    Needs room for as many entries as there are nonzeros."""
    cdef intp_t start, q, m = 0
    cdef uint64_t bits
    for start in range(0, n - n % 64, 64):
        m += list_marked(row, start, fastgen_nonzero_bits64(row + start), clear, feature + m,
                         value + m)
    start = n - n % 64
    bits = 0
    for q in range(n - start):
        bits |= (<uint64_t> (row[start + q] != 0)) << q
    m += list_marked(row, start, bits, clear, feature + m, value + m)
    return m


cdef inline double sum_listed(const float64_t *value, intp_t m, intp_t *bad) noexcept nogil:
    """The sum of value[0:m], in order (per-class sums are deterministic); adds to bad the values
    that are no positive count (negative or NaN: X changed during a fit, _guard.pxd), tested
    beside the sum's chain of additions, which they do not lengthen."""
    cdef intp_t k, n_bad = 0
    cdef double s = 0.0
    for k in range(m):
        s += value[k]
        n_bad += not (value[k] > 0)
    bad[0] += n_bad
    return s
