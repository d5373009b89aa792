/* The C++ core of fastgen/_core/_text.pyx: MurmurHash3, the term table, the per-thread worker
   state, the ASCII tokeniser and the sort-and-count steps (see the Design comment of _text.pyx).
   Declared there with `cdef extern from "_text.h"`; included once, by _text.pyx's module. */
#ifndef FASTGEN_TEXT_H
#define FASTGEN_TEXT_H

#include <Python.h>  /* Py_ssize_t */

#include "_typedefs.h"  /* fastgen_prefetch, fastgen_ctz64 */
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <algorithm>
#include <new>
#include <numeric>
#include <utility>
#include <vector>

/* What a kernel step reports (fastgen/text.py raises the matching Python error). Every C++
   allocation of the kernel path goes through a function that catches std::bad_alloc (and the
   std::length_error of an impossible size) and reports FG_NO_MEMORY instead: nothing throws
   through Cython code, nothing is "ignored", and a failed step leaves no partial output. */
enum { FG_OK = 0, FG_NO_MEMORY = 1, FG_TOO_MANY_NGRAMS = 2, FG_TOO_MANY_TERMS = 3, FG_BAD_INPUT = 4 };

template <class T> static inline int fg_resize(std::vector<T> &v, size_t n) {
    try { v.resize(n); return FG_OK; } catch (...) { return FG_NO_MEMORY; }
}
template <class T> static inline int fg_reserve(std::vector<T> &v, size_t n) {
    try { v.reserve(n); return FG_OK; } catch (...) { return FG_NO_MEMORY; }
}
/* Room for `more` elements past the size, growing the capacity geometrically as push_back
   does (reserving the exact size each time would copy the vector on every append). Throws. */
template <class T> static inline void fg_grow(std::vector<T> &v, size_t more) {
    if (v.capacity() - v.size() < more) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}
template <class T> static inline int fg_push_back(std::vector<T> &v, const T &x) {
    try { v.push_back(x); return FG_OK; } catch (...) { return FG_NO_MEMORY; }
}

static inline uint32_t fg_rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

/* MurmurHash3_x86_32 (Austin Appleby, public domain), the hash scikit-learn uses. */
static inline uint32_t fg_murmur3_32(const uint8_t *data, Py_ssize_t len, uint32_t seed) {
    const Py_ssize_t nblocks = len / 4;
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h1 = seed, k1;
    for (Py_ssize_t i = 0; i < nblocks; i++) {
        memcpy(&k1, data + 4 * i, 4);
        k1 *= c1; k1 = fg_rotl32(k1, 15); k1 *= c2;
        h1 ^= k1; h1 = fg_rotl32(h1, 13); h1 = h1 * 5 + 0xe6546b64u;
    }
    const uint8_t *tail = data + 4 * nblocks;
    k1 = 0;
    switch (len & 3) {
    case 3: k1 ^= (uint32_t)tail[2] << 16; /* fall through */
    case 2: k1 ^= (uint32_t)tail[1] << 8;  /* fall through */
    case 1: k1 ^= tail[0];
        k1 *= c1; k1 = fg_rotl32(k1, 15); k1 *= c2; h1 ^= k1;
    }
    h1 ^= (uint32_t)len;
    h1 ^= h1 >> 16; h1 *= 0x85ebca6bu; h1 ^= h1 >> 13; h1 *= 0xc2b2ae35u; h1 ^= h1 >> 16;
    return h1;
}

/* The same hash, seed 0, for a key followed by at least 16 readable bytes (the tokeniser's
   buffers): keys of up to 16 bytes are hashed without branches on their length, whose
   mispredictions cost more than the hash itself. Mixing a zero tail block changes nothing,
   and blocks past the key are computed and discarded. */
static inline uint32_t fg_murmur3_32_padded(const uint8_t *data, Py_ssize_t len) {
    if (len > 16) return fg_murmur3_32(data, len, 0);
    static const uint32_t tail_mask[4] = {0u, 0xFFu, 0xFFFFu, 0xFFFFFFu};
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    const Py_ssize_t nblocks = len / 4;
    uint32_t h1 = 0, k1;
    for (Py_ssize_t i = 0; i < 4; i++) {
        memcpy(&k1, data + 4 * i, 4);
        k1 *= c1; k1 = fg_rotl32(k1, 15); k1 *= c2;
        uint32_t h = h1 ^ k1;
        h = fg_rotl32(h, 13); h = h * 5 + 0xe6546b64u;
        h1 = i < nblocks ? h : h1;
    }
    memcpy(&k1, data + 4 * nblocks, 4);
    k1 &= tail_mask[len & 3];
    k1 *= c1; k1 = fg_rotl32(k1, 15); k1 *= c2; h1 ^= k1;
    h1 ^= (uint32_t)len;
    h1 ^= h1 >> 16; h1 *= 0x85ebca6bu; h1 ^= h1 >> 13; h1 *= 0xc2b2ae35u; h1 ^= h1 >> 16;
    return h1;
}

/* Python's \w for ASCII: letters, digits and the underscore. */
static const uint8_t fg_ascii_word[128] = {
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 1,1,1,1,1,1,1,1,1,1,0,0,0,0,0,0,
    0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,0,0,0,0,1,
    0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,0,0,0,0,0};

/* ASCII word characters mapped to themselves (lowercase=false) or to their lowercase; 0 for
   the other characters. */
static uint8_t fg_ascii_map[2][128];
static void fg_init_ascii_map(void) {
    for (int c = 0; c < 128; c++) {
        fg_ascii_map[0][c] = fg_ascii_word[c] ? (uint8_t)c : 0;
        fg_ascii_map[1][c] = fg_ascii_word[c] ? (uint8_t)((c >= 'A' && c <= 'Z') ? c + 32 : c) : 0;
    }
}

/* A term of up to 7 bytes, with its length, packed in 64 bits (longer terms share one marker
   and are compared with the stored bytes). */
static inline uint64_t fg_head(const uint8_t *s, Py_ssize_t n) {
    if (n > 7) return (uint64_t)0xFF << 56;
    uint64_t v = (uint64_t)n << 56;
    for (Py_ssize_t i = 0; i < n; i++) v |= (uint64_t)s[i] << (8 * i);
    return v;
}

/* Byte strings -> ids 0..n-1 in insertion order: open addressing, linear probing, load <= 1/2.
   A slot holds (hash << 32) | (id + 1), 0 when empty, and the term's head: a short term (most
   words) is matched in the slot itself, without reading the stored bytes. */
struct fg_slot { uint64_t key, head; };

struct fg_table {
    std::vector<uint8_t> arena;
    std::vector<int64_t> offset;
    std::vector<uint32_t> hash;
    std::vector<fg_slot> slots;
    fg_table() : offset(1, 0), slots(16, fg_slot{0, 0}) {}
    Py_ssize_t size() const { return (Py_ssize_t)hash.size(); }
    const uint8_t *term(Py_ssize_t id) const { return arena.data() + offset[id]; }
    Py_ssize_t term_len(Py_ssize_t id) const { return offset[id + 1] - offset[id]; }
    int64_t find(const uint8_t *s, Py_ssize_t n, uint32_t h) const {
        const size_t mask = slots.size() - 1;
        const uint64_t head = fg_head(s, n);
        for (size_t i = h & mask;; i = (i + 1) & mask) {
            const fg_slot &e = slots[i];
            if (e.key == 0) return -1;
            if ((uint32_t)(e.key >> 32) == h && e.head == head) {
                const int64_t id = (int64_t)(uint32_t)e.key - 1;
                if (n <= 7 || (term_len(id) == n && memcmp(term(id), s, n) == 0)) return id;
            }
        }
    }
    void place(const fg_slot &slot) {
        const size_t mask = slots.size() - 1;
        size_t i = (uint32_t)(slot.key >> 32) & mask;
        while (slots[i].key) i = (i + 1) & mask;
        slots[i] = slot;
    }
    /* Append a term known to be absent; its id, or FG_ADD_FAILED (out of memory, the table
       unchanged). Ids must stay below 2**32 - 1 (a slot stores id + 1 in 32 bits): the callers
       stop at 2**31 - 1 terms. */
    enum { FG_ADD_FAILED = -2 };
    int64_t add(const uint8_t *s, Py_ssize_t n, uint32_t h) {
        try {
            /* everything that can fail first, so that a failure changes nothing */
            fg_grow(arena, (size_t)n);
            fg_grow(offset, 1);
            fg_grow(hash, 1);
            if (2 * (hash.size() + 1) > slots.size()) {
                std::vector<fg_slot> old(2 * slots.size(), fg_slot{0, 0});
                old.swap(slots);
                for (size_t i = 0; i < old.size(); i++)
                    if (old[i].key) place(old[i]);
            }
        } catch (...) {
            return FG_ADD_FAILED;
        }
        const int64_t id = (int64_t)hash.size();
        arena.insert(arena.end(), s, s + n);
        offset.push_back((int64_t)arena.size());
        hash.push_back(h);
        place(fg_slot{((uint64_t)h << 32) | (uint64_t)(id + 1), fg_head(s, n)});
        return id;
    }
    /* Start loading the slot a lookup of hash h reads first. */
    void prefetch(uint32_t h) const { fastgen_prefetch(&slots[h & (slots.size() - 1)]); }
    int64_t find_or_add(const uint8_t *s, Py_ssize_t n, uint32_t h) {
        const int64_t id = find(s, n, h);
        return id >= 0 ? id : add(s, n, h);
    }
    /* Ids in the order of their bytes: UTF-8 byte order is code point order, Python's str order
       (std::sort of ids in place allocates nothing). */
    void sorted_ids(int64_t *out) const {
        std::iota(out, out + size(), (int64_t)0);
        std::sort(out, out + size(), [this](int64_t a, int64_t b) {
            const Py_ssize_t la = term_len(a), lb = term_len(b);
            const int c = memcmp(term(a), term(b), (size_t)std::min(la, lb));
            return c != 0 ? c < 0 : la < lb;
        });
    }
};

/* One thread's state: the current document's tokens and keys, and its output entries. */
struct fg_worker {
    int status = FG_OK;  /* FG_* of the first failure; the worker's output is then unusable */
    std::vector<uint8_t> buf;
    std::vector<int64_t> start, end;
    std::vector<uint32_t> keys, hashes, used, tmp, bucket;
    std::vector<uint64_t> slots, packed;
    std::vector<int64_t> key_out, count_out, row_nnz, ngram_offset;
    fg_table local;
    void fail(int why) { if (status == FG_OK) status = why; }
};

/* Sort keys spread uniformly over [0, bound) (hashed columns): a stable scatter into about one
   bucket per key by the key's leading part, then an insertion sort that only has to order
   keys within buckets. Keys crafted to collide cannot make it quadratic: past a budget of
   moves it hands over to std::sort. */
static void fg_sort_uniform(std::vector<uint32_t> &keys, uint64_t bound,
                            std::vector<uint32_t> &tmp, std::vector<uint32_t> &bucket) {
    const size_t m = keys.size();
    if (m < 2) return;
    size_t nb = 16;
    while (nb < m) nb <<= 1;
    const uint64_t scale = ((uint64_t)nb << 32) / bound;  /* key * scale >> 32 < nb, monotone */
    bucket.assign(nb + 1, 0);
    for (size_t k = 0; k < m; k++) bucket[(((uint64_t)keys[k] * scale) >> 32) + 1]++;
    for (size_t b = 0; b < nb; b++) bucket[b + 1] += bucket[b];
    tmp.resize(m);
    for (size_t k = 0; k < m; k++) tmp[bucket[((uint64_t)keys[k] * scale) >> 32]++] = keys[k];
    const size_t budget = 8 * m + 64;
    size_t moves = 0;
    for (size_t i = 1; i < m; i++) {
        const uint32_t x = tmp[i];
        size_t j = i;
        while (j > 0 && tmp[j - 1] > x) { tmp[j] = tmp[j - 1]; j--; }
        tmp[j] = x;
        moves += i - j;
        if (moves > budget) { std::sort(tmp.begin(), tmp.end()); break; }
    }
    keys.swap(tmp);
}

/* A document's keys below `bound`, sorted and run-length counted: entries appended to
   key_out/count_out in column order and the row length to row_nnz. Signed keys are
   2 * column + (sign is negative) and a column's value is its positive minus its negative
   count; other keys are columns. */
static void fg_emit_sorted(fg_worker *w, uint64_t bound, int is_signed) try {
    fg_sort_uniform(w->keys, bound, w->tmp, w->bucket);
    const size_t m = w->keys.size();
    const int shift = is_signed ? 1 : 0;
    int64_t nnz = 0;
    for (size_t k = 0; k < m;) {
        const uint32_t col = w->keys[k] >> shift;
        int64_t value = 0;
        for (; k < m && (w->keys[k] >> shift) == col; k++)
            value += (is_signed && (w->keys[k] & 1)) ? -1 : 1;
        w->key_out.push_back(col);
        w->count_out.push_back(value);
        nnz++;
    }
    w->row_nnz.push_back(nnz);
} catch (...) {
    w->fail(FG_NO_MEMORY);
}

/* A document's keys (vocabulary ids while it grows: not uniform) counted in a small hash
   table of (key << 32 | count), then the occupied slots sorted, which orders them by id:
   entries appended to key_out/count_out in column order, and the row length to row_nnz. */
static void fg_emit_counts(fg_worker *w) try {
    const size_t m = w->keys.size();
    int64_t nnz = 0;
    if (m) {
        size_t cap = 16;
        int bits = 4;
        while (cap < 2 * m) { cap <<= 1; bits++; }
        const size_t mask = cap - 1;
        const uint64_t EMPTY = ~(uint64_t)0;
        std::vector<uint64_t> &slot = w->slots;
        std::vector<uint32_t> &used = w->used;
        slot.assign(cap, EMPTY);
        used.clear();
        for (size_t k = 0; k < m; k++) {
            const uint32_t key = w->keys[k];
            size_t i = (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
            while (slot[i] != EMPTY && (uint32_t)(slot[i] >> 32) != key) i = (i + 1) & mask;
            if (slot[i] == EMPTY) {
                slot[i] = ((uint64_t)key << 32) | 1u;
                used.push_back((uint32_t)i);
            } else {
                slot[i]++;
            }
        }
        const size_t nd = used.size();
        std::vector<uint64_t> &packed = w->packed;
        packed.resize(nd);
        for (size_t d = 0; d < nd; d++) packed[d] = slot[used[d]];
        std::sort(packed.begin(), packed.end());
        for (size_t d = 0; d < nd; d++) {
            w->key_out.push_back((int64_t)(packed[d] >> 32));
            w->count_out.push_back((int64_t)(uint32_t)packed[d]);
        }
        nnz = (int64_t)nd;
    }
    w->row_nnz.push_back(nnz);
} catch (...) {
    w->fail(FG_NO_MEMORY);
}

/* Keep the token out[begin:pos] unless it is a stop word (then drop it and the space before
   it); the new write position. */
static inline Py_ssize_t fg_token_done(fg_worker *w, uint8_t *out, Py_ssize_t begin, Py_ssize_t pos,
                                       const fg_table *stop) {
    if (stop != NULL && stop->find(out + begin, pos - begin,
                                   fg_murmur3_32_padded(out + begin, pos - begin)) >= 0)
        return w->start.empty() ? 0 : begin - 1;
    try {
        w->start.push_back(begin);
        w->end.push_back(pos);
    } catch (...) {  /* the token is dropped; the worker's output is discarded */
        if (w->end.size() < w->start.size()) w->start.pop_back();
        w->fail(FG_NO_MEMORY);
        return w->start.empty() ? 0 : begin - 1;
    }
    return pos;
}

/* Bit k set when s[k] (ASCII) is a word character, for the 64 bytes at s. */
static inline uint64_t fg_word_mask64(const uint8_t *s) {
#if defined(__SSE2__)
    uint64_t m = 0;
    const __m128i bias = _mm_set1_epi8((char)0x80);
    for (int b = 0; b < 4; b++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(s + 16 * b));
        const __m128i d = _mm_xor_si128(_mm_sub_epi8(v, _mm_set1_epi8('0')), bias);
        const __m128i l = _mm_xor_si128(
            _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a')), bias);
        const __m128i w = _mm_or_si128(
            _mm_or_si128(_mm_cmplt_epi8(d, _mm_set1_epi8((char)(0x80 + 10))),
                         _mm_cmplt_epi8(l, _mm_set1_epi8((char)(0x80 + 26)))),
            _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
        m |= (uint64_t)(uint32_t)_mm_movemask_epi8(w) << (16 * b);
    }
    return m;
#else
    uint64_t m = 0;
    for (int k = 0; k < 64; k++) m |= (uint64_t)fg_ascii_word[s[k]] << k;
    return m;
#endif
}

/* The tokens of an ASCII document: word-character masks 64 bytes at a time, so the cost is per
   token rather than a branch per character. */
static void fg_tokenize_ascii(fg_worker *w, const uint8_t *s, Py_ssize_t n, int lower,
                              const fg_table *stop) {
    const uint8_t *map = fg_ascii_map[lower ? 1 : 0];
    uint8_t pad[64];
    w->start.clear();
    w->end.clear();
    if ((Py_ssize_t)w->buf.size() < n + 16 && fg_resize(w->buf, (size_t)n + 16) != FG_OK) {
        w->fail(FG_NO_MEMORY);
        return;
    }
    uint8_t *out = w->buf.data();
    Py_ssize_t pos = 0, tok = 0;
    uint64_t carry = 0;
    for (Py_ssize_t base = 0; base < n + 1; base += 64) {
        uint64_t m;
        if (base + 64 <= n) {
            m = fg_word_mask64(s + base);
        } else {  /* the last block, zero-padded: a zero byte is not a word character */
            memset(pad, 0, 64);
            if (n > base) memcpy(pad, s + base, (size_t)(n - base));
            m = fg_word_mask64(pad);
        }
        const uint64_t prev = (m << 1) | carry;
        uint64_t starts = m & ~prev, ends = ~m & prev;
        carry = m >> 63;
        while (starts | ends) {
            const int ks = starts ? fastgen_ctz64(starts) : 64, ke = ends ? fastgen_ctz64(ends) : 64;
            if (ks < ke) {
                tok = base + ks;
                starts &= starts - 1;
            } else {
                const Py_ssize_t stop_at = base + ke;
                ends &= ends - 1;
                if (stop_at - tok < 2) continue;
                if (!w->start.empty()) out[pos++] = ' ';
                const Py_ssize_t begin = pos;
#if defined(__SSE2__)
                if (stop_at - tok <= 16 && tok + 16 <= n) {  /* one 16-byte copy, lowercased */
                    __m128i v = _mm_loadu_si128((const __m128i *)(s + tok));
                    if (lower) {
                        const __m128i up = _mm_cmplt_epi8(
                            _mm_xor_si128(_mm_sub_epi8(v, _mm_set1_epi8('A')), _mm_set1_epi8((char)0x80)),
                            _mm_set1_epi8((char)(0x80 + 26)));
                        v = _mm_add_epi8(v, _mm_and_si128(up, _mm_set1_epi8(0x20)));
                    }
                    _mm_storeu_si128((__m128i *)(out + pos), v);
                    pos += stop_at - tok;
                } else
#endif
                for (Py_ssize_t i = tok; i < stop_at; i++) out[pos++] = map[s[i]];
                pos = fg_token_done(w, out, begin, pos, stop);
            }
        }
    }
}

/* Sort each row's (key, count) entries by key unless it is sorted already. */
static int fg_sort_rows(int64_t *keys, int64_t *counts, const int64_t *row_nnz, Py_ssize_t n_rows) try {
    std::vector<std::pair<int64_t, int64_t> > tmp;
    int64_t p = 0;
    for (Py_ssize_t r = 0; r < n_rows; p += row_nnz[r], r++) {
        const int64_t n = row_nnz[r];
        if (std::is_sorted(keys + p, keys + p + n)) continue;
        tmp.resize((size_t)n);
        for (int64_t k = 0; k < n; k++) tmp[k] = std::make_pair(keys[p + k], counts[p + k]);
        std::sort(tmp.begin(), tmp.end());
        for (int64_t k = 0; k < n; k++) { keys[p + k] = tmp[k].first; counts[p + k] = tmp[k].second; }
    }
    return FG_OK;
} catch (...) {
    return FG_NO_MEMORY;
}

/* MurmurHash3 (seed 0) of every n-gram of lengths min_n..max_n of the tokens [start[t], end[t])
   of buf, into hashes[ngram_offset[n - min_n] + t] (the n-gram of tokens t..t+n-1; the same
   layout as _count_doc's loops). The n-grams starting at one token are prefixes of one byte
   string, so each 4-byte block is mixed once for all of them: the cost is the bytes spanned
   per starting token, not the sum of the n-grams' lengths (cubic in the token count when
   ngram_range is wide). Callers ensure max_n <= the number of tokens. */
static void fg_hash_ngram_prefixes(const uint8_t *buf, const int64_t *start, const int64_t *end,
                                   Py_ssize_t nt, int min_n, int max_n,
                                   const int64_t *ngram_offset, uint32_t *hashes) {
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    static const uint32_t tail_mask[4] = {0u, 0xFFu, 0xFFFFu, 0xFFFFFFu};
    for (Py_ssize_t t = 0; t + min_n <= nt; t++) {
        const uint8_t *s = buf + start[t];
        uint32_t h1 = 0, k1;
        int64_t blocks = 0;
        const int top = (int)std::min<Py_ssize_t>(max_n, nt - t);
        for (int n = min_n; n <= top; n++) {
            const int64_t len = end[t + n - 1] - start[t];
            for (; blocks < len / 4; blocks++) {
                memcpy(&k1, s + 4 * blocks, 4);
                k1 *= c1; k1 = fg_rotl32(k1, 15); k1 *= c2;
                h1 ^= k1; h1 = fg_rotl32(h1, 13); h1 = h1 * 5 + 0xe6546b64u;
            }
            uint32_t h = h1;
            if (len & 3) {  /* the tail: buffers are padded, so 4 bytes can be read and masked */
                memcpy(&k1, s + 4 * blocks, 4);
                k1 &= tail_mask[len & 3];
                k1 *= c1; k1 = fg_rotl32(k1, 15); k1 *= c2; h ^= k1;
            }
            h ^= (uint32_t)len;
            h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
            hashes[ngram_offset[n - min_n] + t] = h;
        }
    }
}
#endif  /* FASTGEN_TEXT_H */
