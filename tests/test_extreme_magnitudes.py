"""Valid but extreme magnitudes: regression tests, each against a reference computed another
way (50-digit arithmetic, a model without the column, ...).
"""

import warnings

import numpy as np
import pytest

import fastgen

# ---------------------------------------------------------------------------------------
# regressions, each against a reference computed another way


def complement_nb_reference(X, y, alpha, norm, X_test):
    """ComplementNB's log-posteriors (Rennie et al. 2003) in 50-digit arithmetic (mpmath)."""
    mpmath = pytest.importorskip("mpmath")
    mp = mpmath.mp.clone()
    mp.dps = 50
    X, X_test = np.asarray(X, dtype=float), np.asarray(X_test, dtype=float)
    classes = np.unique(y)
    counts = [[mp.fsum(mp.mpf(v) for v in X[np.asarray(y) == c, j])
               for j in range(X.shape[1])] for c in classes]
    weights = []
    for c in range(len(classes)):
        complement = [mp.fsum(counts[k][j] for k in range(len(classes)) if k != c)
                      + mp.mpf(alpha) for j in range(X.shape[1])]
        total = mp.fsum(complement)
        logged = [mp.log(v / total) for v in complement]
        weights.append([v / mp.fsum(logged) for v in logged] if norm else [-v for v in logged])
    out = []
    for row in X_test:
        jll = [mp.fsum(mp.mpf(x) * w for x, w in zip(row, ws)) for ws in weights]
        top = max(jll)
        norm_row = top + mp.log(mp.fsum(mp.exp(v - top) for v in jll))
        out.append([float(v - norm_row) for v in jll])
    return np.array(out)


@pytest.mark.parametrize("X, alpha", [([[2e7, 0, 1], [0, 2e7, 1]], 1e-10),
                                      ([[1, 0, 1], [0, 1, 1]], 1e-20),
                                      ([[3, 0, 0], [0, 5, 0]], 5e-324)],
                         ids=["2e7-counts", "alpha-1e-20", "subnormal-alpha"])
@pytest.mark.parametrize("norm", [True, False], ids=["norm", "no-norm"])
def test_complement_nb_tiny_alpha_beside_large_counts(X, alpha, norm):
    """A feature only one class has gets the complement count alpha in the other classes,
    however small beside the count: (2e7 + 1e-10) - 2e7 rounded it to 0, its log to -inf, and
    the normalised weights to inf/inf (NaN posteriors). Log-posteriors equal a 50-digit
    reference, finite (none is 0 in exact arithmetic)."""
    X_test = [[1, 0, 0], [1, 1, 0], [0, 0, 1], [4, 0, 3]]
    model = fastgen.ComplementNB(alpha=alpha, norm=norm).fit(X, [0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_proba = model.predict_log_proba(X_test)
        proba = model.predict_proba(X_test)
    expected = complement_nb_reference(X, [0, 1], alpha, norm, X_test)
    assert np.isfinite(log_proba).all()
    np.testing.assert_allclose(log_proba, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(proba, np.exp(expected), rtol=1e-9, atol=1e-300)
    assert np.isfinite(model.feature_log_prob_).all()


@pytest.mark.parametrize("name", ["GaussianNB", "LinearDiscriminantAnalysis", "MixedNB"])
def test_missing_value_beside_far_apart_class_means(name):
    """A missing feature whose class means are 1e10 apart (unit variances): marginalising it
    equals dropping the column. Filling it in and subtracting its term afterwards cancelled a
    term of 1e19 against the other features' (posteriors 0.5, 0.5)."""
    rng = np.random.default_rng(0)
    y = np.arange(200) % 2
    X = np.column_stack([rng.normal(y, 1.0), rng.normal(y * 1e10, 1.0)])
    params = {"covariance": "diagonal"} if name == "LinearDiscriminantAnalysis" else (
        {"var_smoothing": 0.0} if name in ("GaussianNB", "MixedNB") else {})
    if name == "MixedNB":
        params["feature_types"] = ["gaussian", "gaussian"]
    Model = getattr(fastgen, name)
    X_test = np.array([[0.0, np.nan], [1.0, np.nan], [0.5, np.nan], [2.0, np.nan]])
    both = Model(**params).fit(X, y)
    if name == "MixedNB":
        params["feature_types"] = ["gaussian"]
    alone = Model(**params).fit(X[:, :1], y)
    np.testing.assert_allclose(both.predict_log_proba(X_test),
                               alone.predict_log_proba(X_test[:, :1]), rtol=1e-12)
    assert np.ptp(both.predict_proba(X_test)[:, 0]) > 0.2


def test_poisson_missing_value_beside_huge_rates():
    """PoissonNB: a missing count whose rates are near 2**52 drops out exactly (it was
    subtracted from a bias that held -2**52, wiping out the other features' terms)."""
    rng = np.random.default_rng(1)
    y = np.arange(400) % 2
    X = np.column_stack([rng.poisson(1.0 + 2.0 * y), np.full(400, 2.0**52) + y * 2.0**51])
    X_test = np.array([[0.0, np.nan], [1.0, np.nan], [2.0, np.nan], [4.0, np.nan]])
    both = fastgen.PoissonNB().fit(X, y)
    alone = fastgen.PoissonNB().fit(X[:, :1], y)
    np.testing.assert_allclose(both.predict_log_proba(X_test),
                               alone.predict_log_proba(X_test[:, :1]), rtol=1e-12)
