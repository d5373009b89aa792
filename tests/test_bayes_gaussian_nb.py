"""Bayesian prediction of GaussianNB (Normal-Inverse-Gamma prior) and PoissonNB (Gamma prior):
the posterior predictive (``predictive=True``), ``log_evidence_``, the evidence-maximising prior
and ``sample_posterior``.

References: scipy.stats ``t`` and ``nbinom`` for the predictive densities; for the evidence the
product of the one-step predictive densities of the rows in turn (the chain rule of the
marginal likelihood, which cannot depend on the order) and a numerical integral over the
parameters; for the draws the posterior's moments and the predictive as the average of the
drawn models' densities."""
import pickle

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp
from _reference import negative_binomial_jll
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import integrate, stats
from scipy.special import gammaln, logsumexp

import fastgen
import fastgen.naive_bayes
from fastgen import GaussianNB, PoissonNB

RNG = np.random.default_rng(20261125)


def _gaussian_data(n=40, d=3, n_classes=3, nan=0.1, rng=RNG):
    y = rng.integers(0, n_classes, n)
    centre = rng.normal(0.0, 2.0, (n_classes, d))
    scale = rng.uniform(0.5, 2.0, (n_classes, d))
    X = centre[y] + scale[y] * rng.normal(size=(n, d))
    X[rng.random(X.shape) < nan] = np.nan
    return X, y


def _count_data(n=40, d=4, n_classes=3, nan=0.0, rng=RNG):
    y = rng.integers(0, n_classes, n)
    rate = rng.gamma(2.0, 1.5, (n_classes, d))
    X = rng.poisson(rate[y]).astype(np.float64)
    X[rng.random(X.shape) < nan] = np.nan
    return X, y


def _nig_posterior(values, kappa0, m0, nu0, v0):
    """The Normal-Inverse-Gamma posterior of unit-weight values, written out (Murphy 2007)."""
    n = len(values)
    xbar = values.mean() if n else 0.0
    m2 = ((values - xbar) ** 2).sum()
    kappa, nu = kappa0 + n, nu0 + n
    mean = (kappa0 * m0 + n * xbar) / kappa
    var = (nu0 * v0 + m2 + kappa0 * n / kappa * (xbar - m0) ** 2) / nu
    return kappa, mean, nu, var


def _t_logpdf(x, kappa, mean, nu, var):
    return stats.t.logpdf(x, df=nu, loc=mean, scale=np.sqrt(var * (1 + 1 / kappa)))


def gaussian_predictive_jll(X_train, y_train, X, kappa0, m0, nu0, v0, log_prior):
    """log P(c) + sum over the observed features of scipy's t log-density of the posterior
    predictive, class by class and feature by feature."""
    jll = np.tile(log_prior, (len(X), 1))
    for c in range(len(log_prior)):
        for j in range(X.shape[1]):
            column = X_train[y_train == c, j]
            post = _nig_posterior(column[~np.isnan(column)], kappa0, m0[j], nu0, v0[j])
            observed = ~np.isnan(X[:, j])
            jll[observed, c] += _t_logpdf(X[observed, j], *post)
    return jll


def sequential_evidence(X, y, log_predictive):
    """sum_i log p(x_i | y_i, earlier rows): each observed value's one-step predictive
    ``log_predictive(j, earlier observed values of its class and feature, x)``."""
    total = 0.0
    for i in range(len(y)):
        earlier = X[:i][y[:i] == y[i]]
        for j in range(X.shape[1]):
            if not np.isnan(X[i, j]):
                past = earlier[:, j]
                total += log_predictive(j, past[~np.isnan(past)], X[i, j])
    return total


def gaussian_sequential_evidence(X, y, kappa0, m0, nu0, v0):
    return sequential_evidence(X, y, lambda j, past, x: _t_logpdf(
        x, *_nig_posterior(past, kappa0, m0[j], nu0, v0[j])))


def _fixed_prior(X):
    """An explicit prior (so that it does not move with the data the references use)."""
    return {"prior_mean": np.array([0.3, -0.2, 0.1])[:X.shape[1]],
            "prior_var": np.array([1.5, 0.7, 2.0])[:X.shape[1]]}


# --------------------------------------------------------------------------- GaussianNB
@pytest.mark.parametrize("strength", [1.0, 0.3, (2.0, 5.0)])
def test_gaussian_predictive_is_the_student_t(strength):
    X, y = _gaussian_data()
    X_test = RNG.normal(0.0, 3.0, (25, 3))
    X_test[RNG.random(X_test.shape) < 0.2] = np.nan
    X_test[0] = np.nan  # nothing observed: the class prior
    kappa0, nu0 = strength if isinstance(strength, tuple) else (strength, strength)
    for prior in ({}, _fixed_prior(X)):
        model = GaussianNB(predictive=True, prior_strength=strength, **prior).fit(X, y)
        if prior:
            m0, v0 = prior["prior_mean"], prior["prior_var"]
        else:  # the data's overall mean and variance (plus epsilon), per feature
            m0, v0 = np.nanmean(X, axis=0), np.nanvar(X, axis=0) + model.epsilon_
        log_prior = np.log(model.class_prior_)
        expected = gaussian_predictive_jll(X, y, X_test, kappa0, m0, nu0, v0, log_prior)
        np.testing.assert_allclose(model.predict_joint_log_proba(X_test), expected, rtol=1e-10)
        np.testing.assert_allclose(model.predict_log_proba(X_test),
                                   expected - logsumexp(expected, axis=1, keepdims=True),
                                   rtol=1e-9, atol=1e-12)
        # the plug-in parameters are the maximum-likelihood ones, whatever the prior
        plain = GaussianNB().fit(X, y)
        np.testing.assert_array_equal(model.theta_, plain.theta_)
        np.testing.assert_array_equal(model.var_, plain.var_)


@pytest.mark.parametrize("n_features", [1, 3])
@pytest.mark.parametrize("weight", [1e9, 1e15])
def test_gaussian_predictive_of_heavy_classes_keeps_its_digits(weight, n_features):
    """Classes of total weight w have a Student t of about w degrees of freedom, whose log
    density multiplies log(1 + u^2), u^2 ~ 1 / w, by -(w + 1) / 2: rounding 1 + u^2 cost about
    w ulps (0.6 nats of posterior at w = 1e15 a row). At such w the t is the normal of the
    predictive's scale to O(1 / w). (With one feature, its row of powers was once taken for a
    row shared by all features, and the product of the 1 + u^2 used whatever its power.)"""
    X, y = _gaussian_data(n=60, nan=0.0)
    X = X[:, :n_features]
    rows = RNG.normal(size=(5, X.shape[1]))
    model = GaussianNB(predictive=True).fit(X, y, sample_weight=np.full(len(y), weight))
    post = model._posterior(model._fitted)
    scale = np.sqrt(post.var * (1 + 1 / post.kappa))
    density = stats.t if weight < 1e12 else stats.norm
    shape = {"df": post.nu[:, None, :]} if density is stats.t else {}
    expected = density.logpdf(rows[None], loc=post.mean[:, None, :], scale=scale[:, None, :],
                              **shape).sum(axis=2).T + np.log(model.class_prior_)
    np.testing.assert_allclose(model.predict_joint_log_proba(rows), expected, rtol=1e-12)
    np.testing.assert_allclose(model.predict_log_proba(rows),
                               expected - logsumexp(expected, axis=1, keepdims=True), atol=1e-10)


def test_gaussian_unobserved_feature_gets_the_prior_predictive():
    X, y = _gaussian_data(nan=0.0)
    X[y == 1, 2] = np.nan  # class 1 never observes feature 2
    prior = _fixed_prior(X)
    model = GaussianNB(predictive=True, prior_strength=(0.5, 3.0), **prior).fit(X, y)
    x = np.array([[np.nan, np.nan, 1.7]])
    jll = model.predict_joint_log_proba(x)[0, 1] - np.log(model.class_prior_[1])
    expected = stats.t.logpdf(1.7, df=3.0, loc=0.1, scale=np.sqrt(2.0 * (1 + 1 / 0.5)))
    assert jll == pytest.approx(expected, rel=1e-12)


def _nig_log_evidence_mp(values, kappa0, m0, nu0, v0):
    """The Normal-Inverse-Gamma evidence of unit-weight values in 120-digit mpmath."""
    with mpmath.workdps(120):
        x = [mpmath.mpf(float(v)) for v in values]
        k0, m0, nu0, v0 = (mpmath.mpf(float(v)) for v in (kappa0, m0, nu0, v0))
        n = len(x)
        xbar = mpmath.fsum(x) / n
        m2 = mpmath.fsum((a - xbar) ** 2 for a in x)
        kn, nun = k0 + n, nu0 + n
        qn = nu0 * v0 + m2 + k0 * n / kn * (xbar - m0) ** 2
        return (mpmath.loggamma(nun / 2) - mpmath.loggamma(nu0 / 2) + mpmath.log(k0 / kn) / 2
                + nu0 / 2 * mpmath.log(nu0 * v0) - nun / 2 * mpmath.log(qn)
                - n / 2 * mpmath.log(mpmath.pi))


def test_gaussian_weak_prior_of_a_tiny_variance():
    """nu0 var0 underflows (1e-130 * 2e-200) where the posterior's scale does not: the evidence
    divided by it (a ValueError, and a NumPy warning), and the predictive of a class that never
    observed a feature formed nu var (1 + 1/kappa) from it (refused as overflowing)."""
    X = np.array([[1.0, 2.0], [2.0, 1.0], [4.0, 3.0], [-1.0, 0.5], [0.5, 2.0], [3.0, 1.0]]) * 1e-100
    y = np.array([0, 0, 0, 1, 1, 1])
    prior = {"prior_mean": np.array([1e-100, 2e-100]), "prior_var": np.array([2e-200, 1e-200])}
    model = GaussianNB(predictive=True, prior_strength=1e-130, **prior).fit(X, y)
    want = sum(_nig_log_evidence_mp(X[y == c, j], 1e-130, prior["prior_mean"][j], 1e-130,
                                    prior["prior_var"][j]) for c in (0, 1) for j in (0, 1))
    assert model.log_evidence_ == pytest.approx(float(want), rel=1e-13)
    X[y == 1, 1] = np.nan  # class 1 never observes feature 1: its predictive is the prior's t
    model = GaussianNB(predictive=True, prior_strength=1e-200, **prior).fit(X, y)
    x = np.array([[np.nan, 3e-100]])
    jll = model.predict_joint_log_proba(x)[0, 1] - np.log(model.class_prior_[1])
    with mpmath.workdps(60):  # Student t of dof 1e-200, scale^2 = var0 (1 + 1 / kappa0) = 1
        nu, z = mpmath.mpf(1e-200), mpmath.mpf(3e-100) - mpmath.mpf(2e-100)
        scale = mpmath.sqrt(mpmath.mpf(1e-200) * (1 + 1 / mpmath.mpf(1e-200)))
        want = (mpmath.loggamma((nu + 1) / 2) - mpmath.loggamma(nu / 2)
                - mpmath.log(mpmath.sqrt(nu * mpmath.pi) * scale)
                - (nu + 1) / 2 * mpmath.log1p((z / scale) ** 2 / nu))
    assert jll == pytest.approx(float(want), rel=1e-12)


@pytest.mark.parametrize("strength", [1.0, (0.4, 3.0)])
def test_gaussian_evidence_is_the_sequential_product(strength):
    X, y = _gaussian_data()
    prior = _fixed_prior(X)
    kappa0, nu0 = strength if isinstance(strength, tuple) else (strength, strength)
    model = GaussianNB(prior_strength=strength, **prior).fit(X, y)
    expected = gaussian_sequential_evidence(X, y, kappa0, prior["prior_mean"], nu0,
                                            prior["prior_var"])
    assert model.log_evidence_ == pytest.approx(expected, rel=1e-12)
    order = RNG.permutation(len(y))
    assert gaussian_sequential_evidence(X[order], y[order], kappa0, prior["prior_mean"], nu0,
                                        prior["prior_var"]) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("strength", [1e12, 1e20, 1e100])
def test_gaussian_evidence_of_a_strong_prior_is_the_prior_likelihood(strength):
    """A prior worth n0 observations pins (mu, sigma^2) at (m0, s0^2) as n0 grows: the evidence
    tends to the normal log-likelihood under them, within O(n / n0). A difference of lgammas of
    n0 / 2, or of n0 log(n0 s0^2) terms, loses every digit of it there."""
    X, y = _gaussian_data()
    prior = _fixed_prior(X)
    model = GaussianNB(prior_strength=strength, **prior).fit(X, y)
    observed = ~np.isnan(X)
    mean, var = (np.broadcast_to(prior[name], X.shape)[observed]
                 for name in ("prior_mean", "prior_var"))
    expected = stats.norm.logpdf(X[observed], mean, np.sqrt(var)).sum()
    # (the limit's own error, O(n / n0), is up to about 1e-10 of it at n0 = 1e12)
    assert model.log_evidence_ == pytest.approx(expected, rel=max(1e-12, 10 * len(X) / strength))


def test_gaussian_evidence_is_the_integral():
    """The marginal likelihood of three values as the double integral over (mu, sigma^2) of
    the likelihood times the prior density (Inv-Gamma times normal), written out."""
    x = np.array([0.4, 1.3, -0.2])
    kappa0, nu0, m0, v0 = 0.7, 2.5, 0.2, 0.8
    model = GaussianNB(prior_mean=[m0], prior_var=[v0], prior_strength=(kappa0, nu0)).fit(
        x[:, None], [0, 0, 0])
    shape, scale = nu0 / 2, nu0 * v0 / 2

    def joint(mu, s2):
        log_prior = (shape * np.log(scale) - gammaln(shape) - (shape + 1) * np.log(s2)
                     - scale / s2 - 0.5 * np.log(2 * np.pi * s2 / kappa0)
                     - kappa0 * (mu - m0) ** 2 / (2 * s2))
        log_likelihood = -1.5 * np.log(2 * np.pi * s2) - ((x - mu) ** 2).sum() / (2 * s2)
        return np.exp(log_prior + log_likelihood)

    value, _ = integrate.dblquad(joint, 0, np.inf, -np.inf, np.inf, epsabs=1e-14,
                                 epsrel=1e-11)
    assert model.log_evidence_ == pytest.approx(np.log(value), rel=1e-9)


def test_gaussian_integer_weights_are_repeated_rows():
    X, y = _gaussian_data()
    weight = RNG.integers(1, 4, len(y))
    for params in ({}, _fixed_prior(X), {"prior_strength": "evidence"}):
        weighted = GaussianNB(predictive=True, **params).fit(X, y, sample_weight=weight)
        repeated = GaussianNB(predictive=True, **params).fit(np.repeat(X, weight, axis=0),
                                                             np.repeat(y, weight))
        assert weighted.log_evidence_ == pytest.approx(repeated.log_evidence_, rel=1e-10)
        # (an evidence-chosen strength is located to about 1e-6: the evidence is flat there)
        tol = 1e-5 if params.get("prior_strength") == "evidence" else 1e-8
        np.testing.assert_allclose(weighted.predict_log_proba(X), repeated.predict_log_proba(X),
                                   rtol=tol, atol=1e-10)


def test_gaussian_evidence_strength_is_the_maximiser():
    X, y = _gaussian_data(n=60, nan=0.0)
    model = GaussianNB(prior_strength="evidence", predictive=True).fit(X, y)
    grid = np.geomspace(1e-4, 1e4, 401)
    evidence = np.array([GaussianNB(prior_strength=n0).fit(X, y).log_evidence_ for n0 in grid])
    best = np.argmax(evidence)
    assert 0 < best < len(grid) - 1  # an interior maximum, which the grid brackets
    assert grid[best - 1] <= model.prior_strength_ <= grid[best + 1]
    assert model.log_evidence_ >= evidence.max() - 1e-9
    plain = GaussianNB(prior_strength=float(model.prior_strength_), predictive=True).fit(X, y)
    np.testing.assert_allclose(model.predict_log_proba(X), plain.predict_log_proba(X),
                               rtol=0, atol=1e-12)
    assert GaussianNB(prior_strength=(2.0, 3.0)).fit(X, y).prior_strength_.tolist() == [2, 3]


def _updated_alike(cls, params, X, y, tmp_path):
    """The model fitted at once, and the same data through partial_fit, merge, a model file and
    a pickle."""
    model = cls(**params).fit(X, y)
    classes = np.unique(y)
    streamed = cls(**params)
    for rows in np.array_split(np.arange(len(y)), 3):
        streamed.partial_fit(X[rows], y[rows], classes=classes)
    half = len(y) // 2
    merged = cls(**params).fit(X[:half], y[:half]).merge(cls(**params).fit(X[half:], y[half:]))
    model.save(tmp_path / "model.fastgen")
    loaded = fastgen.load(tmp_path / "model.fastgen")
    return model, [streamed, merged, loaded, pickle.loads(pickle.dumps(model))]


@pytest.mark.parametrize("cls, params, data", [
    (GaussianNB, {"predictive": True, "prior_strength": "evidence"}, _gaussian_data),
    (GaussianNB, {"predictive": True, "prior_strength": (0.5, 2.0), "prior_var": [1, 2, 3]},
     _gaussian_data),
    (PoissonNB, {"predictive": True, "alpha": "evidence", "beta": 0.5}, _count_data),
])
def test_partial_fit_merge_and_files_equal_fit(cls, params, data, tmp_path):
    X, y = data(n=60, rng=np.random.default_rng(7))
    model, others = _updated_alike(cls, params, X, y, tmp_path)
    name = "prior_strength" if cls is GaussianNB else "alpha"
    for other in others:
        assert other.predictive is True
        # an evidence search on other statistics (equal to rounding) stops within its xatol
        # (1e-6 in log) of the fit's: the prediction is that of a fit at the value it chose
        chosen = getattr(other, name + "_")
        np.testing.assert_allclose(chosen, getattr(model, name + "_"), rtol=1e-6)
        assert other.log_evidence_ == pytest.approx(model.log_evidence_, rel=1e-10)
        refit = cls(**{**params, name: chosen}).fit(X, y)
        np.testing.assert_allclose(other.predict_log_proba(X), refit.predict_log_proba(X),
                                   rtol=0, atol=1e-10)


def test_gaussian_draws_follow_the_posterior():
    X, y = _gaussian_data(nan=0.0)
    prior = _fixed_prior(X)
    model = GaussianNB(prior_strength=(0.5, 3.0), **prior).fit(X, y)
    draws = model.sample_posterior(n_draws=3000, random_state=1)
    mu = np.array([d.theta_ for d in draws])
    var = np.array([d.var_ for d in draws])
    assert all(d.var_smoothing == 0.0 and d.predictive is False for d in draws)
    kappa, mean, nu, scale = np.vectorize(
        lambda c, j: _nig_posterior(X[y == c, j], 0.5, prior["prior_mean"][j], 3.0,
                                    prior["prior_var"][j]))(*np.indices(mu.shape[1:]))
    # mu's marginal is a t(nu, mean, scale / kappa); sigma^2's mean is nu scale / (nu - 2)
    se = np.sqrt(scale / kappa * nu / (nu - 2) / len(draws))
    assert np.all(np.abs(mu.mean(axis=0) - mean) < 5 * se)
    var_mean = nu * scale / (nu - 2)
    var_sd = var_mean * np.sqrt(2 / (nu - 4))
    assert np.all(np.abs(var.mean(axis=0) - var_mean) < 5 * var_sd / np.sqrt(len(draws)))
    np.testing.assert_array_equal(draws[0].class_prior_, model.class_prior_)


def test_gaussian_draws_of_a_weak_prior():
    """With nu0 = 1e-4 the prior's chi^2(nu0) draws underflow to 0 (infinite variances) in most
    calls. A class without samples does not use its draw (the plug-in's fallback), so its draws
    are fine; a class that never observed a feature needs the prior's draw, and its overflow
    is a clear error naming prior_strength (both were an error about a statistic before)."""
    X, y = _gaussian_data(nan=0.0)
    model = GaussianNB(prior_strength=1e-4)
    model.partial_fit(X, y, classes=[0, 1, 2, 3])
    for draw in model.sample_posterior(n_draws=5, random_state=0):
        assert np.isfinite(draw.predict_log_proba(X)[:, :3]).all()
    X[y == 0, 1] = np.nan
    model = GaussianNB(prior_strength=1e-4).fit(X, y)
    with pytest.raises(ValueError, match="prior_strength"):
        model.sample_posterior(n_draws=5, random_state=0)


def test_gaussian_draw_is_reproduced_by_the_plug_in():
    X, y = _gaussian_data()
    model = GaussianNB().fit(X, y)
    (draw,) = model.sample_posterior(random_state=7)
    mu, var = model._posterior(model._fitted).draw(np.random.default_rng(7))
    np.testing.assert_allclose(draw.theta_, mu, rtol=1e-15)
    np.testing.assert_allclose(draw.var_, var, rtol=4e-16)


@pytest.mark.parametrize("cls, data, params", [
    (GaussianNB, _gaussian_data, {"prior_strength": (0.5, 3.0)}),
    (PoissonNB, _count_data, {"alpha": 0.8, "beta": 0.5}),
])
def test_draws_average_to_the_predictive(cls, data, params):
    """The mean over draws of P(x | c, h) tends to the predictive P(x | c, D), class by class:
    one feature, few samples per class (a wide posterior), 4000 draws."""
    X, y = data(n=12, d=1, nan=0.0)
    model = cls(**params).fit(X, y)
    X_test = np.unique(X, axis=0)[:5]
    predictive = cls(predictive=True, **params).fit(X, y).predict_joint_log_proba(X_test)
    densities = np.exp([d.predict_joint_log_proba(X_test)
                        for d in model.sample_posterior(4000, random_state=3)])
    se = densities.std(axis=0) / np.sqrt(len(densities))
    assert np.all(np.abs(densities.mean(axis=0) - np.exp(predictive)) < 5 * se + 1e-12)


def test_float32_models():
    X, y = _gaussian_data()
    model64 = GaussianNB(predictive=True).fit(X, y)
    model32 = GaussianNB(predictive=True).fit(X.astype(np.float32), y)
    proba = model32.predict_proba(X.astype(np.float32))
    assert proba.dtype == np.float32 and model32.log_evidence_.dtype == np.float64
    np.testing.assert_allclose(proba, model64.predict_proba(X), rtol=1e-4, atol=1e-6)
    Xc, yc = _count_data()
    count32 = PoissonNB(predictive=True).fit(Xc.astype(np.float32), yc)
    assert count32.predict_proba(Xc.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(count32.predict_proba(Xc.astype(np.float32)),
                               PoissonNB(predictive=True).fit(Xc, yc).predict_proba(Xc),
                               rtol=1e-4, atol=1e-6)


# --------------------------------------------------------------------------- PoissonNB
def poisson_sequential_evidence(X, y, alpha, beta):
    """With scipy's negative binomial, plus the sum of log x! that log_evidence_ leaves out."""
    def log_predictive(j, past, x):
        r, b = alpha + past.sum(), beta + len(past)
        return stats.nbinom.logpmf(x, r, b / (b + 1)) + gammaln(x + 1)
    return sequential_evidence(X, y, log_predictive)


@pytest.mark.parametrize("sparse", [False, True])
def test_poisson_predictive_is_the_negative_binomial(sparse):
    X, y = _count_data(nan=0.0 if sparse else 0.1)
    alpha, beta = 0.7, 0.4
    model = PoissonNB(alpha=alpha, beta=beta, predictive=True).fit(X, y)
    X_test = RNG.poisson(3.0, (20, 4)).astype(np.float64)
    if not sparse:
        X_test[RNG.random(X_test.shape) < 0.2] = np.nan
    r = alpha + model.feature_count_
    b = beta + model.observed_count_
    expected = np.tile(model.class_log_prior_, (len(X_test), 1))
    for c in range(3):
        expected[:, c] += np.nansum(stats.nbinom.logpmf(X_test, r[c], b[c] / (b[c] + 1)),
                                    axis=1)
    got = model.predict_joint_log_proba(sp.csr_matrix(X_test) if sparse else X_test)
    np.testing.assert_allclose(got, expected, rtol=1e-11)
    np.testing.assert_allclose(model.predict_log_proba(sp.csr_matrix(X_test) if sparse
                                                       else X_test),
                               expected - logsumexp(expected, axis=1, keepdims=True),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("entries", [None, 36], ids=["whole-table", "table-of-3-counts"])
def test_poisson_predictive_table_and_lgamma_counts(monkeypatch, dtype, entries):
    """Whole counts the derive-time table holds (up to 64), larger ones (65, 300) and
    fractional ones, dense with missing values and CSR, score the negative binomial log-pmf
    (written with gammaln, which extends it to fractional counts) in every output kind; also
    where the model is too large for the whole table (36 entries for 4 features and 3 classes:
    the counts 0 to 2)."""
    if entries is not None:
        monkeypatch.setattr(fastgen.naive_bayes, "NEGBIN_TABLE_ENTRIES", entries)
    X, y = _count_data()
    alpha, beta = 0.7, 0.4
    model = PoissonNB(alpha=alpha, beta=beta, predictive=True).fit(X.astype(dtype), y)
    X_test = RNG.poisson(3.0, (30, 4)).astype(np.float64)
    X_test.flat[RNG.permutation(X_test.size)[:24]] = np.repeat([1, 2, 3, 64, 65, 300, 2.5,
                                                                0.5], 3)
    with_nan = X_test.copy()
    with_nan[RNG.random(X_test.shape) < 0.2] = np.nan
    r, b = alpha + model.feature_count_, beta + model.observed_count_
    rtol = 1e-11 if dtype == np.float64 else 2e-6
    for X_in in (with_nan, sp.csr_matrix(X_test)):
        dense = X_in.toarray() if sp.issparse(X_in) else X_in
        expected = negative_binomial_jll(dense, r, b, model.class_log_prior_)
        log_proba = expected - logsumexp(expected, axis=1, keepdims=True)
        X_in = X_in.astype(dtype)
        np.testing.assert_allclose(model.predict_joint_log_proba(X_in), expected, rtol=rtol)
        np.testing.assert_allclose(model.predict_log_proba(X_in), log_proba, rtol=rtol,
                                   atol=1e4 * rtol)
        np.testing.assert_allclose(model.predict_proba(X_in), np.exp(log_proba), rtol=rtol,
                                   atol=1e4 * rtol)


@pytest.mark.parametrize("strength", [1e15, 1e50])
def test_poisson_predictive_of_a_strong_prior_is_the_prior_rate(strength):
    """Gamma(a, a) pins every rate at 1 as a grows: the predictive negative binomial tends to
    Poisson(1), dense and CSR alike (the CSR path once lost every digit of lgamma(r + x) -
    lgamma(r) at such r)."""
    X, y = _count_data()
    model = PoissonNB(alpha=strength, beta=strength, predictive=True).fit(X, y)
    # with counts beyond the table (70) and fractional ones (2.5): the dense kernel once lost
    # every digit of their lgamma(r + x) - lgamma(r), as the CSR path had
    rows = np.vstack([X, [[70.0, 2.5, 0.0, 1.0], [0.5, 300.0, 65.0, 3.0]]])
    expected = model.class_log_prior_ + (-1.0 - gammaln(rows + 1.0)).sum(axis=1)[:, None]
    for rows in (rows, sp.csr_matrix(rows)):
        np.testing.assert_allclose(model.predict_joint_log_proba(rows), expected, rtol=1e-12)


@pytest.mark.parametrize("alpha, beta", [(1.0, 1.0), (0.3, 2.5)])
def test_poisson_evidence_is_the_sequential_product(alpha, beta):
    X, y = _count_data(nan=0.1)
    model = PoissonNB(alpha=alpha, beta=beta).fit(X, y)
    expected = poisson_sequential_evidence(X, y, alpha, beta)
    assert model.log_evidence_ == pytest.approx(expected, rel=1e-12)
    sparse = PoissonNB(alpha=alpha, beta=beta).fit(sp.csr_matrix(np.nan_to_num(X)), y)
    assert sparse.log_evidence_ == pytest.approx(
        poisson_sequential_evidence(np.nan_to_num(X), y, alpha, beta), rel=1e-12)


def test_poisson_evidence_of_a_tiny_beta_is_finite():
    """log1p(n / beta) with n / beta beyond float64 (beta = 1e-300, n = 1e9) is log n - log
    beta: the evidence, once -inf there (and alpha="evidence" the search's bound), is the
    closed form, computed here in mpmath."""
    X, y = _count_data()
    w = np.full(len(y), 1e9)
    model = PoissonNB(beta=1e-300).fit(X, y, sample_weight=w)
    a, beta = mpmath.mpf(1), mpmath.mpf("1e-300")
    expected = mpmath.mpf(0)
    with mpmath.workdps(60):
        for c in range(3):
            n = mpmath.mpf(w[y == c].sum())
            for j in range(X.shape[1]):
                s_cj = mpmath.mpf(float(X[y == c, j] @ w[y == c]))
                expected += (a * mpmath.log(beta) - mpmath.loggamma(a)
                             + mpmath.loggamma(a + s_cj) - (a + s_cj) * mpmath.log(beta + n))
    assert model.log_evidence_ == pytest.approx(float(expected), rel=1e-12)
    chosen = PoissonNB(beta=1e-300, alpha="evidence").fit(X, y, sample_weight=w).alpha_
    assert chosen == pytest.approx(PoissonNB(beta=1e-300, alpha="evidence").fit(X, y).alpha_,
                                   rel=1e-2)


def test_poisson_integer_weights_are_repeated_rows():
    X, y = _count_data()
    weight = RNG.integers(1, 4, len(y))
    weighted = PoissonNB(alpha="evidence", predictive=True).fit(X, y, sample_weight=weight)
    repeated = PoissonNB(alpha="evidence", predictive=True).fit(np.repeat(X, weight, axis=0),
                                                                np.repeat(y, weight))
    assert weighted.log_evidence_ == pytest.approx(repeated.log_evidence_, rel=1e-10)
    assert weighted.alpha_ == pytest.approx(repeated.alpha_, rel=1e-6)


def test_poisson_evidence_alpha_is_the_maximiser():
    X, y = _count_data(n=60)
    model = PoissonNB(alpha="evidence").fit(X, y)
    grid = np.geomspace(1e-4, 1e6, 801)
    evidence = np.array([PoissonNB(alpha=a).fit(X, y).log_evidence_ for a in grid])
    best = np.argmax(evidence)
    assert 0 < best < len(grid) - 1
    assert grid[best - 1] <= model.alpha_ <= grid[best + 1]
    assert model.log_evidence_ >= evidence.max() - 1e-9
    np.testing.assert_allclose(model.lambda_, PoissonNB(alpha=model.alpha_).fit(X, y).lambda_,
                               rtol=1e-15)


def test_poisson_draws_follow_the_posterior():
    X, y = _count_data(nan=0.1)
    model = PoissonNB(alpha=0.6, beta=0.3).fit(X, y)
    draws = model.sample_posterior(n_draws=3000, random_state=2)
    lam = np.array([d.lambda_ for d in draws])
    r, b = 0.6 + model.feature_count_, 0.3 + model.observed_count_
    se = np.sqrt(r) / b / np.sqrt(len(draws))
    assert np.all(np.abs(lam.mean(axis=0) - r / b) < 5 * se)
    # the relative standard error of a Gamma(r)'s sample variance: sqrt((2 + 6 / r) / n)
    assert np.all(np.abs(lam.var(axis=0) / (r / b**2) - 1) < 5 * np.sqrt((2 + 6 / r) / len(draws)))
    # each model's plug-in rate is its draw, to rounding
    rng = np.random.default_rng(5)
    (draw,) = model.sample_posterior(random_state=5)
    np.testing.assert_allclose(draw.lambda_, rng.gamma(r, 1 / b), rtol=1e-14)


def test_poisson_draws_of_a_small_alpha_hold_the_smallest_rate():
    """A rate a class never had a count for is Gamma(alpha, b): with alpha = 1e-3 about half of
    its mass lies below the smallest normal double, where a draw underflows to 0. Such a draw
    is held at that smallest rate, so that every drawn model fits and scores finitely (it
    was an error in most calls)."""
    X, y = _count_data()
    X[:, 0] = 0.0
    model = PoissonNB(alpha=1e-3).fit(X, y)
    draws = model.sample_posterior(n_draws=10, random_state=0)
    lam = np.array([d.lambda_ for d in draws])
    tiny = np.finfo(np.float64).tiny
    assert lam.min() == pytest.approx(tiny, rel=1e-12) and (lam[:, :, 0] >= tiny * 0.999).all()
    for draw in draws:
        assert np.isfinite(draw.predict_log_proba(X)).all()


# --------------------------------------------------------------------------- hostile input
@pytest.mark.parametrize("params, match", [
    ({"prior_mean": [0.0, 1.0]}, "prior_mean"),
    ({"prior_mean": [0.0, np.nan, 1.0]}, "prior_mean"),
    ({"prior_mean": "abc"}, "prior_mean"),
    ({"prior_var": [1.0, 0.0, 1.0]}, "prior_var"),
    ({"prior_var": [1.0, np.inf, 1.0]}, "prior_var"),
    ({"prior_var": [[1.0, 1.0, 1.0]]}, "prior_var"),
    ({"prior_strength": 0.0}, "prior_strength"),
    ({"prior_strength": -1.0}, "prior_strength"),
    ({"prior_strength": np.nan}, "prior_strength"),
    ({"prior_strength": "max"}, "prior_strength"),
    ({"prior_strength": (1.0,)}, "prior_strength"),
    ({"prior_strength": (1.0, -2.0)}, "prior_strength"),
    ({"prior_strength": True}, "prior_strength"),
    ({"predictive": "yes"}, "predictive"),
])
def test_gaussian_hyperparameters_are_checked(params, match):
    X, y = _gaussian_data()
    with pytest.raises(ValueError, match=match):
        GaussianNB(**params).fit(X, y)


def test_poisson_hyperparameters_are_checked():
    X, y = _count_data()
    with pytest.raises(ValueError, match="beta > 0"):
        PoissonNB(alpha="evidence", beta=0.0).fit(X, y)
    with pytest.raises(ValueError, match="'alpha' parameter"):
        PoissonNB(alpha="max").fit(X, y)
    with pytest.raises(ValueError, match="predictive"):
        PoissonNB(predictive=1).fit(X, y)
    with pytest.raises(AttributeError, match="beta > 0"):
        PoissonNB(beta=0.0).fit(X, y).log_evidence_


@pytest.mark.parametrize("cls, data", [(GaussianNB, _gaussian_data), (PoissonNB, _count_data)])
@pytest.mark.parametrize("n_draws", [0, 1.5, "3", True])
def test_n_draws_is_checked(cls, data, n_draws):
    X, y = data()
    with pytest.raises(ValueError, match="n_draws"):
        cls().fit(X, y).sample_posterior(n_draws=n_draws)


@settings(deadline=None, max_examples=25)
@given(X=arrays(np.float64, (12, 3), elements=st.one_of(
           st.floats(-1e6, 1e6), st.just(np.nan), st.just(1e150), st.just(-1e150))),
       strength=st.one_of(st.floats(1e-3, 1e3), st.just("evidence")))
def test_gaussian_predictive_posteriors_are_finite(X, strength):
    """Also with missing training values (the kernel's term-by-term path) and values 1e150
    apart (beyond the product path's range)."""
    y = np.arange(12) % 3
    train = X[:9] * np.array([1.0, 1e-3, 1.0]) + np.arange(9)[:, None]
    model = GaussianNB(predictive=True, prior_strength=strength).fit(train, y[:9])
    proba = model.predict_proba(X)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.isfinite(model.log_evidence_)


@settings(deadline=None, max_examples=25)
@given(X=arrays(np.float64, (12, 3), elements=st.one_of(
           st.integers(0, 10**6).map(float), st.just(np.nan))),
       alpha=st.one_of(st.floats(1e-3, 1e3), st.just("evidence")))
def test_poisson_predictive_posteriors_are_finite(X, alpha):
    y = np.arange(12) % 3
    model = PoissonNB(predictive=True, alpha=alpha).fit(np.nan_to_num(X[:9]), y[:9])
    proba = model.predict_proba(X)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)


def test_sample_of_a_predictive_gaussian_nb_draws_from_the_student_t():
    """Each feature's draws follow its predictive t (Kolmogorov-Smirnov against scipy.stats.t;
    the plug-in's normal is rejected on the same draws)."""
    X, y = _gaussian_data(n=12, d=2, n_classes=2, nan=0.0, rng=np.random.default_rng(3))
    model = GaussianNB(predictive=True).fit(X, y)
    plug_in = GaussianNB().fit(X, y)
    post = model._posterior(model._fitted)
    draws = model.sample(20000, y=1, random_state=0)[0]
    for j in range(2):
        t = stats.t(post.nu[1, j], post.mean[1, j],
                    np.sqrt(post.var[1, j] * (1 + 1 / post.kappa[1, j])))
        assert stats.kstest(draws[:, j], t.cdf).pvalue > 1e-3
    normal = stats.norm(plug_in.theta_[1, 0], np.sqrt(plug_in.var_[1, 0]))
    assert stats.kstest(draws[:, 0], normal.cdf).pvalue < 1e-6


def test_sample_of_a_predictive_poisson_nb_draws_from_the_negative_binomial():
    """Mean r / b and variance r (b + 1) / b^2 of the negative binomial, tolerance 5 standard
    errors; the plug-in's Poisson variance (r / b) is below it."""
    X = np.array([[0, 3], [1, 4], [2, 6], [5, 0], [4, 1]], dtype=np.float64)
    y = np.array([0, 0, 0, 1, 1])
    model = PoissonNB(predictive=True).fit(X, y)
    draws = model.sample(40000, y=0, random_state=0)[0]
    r = 1.0 + X[y == 0].sum(axis=0)
    b = 1.0 + (y == 0).sum()
    mean, var = r / b, r * (b + 1) / b**2
    n = len(draws)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * np.sqrt(var / n))
    assert np.all(np.abs(draws.var(axis=0) - var) < 5 * var * np.sqrt(2.0 / n) * 3)
    assert np.all(np.abs(draws.var(axis=0) - mean) > 5 * var * np.sqrt(2.0 / n) * 3)


def test_poisson_alpha_zero_is_the_maximum_likelihood_rate():
    """alpha = 0, beta = 0: the rate is each class's mean count (what an unsmoothed drawn model
    holds); a count of zero then has rate 0, an error; there is no proper posterior to predict
    with."""
    X = np.array([[1, 3], [2, 5], [4, 1], [6, 2]], dtype=np.float64)
    y = [0, 0, 1, 1]
    model = PoissonNB(alpha=0.0, beta=0.0).fit(X, y)
    np.testing.assert_allclose(model.lambda_, [[1.5, 4.0], [5.0, 1.5]])
    with pytest.raises(ValueError, match="rate"):
        PoissonNB(alpha=0.0).fit(np.array([[0.0, 1.0], [2.0, 3.0]]), [0, 1])
    with pytest.raises(ValueError, match="alpha > 0"):
        PoissonNB(alpha=0.0, predictive=True).fit(X, y)
    with pytest.raises(AttributeError, match="alpha > 0"):
        PoissonNB(alpha=0.0, beta=1.0).fit(X, y).log_evidence_
