# Row updates of a float64 accumulator, acc[0:n] += sum_t v_t * row_t[0:n], written in C with
# non-aliasing pointers so that the compiler vectorises them. Four rows at a time cut the
# load-add-store chain on acc by four: one pass per four nonzeros instead of one per nonzero.
from cython cimport floating

from ._typedefs cimport intp_t

cdef extern from *:
    """
    #define FASTGEN_AXPY4(NAME, T)                                                              \\
    static inline void NAME(double *__restrict acc, const T *__restrict r0,                     \\
                            const T *__restrict r1, const T *__restrict r2,                     \\
                            const T *__restrict r3, double v0, double v1, double v2,            \\
                            double v3, Py_ssize_t n) {                                          \\
        for (Py_ssize_t c = 0; c < n; c++)                                                      \\
            acc[c] += (v0 * (double)r0[c] + v1 * (double)r1[c])                                 \\
                    + (v2 * (double)r2[c] + v3 * (double)r3[c]);                                \\
    }
    #define FASTGEN_AXPY1(NAME, T)                                                              \\
    static inline void NAME(double *__restrict acc, const T *__restrict r0, double v0,          \\
                            Py_ssize_t n) {                                                     \\
        for (Py_ssize_t c = 0; c < n; c++) acc[c] += v0 * (double)r0[c];                        \\
    }
    FASTGEN_AXPY4(fastgen_axpy4_f64, double)
    FASTGEN_AXPY4(fastgen_axpy4_f32, float)
    FASTGEN_AXPY1(fastgen_axpy1_f64, double)
    FASTGEN_AXPY1(fastgen_axpy1_f32, float)
    """
    void fastgen_axpy4_f64(double *acc, const double *r0, const double *r1, const double *r2,
                           const double *r3, double v0, double v1, double v2, double v3,
                           Py_ssize_t n) noexcept nogil
    void fastgen_axpy4_f32(double *acc, const float *r0, const float *r1, const float *r2,
                           const float *r3, double v0, double v1, double v2, double v3,
                           Py_ssize_t n) noexcept nogil
    void fastgen_axpy1_f64(double *acc, const double *r0, double v0, Py_ssize_t n) noexcept nogil
    void fastgen_axpy1_f32(double *acc, const float *r0, double v0, Py_ssize_t n) noexcept nogil


cdef inline void _axpy4(double *acc, const floating **rows, const double *vals,
                        intp_t n) noexcept nogil:
    if floating is double:
        fastgen_axpy4_f64(acc, rows[0], rows[1], rows[2], rows[3],
                          vals[0], vals[1], vals[2], vals[3], n)
    else:
        fastgen_axpy4_f32(acc, rows[0], rows[1], rows[2], rows[3],
                          vals[0], vals[1], vals[2], vals[3], n)


cdef inline void _axpy1(double *acc, const floating *row, double v, intp_t n) noexcept nogil:
    if floating is double:
        fastgen_axpy1_f64(acc, row, v, n)
    else:
        fastgen_axpy1_f32(acc, row, v, n)
