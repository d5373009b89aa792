/* Platform helpers shared by the kernels (declared in _typedefs.pxd). */
#ifndef FASTGEN_TYPEDEFS_H
#define FASTGEN_TYPEDEFS_H

#include <stdint.h>

/* Software prefetch of data read soon, into every cache level (a no-op on compilers without the
   builtin). */
#if defined(__GNUC__) || defined(__clang__)
#define fastgen_prefetch(p) __builtin_prefetch((const void *)(p), 0, 3)
#else
#define fastgen_prefetch(p) ((void)0)
#endif

/* Index of the lowest set bit of a nonzero 64-bit word. */
#if defined(__GNUC__) || defined(__clang__)
static inline int fastgen_ctz64(uint64_t x) { return __builtin_ctzll(x); }
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
#include <intrin.h>
static __inline int fastgen_ctz64(uint64_t x) {
    unsigned long i;
    _BitScanForward64(&i, x);
    return (int)i;
}
#else
static inline int fastgen_ctz64(uint64_t x) {
    int i = 0;
    while (!(x & 1)) { x >>= 1; i++; }
    return i;
}
#endif

/* Whether this CPU can run the modules built with -mavx2 -mfma (fastgen/_core/__init__.py). */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
static inline int fastgen_cpu_has_avx2_fma(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
static inline int fastgen_cpu_has_avx2_fma(void) { return 0; }
#endif

#endif
