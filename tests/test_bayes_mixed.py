"""Bayesian prediction of MixedNB: each kind of column is its part's model, so the predictive,
the evidence and the posterior draws are the parts' combined. References: the standalone fastgen
models of each block of columns (themselves tested against scipy), and the average of the drawn
models' likelihoods against the predictive."""
import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import logsumexp

import fastgen
from fastgen import CategoricalNB, GaussianNB, MixedNB, PoissonNB

TYPES = ["gaussian", "gaussian", "categorical", "poisson", "bernoulli"]


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(y, 1.0), rng.normal(2 * y, 0.5), rng.integers(0, 3, n),
                         rng.poisson(1 + 2 * y), rng.random(n) < 0.3 + 0.4 * y]).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def _parts(X, y, **params):
    """The standalone models of MixedNB's parts (uniform class prior), with their columns."""
    uniform = np.full(2, 0.5)
    pred = {k: v for k, v in params.items() if k == "predictive"}
    alpha = params.get("alpha", 1.0)
    gaussian = GaussianNB(priors=uniform, prior_strength=params.get("prior_strength", 1.0),
                          **pred)
    bernoulli = np.where(np.isnan(X[:, 4]), np.nan, (X[:, 4] > 0).astype(float))
    return [(gaussian.fit(X[:, :2], y), X[:, :2]),
            (CategoricalNB(alpha=alpha, fit_prior=False, **pred).fit(X[:, [2]], y), X[:, [2]]),
            (PoissonNB(alpha=alpha, fit_prior=False, **pred).fit(X[:, [3]], y), X[:, [3]]),
            (CategoricalNB(alpha=alpha, fit_prior=False, min_categories=2, **pred).fit(
                bernoulli[:, None], y), bernoulli[:, None])]


@pytest.mark.parametrize("params", [{"predictive": True},
                                    {"predictive": True, "alpha": "evidence",
                                     "prior_strength": "evidence"},
                                    {"predictive": True, "alpha": 0.3, "prior_strength": (2, 3)}])
def test_predictive_and_evidence_are_the_parts(params):
    X, y = _data()
    model = MixedNB(TYPES, **params).fit(X, y)
    parts = _parts(X, y, **params)
    jll = np.log(np.bincount(y) / len(y)) + sum(
        part.predict_joint_log_proba(block) - np.log(0.5) for part, block in parts)
    assert_allclose(model.predict_joint_log_proba(X), jll, rtol=1e-12)
    assert model.log_evidence_ == pytest.approx(sum(p.log_evidence_ for p, _ in parts),
                                                rel=1e-12)
    plug_in = MixedNB(TYPES, **{**params, "predictive": False}).fit(X, y)
    assert plug_in.log_evidence_ == model.log_evidence_  # the prior's, whatever scores
    assert not np.allclose(plug_in.predict_joint_log_proba(X), jll)


def test_draws_average_to_the_predictive():
    """The mean over draws of each drawn model's likelihood P(x | c, h) converges to the
    predictive P(x | c, D) (the parts are independent a posteriori, so their product too)."""
    X, y = _data(n=40, seed=1)
    model = MixedNB(TYPES, predictive=True, prior_strength=2.0).fit(X, y)
    rows = X[:6]
    draws = model.sample_posterior(1500, random_state=0)
    assert all(d.alpha == 0 and d.var_smoothing == 0 and not d.predictive for d in draws)
    joint = np.array([d.predict_joint_log_proba(rows) for d in draws])
    mean = logsumexp(joint, axis=0) - np.log(len(draws))
    assert_allclose(mean, model.predict_joint_log_proba(rows), atol=0.1)
    plug_in = MixedNB(TYPES).fit(X, y).predict_joint_log_proba(rows)
    assert np.abs(mean - plug_in).max() > 0.2  # what the average refutes


def test_round_trips_keep_the_predictive(tmp_path):
    X, y = _data()
    model = MixedNB(TYPES, predictive=True, alpha="evidence").fit(X, y)
    path = tmp_path / "m.fg"
    model.save(path)
    loaded = fastgen.load(path)
    assert_allclose(loaded.predict_proba(X), model.predict_proba(X), rtol=1e-12)
    halves = MixedNB(TYPES, predictive=True, alpha="evidence").fit(X[:15], y[:15]).merge(
        MixedNB(TYPES, predictive=True, alpha="evidence").fit(X[15:], y[15:]))
    assert_allclose(halves.predict_proba(X), model.predict_proba(X), rtol=1e-5)  # (search tol)


@pytest.mark.parametrize("params, match", [({"predictive": "yes"}, "predictive"),
                                           ({"alpha": "max"}, "alpha"),
                                           ({"prior_strength": -1.0}, "prior_strength"),
                                           ({"alpha": 0.0, "predictive": True}, "alpha > 0")])
def test_bad_parameters(params, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        MixedNB(TYPES, **params).fit(X, y)


@pytest.mark.parametrize("kinds", [["gaussian", "categorical", "poisson"],
                                   ["gaussian", "bernoulli", "multinomial"]])
def test_draws_with_a_class_never_seen(kinds):
    """A class announced to partial_fit but never seen has MixedNB's prior 0, and needs no
    samples to be drawn (a categorical part refused it under its own uniform prior, naming
    CategoricalNB); with a positive prior the refusal names MixedNB and the class as given."""
    X = np.array([[0.1, 0, 3], [0.5, 1, 2], [1.2, 1, 0], [1.9, 1, 1], [0.3, 0, 4], [2.2, 1, 1]])
    y = np.array(["a", "a", "b", "b", "a", "b"])
    model = MixedNB(kinds).partial_fit(X, y, classes=["a", "b", "c"])
    for draw in model.sample_posterior(5, random_state=0):
        proba = draw.predict_proba(X)
        assert np.isfinite(proba).all() and (proba[:, 2] == 0).all()
        assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    given = MixedNB(kinds, priors=[0.3, 0.3, 0.4]).partial_fit(X, y, classes=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"^MixedNB.sample_posterior: class 'c' has no training"):
        given.sample_posterior(1, random_state=0)
