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
    const Py_ssize_t PY_SSIZE_T_MAX
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    bint PyUnicode_IS_ASCII(object)
    bint Py_UNICODE_ISALNUM(Py_UCS4) noexcept nogil
    object PyUnicode_DecodeUTF8(const char *, Py_ssize_t, const char *)

cdef extern from "_text.h":
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

    enum:
        FG_OK
        FG_NO_MEMORY
        FG_TOO_MANY_NGRAMS
        FG_TOO_MANY_TERMS
        FG_BAD_INPUT
    int fg_resize[T](vector[T] &, size_t) noexcept nogil
    int fg_reserve[T](vector[T] &, size_t) noexcept nogil
    int fg_push_back[T](vector[T] &, const T &) noexcept nogil

    cdef cppclass fg_worker:
        int status
        vector[uint8_t] buf
        vector[int64_t] start, end, key_out, count_out, row_nnz, ngram_offset
        vector[uint32_t] keys, hashes
        fg_table local
        void fail(int) noexcept nogil

    void fg_emit_counts(fg_worker *) noexcept nogil
    void fg_emit_sorted(fg_worker *, uint64_t, bint) noexcept nogil
    Py_ssize_t fg_token_done(fg_worker *, uint8_t *, Py_ssize_t, Py_ssize_t, fg_table *) noexcept nogil
    void fg_tokenize_ascii(fg_worker *, const uint8_t *, Py_ssize_t, bint, fg_table *) noexcept nogil
    int fg_sort_rows(int64_t *, int64_t *, const int64_t *, Py_ssize_t) noexcept nogil
    void fg_hash_ngram_prefixes(const uint8_t *, const int64_t *, const int64_t *, Py_ssize_t, int, int,
                                const int64_t *, uint32_t *) noexcept nogil

# What a document's n-grams become (the `mode` argument).
cdef enum:
    HASH = 0      # a hashed column and sign
    LOOKUP = 1    # an id in a fixed vocabulary; unknown n-grams are dropped
    GROW = 2      # an id in a vocabulary that learns unknown n-grams
MODES = {"hash": HASH, "lookup": LOOKUP, "grow": GROW}
# Keys of n-grams found only in a thread's own table while growing (remapped after the merge);
# vocabulary ids stay below it, so every key fits in 32 bits.
cdef int64_t LOCAL = (<int64_t>1) << 31
cdef int64_t MAX_TERMS_C = LOCAL - 1
MAX_TERMS = MAX_TERMS_C
# The most n-grams one document may have: w.keys holds 32-bit keys, fg_emit_counts 32-bit counts
# and slot numbers, and fastgen/text.py checks ngram_range against it up front.
cdef int64_t MAX_NGRAMS_C = LOCAL - 1
MAX_NGRAMS = MAX_NGRAMS_C
# Above this many n-gram lengths, n-grams are hashed as prefixes (fg_hash_ngram_prefixes).
cdef int PREFIX_HASHING_LENGTHS = 4

# The status of a kernel step (fastgen/text.py turns it into an exception).
OK = FG_OK
NO_MEMORY = FG_NO_MEMORY
TOO_MANY_NGRAMS = FG_TOO_MANY_NGRAMS
TOO_MANY_TERMS = FG_TOO_MANY_TERMS
BAD_INPUT = FG_BAD_INPUT

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
            if v.table.find_or_add(s, n, fg_murmur3_32(s, n, 0)) < 0:
                raise MemoryError("out of memory building a table of terms")
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
            if v.table.add(self.table.term(i), self.table.term_len(i), self.table.hash[i]) < 0:
                raise MemoryError("out of memory building a table of terms")
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
    cdef Py_ssize_t need
    cdef Py_ssize_t i = 0, j, pos = 0, begin
    cdef uint8_t *out
    w.start.clear()
    w.end.clear()
    if n > (PY_SSIZE_T_MAX - 16) // (width + 1):  # n * width + n // 2 + 16 would overflow
        w.fail(FG_NO_MEMORY)
        return
    need = n * width + n // 2 + 16
    if <Py_ssize_t>w.buf.size() < need and fg_resize(w.buf, <size_t>need) != FG_OK:
        w.fail(FG_NO_MEMORY)
        return
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


cdef inline uint32_t _hashed_key(uint32_t h, int64_t n_features, bint alternate_sign) noexcept nogil:
    """The HASH key of an n-gram of hash h: 2 * column + (sign is negative), scikit-learn's
    column and sign conventions."""
    cdef int32_t hs = <int32_t>h
    cdef int64_t col
    if hs == -2147483648:  # abs(-2**31) overflows: scikit-learn's special case
        col = (2147483647 - (n_features - 1)) % n_features
    elif n_features & (n_features - 1) == 0:
        col = (-hs if hs < 0 else hs) & (n_features - 1)
    else:
        col = <uint32_t>(-hs if hs < 0 else hs) % <uint32_t>n_features
    return <uint32_t>(2 * col + (1 if alternate_sign and hs < 0 else 0))


cdef void _count_doc(fg_worker *w, const uint8_t *buf, int min_n, int max_n, int mode,
                     fg_table *vocab, int64_t n_features, bint alternate_sign) noexcept nogil:
    """Key every n-gram of the tokens w.start/w.end (slices of buf, followed by 16 readable
    bytes), then append the document's sorted, counted entries to w.key_out / w.count_out and
    its entry count to w.row_nnz. Failures go to w.status."""
    cdef Py_ssize_t nt = w.start.size(), t, k = 0, m = 0
    cdef int n, top
    cdef int64_t a, b, key, id_
    cdef uint32_t h
    # n-grams longer than the document have no instance: they cost nothing
    top = <int>min(<Py_ssize_t>max_n, nt)
    for n in range(min_n, top + 1):
        m += nt - n + 1
        if m > MAX_NGRAMS_C:
            w.fail(FG_TOO_MANY_NGRAMS)
            return
    # written by index: push_back is not inlined
    if fg_resize(w.keys, <size_t>m) != FG_OK:
        w.fail(FG_NO_MEMORY)
        return
    if (mode != HASH or top - min_n >= PREFIX_HASHING_LENGTHS) and fg_resize(w.hashes, <size_t>m) != FG_OK:
        w.fail(FG_NO_MEMORY)
        return
    if top - min_n >= PREFIX_HASHING_LENGTHS:
        # many lengths: the n-grams from one token are prefixes of each other, hashed together
        if fg_resize(w.ngram_offset, <size_t>(top - min_n + 1)) != FG_OK:
            w.fail(FG_NO_MEMORY)
            return
        k = 0
        for n in range(min_n, top + 1):
            w.ngram_offset[n - min_n] = k
            k += nt - n + 1
        fg_hash_ngram_prefixes(buf, w.start.data(), w.end.data(), nt, min_n, top,
                               w.ngram_offset.data(), w.hashes.data())
        if mode == HASH:
            for k in range(m):
                w.keys[k] = _hashed_key(w.hashes[k], n_features, alternate_sign)
    else:
        for n in range(min_n, top + 1):
            for t in range(nt - n + 1):
                a = w.start[t]
                b = w.end[t + n - 1]
                h = fg_murmur3_32_padded(buf + a, b - a)
                if mode == HASH:
                    w.keys[k] = _hashed_key(h, n_features, alternate_sign)
                else:  # looked up in a second pass, once the table slots are on their way to cache
                    w.hashes[k] = h
                    vocab.prefetch(h)
                k += 1
    if mode != HASH:
        k = 0
        m = 0
        for n in range(min_n, top + 1):
            for t in range(nt - n + 1):
                a = w.start[t]
                b = w.end[t + n - 1]
                h = w.hashes[k]
                k += 1
                id_ = vocab.find(buf + a, b - a, h)
                if id_ >= 0:
                    key = id_
                elif mode == GROW:
                    id_ = w.local.find_or_add(buf + a, b - a, h)
                    if id_ < 0:
                        w.fail(FG_NO_MEMORY)
                        return
                    if id_ >= MAX_TERMS_C:
                        w.fail(FG_TOO_MANY_TERMS)
                        return
                    key = LOCAL + id_
                else:
                    continue
                w.keys[m] = key
                m += 1
        w.keys.resize(m)  # shrinks: cannot allocate
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
    if w.status == FG_OK:
        _count_doc(w, w.buf.data(), min_n, max_n, mode, vocab, n_features, alternate_sign)


cdef int _chunks(const vector[int64_t] &sizes, int n_threads, vector[Py_ssize_t] &bounds) noexcept nogil:
    """Boundaries of up to n_threads non-empty contiguous ranges of documents with similar total
    size (each document counts 64 more, for its fixed costs), into ``bounds`` ([0] when there are
    none); a FG_* status."""
    cdef Py_ssize_t n = sizes.size(), i, cut = 1
    cdef Py_ssize_t n_chunks = max(1, min(<Py_ssize_t>n_threads, n))
    cdef int64_t total = 0, running = 0
    bounds.clear()
    if fg_reserve(bounds, <size_t>(n_chunks + 1)) != FG_OK:
        return FG_NO_MEMORY
    for i in range(n):
        total += sizes[i] + 64
    bounds.push_back(0)  # within the capacity reserved: cannot allocate
    for i in range(n):
        running += sizes[i] + 64
        if cut < n_chunks and running * n_chunks >= total * cut:
            bounds.push_back(i + 1)
            cut += 1
    if n and bounds.back() != n:
        bounds.push_back(n)
    return FG_OK


cdef void _reserve(fg_worker *w, const vector[int64_t] &sizes, Py_ssize_t begin, Py_ssize_t end,
                   int n_lengths) noexcept nogil:
    """Reserve the output of documents begin:end: about one distinct n-gram per eight bytes of
    text per n-gram length, for at most four lengths (growing past it is correct, only slower;
    a reservation that cannot be had is only a hint not taken)."""
    cdef int64_t total = 0
    cdef Py_ssize_t i
    for i in range(begin, end):
        total += sizes[i]
    total = total // 8 * min(n_lengths, 4)
    fg_reserve(w.key_out, <size_t>total)
    fg_reserve(w.count_out, <size_t>total)
    fg_reserve(w.row_nnz, <size_t>(end - begin))


cdef int _merge(vector[fg_worker] &workers, int mode, fg_table *vocab, Py_ssize_t *nnz) noexcept nogil:
    """The first failure of the workers, else merge their tables into ``vocab`` (GROW) and count
    their entries into nnz; a FG_* status."""
    cdef Py_ssize_t t, i, k, n_workers = workers.size()
    cdef vector[int64_t] remap
    cdef int64_t id_
    cdef fg_worker *w
    nnz[0] = 0
    for t in range(n_workers):
        if workers[t].status != FG_OK:
            return workers[t].status
    for t in range(n_workers):
        w = &workers[t]
        if mode == GROW and w.local.size():
            if fg_resize(remap, <size_t>w.local.size()) != FG_OK:
                return FG_NO_MEMORY
            for i in range(w.local.size()):
                id_ = vocab.find_or_add(w.local.term(i), w.local.term_len(i), w.local.hash[i])
                if id_ < 0:
                    return FG_NO_MEMORY
                if id_ >= MAX_TERMS_C:
                    return FG_TOO_MANY_TERMS
                remap[i] = id_
            for k in range(<Py_ssize_t>w.key_out.size()):
                if w.key_out[k] >= LOCAL:
                    w.key_out[k] = remap[w.key_out[k] - LOCAL]
            if fg_sort_rows(w.key_out.data(), w.count_out.data(), w.row_nnz.data(),
                            w.row_nnz.size()) != FG_OK:
                return FG_NO_MEMORY
        nnz[0] += w.key_out.size()
    return FG_OK


cdef void _gather(vector[fg_worker] &workers, int32_t[::1] keys, data_t[::1] counts,
                  int64_t[::1] indptr, int64_t *low, int64_t *high) noexcept nogil:
    """Concatenate the workers' entries: columns, counts (cast to the output type) and row ends;
    the smallest and largest count into low/high (for the caller's range check of the type)."""
    cdef Py_ssize_t t, i, k, pos = 0, row = 0
    cdef int64_t c, lo = 0, hi = 0
    cdef fg_worker *w
    indptr[0] = 0
    for t in range(<Py_ssize_t>workers.size()):
        w = &workers[t]
        for k in range(<Py_ssize_t>w.key_out.size()):
            c = w.count_out[k]
            lo = min(lo, c)
            hi = max(hi, c)
            keys[pos + k] = <int32_t>w.key_out[k]
            counts[pos + k] = <data_t>c
        for i in range(<Py_ssize_t>w.row_nnz.size()):
            indptr[row + 1] = indptr[row] + w.row_nnz[i]
            row += 1
        pos += w.key_out.size()
    low[0] = lo
    high[0] = hi


cdef class Counts:
    """The entries of a batch of documents, counted by ``count_documents``/``count_tokens`` and
    held by the workers until ``gather`` copies them into arrays the caller allocated:
    ``status`` (a FG_* code: OK, NO_MEMORY, TOO_MANY_NGRAMS, TOO_MANY_TERMS, BAD_INPUT), and when
    it is OK, ``n_docs`` rows and ``nnz`` entries."""

    cdef vector[fg_worker] workers
    cdef readonly int status
    cdef readonly Py_ssize_t n_docs, nnz
    cdef readonly int64_t low, high

    def gather(
        self,
        int64_t[::1] indptr not None,   # OUT (n_docs + 1,) row ends
        int32_t[::1] keys not None,     # OUT (nnz,) columns (HASH) or vocabulary ids
        counts not None,                # OUT (nnz,) float64, float32, int64 or int32 array
    ):
        """Copy the entries into the arrays (shapes as above; else status becomes BAD_INPUT and
        nothing is written), set ``low``/``high`` to the smallest and largest count, and free
        the workers. Returns the status."""
        cdef float64_t[::1] c_f64
        cdef float32_t[::1] c_f32
        cdef int64_t[::1] c_i64
        cdef int32_t[::1] c_i32
        cdef vector[fg_worker] done
        if (self.status != FG_OK or indptr.shape[0] != self.n_docs + 1 or keys.shape[0] != self.nnz
                or counts.shape[0] != self.nnz or counts.dtype not in (np.float64, np.float32, np.int64, np.int32)):
            self.status = self.status or FG_BAD_INPUT
            return self.status
        if counts.dtype == np.float64:
            c_f64 = counts
            with nogil:
                _gather(self.workers, keys, c_f64, indptr, &self.low, &self.high)
        elif counts.dtype == np.float32:
            c_f32 = counts
            with nogil:
                _gather(self.workers, keys, c_f32, indptr, &self.low, &self.high)
        elif counts.dtype == np.int64:
            c_i64 = counts
            with nogil:
                _gather(self.workers, keys, c_i64, indptr, &self.low, &self.high)
        else:
            c_i32 = counts
            with nogil:
                _gather(self.workers, keys, c_i32, indptr, &self.low, &self.high)
        self.workers.swap(done)  # freed on return
        return FG_OK


def count_documents(
    list docs,                # IN exact str documents (see Design a), n_docs
    bint lowercase,           # lowercase ASCII documents while tokenising
    Vocabulary stop,          # IN stop words, or None
    int min_n, int max_n,     # n-gram range
    int mode,                 # HASH, LOOKUP or GROW
    Vocabulary vocab,         # IN (LOOKUP) / IN-OUT (GROW) vocabulary; None for HASH
    int64_t n_features,       # HASH: number of columns
    bint alternate_sign,      # HASH: signed counts
    int n_threads,
):
    """Tokenise and count a batch of documents: a ``Counts`` (check its status, then allocate
    and ``gather``), keys being columns (HASH) or vocabulary ids (ids in first-appearance order
    while growing). Nothing is raised: a document that is not an exact str is BAD_INPUT."""
    cdef Counts res = Counts.__new__(Counts)
    cdef Py_ssize_t n_docs = len(docs), i, t
    cdef vector[void *] data
    cdef vector[int] kind
    cdef vector[Py_ssize_t] length
    cdef vector[char] ascii
    cdef vector[int64_t] sizes
    cdef vector[Py_ssize_t] bounds
    res.n_docs = n_docs
    if (fg_resize(data, n_docs) or fg_resize(kind, n_docs) or fg_resize(length, n_docs)
            or fg_resize(ascii, n_docs) or fg_resize(sizes, n_docs)):
        res.status = FG_NO_MEMORY
        return res
    for i in range(n_docs):
        doc = docs[i]
        if type(doc) is not str:  # the caller's contract; checked, as reading it would crash
            res.status = FG_BAD_INPUT
            return res
        data[i] = PyUnicode_DATA(doc)
        kind[i] = PyUnicode_KIND(doc)
        length[i] = PyUnicode_GET_LENGTH(doc)
        ascii[i] = PyUnicode_IS_ASCII(doc)
        sizes[i] = length[i] * kind[i]
    res.status = _chunks(sizes, n_threads, bounds)
    if res.status != FG_OK:
        return res
    cdef Py_ssize_t n_chunks = bounds.size() - 1
    if fg_resize(res.workers, <size_t>n_chunks) != FG_OK:
        res.status = FG_NO_MEMORY
        return res
    cdef fg_table *stop_table = &stop.table if stop is not None and len(stop) else NULL
    cdef fg_table *vocab_table = &vocab.table if vocab is not None else NULL
    for t in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_chunks):
        _reserve(&res.workers[t], sizes, bounds[t], bounds[t + 1], max_n - min_n + 1)
        for i in range(bounds[t], bounds[t + 1]):
            if res.workers[t].status != FG_OK:
                break
            _tokenize_count(&res.workers[t], data[i], kind[i], ascii[i], length[i], lowercase,
                            stop_table, min_n, max_n, mode, vocab_table, n_features, alternate_sign)
    with nogil:
        res.status = _merge(res.workers, mode, vocab_table, &res.nnz)
    return res


def count_tokens(
    const uint8_t[::1] blob not None,       # IN the UTF-8 bytes of all tokens, then 16 more
    const int64_t[::1] token_ptr not None,  # IN (n_tokens + 1,) token k is blob[token_ptr[k]:token_ptr[k+1]]
    const int64_t[::1] doc_ptr not None,    # IN (n_docs + 1,) document d has tokens doc_ptr[d]:doc_ptr[d+1]
    int mode,
    Vocabulary vocab,
    int64_t n_features,
    bint alternate_sign,
    int n_threads,
):
    """count_documents for documents already analysed into features (the exact Python path for
    analyzers the tokeniser does not implement): each token is one feature. The hash reads up
    to 16 bytes past a feature, so ``blob`` ends with 16 bytes after the last token (else, or
    when the pointers' ends disagree with the arrays, the status is BAD_INPUT)."""
    cdef Counts res = Counts.__new__(Counts)
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1, t, i, k, ntok
    cdef vector[int64_t] sizes
    cdef vector[Py_ssize_t] bounds
    cdef fg_worker *w
    res.n_docs = max(n_docs, 0)
    if (n_docs < 0 or token_ptr.shape[0] < 1 or doc_ptr[0] != 0 or token_ptr[0] != 0
            or doc_ptr[n_docs] != token_ptr.shape[0] - 1
            or token_ptr[token_ptr.shape[0] - 1] + 16 > blob.shape[0]):
        res.status = FG_BAD_INPUT
        return res
    if fg_resize(sizes, <size_t>n_docs) != FG_OK:
        res.status = FG_NO_MEMORY
        return res
    for i in range(n_docs):
        sizes[i] = doc_ptr[i + 1] - doc_ptr[i]
    res.status = _chunks(sizes, n_threads, bounds)
    if res.status != FG_OK:
        return res
    cdef Py_ssize_t n_chunks = bounds.size() - 1
    if fg_resize(res.workers, <size_t>n_chunks) != FG_OK:
        res.status = FG_NO_MEMORY
        return res
    cdef fg_table *vocab_table = &vocab.table if vocab is not None else NULL
    cdef const uint8_t *base = &blob[0]
    for t in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_chunks):
        w = &res.workers[t]
        for i in range(bounds[t], bounds[t + 1]):
            ntok = doc_ptr[i + 1] - doc_ptr[i]
            if fg_resize(w.start, <size_t>ntok) != FG_OK or fg_resize(w.end, <size_t>ntok) != FG_OK:
                w.fail(FG_NO_MEMORY)
            if w.status != FG_OK:
                break
            for k in range(ntok):
                w.start[k] = token_ptr[doc_ptr[i] + k]
                w.end[k] = token_ptr[doc_ptr[i] + k + 1]
            _count_doc(w, base, 1, 1, mode, vocab_table, n_features, alternate_sign)
    with nogil:
        res.status = _merge(res.workers, mode, vocab_table, &res.nnz)
    return res


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
