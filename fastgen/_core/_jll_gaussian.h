/* Row updates of the Gaussian scoring kernels (_jll_gaussian.pxi), in C with non-aliasing pointers
   so that the compiler vectorises them. */
#ifndef FASTGEN_JLL_GAUSSIAN_H
#define FASTGEN_JLL_GAUSSIAN_H

#include <math.h>
#include <stdint.h>
#include <string.h>

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
/* sum over k < n of z[k]**2, in four running sums. */
static inline double fastgen_sq_norm(const double *__restrict z, Py_ssize_t n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    Py_ssize_t k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += z[k] * z[k]; s1 += z[k + 1] * z[k + 1];
        s2 += z[k + 2] * z[k + 2]; s3 += z[k + 3] * z[k + 3];
    }
    for (; k < n; k++) s0 += z[k] * z[k];
    return (s0 + s1) + (s2 + s3);
}


/* Student-t terms (the posterior predictive of GaussianNB), log(1 + u^2) with u = scale (x - loc):
   written with integer masks instead of branches or floating-point selects (which -ftrapping-math
   keeps from being if-converted), so that the loops over classes vectorise. u is finite: the
   derivation bounds scale. */
static inline uint64_t fastgen_bits(double x) { uint64_t b; memcpy(&b, &x, sizeof b); return b; }
static inline double fastgen_double(uint64_t b) { double x; memcpy(&x, &b, sizeof x); return x; }
/* y > 0 normal as 2^k m with m in [1, 2): the mantissa and k (as a double, without an int64
   conversion: 2^52 + biased exponent, less 2^52 + 1023; the sign bit must be 0). */
static inline double fastgen_mantissa(uint64_t yb) {
    return fastgen_double((yb & 0x000fffffffffffffu) | 0x3ff0000000000000u);
}
static inline double fastgen_exponent(uint64_t yb) {
    return fastgen_double(0x4330000000000000u | (yb >> 52)) - (4503599627370496.0 + 1023.0);
}
/* log y for finite y >= 1: fdlibm's __ieee754_log (Sun Microsystems, 1993), within 1 ulp,
   without its branches for zero, negative, subnormal and non-finite arguments. */
static inline double fastgen_log_ge1(double y) {
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                 Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                 Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                 Lg7 = 1.479819860511658591e-01;
    const uint64_t yb = fastgen_bits(y);
    /* y = 2^k m with m in [sqrt(2)/2, sqrt(2)) */
    const uint64_t hx = (yb >> 32) + (0x3ff00000 - 0x3fe6a09e);
    const double m = fastgen_double((((hx & 0x000fffff) + 0x3fe6a09e) << 32) | (yb & 0xffffffffu));
    const double k = fastgen_double(0x4330000000000000u | (hx >> 20))
                     - (4503599627370496.0 + 1023.0);
    const double f = m - 1.0, hfsq = 0.5 * f * f, s = f / (2.0 + f);
    const double z = s * s, w = z * z;
    const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
    const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
    return s * (hfsq + t1 + t2) + k * ln2_lo - hfsq + f + k * ln2_hi;
}
/* Above this bit pattern, |u| > 1e150 and 1 + u^2 is u^2 to rounding (and may overflow): the bit
   patterns of non-negative doubles sort as their values. */
#define FASTGEN_BIG_BITS 0x5F138D352E5096AFu
#define FASTGEN_BIG_Y_BITS 0x4F81AFD6EC0E1411u /* 1e75 */
/* log(1 + u^2): 2 log|u| where |u| > 1e150. Else log y less the relative rounding error of
   y = 1 + u^2, ((y - 1) - u^2) / y (y - 1 is exact), so that a tiny u^2 keeps its digits: a
   Student-t of nu degrees of freedom multiplies this by about -nu/2, and nu may be 1e15. */
static inline double fastgen_log1p_sq(double u) {
    const uint64_t ub = fastgen_bits(fabs(u));
    const uint64_t big = -(uint64_t)(ub > FASTGEN_BIG_BITS);  /* all ones where big */
    const double u2 = u * u, y1 = 1.0 + u2;
    const double y = fastgen_double((ub & big) | (fastgen_bits(y1) & ~big));
    const double rounding = fastgen_double(fastgen_bits(((y1 - 1.0) - u2) / y1) & ~big);
    return fastgen_log_ge1(y) * fastgen_double(0x3ff0000000000000u + (big & 0x0010000000000000u))
           - rounding;
}
/* acc[c] += cst[c] + power[c] log(1 + (scale[c] (x - loc[c]))^2) for c < n: a whole term, each
   class with its own power. */
static inline void fastgen_t_add(double *__restrict acc, const double *__restrict loc,
                                 const double *__restrict scale, const double *__restrict cst,
                                 const double *__restrict power, double x, Py_ssize_t n) {
    for (Py_ssize_t c = 0; c < n; c++)
        acc[c] += cst[c] + power[c] * fastgen_log1p_sq(scale[c] * (x - loc[c]));
}
/* Where every feature of a class has the same power, the sum of its logs is the log of the
   product: mant 2^expo holds that product per class, mant in [1, 2). Four features multiply in
   their 1 + u^2 (each at most 1e75, so that mant times the four cannot overflow) and the product
   is renormalised (split into mantissa and exponent): no log per feature, one per row and class
   at the end. Returns nonzero if some 1 + u^2 > 1e75 (|u| > 3e37): the caller then scores the
   row term by term (fastgen_t_add, whose log1p_sq takes any u). */
static inline uint64_t fastgen_t_mul4(double *__restrict mant, double *__restrict expo,
                                      const double *const *loc, const double *const *scale,
                                      const double *x, Py_ssize_t n) {
    const double *__restrict l0 = loc[0], *__restrict l1 = loc[1];
    const double *__restrict l2 = loc[2], *__restrict l3 = loc[3];
    const double *__restrict s0 = scale[0], *__restrict s1 = scale[1];
    const double *__restrict s2 = scale[2], *__restrict s3 = scale[3];
    const double x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    uint64_t big = 0;
    for (Py_ssize_t c = 0; c < n; c++) {
        const double u0 = s0[c] * (x0 - l0[c]), u1 = s1[c] * (x1 - l1[c]);
        const double u2 = s2[c] * (x2 - l2[c]), u3 = s3[c] * (x3 - l3[c]);
        const double y0 = 1.0 + u0 * u0, y1 = 1.0 + u1 * u1;
        const double y2 = 1.0 + u2 * u2, y3 = 1.0 + u3 * u3;
        big |= (fastgen_bits(y0) > FASTGEN_BIG_Y_BITS) | (fastgen_bits(y1) > FASTGEN_BIG_Y_BITS)
             | (fastgen_bits(y2) > FASTGEN_BIG_Y_BITS) | (fastgen_bits(y3) > FASTGEN_BIG_Y_BITS);
        const uint64_t pb = fastgen_bits(mant[c] * ((y0 * y1) * (y2 * y3)));
        mant[c] = fastgen_mantissa(pb);
        expo[c] += fastgen_exponent(pb);
    }
    return big;
}
/* One feature of the same. */
static inline uint64_t fastgen_t_mul(double *__restrict mant, double *__restrict expo,
                                     const double *__restrict loc,
                                     const double *__restrict scale, double x, Py_ssize_t n) {
    uint64_t big = 0;
    for (Py_ssize_t c = 0; c < n; c++) {
        const double u = scale[c] * (x - loc[c]);
        const double y = 1.0 + u * u;
        big |= fastgen_bits(y) > FASTGEN_BIG_Y_BITS;
        const uint64_t pb = fastgen_bits(mant[c] * y);
        mant[c] = fastgen_mantissa(pb);
        expo[c] += fastgen_exponent(pb);
    }
    return big;
}
/* acc[c] += power[c] log(mant[c] 2^expo[c]). */
static inline void fastgen_t_finish(double *__restrict acc, const double *__restrict mant,
                                    const double *__restrict expo,
                                    const double *__restrict power, Py_ssize_t n) {
    for (Py_ssize_t c = 0; c < n; c++)
        acc[c] += power[c] * (expo[c] * 6.93147180369123816490e-01  /* ln 2 in two parts */
                              + (expo[c] * 1.90821492927058770002e-10 + fastgen_log_ge1(mant[c])));
}

#endif
