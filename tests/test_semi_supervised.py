"""SemiSupervised: EM over unlabelled rows (Nigam, McCallum, Thrun & Mitchell 2000, EM-lambda).

The main oracle is a brute-force EM written here in NumPy/SciPy: each model's M-step from a
matrix W of per-class row weights (one-hot times the weight for a labelled row, the
responsibilities for an unlabelled one) and its E-step with logsumexp. The smoothing of the
naive Bayes models is the posterior mode of a prior, whose log density the reference adds to the
log-likelihood in the objective. fastgen enters the reference only as the source of the data.
"""

import copy
from decimal import Decimal
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.special import gammaln, logsumexp, softmax
from scipy.stats import multivariate_normal, norm

import fastgen
from fastgen import (
    BaselineClassifier,
    BernoulliNB,
    CategoricalNB,
    ComplementNB,
    ConvergenceWarning,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MixedNB,
    MultinomialNB,
    PoissonNB,
    QuadraticDiscriminantAnalysis,
    SemiSupervised,
)

N_CLASSES = 3
MIXED_TYPES = ["gaussian", "categorical", "bernoulli", "poisson", "multinomial", "multinomial"]


# ---------------------------------------------------------------------------------------
# Data: three classes, the first rows labelled (n_labelled of each class), the rest -1.


def _features(kind, y, rng):
    n = len(y)
    if kind == "counts":
        rates = np.array([[4.0, 1.0, 0.5, 2.0, 0.2, 1.0],
                          [1.0, 3.0, 2.0, 0.3, 1.0, 0.5],
                          [0.5, 0.8, 3.0, 1.5, 2.5, 0.1]])
        return rng.poisson(rates[y]).astype(np.float64)
    if kind == "codes":
        probs = np.array([[0.6, 0.2, 0.1, 0.1], [0.1, 0.5, 0.3, 0.1], [0.2, 0.1, 0.2, 0.5]])
        X = np.column_stack([(rng.random(n)[:, None] > np.cumsum(probs[(y + j) % 3], axis=1)
                              ).sum(axis=1) for j in range(3)])
        return np.minimum(X, 3).astype(np.float64)
    if kind == "gaussian":
        means = np.array([[0.0, 0.0, 0.0], [1.5, -1.0, 0.5], [-1.0, 1.5, 1.0]])
        scales = np.array([1.0, 0.7, 1.4])
        return means[y] + scales[y, None] * rng.standard_normal((n, 3))
    if kind == "mixed":
        return np.column_stack([
            np.array([-1.0, 0.5, 1.5])[y] + rng.standard_normal(n),
            _features("codes", y, rng)[:, 0],
            rng.poisson(np.array([0.3, 1.5, 0.8])[y]),
            rng.poisson(np.array([2.0, 0.5, 1.0])[y]),
            rng.poisson(np.array([[3.0, 1.0], [1.0, 2.0], [0.5, 0.5]])[y]),
        ]).astype(np.float64)
    raise ValueError(kind)


def _data(kind, seed=0, n_labelled=8, n_unlabelled=36, weighted=True):
    """(X, y with -1 for the unlabelled rows, sample_weight). Every category of "codes" occurs
    among the labelled rows of every class, so the labelled model knows all the codes."""
    rng = np.random.default_rng(seed)
    y_true = np.concatenate([np.repeat(np.arange(N_CLASSES), n_labelled),
                             rng.integers(0, N_CLASSES, n_unlabelled)])
    X = _features(kind, y_true, rng)
    if kind in ("codes", "mixed"):
        column = slice(None) if kind == "codes" else slice(1, 2)
        for c in range(N_CLASSES):
            X[c * n_labelled:c * n_labelled + 4, column] = np.arange(4)[:, None]
    y = y_true.copy()
    y[N_CLASSES * n_labelled:] = -1
    w = rng.uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y))
    return X, y, w


# ---------------------------------------------------------------------------------------
# The reference. A part models some columns: part(X_block, W) -> (loglik, log_prior), loglik(Z)
# the (n, n_classes) log P(z | c) of a block and log_prior the log density (up to a constant)
# of the prior whose posterior mode the part's estimate is.


def _multinomial(alpha):
    def part(X, W):
        N = W.T @ X
        log_theta = np.log(N + alpha) - np.log(N.sum(axis=1, keepdims=True)
                                               + alpha * X.shape[1])
        return (lambda Z: Z @ log_theta.T), alpha * log_theta.sum()
    return part


def _bernoulli(alpha):
    def part(X, W):
        B = (X > 0).astype(np.float64)
        p = (W.T @ B + alpha) / (W.sum(axis=0)[:, None] + 2 * alpha)
        log_p, log_q = np.log(p), np.log1p(-p)

        def loglik(Z):
            Bz = (Z > 0).astype(np.float64)
            return Bz @ log_p.T + (1 - Bz) @ log_q.T
        return loglik, alpha * (log_p + log_q).sum()
    return part


def _categorical(alpha):
    def part(X, W):
        K = int(X.max()) + 1
        onehot = [(X[:, j, None] == np.arange(K)).astype(np.float64) for j in range(X.shape[1])]
        log_theta = []
        for O in onehot:
            N = W.T @ O
            log_theta.append(np.log(N + alpha) - np.log(N.sum(axis=1, keepdims=True) + alpha * K))

        def loglik(Z):
            codes = Z.astype(np.intp)
            return sum(lt[:, codes[:, j]].T for j, lt in enumerate(log_theta))
        return loglik, alpha * sum(lt.sum() for lt in log_theta)
    return part


def _poisson(alpha, beta):
    def part(X, W):
        lam = (W.T @ X + alpha) / (W.sum(axis=0)[:, None] + beta)

        def loglik(Z):
            return Z @ np.log(lam).T - lam.sum(axis=1) - gammaln(Z + 1).sum(axis=1)[:, None]
        return loglik, (alpha * np.log(lam) - beta * lam).sum()
    return part


def _gaussian(var_smoothing=0.0):
    """Per class and feature, the weighted mean and mean squared deviation of the observed
    values, plus var_smoothing times the largest variance of a feature over all the rows; a NaN
    is left out of the fit and of the sum (marginalised)."""
    def part(X, W):
        O = ~np.isnan(X)
        X0 = np.where(O, X, 0.0)
        n = W.T @ O
        mean = (W.T @ X0) / n
        var = np.stack([(W[:, c, None] * O * (X0 - mean[c]) ** 2).sum(axis=0)
                        for c in range(W.shape[1])]) / n
        row = W.sum(axis=1)[:, None] * O
        overall = (row * X0).sum(axis=0) / row.sum(axis=0)
        var = var + var_smoothing * ((row * (X0 - overall) ** 2).sum(axis=0)
                                     / row.sum(axis=0)).max()

        def loglik(Z):
            Zo = ~np.isnan(Z)
            Z0 = np.where(Zo, Z, 0.0)
            return np.column_stack([(Zo * norm.logpdf(Z0, mean[c], np.sqrt(var[c]))).sum(axis=1)
                                    for c in range(len(mean))])
        return loglik, 0.0
    return part


def _means_and_scatters(X, W):
    n = W.sum(axis=0)
    mean = (W.T @ X) / n[:, None]
    return n, mean, [(W[:, c, None] * (X - m)).T @ (X - m) for c, m in enumerate(mean)]


def _lda(covariance="full", shrinkage=0.0):
    """One covariance for all classes: the pooled one, its diagonal, its mean variance times
    the identity, or the identity; shrunk towards its mean variance."""
    def part(X, W):
        n, mean, scatters = _means_and_scatters(X, W)
        cov = sum(scatters) / n.sum()
        d = len(cov)
        if covariance == "diagonal":
            cov = np.diag(np.diag(cov))
        elif covariance == "spherical":
            cov = np.trace(cov) / d * np.eye(d)
        elif covariance == "identity":
            cov = np.eye(d)
        cov = (1 - shrinkage) * cov + shrinkage * np.trace(cov) / d * np.eye(d)
        return (lambda Z: np.column_stack([multivariate_normal(m, cov).logpdf(Z)
                                           for m in mean]), 0.0)
    return part


def _qda(reg_param=0.0):
    def part(X, W):
        n, mean, scatters = _means_and_scatters(X, W)
        covs = [(1 - reg_param) * S / n_c + reg_param * np.eye(len(S))
                for n_c, S in zip(n, scatters)]
        return (lambda Z: np.column_stack([multivariate_normal(m, S).logpdf(Z)
                                           for m, S in zip(mean, covs)]), 0.0)
    return part


def _reference_fit(parts, X, W):
    """(jll function, log prior) of the model whose class weights and statistics are W's."""
    class_weight = W.sum(axis=0)
    with np.errstate(divide="ignore"):
        log_pi = np.log(class_weight) - np.log(class_weight.sum())
    fitted = [(columns, part(X[:, columns], W)) for columns, part in parts]
    return (lambda Z: sum((loglik(Z[:, columns]) for columns, (loglik, _) in fitted),
                          np.tile(log_pi, (len(Z), 1))),
            sum(log_prior for _, (_, log_prior) in fitted))


def reference_em(parts, X, y, w, lam, n_iter):
    """theta_0 from the labelled rows, then n_iter EM-lambda iterations: the final jll function
    and the objective after every iteration (n_iter + 1 values)."""
    lab = y >= 0
    W = np.zeros((len(y), N_CLASSES))
    W[np.flatnonzero(lab), y[lab]] = w[lab]
    jll, log_prior = _reference_fit(parts, X, W)
    objective = []
    for t in range(n_iter + 1):
        J = jll(X)
        objective.append((w[lab] * J[lab, y[lab]]).sum()
                         + lam * (w[~lab] * logsumexp(J[~lab], axis=1)).sum() + log_prior)
        if t < n_iter:
            W[~lab] = lam * w[~lab, None] * softmax(J[~lab], axis=1)
            jll, log_prior = _reference_fit(parts, X, W)
    return jll, np.array(objective)


ALL = slice(None)
MIXED_PARTS = [([0], _gaussian()), ([1], _categorical(0.9)), ([2], _bernoulli(0.9)),
               ([3], _poisson(0.9, 1.0)), ([4, 5], _multinomial(0.9))]

# name: (estimator factory, data kind, reference parts). The models whose estimate is exact (a
# posterior mode or the maximum likelihood), for which EM cannot decrease the objective.
CASES = {
    "multinomial": (lambda: MultinomialNB(alpha=0.5), "counts", [(ALL, _multinomial(0.5))]),
    "bernoulli": (lambda: BernoulliNB(alpha=0.7), "counts", [(ALL, _bernoulli(0.7))]),
    "categorical": (lambda: CategoricalNB(alpha=0.8), "codes", [(ALL, _categorical(0.8))]),
    "poisson": (lambda: PoissonNB(alpha=0.6, beta=0.4), "counts", [(ALL, _poisson(0.6, 0.4))]),
    "gaussian": (lambda: GaussianNB(var_smoothing=0.0), "gaussian", [(ALL, _gaussian())]),
    "lda": (LinearDiscriminantAnalysis, "gaussian", [(ALL, _lda())]),
    "lda_diagonal": (lambda: LinearDiscriminantAnalysis("diagonal"), "gaussian",
                     [(ALL, _lda("diagonal"))]),
    "lda_spherical": (lambda: LinearDiscriminantAnalysis("spherical"), "gaussian",
                      [(ALL, _lda("spherical"))]),
    "lda_identity": (lambda: LinearDiscriminantAnalysis("identity"), "gaussian",
                     [(ALL, _lda("identity"))]),
    "qda": (QuadraticDiscriminantAnalysis, "gaussian", [(ALL, _qda())]),
    "mixed": (lambda: MixedNB(MIXED_TYPES, alpha=0.9, var_smoothing=0.0), "mixed", MIXED_PARTS),
}
# Regularised models: their estimates are no posterior modes, so the objective may fall, but
# each iteration is the same.
REGULARISED = {
    "gaussian_smoothed": (lambda: GaussianNB(var_smoothing=1e-2), "gaussian",
                          [(ALL, _gaussian(1e-2))]),
    "lda_shrunk": (lambda: LinearDiscriminantAnalysis(shrinkage=0.2), "gaussian",
                   [(ALL, _lda(shrinkage=0.2))]),
    "lda_diagonal_shrunk": (lambda: LinearDiscriminantAnalysis("diagonal", shrinkage=0.2),
                            "gaussian", [(ALL, _lda("diagonal", 0.2))]),
    "qda_regularised": (lambda: QuadraticDiscriminantAnalysis(reg_param=0.1), "gaussian",
                        [(ALL, _qda(0.1))]),
}


def _with_nan(X, seed, rate=0.15, complete=None):
    """X with about ``rate`` of its entries missing, every row keeping one observed value, and
    the rows ``complete`` (a mask) all of them."""
    rng = np.random.default_rng(seed)
    X = X.copy()
    holes = rng.random(X.shape) < rate
    holes[:, 0] &= ~holes[:, 1:].all(axis=1)
    if complete is not None:
        holes[complete] = False
    X[holes] = np.nan
    return X


def _assert_rel_close(actual, desired, rtol):
    """Elementwise within rtol of the largest magnitude (log-likelihoods near 0 are sums of
    terms of that size); infinities must agree exactly."""
    actual, desired = np.asarray(actual, dtype=np.float64), np.asarray(desired, dtype=np.float64)
    assert actual.shape == desired.shape
    finite = np.isfinite(desired)
    assert np.array_equal(actual[~finite], desired[~finite])
    assert_allclose(actual[finite], desired[finite], rtol=rtol,
                    atol=rtol * np.abs(desired[finite]).max(initial=1.0))


# ---------------------------------------------------------------------------------------
# 1. Parity with the brute-force EM


@pytest.mark.parametrize("name", list(CASES) + ["multinomial_csr", "bernoulli_csr",
                                                 "poisson_csr", "gaussian_nan"]
                         + list(REGULARISED))
@pytest.mark.parametrize("lam", [1.0, 0.3])
def test_matches_brute_force_em(name, lam):
    model, form = name.removesuffix("_csr").removesuffix("_nan"), name[-4:]
    factory, kind, parts = {**CASES, **REGULARISED}[model]
    X, y, w = _data(kind, seed=1)
    if form == "_nan":
        X = _with_nan(X, seed=2)
    # tol=0: exactly max_iter iterations (the objective changes at each)
    ss = SemiSupervised(factory(), unlabeled_weight=lam, max_iter=4, tol=0.0)
    with pytest.warns(ConvergenceWarning):
        ss.fit(sp.csr_matrix(X) if form == "_csr" else X, y, sample_weight=w)
    assert ss.n_iter_ == 4 and not ss.converged_
    jll, objective = reference_em(parts, X, y, w, lam, 4)
    _assert_rel_close(ss.objective_, objective, 1e-9)
    _assert_rel_close(ss.estimator_.predict_joint_log_proba(X), jll(X), 1e-9)
    _assert_rel_close(ss.predict_joint_log_proba(X), jll(X), 1e-9)
    # the unlabelled rows moved the model: the comparison is not that of theta_0
    jll_0, _ = reference_em(parts, X, y, w, lam, 0)
    assert not np.allclose(jll(X), jll_0(X), rtol=1e-3)


def test_brute_force_em_converged():
    """At convergence (tight tol) too, for a model whose objective has a prior term."""
    factory, kind, parts = CASES["mixed"]
    X, y, w = _data(kind, seed=3)
    ss = SemiSupervised(factory(), max_iter=500, tol=1e-13).fit(X, y, sample_weight=w)
    assert ss.converged_ and len(ss.objective_) == ss.n_iter_ + 1
    jll, objective = reference_em(parts, X, y, w, 1.0, ss.n_iter_)
    _assert_rel_close(ss.objective_, objective, 1e-9)
    _assert_rel_close(ss.predict_joint_log_proba(X), jll(X), 1e-8)


@pytest.mark.parametrize("factory", [lambda: GaussianNB(var_smoothing=0.0),
                                     lambda: LinearDiscriminantAnalysis(shrinkage=0.2)],
                         ids=["exact", "regularised"])
@pytest.mark.parametrize("lam", [1.0, 0.3])
def test_stops_when_the_change_per_unit_of_weight_is_below_tol(factory, lam):
    X, y, w = _data("gaussian", seed=1)
    tol = 1e-5
    ss = SemiSupervised(factory(), unlabeled_weight=lam, max_iter=500, tol=tol)
    ss.fit(X, y, sample_weight=w)
    lab = y >= 0
    changes = np.abs(np.diff(ss.objective_)) / (w[lab].sum() + lam * w[~lab].sum())
    assert ss.converged_ and ss.n_iter_ > 2
    assert changes[-1] <= tol and (changes[:-1] > tol).all(), changes


def test_baseline_keeps_the_labelled_class_frequencies():
    """Without a model of X every row's posterior is the prior, and the labelled frequencies
    are already EM's fixed point."""
    X, y, w = _data("gaussian", seed=27)
    ss = SemiSupervised(BaselineClassifier(), unlabeled_weight=0.4).fit(X, y, sample_weight=w)
    lab = y >= 0
    frequencies = np.bincount(y[lab], weights=w[lab]) / w[lab].sum()
    assert ss.converged_ and ss.n_iter_ <= 1
    assert_allclose(ss.predict_proba(X), np.tile(frequencies, (len(y), 1)), rtol=1e-12)
    assert_allclose(ss.objective_, (w[lab] * np.log(frequencies[y[lab]])).sum(), rtol=1e-12)


# ---------------------------------------------------------------------------------------
# 2. unlabeled_weight = 0 is the model of the labelled rows, bit for bit


def _assert_identical(a, b, where="model"):
    """Equal values, bit for bit: arrays (dtype and NaN included), sequences, mappings, numbers
    and, recursively, fastgen models' fitted attributes."""
    if isinstance(a, fastgen._base.BaseClassifier):
        assert type(a) is type(b), where
        names_a, names_b = _fitted_names(a), _fitted_names(b)
        assert names_a == names_b, where
        for name in names_a:
            _assert_identical(getattr(a, name), getattr(b, name), f"{where}.{name}")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _assert_identical(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b)):
            _assert_identical(u, v, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), where
    else:
        assert a == b or (a != a and b != b), where


def _fitted_names(model):
    """The public fitted attributes a model has (those that raise AttributeError it lacks)."""
    names = []
    for name in dir(model):
        if name.endswith("_") and not name.startswith("_"):
            try:
                getattr(model, name)
            except AttributeError:
                continue
            names.append(name)
    return names


def _outputs(model, X):
    out = {name: getattr(model, name)(X) for name in
           ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba",
            "decision_function")}
    out["predict_loss"] = model.predict(X, loss=1.0 - np.eye(len(model.classes_)))
    return out


LAMBDA_ZERO = {
    "multinomial-dense": (lambda: MultinomialNB(alpha=0.5), "counts", "dense"),
    "multinomial-csr": (lambda: MultinomialNB(alpha=0.5), "counts", "csr"),
    "bernoulli-csr": (lambda: BernoulliNB(alpha=0.7), "counts", "csr"),
    "poisson-csr": (lambda: PoissonNB(), "counts", "csr"),
    "categorical": (lambda: CategoricalNB(), "codes", "dense"),
    "gaussian-nan": (GaussianNB, "gaussian", "nan"),
    "lda-nan": (LinearDiscriminantAnalysis, "gaussian", "nan"),
    "qda": (lambda: QuadraticDiscriminantAnalysis(reg_param=0.01), "gaussian", "dense"),
    "mixed-nan": (lambda: MixedNB(MIXED_TYPES), "mixed", "nan"),
    "baseline": (BaselineClassifier, "gaussian", "dense"),
}


@pytest.mark.parametrize("name", list(LAMBDA_ZERO))
def test_zero_unlabeled_weight_is_the_labelled_model(name):
    factory, kind, form = LAMBDA_ZERO[name]
    X, y, w = _data(kind, seed=4)
    X = sp.csr_matrix(X) if form == "csr" else _with_nan(X, seed=5) if form == "nan" else X
    lab = y >= 0
    ss = SemiSupervised(factory(), unlabeled_weight=0.0).fit(X, y, sample_weight=w)
    labelled = factory().fit(X[np.flatnonzero(lab)], y[lab], sample_weight=w[lab])
    _assert_identical(ss.estimator_, labelled)
    _assert_identical(_outputs(ss, X), _outputs(labelled, X), "outputs")
    assert np.array_equal(ss.classes_, labelled.classes_)
    assert ss.converged_ and len(ss.objective_) == ss.n_iter_ + 1


# ---------------------------------------------------------------------------------------
# 3. EM never decreases the objective of an exact estimator


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CASES)), seed=st.integers(0, 2**16),
       lam=st.floats(0.05, 1.0), n_unlabelled=st.integers(1, 30), weighted=st.booleans(),
       missing=st.booleans())
def test_objective_never_decreases(name, seed, lam, n_unlabelled, weighted, missing):
    factory, kind, _ = CASES[name]
    X, y, w = _data(kind, seed, n_labelled=6, n_unlabelled=n_unlabelled, weighted=weighted)
    if missing and name == "gaussian":  # (its exact estimate with missing values; the two
        # labelled rows of a class observe each feature: var_smoothing=0 needs a spread)
        X = _with_nan(X, seed, complete=y != -1)
    ss = SemiSupervised(factory(), unlabeled_weight=lam, max_iter=30, tol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ss.fit(X, y, sample_weight=w)
    objective = ss.objective_
    assert len(objective) == ss.n_iter_ + 1 and np.isfinite(objective).all()
    assert (np.diff(objective) >= -1e-9 * np.abs(objective[1:])).all(), objective


# ---------------------------------------------------------------------------------------
# 4. At convergence the model is EM's fixed point: the M-step of its own responsibilities


def _float_arrays(model):
    out = {}
    for name in _fitted_names(model):
        value = getattr(model, name)
        values = value if isinstance(value, list) else [value]
        if all(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in values):
            out[name] = values
    return out


@pytest.mark.parametrize("name", ["multinomial", "categorical", "poisson", "gaussian", "qda",
                                  "mixed"] + list(REGULARISED))
def test_fixed_point(name):
    factory, kind, _ = {**CASES, **REGULARISED}[name]
    X, y, w = _data(kind, seed=5)
    lam = 0.7
    ss = SemiSupervised(factory(), unlabeled_weight=lam, max_iter=2000, tol=1e-13)
    ss.fit(X, y, sample_weight=w)
    assert ss.converged_
    lab, unl = np.flatnonzero(y >= 0), np.flatnonzero(y < 0)
    R = lam * w[unl, None] * ss.estimator_.predict_proba(X[unl])
    # every unlabelled row once per class, weighted by its responsibility
    rows = np.concatenate([lab] + [unl] * N_CLASSES)
    labels = np.concatenate([y[lab]] + [np.full(len(unl), c) for c in range(N_CLASSES)])
    weights = np.concatenate([w[lab]] + [R[:, c] for c in range(N_CLASSES)])
    again = factory().fit(X[rows], labels, sample_weight=weights)
    arrays, expected = _float_arrays(ss.estimator_), _float_arrays(again)
    assert arrays.keys() == expected.keys() and arrays
    for key in arrays:
        for got, want in zip(arrays[key], expected[key]):
            _assert_rel_close(got, want, 1e-6)
    _assert_rel_close(ss.predict_joint_log_proba(X), again.predict_joint_log_proba(X), 1e-6)


# ---------------------------------------------------------------------------------------
# 5. Labels


def _counts_model():
    return MultinomialNB(alpha=0.5)


def test_int_object_and_float_unlabelled_markers_agree():
    X, y, w = _data("counts", seed=6)
    names = np.array(["a", "b", "c"], dtype=object)
    as_object = np.array([-1 if v < 0 else names[v] for v in y], dtype=object)
    fits = {
        "int": SemiSupervised(_counts_model()).fit(X, y, sample_weight=w),
        "object": SemiSupervised(_counts_model()).fit(X, as_object, sample_weight=w),
        "float": SemiSupervised(_counts_model()).fit(X, y.astype(np.float64), sample_weight=w),
    }
    assert fits["int"].classes_.tolist() == [0, 1, 2]
    assert fits["object"].classes_.tolist() == ["a", "b", "c"]
    assert fits["float"].classes_.tolist() == [0.0, 1.0, 2.0]
    assert fits["int"].n_iter_ > 1  # EM ran: the unlabelled rows were recognised
    for ss in fits.values():
        assert np.array_equal(ss.objective_, fits["int"].objective_)
        assert np.array_equal(ss.predict_proba(X), fits["int"].predict_proba(X))
    assert set(fits["object"].predict(X)) <= {"a", "b", "c"}


def test_minus_one_in_a_list_of_strings_is_unlabelled():
    X, y, w = _data("counts", seed=31)
    names = ["a", "b", "c"]
    as_list = [-1 if v < 0 else names[v] for v in y]
    expected = SemiSupervised(_counts_model()).fit(X, np.array(as_list, dtype=object),
                                                   sample_weight=w)
    ss = SemiSupervised(_counts_model()).fit(X, as_list, sample_weight=w)
    assert ss.classes_.tolist() == ["a", "b", "c"] and ss.n_iter_ > 1
    assert np.array_equal(ss.objective_, expected.objective_)
    assert np.array_equal(ss.predict_proba(X), expected.predict_proba(X))


def test_text_minus_one_is_refused_and_any_number_minus_one_is_unlabelled():
    """The text "-1" (as labels read from a file give it) was fitted as a class, silently: it
    is refused, in y and classes, str or bytes, fit or partial_fit; a Decimal -1 was a class
    too, and is a number -1 like any other (outside attack)."""
    X, y, w = _data("counts", seed=7)
    names = np.array(["a", "b", "c"], dtype=object)
    for text in ("-1", b"-1", np.str_("-1")):
        mixed = np.array([text if v < 0 else names[v] for v in y], dtype=object)
        with pytest.raises(ValueError, match="y holds the text '-1'"):
            SemiSupervised(_counts_model()).fit(X, mixed, sample_weight=w)
    as_text = np.where(y < 0, "-1", np.array(["a", "b", "c"])[np.maximum(y, 0)])
    for labels in (as_text, as_text.astype("S")):
        with pytest.raises(ValueError, match="y holds the text '-1'"):
            SemiSupervised(_counts_model()).fit(X, labels, sample_weight=w)
    with pytest.raises(ValueError, match="classes holds the text '-1'"):
        SemiSupervised(_counts_model()).fit(X, np.array([-1 if v < 0 else names[v] for v in y],
                                                        dtype=object), classes=["a", "-1"])
    fitted = SemiSupervised(_counts_model()).fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="y holds the text '-1'"):
        fitted.partial_fit(X[:2], np.array(["a", "-1"], dtype=object))
    decimals = np.array([Decimal(int(v)) for v in y], dtype=object)
    as_decimal = SemiSupervised(_counts_model()).fit(X, decimals, sample_weight=w)
    assert as_decimal.classes_.tolist() == [0, 1, 2]
    assert np.array_equal(as_decimal.objective_, fitted.objective_)
    with pytest.raises(ValueError, match="classes holds -1"):
        SemiSupervised(_counts_model()).fit(X, y, classes=[Decimal(0), Decimal(-1)])


def test_all_rows_unlabelled_is_an_error():
    X, y, _ = _data("counts", seed=8)
    with pytest.raises(ValueError, match="(?i)label"):
        SemiSupervised(_counts_model()).fit(X, np.full(len(y), -1))


@pytest.mark.parametrize("factory", [_counts_model, lambda: GaussianNB(var_smoothing=0.0)],
                         ids=["multinomial", "gaussian"])
def test_no_unlabelled_rows_is_the_supervised_fit(factory):
    kind = "counts" if factory is _counts_model else "gaussian"
    X, y, w = _data(kind, seed=9, n_unlabelled=0)
    ss = SemiSupervised(factory()).fit(X, y, sample_weight=w)
    model = factory().fit(X, y, sample_weight=w)
    _assert_identical(ss.estimator_, model)
    _assert_identical(_outputs(ss, X), _outputs(model, X), "outputs")
    # nothing to iterate over: the objective is that of the labelled model throughout
    jll = model.predict_joint_log_proba(X)
    log_prior = 0.5 * model.feature_log_prob_.sum() if kind == "counts" else 0.0
    expected = (w * jll[np.arange(len(y)), y]).sum() + log_prior
    assert ss.converged_ and ss.n_iter_ <= 1 and len(ss.objective_) == ss.n_iter_ + 1
    assert_allclose(ss.objective_, expected, rtol=1e-12)


@pytest.mark.parametrize("factory", [_counts_model, lambda: GaussianNB(var_smoothing=0.0)],
                         ids=["multinomial", "gaussian"])
def test_announced_class_without_rows_stays_empty(factory):
    kind = "counts" if factory is _counts_model else "gaussian"
    X, y, w = _data(kind, seed=10)
    X_new = _features(kind, np.random.default_rng(11).integers(0, 3, 200),
                      np.random.default_rng(12))
    ss = SemiSupervised(factory()).fit(X, y, sample_weight=w, classes=[0, 1, 2, 7])
    assert ss.classes_.tolist() == [0, 1, 2, 7]
    assert ss.estimator_.class_count_[3] == 0
    for Z in (X, X_new):
        proba = ss.predict_proba(Z)
        assert (proba[:, 3] == 0).all() and (ss.predict(Z) != 7).all()
        assert np.isneginf(ss.predict_log_proba(Z)[:, 3]).all()
    # the other classes are exactly those of EM without the announced class
    plain = SemiSupervised(factory()).fit(X, y, sample_weight=w)
    assert ss.n_iter_ == plain.n_iter_
    assert_allclose(ss.predict_proba(X_new)[:, :3], plain.predict_proba(X_new), rtol=1e-12,
                    atol=1e-15)


FIXED_PRIOR = {
    "multinomial": lambda: MultinomialNB(alpha=0.5, fit_prior=False),
    "poisson": lambda: PoissonNB(fit_prior=False),
    "categorical": lambda: CategoricalNB(fit_prior=False),
    "gaussian": lambda: GaussianNB(var_smoothing=0.0, priors=[0.25] * 4),
    "qda": lambda: QuadraticDiscriminantAnalysis(priors=[0.25] * 4),
    "mixed": lambda: MixedNB(MIXED_TYPES, var_smoothing=0.0, priors=[0.25] * 4),
}


@pytest.mark.parametrize("name", list(FIXED_PRIOR))
def test_announced_class_under_a_fixed_prior_learns_from_unlabelled_rows(name):
    """With a fixed prior the empty class starts from what the model derives without data (its
    smoothing, or the overall mean and spread), so its posterior is positive and EM gives it
    unlabelled rows."""
    X, y, w = _data(CASES[name][1], seed=32)
    ss = SemiSupervised(FIXED_PRIOR[name](), max_iter=500, tol=1e-10).fit(X, y, sample_weight=w,
                                                                classes=[0, 1, 2, 7])
    objective = ss.objective_
    assert ss.converged_ and np.isfinite(objective).all()
    assert (np.diff(objective) >= -1e-9 * np.abs(objective[1:])).all(), objective
    assert ss.estimator_.class_count_[3] > 0 and (ss.predict_proba(X)[y < 0, 3] > 0).all()


# ---------------------------------------------------------------------------------------
# 6. Missing features and missing labels together


@pytest.mark.parametrize("factory", [
    lambda: GaussianNB(var_smoothing=0.0),
    lambda: LinearDiscriminantAnalysis(max_iter=5000, tol=1e-12),
    lambda: QuadraticDiscriminantAnalysis(max_iter=5000, tol=1e-12),
    lambda: MixedNB(MIXED_TYPES, var_smoothing=0.0),
], ids=["gaussian", "lda", "qda", "mixed"])
def test_missing_features_and_labels(factory):
    kind = "mixed" if isinstance(factory(), MixedNB) else "gaussian"
    X, y, w = _data(kind, seed=13, n_labelled=10)
    X = _with_nan(X, seed=14)
    ss = SemiSupervised(factory(), max_iter=300, tol=1e-10).fit(X, y, sample_weight=w)
    assert ss.converged_ and ss.n_iter_ > 1
    proba = ss.predict_proba(X)
    assert np.isfinite(proba).all() and np.isfinite(ss.predict_log_proba(X)).all()
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    objective = ss.objective_
    assert (np.diff(objective) >= -1e-9 * np.abs(objective[1:])).all(), objective
    # a row with nothing observed is scored by the class prior, the classes' total weights
    blank = ss.predict_proba(np.full((1, X.shape[1]), np.nan))[0]
    class_weight = ss.estimator_.class_count_
    assert_allclose(blank, class_weight / class_weight.sum(), rtol=1e-12)
    lab = y >= 0
    assert_allclose(class_weight.sum(), w.sum(), rtol=1e-12)  # (labelled, plus unlabelled spread)
    assert (class_weight > np.bincount(y[lab], weights=w[lab])).all()


# ---------------------------------------------------------------------------------------
# 7. Hostile input


@pytest.mark.parametrize("params, match", [
    ({"unlabeled_weight": -0.1}, "unlabeled_weight"),
    ({"unlabeled_weight": 1.5}, "unlabeled_weight"),
    ({"unlabeled_weight": np.nan}, "unlabeled_weight"),
    ({"unlabeled_weight": np.inf}, "unlabeled_weight"),
    ({"unlabeled_weight": True}, "unlabeled_weight"),
    ({"unlabeled_weight": "1"}, "unlabeled_weight"),
    ({"max_iter": 0}, "max_iter"),
    ({"max_iter": -3}, "max_iter"),
    ({"max_iter": 10.0}, "max_iter"),
    ({"max_iter": True}, "max_iter"),
    ({"tol": -1e-6}, "tol"),
    ({"tol": np.nan}, "tol"),
    ({"tol": "small"}, "tol"),
    ({"estimator": None}, "estimator"),
    ({"estimator": MultinomialNB}, "estimator"),
    ({"estimator": ComplementNB()}, "ComplementNB"),
    ({"estimator": MultinomialNB(predictive=True)}, "predictive"),
    ({"estimator": MultinomialNB(alpha="evidence")}, "evidence"),
    ({"estimator": PoissonNB(alpha="evidence")}, "evidence"),
    ({"estimator": CategoricalNB(alpha="evidence")}, "evidence"),
    ({"estimator": MixedNB(alpha="evidence")}, "evidence"),
    ({"estimator": BernoulliNB(predictive=True)}, "predictive"),
    ({"estimator": QuadraticDiscriminantAnalysis(predictive=True)}, "predictive"),
], ids=lambda v: repr(v) if not isinstance(v, dict) else "-".join(
    f"{k}={getattr(x, '__name__', type(x).__name__) if k == 'estimator' else x!r}"
    for k, x in v.items()))
def test_bad_parameters(params, match):
    X, y, w = _data("counts", seed=15)
    params = {"estimator": MultinomialNB(), **params}
    with pytest.raises((ValueError, TypeError), match=match):
        SemiSupervised(**params).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("factory", [GaussianNB, QuadraticDiscriminantAnalysis],
                         ids=["gaussian", "qda"])
def test_prior_strength_is_not_used_by_em(factory):
    """The Gaussian family's prior serves the posterior predictive (refused) and log_evidence_
    only: EM's estimates and objective do not depend on it, so "evidence" is no harm there."""
    X, y, w = _data("gaussian", seed=29)
    chosen = SemiSupervised(factory(prior_strength="evidence")).fit(X, y, sample_weight=w)
    plain = SemiSupervised(factory()).fit(X, y, sample_weight=w)
    assert np.array_equal(chosen.objective_, plain.objective_) and chosen.n_iter_ > 1
    _assert_identical(_outputs(chosen, X), _outputs(plain, X), "outputs")


def test_an_objective_beyond_float64_is_an_error():
    """Every row's log-likelihood is finite, but their sum weighted by huge weights is not:
    the fit says so, instead of an objective_ of -inf (which a model file cannot hold)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 1)) * 1e-10
    X[15, 0] = 1e140
    y = -np.ones(20, int)
    y[:8] = np.arange(8) % 2
    with pytest.raises(ValueError, match="overflows float64"):
        SemiSupervised(GaussianNB()).fit(X, y, sample_weight=np.full(20, 1e10))


def test_unlabelled_rows_without_weight_still_show_their_categories():
    """A CategoricalNB learns the categories of every row of X, weighted or not, whether or not
    some other unlabelled row has weight (the fit without any used to take the labelled rows
    alone, and category 7 was then unknown)."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (40, 2)).astype(float)
    X[-5:, 0] = 7  # only in unlabelled rows of weight 0
    y = -np.ones(40, int)
    y[:10] = rng.integers(0, 2, 10)
    w = np.ones(40)
    w[10:] = 0.0
    ss = SemiSupervised(CategoricalNB()).fit(X, y, sample_weight=w)
    assert ss.n_iter_ == 0 and ss.converged_ and len(ss.objective_) == 1
    assert ss.estimator_.n_categories_[0] == 8
    _assert_identical(ss.estimator_, CategoricalNB().fit(X, np.maximum(y, 0), sample_weight=w))
    w[20] = 1.0  # one unlabelled row of weight: EM
    assert SemiSupervised(CategoricalNB()).fit(X, y, sample_weight=w).estimator_ \
        .n_categories_[0] == 8


@pytest.mark.parametrize("name, form", [("multinomial", "csr"), ("multinomial", "dense"),
                                        ("gaussian", "nan"), ("qda", "dense"),
                                        ("mixed", "dense")])
def test_unlabelled_rows_without_weight_change_nothing(name, form):
    """Unlabelled rows of weight 0 among the others (EM then scores the rows it uses, selected
    once, rather than all of X at every iteration): the fit of the other rows, to rounding."""
    factory, kind, _ = CASES[name]
    X, y, w = _data(kind, seed=41)
    if form == "nan":
        X = _with_nan(X, seed=41, complete=y != -1)
    rng = np.random.default_rng(41)
    extra = rng.permutation(np.r_[np.zeros(len(y), bool), np.ones(30, bool)])
    X_all = np.empty((len(extra), X.shape[1]))
    X_all[~extra], X_all[extra] = X, X[rng.integers(0, len(y), 30)]  # (no new category)
    y_all, w_all = np.full(len(extra), -1), np.zeros(len(extra))
    y_all[~extra], w_all[~extra] = y, w
    if form == "csr":
        X, X_all = sp.csr_matrix(X), sp.csr_matrix(X_all)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        alone = SemiSupervised(factory(), max_iter=5, tol=0).fit(X, y, sample_weight=w)
        among = SemiSupervised(factory(), max_iter=5, tol=0).fit(X_all, y_all,
                                                                  sample_weight=w_all)
    np.testing.assert_allclose(among.objective_, alone.objective_, rtol=1e-12)
    np.testing.assert_allclose(among.predict_proba(X_all), alone.predict_proba(X_all),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("model", [LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis])
def test_a_start_on_a_smaller_subspace_is_the_only_fall(model):
    """A feature constant among the labelled rows alone: the start models the subspace they
    span, a density on fewer dimensions than the later models' (see Notes), so objective_[0]
    is not comparable; from the first iteration on the objective does not fall."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, 60)
    X = rng.normal(size=(60, 3)) + 2 * truth[:, None]
    y = truth.copy()
    y[20:] = -1
    X[:20, 2] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        objective = SemiSupervised(model(), tol=0, max_iter=30).fit(X, y).objective_
    assert objective[1] < objective[0] - 10
    assert np.diff(objective[1:]).min() >= -1e-9 * np.abs(objective).max()


def test_labelled_rows_without_weight_are_named():
    X, y, w = _data("counts", seed=30)
    w[y >= 0] = 0.0
    with pytest.raises(ValueError, match="sample_weight"):
        SemiSupervised(MultinomialNB()).fit(X, y, sample_weight=w)


def test_scikit_learn_estimator_is_refused():
    naive_bayes = pytest.importorskip("sklearn.naive_bayes")
    X, y, _ = _data("counts", seed=16)
    with pytest.raises((ValueError, TypeError), match="estimator"):
        SemiSupervised(naive_bayes.MultinomialNB()).fit(X, y)


def test_bad_y_and_sample_weight():
    X, y, w = _data("counts", seed=17)
    with pytest.raises(ValueError, match="inconsistent|samples"):
        SemiSupervised(MultinomialNB()).fit(X, y[:-1])
    bad = w.copy()
    bad[-1] = -1.0  # (on an unlabelled row)
    with pytest.raises(ValueError, match="sample_weight"):
        SemiSupervised(MultinomialNB()).fit(X, y, sample_weight=bad)
    with pytest.raises(ValueError, match="sample_weight"):
        SemiSupervised(MultinomialNB()).fit(X, y, sample_weight=w[:-1])


def test_classes_must_include_every_label_and_not_minus_one():
    X, y, _ = _data("counts", seed=28)
    with pytest.raises(ValueError, match="classes|label"):
        SemiSupervised(MultinomialNB()).fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="classes"):
        SemiSupervised(MultinomialNB()).fit(X, y, classes=[-1, 0, 1, 2])
    with pytest.raises(ValueError, match="classes"):
        SemiSupervised(MultinomialNB()).partial_fit(X[:3], [0, 1, 2], classes=[-1, 0, 1, 2])


def test_dask_collections_are_refused():
    da = pytest.importorskip("dask.array")
    X, y, _ = _data("counts", seed=18)
    with pytest.raises((ValueError, TypeError), match="(?i)dask"):
        SemiSupervised(MultinomialNB()).fit(da.from_array(X, chunks=20), y)


def test_partial_fit_on_dask_names_labels_that_are_not_one_dimensional():
    """A dask DataFrame of labels reached pandas' "truth value of a Series is ambiguous" in
    the check for -1; it is refused as the model refuses it (outside attack)."""
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, _ = _data("counts", seed=18)
    lab = y >= 0
    X_d = dd.from_pandas(pd.DataFrame(X[lab]), npartitions=2)
    for labels in (dd.from_pandas(pd.DataFrame({"y": y[lab]}), npartitions=2),
                   dd.from_pandas(pd.DataFrame({"y": y[lab]}), npartitions=2).to_dask_array(
                       lengths=True).reshape(-1, 1)):
        with pytest.raises(ValueError, match="y must be one-dimensional"):
            SemiSupervised(MultinomialNB()).partial_fit(X_d, labels, classes=[0, 1, 2])
    ss = SemiSupervised(MultinomialNB()).partial_fit(
        X_d, dd.from_pandas(pd.Series(y[lab]), npartitions=2), classes=[0, 1, 2])
    _assert_identical(ss.estimator_, MultinomialNB().partial_fit(X[lab], y[lab],
                                                                 classes=[0, 1, 2]))


def test_partial_fit_adds_labelled_rows_and_refuses_unlabelled_ones():
    X, y, w = _data("counts", seed=19)
    lab = y >= 0
    ss = SemiSupervised(_counts_model()).fit(X, y, sample_weight=w)
    before = copy.deepcopy(ss.estimator_)
    with pytest.raises(ValueError, match="(?i)unlabel"):
        ss.partial_fit(X[:5], np.array([0, 1, -1, 2, 0]))
    _assert_identical(ss.estimator_, before)  # a refused batch changes nothing
    # -1 in a list of string labels marks an unlabelled row here too, as in fit (NumPy would
    # read the list as strings, "-1" a label like any other)
    strings = SemiSupervised(_counts_model()).fit(X, [-1 if v < 0 else "abc"[v] for v in y])
    with pytest.raises(ValueError, match="(?i)unlabel"):
        strings.partial_fit(X[:2], ["a", -1])
    X2, y2, w2 = X[lab][:7], y[lab][:7], w[lab][:7]
    ss.partial_fit(X2, y2, sample_weight=w2)
    _assert_identical(ss.estimator_, before.partial_fit(X2, y2, sample_weight=w2))
    # unfitted: the model's own partial_fit from scratch
    ss = SemiSupervised(_counts_model()).partial_fit(X2, y2, classes=[0, 1, 2],
                                                     sample_weight=w2)
    _assert_identical(ss.estimator_, _counts_model().partial_fit(X2, y2, classes=[0, 1, 2],
                                                                 sample_weight=w2))


# ---------------------------------------------------------------------------------------
# 8. Convergence warning, determinism, delegation


def test_convergence_warning_when_max_iter_is_reached():
    X, y, w = _data("gaussian", seed=20)
    ss = SemiSupervised(GaussianNB(), max_iter=1, tol=1e-12)
    with pytest.warns(ConvergenceWarning):
        ss.fit(X, y, sample_weight=w)
    assert ss.n_iter_ == 1 and not ss.converged_ and len(ss.objective_) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        converged = SemiSupervised(GaussianNB(), max_iter=500, tol=1e-12).fit(X, y,
                                                                             sample_weight=w)
    assert converged.converged_ and converged.n_iter_ > 1


@pytest.mark.parametrize("name", ["multinomial", "qda", "mixed"])
def test_deterministic(name):
    factory, kind, _ = CASES[name]
    X, y, w = _data(kind, seed=21)
    a = SemiSupervised(factory()).fit(X, y, sample_weight=w)
    b = SemiSupervised(factory()).fit(X, y, sample_weight=w)
    assert np.array_equal(a.objective_, b.objective_) and a.n_iter_ == b.n_iter_
    _assert_identical(_outputs(a, X), _outputs(b, X), "outputs")


def test_outputs_are_the_fitted_models():
    X, y, w = _data("gaussian", seed=22)
    ss = SemiSupervised(GaussianNB()).fit(X, y, sample_weight=w)
    _assert_identical(_outputs(ss, X), _outputs(ss.estimator_, X), "outputs")
    y_true = np.where(y < 0, 0, y)
    assert ss.score(X, y_true, sample_weight=w) == ss.estimator_.score(X, y_true,
                                                                       sample_weight=w)
    assert ss.n_features_in_ == 3 and np.array_equal(ss.classes_, ss.estimator_.classes_)
    assert ss.estimator_ is not ss.estimator and not hasattr(ss.estimator, "classes_")


def test_dataframe_feature_names():
    pd = pytest.importorskip("pandas")
    X, y, w = _data("gaussian", seed=23)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    ss = SemiSupervised(GaussianNB()).fit(frame, y, sample_weight=w)
    assert ss.feature_names_in_.tolist() == ["a", "b", "c"]
    assert np.array_equal(ss.predict_proba(frame),
                          SemiSupervised(GaussianNB()).fit(X, y, sample_weight=w)
                          .predict_proba(X))


# ---------------------------------------------------------------------------------------
# 9. Persistence and parameters


@pytest.mark.parametrize("name", ["multinomial", "lda", "mixed"])
def test_save_load_and_pickle(name, tmp_path):
    factory, kind, _ = CASES[name]
    X, y, w = _data(kind, seed=24)
    ss = SemiSupervised(factory(), unlabeled_weight=0.6).fit(X, y, sample_weight=w)
    ss.set_params(unlabeled_weight=0.2)  # after the fit: file and pickle keep it, as set
    path = tmp_path / "model.fg"
    ss.save(path)
    loaded = fastgen.load(path)
    unpickled = pickle.loads(pickle.dumps(ss))
    for other in (loaded, unpickled):
        assert type(other) is SemiSupervised
        assert other.get_params()["unlabeled_weight"] == 0.2
        assert repr(other.estimator) == repr(ss.estimator)
        assert np.array_equal(other.classes_, ss.classes_)
        _assert_identical(_outputs(other, X), _outputs(ss, X), "outputs")
    assert np.array_equal(unpickled.objective_, ss.objective_)


@pytest.mark.parametrize("inner", [{"predictive": True}, {"alpha": "evidence"}])
def test_a_file_loads_after_estimator_is_set_to_predict_as_the_notes_say(inner, tmp_path):
    """estimator_.set_params(predictive=True) (or alpha="evidence") after the fit is what the
    Notes suggest; the file it is then saved to holds estimator_ with those parameters beside
    the estimator EM fits, and loads as it was: it predicts as estimator_ and refits as the
    original does (the file once held estimator_'s parameters as the estimator, which a fit
    then refused: outside attack)."""
    X, y, w = _data("counts", seed=26)
    ss = SemiSupervised(MultinomialNB()).fit(X, y, sample_weight=w)
    ss.estimator_.set_params(**inner)
    path = tmp_path / "model.fg"
    ss.save(path)
    loaded = fastgen.load(path)
    _assert_identical(_outputs(loaded, X), _outputs(ss, X), "outputs")
    assert repr(loaded.estimator) == "MultinomialNB()"
    assert loaded.estimator_.get_params() == ss.estimator_.get_params()
    _assert_identical(_outputs(loaded.fit(X, y, sample_weight=w), X),
                      _outputs(ss.fit(X, y, sample_weight=w), X), "outputs after a refit")


def test_a_file_whose_fitted_estimator_no_fit_could_make_is_refused(tmp_path, monkeypatch):
    """estimator_ comes from a fit only, which refuses ComplementNB: a file that names one is
    forged."""
    X, y, w = _data("counts", seed=27)
    ss = SemiSupervised(MultinomialNB()).fit(X, y, sample_weight=w)
    complement = fastgen.ComplementNB().fit(X[y >= 0], y[y >= 0])
    record = SemiSupervised._file_record

    def forged(self):
        params, fitted = record(self)
        inner_params, state = complement._file_record()
        fitted["estimator"] = {"class": "ComplementNB", "params": inner_params, "state": state}
        params["estimator"] = {"class": "ComplementNB", "params": inner_params}
        return params, fitted

    monkeypatch.setattr(SemiSupervised, "_file_record", forged)
    ss.save(tmp_path / "forged.fg")
    with pytest.raises(ValueError, match="ComplementNB"):
        fastgen.load(tmp_path / "forged.fg")


def test_set_params_reaches_the_inner_model():
    X, y, w = _data("counts", seed=25)
    ss = SemiSupervised(MultinomialNB(alpha=1.0))
    assert ss.get_params()["estimator__alpha"] == 1.0
    before = ss.fit(X, y, sample_weight=w).predict_joint_log_proba(X)
    ss.set_params(estimator__alpha=0.1, unlabeled_weight=0.5)
    assert ss.estimator.alpha == 0.1 and ss.unlabeled_weight == 0.5
    after = ss.fit(X, y, sample_weight=w)
    assert after.estimator_.alpha == 0.1
    assert not np.allclose(after.predict_joint_log_proba(X), before)
    _, objective = reference_em([(ALL, _multinomial(0.1))], X, y, w, 0.5, after.n_iter_)
    _assert_rel_close(after.objective_, objective, 1e-9)


def test_a_parameter_set_on_the_estimator_during_fit_does_not_reach_em(monkeypatch):
    """fit checked the estimator's parameters, then copied them again to make the model it fits:
    another thread's set_params between the two (alpha="evidence", predictive=True, which EM
    refuses) reached EM. fit now checks the copy it fits (an outside attack forced the
    interleaving as below)."""
    rng = np.random.default_rng(0)
    X = rng.poisson(2.0, (60, 8)).astype(np.float64)
    y = np.where(np.arange(60) < 12, np.arange(60) % 2, -1)
    inner = fastgen.MultinomialNB()
    checked = fastgen.SemiSupervised._checked

    def racing(self, *args, **kwargs):
        result = checked(self, *args, **kwargs)
        inner.set_params(alpha="evidence", predictive=True)  # what another thread may do
        return result

    monkeypatch.setattr(fastgen.SemiSupervised, "_checked", racing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        model = fastgen.SemiSupervised(inner, max_iter=3).fit(X, y)
    assert model.estimator_.alpha == 1.0 and model.estimator_.predictive is False


@pytest.mark.parametrize("written", [1e20, np.nan])
def test_a_value_written_to_x_during_em_is_the_error_that_x_changed(written, monkeypatch):
    """EM reads the caller's X at every iteration: a value beyond the model's range (1e20, above
    the 2^53 a fit refuses) written by another thread while EM ran was counted into the model
    it published, and a NaN was blamed on the model ("use smoothing"). X's values are checked
    again before the model is published, and before a non-finite objective is blamed on the
    model (outside attack; the other thread is simulated by the first objective)."""
    from fastgen._core._errors import XChangedError

    rng = np.random.default_rng(0)
    X = rng.poisson(2.0, (60, 8)).astype(np.float64)
    y = np.where(np.arange(60) < 12, np.arange(60) % 2, -1)
    objective = SemiSupervised._objective
    calls = []

    def writing(*args):
        if not calls:
            X[30, 0] = written
        calls.append(1)
        return objective(*args)

    monkeypatch.setattr(SemiSupervised, "_objective", staticmethod(writing))
    ss = SemiSupervised(MultinomialNB(), max_iter=3, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the error comes before EM's ConvergenceWarning)
        with pytest.raises(XChangedError, match="X changed"):
            ss.fit(X, y)
    assert "_result" not in ss.__dict__


def test_em_checks_x_again_against_the_models_own_bounds(monkeypatch):
    """The re-check took the class's value constraints, not those the model's hyperparameters
    set: BernoulliNB(binarize=None) takes X in [0, 1], and a 50 written during EM was counted
    (feature_count_ beyond class_count_) and published (review)."""
    from fastgen._core._errors import XChangedError

    rng = np.random.default_rng(0)
    X = (rng.random((60, 8)) < 0.4).astype(np.float64)
    y = np.where(np.arange(60) < 12, np.arange(60) % 2, -1)
    objective = SemiSupervised._objective
    calls = []

    def writing(*args):
        if not calls:
            X[30:, 0] = 50.0
        calls.append(1)
        return objective(*args)

    monkeypatch.setattr(SemiSupervised, "_objective", staticmethod(writing))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        with pytest.raises(XChangedError):
            SemiSupervised(fastgen.BernoulliNB(binarize=None), max_iter=3, tol=0.0).fit(X, y)


def test_a_file_validates_the_estimators_parameters(tmp_path, monkeypatch):
    """The estimator's parameters were checked by name only, so a forged file with
    alpha=-5.0 or n_threads={'dict': 1} loaded, and failed at the next fit (review). They are
    validated as a model of them on estimator_'s statistics; an estimator of another class than
    estimator_ (set after the fit) cannot be saved."""
    X, y, w = _data("counts", seed=28)
    ss = SemiSupervised(MultinomialNB()).fit(X, y, sample_weight=w)
    record = SemiSupervised._file_record
    for bad in ({"alpha": -5.0}, {"n_threads": {"dict": 1}}, {"fit_prior": [1, 2]}):
        def forged(self, bad=bad):
            params, fitted = record(self)
            params["estimator"]["params"].update(bad)
            return params, fitted

        monkeypatch.setattr(SemiSupervised, "_file_record", forged)
        ss.save(tmp_path / "forged.fg")
        with pytest.raises(ValueError, match="not a valid fastgen model file"):
            fastgen.load(tmp_path / "forged.fg")
    monkeypatch.setattr(SemiSupervised, "_file_record", record)
    ss.set_params(estimator=fastgen.BernoulliNB())
    with pytest.raises(TypeError, match="another class"):
        ss.save(tmp_path / "other.fg")
