"""Few-line NumPy/SciPy oracles for the kernels (tests only; never shipped)."""
import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def values(X, binarize, threshold):
    X = dense(X).astype(np.float64)
    return (X > threshold).astype(np.float64) if binarize else X


def count_reference(X, y_idx, sample_weight, n_classes, binarize=False, threshold=0.0):
    """(feature_count, class_count) as weighted sums per class."""
    V = values(X, binarize, threshold)
    Y = np.zeros((len(y_idx), n_classes))
    Y[np.arange(len(y_idx)), y_idx] = sample_weight
    return Y.T @ V, Y.sum(axis=0)


def jll_linear_reference(X, table, bias, binarize=False, threshold=0.0, kind=0):
    """bias + sum_j v(x_j) table[j] (zeros skipped), then jll / log-posterior / posterior."""
    V = values(X, binarize, threshold)
    jll = np.tile(np.asarray(bias, dtype=np.float64), (V.shape[0], 1))
    for i, j in zip(*np.nonzero(V)):
        jll[i] += V[i, j] * np.asarray(table[j], dtype=np.float64)
    if kind == 0:
        return jll
    log_proba = jll - logsumexp(jll, axis=1, keepdims=True)
    return log_proba if kind == 1 else np.exp(log_proba)


# ---------------------------------------------------------------------------------------
# Gaussian family (issue 3): brute-force per-row oracles with scipy.stats. Each loops over
# the rows in Python, so keep the data small. A NaN entry is a missing value: it is
# dropped from the row (marginalised), and a row with nothing observed scores its log
# prior.


def _log_prior(log_prior, n_classes):
    return np.broadcast_to(np.asarray(log_prior, dtype=np.float64), (n_classes,))


def gaussian_nb_jll(X, theta, var, log_prior):
    """log P(c) + sum over the observed j of log N(x_j; theta[c, j], var[c, j])."""
    from scipy.stats import norm

    X = dense(X).astype(np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    sd = np.sqrt(np.asarray(var, dtype=np.float64))
    n_classes = theta.shape[0]
    lp = _log_prior(log_prior, n_classes)
    jll = np.empty((X.shape[0], n_classes))
    for i, row in enumerate(X):
        obs = ~np.isnan(row)
        for c in range(n_classes):
            jll[i, c] = lp[c] + norm.logpdf(row[obs], theta[c, obs], sd[c, obs]).sum()
    return jll


def poisson_jll(X, lam, log_prior):
    """log P(c) + sum over the observed j of log Poisson(x_j; lam[c, j])."""
    from scipy.stats import poisson

    X = dense(X).astype(np.float64)
    lam = np.asarray(lam, dtype=np.float64)
    n_classes = lam.shape[0]
    lp = _log_prior(log_prior, n_classes)
    jll = np.empty((X.shape[0], n_classes))
    for i, row in enumerate(X):
        obs = ~np.isnan(row)
        for c in range(n_classes):
            jll[i, c] = lp[c] + poisson.logpmf(row[obs], lam[c, obs]).sum()
    return jll


def full_gaussian_jll(X, means, covs, log_prior):
    """log P(c) + log N(x_obs; means[c]_obs, covs[c]_obs,obs) with the full multivariate
    normal density of the observed sub-vector. ``covs`` is one shared (d, d) matrix (LDA)
    or one per class (C, d, d) (QDA)."""
    from scipy.stats import multivariate_normal

    X = dense(X).astype(np.float64)
    means = np.asarray(means, dtype=np.float64)
    covs = np.asarray(covs, dtype=np.float64)
    n_classes = means.shape[0]
    if covs.ndim == 2:
        covs = np.broadcast_to(covs, (n_classes,) + covs.shape)
    lp = _log_prior(log_prior, n_classes)
    jll = np.empty((X.shape[0], n_classes))
    for i, row in enumerate(X):
        obs = ~np.isnan(row)
        for c in range(n_classes):
            if not obs.any():
                jll[i, c] = lp[c]
                continue
            sub = covs[c][np.ix_(obs, obs)]
            jll[i, c] = lp[c] + multivariate_normal.logpdf(row[obs], means[c, obs], sub)
    return jll


def log_posterior(jll):
    """Normalise joint log-likelihoods (rows) into log-posteriors."""
    jll = np.asarray(jll, dtype=np.float64)
    return jll - logsumexp(jll, axis=1, keepdims=True)


def gaussian_em_reference(X, y_idx, n_classes, shared, max_iter=2000, tol=1e-12):
    """Maximum-likelihood class means and covariance(s) from data with values missing at
    random (NaN), by plain EM: the E-step fills the missing block of each row with its
    conditional mean given the observed block and adds the conditional covariance to the
    scatter. ``shared``: one pooled covariance (LDA) or one per class (QDA). Unweighted.
    Rows are grouped by missingness pattern, so it is fast on few features.
    Returns (means (C, d), covariance (d, d) or (C, d, d))."""
    X = np.asarray(X, dtype=np.float64)
    y_idx = np.asarray(y_idx)
    d = X.shape[1]
    miss = np.isnan(X)
    means = np.array([np.nanmean(X[y_idx == c], axis=0) for c in range(n_classes)])
    start = np.array([np.diag(np.nanvar(X[y_idx == c], axis=0)) for c in range(n_classes)])
    covs = np.broadcast_to(start.mean(axis=0), start.shape).copy() if shared else start
    groups = []
    for c in range(n_classes):
        rows = np.flatnonzero(y_idx == c)
        patterns, inverse = np.unique(miss[rows], axis=0, return_inverse=True)
        groups.append([(p, rows[inverse.ravel() == g]) for g, p in enumerate(patterns)])
    for _ in range(max_iter):
        new_means = np.empty_like(means)
        scatter = np.zeros((n_classes, d, d))
        for c in range(n_classes):
            S, mu = covs[c], means[c]
            filled = []
            extra = np.zeros((d, d))
            for m, rows in groups[c]:
                o = ~m
                Z = X[rows].copy()
                if m.any():
                    if o.any():
                        K = np.linalg.solve(S[np.ix_(o, o)], S[np.ix_(o, m)]).T
                        Z[:, m] = mu[m] + (Z[:, o] - mu[o]) @ K.T
                        cond = S[np.ix_(m, m)] - K @ S[np.ix_(o, m)]
                    else:
                        Z[:, m] = mu[m]
                        cond = S[np.ix_(m, m)]
                    extra[np.ix_(m, m)] += len(rows) * cond
                filled.append(Z)
            Z = np.vstack(filled)
            new_means[c] = Z.mean(axis=0)
            D = Z - new_means[c]
            scatter[c] = D.T @ D + extra
        counts = np.bincount(y_idx, minlength=n_classes).astype(np.float64)
        if shared:
            pooled = scatter.sum(axis=0) / counts.sum()
            new_covs = np.broadcast_to(pooled, scatter.shape).copy()
        else:
            new_covs = scatter / counts[:, None, None]
        change = max(np.abs(new_means - means).max(), np.abs(new_covs - covs).max())
        means, covs = new_means, new_covs
        if change < tol:
            break
    return means, (covs[0] if shared else covs)


# ---------------------------------------------------------------------------------------
# Categorical naive Bayes (issue 4): brute-force per-row oracle. A missing value -- NaN or
# a negative code -- is dropped from the row; with ``skip_unknown`` so is a code beyond
# the feature's categories (handle_unknown="ignore").


def categorical_nb_jll(X, feature_log_prob, log_prior, skip_unknown=False):
    """log P(c) + sum over the observed j of feature_log_prob[j][c, x_j]."""
    X = dense(X).astype(np.float64)
    tables = [np.asarray(t, dtype=np.float64) for t in feature_log_prob]
    n_classes = tables[0].shape[0] if tables else len(np.atleast_1d(log_prior))
    lp = _log_prior(log_prior, n_classes)
    jll = np.empty((X.shape[0], n_classes))
    for i, row in enumerate(X):
        for c in range(n_classes):
            total = lp[c]
            for j, v in enumerate(row):
                if np.isnan(v) or v < 0:
                    continue
                k = int(v)
                if k >= tables[j].shape[1]:
                    if skip_unknown:
                        continue
                    raise IndexError(f"feature {j}: code {k} beyond the table")
                total += tables[j][c, k]
            jll[i, c] = total
    return jll


def categorical_counts(X, y_idx, n_classes, n_categories, sample_weight=None):
    """Per feature, the (n_classes, K_j) weight of each class's observed values of each
    category (missing values -- NaN or negative codes -- skipped)."""
    X = dense(X).astype(np.float64)
    w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    out = []
    for j, K in enumerate(n_categories):
        count = np.zeros((n_classes, K))
        for i in range(X.shape[0]):
            v = X[i, j]
            if np.isnan(v) or v < 0:
                continue
            count[y_idx[i], int(v)] += w[i]
        out.append(count)
    return out


def values_status_reference(values, allow_nan, allow_negative, max_abs):
    """_checks.values_status by its definition: the first problem in order, else whether an
    (allowed) NaN occurs."""
    from fastgen._core._checks import ValuesStatus as V

    for v in np.asarray(values, dtype=np.float64):
        if np.isnan(v):
            if not allow_nan:
                return V.VALUES_NAN
        elif np.isinf(v):
            return V.VALUES_INF
        elif v < 0 and not allow_negative:
            return V.VALUES_NEGATIVE
        elif abs(v) > max_abs:
            return V.VALUES_TOO_LARGE
    return V.VALUES_OK_WITH_NAN if np.isnan(values).any() else V.VALUES_OK
