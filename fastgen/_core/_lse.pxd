# Inline helpers that turn one row of joint log-likelihoods into the requested output.
# Design: the row lives in a float64 scratch buffer owned by the calling thread; the helper
# max-shifts, so nothing is exponentiated before it is normalised and long documents cannot underflow.
from cython cimport floating
from libc.math cimport exp, log, INFINITY

from ._typedefs cimport intp_t

# Output kinds of the scoring kernels.
cdef enum:
    OUT_JLL = 0        # joint log-likelihood log P(x, y=c)
    OUT_LOG_PROBA = 1  # log P(y=c | x)
    OUT_PROBA = 2      # P(y=c | x)


cdef inline int _finish_row(double *acc, floating *out, intp_t n_classes, int kind) noexcept nogil:
    """Write acc (jll of one row) to out as jll, log-posterior or posterior. Returns 1 for a row
    to normalise that holds NaN, else 0: the kernels that score X itself count those and raise
    (a NaN there means X changed during the call: _guard.pxd); the kernels that finish what
    NumPy computed (LDA, QDA) ignore it, their rows with missing values being NaN until they are
    scored apart.

    A row whose every entry is -inf (no class can produce it) gets the uniform posterior; a row with
    +inf entries shares the mass equally among them. Neither happens with smoothing alpha > 0.
    """
    cdef intp_t c
    cdef double m = -INFINITY, s = 0.0, log_s
    cdef intp_t n_top = 0
    cdef bint nan = False
    if kind == OUT_JLL:
        for c in range(n_classes):
            out[c] = <floating> acc[c]
        return 0
    for c in range(n_classes):
        nan |= acc[c] != acc[c]
        if acc[c] > m:
            m = acc[c]
    if m == -INFINITY or m == INFINITY:
        for c in range(n_classes):
            if acc[c] == m:
                n_top += 1
        for c in range(n_classes):
            if acc[c] == m:
                acc[c] = -log(<double> n_top)
            else:
                acc[c] = -INFINITY
    elif kind == OUT_PROBA:
        # exp once per class and a division: no log, no second exp
        for c in range(n_classes):
            acc[c] = exp(acc[c] - m)
            s += acc[c]
        for c in range(n_classes):
            out[c] = <floating> (acc[c] / s)
        return nan
    else:
        for c in range(n_classes):
            s += exp(acc[c] - m)
        log_s = log(s)
        for c in range(n_classes):
            acc[c] = (acc[c] - m) - log_s  # not acc - (m + log_s): m may be huge
    if kind == OUT_LOG_PROBA:
        for c in range(n_classes):
            out[c] = <floating> acc[c]
    else:
        for c in range(n_classes):
            out[c] = <floating> exp(acc[c])
    return nan
