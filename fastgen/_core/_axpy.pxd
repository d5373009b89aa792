# Row updates of a float64 accumulator, acc[0:n] += sum_t v_t * row_t[0:n], as plain loops that the
# compiler vectorises (it checks at run time that acc does not overlap the rows). Four rows at a
# time cut the load-add-store chain on acc by four: one pass per four nonzeros instead of one per
# nonzero.
from cython cimport floating

from ._typedefs cimport intp_t


cdef inline void _axpy4(double *acc, const floating **rows, const double *vals,
                        intp_t n) noexcept nogil:
    cdef const floating *r0 = rows[0]
    cdef const floating *r1 = rows[1]
    cdef const floating *r2 = rows[2]
    cdef const floating *r3 = rows[3]
    cdef double v0 = vals[0], v1 = vals[1], v2 = vals[2], v3 = vals[3]
    cdef intp_t c
    for c in range(n):
        acc[c] += (v0 * <double> r0[c] + v1 * <double> r1[c]) \
            + (v2 * <double> r2[c] + v3 * <double> r3[c])


cdef inline void _axpy1(double *acc, const floating *row, double v, intp_t n) noexcept nogil:
    cdef intp_t c
    for c in range(n):
        acc[c] += v * <double> row[c]
