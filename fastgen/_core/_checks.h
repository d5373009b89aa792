/* The scan of floating-point values behind _checks.values_status (_checks.pxi), in C++.

   One pass answers: bit 0 some NaN, bit 1 some +-inf, bit 2 some negative value, bit 3 some
   magnitude above bound. With GCC or Clang the values are read as vectors (vector extensions: one
   body for float and double, 256 bits wide in the AVX2 build of the module, _checks_avx2, 128 bits
   in the baseline build) that keep running minima and maxima, four vectors per step, and the
   extremes are judged once at the end; a NaN is kept apart (the minimum of a NaN and a number is
   the number). Elsewhere it is a scalar loop. */
#ifndef FASTGEN_CHECKS_H
#define FASTGEN_CHECKS_H

#include <math.h>
#include <string.h>

template <class T>
static inline int fastgen_value_flags(T v, T bound) {
    const bool finite = (v - v) == (v - v);
    return (v != v) | ((!finite && v == v) << 1) | ((v < 0) << 2)
           | ((finite && (v > bound || -v > bound)) << 3);
}

template <class T>
static int fastgen_scan_values(const T *x, Py_ssize_t n, double bound) {
    const T b = (T)bound;
    int flags = 0;
    Py_ssize_t k = 0;
#if defined(__GNUC__) || defined(__clang__)
#if defined(__AVX2__)
    typedef T V __attribute__((vector_size(32)));
#else
    typedef T V __attribute__((vector_size(16)));
#endif
    const Py_ssize_t lanes = sizeof(V) / sizeof(T);
    V lo0 = {}, lo1 = {}, lo2 = {}, lo3 = {}, hi0 = {}, hi1 = {}, hi2 = {}, hi3 = {};
    V nan0 = {}, nan1 = {};  /* NaN in the lanes that met one */
    for (; k + 4 * lanes <= n; k += 4 * lanes) {
        V a, b1, c, d;
        memcpy(&a, x + k, sizeof a);
        memcpy(&b1, x + k + lanes, sizeof b1);
        memcpy(&c, x + k + 2 * lanes, sizeof c);
        memcpy(&d, x + k + 3 * lanes, sizeof d);
        nan0 = a != a ? a : nan0;
        nan1 = b1 != b1 ? b1 : nan1;
        nan0 = c != c ? c : nan0;
        nan1 = d != d ? d : nan1;
        lo0 = a < lo0 ? a : lo0;
        lo1 = b1 < lo1 ? b1 : lo1;
        lo2 = c < lo2 ? c : lo2;
        lo3 = d < lo3 ? d : lo3;
        hi0 = a > hi0 ? a : hi0;
        hi1 = b1 > hi1 ? b1 : hi1;
        hi2 = c > hi2 ? c : hi2;
        hi3 = d > hi3 ? d : hi3;
    }
    lo0 = lo0 < lo1 ? lo0 : lo1;
    lo2 = lo2 < lo3 ? lo2 : lo3;
    lo0 = lo0 < lo2 ? lo0 : lo2;
    hi0 = hi0 > hi1 ? hi0 : hi1;
    hi2 = hi2 > hi3 ? hi2 : hi3;
    hi0 = hi0 > hi2 ? hi0 : hi2;
    nan0 = nan1 != nan1 ? nan1 : nan0;
    for (Py_ssize_t lane = 0; lane < lanes; lane++)  /* the extremes start at 0: no flag */
        flags |= fastgen_value_flags((T)lo0[lane], b) | fastgen_value_flags((T)hi0[lane], b)
                 | (nan0[lane] != nan0[lane]);
#endif
    for (; k < n; k++) flags |= fastgen_value_flags(x[k], b);
    return flags;
}

#endif
