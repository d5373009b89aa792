# Included by _jll.pyx and _jll_avx2.pyx, next to _jll.pxi.
#
# Design: scoring kernels of the Gaussian family and of Poisson naive Bayes.
#  a) Diagonal models (GaussianNB, the diagonal/spherical/identity LDA, PoissonNB) add one term per
#     observed feature, jll[i, c] = bias[c] + sum_j term(x_ij; A[j, c], S[j, c]) with
#       Gaussian: term = B[j, c] + S[j, c] * (x - A[j, c])**2   (S = -1/(2 var), B = -log(2 pi var)/2)
#       Poisson:  term = B[j, c] + x * A[j, c]                  (A = log lambda, B = -lambda)
#       Student-t: term = B[j, c] + P[j, c] * log(1 + (S[j, c] * (x - A[j, c]))**2)
#       negative binomial: term = B[j, c] + x * A[j, c] + R(S[j, c], x)
#                  (R(r, x) = lgamma(r + x) - lgamma(r); S = r, A = -log(1 + b),
#                   B = -r log(1 + 1/b) = log p(0))
#     Tables are feature-major (n_features, n_classes) float64. `bias` already holds sum_j B[j, c],
#     so a complete row pays only the x-dependent part, four features per pass without a branch.
#     A row with missing (NaN) values starts from the log prior and adds the whole terms of its
#     observed features, one at a time, so a missing one drops out of the sum (marginalised)
#     exactly. (Filling a missing value in and subtracting its term afterwards would cancel: a
#     term of 1e19, for Gaussian class means 1e10 apart, wipes out every other feature's.)
#     Poisson's (and the negative binomial's) class-independent -log(x!) is added only when the
#     joint log-likelihood is asked for.
#     Student-t: where the power is the same for every feature of a class (P has one row: the
#     training data had no missing values), a row multiplies its 1 + u^2 per class, as mantissa
#     and exponent, and takes one log per class at the end (_student_t_row); otherwise each term
#     takes its log, vectorised over the classes (_jll_gaussian.h). Negative binomial: P is the
#     table T[j * (K + 1) + k, c] = lgamma(r + k) - lgamma(r) + k A[j, c] of the whole counts
#     k <= K (fastgen.naive_bayes.negbin_table), so such a count costs one row read and add
#     (_negbin_row); a larger or fractional one its whole term, R(r, x) per class (_log_rising).
#     A CSR row of the negative binomial (jll_negbin_csr) starts from the bias, where every
#     feature has its count 0, and adds its stored counts' terms the same way.
#  b) Full-covariance models: the caller multiplies blocks of rows by the whitening matrices with
#     BLAS (Z = (X - shift) @ W); quadratic_finish turns Z into
#       jll[i, c] = const[c] - 0.5 * ||Z[i, block[c]*d : (block[c]+1)*d] - offset[c]||**2
#     and normalises in the same pass.
#  c) Each row is accumulated in float64 in a buffer owned by its thread and finished by
#     _finish_row; threads own disjoint rows, so results do not depend on n_threads.
from libc.float cimport DBL_MAX
from libc.math cimport INFINITY, fabs, floor, fmax, isnan, lgamma, log, log1p
from libc.stdint cimport uint64_t

from ._lse cimport OUT_JLL

cdef enum:
    DIAG_GAUSSIAN = 0
    DIAG_POISSON = 1
    DIAG_STUDENT_T = 2
    DIAG_NEGBIN = 3

cdef extern from "_jll_gaussian.h":
    void fastgen_sq_add(double *acc, const double *loc, const double *scale, double x,
                        Py_ssize_t n) noexcept nogil
    void fastgen_sq_add4(double *acc, const double *loc, const double *scale, const double *x,
                         Py_ssize_t n) noexcept nogil
    double fastgen_sq_dist(const double *z, const double *off, Py_ssize_t n) noexcept nogil
    double fastgen_sq_norm(const double *z, Py_ssize_t n) noexcept nogil
    void fastgen_term_add(double *acc, const double *loc, const double *scale, const double *cst,
                          double x, Py_ssize_t n) noexcept nogil
    void fastgen_term_add4(double *acc, const double **loc, const double **scale,
                           const double **cst, const double *x, Py_ssize_t n) noexcept nogil
    void fastgen_t_add(double *acc, const double *loc, const double *scale, const double *cst,
                       const double *power, double x, Py_ssize_t n) noexcept nogil
    uint64_t fastgen_t_mul4(double *mant, double *expo, const double **loc,
                            const double **scale, const double *x, Py_ssize_t n) noexcept nogil
    uint64_t fastgen_t_mul(double *mant, double *expo, const double *loc, const double *scale,
                           double x, Py_ssize_t n) noexcept nogil
    void fastgen_t_finish(double *acc, const double *mant, const double *expo,
                          const double *power, Py_ssize_t n) noexcept nogil


cdef inline bint _row_complete(const floating *x, intp_t n) noexcept nogil:
    """No NaN in x[0:n] (one vectorisable pass)."""
    cdef intp_t j
    cdef int nan = 0
    for j in range(n):
        nan |= x[j] != x[j]
    return not nan


cdef inline void _linear_rows(double *acc, const float64_t[:, ::1] A, const double *x,
                              intp_t n_features, intp_t n_classes) noexcept nogil:
    """acc += sum_j x[j] A[j], four rows at a time (buffers on this call's stack: per thread)."""
    cdef const float64_t *rows[4]
    cdef intp_t j = 0, q
    while j + 4 <= n_features:
        for q in range(4):
            rows[q] = &A[j + q, 0]
        _axpy4(acc, rows, &x[j], n_classes)
        j += 4
    while j < n_features:
        _axpy1(acc, &A[j, 0], x[j], n_classes)
        j += 1


cdef inline void _observed_terms(double *acc, const float64_t[:, ::1] A,
                                 const float64_t[:, ::1] S, const float64_t[:, ::1] B,
                                 const floating *x, double *xrow, intp_t n_features,
                                 intp_t n_classes, int model) noexcept nogil:
    """acc += the whole terms (B[j] included) of the observed (non-NaN) features j of the row
    x, four at a time (the gathered rows' pointers on this call's stack: per thread); xrow gets
    the row in float64, a missing value as 0."""
    cdef const double *loc[4]
    cdef const double *scale[4]
    cdef const double *cst[4]
    cdef double vals[4]
    cdef double ones[4]
    cdef double v
    cdef intp_t j, q, m = 0
    ones[0] = ones[1] = ones[2] = ones[3] = 1.0
    for j in range(n_features):
        v = x[j]
        if isnan(v):
            xrow[j] = 0.0
            continue
        xrow[j] = v
        loc[m], scale[m], cst[m], vals[m] = &A[j, 0], &S[j, 0], &B[j, 0], v
        m += 1
        if m == 4:
            if model == DIAG_GAUSSIAN:
                fastgen_term_add4(acc, loc, scale, cst, vals, n_classes)
            else:
                _axpy4(acc, loc, vals, n_classes)
                _axpy4(acc, cst, ones, n_classes)
            m = 0
    for q in range(m):
        if model == DIAG_GAUSSIAN:
            fastgen_term_add(acc, loc[q], scale[q], cst[q], vals[q], n_classes)
        else:
            _axpy1(acc, loc[q], vals[q], n_classes)
            _axpy1(acc, cst[q], 1.0, n_classes)


cdef inline void _student_t_row(double *acc, double *mant, double *expo,
                                const float64_t[:, ::1] A, const float64_t[:, ::1] S,
                                const float64_t[:, ::1] B, const float64_t[:, ::1] P,
                                const float64_t[::1] log_prior, const float64_t[::1] bias,
                                const floating *x, intp_t n_features,
                                intp_t n_classes) noexcept nogil:
    """acc = the Student-t joint log-likelihoods of the row x. When P is one row for several
    features, the log of the product of the observed features' 1 + u^2, four at a time (the
    gathered rows' pointers on this call's stack), starting from the bias for a complete row;
    else (a single feature's row of P is its own, maybe a power beyond PRODUCT_MAX_POWER), or
    if some |u| > 1e150, the observed features' whole terms one by one, each with its log."""
    cdef const double *loc[4]
    cdef const double *scale[4]
    cdef double vals[4]
    cdef double v
    cdef intp_t j, c, q, m = 0
    cdef bint shared = P.shape[0] == 1 and n_features > 1
    cdef bint complete
    cdef uint64_t big = 0
    if shared:
        complete = _row_complete(x, n_features)
        for c in range(n_classes):
            acc[c] = bias[c] if complete else log_prior[c]
            mant[c] = 1.0
            expo[c] = 0.0
        for j in range(n_features):
            v = x[j]
            if isnan(v):
                continue
            if not complete:
                _axpy1(acc, &B[j, 0], 1.0, n_classes)
            loc[m], scale[m], vals[m] = &A[j, 0], &S[j, 0], v
            m += 1
            if m == 4:
                big |= fastgen_t_mul4(mant, expo, loc, scale, vals, n_classes)
                m = 0
        for q in range(m):
            big |= fastgen_t_mul(mant, expo, loc[q], scale[q], vals[q], n_classes)
        if not big:
            fastgen_t_finish(acc, mant, expo, &P[0, 0], n_classes)
            return
    for c in range(n_classes):
        acc[c] = log_prior[c]
    for j in range(n_features):
        v = x[j]
        if not isnan(v):
            fastgen_t_add(acc, &A[j, 0], &S[j, 0], &B[j, 0], &P[0 if shared else j, 0], v,
                          n_classes)


cdef inline intp_t _add_negbin_count(double *acc, const float64_t[:, ::1] A,
                                     const float64_t[:, ::1] S, const float64_t[:, ::1] T,
                                     intp_t width, intp_t j, double v, const double **rows,
                                     const double *ones, intp_t m,
                                     intp_t n_classes) noexcept nogil:
    """acc += the count-dependent negative binomial term of the count v of feature j: a whole
    count below width queues its row of T in rows (added four at a time, m of them queued;
    returns how many are), any other adds v A[j] + R(S[j], v)."""
    cdef intp_t c
    if 0 <= v < width and v == floor(v):
        rows[m] = &T[j * width + <intp_t> v, 0]
        m += 1
        if m == 4:
            _axpy4(acc, rows, ones, n_classes)
            m = 0
        return m
    _axpy1(acc, &A[j, 0], v, n_classes)
    for c in range(n_classes):
        acc[c] = acc[c] + _log_rising(S[j, c], log(S[j, c]), v)
    return m


cdef inline void _negbin_row(double *acc, const float64_t[:, ::1] A, const float64_t[:, ::1] S,
                             const float64_t[:, ::1] B, const float64_t[:, ::1] T,
                             const float64_t[::1] log_prior, const float64_t[::1] bias,
                             const floating *x, double *xrow, intp_t n_features,
                             intp_t n_classes) noexcept nogil:
    """acc = the negative binomial joint log-likelihoods (without -log(x!)) of the row x, from
    the bias for a complete row: a whole count up to the table's last reads its row of T, four
    features per pass (the rows' pointers on this call's stack: per thread); xrow gets the row
    in float64, a missing value as 0."""
    cdef const double *rows[4]
    cdef double ones[4]
    cdef intp_t width = T.shape[0] // n_features  # counts 0 .. width - 1 per feature
    cdef intp_t j, c, q, m = 0
    cdef double v
    cdef bint complete = _row_complete(x, n_features)
    ones[0] = ones[1] = ones[2] = ones[3] = 1.0
    for c in range(n_classes):
        acc[c] = bias[c] if complete else log_prior[c]
    for j in range(n_features):
        v = x[j]
        if isnan(v):
            xrow[j] = 0.0
            continue
        xrow[j] = v
        if not complete:
            _axpy1(acc, &B[j, 0], 1.0, n_classes)
        # (a negative count, X changed after its check, takes the computed route)
        m = _add_negbin_count(acc, A, S, T, width, j, v, rows, ones, m, n_classes)
    for q in range(m):
        _axpy1(acc, rows[q], 1.0, n_classes)


def jll_diag_dense(
    const floating[:, ::1] X not None,      # IN (n_samples, n_features), NaN = missing
    const float64_t[:, ::1] A not None,     # IN (n_features, n_classes)
    const float64_t[:, ::1] S not None,     # IN (n_features, n_classes), Gaussian only
    const float64_t[:, ::1] B not None,     # IN (n_features, n_classes) the terms' constants
    const float64_t[:, ::1] P not None,     # IN Student-t: (n_features or 1, n_classes);
                                            # negative binomial: the table (see the design note)
    const float64_t[::1] log_prior not None,  # IN (n_classes,)
    const float64_t[::1] bias not None,     # IN (n_classes,) log prior + sum_j B[j]
    int model,                              # a DIAGONAL_MODELS kind (the enum above)
    int kind,                               # OUT_JLL, OUT_LOG_PROBA or OUT_PROBA (_lse.pxd)
    floating[:, ::1] out not None,          # OUT (n_samples, n_classes)
    int n_threads,
):
    """Score dense rows of a diagonal model (see the design note); returns the number of rows that
    could not get scratch memory (0 on success). Validated by the caller; thread-safe.

    A complete row runs the branch-free loop, four features per pass, from the bias; a row with
    missing values starts from the log prior and adds the whole terms (B[j] included) of its
    observed features only (a Student-t row: see _student_t_row)."""
    cdef intp_t n_samples = X.shape[0]
    cdef intp_t n_features = X.shape[1]
    cdef intp_t n_classes = A.shape[1]
    cdef intp_t i, j, c
    cdef intp_t failed = 0, bad = 0
    cdef double row_const
    cdef double *acc = NULL
    cdef double *xrow = NULL
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc((3 * n_classes + n_features) * sizeof(double))
        xrow = acc + 3 * n_classes  # the row in float64, a missing value as 0 (for log(x!))
        for i in prange(n_samples, schedule="static"):
            if acc == NULL:
                failed += 1
                continue
            if model == DIAG_STUDENT_T:
                _student_t_row(acc, acc + n_classes, acc + 2 * n_classes, A, S, B, P,
                               log_prior, bias, &X[i, 0], n_features, n_classes)
            elif model == DIAG_NEGBIN:
                _negbin_row(acc, A, S, B, P, log_prior, bias, &X[i, 0], xrow, n_features,
                            n_classes)
            elif _row_complete(&X[i, 0], n_features):
                for c in range(n_classes):
                    acc[c] = bias[c]
                for j in range(n_features):
                    xrow[j] = X[i, j]
                j = 0
                if model == DIAG_GAUSSIAN:
                    while j + 4 <= n_features:
                        fastgen_sq_add4(acc, &A[j, 0], &S[j, 0], &xrow[j], n_classes)
                        j = j + 4
                    while j < n_features:
                        fastgen_sq_add(acc, &A[j, 0], &S[j, 0], xrow[j], n_classes)
                        j = j + 1
                else:
                    _linear_rows(acc, A, xrow, n_features, n_classes)
            else:
                for c in range(n_classes):
                    acc[c] = log_prior[c]
                _observed_terms(acc, A, S, B, &X[i, 0], xrow, n_features, n_classes, model)
            if (model == DIAG_POISSON or model == DIAG_NEGBIN) and kind == OUT_JLL:
                row_const = 0.0  # -log(x!) of the observed counts (log 0! = 0 for a missing one)
                for j in range(n_features):
                    row_const = row_const - lgamma(xrow[j] + 1.0)
                for c in range(n_classes):
                    acc[c] = acc[c] + row_const
            bad += _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    changed_during_call(bad)
    return failed


cdef inline intp_t _negbin_csr_terms(double *acc, const data_t[::1] X_data,
                                     const index_t[::1] X_indices, intp_t start, intp_t end,
                                     const float64_t[:, ::1] A, const float64_t[:, ::1] S,
                                     const float64_t[:, ::1] T, bint log_factorials,
                                     intp_t n_classes) noexcept nogil:
    """acc += the count-dependent negative binomial terms of a CSR row's stored counts
    start..end (acc holds the bias: every feature's log p(0)), with -log(x!) of each when
    log_factorials: a whole count up to the table's last reads its row of T, four at a time, as
    _negbin_row; any other adds x A[j] + R(S[j], x). Returns 1, with the row abandoned, at a
    column index or a count that fails design d of _jll.pxi (X rewritten since its check)."""
    cdef const double *rows[4]
    cdef double ones[4]
    cdef intp_t n_features = A.shape[0]
    cdef intp_t width = T.shape[0] // n_features  # counts 0 .. width - 1 per feature
    cdef intp_t k, j, c, q, m = 0
    cdef double v, row_const = 0.0
    ones[0] = ones[1] = ones[2] = ones[3] = 1.0
    for k in range(start, end):
        j = X_indices[k]
        v = <double> X_data[k]
        if not (in_range(j, n_features) and 0 <= v < INFINITY):
            return 1
        m = _add_negbin_count(acc, A, S, T, width, j, v, rows, ones, m, n_classes)
        if log_factorials:
            row_const = row_const - lgamma(v + 1.0)
    for q in range(m):
        _axpy1(acc, rows[q], 1.0, n_classes)
    for c in range(n_classes):
        acc[c] = acc[c] + row_const
    return 0


def jll_negbin_csr(
    const data_t[::1] X_data not None,          # IN
    const index_t[::1] X_indices not None,      # IN
    const index_t[::1] X_indptr not None,       # IN (n_samples + 1,)
    const float64_t[:, ::1] A not None,         # IN (n_features, n_classes): -log(1 + b)
    const float64_t[:, ::1] S not None,         # IN (n_features, n_classes): r
    const float64_t[:, ::1] T not None,         # IN (n_features * width, n_classes): the table
    const float64_t[::1] bias not None,         # IN (n_classes,) log prior + sum_j B[j]
    int kind,                                   # OUT_JLL (with -log(x!)), OUT_LOG_PROBA or OUT_PROBA
    floating[:, ::1] out not None,              # OUT (n_samples, n_classes)
    int n_threads,
):
    """Score CSR rows of the negative binomial predictive (design note a; a CSR row has no
    missing value): the twin of jll_diag_dense's DIAG_NEGBIN over the stored counts. Returns
    the number of rows that could not get scratch memory (0 on success). Validated by the
    caller, but for design d of _jll.pxi (a ValueError when its checks fail); thread-safe."""
    cdef intp_t n_samples = out.shape[0]
    cdef intp_t n_classes = out.shape[1]
    cdef intp_t nnz, i, c, start, stop
    cdef intp_t failed = 0, bad = 0
    cdef double *acc = NULL
    if X_indptr.shape[0] != n_samples + 1:  # X.indptr replaced since its check
        changed_during_call(1)
    nnz = stored_entries(X_data.shape[0], X_indices.shape[0], X_indptr)
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc(n_classes * sizeof(double))
        for i in prange(n_samples, schedule="guided"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = bias[c]
            start = clamped(X_indptr[i], 0, nnz)
            stop = clamped(X_indptr[i + 1], start, nnz)
            bad += _negbin_csr_terms(acc, X_data, X_indices, start, stop, A, S, T,
                                     kind == OUT_JLL, n_classes)
            bad += _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    changed_during_call(bad)
    return failed


def quadratic_finish(
    const float64_t[:, ::1] Z not None,       # IN (n_samples, n_blocks * n_features) whitened rows
    const float64_t[:, ::1] offset not None,  # IN (n_classes, n_features)
    const intp_t[::1] block not None,         # IN (n_classes,) block of Z used by each class
    const float64_t[::1] const_term not None,  # IN (n_classes,)
    int kind,
    floating[:, ::1] out not None,            # OUT (n_samples, n_classes)
    int n_threads,
    bint refuse_nan=False,
):
    """jll[i, c] = const_term[c] - ||Z[i, block c] - offset[c]||^2 / 2, written as `kind`; returns the
    number of rows that could not get scratch memory. With ``refuse_nan``, a row whose jll is
    NaN (Z made from a row of X that held NaN when multiplied: X changed since its check) is the
    ValueError that X changed. Validated by the caller; thread-safe."""
    cdef intp_t n_samples = Z.shape[0]
    cdef intp_t n_features = offset.shape[1]
    cdef intp_t n_classes = offset.shape[0]
    cdef intp_t i, c
    cdef intp_t failed = 0, nan_rows = 0
    cdef double *acc = NULL
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc(n_classes * sizeof(double))
        for i in prange(n_samples, schedule="static"):
            if acc == NULL:
                failed += 1
                continue
            for c in range(n_classes):
                acc[c] = const_term[c] - 0.5 * fastgen_sq_dist(&Z[i, block[c] * n_features],
                                                          &offset[c, 0], n_features)
            if refuse_nan:
                nan_rows += _row_nan(acc, n_classes)
            _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    changed_during_call(nan_rows)
    return failed


cdef void _far_t_row(double *acc, const double *z, intp_t k, const float64_t[::1] rate,
                     const float64_t[::1] slope, const float64_t[::1] const_term,
                     intp_t n_classes) noexcept nogil:
    """The t's jll of a row whose ||z||^2 overflows: log1p(rate q_c) = log rate_c + log ||z||^2
    to float64 (the cross terms are below |z| |offset_c|, a relative 1e-140 of ||z||^2 there),
    log ||z||^2 from z scaled by its largest entry."""
    cdef intp_t j, c
    cdef double s = 0.0, log_zz
    for j in range(k):
        s = fmax(s, fabs(z[j]))
    log_zz = 0.0
    for j in range(k):
        log_zz += (z[j] / s) * (z[j] / s)
    log_zz = log(log_zz) + 2.0 * log(s) if s <= DBL_MAX else INFINITY  # (z overflowed)
    for c in range(n_classes):
        acc[c] = const_term[c] + slope[c] * (log(rate[c]) + log_zz)


def shared_t_finish(
    const float64_t[:, ::1] Y not None,       # IN (n_samples, k + n_classes): z, then the cross terms
    const float64_t[::1] rate not None,       # IN (n_classes,)
    const float64_t[::1] offset_term not None,  # IN (n_classes,)
    const float64_t[::1] slope not None,      # IN (n_classes,)
    const float64_t[::1] const_term not None,  # IN (n_classes,)
    int kind,
    floating[:, ::1] out not None,            # OUT (n_samples, n_classes)
    int n_threads,
):
    """The posterior predictive t of LDA's classes (one shared scale; see
    fastgen.discriminant_analysis._Predictive) from the product Y = (X - shift) [W | cross]:
    jll[i, c] = const_term[c] + slope[c] log1p(rate[c] ||z_i||^2 + Y[i, k + c] +
    offset_term[c]), z_i = Y[i, :k], written as `kind`; returns the number of rows that could not
    get scratch memory. Validated by the caller; thread-safe."""
    cdef intp_t n_samples = Y.shape[0]
    cdef intp_t n_classes = out.shape[1]
    cdef intp_t k = Y.shape[1] - n_classes
    cdef intp_t i, c
    cdef intp_t failed = 0
    cdef double zz
    cdef double *acc = NULL
    with nogil, parallel(num_threads=n_threads):
        acc = <double *> malloc(n_classes * sizeof(double))
        for i in prange(n_samples, schedule="static"):
            if acc == NULL:
                failed += 1
                continue
            zz = fastgen_sq_norm(&Y[i, 0], k)
            if zz <= DBL_MAX:
                for c in range(n_classes):
                    acc[c] = const_term[c] + slope[c] * log1p(rate[c] * zz + Y[i, k + c]
                                                              + offset_term[c])
            else:  # a row so far that ||z||^2 overflows (or NaN: a row scored apart)
                _far_t_row(acc, &Y[i, 0], k, rate, slope, const_term, n_classes)
            _finish_row(acc, &out[i, 0], n_classes, kind)
        free(acc)
    return failed


# The model kinds for Python callers (fastgen._gaussian), defined once by the enum above.
DIAGONAL_MODELS = (DIAG_GAUSSIAN, DIAG_POISSON, DIAG_STUDENT_T, DIAG_NEGBIN)
