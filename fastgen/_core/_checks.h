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
    V lo[4] = {}, hi[4] = {}, nan[2] = {};  /* nan: NaN in the lanes that met one */
    for (; k + 4 * lanes <= n; k += 4 * lanes) {
        for (int u = 0; u < 4; u++) {  /* four independent chains: unrolled by the compiler */
            V a;
            memcpy(&a, x + k + u * lanes, sizeof a);
            nan[u & 1] = a != a ? a : nan[u & 1];
            lo[u] = a < lo[u] ? a : lo[u];
            hi[u] = a > hi[u] ? a : hi[u];
        }
    }
    for (int u = 1; u < 4; u++) {
        lo[0] = lo[u] < lo[0] ? lo[u] : lo[0];
        hi[0] = hi[u] > hi[0] ? hi[u] : hi[0];
    }
    nan[0] = nan[1] != nan[1] ? nan[1] : nan[0];
    for (Py_ssize_t lane = 0; lane < lanes; lane++)  /* the extremes start at 0: no flag */
        flags |= fastgen_value_flags((T)lo[0][lane], b) | fastgen_value_flags((T)hi[0][lane], b)
                 | (nan[0][lane] != nan[0][lane]);
#endif
    for (; k < n; k++) flags |= fastgen_value_flags(x[k], b);
    return flags;
}

#endif
