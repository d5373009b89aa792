# Design: svmlight/libsvm text to CSR arrays, one pass over a block of bytes.
#  a) The caller (fastgen/io.py) reads the file in binary chunks and hands over a bytes block
#     that starts at a line; the kernel parses every line whose end is in the block (``\n``,
#     ``\r\n`` or a lone ``\r``, the line ends of Python's text files) and reports where the first
#     incomplete line starts, which the caller carries to the next block. With ``final`` the block
#     ends the file and its last line needs no line end.
#  b) A line is split as Python's ``str.split`` would split the UTF-8 text: at ASCII and Unicode
#     whitespace, after cutting it at the first ``#``. Every byte is checked to be strict UTF-8
#     (what Python's decoder accepts), comments included.
#  c) Numbers are what Python's ``int(token)`` and ``float(token)`` return. The usual tokens (ASCII
#     decimals with at most 19 significant digits whose value m * 10**e has m <= 2**53 and
#     |e| <= 22) are converted here: m and 10**|e| are exact doubles, so one IEEE multiplication or
#     division is the correctly rounded value (Clinger 1990), whatever the C locale. Any other
#     token is decoded and passed to ``int``/``float`` themselves, holding the GIL only then.
#  d) Every check of the format is made here, in the same pass, and reported as a status code with
#     the line number and the byte range of the offending token; the caller words the message.
#     Counters live in ``state`` and are written back only when a line is complete, so a call
#     that stops (batch full, output arrays full, block exhausted) resumes at a line start.
from cpython.float cimport PyFloat_AS_DOUBLE
from libc.math cimport isfinite, isinf
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memchr

from cython cimport floating

from ._typedefs cimport index_t

cdef extern from "Python.h":
    object PyUnicode_DecodeUTF8(const char *, Py_ssize_t, const char *)
    object PyFloat_FromString(object)
    object PyLong_FromUnicodeObject(object, int)
    long long PyLong_AsLongLongAndOverflow(object, int *) except? -1

# What a call ends with (Python ints for fastgen/io.py).
cpdef enum:
    NEED_MORE = 0       # every complete line parsed; the block's tail is an incomplete line
    BATCH_FULL = 1      # as many rows as labels_out holds
    NEED_SPACE = 2      # indices_out/data_out are full before the current line's end
    BAD_LABEL = 3
    BAD_PAIR = 4        # not index:value, or a number that does not parse
    BELOW_BASE = 5
    TOO_LARGE = 6
    NOT_INCREASING = 7
    NOT_FINITE = 8      # in float64, or beyond the float32 range when the output is float32
    BEYOND = 9          # column >= n_features
    NOT_UTF8 = 10

# Slots of ``state``.
cpdef enum:
    POS = 0             # where parsing resumes: a line start (byte offset into the block)
    ROWS = 1            # rows in the output arrays
    NNZ = 2             # entries in the output arrays
    LINE = 3            # lines read (the line of an error)
    LARGEST = 4         # largest column seen, -1 before any
    ERR_START = 5       # byte range of the offending token, or the first byte that is not UTF-8
    ERR_END = 6
    N_STATE = 7

# The largest column: n_features = 1 + the largest column must be an int64.
cdef int64_t MAX_INDEX = (1 << 63) - 2

cdef double[23] POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
                         1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]


cdef inline Py_ssize_t _utf8_char(const unsigned char *p, const unsigned char *end,
                                  uint32_t *code) noexcept nogil:
    """Length of the strict UTF-8 sequence of the non-ASCII character at p, its code point in
    code; 0 if the bytes are not one."""
    cdef unsigned char c = p[0]
    cdef Py_ssize_t n, i
    cdef uint32_t cp
    if 0xC2 <= c <= 0xDF:
        n, cp = 2, c & 0x1F
    elif 0xE0 <= c <= 0xEF:
        n, cp = 3, c & 0x0F
    elif 0xF0 <= c <= 0xF4:
        n, cp = 4, c & 0x07
    else:
        return 0
    if end - p < n:
        return 0
    for i in range(1, n):
        if p[i] & 0xC0 != 0x80:
            return 0
        cp = (cp << 6) | (p[i] & 0x3F)
    if (n == 3 and (cp < 0x800 or 0xD800 <= cp <= 0xDFFF)) or (n == 4 and not 0x10000 <= cp <= 0x10FFFF):
        return 0  # overlong, a surrogate, or beyond U+10FFFF
    code[0] = cp
    return n


cdef inline int _space(const unsigned char *p, const unsigned char *end,
                       Py_ssize_t *size) noexcept nogil:
    """1 if the character at p is whitespace to str.split, 0 if not, -1 if not UTF-8; its byte
    length in size."""
    cdef unsigned char c = p[0]
    cdef uint32_t cp
    if c < 0x80:
        size[0] = 1
        return c == 32 or 9 <= c <= 13 or 28 <= c <= 31
    size[0] = _utf8_char(p, end, &cp)
    if size[0] == 0:
        return -1
    return (cp == 0x85 or cp == 0xA0 or cp == 0x1680 or 0x2000 <= cp <= 0x200A or cp == 0x2028
            or cp == 0x2029 or cp == 0x202F or cp == 0x205F or cp == 0x3000)


cdef inline const unsigned char *_not_utf8(const unsigned char *p,
                                          const unsigned char *end) noexcept nogil:
    """The first byte in [p, end) that does not start a strict UTF-8 character, or NULL."""
    cdef uint32_t cp
    cdef Py_ssize_t n
    while p < end:
        if p[0] < 0x80:
            p += 1
        else:
            n = _utf8_char(p, end, &cp)
            if n == 0:
                return p
            p += n
    return NULL


cdef inline int _skip(const unsigned char **p, const unsigned char *end,
                      int space) noexcept nogil:
    """Move *p past the characters in [*p, end) that are whitespace (``space`` 1) or are not
    (0): 0, or -1 when *p stops at a byte that is not UTF-8."""
    cdef Py_ssize_t size
    cdef int k
    while p[0] < end:
        k = _space(p[0], end, &size)
        if k < 0:
            return -1
        if k != space:
            return 0
        p[0] += size
    return 0


cdef inline int _token(const unsigned char **p, const unsigned char *end,
                       const unsigned char **start) noexcept nogil:
    """The next whitespace-separated token in [*p, end): 1 and its range [*start, *p), 0 when
    there is none, -1 when *p stops at a byte that is not UTF-8."""
    if _skip(p, end, 1) < 0:
        return -1
    if p[0] == end:
        return 0
    start[0] = p[0]
    return -1 if _skip(p, end, 0) < 0 else 1


cdef inline bint _fast_double(const unsigned char *s, const unsigned char *e,
                              double *out) noexcept nogil:
    """float(s) for the tokens of design note c), exactly; False for any other token."""
    cdef bint negative = False, negative_exponent = False, point = False
    cdef uint64_t m = 0
    cdef int significant = 0, digits = 0, exponent = 0, exponent_digits = 0, e10 = 0
    cdef double value
    if s < e and (s[0] == c'+' or s[0] == c'-'):
        negative = s[0] == c'-'
        s += 1
    while s < e:  # digits, with at most one decimal point among them
        if c'0' <= s[0] <= c'9':
            if m or s[0] != c'0':
                if significant == 19:
                    return False
                m = 10 * m + (s[0] - c'0')
                significant += 1
            digits += 1
            e10 -= point
        elif s[0] == c'.' and not point:
            point = True
        else:
            break
        s += 1
    if digits == 0:
        return False
    if s < e and (s[0] == c'e' or s[0] == c'E'):
        s += 1
        if s < e and (s[0] == c'+' or s[0] == c'-'):
            negative_exponent = s[0] == c'-'
            s += 1
        while s < e and c'0' <= s[0] <= c'9':
            if exponent_digits == 4:
                return False
            exponent = 10 * exponent + (s[0] - c'0')
            exponent_digits += 1
            s += 1
        if exponent_digits == 0:
            return False
        e10 += -exponent if negative_exponent else exponent
    if s != e:
        return False
    if m == 0:
        out[0] = -0.0 if negative else 0.0
        return True
    if m > (<uint64_t>1 << 53) or not -22 <= e10 <= 22:
        return False
    value = <double>m
    value = value * POW10[e10] if e10 >= 0 else value / POW10[-e10]
    out[0] = -value if negative else value
    return True


cdef int _python_float(const unsigned char *s, Py_ssize_t n, double *out) noexcept with gil:
    """float(token) by Python itself: 1, or 0 when it is not a number."""
    try:
        out[0] = PyFloat_AS_DOUBLE(PyFloat_FromString(PyUnicode_DecodeUTF8(<const char *>s, n, NULL)))
    except ValueError:
        return 0
    return 1


cdef inline int _double(const unsigned char *s, const unsigned char *e, double *out) noexcept nogil:
    if _fast_double(s, e, out):
        return 1
    return _python_float(s, e - s, out)


cdef int _python_int(const unsigned char *s, Py_ssize_t n, int64_t *out) noexcept with gil:
    """int(token) by Python itself: 1, 2 above the int64 range, 3 below it, 0 when it is not an
    integer."""
    cdef int overflow = 0
    try:
        out[0] = PyLong_AsLongLongAndOverflow(
            PyLong_FromUnicodeObject(PyUnicode_DecodeUTF8(<const char *>s, n, NULL), 10), &overflow)
    except ValueError:
        return 0
    return 1 if overflow == 0 else 2 if overflow > 0 else 3


cdef inline int _index(const unsigned char *s, const unsigned char *e, int64_t *out) noexcept nogil:
    """int(token), as for _python_int; ASCII [+-]digits of at most 18 digits parsed here."""
    cdef const unsigned char *t = s
    cdef bint negative = False
    cdef int64_t value = 0
    if t < e and (t[0] == c'+' or t[0] == c'-'):
        negative = t[0] == c'-'
        t += 1
    if 0 < e - t <= 18:
        while t < e and c'0' <= t[0] <= c'9':
            value = 10 * value + (t[0] - c'0')
            t += 1
        if t == e:
            out[0] = -value if negative else value
            return 1
    return _python_int(s, e - s, out)


def parse_svmlight(const unsigned char[::1] block,  # IN: bytes starting at a line
                   bint final,                      # IN: block ends the file
                   bint zero_based,                 # IN
                   int64_t n_features,              # IN: columns must be below it
                   bint store,                      # IN: False: count rows, no entries written
                   int64_t[::1] indptr_out,         # OUT: (len(labels_out) + 1,), [0] set by the caller
                   index_t[::1] indices_out,        # OUT: capacity for entries
                   floating[::1] data_out,          # OUT: same capacity
                   double[::1] labels_out,          # OUT: (max rows,)
                   int64_t[::1] state):             # IN/OUT: (N_STATE,), slots above
    """Parse the lines of ``block`` from ``state[POS]`` into rows ``state[ROWS]:`` of the outputs
    (entries from ``state[NNZ]``); return a status code above. The caller sizes the outputs and
    keeps ``indices_out``/``data_out`` at least one long; no GIL but for unusual numbers."""
    cdef const unsigned char *base = &block[0] if block.shape[0] else NULL
    cdef const unsigned char *end = base + block.shape[0]
    cdef const unsigned char *p = base + state[POS]
    cdef const unsigned char *eol
    cdef const unsigned char *next_line
    cdef const unsigned char *stop
    cdef const unsigned char *q
    cdef const unsigned char *start = NULL
    cdef const unsigned char *colon
    cdef const unsigned char *bad = NULL
    cdef const unsigned char *err_start = NULL
    cdef const unsigned char *err_end = NULL
    cdef int64_t rows = state[ROWS], nnz = state[NNZ], line = state[LINE], largest = state[LARGEST]
    cdef int64_t line_nnz, line_largest, key, column, previous
    cdef int64_t offset = 0 if zero_based else 1
    cdef Py_ssize_t max_rows = labels_out.shape[0], capacity = indices_out.shape[0]
    cdef double label, value
    cdef int status = NEED_MORE, found, kind
    cdef bint is_row
    with nogil:
        while True:
            if rows == max_rows:
                status = BATCH_FULL
                break
            if p == end:
                break
            q = <const unsigned char *>memchr(p, c'\n', end - p)
            eol = <const unsigned char *>memchr(p, c'\r', (q if q != NULL else end) - p)
            if eol != NULL:
                if eol + 1 == end and not final:
                    break  # "\r" or "\r\n": the next block tells
                next_line = eol + 2 if eol + 1 < end and eol[1] == c'\n' else eol + 1
            elif q != NULL:
                eol, next_line = q, q + 1
            elif final:
                eol, next_line = end, end
            else:
                break
            line += 1
            stop = <const unsigned char *>memchr(p, c'#', eol - p)
            if stop == NULL:
                stop = eol
            q = p
            found = _token(&q, stop, &start)
            is_row = found == 1
            line_nnz, line_largest, previous = nnz, largest, -1
            if found == 1 and not (_double(start, q, &label) and isfinite(label)):
                status, err_start, err_end = BAD_LABEL, start, q  # (a class is a finite number)
            while found == 1 and status == NEED_MORE:
                found = _token(&q, stop, &start)
                if found != 1:
                    break
                err_start, err_end = start, q
                colon = <const unsigned char *>memchr(start, c':', q - start)
                if colon == NULL:
                    status = BAD_PAIR
                    break
                if colon - start == 3 and start[0] == c'q' and start[1] == c'i' and start[2] == c'd':
                    continue
                kind = _index(start, colon, &key)
                if kind == 0 or not _double(colon + 1, q, &value):
                    status = BAD_PAIR
                elif kind == 3 or (kind == 1 and key < offset):
                    status = BELOW_BASE
                elif kind == 2 or key - offset > MAX_INDEX:
                    status = TOO_LARGE
                elif key - offset <= previous:
                    status = NOT_INCREASING
                elif not isfinite(value) or (floating is float and isinf(<float>value)):
                    status = NOT_FINITE
                elif key - offset >= n_features:
                    status = BEYOND
                elif store and line_nnz == capacity:
                    status = NEED_SPACE
                else:
                    column = key - offset
                    if store:
                        indices_out[line_nnz] = <index_t>column
                        data_out[line_nnz] = <floating>value
                        line_nnz += 1
                    if column > line_largest:
                        line_largest = column
                    previous = column
            # the rest of the line (the comment, or what follows a fault) must be UTF-8 too: a
            # line that is not is reported as such, whatever else is wrong with it
            bad = q if found < 0 else _not_utf8(q, eol)
            if bad != NULL:
                status, err_start, err_end = NOT_UTF8, bad, bad + 1
            if status == NEED_SPACE:
                line -= 1
            if status != NEED_MORE:
                break
            if is_row:
                labels_out[rows] = label
                rows += 1
                indptr_out[rows] = line_nnz
                nnz, largest = line_nnz, line_largest
            p = next_line
    state[POS], state[ROWS], state[NNZ], state[LINE], state[LARGEST] = p - base, rows, nnz, line, largest
    if err_start != NULL:
        state[ERR_START], state[ERR_END] = err_start - base, err_end - base
    return status
