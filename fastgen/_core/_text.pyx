# distutils: language = c++
# Design: documents to CSR entries (token counts, hashed or looked up in a vocabulary).
#  a) The caller (fastgen/text.py) hands over a list of str it owns for the call: bytes already
#     decoded, types checked, and every non-ASCII document that must be lowercased already passed
#     through ``str.lower`` (the exact mapping, final sigma and length-changing cases included).
#     ASCII documents are lowercased here, byte by byte, while they are tokenised.
#  b) The strings' internal buffers (1, 2 or 4 bytes per code point) are read without the GIL.
#     A token is a maximal run of two or more word characters: exactly the matches of
#     ``(?u)\b\w\w+\b`` under Python's ``re``, whose ``\w`` is ``str.isalnum() or "_"``.
#  c) Tokens are written as UTF-8 into a per-thread buffer, separated by one space, so an n-gram
#     is one contiguous slice ("new york" is the bytes scikit-learn joins with " "). Stop words are
#     dropped before n-grams are formed, as scikit-learn does.
#  d) Each n-gram is hashed with MurmurHash3_x86_32 (seed 0) of its UTF-8 bytes: the column of
#     HashingVectorizer (scikit-learn's sign and modulus conventions), and the hash of the
#     vocabulary table of CountVectorizer.
#  e) Every row comes out with sorted columns and summed duplicates (scikit-learn's canonical CSR;
#     a hashed column whose signs cancel keeps its explicit zero, as scipy's sum_duplicates does).
#     Hashed columns, and the ids of a fixed vocabulary (sorted terms), are spread evenly, so they
#     are bucket-sorted and run-length counted; the ids of a growing vocabulary are counted in a
#     small hash table and the distinct ones sorted.
#  f) Threads take contiguous ranges of documents (balanced by length) and write their own output
#     vectors; ranges are concatenated in order, so the result does not depend on n_threads.
#     While a vocabulary is being learned the shared table is read-only; tokens it lacks go to a
#     per-thread table and are merged into the shared one in document order after the parallel
#     part, so column ids are in order of first appearance, as scikit-learn's are.
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cython.parallel cimport prange
from libc.math cimport fabs, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libcpp.vector cimport vector

import numpy as np

from cython cimport floating

from ._typedefs cimport data_t, fastgen_prefetch, float32_t, float64_t, index_t

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    bint PyUnicode_IS_ASCII(object)
    bint Py_UNICODE_ISALNUM(Py_UCS4) noexcept nogil
    object PyUnicode_DecodeUTF8(const char *, Py_ssize_t, const char *)

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    #include <algorithm>
    #include <numeric>
    #include <utility>
    #include <vector>

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

    /* Python's \\w for ASCII: letters, digits and the underscore. */
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
        /* Append a term known to be absent; its id. */
        int64_t add(const uint8_t *s, Py_ssize_t n, uint32_t h) {
            if (2 * (hash.size() + 1) > slots.size()) {
                std::vector<fg_slot> old(2 * slots.size(), fg_slot{0, 0});
                old.swap(slots);
                for (size_t i = 0; i < old.size(); i++)
                    if (old[i].key) place(old[i]);
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
        /* Ids in the order of their bytes: UTF-8 byte order is code point order, Python's str order. */
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
        std::vector<uint8_t> buf;
        std::vector<int64_t> start, end;
        std::vector<uint32_t> keys, hashes, used, tmp, bucket;
        std::vector<uint64_t> slots, packed;
        std::vector<int64_t> key_out, count_out, row_nnz;
        fg_table local;
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
    static void fg_emit_sorted(fg_worker *w, uint64_t bound, int is_signed) {
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
    }

    /* A document's keys (vocabulary ids while it grows: not uniform) counted in a small hash
       table of (key << 32 | count), then the occupied slots sorted, which orders them by id:
       entries appended to key_out/count_out in column order, and the row length to row_nnz. */
    static void fg_emit_counts(fg_worker *w) {
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
    }

    /* Keep the token out[begin:pos] unless it is a stop word (then drop it and the space before
       it); the new write position. */
    static inline Py_ssize_t fg_token_done(fg_worker *w, uint8_t *out, Py_ssize_t begin, Py_ssize_t pos,
                                           const fg_table *stop) {
        if (stop != NULL && stop->find(out + begin, pos - begin,
                                       fg_murmur3_32_padded(out + begin, pos - begin)) >= 0)
            return w->start.empty() ? 0 : begin - 1;
        w->start.push_back(begin);
        w->end.push_back(pos);
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

    static inline int fg_ctz64(uint64_t x) {
    #if defined(__GNUC__) || defined(__clang__)
        return __builtin_ctzll(x);
    #else
        int k = 0; while (!(x & 1)) { x >>= 1; k++; } return k;
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
        if ((Py_ssize_t)w->buf.size() < n + 16) w->buf.resize(n + 16);
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
                const int ks = starts ? fg_ctz64(starts) : 64, ke = ends ? fg_ctz64(ends) : 64;
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
    static void fg_sort_rows(int64_t *keys, int64_t *counts, const int64_t *row_nnz, Py_ssize_t n_rows) {
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
    }
    """
    uint32_t fg_murmur3_32(const uint8_t *data, Py_ssize_t length, uint32_t seed) noexcept nogil
    uint32_t fg_murmur3_32_padded(const uint8_t *data, Py_ssize_t length) noexcept nogil
    const uint8_t fg_ascii_word[128]
    void fg_init_ascii_map() noexcept nogil

    cdef cppclass fg_table:
        vector[uint32_t] hash
        Py_ssize_t size() noexcept nogil
        const uint8_t *term(Py_ssize_t) noexcept nogil
        Py_ssize_t term_len(Py_ssize_t) noexcept nogil
        int64_t find(const uint8_t *, Py_ssize_t, uint32_t) noexcept nogil
        int64_t add(const uint8_t *, Py_ssize_t, uint32_t) noexcept nogil
        int64_t find_or_add(const uint8_t *, Py_ssize_t, uint32_t) noexcept nogil
        void prefetch(uint32_t) noexcept nogil
        void sorted_ids(int64_t *) noexcept nogil

    cdef cppclass fg_worker:
        vector[uint8_t] buf
        vector[int64_t] start, end, key_out, count_out, row_nnz
        vector[uint32_t] keys, hashes
        fg_table local

    void fg_emit_counts(fg_worker *) noexcept nogil
    void fg_emit_sorted(fg_worker *, uint64_t, bint) noexcept nogil
    Py_ssize_t fg_token_done(fg_worker *, uint8_t *, Py_ssize_t, Py_ssize_t, fg_table *) noexcept nogil
    void fg_tokenize_ascii(fg_worker *, const uint8_t *, Py_ssize_t, bint, fg_table *) noexcept nogil
    void fg_sort_rows(int64_t *, int64_t *, const int64_t *, Py_ssize_t) noexcept nogil

# What a document's n-grams become (the `mode` argument).
cdef enum:
    HASH = 0      # a hashed column and sign
    LOOKUP = 1    # an id in a fixed vocabulary; unknown n-grams are dropped
    GROW = 2      # an id in a vocabulary that learns unknown n-grams
MODES = {"hash": HASH, "lookup": LOOKUP, "grow": GROW}
# Keys of n-grams found only in a thread's own table while growing (remapped after the merge);
# vocabulary ids stay below it, so every key fits in 32 bits.
cdef int64_t LOCAL = (<int64_t>1) << 31
MAX_TERMS = LOCAL - 1

ctypedef fused ucs_t:
    uint8_t
    uint16_t
    uint32_t


cdef class Vocabulary:
    """A table of terms (UTF-8 bytes) with ids 0..n-1; the vocabulary and stop words of the
    vectorisers. Terms are added by the kernels or from Python bytes."""

    cdef fg_table table

    def __len__(self):
        return self.table.size()

    @staticmethod
    def from_terms(list terms):
        """A Vocabulary whose term ``terms[i]`` (bytes, distinct) has id i."""
        cdef Vocabulary v = Vocabulary()
        cdef bytes t
        cdef const uint8_t *s
        cdef Py_ssize_t n
        for t in terms:
            s = <const uint8_t *>PyBytes_AS_STRING(t)
            n = PyBytes_GET_SIZE(t)
            v.table.find_or_add(s, n, fg_murmur3_32(s, n, 0))
        return v

    def terms(self):
        """The terms as str, in id order."""
        cdef Py_ssize_t i
        return [PyUnicode_DecodeUTF8(<const char *>self.table.term(i), self.table.term_len(i),
                                     "surrogatepass") for i in range(self.table.size())]

    def sorted_ids(self):
        """Ids in the order of their terms under Python's str ordering."""
        out = np.empty(self.table.size(), dtype=np.int64)
        cdef int64_t[::1] o = out
        if o.shape[0]:
            self.table.sorted_ids(&o[0])
        return out

    def subset(self, const int64_t[::1] ids not None):
        """A new Vocabulary whose id k is this one's term ``ids[k]`` (ids distinct and valid)."""
        cdef Vocabulary v = Vocabulary()
        cdef Py_ssize_t k
        cdef int64_t i
        for k in range(ids.shape[0]):
            i = ids[k]
            v.table.add(self.table.term(i), self.table.term_len(i), self.table.hash[i])
        return v


def murmurhash3_32(bytes key, uint32_t seed=0):
    """MurmurHash3_x86_32 of ``key`` as a signed 32-bit int (as ``sklearn.utils.murmurhash3_32``)."""
    return <int32_t>fg_murmur3_32(<const uint8_t *>PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key), seed)


cdef inline Py_ssize_t _put_utf8(uint8_t *out, uint32_t c) noexcept nogil:
    if c < 0x80:
        out[0] = <uint8_t>c
        return 1
    if c < 0x800:
        out[0] = <uint8_t>(0xC0 | (c >> 6))
        out[1] = <uint8_t>(0x80 | (c & 0x3F))
        return 2
    if c < 0x10000:
        out[0] = <uint8_t>(0xE0 | (c >> 12))
        out[1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
        out[2] = <uint8_t>(0x80 | (c & 0x3F))
        return 3
    out[0] = <uint8_t>(0xF0 | (c >> 18))
    out[1] = <uint8_t>(0x80 | ((c >> 12) & 0x3F))
    out[2] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
    out[3] = <uint8_t>(0x80 | (c & 0x3F))
    return 4


cdef inline bint _is_word(uint32_t c) noexcept nogil:
    if c < 128:
        return fg_ascii_word[c]
    return Py_UNICODE_ISALNUM(c)


fg_init_ascii_map()


cdef void _tokenize(fg_worker *w, const ucs_t *s, Py_ssize_t n, fg_table *stop) noexcept nogil:
    """The document's tokens, stop words removed, into w.buf / w.start / w.end (tokens as UTF-8,
    one space apart). The document is already lowercased if it should be."""
    cdef Py_ssize_t width = 2 if ucs_t is uint8_t else (3 if ucs_t is uint16_t else 4)
    cdef Py_ssize_t need = n * width + n // 2 + 16
    cdef Py_ssize_t i = 0, j, pos = 0, begin
    cdef uint8_t *out
    w.start.clear()
    w.end.clear()
    if <Py_ssize_t>w.buf.size() < need:
        w.buf.resize(need)
    out = w.buf.data()
    while i < n:
        if not _is_word(s[i]):
            i += 1
            continue
        j = i + 1
        while j < n and _is_word(s[j]):
            j += 1
        if j - i >= 2:
            if w.start.size():
                out[pos] = 32  # one space between tokens: an n-gram is a contiguous slice
                pos += 1
            begin = pos
            while i < j:
                pos += _put_utf8(out + pos, s[i])
                i += 1
            pos = fg_token_done(w, out, begin, pos, stop)
        i = j


cdef void _count_doc(fg_worker *w, const uint8_t *buf, int min_n, int max_n, int mode,
                     fg_table *vocab, int64_t n_features, bint alternate_sign) noexcept nogil:
    """Key every n-gram of the tokens w.start/w.end (slices of buf), then append the document's
    sorted, counted entries to w.key_out / w.count_out and its entry count to w.row_nnz."""
    cdef Py_ssize_t nt = w.start.size(), t, k = 0, m = 0
    cdef int n
    cdef int64_t a, b, key, col, id_
    cdef uint32_t h
    cdef int32_t hs
    for n in range(min_n, max_n + 1):
        m += max(nt - n + 1, 0)
    w.keys.resize(m)  # written by index: push_back is not inlined
    if mode != HASH:
        w.hashes.resize(m)
    m = 0
    for n in range(min_n, max_n + 1):
        for t in range(nt - n + 1):
            a = w.start[t]
            b = w.end[t + n - 1]
            h = fg_murmur3_32_padded(buf + a, b - a)
            if mode == HASH:
                hs = <int32_t>h
                if hs == -2147483648:  # abs(-2**31) overflows: scikit-learn's special case
                    col = (2147483647 - (n_features - 1)) % n_features
                elif n_features & (n_features - 1) == 0:
                    col = (-hs if hs < 0 else hs) & (n_features - 1)
                else:
                    col = <uint32_t>(-hs if hs < 0 else hs) % <uint32_t>n_features
                w.keys[m] = 2 * col + (1 if alternate_sign and hs < 0 else 0)
                m += 1
            else:  # looked up in a second pass, once the table slots are on their way to cache
                w.hashes[k] = h
                k += 1
                vocab.prefetch(h)
    if mode != HASH:
        k = 0
        for n in range(min_n, max_n + 1):
            for t in range(nt - n + 1):
                a = w.start[t]
                b = w.end[t + n - 1]
                h = w.hashes[k]
                k += 1
                id_ = vocab.find(buf + a, b - a, h)
                if id_ >= 0:
                    key = id_
                elif mode == GROW:
                    key = LOCAL + w.local.find_or_add(buf + a, b - a, h)
                else:
                    continue
                w.keys[m] = key
                m += 1
    w.keys.resize(m)
    if mode == HASH:
        fg_emit_sorted(w, 2 * n_features, True)
    elif mode == LOOKUP:
        fg_emit_sorted(w, max(vocab.size(), 1), False)
    else:
        fg_emit_counts(w)


cdef void _tokenize_count(fg_worker *w, const void *data, int kind, bint ascii, Py_ssize_t n,
                          bint lowercase,
                          fg_table *stop, int min_n, int max_n, int mode, fg_table *vocab,
                          int64_t n_features, bint alternate_sign) noexcept nogil:
    if ascii:
        fg_tokenize_ascii(w, <const uint8_t *>data, n, lowercase, stop)
    elif kind == 1:
        _tokenize(w, <const uint8_t *>data, n, stop)
    elif kind == 2:
        _tokenize(w, <const uint16_t *>data, n, stop)
    else:
        _tokenize(w, <const uint32_t *>data, n, stop)
    _count_doc(w, w.buf.data(), min_n, max_n, mode, vocab, n_features, alternate_sign)


cdef vector[Py_ssize_t] _chunks(const vector[int64_t] &sizes, int n_threads) noexcept nogil:
    """Boundaries of up to n_threads non-empty contiguous ranges of documents with similar total
    size (each document counts 64 more, for its fixed costs); [0] when there are none."""
    cdef Py_ssize_t n = sizes.size(), i, cut = 1
    cdef Py_ssize_t n_chunks = max(1, min(<Py_ssize_t>n_threads, n))
    cdef int64_t total = 0, running = 0
    cdef vector[Py_ssize_t] bounds
    for i in range(n):
        total += sizes[i] + 64
    bounds.push_back(0)
    for i in range(n):
        running += sizes[i] + 64
        if cut < n_chunks and running * n_chunks >= total * cut:
            bounds.push_back(i + 1)
            cut += 1
    if n and bounds.back() != n:
        bounds.push_back(n)
    return bounds


cdef void _reserve(fg_worker *w, const vector[int64_t] &sizes, Py_ssize_t begin, Py_ssize_t end,
                   int n_lengths) noexcept nogil:
    """Reserve the output of documents begin:end: about one distinct n-gram per eight bytes of
    text per n-gram length (growing past it is correct, only slower)."""
    cdef int64_t total = 0
    cdef Py_ssize_t i
    for i in range(begin, end):
        total += sizes[i]
    w.key_out.reserve(total // 8 * n_lengths)
    w.count_out.reserve(total // 8 * n_lengths)
    w.row_nnz.reserve(end - begin)


cdef void _gather(vector[fg_worker] &workers, int32_t[::1] keys, data_t[::1] counts,
                  int64_t[::1] indptr) noexcept nogil:
    """Concatenate the workers' entries: columns, counts (cast to the output type) and row ends."""
    cdef Py_ssize_t t, i, k, pos = 0, row = 0
    cdef fg_worker *w
    indptr[0] = 0
    for t in range(<Py_ssize_t>workers.size()):
        w = &workers[t]
        for k in range(<Py_ssize_t>w.key_out.size()):
            keys[pos + k] = <int32_t>w.key_out[k]
            counts[pos + k] = <data_t>w.count_out[k]
        for i in range(<Py_ssize_t>w.row_nnz.size()):
            indptr[row + 1] = indptr[row] + w.row_nnz[i]
            row += 1
        pos += w.key_out.size()


cdef _finish(vector[fg_worker] &workers, Py_ssize_t n_docs, int mode, Vocabulary vocab, dtype):
    """Merge the per-thread tables into ``vocab`` (GROW), then concatenate the workers' entries
    into (indptr, keys, counts) arrays: int64 row ends, int32 columns (every key is below 2**31)
    and counts of ``dtype`` when it is float32/64 or int32/64 (else int64, for the caller to
    cast)."""
    cdef Py_ssize_t t, i, k, n_workers = workers.size(), nnz = 0
    cdef vector[int64_t] remap
    cdef fg_worker *w
    with nogil:
        for t in range(n_workers):
            w = &workers[t]
            if mode == GROW and w.local.size():
                remap.resize(w.local.size())
                for i in range(w.local.size()):
                    remap[i] = vocab.table.find_or_add(w.local.term(i), w.local.term_len(i),
                                                       w.local.hash[i])
                for k in range(<Py_ssize_t>w.key_out.size()):
                    if w.key_out[k] >= LOCAL:
                        w.key_out[k] = remap[w.key_out[k] - LOCAL]
                fg_sort_rows(w.key_out.data(), w.count_out.data(), w.row_nnz.data(),
                             w.row_nnz.size())
            nnz += w.key_out.size()
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32, np.int64, np.int32):
        dtype = np.dtype(np.int64)
    indptr = np.empty(n_docs + 1, dtype=np.int64)
    keys = np.empty(nnz, dtype=np.int32)
    counts = np.empty(nnz, dtype=dtype)
    cdef int32_t[::1] key_view = keys
    cdef int64_t[::1] ip = indptr
    cdef float64_t[::1] c_f64
    cdef float32_t[::1] c_f32
    cdef int64_t[::1] c_i64
    cdef int32_t[::1] c_i32
    if dtype == np.float64:
        c_f64 = counts
        _gather(workers, key_view, c_f64, ip)
    elif dtype == np.float32:
        c_f32 = counts
        _gather(workers, key_view, c_f32, ip)
    elif dtype == np.int64:
        c_i64 = counts
        _gather(workers, key_view, c_i64, ip)
    else:
        c_i32 = counts
        _gather(workers, key_view, c_i32, ip)
    return indptr, keys, counts


def count_documents(
    list docs,                # IN str documents (see Design a), n_docs
    bint lowercase,           # lowercase ASCII documents while tokenising
    Vocabulary stop,          # IN stop words, or None
    int min_n, int max_n,     # n-gram range
    int mode,                 # HASH, LOOKUP or GROW
    Vocabulary vocab,         # IN (LOOKUP) / IN-OUT (GROW) vocabulary; None for HASH
    int64_t n_features,       # HASH: number of columns
    bint alternate_sign,      # HASH: signed counts
    dtype,                    # type of the counts returned
    int n_threads,
):
    """Tokenise and count a batch of documents: (indptr, keys, counts) as _finish returns them,
    keys being columns (HASH) or vocabulary ids (ids in first-appearance order while growing)."""
    cdef Py_ssize_t n_docs = len(docs), i, t
    cdef vector[void *] data
    cdef vector[int] kind
    cdef vector[Py_ssize_t] length
    cdef vector[char] ascii
    cdef vector[int64_t] sizes
    data.resize(n_docs)
    kind.resize(n_docs)
    length.resize(n_docs)
    ascii.resize(n_docs)
    sizes.resize(n_docs)
    for i in range(n_docs):
        doc = docs[i]
        data[i] = PyUnicode_DATA(doc)
        kind[i] = PyUnicode_KIND(doc)
        length[i] = PyUnicode_GET_LENGTH(doc)
        ascii[i] = PyUnicode_IS_ASCII(doc)
        sizes[i] = length[i] * kind[i]
    cdef vector[Py_ssize_t] bounds = _chunks(sizes, n_threads)
    cdef Py_ssize_t n_chunks = bounds.size() - 1
    cdef vector[fg_worker] workers
    workers.resize(n_chunks)
    cdef fg_table *stop_table = &stop.table if stop is not None and len(stop) else NULL
    cdef fg_table *vocab_table = &vocab.table if vocab is not None else NULL
    for t in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_chunks):
        _reserve(&workers[t], sizes, bounds[t], bounds[t + 1], max_n - min_n + 1)
        for i in range(bounds[t], bounds[t + 1]):
            _tokenize_count(&workers[t], data[i], kind[i], ascii[i], length[i], lowercase, stop_table,
                            min_n, max_n, mode, vocab_table, n_features, alternate_sign)
    return _finish(workers, n_docs, mode, vocab, dtype)


def count_tokens(
    const uint8_t[::1] blob not None,       # IN the UTF-8 bytes of all tokens, concatenated
    const int64_t[::1] token_ptr not None,  # IN (n_tokens + 1,) token k is blob[token_ptr[k]:token_ptr[k+1]]
    const int64_t[::1] doc_ptr not None,    # IN (n_docs + 1,) document d has tokens doc_ptr[d]:doc_ptr[d+1]
    int mode,
    Vocabulary vocab,
    int64_t n_features,
    bint alternate_sign,
    dtype,
    int n_threads,
):
    """count_documents for documents already analysed into features (the exact Python path for
    analyzers the tokeniser does not implement): each token is one feature."""
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1, t, i, k
    cdef vector[int64_t] sizes
    for i in range(n_docs):
        sizes.push_back(doc_ptr[i + 1] - doc_ptr[i])
    cdef vector[Py_ssize_t] bounds = _chunks(sizes, n_threads)
    cdef Py_ssize_t n_chunks = bounds.size() - 1
    cdef vector[fg_worker] workers
    workers.resize(n_chunks)
    cdef fg_table *vocab_table = &vocab.table if vocab is not None else NULL
    # the hash reads up to 16 bytes past a feature: a zero-padded copy makes that safe
    padded = np.zeros(blob.shape[0] + 16, dtype=np.uint8)
    padded[:blob.shape[0]] = blob
    cdef const uint8_t[::1] padded_view = padded
    cdef const uint8_t *base = &padded_view[0]
    cdef fg_worker *w
    for t in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_chunks):
        w = &workers[t]
        for i in range(bounds[t], bounds[t + 1]):
            w.start.clear()
            w.end.clear()
            for k in range(doc_ptr[i], doc_ptr[i + 1]):
                w.start.push_back(token_ptr[k])
                w.end.push_back(token_ptr[k + 1])
            _count_doc(w, base, 1, 1, mode, vocab_table, n_features, alternate_sign)
    return _finish(workers, n_docs, mode, vocab, dtype)


def csr_normalize_rows(
    floating[::1] X_data not None,      # IN-OUT
    const index_t[::1] X_indptr not None,
    bint l1,                            # l1 (True) or l2 (False) norm
    int n_threads,
):
    """Divide each row by its l1 or l2 norm in place, with scikit-learn's arithmetic (a float64
    sum of the values' products; rows of norm zero are left alone)."""
    cdef Py_ssize_t n_rows = X_indptr.shape[0] - 1, i
    cdef index_t j
    cdef double s
    for i in prange(n_rows, nogil=True, schedule="static", num_threads=n_threads):
        s = 0.0
        for j in range(X_indptr[i], X_indptr[i + 1]):
            if l1:
                s = s + fabs(X_data[j])
            else:
                s = s + X_data[j] * X_data[j]
        if s != 0.0:
            if not l1:
                s = sqrt(s)
            for j in range(X_indptr[i], X_indptr[i + 1]):
                X_data[j] = X_data[j] / s
