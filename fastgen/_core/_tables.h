/* Plain C for _tables.pyx (design note d): dst[0:n] = src[0:n] with non-temporal stores, which
   write whole cache lines to memory without reading them into the cache first, where the
   platform has them (SSE2, always there on x86-64); memcpy elsewhere. The stores become visible
   in order with later ones only after fastgen_stream_fence(). Included by the module Cython
   generates, after Python.h (Py_ssize_t). */
#ifndef FASTGEN_TABLES_H
#define FASTGEN_TABLES_H

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>

static inline void fastgen_stream_f64(double *dst, const double *src, Py_ssize_t n) {
    Py_ssize_t k = 0;
    for (; k < n && ((uintptr_t)(dst + k) & 15); k++) dst[k] = src[k];  /* to 16 bytes */
    for (; k + 2 <= n; k += 2) _mm_stream_pd(dst + k, _mm_loadu_pd(src + k));
    for (; k < n; k++) dst[k] = src[k];
}

static inline void fastgen_stream_f32(float *dst, const float *src, Py_ssize_t n) {
    Py_ssize_t k = 0;
    for (; k < n && ((uintptr_t)(dst + k) & 15); k++) dst[k] = src[k];  /* to 16 bytes */
    for (; k + 4 <= n; k += 4) _mm_stream_ps(dst + k, _mm_loadu_ps(src + k));
    for (; k < n; k++) dst[k] = src[k];
}

static inline void fastgen_stream_fence(void) { _mm_sfence(); }

#else

static inline void fastgen_stream_f64(double *dst, const double *src, Py_ssize_t n) {
    memcpy(dst, src, (size_t)n * sizeof(double));
}

static inline void fastgen_stream_f32(float *dst, const float *src, Py_ssize_t n) {
    memcpy(dst, src, (size_t)n * sizeof(float));
}

static inline void fastgen_stream_fence(void) {}

#endif

#endif  /* FASTGEN_TABLES_H */
