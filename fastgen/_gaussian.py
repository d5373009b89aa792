"""Shared machinery of the Gaussian family: additive moment statistics, their combination, the
marginal densities of full-covariance Gaussians on rows with missing values, and EM.

Statistics are per class: a total weight, a mean and a sum of squared deviations from that mean
(per feature for the diagonal models, a scatter matrix for the full ones). Two batches combine
exactly by Chan, Golub and LeVeque's update, so ``fit`` on A and B together equals ``partial_fit``
on A then B, and no sum of squares is ever formed about zero (no cancellation for data far from
the origin).
"""
from __future__ import annotations

import numpy as np
from scipy import linalg

from ._base import group_by_class
from ._core import _counts

LOG_2PI = float(np.log(2.0 * np.pi))


def combine_moments(w_a, mean_a, m2_a, w_b, mean_b, m2_b):
    """Combine two sets of per-class moments (weight, mean, squared deviations).

    Diagonal: all arrays (n_classes, n_features). Full: weights (n_classes,), means
    (n_classes, n_features), m2 (n_classes, n_features, n_features) -- or (1, d, d) pooled over the
    classes, to which every class's between-batch term is added.
    """
    w = w_a + w_b
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(w > 0, w_b / np.where(w > 0, w, 1.0), 0.0)
    delta = mean_b - mean_a
    if m2_a.ndim == mean_a.ndim:  # diagonal
        return w, mean_a + delta * frac, m2_a + m2_b + (w_a * frac) * delta * delta
    mean = mean_a + delta * frac[:, None]
    between = np.einsum("c,ci,cj->cij", w_a * frac, delta, delta)
    if m2_a.shape[0] == 1 and len(w) > 1:
        between = between.sum(axis=0, keepdims=True)
    return w, mean, m2_a + m2_b + between


def diagonal_moments(X, y_idx, sample_weight, n_classes, n_threads):
    """(weight, mean, m2), each (n_classes, n_features), of a batch over its observed values."""
    shape = (n_classes, X.shape[1])
    weight, mean, m2 = np.empty(shape), np.empty(shape), np.empty(shape)
    _counts.moments_dense(X, np.asarray(y_idx, dtype=np.intp), sample_weight, weight, mean, m2,
                          n_threads)
    return weight, mean, m2


def full_moments(X, y_idx, sample_weight, n_classes, pooled, n_threads, extra=None):
    """(weight (C,), mean (C, d), scatter (G, d, d)) of a complete batch; G = 1 when pooled.

    ``extra`` (G, d, d), if given, is added to the scatter (EM's conditional covariances)."""
    weight, mean, _ = diagonal_moments(X, y_idx, sample_weight, n_classes, n_threads)
    weight = weight[:, 0].copy()
    weighted = not np.all(sample_weight == 1.0)
    n_features = X.shape[1]
    if pooled:
        D = X - mean[y_idx]
        scatter = (D.T @ (D * sample_weight[:, None]) if weighted else D.T @ D)[None]
    else:
        scatter = np.empty((n_classes, n_features, n_features))
        order, class_ptr = group_by_class(y_idx, n_classes)
        for c in range(n_classes):
            rows = order[class_ptr[c]:class_ptr[c + 1]]
            D = X[rows] - mean[c]
            scatter[c] = D.T @ (D * sample_weight[rows, None]) if weighted else D.T @ D
    if extra is not None:
        scatter += extra
    return weight, mean, (scatter + scatter.transpose(0, 2, 1)) / 2


def missing_patterns(mask):
    """Group rows by missingness pattern: (order, ptr); the rows of pattern p are
    ``order[ptr[p]:ptr[p + 1]]`` and share ``mask[order[ptr[p]]]``."""
    packed = np.packbits(mask, axis=1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, inverse = np.unique(keys, return_inverse=True)
    inverse = inverse.reshape(-1)
    return group_by_class(inverse, int(inverse.max()) + 1 if len(inverse) else 0)


def _factor(cov, obs):
    """Cholesky factor (lower) of the observed sub-covariance and its log-determinant."""
    L = np.linalg.cholesky(cov[np.ix_(obs, obs)])
    return L, 2.0 * np.log(np.diag(L)).sum()


def full_jll_missing(X, means, whitening, logdets, block, log_prior, row_block=4096):
    """Joint log-likelihoods of rows with missing values under full-covariance Gaussians.

    X (m, d) with NaN for missing; class c has mean ``means[c]`` and covariance
    ``S_g = (W_g W_g^T)^-1`` with ``W_g = whitening[:, g*d:(g+1)*d]`` and ``log det S_g =
    logdets[g]``, g = ``block[c]``. A row's density is the Gaussian of its observed sub-vector
    o (missing block m), computed from the precision P = W W^T without factoring S_oo:
    ``(x_o - mu_o)^T S_oo^-1 (x_o - mu_o) = d^T P d - u_m^T P_mm^-1 u_m`` with d the deviation
    with zeros at the missing features and u = P d, and ``log det S_oo = log det S +
    log det P_mm`` (Schur complements). Rows are processed in batches of equal missing count,
    so the only factorisations are of the small m x m blocks, batched. A row with nothing
    observed gets the log prior.
    """
    mask = np.isnan(X)
    X0 = np.where(mask, 0.0, X)
    n_features = X.shape[1]
    n_missing = mask.sum(axis=1)
    out = np.empty((X.shape[0], means.shape[0]))
    out[n_missing == n_features] = log_prior
    for m in np.unique(n_missing):
        if m == n_features:
            continue
        rows_m = np.flatnonzero(n_missing == m)
        for start in range(0, len(rows_m), row_block):
            rows = rows_m[start:start + row_block]
            missing = np.nonzero(mask[rows])[1].reshape(len(rows), m)
            observed_mask = ~mask[rows]
            for c in range(means.shape[0]):
                g = block[c]
                W = whitening[:, g * n_features:(g + 1) * n_features]
                D = (X0[rows] - means[c]) * observed_mask
                Z = D @ W
                q = np.einsum("ij,ij->i", Z, Z)
                logdet = np.full(len(rows), logdets[g])
                if m:
                    Wm = W[missing]                                   # (rows, m, d)
                    u = np.einsum("rmd,rd->rm", Wm, Z)                # (P d)_m
                    L = np.linalg.cholesky(Wm @ Wm.transpose(0, 2, 1))  # P_mm = L L^T
                    v = np.linalg.solve(L, u[:, :, None])[:, :, 0]
                    q -= np.einsum("rm,rm->r", v, v)
                    logdet += 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
                out[rows, c] = log_prior[c] - 0.5 * ((n_features - m) * LOG_2PI + logdet + q)
    return out


def em_full(X, y_idx, sample_weight, n_classes, pooled, regularise, base, max_iter, tol,
            n_threads):
    """Expected statistics of a batch with missing values, by EM under missing-at-random.

    The E-step replaces each row's missing block by its conditional mean given the observed
    block, ``mu_m + S_mo S_oo^-1 (x_o - mu_o)``, and adds its conditional covariance
    ``S_mm - S_mo S_oo^-1 S_om`` to the scatter; the M-step recomputes means and covariances from
    those statistics combined with ``base`` (the statistics of earlier batches, or None).
    ``regularise(cov)`` gives the covariances that condition (the model's shrinkage or
    reg_param). Stops when no mean or covariance entry moves by more than ``tol`` relative to
    the largest one. Returns ((weight, mean, scatter) of the batch, n_iter).
    """
    mask = np.isnan(X)
    incomplete = np.flatnonzero(mask.any(axis=1))
    sub_y = y_idx[incomplete]
    sub_w = sample_weight[incomplete]
    order, ptr = missing_patterns(mask[incomplete])
    n_features = X.shape[1]
    n_groups = 1 if pooled else n_classes
    block = np.zeros(n_classes, dtype=np.intp) if pooled else np.arange(n_classes)

    # start from the observed per-class means and variances (no correlations)
    weight, mean, m2 = diagonal_moments(X, y_idx, sample_weight, n_classes, n_threads)
    if pooled:
        weight, m2 = weight.sum(axis=0, keepdims=True), m2.sum(axis=0, keepdims=True)
    var = np.where(weight > 0, m2 / np.where(weight > 0, weight, 1.0), 1.0)
    covs = regularise(var[:, :, None] * np.eye(n_features))
    Xhat = X.astype(np.float64)
    previous = (mean, covs)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        extra = np.zeros((n_groups, n_features, n_features))
        for p in range(len(ptr) - 1):
            rows_p = order[ptr[p]:ptr[p + 1]]
            obs = ~mask[incomplete[rows_p[0]]]
            mis = ~obs
            for c in np.unique(sub_y[rows_p]):
                rows = rows_p[sub_y[rows_p] == c]
                cov = covs[block[c]]
                cond_cov = cov[np.ix_(mis, mis)]
                if obs.any():
                    L, _ = _factor(cov, obs)
                    diff = X[np.ix_(incomplete[rows], obs)] - mean[c, obs]
                    K = linalg.cho_solve((L, True), cov[np.ix_(obs, mis)]).T  # S_mo S_oo^-1
                    Xhat[np.ix_(incomplete[rows], mis)] = mean[c, mis] + diff @ K.T
                    cond_cov = cond_cov - K @ cov[np.ix_(obs, mis)]
                else:
                    Xhat[np.ix_(incomplete[rows], mis)] = mean[c, mis]
                extra[block[c]][np.ix_(mis, mis)] += sub_w[rows].sum() * cond_cov
        stats = full_moments(Xhat, y_idx, sample_weight, n_classes, pooled, n_threads, extra)
        weight, mean, scatter = stats if base is None else combine_moments(*base, *stats)
        totals = np.array([weight.sum()]) if pooled else weight
        covs = regularise(scatter / np.maximum(totals, np.finfo(float).tiny)[:, None, None])
        change = max(np.abs(mean - previous[0]).max() / max(np.abs(mean).max(), 1e-300),
                     np.abs(covs - previous[1]).max() / max(np.abs(covs).max(), 1e-300))
        if change <= tol:
            break
        previous = (mean, covs)
    return stats, n_iter


def rank_deficient(eigenvalues):
    """Whether a covariance with these eigenvalues is numerically singular."""
    top = eigenvalues.max(initial=0.0)
    return not top > 0 or eigenvalues.min() <= top * len(eigenvalues) * np.finfo(np.float64).eps
