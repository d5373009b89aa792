"""The Normal-Inverse-Wishart prior of LDA and QDA: the posterior predictive (predictive=True),
log_evidence_, prior_strength="evidence" and sample_posterior.

References are computed from the raw rows, not from the models' statistics: the posterior by
the textbook update (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian distribution"),
each class's predictive density by scipy.stats.multivariate_t (on the observed sub-vector for
rows with missing values), the evidence as the product of the sequential one-step predictive
densities (which is the marginal likelihood whatever the order of the rows)."""
import pickle

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.special import logsumexp
from scipy.stats import invwishart, multivariate_normal, multivariate_t

import fastgen
from fastgen import LinearDiscriminantAnalysis as LDA
from fastgen import QuadraticDiscriminantAnalysis as QDA

MODELS = [LDA, QDA]
IDS = ["LDA", "QDA"]


def data(n=60, d=3, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    A = rng.normal(size=(n_classes, d, d)) / 2 + np.eye(d)
    X = np.einsum("ijk,ik->ij", A[y], rng.normal(size=(n, d))) + 1.5 * y[:, None]
    return X, y


def posterior_from_rows(X, y, n_classes, m0, cov0, kappa0, nu0, shared):
    """Per class (m_c, kappa_c, Psi of its group, nu of its group), by the textbook update."""
    d = X.shape[1]
    psi0 = nu0 * cov0
    out, spread_all, n_all = [], np.zeros((d, d)), 0
    for c in range(n_classes):
        rows = X[y == c]
        n = len(rows)
        xbar = rows.mean(axis=0) if n else np.zeros(d)
        S = (rows - xbar).T @ (rows - xbar)
        kappa = kappa0 + n
        spread = S + kappa0 * n / kappa * np.outer(xbar - m0, xbar - m0)
        out.append([(kappa0 * m0 + n * xbar) / kappa, kappa, psi0 + spread, nu0 + n])
        spread_all += spread
        n_all += n
    if shared:
        for entry in out:
            entry[2], entry[3] = psi0 + spread_all, nu0 + n_all
    return out


def t_logpdf(x, m, kappa, psi, nu):
    """The class's posterior predictive on the observed entries of x (scipy)."""
    d = len(m)
    df = nu - d + 1
    shape = psi * (kappa + 1) / (kappa * df)
    o = ~np.isnan(x)
    if not o.any():
        return 0.0
    return multivariate_t(loc=m[o], shape=shape[np.ix_(o, o)], df=df).logpdf(x[o])


def default_prior(X, n0, d):
    return X.mean(axis=0), np.diag(X.var(axis=0)), n0, n0 + d - 1


def reference_jll(X_fit, y, X, prior, shared, n_classes, log_prior=None):
    post = posterior_from_rows(X_fit, y, n_classes, *prior, shared)
    if log_prior is None:
        log_prior = np.log(np.bincount(y, minlength=n_classes) / len(y))
    return np.array([[log_prior[c] + t_logpdf(x, *post[c]) for c in range(n_classes)]
                     for x in X])


# ---------------------------------------------------------------------------- the predictive
@pytest.mark.parametrize("Model", MODELS, ids=IDS)
@pytest.mark.parametrize("prior", ["default", "given", "pair"])
def test_predictive_is_the_multivariate_t(Model, prior):
    X, y = data()
    d = X.shape[1]
    rng = np.random.default_rng(1)
    test = rng.normal(size=(8, d)) * 3
    test[[1, 4], [0, 2]] = np.nan
    test[5] = np.nan  # nothing observed: the class prior
    if prior == "default":
        params, ref = {"prior_strength": 2.5}, default_prior(X, 2.5, d)
    else:
        m0, cov0 = rng.normal(size=d), np.cov(rng.normal(size=(20, d)).T) + np.eye(d)
        strength = 0.7 if prior == "given" else (0.4, d + 3.5)
        kappa0, nu0 = (0.7, 0.7 + d - 1) if prior == "given" else strength
        params = {"prior_mean": m0, "prior_covariance": cov0, "prior_strength": strength}
        ref = (m0, cov0, kappa0, nu0)
    model = Model(predictive=True, **params).fit(X, y)
    want = reference_jll(X, y, test, ref, Model is LDA, 3)
    assert_allclose(model.predict_joint_log_proba(test), want, rtol=1e-9, atol=1e-9)
    log_post = want - logsumexp(want, axis=1, keepdims=True)
    assert_allclose(model.predict_log_proba(test), log_post, rtol=1e-9, atol=1e-9)
    assert_allclose(model.predict_proba(test), np.exp(log_post), rtol=1e-9, atol=1e-12)
    assert (model.predict(test) == want.argmax(axis=1)).all()
    # the plug-in prediction is unchanged by the prior's hyperparameters
    plug_in = Model(**params).fit(X, y)
    assert_allclose(plug_in.predict_joint_log_proba(test), Model().fit(X, y)
                    .predict_joint_log_proba(test), rtol=1e-12)


def _t_logpdf_mp(x, m, kappa, psi, nu):
    """t_logpdf in 50-digit mpmath, where float64's distance would overflow."""
    o = ~np.isnan(x)
    d = int(o.sum())
    df = nu - len(m) + 1
    with mpmath.workdps(50):
        shape = mpmath.matrix(psi[np.ix_(o, o)].tolist()) * (mpmath.mpf(kappa) + 1) / (
            mpmath.mpf(kappa) * df)
        u = mpmath.matrix([mpmath.mpf(float(a)) - mpmath.mpf(float(b))
                           for a, b in zip(x[o], m[o])])
        q = (u.T * mpmath.inverse(shape) * u)[0]
        return float(mpmath.loggamma((df + d) / mpmath.mpf(2)) - mpmath.loggamma(df / mpmath.mpf(2))
                     - d / mpmath.mpf(2) * mpmath.log(df * mpmath.pi)
                     - mpmath.log(mpmath.det(shape)) / 2
                     - (df + d) / mpmath.mpf(2) * mpmath.log1p(q / df))


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_predictive_of_rows_too_far_for_a_float64_distance(Model):
    """A row whose distance to the classes overflows float64 (data of spread 1e-20, rows up to
    1e149, which X's bound admits) still has a finite t density: its jll and posteriors equal
    the 50-digit ones, complete or with a missing value, as for nearer rows."""
    rng = np.random.default_rng(0)
    std = 1e-20
    X = rng.standard_normal((70, 3)) * std + np.repeat(np.eye(3) * std * 3, [10, 20, 40], axis=0)
    y = np.repeat([0, 1, 2], [10, 20, 40])
    model = Model(predictive=True, prior_strength=2.5).fit(X, y)
    post = posterior_from_rows(X, y, 3, *default_prior(X, 2.5, 3), Model is LDA)
    log_prior = np.log(np.bincount(y) / len(y))
    for scale in (1e3, 1e140, 1e149):
        test = np.array([[1.0, 0, 0], [0.3, -1, 2], [1.0, np.nan, 0.5]]) * scale
        want = np.array([[log_prior[c] + _t_logpdf_mp(x, *post[c]) for c in range(3)]
                         for x in test])
        assert_allclose(model.predict_joint_log_proba(test), want, rtol=1e-9)
        log_post = want - logsumexp(want, axis=1, keepdims=True)
        assert_allclose(model.predict_log_proba(test), log_post, rtol=1e-9, atol=1e-9)
        assert_allclose(model.predict_proba(test), np.exp(log_post), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_predictive_scale_beyond_float64_is_a_clear_error(Model):
    """Classes 1e12 apart under a prior of unit covariance: the posterior scale is positive
    definite but not in float64 (Cholesky fails); the predictive, the evidence and the draws
    raise a ValueError that names the fix, not LinAlgError, and the evidence's choice of
    strength takes one where float64 suffices."""
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0, 0], [1e12, 0, 0], [0, 1e12, 7e11]])
    X = rng.standard_normal((300, 3)) + np.repeat(centers, 100, axis=0)
    y = np.repeat([0, 1, 2], 100)
    prior = {"prior_covariance": np.ones(3), "prior_mean": np.zeros(3)}
    for use in (lambda: Model(predictive=True, prior_strength=1e-3, **prior).fit(X, y)
                .predict_proba(X[:2]),
                lambda: Model(prior_strength=1e-3, **prior).fit(X, y).log_evidence_,
                lambda: Model(prior_strength=1e-3, **prior).fit(X, y).sample_posterior(1)):
        with pytest.raises(ValueError, match="too ill-conditioned for float64"):
            use()
    chosen = Model(prior_strength="evidence", predictive=True, **prior).fit(X, y)
    assert np.isfinite(chosen.log_evidence_) and np.isfinite(chosen.predict_proba(X[:2])).all()


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_evidence_float64_cannot_give_is_an_error_and_the_search_avoids_it(Model):
    """Near float64's limit some prior strengths have no evidence (rounding takes the whitened
    spread's eigenvalues below -1, or a factorization fails): ``log_evidence_`` is then the
    ValueError, never NaN or inf, and prior_strength="evidence" chooses among the strengths
    that have one, at least as well as a grid of them."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 100)
    X = rng.standard_normal((300, 3)) + np.repeat(
        np.array([[0, 0, 0], [1e9, 0, 0], [0, 1e9, 7e8]]), 100, axis=0)
    prior = {"prior_covariance": np.ones(3), "prior_mean": np.zeros(3)}
    values = []
    for strength in np.geomspace(1e-4, 1e6, 21):
        try:
            values.append(Model(prior_strength=strength, **prior).fit(X, y).log_evidence_)
        except ValueError as error:
            assert "too ill-conditioned for float64" in str(error)
            values.append(-np.inf)
    values = np.array(values)
    assert np.isfinite(values).any() and not np.isnan(values).any() and (values < np.inf).all()
    assert (values == -np.inf).any()  # the case this test is about
    chosen = Model(prior_strength="evidence", **prior).fit(X, y)
    assert chosen.log_evidence_ >= values.max() - 1e-6 * abs(values.max())
    # features in units 1e20 apart under a unit prior covariance (once NaN at every strength):
    # a number or the ValueError, and the search finds a strength that has a number
    units = (rng.standard_normal((60, 4)) + np.repeat([0, 1, 2], 20)[:, None]) * [
        1e-10, 1, 1e10, 1e5]
    y_units = np.repeat([0, 1, 2], 20)
    for strength in (1e-4, 1.0, 1e3):
        try:
            assert np.isfinite(Model(prior_strength=strength, prior_covariance=np.ones(4)).fit(
                units, y_units).log_evidence_)
        except ValueError as error:
            assert "too ill-conditioned for float64" in str(error)
    assert np.isfinite(Model(prior_strength="evidence", prior_covariance=np.ones(4)).fit(
        units, y_units).log_evidence_)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_draws_beyond_float64_are_a_clear_error(Model):
    """With 1e-4 degrees of freedom (a weak prior, weights of 1e-8), the Bartlett chi-square
    draws underflow to 0 and the drawn covariance is unbounded: a ValueError that says so, not
    numpy's 'Singular matrix'; a stronger prior draws finite models from the same data."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 20)
    X = rng.standard_normal((60, 4)) + y[:, None]
    weight = np.full(60, 1e-8)
    with pytest.raises(ValueError, match="beyond float64.*degrees of freedom"):
        Model(prior_strength=1e-4).fit(X, y, sample_weight=weight).sample_posterior(
            3, random_state=0)
    for draw in Model(prior_strength=1.0).fit(X, y, sample_weight=weight).sample_posterior(
            3, random_state=0):
        assert np.isfinite(draw.predict_proba(X)).all()


def test_lda_decision_function_follows_the_predictive():
    X, y = data(n_classes=2)
    model = LDA(predictive=True).fit(X, y)
    log_proba = model.predict_log_proba(X[:5])
    assert_allclose(model.decision_function(X[:5]), log_proba[:, 1] - log_proba[:, 0],
                    rtol=1e-12)
    assert not np.allclose(model.decision_function(X[:5]),
                           LDA().fit(X, y).decision_function(X[:5]), rtol=1e-6)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_predictive_with_given_priors_and_an_unseen_class(Model):
    """The class prior is the plug-in's (given priors here); a class announced but not seen has
    prior 0 and posterior 0, without NaN."""
    X, y = data()
    model = Model(predictive=True, priors=[0.2, 0.3, 0.5]).fit(X, y)
    want = reference_jll(X, y, X[:4], default_prior(X, 1.0, 3), Model is LDA, 3,
                         np.log([0.2, 0.3, 0.5]))
    assert_allclose(model.predict_joint_log_proba(X[:4]), want, rtol=1e-9)
    streamed = Model(predictive=True).partial_fit(X, y, classes=[0, 1, 2, 3])
    proba = streamed.predict_proba(X[:4])
    assert np.isfinite(proba).all() and (proba[:, 3] == 0).all()
    assert np.isfinite(streamed.log_evidence_)


# ---------------------------------------------------------------------------- the evidence
def sequential_evidence(X, y, n_classes, prior, shared):
    """sum_i log P(x_i | y_i, rows before i): the chain rule of the marginal likelihood."""
    total = 0.0
    for i in range(len(X)):
        post = posterior_from_rows(X[:i], y[:i], n_classes, *prior, shared)
        total += t_logpdf(X[i], *post[y[i]])
    return total


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
@pytest.mark.parametrize("strength", [0.5, 3.0, (2.0, 4.5)])
def test_log_evidence_is_the_product_of_sequential_predictives(Model, strength):
    X, y = data(n=24, d=2, n_classes=2, seed=3)
    m0, cov0 = np.array([0.3, -0.2]), np.array([[2.0, 0.4], [0.4, 1.0]])
    kappa0, nu0 = (strength, strength + 1) if np.ndim(strength) == 0 else strength
    model = Model(prior_mean=m0, prior_covariance=cov0, prior_strength=strength).fit(X, y)
    want = sequential_evidence(X, y, 2, (m0, cov0, kappa0, nu0), Model is LDA)
    assert_allclose(model.log_evidence_, want, rtol=1e-10)
    # in another order of the rows, the same
    order = np.random.default_rng(0).permutation(len(X))
    assert_allclose(sequential_evidence(X[order], y[order], 2, (m0, cov0, kappa0, nu0),
                                        Model is LDA), want, rtol=1e-10)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
@pytest.mark.parametrize("strength", [1e12, 1e20, 1e100])
def test_a_strong_prior_pins_the_gaussian(Model, strength):
    """A prior worth n0 observations pins each mean at m0 and each covariance at cov0 as n0
    grows: the evidence tends to the Gaussian log-likelihood under them and the predictive to
    that Gaussian, within O(n / n0). Differences of lgammas of n0 / 2, or of n0 log|Psi| terms,
    lose every digit of them there."""
    X, y = data(n=24, d=2, n_classes=2, seed=3)
    m0, cov0 = np.array([0.3, -0.2]), np.array([[2.0, 0.4], [0.4, 1.0]])
    model = Model(predictive=True, prior_mean=m0, prior_covariance=cov0,
                  prior_strength=strength).fit(X, y)
    gaussian = multivariate_normal(m0, cov0)
    assert_allclose(model.log_evidence_, gaussian.logpdf(X).sum(), rtol=1e-10)
    jll = model.predict_joint_log_proba(X[:5]) - np.log(model.priors_)
    assert_allclose(jll, np.repeat(gaussian.logpdf(X[:5])[:, None], 2, axis=1), rtol=1e-10)


def _niw_evidence_mp(X, y, n_classes, m0, cov0, n0, shared):
    """The closed-form NIW log evidence (Murphy 2007) in 60-digit mpmath, nu0 = n0 + d - 1
    formed there: a reference where float64 would round n0 away beside d - 1."""
    with mpmath.workdps(60):
        d = X.shape[1]
        n0 = mpmath.mpf(n0)
        nu0 = n0 + d - 1
        psi0 = mpmath.matrix([[nu0 * mpmath.mpf(v) for v in row] for row in cov0])
        m0 = [mpmath.mpf(v) for v in m0]

        def log_gamma_d(a):
            return (d * (d - 1) / mpmath.mpf(4) * mpmath.log(mpmath.pi)
                    + mpmath.fsum(mpmath.loggamma(a - mpmath.mpf(i) / 2) for i in range(d)))

        groups = [list(range(n_classes))] if shared else [[c] for c in range(n_classes)]
        value = -len(X) * d / mpmath.mpf(2) * mpmath.log(mpmath.pi)
        for group in groups:
            psi, n_group = psi0.copy(), 0
            for c in group:
                rows = [[mpmath.mpf(v) for v in row] for row in X[y == c]]
                n = len(rows)
                xbar = [mpmath.fsum(r[j] for r in rows) / n for j in range(d)]
                for r in rows:
                    v = mpmath.matrix([r[j] - xbar[j] for j in range(d)])
                    psi += v * v.T
                dev = mpmath.matrix([xbar[j] - m0[j] for j in range(d)])
                psi += (n0 * n / (n0 + n)) * dev * dev.T
                value += d / mpmath.mpf(2) * mpmath.log(n0 / (n0 + n))
                n_group += n
            nu = nu0 + n_group
            value += (log_gamma_d(nu / 2) - log_gamma_d(nu0 / 2)
                      + nu0 / 2 * mpmath.log(mpmath.det(psi0))
                      - nu / 2 * mpmath.log(mpmath.det(psi)))
        return float(value)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
@pytest.mark.parametrize("strength", [1e-8, 1e-15, 1e-16, 1e-20])
@pytest.mark.parametrize("d", [1, 2])
def test_log_evidence_of_a_weak_prior_keeps_its_digits(Model, strength, d):
    """nu0 = n0 + d - 1 rounds a small n0's digits away (1e-16 beside 1 entirely), and the last
    of log Gamma_d(nu0 / 2)'s lgammas, at (nu0 - d + 1) / 2 = n0 / 2, took them all: 1e-3 of
    the evidence at n0 = 1e-15, an ill-conditioning ValueError at 1e-16. It is formed from n0
    itself, and for one feature nu0 is n0 (it was (n0 + 1) - 1: 0 below 1.1e-16, an
    ill-conditioning ValueError)."""
    X, y = data(n=10, d=d, n_classes=2, seed=0)
    m0, cov0 = X.mean(axis=0), np.diag(X.var(axis=0))
    model = Model(prior_strength=strength).fit(X, y)
    want = _niw_evidence_mp(X, y, 2, m0, cov0, strength, Model is LDA)
    assert_allclose(model.log_evidence_, want, rtol=1e-12)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_predictive_of_a_weak_prior_and_weightless_rows_is_the_prior_predictive(Model):
    """Rows of weight 1e-300 leave the posterior at the prior: the predictive is the prior's t,
    of dof n0 (computed in mpmath). Its dof was formed as nu - d + 1, in which n0 = 1e-15 kept
    one digit and 1e-20 none (a division by zero, then a ValueError)."""
    X, y = data(n=10, d=2, n_classes=2, seed=0)
    m0, cov0 = X.mean(axis=0), np.array([[2.0, 0.3], [0.3, 1.0]])
    rows = X[:3] * 4
    for n0 in (1e-15, 1e-20):
        model = Model(predictive=True, prior_strength=n0, prior_mean=m0,
                      prior_covariance=cov0).fit(X, y, sample_weight=np.full(10, 1e-300))
        with mpmath.workdps(50):
            d, nu = 2, mpmath.mpf(n0)  # dof = nu0 - d + 1 = n0
            shape = mpmath.matrix(cov0.tolist()) * (nu + d - 1) * (1 + 1 / nu) / nu
            inverse = shape ** -1
            want = []
            for row in rows:
                v = mpmath.matrix((row - m0).tolist())
                maha = (v.T * inverse * v)[0]
                want.append(float(mpmath.loggamma((nu + d) / 2) - mpmath.loggamma(nu / 2)
                                  - d / 2 * mpmath.log(nu * mpmath.pi)
                                  - mpmath.log(mpmath.det(shape)) / 2
                                  - (nu + d) / 2 * mpmath.log1p(maha / nu)))
        assert_allclose(model.predict_joint_log_proba(rows) - np.log(model.priors_),
                        np.repeat(np.array(want)[:, None], 2, axis=1), rtol=1e-12)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_predictive_beyond_float64_is_an_error_without_numpy_warnings(Model):
    X, y = data(n=10, d=2, n_classes=2, seed=0)
    with pytest.raises(ValueError, match="overflows float64"):
        Model(predictive=True).fit(X, y, sample_weight=np.full(10, 1e160))


def test_log_evidence_of_one_class_by_monte_carlo_free_identity():
    """QDA's evidence of one class equals the NIW identity p(D) = p(D | mu, Sigma) p(mu, Sigma)
    / p(mu, Sigma | D) at any (mu, Sigma) (scipy's inverse Wishart and normal densities)."""
    from scipy.stats import multivariate_normal

    X, y = data(n=30, d=2, n_classes=2, seed=4)
    m0, cov0, n0 = np.zeros(2), np.eye(2) * 2.0, 1.5
    model = QDA(prior_mean=m0, prior_covariance=cov0, prior_strength=n0).fit(X, y)
    kappa0, nu0, psi0 = n0, n0 + 1, (n0 + 1) * cov0
    total = 0.0
    for c, (m_n, kappa_n, psi_n, nu_n) in enumerate(
            posterior_from_rows(X, y, 2, m0, cov0, n0, n0 + 1, False)):
        rows = X[y == c]
        mu, sigma = rows.mean(axis=0), np.cov(rows.T)
        log_lik = multivariate_normal(mu, sigma).logpdf(rows).sum()
        log_prior = (invwishart(nu0, psi0).logpdf(sigma)
                     + multivariate_normal(m0, sigma / kappa0).logpdf(mu))
        log_post = (invwishart(nu_n, psi_n).logpdf(sigma)
                    + multivariate_normal(m_n, sigma / kappa_n).logpdf(mu))
        total += log_lik + log_prior - log_post
    assert_allclose(model.log_evidence_, total, rtol=1e-10)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_prior_strength_evidence_maximises_the_evidence(Model):
    X, y = data(n=40, d=2, seed=5)
    model = Model(prior_strength="evidence").fit(X, y)
    chosen = model.prior_strength_
    assert 1e-3 <= chosen <= 1e6
    assert_allclose(Model(prior_strength=chosen).fit(X, y).log_evidence_, model.log_evidence_,
                    rtol=1e-12)
    grid = np.exp(np.linspace(np.log(1e-3), np.log(1e6), 60))
    best = max(Model(prior_strength=n0).fit(X, y).log_evidence_ for n0 in grid)
    assert model.log_evidence_ >= best - 1e-9 * abs(best)
    for n0 in (chosen * 0.9, chosen * 1.1):
        assert Model(prior_strength=n0).fit(X, y).log_evidence_ < model.log_evidence_
    # the predictive uses the chosen strength
    pred = Model(prior_strength="evidence", predictive=True).fit(X, y)
    assert_allclose(pred.predict_joint_log_proba(X[:5]),
                    Model(prior_strength=chosen, predictive=True).fit(X, y)
                    .predict_joint_log_proba(X[:5]), rtol=1e-12)


# ---------------------------------------------------------------------------- the draws
@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_posterior_draws_have_the_posterior_moments(Model):
    X, y = data(n=30, d=2, n_classes=2, seed=6)
    model = Model(prior_strength=2.0).fit(X, y)
    n_draws = 800
    draws = model.sample_posterior(n_draws, random_state=0)
    covs = np.array([m.covariance_ for m in draws])  # (draws, C, d, d) or (draws, d, d)
    covs = covs if Model is QDA else np.repeat(covs[:, None], 2, axis=1)
    means = np.array([m.means_ for m in draws])
    post = posterior_from_rows(X, y, 2, *default_prior(X, 2.0, 2), Model is LDA)
    for c, (m_n, kappa_n, psi_n, nu_n) in enumerate(post):
        want_cov = psi_n / (nu_n - 2 - 1)
        se = covs[:, c].std(axis=0) / np.sqrt(n_draws)
        assert (np.abs(covs[:, c].mean(axis=0) - want_cov) < 4.5 * se).all()
        se = means[:, c].std(axis=0) / np.sqrt(n_draws)
        assert (np.abs(means[:, c].mean(axis=0) - m_n) < 4.5 * se).all()
        # and the spread of the means: Var(mu) = E[Sigma] / kappa_n
        want_var = want_cov / kappa_n  # (a sample covariance's standard error, Gaussian)
        se = np.sqrt((np.outer(np.diag(want_var), np.diag(want_var)) + want_var ** 2) / n_draws)
        assert (np.abs(np.cov(means[:, c].T) - want_var) < 5 * se).all()
    # the draws keep the class prior, and are plug-in models without regularisation
    assert all(not m.predictive and m.get_params() == {**model.get_params(), **(
        {"reg_param": 0.0} if Model is QDA else {"shrinkage": None})} for m in draws)
    assert_allclose(draws[0].priors_, model.priors_)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_average_draw_density_is_the_predictive(Model):
    """E_h[P(x, c | h)] over the posterior is the predictive joint P(c) P(x | c, D)."""
    X, y = data(n=16, d=2, n_classes=2, seed=7)
    model = Model(prior_strength=1.5, predictive=True).fit(X, y)
    test = np.array([[0.0, 0.5], [2.0, 1.0], [1.0, np.nan]])
    n_draws = 800
    joint = np.exp([m.predict_joint_log_proba(test)
                    for m in model.sample_posterior(n_draws, random_state=1)])
    want = np.exp(model.predict_joint_log_proba(test))
    se = joint.std(axis=0) / np.sqrt(n_draws)
    assert (np.abs(joint.mean(axis=0) - want) < 5 * se).all()


def test_qda_draws_with_a_class_without_samples_and_nu0_near_its_bound():
    """nu0 = k - 1 + 1e-4: the chi^2(1e-4) of a class without samples underflows to 0, and its
    Bartlett factor was singular (a LinAlgError) although that class's draw is never used."""
    X, y = data(n=30, d=3, n_classes=2, seed=1)
    model = QDA(predictive=True, prior_strength=(1.0, 2.0001))
    model.partial_fit(X, y, classes=[0, 1, 2])
    for draw in model.sample_posterior(n_draws=5, random_state=0):
        assert np.isfinite(draw.predict_log_proba(X)[:, :2]).all()


def test_draws_of_a_shared_covariance_share_it():
    X, y = data()
    draw = LDA(shrinkage=0.3).fit(X, y).sample_posterior(1, random_state=2)[0]
    assert draw.shrinkage is None
    post = posterior_from_rows(X, y, 3, *default_prior(X, 1.0, 3), True)
    assert draw.covariance_.shape == (3, 3)
    assert np.linalg.eigvalsh(draw.covariance_).min() > 0
    assert not np.allclose(draw.means_, [p[0] for p in post])


# ---------------------------------------------------------------------------- the statistics
@pytest.mark.parametrize("Model", MODELS, ids=IDS)
@pytest.mark.parametrize("strength", [2.0, "evidence"])
def test_streamed_merged_saved_and_pickled_models_agree(Model, strength, tmp_path):
    X, y = data(seed=8)
    params = {"prior_strength": strength, "predictive": True}
    whole = Model(**params).fit(X, y)
    streamed = Model(**params).partial_fit(X[:25], y[:25], classes=[0, 1, 2])
    streamed.partial_fit(X[25:], y[25:])
    merged = Model(**params).fit(X[:30], y[:30]).merge(Model(**params).fit(X[30:], y[30:]))
    whole.save(tmp_path / "model.fg")
    # (the maximiser of the evidence is found to a relative 1e-6: statistics summed in another
    # order may move it by that much, and the predictive with it)
    rtol = 1e-9 if strength == 2.0 else 1e-6
    for other in [streamed, merged, fastgen.load(tmp_path / "model.fg"),
                  pickle.loads(pickle.dumps(whole))]:
        assert other.predictive and other.prior_strength == strength
        assert_allclose(other.prior_strength_, whole.prior_strength_, rtol=rtol)
        assert_allclose(other.log_evidence_, whole.log_evidence_, rtol=1e-9)
        assert_allclose(other.predict_joint_log_proba(X[:5]),
                        whole.predict_joint_log_proba(X[:5]), rtol=rtol)


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_float32_model(Model):
    X, y = data(seed=9)
    m32 = Model(predictive=True).fit(X.astype(np.float32), y)
    m64 = Model(predictive=True).fit(X.astype(np.float32).astype(np.float64), y)
    out = m32.predict_joint_log_proba(X[:5])
    assert out.dtype == np.float32
    assert_allclose(out, m64.predict_joint_log_proba(X[:5]), rtol=1e-5)
    assert m32.log_evidence_ == m64.log_evidence_  # float64 (the exceptions of _state.py)
    assert m32.sample_posterior(1, random_state=0)[0].means_.dtype == np.float32


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_a_constant_feature_is_left_out_by_the_default_prior(Model):
    """Its variance in the data, the default prior's scale there, is 0: the model is the one
    fitted without it (as the plug-in), evidence, predictive and draws alike; a given
    prior_covariance keeps it."""
    X, y = data(seed=10)
    with_constant = np.insert(X, 1, 7.0, axis=1)
    test = np.insert(X[:6], 1, [7.0, 3.0, np.nan, 7.0, -2.0, 7.0], axis=1)
    test[3, 0] = np.nan
    model = Model(predictive=True).fit(with_constant, y)
    without = Model(predictive=True).fit(X, y)
    assert_allclose(model.predict_joint_log_proba(test),
                    without.predict_joint_log_proba(np.delete(test, 1, axis=1)), rtol=1e-10)
    assert_allclose(model.log_evidence_, without.log_evidence_, rtol=1e-10)
    draw = model.sample_posterior(1, random_state=0)[0]
    assert (draw.means_[:, 1] == 7.0).all()
    kept = Model(predictive=True, prior_covariance=np.ones(4)).fit(with_constant, y)
    jll = kept.predict_joint_log_proba(test[:2])
    assert jll[1].max() < jll[0].max() - 1  # a value off the constant is now unlikely


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_a_feature_constant_to_rounding_that_separates_the_classes_is_refused(Model):
    """On an offset of 1e14 a feature's spread is within its rounding, so the default prior
    would leave it out as constant; its class means differ by 3 standard deviations, so that
    would leave out what separates the classes (the plug-in refuses it as degenerate): an
    error advising to center X, which then fits (outside attack)."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 50)
    X = np.c_[1e14 + rng.normal(size=100) + 3.0 * y, rng.normal(size=100)]
    with pytest.raises(ValueError, match="Feature 0 is constant .* class means differ"):
        Model(predictive=True).fit(X, y)
    with pytest.raises(ValueError, match="in which the class means differ"):
        Model().fit(X, y)
    centred = X - [1e14, 0.0]
    assert Model(predictive=True).fit(centred, y).score(centred, y) > 0.9
    # a constant that does not separate them is still left out
    X[:, 0] = 1e14 + rng.normal(size=100) * 1e-3
    Model(predictive=True).fit(X, y)

@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_collinear_features_are_regularised_by_the_prior(Model):
    """The plug-in covariance is singular along x2 = x0 + x1; the posterior's scale is not, so
    rows with missing values are scored (the plug-in cannot), by the t on the observed part."""
    X, y = data(seed=11)
    X = np.column_stack([X, X[:, 0] + X[:, 1]])
    test = X[:4].copy()
    test[0, 2] = test[1, 0] = np.nan
    model = Model(predictive=True).fit(X, y)
    want = reference_jll(X, y, test, default_prior(X, 1.0, 4), Model is LDA, 3)
    assert_allclose(model.predict_joint_log_proba(test), want, rtol=1e-9)


def test_a_class_with_fewer_samples_than_features():
    """The plug-in QDA has no covariance for it; the posterior has."""
    X, y = data(n=40, d=4, n_classes=2, seed=12)
    X, y = np.vstack([X, X[:3] + 5.0]), np.concatenate([y, [2, 2, 2]])
    with pytest.raises(np.linalg.LinAlgError, match="reg_param"):
        QDA().fit(X, y)
    model = QDA(predictive=True).fit(X, y)
    want = reference_jll(X, y, X[-5:], default_prior(X, 1.0, 4), False, 3)
    assert_allclose(model.predict_joint_log_proba(X[-5:]), want, rtol=1e-9)
    assert np.isfinite(model.log_evidence_)
    assert len(model.sample_posterior(2, random_state=0)) == 2
    assert model.sample(5, y=2, random_state=0)[0].shape == (5, 4)


def test_lda_with_more_features_than_samples():
    """The plug-in's shared covariance is singular where the class means differ (degenerate
    classes); the posterior's is not, and its predictive scores; coef_ shows the plug-in's
    pseudo-inverse solution."""
    X, y = data(n=6, d=8, n_classes=2, seed=15)
    with pytest.raises(ValueError, match="degenerate"):
        LDA().fit(X, y)
    model = LDA(predictive=True).fit(X, y)
    test = np.random.default_rng(0).normal(size=(4, 8))
    want = reference_jll(X, y, test, default_prior(X, 1.0, 8), True, 2)
    assert_allclose(model.predict_joint_log_proba(test), want, rtol=1e-9)
    assert np.isfinite(model.coef_).all()


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_sample_of_a_predictive_model_draws_from_the_predictive(Model):
    """Mean m_c, covariance scale dof / (dof - 2) of the class's t; a constant keeps its value."""
    X, y = data(n=30, d=2, n_classes=2, seed=14)
    X = np.insert(X, 1, 4.0, axis=1)
    model = Model(predictive=True, prior_strength=3.0).fit(X, y)
    post = posterior_from_rows(np.delete(X, 1, axis=1), y, 2, *default_prior(
        np.delete(X, 1, axis=1), 3.0, 2), Model is LDA)
    n = 20000
    for c in (0, 1):
        Xs = model.sample(n, y=c, random_state=c)[0]
        assert (Xs[:, 1] == 4.0).all()
        Xs = np.delete(Xs, 1, axis=1)
        m_n, kappa_n, psi_n, nu_n = post[c]
        df = nu_n - 1
        cov = psi_n * (kappa_n + 1) / (kappa_n * df) * df / (df - 2)
        se = np.sqrt(np.diag(cov) / n)
        assert (np.abs(Xs.mean(axis=0) - m_n) < 4.5 * se).all()
        scale = np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
        assert (np.abs(np.cov(Xs.T) - cov) < 0.06 * scale).all()


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_missing_values_in_training(Model):
    """EM completes the statistics and the posterior is theirs (documented as an
    approximation): with few values missing it is close to the complete data's, and every
    output stays finite and normalised."""
    X, y = data(seed=13)
    X_nan = X.copy()
    X_nan[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    model = Model(predictive=True).fit(X_nan, y)
    complete = Model(predictive=True).fit(X, y)
    proba = model.predict_proba(X_nan)
    assert np.isfinite(proba).all()
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.abs(proba - complete.predict_proba(X_nan)).max() < 0.15
    # the evidence of the completed data: near the complete data's (a few imputed values)
    assert abs(model.log_evidence_ - complete.log_evidence_) < 0.1 * abs(complete.log_evidence_)
    one = X.copy()
    one[0, 0] = np.nan
    assert abs(Model().fit(one, y).log_evidence_ - complete.log_evidence_) < 2.0


def map_em_reference(X, y, n_classes, prior, shared, n_iter=500):
    """Brute-force EM under the prior: E-step with each class's posterior mode of the
    covariance (Psi / (nu + d + 2)) and its completed-data mean; returns the completed rows'
    expected statistics (weight, mean, scatter) per class."""
    m0, cov0, kappa0, nu0 = prior
    d = X.shape[1]
    filled = np.where(np.isnan(X), np.nanmean(X, axis=0), X)
    extra = np.zeros((len(X), d, d))  # conditional covariance of each row's missing part
    for _ in range(n_iter):
        means = np.array([filled[y == c].mean(axis=0) for c in range(n_classes)])
        scatters = np.array([(filled[y == c] - means[c]).T @ (filled[y == c] - means[c])
                             + extra[y == c].sum(axis=0) for c in range(n_classes)])
        counts = np.bincount(y, minlength=n_classes)
        spread = [scatters[c] + kappa0 * counts[c] / (kappa0 + counts[c])
                  * np.outer(means[c] - m0, means[c] - m0) for c in range(n_classes)]
        if shared:
            psi, nu = [nu0 * cov0 + sum(spread)] * n_classes, [nu0 + counts.sum()] * n_classes
        else:
            psi, nu = [nu0 * cov0 + sp_ for sp_ in spread], nu0 + counts
        for i, row in enumerate(X):
            miss = np.isnan(row)
            if not miss.any():
                continue
            c, obs = y[i], ~miss
            cov = psi[c] / (nu[c] + d + 2)
            gain = cov[np.ix_(miss, obs)] @ np.linalg.inv(cov[np.ix_(obs, obs)])
            filled[i, miss] = means[c][miss] + gain @ (row[obs] - means[c][obs])
            extra[i] = 0.0
            extra[i][np.ix_(miss, miss)] = cov[np.ix_(miss, miss)] - gain @ cov[np.ix_(obs, miss)]
    return counts, means, scatters


@pytest.mark.parametrize("Model", MODELS, ids=IDS)
def test_em_of_a_predictive_model_is_em_under_the_prior(Model):
    """Training rows with missing values are completed by EM whose covariances are the
    posterior modes under the prior, so a class with fewer rows than features still fits (the
    plug-in's EM cannot); the completed statistics are a brute-force MAP-EM's."""
    X, y = data(n=40, d=3, n_classes=2, seed=21)
    X, y = np.vstack([X, X[:2] + 4.0]), np.concatenate([y, [2, 2]])  # 2 rows, 3 features
    X[[1, 5, 9, 40], [0, 2, 1, 2]] = np.nan
    prior = (np.array([0.5, -0.3, 0.2]), np.diag([1.5, 0.8, 1.2]), 2.0, 4.0)
    params = {"prior_mean": prior[0], "prior_covariance": np.diag(prior[1]),
              "prior_strength": prior[2:]}
    model = Model(predictive=True, tol=1e-12, max_iter=10000, **params).fit(X, y)
    count, mean, scatter = map_em_reference(X, y, 3, prior, Model is LDA)
    stats = model._fitted.stats
    assert_allclose(stats["class_count_"], count)
    assert_allclose(stats["mean"], mean, rtol=1e-7, atol=1e-9)
    assert_allclose(stats["scatter"], scatter, rtol=1e-6, atol=1e-8)
    if Model is QDA:
        with pytest.raises(np.linalg.LinAlgError):
            Model(reg_param=0.0).fit(X, y)


# ---------------------------------------------------------------------------- hostile input
@pytest.mark.parametrize("Model", MODELS, ids=IDS)
@pytest.mark.parametrize("params, error, match", [
    ({"predictive": "yes"}, TypeError, "predictive"),
    ({"prior_strength": 0.0}, ValueError, "prior_strength"),
    ({"prior_strength": -1.0}, ValueError, "prior_strength"),
    ({"prior_strength": np.inf}, ValueError, "prior_strength"),
    ({"prior_strength": np.nan}, ValueError, "prior_strength"),
    ({"prior_strength": "max"}, ValueError, "prior_strength"),
    ({"prior_strength": (1.0,)}, ValueError, "prior_strength"),
    ({"prior_strength": (1.0, 1.5)}, ValueError, "nu0 > n_features - 1"),
    ({"prior_strength": (0.0, 5.0)}, ValueError, "prior_strength"),
    ({"prior_mean": [0.0, 1.0]}, ValueError, "prior_mean must have shape"),
    ({"prior_mean": [0.0, np.nan, 1.0]}, ValueError, "prior_mean must be finite"),
    ({"prior_mean": "abc"}, ValueError, "prior_mean"),
    ({"prior_covariance": [1.0, 0.0, 1.0]}, ValueError, "positive variances"),
    ({"prior_covariance": [1.0, np.inf, 1.0]}, ValueError, "prior_covariance must be finite"),
    ({"prior_covariance": np.ones((3, 3))}, ValueError, "positive definite"),
    ({"prior_covariance": np.triu(np.ones((3, 3)))}, ValueError, "symmetric"),
    ({"prior_covariance": np.eye(2)}, ValueError, "prior_covariance must have shape"),
])
def test_bad_prior_parameters(Model, params, error, match):
    X, y = data()
    with pytest.raises(error, match=match):
        Model(**params).fit(X, y)


def test_predictive_refuses_other_regularisation_and_kinds():
    X, y = data()
    with pytest.raises(ValueError, match="predictive=True takes no shrinkage"):
        LDA(predictive=True, shrinkage=0.1).fit(X, y)
    with pytest.raises(ValueError, match="predictive=True takes no reg_param"):
        QDA(predictive=True, reg_param=0.1).fit(X, y)
    for params in ({"predictive": True}, {"prior_strength": "evidence"}):
        with pytest.raises(ValueError, match="covariance='full'"):
            LDA("diagonal", **params).fit(X, y)
    diagonal = LDA("diagonal").fit(X, y)
    with pytest.raises(AttributeError, match="covariance='full'"):
        diagonal.log_evidence_
    with pytest.raises(ValueError, match="covariance='full'"):
        diagonal.sample_posterior()
    # a regularised plug-in still has the prior's evidence and draws
    assert_allclose(QDA(reg_param=0.3).fit(X, y).log_evidence_, QDA().fit(X, y).log_evidence_)
    for bad in (0, 1.5, "3"):
        with pytest.raises(ValueError, match="n_draws"):
            QDA().fit(X, y).sample_posterior(bad)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([1e-90, 1e-6, 1.0, 1e6, 1e120]),
       d=st.integers(1, 4), n=st.integers(4, 20), model=st.sampled_from(MODELS))
def test_predictive_posteriors_are_finite_and_normalised(seed, scale, d, n, model):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale + rng.normal() * scale * 10
    X[:, 0] = np.round(X[:, 0], 1 if scale == 1 else 0)  # ties, and often a constant
    y = np.arange(n) % 2
    test = np.vstack([X, rng.normal(size=(5, d)) * scale * 1e3])
    test[rng.random(test.shape) < 0.2] = np.nan
    try:
        fitted = model(predictive=True).fit(X, y)
    except ValueError as error:  # features in units too small to whiten: refused, by name
        assert scale == 1e-90 and "Rescale X" in str(error), error
        return
    proba = fitted.predict_proba(test)
    assert np.isfinite(proba).all()
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.isfinite(fitted.predict_joint_log_proba(test)).all()
    assert np.isfinite(fitted.log_evidence_)
