/* Part of the listing helpers (_listing.pxd). */
#ifndef FASTGEN_LISTING_H
#define FASTGEN_LISTING_H

#include <stdint.h>

/* Bit q set where row[q] != 0, for q in 0:64 (NaN counts as nonzero, as in C). SSE2 on x86-64,
   where it is always there: two compares and a MOVMSKPD per two entries, four times cheaper than
   testing the entries one by one. */
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
static inline uint64_t fastgen_nonzero_bits64(const double *row) {
    const __m128d zero = _mm_setzero_pd();
    uint64_t bits = 0;
    for (int q = 0; q < 64; q += 8) {
        unsigned m = (unsigned)_mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(row + q), zero))
            | (unsigned)_mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(row + q + 2), zero)) << 2
            | (unsigned)_mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(row + q + 4), zero)) << 4
            | (unsigned)_mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(row + q + 6), zero)) << 6;
        bits |= (uint64_t)m << q;
    }
    return bits;
}
#else
static inline uint64_t fastgen_nonzero_bits64(const double *row) {
    uint64_t bits = 0;
    for (int q = 0; q < 64; q++) bits |= (uint64_t)(row[q] != 0) << q;
    return bits;
}
#endif

#endif
