/* Row updates of the Gaussian scoring kernels (_jll_gaussian.pxi), in C with non-aliasing pointers
   so that the compiler vectorises them. */
#ifndef FASTGEN_JLL_GAUSSIAN_H
#define FASTGEN_JLL_GAUSSIAN_H

/* acc[c] += scale[c] * (x - loc[c])**2 for c < n. */
static inline void fastgen_sq_add(double *__restrict acc, const double *__restrict loc,
                                  const double *__restrict scale, double x, Py_ssize_t n) {
    for (Py_ssize_t c = 0; c < n; c++) {
        double d = x - loc[c];
        acc[c] += scale[c] * (d * d);
    }
}
/* Four consecutive features at once: one load and store of acc per four features. */
static inline void fastgen_sq_add4(double *__restrict acc, const double *__restrict loc,
                                   const double *__restrict scale, const double *x,
                                   Py_ssize_t n) {
    const double x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    for (Py_ssize_t c = 0; c < n; c++) {
        double d0 = x0 - loc[c], d1 = x1 - loc[n + c];
        double d2 = x2 - loc[2 * n + c], d3 = x3 - loc[3 * n + c];
        acc[c] += (scale[c] * (d0 * d0) + scale[n + c] * (d1 * d1))
                + (scale[2 * n + c] * (d2 * d2) + scale[3 * n + c] * (d3 * d3));
    }
}
/* acc[c] += cst[c] + scale[c] * (x - loc[c])**2 for c < n: a whole term, constant included
   (an observed feature of a row with missing values). */
static inline void fastgen_term_add(double *__restrict acc, const double *__restrict loc,
                                    const double *__restrict scale,
                                    const double *__restrict cst, double x, Py_ssize_t n) {
    for (Py_ssize_t c = 0; c < n; c++) {
        double d = x - loc[c];
        acc[c] += cst[c] + scale[c] * (d * d);
    }
}
/* The same for four features of a row, not necessarily consecutive: the q-th feature's rows of
   loc, scale and cst start at loc[q], scale[q], cst[q]. */
static inline void fastgen_term_add4(double *__restrict acc, const double *const *loc,
                                     const double *const *scale, const double *const *cst,
                                     const double *x, Py_ssize_t n) {
    const double *__restrict l0 = loc[0], *__restrict l1 = loc[1];
    const double *__restrict l2 = loc[2], *__restrict l3 = loc[3];
    const double *__restrict s0 = scale[0], *__restrict s1 = scale[1];
    const double *__restrict s2 = scale[2], *__restrict s3 = scale[3];
    const double *__restrict c0 = cst[0], *__restrict c1 = cst[1];
    const double *__restrict c2 = cst[2], *__restrict c3 = cst[3];
    const double x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    for (Py_ssize_t c = 0; c < n; c++) {
        double d0 = x0 - l0[c], d1 = x1 - l1[c], d2 = x2 - l2[c], d3 = x3 - l3[c];
        acc[c] += ((c0[c] + s0[c] * (d0 * d0)) + (c1[c] + s1[c] * (d1 * d1)))
                + ((c2[c] + s2[c] * (d2 * d2)) + (c3[c] + s3[c] * (d3 * d3)));
    }
}
/* sum over k < n of (z[k] - off[k])**2, in four running sums. */
static inline double fastgen_sq_dist(const double *__restrict z, const double *__restrict off,
                                     Py_ssize_t n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    Py_ssize_t k = 0;
    for (; k + 4 <= n; k += 4) {
        double d0 = z[k] - off[k], d1 = z[k + 1] - off[k + 1];
        double d2 = z[k + 2] - off[k + 2], d3 = z[k + 3] - off[k + 3];
        s0 += d0 * d0; s1 += d1 * d1; s2 += d2 * d2; s3 += d3 * d3;
    }
    for (; k < n; k++) { double d = z[k] - off[k]; s0 += d * d; }
    return (s0 + s1) + (s2 + s3);
}

#endif
