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
