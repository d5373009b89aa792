"""Synthetic data and tolerance helpers for the Gaussian-family tests (issue 3)."""

import numpy as np


def blobs(n, d, k=3, seed=0, sep=3.0, scale=1.0, shift=0.0, shared=False, cond=None):
    """Gaussian classes: (X float64 (n, d), y int 0..k-1). Labels cycle through the
    classes before shuffling, so every class has n // k or n // k + 1 rows. Each class
    has a random correlated covariance (one shared covariance when ``shared``) with
    eigenvalues in [0.5, 2] * scale**2 (``cond`` overrides the ratio of extremes)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rng.shuffle(y)
    means = rng.uniform(-1.0, 1.0, (k, d)) * sep * scale + shift

    def factor():
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        lo, hi = (0.5, 2.0) if cond is None else (1.0, float(cond))
        ev = np.exp(rng.uniform(np.log(lo), np.log(hi), d))
        return Q * np.sqrt(ev) * scale

    common = factor()
    X = np.empty((n, d))
    for c in range(k):
        L = common if shared else factor()
        rows = y == c
        X[rows] = means[c] + rng.standard_normal((rows.sum(), d)) @ L.T
    return X, y


def poisson_counts(n, d, k=3, seed=0, low=0.5, high=8.0):
    """Poisson counts with a random rate per class and feature: (X float64, y int)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rng.shuffle(y)
    lam = rng.uniform(low, high, (k, d))
    return rng.poisson(lam[y]).astype(np.float64), y


def with_holes(X, frac, seed=0, all_nan_row=None):
    """A copy of X with a fraction ``frac`` of its entries set to NaN at random (missing
    completely at random); ``all_nan_row`` (an index) is made entirely NaN."""
    rng = np.random.default_rng(seed)
    X = np.array(X, dtype=np.float64)
    X[rng.random(X.shape) < frac] = np.nan
    if all_nan_row is not None:
        X[all_nan_row] = np.nan
    return X


def one_hot(y, classes):
    return (np.asarray(y)[:, None] == np.asarray(classes)[None, :]).astype(np.float64)


def gnb_scale(X, theta, var, log_prior):
    """Max over rows of the sum of the magnitudes of the terms of a Gaussian NB joint
    log-likelihood: absolute tolerances scale with it (summation order differs)."""
    X = np.asarray(X, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    D = X[:, None, :] - theta[None]
    terms = 0.5 * np.abs(np.log(2 * np.pi * var))[None] + 0.5 * D**2 / var[None]
    s = np.nansum(terms, axis=2) + np.abs(np.asarray(log_prior, dtype=np.float64))
    return max(1.0, float(np.max(s, initial=0.0)))


def mvn_scale(X, means, covs, log_prior):
    """As gnb_scale for a full multivariate normal joint log-likelihood (NaN -> 0)."""
    X = np.nan_to_num(np.asarray(X, dtype=np.float64))
    means = np.asarray(means, dtype=np.float64)
    covs = np.asarray(covs, dtype=np.float64)
    if covs.ndim == 2:
        covs = np.broadcast_to(covs, (means.shape[0],) + covs.shape)
    out = 0.0
    for c in range(means.shape[0]):
        D = X - means[c]
        maha = np.einsum("ij,ij->i", D @ np.linalg.inv(covs[c]), D)
        _, logdet = np.linalg.slogdet(covs[c])
        s = 0.5 * (np.abs(maha) + abs(logdet) + covs.shape[1] * np.log(2 * np.pi))
        out = max(out, float(np.max(s, initial=0.0)))
    return max(1.0, out + float(np.max(np.abs(log_prior))))


def rel_fro(a, b):
    """Relative Frobenius error ||a - b|| / ||b||."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def pooled_cov(X, y, classes, sample_weight=None):
    """Pooled ML within-class covariance: weighted within-class scatter / total weight."""
    X = np.asarray(X, dtype=np.float64)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    S = np.zeros((X.shape[1], X.shape[1]))
    for c in classes:
        r = np.asarray(y) == c
        mu = np.average(X[r], axis=0, weights=w[r])
        D = X[r] - mu
        S += (D * w[r, None]).T @ D
    return S / w.sum()


def class_cov(X, w=None):
    """ML (biased) weighted covariance of the rows of X."""
    X = np.asarray(X, dtype=np.float64)
    w = np.ones(len(X)) if w is None else np.asarray(w, dtype=np.float64)
    mu = np.average(X, axis=0, weights=w)
    D = X - mu
    return (D * w[:, None]).T @ D / w.sum()


def observed_loglik(X, y_idx, means, covs):
    """Mean over rows of log N(x_obs; means[y]_obs, covs[y]_obs,obs): the observed-data
    log-likelihood that EM maximises (vectorised by class and missingness pattern; rows
    with nothing observed contribute 0). ``covs`` is (d, d) shared or (C, d, d)."""
    X = np.asarray(X, dtype=np.float64)
    y_idx = np.asarray(y_idx)
    means = np.asarray(means, dtype=np.float64)
    covs = np.asarray(covs, dtype=np.float64)
    if covs.ndim == 2:
        covs = np.broadcast_to(covs, (means.shape[0],) + covs.shape)
    miss = np.isnan(X)
    total = 0.0
    for c in range(means.shape[0]):
        rows = np.flatnonzero(y_idx == c)
        patterns, inverse = np.unique(miss[rows], axis=0, return_inverse=True)
        for g, m in enumerate(patterns):
            o = ~m
            if not o.any():
                continue
            r = rows[inverse.ravel() == g]
            S = covs[c][np.ix_(o, o)]
            L = np.linalg.cholesky(S)
            Z = np.linalg.solve(L, (X[np.ix_(r, o)] - means[c, o]).T)
            logdet = 2 * np.log(np.diag(L)).sum()
            total += -0.5 * ((Z**2).sum() + len(r) * (logdet + o.sum() * np.log(2 * np.pi)))
    return total / len(X)


METHODS = ("predict_joint_log_proba", "predict_log_proba", "predict_proba")


def assert_normalised(est, X):
    """No NaN in any output, log-posteriors <= 0, posteriors summing to one."""
    out = {m: getattr(est, m)(X) for m in METHODS}
    for m, a in out.items():
        assert not np.isnan(a).any(), m
    assert (out["predict_log_proba"] <= 0).all()
    tol = 1e-5 if out["predict_proba"].dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out["predict_proba"].sum(axis=1), 1.0, rtol=0, atol=tol)
