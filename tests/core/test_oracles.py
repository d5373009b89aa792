"""Seven kernels against independent NumPy/SciPy oracles (tests/_reference.py): jll_diag_dense,
jll_categorical, quadratic_finish, moments_dense, count_categorical, codes_status and
encode_compact. The STYLE matrix where it applies: dtype x C-contiguous or read-only input x
n_threads in {1, 2} (two threads must give the one-thread result bit for bit) x edge shapes
(0 rows, 1 row, 1 class, 1 feature, many classes), with missing values, all-missing rows and
extreme parameters the contracts allow; Hypothesis for the codes and label properties.

Tolerances: float64 results agree to 1e-12 relative (the kernels and the oracles add the same
terms in other orders); float32 outputs are float64 sums rounded once, so 1e-6. Scores get in
addition 1e-14 of their row's size absolute (_close): a log-posterior is a difference of jlls
(a dominant class's -1.6e-11 is right to ~1e-16, not relatively), so it is exact only relative
to the size of the terms.
"""
import zlib

import mpmath
import numpy as np
import pytest
from scipy.special import gammaln
from _reference import (category_counts_reference, categorical_nb_jll, codes_status_reference,
                        diagonal_moments_reference, encode_compact_reference,
                        full_gaussian_jll, gaussian_nb_jll, normalise, poisson_jll,
                        negative_binomial_jll, quadratic_reference, student_t_jll)
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgen import CategoricalNB
from fastgen.naive_bayes import NEGBIN_TABLE_MAX, negbin_table
from fastgen._core import _counts, builds
from fastgen._core import checks as _checks
from fastgen._core import jll as selected_jll

OUT_JLL, OUT_LOG_PROBA, OUT_PROBA = selected_jll.OUTPUT_KINDS
KINDS = [OUT_JLL, OUT_LOG_PROBA, OUT_PROBA]
RTOL = {np.float32: 1e-6, np.float64: 1e-12}
FLOAT_DTYPES = [np.float32, np.float64]
DATA_DTYPES = [np.float32, np.float64, np.int32, np.int64]
LABEL_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
I64_MAX = int(np.iinfo(np.int64).max)
I64_MIN = int(np.iinfo(np.int64).min)
# the smallest int64 that rounds to 2**63 as a double (a cast back to an integer is undefined)
I64_ROUNDS_UP = 2**63 - 512



def _scoring_modules():
    """The scoring builds to test: the baseline _jll, and _jll_avx2 where this CPU runs it."""
    return builds("_jll")


SCORING_MODULES = _scoring_modules()
MODULE_IDS = [m.__name__.rsplit(".", 1)[-1] for m in SCORING_MODULES]


def _inputs(readonly, *arrays):
    """C-contiguous copies of the inputs, made read-only when asked."""
    copies = tuple(np.ascontiguousarray(a).copy() for a in arrays)
    for a in copies:
        a.setflags(write=not readonly)
    return copies


def _entries(rng, y_idx, w, n_classes, soft):
    """The kernels' entries (rows, classes, weights) in row order: one a row (labels), or, with
    ``soft``, about half the rows counted for one more class too, with weights of their own (EM's
    class memberships)."""
    rows = np.arange(len(y_idx), dtype=np.intp)
    if not soft:
        return rows, y_idx, w
    extra = np.flatnonzero(rng.random(len(y_idx)) < 0.5)
    rows = np.concatenate([rows, extra])
    y_idx = np.concatenate([y_idx, rng.integers(0, n_classes, len(extra))]).astype(np.intp)
    w = np.concatenate([w, rng.uniform(0.0, 1.0, len(extra))])
    order = np.argsort(rows, kind="stable")
    return rows[order], y_idx[order], w[order]


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), "the result depends on n_threads"


def _run(call, n_threads):
    """call(n_threads) -> tuple of results; with more than one thread, call(1) must give the
    same results bit for bit."""
    got = call(n_threads)
    if n_threads > 1:
        for a, b in zip(got, call(1)):
            _same_bits(a, b)
    return got


def _close(got, expected, dtype, row_size=None):
    """got == expected (rounded to dtype) to RTOL[dtype] relative, plus 1e-14 of each row's
    size (``row_size``: the magnitude of the terms its jlls are sums of) absolute, plus a few
    of the smallest normal numbers (posteriors below them are rounded coarsely); infinities
    exactly."""
    expected = np.asarray(expected).astype(dtype)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    inf = np.isinf(expected)
    np.testing.assert_array_equal(got[inf], expected[inf])
    atol = 16 * float(np.finfo(dtype).tiny)
    if row_size is not None:
        atol = np.maximum(atol, 1e-14 * np.asarray(row_size, dtype=np.float64)[:, None])
    g, e = np.where(inf, 0.0, got), np.where(inf, 0.0, expected)
    bad = ~np.isclose(g, e, rtol=RTOL[dtype], atol=atol)
    assert not bad.any(), (f"{bad.sum()} of {bad.size} differ, first at {np.argwhere(bad)[0]}: "
                           f"{g[bad][:3]} (kernel) != {e[bad][:3]} (oracle)")


def _row_size(jll):
    """The largest finite |jll| of each row, and 1."""
    jll = np.asarray(jll, dtype=np.float64)
    return np.where(np.isfinite(jll), np.abs(jll), 0.0).max(axis=1, initial=0.0) + 1.0


def _seed(key):
    """A seed from a parametrization, the same in every process (hash() of str is not)."""
    return zlib.crc32(repr(key).encode())


# ------------------------------------------------------------------------ jll_diag_dense
# (n_samples, n_features, n_classes): 4-feature passes and a tail, and the edge shapes
DIAG_SHAPES = {"rows": (37, 9, 5), "zero-rows": (0, 4, 3), "one-row": (1, 6, 3),
               "one-class": (12, 5, 1), "one-feature": (12, 1, 4), "many-classes": (8, 7, 70)}
_DIAG_CASES = {}


def _diag_case(model, dtype, shape):
    """(X, tables, jll oracle) of a diagonal model; NaN = missing, with an all-NaN row, a
    complete row and a class of prior 0 (log prior -inf) where there are rows and classes for
    them; Gaussian variances from 1e-3 to 1e3, Poisson rates from 1e-9 to 1e3; Student-t scales
    from 1e-3 to 1e3 and degrees of freedom from 0.1 to 1e3, per class and feature, or
    ("student_t_shared") per class, the same for every feature (the kernel's product path),
    with values beyond 1e150 standard units in float64 (2 log|u| in place of log(1 + u^2));
    negative binomial r from 1e-3 to 1e4, b from 1e-2 to 1e3, its table (``negbin_table``) and
    counts at its last entry, beyond it and fractional (scored with lgamma)."""
    key = (model, dtype, shape)
    if key in _DIAG_CASES:
        return _DIAG_CASES[key]
    n, d, k = DIAG_SHAPES[shape]
    rng = np.random.default_rng(_seed(key))
    log_prior = np.log(rng.dirichlet(np.ones(k)))
    if k > 2:
        log_prior[1] = -np.inf
    if model == "gaussian":
        theta = rng.normal(0.0, 2.0, (k, d))
        var = 10.0 ** rng.uniform(-3, 3, (k, d))
        X = theta[rng.integers(0, k, n)] + rng.normal(0.0, 3.0, (n, d))
    elif model == "poisson":
        lam = 10.0 ** rng.uniform(-9, 3, (k, d))
        X = rng.poisson(lam[rng.integers(0, k, n)]).astype(np.float64)
    elif model == "negbin":
        r = 10.0 ** rng.uniform(-3, 4, (k, d))
        b = 10.0 ** rng.uniform(-2, 3, (k, d))
        X = rng.poisson(5.0, (n, d)).astype(np.float64)
        for value in (NEGBIN_TABLE_MAX, NEGBIN_TABLE_MAX + 1, 100.0, 2.5):
            X[rng.random((n, d)) < 0.08] = value
    else:
        loc = rng.normal(0.0, 2.0, (k, d))
        scale = 10.0 ** rng.uniform(-3, 3, (k, d))
        dof = 10.0 ** rng.uniform(-1, 3, (k, 1) if model == "student_t_shared" else (k, d))
        dof = np.broadcast_to(dof, (k, d))
        X = loc[rng.integers(0, k, n)] + rng.standard_t(2.0, (n, d)) * 3.0
        if n > 4 and dtype == np.float64:
            X[4, :2] = [1e149, -3e149][:d]
    X[rng.random((n, d)) < 0.25] = np.nan
    if n >= 3:
        X[1] = np.nan  # nothing observed: the log prior
        X[2] = np.nan_to_num(X[2], nan=1.0)  # complete
    X = X.astype(dtype)
    Xd = X.astype(np.float64)
    if model == "gaussian":
        jll = gaussian_nb_jll(Xd, theta, var, log_prior)
        A, S = theta.T.copy(), (-0.5 / var).T.copy()
        B = (-0.5 * np.log(2 * np.pi * var)).T.copy()
        model_kind = 0
    elif model == "poisson":
        jll = poisson_jll(Xd, lam, log_prior)
        A, S, B = np.log(lam).T.copy(), np.zeros((d, k)), (-lam).T.copy()
        model_kind = 1
    elif model == "negbin":
        jll = negative_binomial_jll(Xd, r, b, log_prior)
        A, S, B = (-np.log1p(b)).T.copy(), r.T.copy(), (-r * np.log1p(1 / b)).T.copy()
        P = negbin_table(-np.log1p(b), r).T.copy()
        model_kind = 3
    else:
        jll = student_t_jll(Xd, loc, scale, dof, log_prior)
        A, S = loc.T.copy(), (1.0 / (np.sqrt(dof) * scale)).T.copy()
        B = (gammaln((dof + 1) / 2) - gammaln(dof / 2) - 0.5 * np.log(dof * np.pi)
             - np.log(scale)).T.copy()
        P = (-(dof + 1) / 2).T.copy()
        P = P[:1].copy() if model == "student_t_shared" else P
        model_kind = 2
    if model_kind < 2:
        P = np.empty((0, k))
    bias = log_prior + B.sum(axis=0)
    case = (X, (A, S, B, P, log_prior, bias), model_kind, jll, _row_size(jll))
    _DIAG_CASES[key] = case
    return case


@pytest.mark.parametrize("module", SCORING_MODULES, ids=MODULE_IDS)
@pytest.mark.parametrize("model", ["gaussian", "poisson", "student_t", "student_t_shared",
                                   "negbin"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("readonly", [False, True], ids=["writable", "readonly"])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("shape", list(DIAG_SHAPES))
def test_jll_diag_dense_matches_scipy(module, model, dtype, readonly, n_threads, shape):
    """jll_diag_dense equals scipy.stats norm.logpdf / poisson.logpmf / t.logpdf (and the
    negative binomial log-pmf) summed over the observed
    features plus the log prior, normalised with logsumexp (each output kind): NaN
    marginalised, an all-NaN row scores its prior, a class of prior 0 gets -inf / posterior 0."""
    X, tables, model_kind, jll, size = _diag_case(model, dtype, shape)
    model_kind = module.DIAGONAL_MODELS[model_kind]  # the kernel's own names for the models
    X, *tables = _inputs(readonly, X, *tables)
    for kind in KINDS:
        def call(threads):
            out = np.full((X.shape[0], jll.shape[1]), np.nan, dtype=dtype)
            assert module.jll_diag_dense(X, *tables, model_kind, kind, out, threads) == 0
            return (out,)

        (out,) = _run(call, n_threads)
        _close(out, normalise(jll, kind), dtype, size)
        if kind == OUT_PROBA and len(out):
            np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=RTOL[dtype])


def test_negbin_table_matches_mpmath():
    """negbin_table's lgamma(r + k) - lgamma(r) - k log(1 + b), k <= NEGBIN_TABLE_MAX, equals
    40-digit mpmath to 1e-14 of the terms' size for r from 1e-3 to 3e12, where a difference of
    two float64 lgammas is off by 1e-4 (lgamma(3e12) ~ 8e13)."""
    r = np.array([[1e-3, 0.5, 1.0, 37.2], [1e4, 1e8, 3e12, 2.5]])  # (n_features, n_classes)
    b = np.array([[1e-2, 1.0, 3.0, 1e3], [10.0, 1e6, 7.0, 0.2]])
    A = -np.log1p(b)
    width = NEGBIN_TABLE_MAX + 1
    table = negbin_table(A.T, r.T).T
    assert table.shape == (2 * width, 4) and table.flags.c_contiguous
    with mpmath.workdps(40):
        for (j, c), rate in np.ndenumerate(r):
            for k in range(width):
                exact = (mpmath.loggamma(mpmath.mpf(rate) + k) - mpmath.loggamma(rate)
                         - k * mpmath.log1p(b[j, c]))
                size = 1.0 + k * (abs(np.log(rate + k)) + abs(A[j, c]))
                assert abs(float(table[j * width + k, c] - exact)) <= 1e-14 * size, (j, c, k)


# ------------------------------------------------------------------------ quadratic_finish
QUAD_SHAPES = {"rows": (29, 6, 5), "zero-rows": (0, 3, 2), "one-row": (1, 5, 3),
               "one-class": (10, 4, 1), "one-feature": (10, 1, 3), "many-classes": (6, 9, 64)}


@pytest.mark.parametrize("module", SCORING_MODULES, ids=MODULE_IDS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shared", [False, True], ids=["qda-blocks", "lda-one-block"])
@pytest.mark.parametrize("readonly", [False, True], ids=["writable", "readonly"])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("shape", list(QUAD_SHAPES))
def test_quadratic_finish_matches_numpy(module, dtype, shared, readonly, n_threads, shape):
    """const[c] - ||Z[:, block c] - offset[c]||^2 / 2, as jll / log-posterior / posterior, for
    one block per class (QDA) or one shared block (LDA); a const of -inf (a class of prior 0)
    gives -inf / 0, and far rows (jll near -1e8) still normalise."""
    n, d, k = QUAD_SHAPES[shape]
    rng = np.random.default_rng(n * 1000 + d * 100 + k)
    n_blocks = 1 if shared else k
    Z = rng.normal(0.0, 2.0, (n, n_blocks * d))
    if n > 3:
        Z[3] *= 1e4
    offset = rng.normal(size=(k, d))
    block = np.zeros(k, np.intp) if shared else rng.permutation(k).astype(np.intp)
    const = rng.normal(size=k) * 10
    if k > 2:
        const[2] = -np.inf
    jll = quadratic_reference(Z, offset, block, const)
    Z, offset, block, const = _inputs(readonly, Z, offset, block, const)
    for kind in KINDS:
        def call(threads):
            out = np.full((n, k), np.nan, dtype=dtype)
            assert module.quadratic_finish(Z, offset, block, const, kind, out, threads) == 0
            return (out,)

        (out,) = _run(call, n_threads)
        _close(out, normalise(jll, kind), dtype, _row_size(jll))


@pytest.mark.parametrize("module", SCORING_MODULES, ids=MODULE_IDS)
@pytest.mark.parametrize("shared", [False, True], ids=["qda", "lda"])
def test_quadratic_finish_of_whitened_rows_is_the_gaussian_log_density(module, shared):
    """With Z = (X - shift) W_c (W_c W_c^T = the precision), offset = (mean_c - shift) W_c and
    const = log prior + log det(P_c) / 2 - d log(2 pi) / 2, the kernel gives
    scipy.stats.multivariate_normal's log density plus the log prior. 1e-10 relative: the
    oracle factors the covariances by eigendecomposition, the whitening by Cholesky (covariances
    with condition numbers near 10 here)."""
    rng = np.random.default_rng(7)
    n, d, k = 40, 5, 4
    means = rng.normal(0, 3, (k, d))
    covs = []
    for _ in range(1 if shared else k):
        A = rng.normal(size=(d, d))
        covs.append(A @ A.T + d * np.eye(d))
    covs = np.array(covs)
    log_prior = np.log(rng.dirichlet(np.ones(k)))
    X = means[rng.integers(0, k, n)] + rng.normal(size=(n, d))
    shift = X.mean(axis=0)
    W = np.hstack([np.linalg.cholesky(np.linalg.inv(S)) for S in covs])
    block = np.zeros(k, np.intp) if shared else np.arange(k, dtype=np.intp)
    offset = np.array([(means[c] - shift) @ W[:, block[c] * d:(block[c] + 1) * d]
                       for c in range(k)])
    const = np.array([log_prior[c] - 0.5 * np.linalg.slogdet(covs[block[c]])[1]
                      - 0.5 * d * np.log(2 * np.pi) for c in range(k)])
    Z = (X - shift) @ W
    out = np.empty((n, k))
    assert module.quadratic_finish(Z, offset, block, const, OUT_JLL, out, 1) == 0
    expected = full_gaussian_jll(X, means, covs[0] if shared else covs, log_prior)
    np.testing.assert_allclose(out, expected, rtol=1e-10)


# ------------------------------------------------------------------------ jll_categorical
# (n_samples, n_categories per feature, n_classes); "rows" has 4-feature passes, a tail and a
# feature without categories (every code of it unknown)
CAT_SHAPES = {"rows": (31, (3, 1, 5, 0, 4, 7, 2), 4), "zero-rows": (0, (2, 3), 3),
              "one-row": (1, (3, 2, 4, 2, 5), 3), "one-class": (9, (2, 4, 3), 1),
              "one-feature": (9, (6,), 3), "many-classes": (7, (3, 5, 2, 4, 3), 50)}


def _extreme_codes(dtype):
    """Codes of every kind the dtype can hold: missing (negative, huge negative, NaN, -0.0 is
    code 0), unknown (beyond K, up to the dtype's largest)."""
    if np.dtype(dtype).kind == "f":
        big = [2.0**53 + 1, 9.0e15, 1e15, float(np.finfo(dtype).max)]
        return [-1.0, -0.0, np.nan, -1e15, -7.0] + big
    info = np.iinfo(dtype)
    return [-1, int(info.min), int(info.min) + 1, -7, int(info.max), int(info.max) - 1, 2**20]


def _codes(rng, n, n_categories, dtype, missing=0.2, unknown=0.1):
    """Codes in range, with missing and unknown ones from _extreme_codes sprinkled in and an
    all-missing row (where there are 3 rows)."""
    d = len(n_categories)
    X = np.empty((n, d), dtype=object)
    for j, K in enumerate(n_categories):
        X[:, j] = rng.integers(0, max(K, 1), n)
    special = _extreme_codes(dtype)
    pick = rng.random((n, d))
    X[pick < missing + unknown] = [special[i] for i in rng.integers(0, len(special),
                                                                     (pick < missing + unknown).sum())]
    if n >= 3:
        X[2] = -1
    return X.astype(dtype)


_CAT_CASES = {}


def _categorical_case(dtype, shape):
    key = (dtype, shape)
    if key not in _CAT_CASES:
        n, n_categories, k = CAT_SHAPES[shape]
        rng = np.random.default_rng(_seed(key))
        X = _codes(rng, n, n_categories, dtype)
        tables = [np.log(rng.dirichlet(np.ones(K), size=k)) if K else np.zeros((k, 0))
                  for K in n_categories]
        if n_categories[0] > 1 and k > 1:
            tables[0][1, 0] = -np.inf  # alpha = 0: a category class 1 never had
        log_prior = np.log(rng.dirichlet(np.ones(k)))
        if k > 2:
            log_prior[2] = -np.inf
        table = np.ascontiguousarray(np.hstack(tables).T)  # feature-major (sum K, k)
        offsets = np.r_[0, np.cumsum(n_categories)].astype(np.intp)
        jll = categorical_nb_jll(X, tables, log_prior, skip_unknown=True)
        unknown = sum(1 for row in X.tolist() for j, v in enumerate(row)
                      if v == v and v >= n_categories[j])
        _CAT_CASES[key] = (X, offsets, table, log_prior, jll, unknown)
    return _CAT_CASES[key]


@pytest.mark.parametrize("module", SCORING_MODULES, ids=MODULE_IDS)
@pytest.mark.parametrize("dtype", DATA_DTYPES)
@pytest.mark.parametrize("readonly", [False, True], ids=["writable", "readonly"])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("shape", list(CAT_SHAPES))
def test_jll_categorical_matches_reference(module, dtype, readonly, n_threads, shape):
    """log prior + the table entries of the observed codes (missing ones -- negative however
    large, NaN -- and unknown ones -- beyond K, up to the dtype's largest -- skipped), as jll /
    log-posterior / posterior into float32 and float64; the unknown codes are counted, no code
    is fractional. A table entry or prior of -inf gives -inf / 0."""
    X, offsets, table, log_prior, jll, unknown = _categorical_case(dtype, shape)
    X, offsets, table, bias = _inputs(readonly, X, offsets, table, log_prior)
    # every kind into float64, and the posteriors into float32 too
    for out_dtype, kind in [(np.float64, OUT_JLL), (np.float64, OUT_LOG_PROBA),
                            (np.float64, OUT_PROBA), (np.float32, OUT_PROBA)]:
        counts = []

        def call(threads):
            out = np.full((X.shape[0], table.shape[1]), np.nan, dtype=out_dtype)
            counts.append(module.jll_categorical(X, offsets, table, bias, kind, out,
                                                 threads))
            return (out,)

        (out,) = _run(call, n_threads)
        # one thread's counts (more race: test_jll_categorical_counts_are_exact_on_threads)
        assert counts[-1] == (0, unknown, 0)
        _close(out, normalise(jll, kind), out_dtype, _row_size(jll))


@pytest.mark.parametrize("module", SCORING_MODULES, ids=MODULE_IDS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_jll_categorical_counts_fractional_codes(module, dtype):
    """Codes with a fractional part (positive, negative, below 1, the largest fraction float32
    holds) are counted, whatever else the row has; the caller raises for them."""
    X = np.array([[1.5, 0.0], [-0.5, np.nan], [0.25, -1.0], [8388607.5, 1.0], [1.0, 0.0]],
                 dtype=dtype)
    offsets = np.array([0, 3, 5], dtype=np.intp)
    table = np.log(np.full((5, 2), 0.5))

    out = np.empty((5, 2))
    # 8388607.5 >= K too: unknown and fractional
    assert module.jll_categorical(X, offsets, table, np.zeros(2), 0, out, 1) == (0, 1, 4)


def test_jll_categorical_counts_are_exact_on_threads():
    """The unknown and fractional codes met are counted exactly on two threads too, call after
    call (the race showed in about 2% of calls of this size on two cores; the kernel code is
    the same in both builds)."""
    module = selected_jll
    X = np.zeros((9, 3))
    X[1, 1], X[3, 2], X[5, 0], X[7, 1] = 9e15, 1e308, 0.5, 2.5  # 2 unknown, 2 fractional
    offsets = np.array([0, 2, 6, 9], dtype=np.intp)
    table, bias, out = np.zeros((9, 1)), np.zeros(1), np.empty((9, 1))
    for _ in range(200):
        assert module.jll_categorical(X, offsets, table, bias, 0, out, 2) == (0, 2, 2)


# ------------------------------------------------------------------------ moments_dense
# (n_samples, n_features, n_classes): feature blocks of 8 for the threads, and the edge shapes
MOMENT_SHAPES = {"rows": (50, 19, 4), "zero-rows": (0, 9, 2), "one-row": (1, 5, 2),
                 "one-class": (20, 17, 1), "one-feature": (20, 1, 3),
                 "many-classes": (60, 16, 45)}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("readonly", [False, True], ids=["writable", "readonly"])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("shape", list(MOMENT_SHAPES))
@pytest.mark.parametrize("soft", [False, True], ids=["labels", "soft"])
def test_moments_dense_matches_numpy(dtype, readonly, n_threads, shape, soft):
    """Per class and feature over the observed values: weight, weighted mean (0 without weight)
    and weighted squared deviations, for data far from 0 (1e6 + noise: no cancellation), NaN
    anywhere, an all-NaN row, a class without rows, zero weights, rows counted for several
    classes; the outputs are overwritten."""
    n, d, k = MOMENT_SHAPES[shape]
    rng = np.random.default_rng(n * 100 + d + k)
    X = (1e6 + rng.normal(0.0, 1.0, (n, d)) * 10.0 ** rng.uniform(-3, 3, d)).astype(dtype)
    X[rng.random((n, d)) < 0.2] = np.nan
    y_idx = rng.integers(0, k, n).astype(np.intp)
    if k > 1:
        y_idx[y_idx == k - 1] = 0  # a class without rows
    if n > 3:
        X[1] = np.nan
        X[y_idx == y_idx[3], 0] = np.nan  # a feature a class never observes
    w = rng.uniform(0.0, 3.0, n)
    w[::5] = 0.0
    rows, y_idx, w = _entries(rng, y_idx, w, k, soft)
    expected = diagonal_moments_reference(X[rows], y_idx, w, k)
    X, rows, y_idx, w = _inputs(readonly, X, rows, y_idx, w)

    def call(threads):
        outs = tuple(np.full((k, d), np.nan) for _ in range(3))
        _counts.moments_dense(X, rows, y_idx, w, *outs, threads)
        return outs

    weight, mean, m2 = _run(call, n_threads)
    np.testing.assert_allclose(weight, expected[0], rtol=1e-12, atol=0)
    np.testing.assert_allclose(mean, expected[1], rtol=1e-12, atol=0)
    # a mean is rounded to about 1e-10 (of 1e6), which moves m2 by weight * 1e-20: that much
    # absolute (m2 of one observation is such a rounding, not 0)
    np.testing.assert_allclose(m2, expected[2], rtol=1e-12, atol=1e-16)


# ------------------------------------------------------------------------ count_categorical
COUNT_SHAPES = {"rows": (60, (3, 1, 5, 0, 4), 3), "zero-rows": (0, (2, 3), 2),
                "one-row": (1, (3, 2), 2), "one-class": (25, (4, 2, 3), 1),
                "one-feature": (25, (5,), 3), "many-classes": (80, (3, 4), 37)}


@pytest.mark.parametrize("dtype", DATA_DTYPES)
@pytest.mark.parametrize("readonly", [False, True], ids=["writable", "readonly"])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("shape", list(COUNT_SHAPES))
@pytest.mark.parametrize("soft", [False, True], ids=["labels", "soft"])
def test_count_categorical_matches_reference(dtype, readonly, n_threads, shape, soft):
    """The weights of each class's codes per feature and category, added to the counts already
    there; missing codes (negative however large, NaN) and codes beyond K (up to 2**53 for
    floats, the dtype's largest but int64's, whose top codes are test_codes_beyond_2_63...)
    skipped."""
    n, n_categories, k = COUNT_SHAPES[shape]
    rng = np.random.default_rng(n + 7 * k)
    X = _codes(rng, n, n_categories, dtype, missing=0.25, unknown=0.15)
    y_idx = rng.integers(0, k, n).astype(np.intp)
    w = rng.uniform(0.5, 2.0, n)
    offsets = np.r_[0, np.cumsum(n_categories)].astype(np.intp)
    before = rng.integers(0, 5, (k, offsets[-1])).astype(np.float64)
    rows, y_idx, w = _entries(rng, y_idx, w, k, soft)
    expected = before + category_counts_reference(X[rows], y_idx, w, n_categories, k)
    X, rows, y_idx, w, offsets = _inputs(readonly, X, rows, y_idx, w, offsets)

    def call(threads):
        count = before.copy()
        _counts.count_categorical(X, rows, y_idx, w, offsets, count, threads)
        return (count,)

    (count,) = _run(call, n_threads)
    np.testing.assert_allclose(count, expected, rtol=1e-12, atol=0)




@pytest.mark.parametrize("code", [I64_MAX,
                                  I64_ROUNDS_UP,
                                  I64_ROUNDS_UP - 1])
def test_count_categorical_skips_int64_codes_beyond_k(code):
    """An int64 code beyond K is skipped, up to the largest int64 (the docstring's contract; the
    model keeps such codes out once codes_status reports them too large)."""
    X = np.array([[code], [1]], dtype=np.int64)
    count = np.zeros((1, 2))
    _counts.count_categorical(X, np.arange(2), np.zeros(2, np.intp), np.ones(2),
                              np.array([0, 2], np.intp), count, 1)
    np.testing.assert_array_equal(count, [[0.0, 1.0]])


# ------------------------------------------------------------------------ codes_status
def _codes_status(X):
    largest = np.full(X.shape[1], -5, dtype=np.int64)
    return _checks.codes_status(X, largest), largest


def _assert_codes_status(X):
    """codes_status answers as its definition does (integer codes exactly, whatever their
    size)."""
    status, largest = _codes_status(X)
    want, want_largest = codes_status_reference(X)
    assert status == want, (status, want)
    if status == _checks.CodesStatus.CODES_OK:
        assert largest.tolist() == want_largest


S = _checks.CodesStatus
CODE_CASES = [
    # (dtype, value, expected status or None for 'the oracle decides')
    pytest.param(np.int64, I64_MAX, S.CODES_OK, id="i64-max"),
    pytest.param(np.int64, I64_ROUNDS_UP, S.CODES_OK, id="i64-2**63-512"),
    pytest.param(np.int64, I64_ROUNDS_UP - 1, None, id="i64-2**63-513"),
    pytest.param(np.int64, 2**53 + 1, None, id="i64-2**53+1"),
    pytest.param(np.int64, 2**53, None, id="i64-2**53"),
    pytest.param(np.int64, 9 * 10**15 - 1, S.CODES_OK, id="i64-9e15-1"),
    pytest.param(np.int64, I64_MIN, S.CODES_OK, id="i64-min"),
    pytest.param(np.int64, -(2**62), S.CODES_OK, id="i64-huge-negative"),
    pytest.param(np.int32, int(np.iinfo(np.int32).max), S.CODES_OK, id="i32-max"),
    pytest.param(np.int32, int(np.iinfo(np.int32).min), S.CODES_OK, id="i32-min"),
    pytest.param(np.float64, 2.0**53 + 1, S.CODES_TOO_LARGE, id="f64-2**53+1"),
    pytest.param(np.float64, 9.0e15, S.CODES_TOO_LARGE, id="f64-9e15"),
    pytest.param(np.float64, 8999999999999998.0, S.CODES_OK, id="f64-below-9e15"),
    pytest.param(np.float64, np.inf, S.CODES_NOT_INTEGER, id="f64+inf"),
    pytest.param(np.float64, -np.inf, S.CODES_NOT_INTEGER, id="f64-inf"),
    pytest.param(np.float64, 1e300, S.CODES_TOO_LARGE, id="f64-1e300"),
    pytest.param(np.float64, -0.0, S.CODES_OK, id="f64-neg-zero"),
    pytest.param(np.float64, -0.5, S.CODES_NOT_INTEGER, id="f64-neg-half"),
    pytest.param(np.float64, 1.0 - 2.0**-53, S.CODES_NOT_INTEGER, id="f64-below-1"),
    pytest.param(np.float64, -8999999999999998.0, S.CODES_OK, id="f64-negative-above-9e15"),
    pytest.param(np.float64, -9.0e15, S.CODES_OK, id="f64-neg-9e15"),
    pytest.param(np.float64, -1e300, S.CODES_OK, id="f64-neg-1e300"),
    pytest.param(np.float64, -(2.0**63), S.CODES_OK, id="f64-neg-2**63"),
    pytest.param(np.float32, 2.0**24, S.CODES_OK, id="f32-2**24"),
    pytest.param(np.float32, 2.0**24 - 1, S.CODES_OK, id="f32-2**24-1"),
    pytest.param(np.float32, 2.0**24 + 2, S.CODES_OK, id="f32-2**24+2"),
    pytest.param(np.float32, 2.0**23 - 0.5, S.CODES_NOT_INTEGER, id="f32-2**23-0.5"),
    pytest.param(np.float32, float(np.finfo(np.float32).max), S.CODES_TOO_LARGE, id="f32-max"),
    pytest.param(np.float32, np.inf, S.CODES_NOT_INTEGER, id="f32+inf"),
    pytest.param(np.float32, -np.inf, S.CODES_NOT_INTEGER, id="f32-inf"),
    pytest.param(np.float32, -0.0, S.CODES_OK, id="f32-neg-zero"),
    pytest.param(np.float32, -float(np.finfo(np.float32).max), S.CODES_OK,
                 id="f32-neg-max"),
]


@pytest.mark.parametrize(("dtype", "value", "status"), CODE_CASES)
@pytest.mark.parametrize("readonly", [False, True], ids=["writable", "readonly"])
def test_codes_status_extreme_codes(dtype, value, status, readonly):
    """One extreme code among ordinary ones (and a NaN or a negative code): the status and,
    when valid, the largest code of each column, exactly."""
    missing = np.nan if np.dtype(dtype).kind == "f" else -3
    X = np.array([[0, 2], [value, 1], [3, missing]], dtype=dtype)
    assert X[1, 0] == value or (value != value)
    (X,) = _inputs(readonly, X)
    if status is not None:
        assert codes_status_reference(X)[0] == status  # the oracle agrees
    _assert_codes_status(X)


def _code_values(dtype):
    """Hypothesis elements: small codes, missing ones and the dtype's boundary values, without
    those of the xfail cases above (a known wrong answer)."""
    small = st.integers(-3, 12)
    if np.dtype(dtype).kind == "f":
        top = 2.0**24 if dtype == np.float32 else 2.0**53
        special = st.sampled_from([np.nan, -0.0, 0.5, -0.5, 2.5, np.inf, -np.inf, 9.0e15,
                                   8999999999999998.0, -8999999999999998.0, 2.0**53 + 2,
                                   top, top - 1, 1e300])
        return st.one_of(small.map(float), special,
                         st.floats(-(2.0**52), 2.0**54, width=32 if dtype == np.float32 else 64))
    info = np.iinfo(dtype)
    high = min(int(info.max), 2**53)
    return st.one_of(small, st.sampled_from([int(info.min), high, min(high, 9 * 10**15 - 1)]),
                     st.integers(int(info.min), high))


@settings(deadline=None, max_examples=150)
@given(dtype=st.sampled_from(DATA_DTYPES), data=st.data())
def test_codes_status_property(dtype, data):
    """Any small matrix of codes: the first problem in row-major order, or CODES_OK and the
    largest code of each column exactly (-1 for a column without one)."""
    n = data.draw(st.integers(0, 6))
    d = data.draw(st.integers(1, 4))
    values = data.draw(st.lists(_code_values(dtype), min_size=n * d, max_size=n * d))
    with np.errstate(over="ignore"):  # float32: 1e300 becomes inf, one more case
        X = np.array(values, dtype=dtype).reshape(n, d)
    _assert_codes_status(X)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_codes_status_reports_the_first_problem(dtype):
    """A fraction before a too-large code is reported as such, and the other way round (row
    order, then column order)."""
    big = float(np.finfo(dtype).max)
    X = np.array([[0.0, big], [0.5, 1.0]], dtype=dtype)
    assert _codes_status(X)[0] == S.CODES_TOO_LARGE
    assert _codes_status(np.ascontiguousarray(X[::-1]))[0] == S.CODES_NOT_INTEGER
    assert _codes_status(np.array([[0.5, big]], dtype=dtype))[0] == S.CODES_NOT_INTEGER


# --------------------------------------------------------- CategoricalNB with extreme codes
@pytest.mark.parametrize("code", [pytest.param(I64_MAX, id="i64-max"),
                                  pytest.param(I64_ROUNDS_UP, id="i64-2**63-512"),
                                  pytest.param(I64_ROUNDS_UP - 1, id="i64-2**63-513"),
                                  pytest.param(2**53 + 1, id="i64-2**53+1"),
                                  pytest.param(2**24, id="i64-2**24")])
def test_categorical_nb_refuses_codes_too_large(code):
    """fit refuses an int64 code beyond what the model can index with a ValueError naming the
    problem (never counts it as another category); predict refuses it as unknown, or with
    handle_unknown="ignore" marginalises it like a missing value."""
    X = np.array([[0, 1], [1, code], [2, 0]], dtype=np.int64)
    y = np.array([0, 1, 1])
    with pytest.raises(ValueError, match=r"too large|more than \d+ categories"):
        CategoricalNB().fit(X, y)
    model = CategoricalNB().fit(np.array([[0, 1], [1, 0], [2, 0]]), y)
    row = np.array([[0, code]], dtype=np.int64)
    with pytest.raises(ValueError, match="too large|not seen in training"):
        model.predict_log_proba(row)
    model.set_params(handle_unknown="ignore")
    np.testing.assert_array_equal(model.predict_log_proba(row),
                                  model.predict_log_proba(np.array([[0, -1]])))


@pytest.mark.parametrize("value", [2.0**53 + 1, 1e300, 2.0**24])
def test_categorical_nb_refuses_float_codes_too_large(value):
    X = np.array([[0.0, 1.0], [1.0, value], [2.0, 0.0]])
    with pytest.raises(ValueError, match=r"too large|more than \d+ categories"):
        CategoricalNB().fit(X, [0, 1, 1])


# ------------------------------------------------------------------------ encode_compact
def _encode(y, max_span):
    classes, codes = np.full(y.size, 99, dtype=y.dtype), np.full(y.size, -7, dtype=np.intp)
    k = _counts.encode_compact(y, classes, codes, max_span)
    return k, classes, codes


def _assert_encode_compact(y, max_span):
    k, classes, codes = _encode(y, max_span)
    expected = encode_compact_reference(y, max_span)
    if expected is None:
        assert k == -1
        return
    assert k == len(expected[0])
    assert classes.dtype == y.dtype
    np.testing.assert_array_equal(classes[:k], expected[0])
    np.testing.assert_array_equal(codes, expected[1])


def _span_cases():
    cases = []
    for dtype in LABEL_DTYPES:
        info = np.iinfo(dtype)
        lo, hi = int(info.min), int(info.max)
        name = np.dtype(dtype).name
        cases += [
            pytest.param(dtype, [lo, hi], hi - lo, id=f"{name}-full-span"),  # wraps in the dtype
            pytest.param(dtype, [lo, hi], hi - lo - 1, id=f"{name}-full-span-refused"),
            pytest.param(dtype, [hi, hi - 2, hi, hi - 1], 2, id=f"{name}-top"),
            pytest.param(dtype, [lo + 1, lo, lo + 3], 3, id=f"{name}-bottom"),
            pytest.param(dtype, [hi], 0, id=f"{name}-one-label"),
        ]
        if lo < 0:
            cases.append(pytest.param(dtype, [-1, 0, 1, -1], 2, id=f"{name}-around-0"))
    return cases


@pytest.mark.parametrize(("dtype", "labels", "max_span"), _span_cases())
@pytest.mark.parametrize("readonly", [False, True], ids=["writable", "readonly"])
def test_encode_compact_extreme_labels(dtype, labels, max_span, readonly):
    """np.unique(y, return_inverse=True), or -1 when max - min exceeds max_span: spans that wrap
    around in the label's own type (int8 -128..127 is 255; uint64 0..2**64-1), labels at the top
    and bottom of every type, a single label. Spans up to 2**64 - 1 (the largest max_span can
    say is 2**63 - 1, so the full uint64 and int64 spans are refused)."""
    if max_span > 2**63 - 1:
        max_span = 2**63 - 1
    if max_span > 2**16:  # a span the kernel would allocate for: refused below instead
        k, _, _ = _encode(np.array(labels, dtype=dtype), 2**16)
        assert k == -1
        return
    (y,) = _inputs(readonly, np.array(labels, dtype=dtype))
    _assert_encode_compact(y, max_span)


@settings(deadline=None, max_examples=200)
@given(dtype=st.sampled_from(LABEL_DTYPES), data=st.data())
def test_encode_compact_property(dtype, data):
    """Labels clustered anywhere in the dtype's range (a base and small offsets, clipped at the
    ends) or drawn over the whole range, against any max_span up to 100."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    base = data.draw(st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0])))
    offsets = data.draw(st.lists(st.one_of(st.integers(-40, 40), st.integers(lo - hi, hi - lo)),
                                 min_size=1, max_size=30))
    y = np.array([min(max(base + o, lo), hi) for o in offsets], dtype=dtype)
    _assert_encode_compact(y, data.draw(st.integers(0, 100)))
