"""GaussianNB and PoissonNB (issue 3).

GaussianNB is compared with scikit-learn's GaussianNB where the two models coincide
(complete data; sample weights only through theta_ and var_ - epsilon_, since fastgen's
epsilon_ uses the weighted variance of all data seen), and with the brute-force
scipy.stats oracles of ``_reference.py`` everywhere else (missing values, PoissonNB).
"""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _gaussian_data import (
    METHODS,
    assert_normalised,
    blobs,
    gnb_scale,
    one_hot,
    poisson_counts,
    with_holes,
)
from _reference import gaussian_nb_jll, log_posterior, poisson_jll
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import gammaln

import fastgen

# ---------------------------------------------------------------------------------------
# helpers


def sk_gaussian_nb():
    return pytest.importorskip("sklearn.naive_bayes").GaussianNB


def weighted_nan_stats(X, y, classes, w=None):
    """Per class and feature: observed weight, weighted mean and ML variance over the
    observed (non-NaN) values; and epsilon's base, the max over features of the weighted
    variance of each feature's observed values pooled over classes."""
    X = np.asarray(X, dtype=np.float64)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    obs = ~np.isnan(X)
    Xz = np.where(obs, X, 0.0)
    W = obs * w[:, None]
    k, d = len(classes), X.shape[1]
    count, mean, var = np.zeros((k, d)), np.zeros((k, d)), np.zeros((k, d))
    for i, c in enumerate(classes):
        r = np.asarray(y) == c
        count[i] = W[r].sum(axis=0)
        mean[i] = (W[r] * Xz[r]).sum(axis=0) / count[i]
        var[i] = (W[r] * (Xz[r] - mean[i]) ** 2).sum(axis=0) / count[i]
    gmean = (W * Xz).sum(axis=0) / W.sum(axis=0)
    gvar = (W * (Xz - gmean) ** 2).sum(axis=0) / W.sum(axis=0)
    return count, mean, var, gvar.max()


def assert_gnb_matches_oracle(est, X, rtol=1e-9):
    """All three scoring methods equal the scipy.stats oracle built from the model's own
    theta_, var_ and class_prior_."""
    log_prior = np.log(est.class_prior_)
    jll = gaussian_nb_jll(X, est.theta_, est.var_, log_prior)
    atol = 1e-12 * gnb_scale(X, est.theta_, est.var_, log_prior)
    assert_allclose(est.predict_joint_log_proba(X), jll, rtol=rtol, atol=atol)
    lp = log_posterior(jll)
    assert_allclose(est.predict_log_proba(X), lp, rtol=rtol, atol=atol)
    assert_allclose(est.predict_proba(X), np.exp(lp), rtol=rtol, atol=atol)
    assert_array_equal(est.predict(X), est.classes_[np.argmax(jll, axis=1)])


def assert_same_fit(a, b, names, rtol=1e-9, atol=0.0):
    assert_array_equal(a.classes_, b.classes_)
    for name in names:
        assert_allclose(getattr(a, name), getattr(b, name), rtol=rtol, atol=atol, err_msg=name)


GNB_ATTRS = ["class_count_", "class_prior_", "theta_", "var_", "epsilon_", "observed_count_"]
PNB_ATTRS = ["class_count_", "feature_count_", "observed_count_", "lambda_", "class_log_prior_"]


@pytest.fixture(scope="module")
def gauss():
    X, y = blobs(400, 6, k=3, seed=5, sep=2.0)
    return X[:300], y[:300], X[300:], y[300:]


@pytest.fixture(scope="module")
def counts():
    X, y = poisson_counts(300, 7, k=3, seed=9)
    return X[:200], y[:200], X[200:], y[200:]


# ---------------------------------------------------------------------------------------
# GaussianNB: parity with scikit-learn


@pytest.mark.parametrize("priors", [None, [0.2, 0.3, 0.5]], ids=["fitted", "given"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_gaussian_parity_sklearn(dtype, priors, global_random_seed):
    X, y = blobs(300, 5, k=3, seed=global_random_seed, sep=2.0, scale=3.0, shift=1.0)
    X = X.astype(dtype)
    X_train, y_train, X_test = X[:200], y[:200], X[200:]
    fg = fastgen.GaussianNB(priors=priors).fit(X_train, y_train)
    sk = sk_gaussian_nb()(priors=priors).fit(X_train.astype(np.float64), y_train)
    f32 = dtype == np.float32
    rtol = 1e-5 if f32 else 1e-9
    assert_array_equal(fg.classes_, sk.classes_)
    assert fg.n_features_in_ == 5
    assert fg.class_count_.dtype == np.float64  # a statistic; the parameters are in X's dtype
    for name in ("class_prior_", "theta_", "var_", "epsilon_"):
        assert getattr(fg, name).dtype == dtype, name
    assert_allclose(fg.class_count_, sk.class_count_, rtol=1e-12)
    assert_allclose(fg.class_prior_, sk.class_prior_, rtol=1e-6 if f32 else 1e-12)
    assert_allclose(fg.theta_, sk.theta_, rtol=rtol, atol=rtol * 1e-3)
    assert_allclose(fg.var_, sk.var_, rtol=rtol)
    assert_allclose(fg.epsilon_, sk.epsilon_, rtol=rtol)
    assert_allclose(fg.observed_count_, np.broadcast_to(sk.class_count_[:, None], (3, 5)))
    for Xe in (X_test, X_train):
        scale = gnb_scale(Xe, sk.theta_, sk.var_, np.log(sk.class_prior_))
        atol = (2e-6 if f32 else 1e-12) * scale
        for m in METHODS:
            got = getattr(fg, m)(Xe)
            assert got.dtype == dtype, (m, got.dtype)
            assert_allclose(got, getattr(sk, m)(Xe.astype(np.float64)), rtol=rtol, atol=atol,
                            err_msg=m)
        want = sk.predict(Xe.astype(np.float64))
        if f32:
            jll = np.sort(sk.predict_joint_log_proba(Xe.astype(np.float64)), axis=1)
            clear = jll[:, -1] - jll[:, -2] > 4 * atol
            assert_array_equal(fg.predict(Xe)[clear], want[clear])
        else:
            assert_array_equal(fg.predict(Xe), want)


def test_gaussian_sample_weight_vs_sklearn(gauss):
    """theta_ and the ML variances are weighted in both; epsilon_ differs by design
    (fastgen: weighted variance; scikit-learn: unweighted), so compare var_ - epsilon_."""
    X, y, Xt, _ = gauss
    w = np.random.default_rng(0).uniform(0.1, 3.0, len(y))
    fg = fastgen.GaussianNB().fit(X, y, sample_weight=w)
    sk = sk_gaussian_nb()().fit(X, y, sample_weight=w)
    assert_allclose(fg.class_count_, sk.class_count_, rtol=1e-12)
    assert_allclose(fg.class_prior_, sk.class_prior_, rtol=1e-12)
    assert_allclose(fg.theta_, sk.theta_, rtol=1e-9, atol=1e-12)
    assert_allclose(fg.var_ - fg.epsilon_, sk.var_ - sk.epsilon_, rtol=1e-9)
    _, _, _, wvar_max = weighted_nan_stats(X, y, fg.classes_, w)
    assert_allclose(fg.epsilon_, 1e-9 * wvar_max, rtol=1e-9)
    assert_gnb_matches_oracle(fg, Xt)


def test_gaussian_single_sample_class_vs_sklearn(gauss):
    X, y, Xt, _ = gauss
    X = np.vstack([X, [[10.0] * X.shape[1]]])
    y = np.append(y, 7)
    fg = fastgen.GaussianNB().fit(X, y)
    sk = sk_gaussian_nb()().fit(X, y)
    assert_allclose(fg.theta_, sk.theta_, rtol=1e-9, atol=1e-12)
    assert_allclose(fg.var_, sk.var_, rtol=1e-9)
    assert_allclose(fg.var_[-1], fg.epsilon_, rtol=1e-12)  # one sample: variance 0
    Xe = np.vstack([Xt, X[-1:]])
    scale = gnb_scale(Xe, sk.theta_, sk.var_, np.log(sk.class_prior_))
    for m in METHODS:
        assert_allclose(getattr(fg, m)(Xe), getattr(sk, m)(Xe), rtol=1e-9, atol=1e-12 * scale)
    assert fg.predict(X[-1:])[0] == 7


# ---------------------------------------------------------------------------------------
# GaussianNB: incremental fitting


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("holes", [False, True], ids=["complete", "nan"])
def test_gaussian_partial_fit_batches_equal_fit(gauss, weighted, holes):
    X, y, Xt, _ = gauss
    if holes:
        X = with_holes(X, 0.2, seed=1)
    w = np.random.default_rng(1).uniform(0.2, 2.0, len(y)) if weighted else None
    full = fastgen.GaussianNB().fit(X, y, sample_weight=w)
    inc = fastgen.GaussianNB()
    for s in np.array_split(np.arange(len(y)), 4):
        inc.partial_fit(X[s], y[s], classes=np.unique(y),
                        sample_weight=None if w is None else w[s])
    assert_same_fit(inc, full, GNB_ATTRS, rtol=1e-9, atol=1e-12)
    scale = gnb_scale(Xt, full.theta_, full.var_, np.log(full.class_prior_))
    for m in METHODS:
        assert_allclose(getattr(inc, m)(Xt), getattr(full, m)(Xt), rtol=1e-9,
                        atol=1e-12 * scale, err_msg=m)


def test_gaussian_epsilon_follows_all_data_seen():
    """Regression (scikit-learn #14054): scikit-learn's partial_fit takes epsilon_ from
    the latest batch only. fastgen's epsilon_ is var_smoothing times the largest variance
    of the data seen so far, so batches give the same model as one fit."""
    rng = np.random.default_rng(3)
    XA = rng.normal(0.0, 1.0, (60, 3))
    XB = rng.normal(5.0, 100.0, (60, 3))
    yA, yB = np.arange(60) % 2, np.arange(60) % 2
    vs = 1e-2
    inc = fastgen.GaussianNB(var_smoothing=vs).fit(XA, yA)
    assert_allclose(inc.epsilon_, vs * XA.var(axis=0).max(), rtol=1e-9)
    inc.partial_fit(XB, yB)
    XU = np.vstack([XA, XB])
    assert_allclose(inc.epsilon_, vs * XU.var(axis=0).max(), rtol=1e-9)
    full = fastgen.GaussianNB(var_smoothing=vs).fit(XU, np.append(yA, yB))
    assert_same_fit(inc, full, GNB_ATTRS, rtol=1e-9)
    # var_ - epsilon_ is the ML variance of each class over A and B
    for i, c in enumerate(full.classes_):
        assert_allclose(inc.var_[i] - inc.epsilon_, XU[np.append(yA, yB) == c].var(axis=0),
                        rtol=1e-9)


def test_gaussian_partial_fit_unseen_label_raises(gauss):
    X, y, _, _ = gauss
    est = fastgen.GaussianNB().partial_fit(X[:50], y[:50], classes=[0, 1, 2])
    with pytest.raises(ValueError):
        est.partial_fit(X[50:60], np.full(10, 3))


# ---------------------------------------------------------------------------------------
# GaussianNB: missing values


def test_gaussian_nan_predict_equals_oracle(gauss):
    X, y, Xt, _ = gauss
    est = fastgen.GaussianNB().fit(X, y)
    Xh = with_holes(Xt, 0.3, seed=2, all_nan_row=0)
    assert_gnb_matches_oracle(est, Xh)
    assert_normalised(est, Xh)


def test_gaussian_nan_column_equals_column_dropped(gauss):
    """Marginalising a feature equals a model that never saw it. Feature 0 gets the
    largest variance so that epsilon_ is the same with or without feature 2."""
    X, y, Xt, _ = gauss
    X, Xt = X.copy(), Xt.copy()
    X[:, 0] *= 10
    Xt[:, 0] *= 10
    keep = [0, 1, 3, 4, 5]
    full = fastgen.GaussianNB().fit(X, y)
    dropped = fastgen.GaussianNB().fit(X[:, keep], y)
    assert_allclose(dropped.epsilon_, full.epsilon_, rtol=1e-12)
    Xn = Xt.copy()
    Xn[:, 2] = np.nan
    scale = gnb_scale(Xt, full.theta_, full.var_, np.log(full.class_prior_))
    for m in METHODS:
        assert_allclose(getattr(full, m)(Xn), getattr(dropped, m)(Xt[:, keep]), rtol=1e-9,
                        atol=1e-12 * scale, err_msg=m)
    assert_array_equal(full.predict(Xn), dropped.predict(Xt[:, keep]))


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_gaussian_fit_with_nan_uses_observed_values(gauss, weighted):
    X, y, Xt, _ = gauss
    Xh = with_holes(X, 0.25, seed=4)
    w = np.random.default_rng(2).uniform(0.2, 2.0, len(y)) if weighted else None
    est = fastgen.GaussianNB(var_smoothing=1e-3).fit(Xh, y, sample_weight=w)
    count, mean, var, gvar_max = weighted_nan_stats(Xh, y, est.classes_, w)
    if not weighted:  # the same with numpy's nan-aware reductions
        for i, c in enumerate(est.classes_):
            assert_allclose(mean[i], np.nanmean(Xh[y == c], axis=0), rtol=1e-12)
            assert_allclose(var[i], np.nanvar(Xh[y == c], axis=0), rtol=1e-12)
        assert_allclose(gvar_max, np.nanvar(Xh, axis=0).max(), rtol=1e-12)
    assert_allclose(est.observed_count_, count, rtol=1e-12)
    assert_allclose(est.class_count_, one_hot(y, est.classes_).T @ (
        np.ones(len(y)) if w is None else w), rtol=1e-12)
    assert_allclose(est.theta_, mean, rtol=1e-9, atol=1e-12)
    assert_allclose(est.epsilon_, 1e-3 * gvar_max, rtol=1e-9)
    assert_allclose(est.var_ - est.epsilon_, var, rtol=1e-9, atol=1e-12)
    assert_gnb_matches_oracle(est, with_holes(Xt, 0.2, seed=5, all_nan_row=3))


@pytest.mark.parametrize("priors", [None, [0.5, 0.3, 0.2]], ids=["fitted", "given"])
def test_gaussian_all_nan_row_gets_log_prior(gauss, priors):
    X, y, _, _ = gauss
    est = fastgen.GaussianNB(priors=priors).fit(X, y)
    row = np.full((2, X.shape[1]), np.nan)
    want = np.log(np.broadcast_to(est.class_prior_, (2, 3)))
    assert_allclose(est.predict_joint_log_proba(row), want, rtol=1e-12)
    assert_allclose(est.predict_log_proba(row), want, rtol=1e-12)
    assert_allclose(est.predict_proba(row), np.exp(want), rtol=1e-12)
    if priors is not None:
        assert_allclose(est.class_prior_, priors, rtol=1e-15)


# ---------------------------------------------------------------------------------------
# GaussianNB: degenerate variances and bad input


def test_gaussian_zero_variance_feature(gauss):
    X, y, Xt, _ = gauss
    X, Xt = X.copy(), Xt.copy()
    X[:, 1] = 2.5
    Xt[: len(Xt) // 2, 1] = 2.5
    est = fastgen.GaussianNB().fit(X, y)
    assert est.epsilon_ > 0
    assert_allclose(est.var_[:, 1], est.epsilon_, rtol=1e-12)
    assert_allclose(est.theta_[:, 1], 2.5, rtol=1e-15)
    assert_gnb_matches_oracle(est, Xt)
    assert_normalised(est, Xt)


def test_gaussian_every_feature_constant_epsilon_is_absolute():
    X = np.tile([[1.0, -2.0, 3.0]], (6, 1))
    y = np.array([0, 1, 0, 1, 0, 1])
    est = fastgen.GaussianNB(var_smoothing=1e-4).fit(X, y)
    assert_allclose(est.epsilon_, 1e-4, rtol=1e-15)
    assert_allclose(est.var_, 1e-4, rtol=1e-12)
    assert_normalised(est, X + 0.01)


def test_gaussian_constant_features_with_weights_leave_the_prior():
    """Weighted means of a constant 0.1 differ from it, and from class to class, by rounding
    (1e-17), and the squared deviations make a variance of about 1e-34. Taken as the data's
    spread, that set epsilon_ near 1e-43, and the rounding decided the posteriors ([0.83, 0.17]
    here, as in scikit-learn): constant features (_gaussian.constant) now leave epsilon_ at
    var_smoothing, and every row's posterior is the prior. A feature that varies still sets
    it."""
    X = np.full((40, 2), 0.1)
    y = np.arange(40) % 2
    w = np.random.default_rng(0).uniform(0.1, 1, 40)
    est = fastgen.GaussianNB().fit(X, y, sample_weight=w)
    assert est.theta_[0, 0] != est.theta_[1, 0]  # the rounding is there
    assert est.epsilon_ == 1e-9
    prior = np.bincount(y, weights=w) / w.sum()
    assert_allclose(est.predict_proba(X), np.tile(prior, (40, 1)), rtol=1e-12)
    varying = np.c_[X, np.arange(40.0)]
    est = fastgen.GaussianNB().fit(varying, y, sample_weight=w)
    _, _, _, wvar_max = weighted_nan_stats(varying, y, est.classes_, w)
    assert_allclose(est.epsilon_, 1e-9 * wvar_max, rtol=1e-9)
    # a spread of a few tens of ulps of its size is a spread (1e8 + 3e-7 noise: 13 ulps), and
    # sets epsilon_ as in scikit-learn, not var_smoothing itself (which would swamp it)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    fine = np.c_[1e8 + y * 2e-6 + rng.normal(0, 3e-7, 400), np.full(400, 5.0)]
    est = fastgen.GaussianNB().fit(fine, y)  # (that spread is itself known to a few %)
    assert_allclose(est.epsilon_, 1e-9 * fine.var(axis=0).max(), rtol=0.1)
    assert est.score(fine, y) > 0.99


def test_gaussian_var_smoothing_zero_with_constant_feature_raises(gauss):
    X, y, _, _ = gauss
    X = X.copy()
    X[:, 3] = 1.0
    with pytest.raises(ValueError, match="var_smoothing"):
        fastgen.GaussianNB(var_smoothing=0.0).fit(X, y)
    # a subnormal var_smoothing leaves a variance whose -1/(2 var) overflows: also an error
    with pytest.raises(ValueError, match="density overflows"):
        fastgen.GaussianNB(var_smoothing=5e-324).fit(X, y)
    # without a constant feature var_smoothing=0 is fine
    est = fastgen.GaussianNB(var_smoothing=0.0).fit(np.delete(X, 3, axis=1), y)
    assert est.epsilon_ == 0.0


def bad_inputs(shape):
    X = np.random.default_rng(0).random(shape)
    inf = X.copy()
    inf[1, 1] = np.inf
    ninf = X.copy()
    ninf[0, 0] = -np.inf
    return {
        "inf": inf,
        "-inf": ninf,
        "complex": X.astype(np.complex128) + 1j,
        "strings": np.array([["a"] * shape[1]] * shape[0]),
    }


@pytest.mark.parametrize("kind", ["inf", "-inf", "complex", "strings"])
@pytest.mark.parametrize("Model", [fastgen.GaussianNB, fastgen.PoissonNB],
                         ids=lambda c: c.__name__)
def test_bad_input_raises(Model, kind):
    X = np.random.default_rng(0).integers(0, 5, (12, 3)).astype(np.float64)
    y = np.arange(12) % 2
    bad = bad_inputs(X.shape)[kind]
    with pytest.raises(ValueError):
        Model().fit(bad, y)
    est = Model().fit(X, y)
    with pytest.raises(ValueError):
        est.predict(bad)
    with pytest.raises(ValueError):
        est.partial_fit(bad, y)


@pytest.mark.parametrize("priors", [[0.5, 0.6, 0.1], [1.2, -0.2, 0.0], [0.5, 0.5]],
                         ids=["sum", "negative", "length"])
def test_gaussian_bad_priors_raise(gauss, priors):
    X, y, _, _ = gauss
    with pytest.raises(ValueError):
        fastgen.GaussianNB(priors=priors).fit(X, y)


def test_gaussian_float32_outputs_and_pickle(gauss):
    X, y, Xt, _ = gauss
    est = fastgen.GaussianNB().fit(X.astype(np.float32), y)
    for m in METHODS:
        assert getattr(est, m)(Xt.astype(np.float32)).dtype == np.float32
    clone = pickle.loads(pickle.dumps(est))
    for m in METHODS:
        assert np.array_equal(getattr(clone, m)(Xt.astype(np.float32)),
                              getattr(est, m)(Xt.astype(np.float32)))
    assert est.get_params()["var_smoothing"] == 1e-9
    assert est.set_params(var_smoothing=1e-3).var_smoothing == 1e-3


# ---------------------------------------------------------------------------------------
# PoissonNB


def poisson_reference(X, y, classes, alpha=1.0, beta=1.0, w=None):
    """(class_count, feature_count, observed_count, lambda) over the observed entries."""
    X = np.asarray(X, dtype=np.float64)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    Y = one_hot(y, classes) * w[:, None]
    obs = ~np.isnan(X)
    fc = Y.T @ np.where(obs, X, 0.0)
    oc = Y.T @ obs.astype(np.float64)
    return Y.sum(axis=0), fc, oc, (fc + alpha) / (oc + beta)


def poisson_log_prior(class_count, fit_prior=True, class_prior=None):
    if class_prior is not None:
        return np.log(np.asarray(class_prior, dtype=np.float64))
    if not fit_prior:
        return np.full(len(class_count), -np.log(len(class_count)))
    return np.log(class_count / class_count.sum())


def assert_pnb_matches_oracle(est, X, log_prior, rtol=1e-9):
    jll = poisson_jll(X, est.lambda_, log_prior)
    # magnitude of the summed terms |x log lambda| + lambda + lgamma(x + 1), per row
    Xz = np.nan_to_num(np.asarray(X, dtype=np.float64))
    lam = np.asarray(est.lambda_, dtype=np.float64)
    terms = Xz @ np.abs(np.log(lam)).T + (~np.isnan(X)) @ lam.T + gammaln(Xz + 1).sum(
        axis=1, keepdims=True)
    scale = max(1.0, float(terms.max()) + float(np.abs(log_prior).max()))
    assert_allclose(est.class_log_prior_, log_prior, rtol=1e-12)
    assert_allclose(est.predict_joint_log_proba(X), jll, rtol=rtol, atol=1e-12 * scale)
    assert_allclose(est.predict_log_proba(X), log_posterior(jll), rtol=rtol, atol=1e-12 * scale)
    assert_allclose(est.predict_proba(X), np.exp(log_posterior(jll)), rtol=rtol,
                    atol=1e-12 * scale)
    assert_array_equal(est.predict(X), est.classes_[np.argmax(jll, axis=1)])


@pytest.mark.parametrize(
    "params",
    [{}, {"alpha": 0.5, "beta": 2.0}, {"alpha": 3.0, "beta": 0.0}, {"fit_prior": False},
     {"class_prior": [0.1, 0.6, 0.3]}],
    ids=["default", "alpha-beta", "beta0", "uniform", "class_prior"],
)
def test_poisson_lambda_and_jll(counts, params):
    X, y, Xt, _ = counts
    est = fastgen.PoissonNB(**params).fit(X, y)
    alpha, beta = params.get("alpha", 1.0), params.get("beta", 1.0)
    cc, fc, oc, lam = poisson_reference(X, y, est.classes_, alpha, beta)
    assert_allclose(est.class_count_, cc, rtol=1e-15)
    assert_allclose(est.feature_count_, fc, rtol=1e-15)
    assert_allclose(est.observed_count_, oc, rtol=1e-15)
    assert_allclose(est.lambda_, lam, rtol=1e-12)
    lp = poisson_log_prior(cc, params.get("fit_prior", True), params.get("class_prior"))
    assert_pnb_matches_oracle(est, Xt, lp)
    assert_pnb_matches_oracle(est, X, lp)


def test_poisson_sample_weight(counts):
    X, y, Xt, _ = counts
    w = np.random.default_rng(3).uniform(0.1, 3.0, len(y))
    est = fastgen.PoissonNB(alpha=0.7).fit(X, y, sample_weight=w)
    cc, fc, oc, lam = poisson_reference(X, y, est.classes_, 0.7, 1.0, w)
    assert_allclose(est.class_count_, cc, rtol=1e-12)
    assert_allclose(est.feature_count_, fc, rtol=1e-12)
    assert_allclose(est.observed_count_, oc, rtol=1e-12)
    assert_allclose(est.lambda_, lam, rtol=1e-12)
    assert_pnb_matches_oracle(est, Xt, poisson_log_prior(cc))


def test_poisson_nan_marginalised(counts):
    X, y, Xt, _ = counts
    Xh = with_holes(X, 0.2, seed=6)
    est = fastgen.PoissonNB().fit(Xh, y)
    cc, fc, oc, lam = poisson_reference(Xh, y, est.classes_)
    assert_allclose(est.feature_count_, fc, rtol=1e-15)
    assert_allclose(est.observed_count_, oc, rtol=1e-15)
    assert_allclose(est.lambda_, lam, rtol=1e-12)
    Xth = with_holes(Xt, 0.3, seed=7, all_nan_row=0)
    assert_pnb_matches_oracle(est, Xth, poisson_log_prior(cc))
    assert_allclose(est.predict_log_proba(Xth[:1]), [poisson_log_prior(cc)], rtol=1e-12)
    # a NaN column equals a model that never saw that feature
    keep = [0, 1, 2, 4, 5, 6]
    full = fastgen.PoissonNB().fit(X, y)
    dropped = fastgen.PoissonNB().fit(X[:, keep], y)
    Xn = Xt.copy()
    Xn[:, 3] = np.nan
    for m in METHODS:
        assert_allclose(getattr(full, m)(Xn), getattr(dropped, m)(Xt[:, keep]), rtol=1e-9,
                        atol=1e-10, err_msg=m)


@pytest.mark.parametrize("fmt", ["csr_matrix", "csr_array"])
def test_poisson_sparse_equals_dense(counts, fmt):
    X, y, Xt, _ = counts
    conv = sp.csr_matrix if fmt == "csr_matrix" else sp.csr_array
    d = fastgen.PoissonNB().fit(X, y)
    s = fastgen.PoissonNB().fit(conv(X), y)
    assert_same_fit(s, d, PNB_ATTRS, rtol=1e-12)
    for m in METHODS:
        assert_allclose(getattr(s, m)(conv(Xt)), getattr(d, m)(Xt), rtol=1e-12, atol=1e-12,
                        err_msg=m)
        assert_allclose(getattr(d, m)(conv(Xt)), getattr(d, m)(Xt), rtol=1e-12, atol=1e-12,
                        err_msg=m)
    assert_array_equal(s.predict(conv(Xt)), d.predict(Xt))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_poisson_partial_fit_equals_fit(counts, sparse):
    X, y, Xt, _ = counts
    conv = sp.csr_matrix if sparse else np.asarray
    w = np.random.default_rng(4).uniform(0.5, 2.0, len(y))
    full = fastgen.PoissonNB(alpha=0.3).fit(conv(X), y, sample_weight=w)
    inc = fastgen.PoissonNB(alpha=0.3)
    for s in np.array_split(np.arange(len(y)), 3):
        inc.partial_fit(conv(X[s]), y[s], classes=np.unique(y), sample_weight=w[s])
    assert_same_fit(inc, full, PNB_ATTRS, rtol=1e-12, atol=1e-13)
    for m in METHODS:
        assert_allclose(getattr(inc, m)(Xt), getattr(full, m)(Xt), rtol=1e-9, atol=1e-10,
                        err_msg=m)


def test_poisson_negative_raises(counts):
    X, y, _, _ = counts
    bad = X.copy()
    bad[3, 2] = -1.0
    with pytest.raises(ValueError):
        fastgen.PoissonNB().fit(bad, y)
    with pytest.raises(ValueError):
        fastgen.PoissonNB().fit(sp.csr_matrix(bad), y)
    est = fastgen.PoissonNB().fit(X, y)
    with pytest.raises(ValueError):
        est.predict(bad)


@pytest.mark.parametrize("params", [{"alpha": -1.0}, {"beta": -0.5}, {"alpha": "zero"}],
                         ids=["alpha-neg", "beta-neg", "alpha-str"])
def test_poisson_bad_hyperparameters_raise(counts, params):
    X, y, _, _ = counts
    with pytest.raises(ValueError):
        fastgen.PoissonNB(**params).fit(X, y)


def test_poisson_rate_underflow_raises():
    """A positive alpha so tiny that the rate of a feature a class never had underflows to 0
    (hypothesis found 5e-324 with one row per class) is a clear error, not a warning and a
    log of -inf."""
    X = np.array([[4.0, 0.0], [1.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="alpha=5e-324 is too small"):
            fastgen.PoissonNB(alpha=5e-324).fit(X, [0, 1])
        fastgen.PoissonNB(alpha=1e-300).fit(X, [0, 1])  # tiny, but the rates stay positive


def test_poisson_float32_outputs_and_pickle(counts):
    X, y, Xt, _ = counts
    est = fastgen.PoissonNB().fit(X.astype(np.float32), y)
    for m in METHODS:
        assert getattr(est, m)(Xt.astype(np.float32)).dtype == np.float32
    clone = pickle.loads(pickle.dumps(est))
    for m in METHODS:
        assert np.array_equal(getattr(clone, m)(Xt), getattr(est, m)(Xt))


@pytest.mark.parametrize("Model", [fastgen.GaussianNB, fastgen.PoissonNB],
                         ids=lambda c: c.__name__)
def test_dataframe_with_missing_values(Model, counts):
    """A DataFrame sets feature_names_in_; its NaN (pandas' missing value) are missing
    values like NaN in an array."""
    pd = pytest.importorskip("pandas")
    X, y, Xt, _ = counts
    Xh = with_holes(X, 0.1, seed=8)
    cols = [f"f{j}" for j in range(X.shape[1])]
    est = Model().fit(pd.DataFrame(Xh, columns=cols), y)
    assert_array_equal(est.feature_names_in_, cols)
    ref = Model().fit(Xh, y)
    Xth = with_holes(Xt, 0.1, seed=9)
    for m in METHODS:
        assert_allclose(getattr(est, m)(pd.DataFrame(Xth, columns=cols)), getattr(ref, m)(Xth),
                        rtol=1e-12, atol=1e-12, err_msg=m)
