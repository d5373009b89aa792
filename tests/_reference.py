"""Few-line NumPy/SciPy oracles for the kernels (tests only; never shipped)."""
import math

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


def _diagonal_jll(X, log_prior, n_classes, log_density):
    """log P(c) + sum over the observed j of ``log_density(x_obs, c, obs)`` (an array of the
    observed features' log-densities in class c)."""
    X = dense(X).astype(np.float64)
    lp = _log_prior(log_prior, n_classes)
    jll = np.empty((X.shape[0], n_classes))
    for i, row in enumerate(X):
        obs = ~np.isnan(row)
        for c in range(n_classes):
            jll[i, c] = lp[c] + log_density(row[obs], c, obs).sum()
    return jll


def gaussian_nb_jll(X, theta, var, log_prior):
    """log P(c) + sum over the observed j of log N(x_j; theta[c, j], var[c, j])."""
    from scipy.stats import norm

    theta = np.asarray(theta, dtype=np.float64)
    sd = np.sqrt(np.asarray(var, dtype=np.float64))
    return _diagonal_jll(X, log_prior, theta.shape[0],
                         lambda x, c, obs: norm.logpdf(x, theta[c, obs], sd[c, obs]))


def student_t_jll(X, loc, scale, dof, log_prior):
    """log P(c) + sum over the observed j of log t(x_j; dof[c, j], loc[c, j], scale[c, j])."""
    from scipy.stats import t

    return _diagonal_jll(X, log_prior, loc.shape[0], lambda x, c, obs: t.logpdf(
        x, dof[c, obs], loc[c, obs], scale[c, obs]))


def negative_binomial_jll(X, r, b, log_prior):
    """log P(c) + sum over the observed j of the negative binomial log-pmf of x_j with r[c, j]
    and success probability b / (b + 1), written with gammaln (for fractional counts too)."""
    from scipy.special import gammaln

    return _diagonal_jll(X, log_prior, r.shape[0], lambda x, c, obs: (
        gammaln(r[c, obs] + x) - gammaln(r[c, obs]) - gammaln(x + 1)
        - r[c, obs] * np.log1p(1 / b[c, obs]) - x * np.log1p(b[c, obs])))


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


def full_gaussian_jll(X, means, covs, log_prior, singular=False):
    """log P(c) + log N(x_obs; means[c]_obs, covs[c]_obs,obs) with the full multivariate
    normal density of the observed sub-vector. ``covs`` is one shared (d, d) matrix (LDA)
    or one per class (C, d, d) (QDA). ``singular``: a singular covariance gives the density
    on its support (scipy's pseudo-inverse and pseudo-determinant; x projected onto it)."""
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
            jll[i, c] = lp[c] + multivariate_normal.logpdf(row[obs], means[c, obs], sub,
                                                           allow_singular=singular)
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


# ---------------------------------------------------------------------------------------
# Oracles of single kernels (tests/core/test_oracles.py): each the kernel's contract in a
# few lines of NumPy/SciPy, in plain Python integers where the kernel's types could round.


def normalise(jll, kind):
    """jll (kind 0), log-posterior (1) or posterior (2), as the scoring kernels write them: a
    row with no finite maximum (all -inf, or some +inf) shares its mass equally among its
    top entries."""
    jll = np.asarray(jll, dtype=np.float64)
    if kind == 0:
        return jll
    out = np.empty_like(jll)
    for i, row in enumerate(jll):
        top = row.max(initial=-np.inf)
        if np.isinf(top):
            out[i] = np.where(row == top, -np.log(np.count_nonzero(row == top)), -np.inf)
        else:
            out[i] = row - logsumexp(row)
    return out if kind == 1 else np.exp(out)


def quadratic_reference(Z, offset, block, const_term):
    """const_term[c] - ||Z[:, block[c] d : (block[c] + 1) d] - offset[c]||^2 / 2 (d features)."""
    Z = np.asarray(Z, dtype=np.float64)
    d = offset.shape[1]
    jll = np.empty((Z.shape[0], len(const_term)))
    for c, b in enumerate(block):
        diff = Z[:, b * d:(b + 1) * d] - offset[c]
        jll[:, c] = const_term[c] - 0.5 * np.einsum("ij,ij->i", diff, diff)
    return jll


def diagonal_moments_reference(X, y_idx, sample_weight, n_classes):
    """Per class and feature over the non-NaN values: total weight, weighted mean (0 where the
    weight is 0) and weighted sum of squared deviations from that mean."""
    X = np.asarray(X, dtype=np.float64)
    w = np.asarray(sample_weight, dtype=np.float64)
    shape = (n_classes, X.shape[1])
    weight, mean, m2 = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    for c in range(n_classes):
        Xc, wc = X[y_idx == c], w[y_idx == c]
        obs = ~np.isnan(Xc)
        W = (wc[:, None] * obs).sum(axis=0)
        S = np.where(obs, wc[:, None] * np.where(obs, Xc, 0.0), 0.0).sum(axis=0)
        weight[c] = W
        mean[c] = np.divide(S, W, out=np.zeros_like(S), where=W > 0)
        m2[c] = np.where(obs, wc[:, None] * (np.where(obs, Xc, 0.0) - mean[c]) ** 2,
                         0.0).sum(axis=0)
    return weight, mean, m2


def category_counts_reference(X, y_idx, sample_weight, n_categories, n_classes):
    """(n_classes, sum K_j) weights per class of each feature's codes, in the feature-major
    column layout offsets[j] + k; NaN, negative codes and codes >= K_j skipped. Codes are
    compared as Python numbers: nothing rounds."""
    X = np.asarray(X)
    offsets = np.r_[0, np.cumsum(n_categories)].astype(int)
    count = np.zeros((n_classes, offsets[-1]))
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            v = X[i, j].item()
            if v != v or v < 0 or v >= n_categories[j]:
                continue
            count[y_idx[i], offsets[j] + int(v)] += sample_weight[i]
    return count


# Category codes as floats are integers only below about 2**53; codes_status's bound for them.
FLOAT_CODE_LIMIT = 9.0e15


def codes_status_reference(X):
    """codes_status by its definition: (status, largest code per column, -1 where none). NaN and
    negative whole numbers (however large; -0.0 is 0) are missing; a float with a fractional part
    or +-inf is CODES_NOT_INTEGER, a float code >= FLOAT_CODE_LIMIT CODES_TOO_LARGE; integer-dtype
    codes are taken exactly; the first problem in row-major order is reported (largest is then
    None). Python numbers: no rounding."""
    import math

    from fastgen._core import checks

    S = checks.CodesStatus

    X = np.asarray(X)
    largest = [-1] * X.shape[1]
    for row in X:
        for j, v in enumerate(row.tolist()):
            if isinstance(v, float):
                if math.isnan(v):
                    continue
                if math.isinf(v) or v != math.floor(v):
                    return S.CODES_NOT_INTEGER, None
                if v >= FLOAT_CODE_LIMIT:
                    return S.CODES_TOO_LARGE, None
                v = int(v)
            if v >= 0:
                largest[j] = max(largest[j], v)
    return S.CODES_OK, largest


def encode_compact_reference(y, max_span):
    """(classes, codes) as np.unique(y, return_inverse=True), or None when max - min (as Python
    integers) exceeds max_span."""
    y = np.asarray(y)
    if int(y.max()) - int(y.min()) > max_span:
        return None
    classes, codes = np.unique(y, return_inverse=True)
    return classes, codes.ravel()


def svmlight_rows(path, zero_based):
    """An svmlight file read line by line with Python's own text file, str.split, int() and
    float(): [(label, [(column, value), ...]), ...], or the ValueError "line: message" of its
    first bad line (the messages of fastgen.io)."""
    offset, rows = 0 if zero_based else 1, []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            tokens = line.split("#", 1)[0].split()
            if not tokens:
                continue

            def bad(message):
                return ValueError(f"{line_no}: {message}")

            try:
                label = float(tokens[0])
            except ValueError:
                label = math.nan
            if not math.isfinite(label):
                raise bad(f"label {tokens[0]!r} is not a finite number")
            pairs, previous = [], -1
            for token in tokens[1:]:
                key, sep, value = token.partition(":")
                if key == "qid" and sep:
                    continue
                try:
                    column, x = int(key) - offset, float(value)
                except ValueError:
                    raise bad(f"{token!r} is not index:value") from None
                if column < 0:
                    raise bad(f"index {key} is below {offset} "
                              f"({'zero' if zero_based else 'one'}-based indices)")
                if column > 2**63 - 2:
                    raise bad(f"index {key} is too large (at most {2**63 - 2 + offset})")
                if column <= previous:
                    raise bad(f"index {key} is not in increasing order")
                if not np.isfinite(x):
                    raise bad(f"value {value!r} is not finite")
                pairs.append((column, x))
                previous = column
            rows.append((label, pairs))
    return rows
