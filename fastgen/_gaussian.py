"""Shared machinery of the Gaussian family: additive moment statistics, their combination, the
marginal densities of full-covariance Gaussians on rows with missing values, and EM.

Statistics are per class: a total weight, a mean and sums of powers of deviations from that mean
(per feature for the diagonal models; for the full ones the scatter matrix, and when Ledoit-Wolf
shrinkage is wanted the third and fourth co-moments sum (x-m)_j^2 (x-m)_k and
sum (x-m)_j^2 (x-m)_k^2). Two batches combine exactly by moving both to the combined mean and
adding (Chan, Golub and LeVeque; Pebay for the higher orders), so ``fit`` on A and B together
equals ``partial_fit`` on A then B, and no sum of powers is ever formed about zero (no
cancellation for data far from the origin).
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from ._base import threads_for
from ._bayes import log_rising
from ._core import _counts, _missing
from ._core import jll as _jll
from ._validation import (
    ConvergenceWarning,
    InvalidParameterError,
    invalid_parameter,
    plain_choice,
    real_in,
    user_stacklevel,
)

LOG_2PI = float(np.log(2.0 * np.pi))
# the diagonal kernel's kinds
DIAG_GAUSSIAN, DIAG_POISSON, DIAG_STUDENT_T, DIAG_NEGBIN = _jll.DIAGONAL_MODELS
ROW_BLOCK = 4096  # rows per batched step of the missing-value computations
# The Student-t kernel's product of the 1 + u^2 rounds each factor and product (a relative
# error of a few ulps each), which its power, -(nu + 1) / 2, multiplies: above this power
# (a class of more than 2e6 samples' weight) it takes each term's log1p instead, exactly
PRODUCT_MAX_POWER = 1e6


def combine_moments(w_a, mean_a, m2_a, w_b, mean_b, m2_b):
    """Combine two sets of diagonal moments (weight, mean, squared deviations), all
    (n_classes, n_features). Squared deviations beyond float64 (weights times squares of values
    far apart) overflow to inf quietly here: the derivations refuse them."""
    w = w_a + w_b
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        frac = np.where(w > 0, w_b / np.where(w > 0, w, 1.0), 0.0)
        delta = mean_b - mean_a
        return w, mean_a + delta * frac, m2_a + m2_b + (w_a * frac) * delta * delta


def diagonal_moments(X, members, n_threads):
    """(weight, mean, m2), each (n_classes, n_features), of a batch over its observed values,
    its rows counted as ``members`` (``Members``) says."""
    shape = (members.n_classes, X.shape[1])
    weight, mean, m2 = np.empty(shape), np.empty(shape), np.empty(shape)
    _counts.moments_dense(X, members.rows, members.classes, members.weights, weight, mean, m2,
                          n_threads)
    return weight, mean, m2


def diagonal_tables(model, A, S, B, log_prior, P=None):
    """The diagonal kernel's tables from (n_classes, n_features) parameters: feature-major A, S
    and B (the constant of each term), the log prior and the class bias (the log prior plus
    the constants of all the features: what a complete row starts from), and P: Student-t's
    powers, or their one row when every feature of a class has the same power (the kernel then
    takes one log per class, unless a power exceeds PRODUCT_MAX_POWER); the negative binomial's
    table of whole counts, given as (n_classes, n_features * width)
    (``naive_bayes.negbin_table``); empty otherwise.

    Gaussian: A = means, S = -1/(2 var), B = -log(2 pi var)/2. Poisson: A = log lambda,
    B = -lambda. Student-t: see ``NormalInverseGamma.predictive``. Negative binomial of r and
    b: A = -log(1 + b), S = r, B = -r log(1 + 1/b).
    """
    A, S, B = (np.ascontiguousarray(t.T, dtype=np.float64) for t in (A, S, B))
    P = np.empty((0, A.shape[1])) if P is None else np.ascontiguousarray(P.T, dtype=np.float64)
    if model == DIAG_STUDENT_T and (P == P[0]).all() and np.abs(P).max(initial=0.0) <= \
            PRODUCT_MAX_POWER:
        P = P[:1].copy()
    log_prior = np.ascontiguousarray(log_prior, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # -inf prior + finite table sums
        bias = log_prior + B.sum(axis=0)
    return A, S, B, log_prior, bias, model, P


def score_diagonal(tables, X, kind, out, n_threads):
    """Run the diagonal kernel with ``diagonal_tables``' output."""
    A, S, B, log_prior, bias, model, P = tables
    if _jll.jll_diag_dense(X, A, S, B, P, log_prior, bias, model, kind, out, n_threads):
        raise MemoryError("could not allocate the scoring kernel's row buffers")


def full_moments(X, members, n_threads, extra=None, higher=False):
    """Per-class statistics of a complete batch, its rows counted as ``members`` (``Members``)
    says: ``(weight (C,), mean (C, d), scatter (C, d, d),
    third, fourth)``; the co-moments third[c, j, k] = sum w (x-m)_j^2 (x-m)_k and fourth[c, j, k] =
    sum w (x-m)_j^2 (x-m)_k^2 only when ``higher`` (else None).

    ``extra`` (C, d, d), if given, is added to the scatter (EM's conditional covariances).
    Sums beyond float64 overflow to inf or NaN quietly here: the derivations refuse them."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _full_moments(X, members, n_threads, extra, higher)


def _full_moments(X, members, n_threads, extra, higher):
    weight, mean, _ = diagonal_moments(X, members, n_threads)
    weight = weight[:, 0].copy()
    weighted = not np.all(members.weights == 1.0)
    n_classes, n_features = members.n_classes, X.shape[1]
    shape = (n_classes, n_features, n_features)
    scatter = np.empty(shape)
    third, fourth = (np.empty(shape), np.empty(shape)) if higher else (None, None)
    order, class_ptr, weights = members.by_class()
    for c in range(n_classes):
        span = slice(class_ptr[c], class_ptr[c + 1])
        D = X[order[span]] - mean[c]
        WD = D * weights[span, None] if weighted else D
        scatter[c] = D.T @ WD
        if higher:
            D2 = D * D
            third[c] = D2.T @ WD
            fourth[c] = D2.T @ (WD * D)
    if extra is not None:
        scatter += extra
    return weight, mean, (scatter + scatter.transpose(0, 2, 1)) / 2, third, fourth


def _shift(weight, mean, scatter, third, fourth, new_mean):
    """The same statistics about ``new_mean`` instead of ``mean`` (x - new = a - delta)."""
    delta = new_mean - mean
    dd = np.einsum("ci,cj->cij", delta, delta)
    w = weight[:, None, None]
    moved = scatter + w * dd
    if third is None:
        return moved, None, None
    diag = np.diagonal(scatter, axis1=1, axis2=2)
    d2 = delta * delta
    t_delta = third * delta[:, None, :]
    moved_fourth = (fourth - 2 * t_delta - 2 * t_delta.transpose(0, 2, 1)
                    + np.einsum("ci,cj->cij", diag, d2) + np.einsum("ci,cj->cij", d2, diag)
                    + 4 * dd * scatter + w * np.einsum("ci,cj->cij", d2, d2))
    moved_third = (third - np.einsum("ci,cj->cij", diag, delta) - 2 * delta[:, :, None] * scatter
                   - w * np.einsum("ci,cj->cij", d2, delta))
    return moved, moved_third, moved_fourth


def combine_full(a, b):
    """Combine two tuples of per-class full statistics (see ``full_moments``). Statistics beyond
    float64 (a model file's) overflow to inf or NaN quietly here: the derivation refuses them."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _combine_full(a, b)


def _combine_full(a, b):
    weight = a[0] + b[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(weight > 0, b[0] / np.where(weight > 0, weight, 1.0), 0.0)
    mean = a[1] + (b[1] - a[1]) * frac[:, None]
    higher = a[3] is not None and b[3] is not None
    parts = [_shift(*(stats[:3] + ((stats[3], stats[4]) if higher else (None, None))), mean)
             for stats in (a, b)]
    scatter = parts[0][0] + parts[1][0]
    if not higher:
        return weight, mean, scatter, None, None
    return weight, mean, scatter, parts[0][1] + parts[1][1], parts[0][2] + parts[1][2]


def ledoit_wolf(weight, scatter, fourth):
    """scikit-learn's "auto" shrunk covariance of one class from its statistics: Ledoit-Wolf on
    the standardised data (population scale, 1 for a constant feature), scaled back. Statistics
    beyond float64 give inf or NaN quietly: the caller checks the covariance is finite."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _ledoit_wolf(weight, scatter, fourth)


def _ledoit_wolf(weight, scatter, fourth):
    n_features = scatter.shape[0]
    scale = np.sqrt(np.diag(scatter) / weight)
    scale[scale == 0] = 1.0
    corr = scatter / weight / np.outer(scale, scale)
    if n_features == 1:
        return corr * np.outer(scale, scale)
    sq = scale * scale
    beta_ = (fourth / np.outer(sq, sq)).sum()
    delta_ = (corr * corr).sum()
    trace = np.trace(corr)
    mu = trace / n_features
    beta = (beta_ / weight - delta_) / (n_features * weight)
    delta = (delta_ - 2.0 * mu * trace + n_features * mu ** 2) / n_features
    beta = min(beta, delta)
    shrinkage = 0.0 if beta == 0 else beta / delta
    shrunk = (1.0 - shrinkage) * corr
    shrunk.flat[::n_features + 1] += shrinkage * mu
    return shrunk * np.outer(scale, scale)


MIN_VARIANCE = 1e-100  # below, whitening by 1/sqrt(variance) overflows for |x| up to 1e150


# A direction of a correlation matrix is zero at or below NULL_RTOL times its dimension times eps
# times its largest eigenvalue: the rounding of a scatter matrix summed over many rows and of its
# eigendecomposition reaches a few d eps (measured up to 2 d eps for exactly collinear features),
# and a direction known to less than 1e-13 of the others' spread carries no usable information.
NULL_RTOL = 100.0
# One variance of a constant feature is the rounding of its weighted means alone: a standard
# deviation of an ulp or two of its size (a constant 0.1, fractional weights: 1.4e-17); a feature
# whose values differ by more than a few ulps has a spread of its own
ROUNDING_RTOL = 8.0


def _correlation(cov):
    """The standard deviations of ``cov`` (all above MIN_VARIANCE's root) and its correlation
    matrix: the rank tests are made on it, so that they do not depend on the features' units
    (a feature measured in tiny units is a direction like any other)."""
    std = np.sqrt(np.diag(cov))
    return std, cov / np.outer(std, std)


def null_tolerance(eigenvalues):
    """The eigenvalue of a correlation matrix at or below which its direction is zero."""
    top = eigenvalues.max(initial=0.0)
    return NULL_RTOL * top * len(eigenvalues) * np.finfo(np.float64).eps


def overall_moments(weight, mean, m2):
    """Each feature's mean and variance over all classes, from the per-class weights, means and
    squared deviations of its observed values ((n_classes, n_features) each): 0 and 1 for a
    feature no class observed."""
    total = weight.sum(axis=0)
    seen = total > 0
    safe_total = np.where(seen, total, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        overall_mean = (weight * mean).sum(axis=0) / safe_total
        overall_var = np.where(seen, (m2 + weight * (mean - overall_mean) ** 2).sum(axis=0)
                               / safe_total, 1.0)
    return overall_mean, overall_var


def constant(variances, sizes=None, rtol=NULL_RTOL, least=MIN_VARIANCE):
    """Which features are constant: variance at most ``least`` (MIN_VARIANCE where the
    features are whitened; 0 for a diagonal model, which divides by no standard deviation)
    or, for variances estimated from data of these ``sizes`` (each feature's largest |mean|;
    None for a regularised or given covariance), a standard deviation at most ``rtol`` eps
    times the size, a spread that the rounding of values of that size makes by itself
    (NULL_RTOL where a covariance's directions are judged; ROUNDING_RTOL for one variance on
    its own)."""
    if sizes is None:
        return ~(variances > least)
    floor = np.maximum(least, (rtol * np.finfo(np.float64).eps * sizes) ** 2)
    return ~(variances > floor)


def without_noise(cov, flat):
    """``cov`` with the rows and columns of the constant features ``flat`` set to 0: whatever
    variance they show is rounding noise of their size, which must not reach a shrinkage
    target, a spherical variance or ``covariance_``."""
    if not flat.any():
        return cov
    cov = cov.copy()
    cov[flat, :] = 0.0
    cov[:, flat] = 0.0
    return cov


def singular(cov, sizes=None):
    """Whether a covariance (of features of these ``sizes``, see ``constant``) is numerically
    singular: a constant feature, or a null direction of the correlation matrix; NaN counts as
    singular."""
    if constant(np.diag(cov), sizes).any():
        return True
    values = np.linalg.eigvalsh(_correlation(cov)[1])
    return not values.min(initial=np.inf) > null_tolerance(values)


class Support(NamedTuple):
    """The subspace that Gaussians of a singular covariance live on: the features that are not
    constant, and within them an orthonormal basis of the covariance's range when that is not
    all of them (collinear features). A constant feature is dropped by index, so that the model
    is exactly the model without it, also on rows with missing values."""

    keep: np.ndarray  # (k,) intp: the features that are not constant
    basis: np.ndarray | None  # (k, r) orthonormal, or None: all k kept features

    @property
    def rank(self):
        return len(self.keep) if self.basis is None else self.basis.shape[1]

    def restrict(self, cov):
        """E^T cov E (r, r): the covariance on the support."""
        sub = cov[np.ix_(self.keep, self.keep)]
        return sub if self.basis is None else self.basis.T @ sub @ self.basis

    def sizes(self, mean):
        """The size of ``mean``'s coordinates on the support (bounds, for ``singular``)."""
        size = np.abs(mean[self.keep])
        return size if self.basis is None else size @ np.abs(self.basis)

    def embed(self, M, n_features):
        """E M (n_features, ...): rows on the support back to the features (0 where constant)."""
        out = np.zeros((n_features,) + M.shape[1:])
        out[self.keep] = M if self.basis is None else self.basis @ M
        return out


def mean_spread(means, variances, sizes):
    """(each feature's spread of the class means (max - min), and the resolution a spread is
    judged by: the feature's own standard deviation in ``variances`` plus d eps ``sizes``, the
    rounding of means of that size)."""
    n_features = len(variances)
    gap = np.ptp(means, axis=0) if len(means) else np.zeros(n_features)
    eps = np.finfo(np.float64).eps
    return gap, np.sqrt(np.maximum(variances, 0.0)) + n_features * eps * sizes


def support_of(cov, means, variances=None):
    """The support of the Gaussians N(means[c], cov), and whether the means share it.
    ``variances``: each feature's variance in the data, before any regularisation (default:
    cov's diagonal): constant features are decided on them, as shrinking a constant feature's
    variance towards the others' does not make its rounding noise information.

    The null directions are the constant features (``constant``) and, among the others, the
    null eigenvectors of their correlation matrix (``null_tolerance``), so the test does not
    depend on the features' units. The means share the support if along every null direction
    they spread (max - min over the classes) by at most the resolution of the test -- the
    feature's own standard deviation for a constant one, sqrt(tolerance) standard deviations
    for a null eigenvector -- plus d eps max|mean|, the rounding of the means. Then x's component
    along the null directions is the same under every class and carries no information: the
    model is the Gaussian on the support, spanned by the other eigenvectors (scaled back to the
    features' units and orthonormalised, so that the log-determinant on it is the
    pseudo-determinant). Otherwise the classes are degenerate Gaussians on parallel subspaces.
    Returns (Support, agree); a full-rank covariance costs one eigvalsh.
    """
    n_features = cov.shape[0]
    eps = np.finfo(np.float64).eps
    sizes = np.abs(means).max(axis=0, initial=0.0)
    variances = np.diag(cov) if variances is None else variances
    flat = constant(variances, sizes) | constant(np.diag(cov))
    # a feature that varies beyond its rounding, but by less than MIN_VARIANCE (measured in
    # tiny units), is no constant: dropping it would change the model (the predictive's would
    # lose every feature, and give the prior)
    tiny = np.flatnonzero(flat & ~constant(variances, sizes, least=0.0)
                          & constant(np.diag(cov)))
    if len(tiny):
        raise ValueError(f"Feature {tiny[0]} varies (variance {variances[tiny[0]]:.3g}), but "
                         f"below {MIN_VARIANCE:g}, the least variance LDA and QDA model (they "
                         "divide by the standard deviations: beyond that the whitened values "
                         "overflow). Rescale X (for example with StandardScaler).")
    if not flat.any() and not singular(cov):
        return Support(np.arange(n_features), None), True
    # a feature constant in the data along which the class means differ stays a feature where
    # regularisation gave it a variance (it separates the classes; the model says how much)
    gap, slack = mean_spread(means, variances, sizes)
    flat &= ~((gap > slack) & ~constant(np.diag(cov)))
    keep = np.flatnonzero(~flat)
    std, corr = _correlation(cov[np.ix_(keep, keep)])
    values, vectors = np.linalg.eigh(corr)
    tol = null_tolerance(values)
    null = values <= tol
    scaled = means[:, keep] / std
    spread = [(gap[flat], slack[flat]),
              (np.ptp(scaled @ vectors[:, null], axis=0),
               np.sqrt(tol) + n_features * eps * np.abs(scaled).max(initial=0.0))]
    agree = all((gap <= slack).all() for gap, slack in spread) if len(means) else True
    basis = np.linalg.qr(std[:, None] * vectors[:, ~null])[0] if null.any() else None
    return Support(keep, basis), agree


def _missing_terms(D, missing, P, n_threads, conditional=False):
    """For rows that miss the features ``missing`` (rows, m) -- deviations D (rows, d) set to 0
    there -- and a Gaussian of precision P: the Mahalanobis distance of the observed part,
    d^T P d - u_m^T P_mm^-1 u_m with u = P d (Schur complement), and log det P_mm. Only the
    m x m blocks P_mm are factored (gathered, not multiplied). With ``conditional``, also what EM
    needs: P_mm^-1 u_m (the conditional mean of the missing block is mu_m minus it) and P_mm^-1
    (its conditional covariance)."""
    U = D @ P
    q = np.einsum("ij,ij->i", D, U)
    n_rows, m = missing.shape
    logdet = np.empty(n_rows)
    shift = np.empty((n_rows, m) if conditional else (0, 0))
    cond_cov = np.empty((n_rows, m, m) if conditional else (0, 0, 0))
    # (threads for this block's work alone: a fit calls this once per block and class)
    work = n_rows * m * m * (m + 1) * (2 if conditional else 1)
    if _missing.schur_terms(U, missing, P, q, logdet, shift, cond_cov, conditional,
                            threads_for(n_threads, work)):
        raise np.linalg.LinAlgError("a sub-block of the precision is not positive definite")
    return q, logdet, shift, cond_cov


def _batches(mask):
    """Rows grouped by their number of missing features, in blocks: (rows, missing (rows, m))."""
    n_missing = mask.sum(axis=1)
    for m in np.unique(n_missing):
        rows_m = np.flatnonzero(n_missing == m)
        for start in range(0, len(rows_m), ROW_BLOCK):
            rows = rows_m[start:start + ROW_BLOCK]
            yield rows, np.nonzero(mask[rows])[1].reshape(len(rows), m).astype(np.intp)


def whitening(covs, support):
    """For each covariance cov_g, on the ``support`` shared by all (basis E, d x r):
    E^T cov_g E = L_g L_g^T, the whitening W_g = E L_g^-T (side by side, so that
    ``||(x - m) W_g||^2`` is the Mahalanobis distance of the pseudo-inverse, blind to the null
    directions; Cholesky keeps the small eigen-directions accurate), log det(E^T cov_g E) (of
    the pseudo-determinant of cov_g), and, when the support is spanned by the kept features, the
    precisions of the kept features (else None: the missing-value path cannot use them)."""
    n_groups, n_features = covs.shape[:2]
    rank = support.rank
    W = np.empty((n_features, n_groups * rank))
    precisions = np.empty((n_groups, rank, rank)) if support.basis is None else None
    logdets = np.empty(n_groups)
    eye = np.eye(rank)
    for g, cov in enumerate(covs):
        try:
            L = np.linalg.cholesky(support.restrict(cov))
        except np.linalg.LinAlgError:  # positive definite on its support, but not in float64
            raise ValueError(
                "The covariance is too ill-conditioned for float64 on its support (features "
                "whose scales differ by a factor near 1e50, or nearly collinear): rescale X, or "
                "regularise the covariance (reg_param, shrinkage).") from None
        W_g = np.linalg.solve(L, eye).T
        W[:, g * rank:(g + 1) * rank] = support.embed(W_g, n_features)
        if precisions is not None:
            precisions[g] = W_g @ W_g.T
        logdets[g] = 2.0 * np.log(np.diag(L)).sum()
    return W, precisions, logdets


def full_jll_missing(X, means, precisions, logdets, block, log_prior, n_threads):
    """Joint log-likelihoods of rows with missing values under full-covariance Gaussians.

    X (m, d) with NaN for missing; class c has mean ``means[c]`` and covariance ``S_g`` with
    precision ``precisions[g]`` and ``log det S_g = logdets[g]``, g = ``block[c]``. A row's
    density is the Gaussian of its observed sub-vector o (``observed_terms``). A row with
    nothing observed gets the log prior.
    """
    q, logdet, n_observed = observed_terms(X, means, precisions, logdets, block, n_threads)
    return log_prior - 0.5 * (n_observed[:, None] * LOG_2PI + logdet + q)


def observed_terms(X, means, precisions, logdets, block, n_threads, log_distance=False):
    """What the density of each row's observed sub-vector o needs, under matrices of the form
    of ``full_jll_missing``'s covariances: the Mahalanobis distance d_o^T S_oo^-1 d_o (m, C),
    log det S_oo (m, C) and the number of observed features (m,). Both are computed from the
    precision without factoring S_oo (``_missing_terms``; ``log det S_oo = log det S + log det
    P_mm``), batched over rows with the same number of missing features; both are 0 for a row
    with nothing observed. Where d^T P d overflows (rows very far from a class), the distance is
    taken of the row scaled to unit size and scaled back (it is quadratic): inf only if it
    overflows. With ``log_distance``, the log of the distance instead (-inf for 0), which a
    scaled one keeps finite: what a Student t, whose log density grows as log q, needs.
    """
    mask = np.isnan(X)
    X0 = np.where(mask, 0.0, X)
    n_features = X.shape[1]
    shape = (X.shape[0], means.shape[0])
    q_out = np.full(shape, -np.inf) if log_distance else np.zeros(shape)
    logdet_out = np.zeros(shape)
    for rows, missing in _batches(mask):
        m = missing.shape[1]
        if m == n_features:
            continue
        observed = ~mask[rows]
        X_rows = X0[rows]
        for c, g in enumerate(block):
            D = X_rows - means[c]
            D *= observed
            q, logdet, _, _ = _missing_terms(D, missing, precisions[g], n_threads)
            far = ~np.isfinite(q)
            if log_distance:
                with np.errstate(divide="ignore"):
                    q = np.log(q)
            if far.any():  # d^T P d overflowed (NaN, or inf minus inf): the distance is
                # quadratic in d, so take it of the rows scaled to 1 and scale it back
                scale = np.abs(D[far]).max(axis=1)
                q_unit = _missing_terms(D[far] / scale[:, None], missing[far], precisions[g],
                                        n_threads)[0]
                with np.errstate(over="ignore"):
                    q[far] = (np.log(q_unit) + 2 * np.log(scale) if log_distance
                              else scale * scale * q_unit)
            q_out[rows, c] = q
            logdet_out[rows, c] = logdets[g] + logdet
    return q_out, logdet_out, n_features - mask.sum(axis=1)


def _complete_loglik(stats, mean, precisions, logdets, block, keep):
    """Log-likelihood of complete-data statistics (weight w_c, mean m_c, scatter S_c about it)
    on the features ``keep`` under Gaussians of means ``mean`` (C, d) and precisions P_g of
    those features, ``log det cov_g = logdets[g]``, g = ``block[c]``:
    -1/2 sum_c [w_c (k log 2 pi + log det cov_g) + tr(P_g S_c) + w_c (m_c - mean_c)^T P_g
    (m_c - mean_c)]."""
    weight, m, scatter = stats[:3]
    P = precisions[block]
    delta = (m - mean)[:, keep]
    quadratic = (np.einsum("cjk,cjk->c", P, scatter[np.ix_(range(len(m)), keep, keep)])
                 + weight * np.einsum("cj,cjk,ck->c", delta, P, delta))
    return -0.5 * float(weight @ (len(keep) * LOG_2PI + logdets[block]) + quadratic.sum())


def em_start(moments, class_weight, base, covariances):
    """EM's start from the observed per-class moments of a batch (``diagonal_moments``: weight,
    mean and m2 of each feature's observed values) and its class weights: the observed means and
    variances (no correlations); a class that never observed a feature takes the feature's mean
    and variance over all classes (as GaussianNB and the diagonal models take them: no row of
    the class says otherwise; a start at 0 left that class's mean at 0, whatever the data's
    location), or 0 and 1 if no class observed it; combined with ``base`` (the statistics of
    earlier batches, or None). Returns ``(fill, mean, covs, block, support)``: the batch's
    start means, which fill a missing value of a feature EM does not keep (a constant one), the
    start's class means (combined with ``base``) and ``covariances`` of the start."""
    weight, mean, m2 = moments
    seen = weight > 0
    overall_mean, overall_var = overall_moments(weight, mean, m2)
    mean = np.where(seen, mean, overall_mean)
    var = np.where(seen, m2 / np.where(seen, weight, 1.0), overall_var)
    start = (class_weight, mean, class_weight[:, None, None] * var[:, :, None]
             * np.eye(mean.shape[1]), None, None)
    start = start if base is None else combine_full(base, start)
    covs, block, support = covariances(start)
    return mean, start[1], covs, block, support


def completed_moments(X, members, fill, mean, precisions, block, keep, n_threads, higher):
    """EM's E-step on a batch X (one row per entry of ``members``) under class means ``mean``
    and precisions ``precisions[block[c]]`` of the kept features ``keep``: each row's missing
    block replaced by its conditional mean given the observed block, its conditional covariance
    added to the scatter (both from the precision matrix, ``_missing_terms``); a missing value
    of a feature not kept is its class's ``fill`` (EM's start). Returns ``(stats, entropy,
    logdet, extra)``: the completed batch's statistics (``full_moments``), the sums over its
    rows of m (1 + log 2 pi) / 2 and of log det P_mm for a row missing m kept features (the
    entropy of the missing blocks given the observed ones is their difference, halved), and
    the conditional covariances added to the scatter (the higher moments are of the completed
    rows alone)."""
    mask = np.isnan(X)
    incomplete = np.flatnonzero(mask.any(axis=1))
    n_classes, n_features = members.n_classes, X.shape[1]
    y_idx, sample_weight = members.classes, members.weights
    Xhat = np.where(mask, fill[y_idx], X)
    X0 = np.where(mask, 0.0, X)
    flat = np.arange(n_features * n_features).reshape(n_features, n_features)
    extra = np.zeros((n_classes, n_features * n_features))
    logdet_mm = 0.0
    for batch_rows, missing in _batches(mask[incomplete][:, keep]):
        rows_all = incomplete[batch_rows]
        for c in np.unique(y_idx[rows_all]):
            own = y_idx[rows_all] == c
            rows, miss = rows_all[own], keep[missing[own]]
            D = ((X0[rows] - mean[c]) * ~mask[rows])[:, keep]
            _, logdet, shift, cond_cov = _missing_terms(D, missing[own], precisions[block[c]],
                                                        n_threads, conditional=True)
            logdet_mm += sample_weight[rows] @ logdet
            Xhat[rows[:, None], miss] = mean[c][miss] - shift
            index = flat[miss[:, :, None], miss[:, None, :]]
            extra[c] += np.bincount(index.ravel(), minlength=n_features * n_features,
                                    weights=(sample_weight[rows, None, None]
                                             * cond_cov).ravel())
    extra = extra.reshape(n_classes, n_features, n_features)
    stats = full_moments(Xhat, members, n_threads, extra, higher)
    entropy = 0.5 * (1.0 + LOG_2PI) * float(sample_weight @ mask[:, keep].sum(axis=1))
    return stats, entropy, float(logdet_mm), extra


def em_update(completed, base, mean, precisions, logdets, block, keep, covariances):
    """EM's M-step from a completed batch (``completed_moments``, or its parts' added up:
    LDA's and QDA's dask path) under the parameters it was completed with: ``(mean', covs', support',
    stats, objective)``, the means of the batch combined with ``base`` (or None) and
    ``covariances(combined)`` (the model's regularised covariances, the group of each class and
    their ``Support``, whose kept features must span it: the model raises for collinear ones).
    ``objective`` is the log-likelihood of the parameters given, on the kept features, of the
    batch's observed values and of ``base`` as complete data: Q + H (Dempster, Laird & Rubin
    1977), the expected complete-data log-likelihood, closed form in the combined expected
    statistics, plus the entropy of the missing blocks given the observed ones."""
    stats, entropy, logdet_mm, _ = completed
    combined = stats if base is None else combine_full(base, stats)
    objective = (_complete_loglik(combined, mean, precisions, logdets, block, keep)
                 + entropy - 0.5 * logdet_mm)
    new_covs, _, new_support = covariances(combined)
    return combined[1], new_covs, new_support, stats, objective


def _em_map(X, members, covariances, base, n_threads, higher):
    """One EM iteration on a batch X (one row per entry of ``members``) as a map of the
    parameters, and EM's start (``em_start``). Returns ``(step, mean, covs, support)``:
    ``step(mean, covs, support)`` maps class means (C, d) and covariances (G, d, d) with their
    ``Support`` to ``(mean', covs', support', stats, objective)`` (``completed_moments`` under
    the precisions of covs, then ``em_update``)."""
    fill, mean, covs, block, support = em_start(diagonal_moments(X, members, n_threads),
                                                members.class_weight(), base, covariances)

    def step(mean, covs, support):
        _, precisions, logdets = whitening(covs, support)
        completed = completed_moments(X, members, fill, mean, precisions, block, support.keep,
                                      n_threads, higher)
        return em_update(completed, base, mean, precisions, logdets, block, support.keep,
                         covariances)

    return step, mean, covs, support


class _EMStep(NamedTuple):
    theta: np.ndarray  # F(theta_in): the class means, then the covariances, flattened
    support: Support  # of F(theta_in)'s covariances
    stats: tuple  # the batch statistics of its M-step
    objective: float  # the log-likelihood at theta_in
    change: float  # the largest change of an entry, relative to the largest entry


def _positive_definite(covs, support):
    """Whether every covariance is positive definite on the support."""
    try:
        for cov in covs:
            np.linalg.cholesky(support.restrict(cov))
    except np.linalg.LinAlgError:
        return False
    return True


def em_full(X, members, covariances, base, max_iter, tol, n_threads,
            higher=False, likelihood=True, trace=None):
    """Expected statistics of a batch with missing values: EM under missing-at-random
    (``_em_map``), accelerated by SQUAREM.

    SQUAREM (Varadhan & Roland 2008, scheme S3) takes two EM steps from theta_0, theta_1 =
    F(theta_0) and theta_2 = F(theta_1), extrapolates with r = theta_1 - theta_0 and
    v = theta_2 - 2 theta_1 + theta_0 to theta' = theta_0 - 2 a r + a^2 v, a = -||r|| / ||v||
    (at most -1; a = -1 gives theta_2), and stabilises it by one more EM step: F(theta') is the
    next iterate. Its fixed points are EM's. Norms count each mean in units of the start's
    standard deviation sd_j and each covariance in sd_j sd_k, so that every feature weighs
    alike whatever its scale. theta' takes theta_2's support (the constant features stay
    constant: EM fills their holes with the constant).

    Safeguards. While theta' is not valid (not finite, or a covariance not positive
    definite on the support), a is halved towards -1, as in Varadhan & Roland's backtracking
    (a Cholesky factorisation, not an EM step, decides). The next iterate is theta_2 instead of
    F(theta') when EM fails on theta' or its merit is worse than theta_0's. With
    ``likelihood`` (no regularisation) the merit is ``_em_map``'s objective, the
    log-likelihood, which then never decreases from one iterate to the next (EM does not
    decrease it: L(F(theta')) >= L(theta') >= L(theta_0), L(theta_2) >= L(theta_0)).
    Regularised covariances make the map no likelihood ascent; the merit is then the residual
    ||F(theta) - theta||, which shrinks towards a fixed point of any convergent map.

    Stops when an EM step moves no mean (of a kept feature) or covariance entry by more than
    ``tol`` relative to the largest one; warns (ConvergenceWarning) if ``max_iter`` EM steps
    (E-step and M-step, the unit of work: three per SQUAREM iteration, two where the step is
    theta_2) are taken first. ``trace``, a list, receives the objective of each SQUAREM
    iterate. Returns (batch statistics, EM steps taken).
    """
    X, members = members.gathered(X)  # (each entry's row is completed for its class)
    return squarem(*_em_map(X, members, covariances, base, n_threads, higher), max_iter, tol,
                   likelihood, trace)


def squarem(step, mean, covs, support, max_iter, tol, likelihood=True, trace=None):
    """SQUAREM over EM's map ``step`` from the start ``mean``, ``covs``, ``support``, as
    ``em_full`` describes (the map of a batch in memory, or of a dask collection's partitions:
    LDA's and QDA's ``_dask_em``). Returns (batch statistics of the last step, EM steps taken)."""
    n_mean, mean_shape, covs_shape = mean.size, mean.shape, covs.shape
    sd = np.sqrt(np.diagonal(covs, axis1=1, axis2=2).mean(axis=0))
    sd[~(sd > 0)] = 1.0  # (a constant feature has no scale)
    unit = np.concatenate([np.tile(1.0 / sd, mean_shape[0]),
                           np.tile((1.0 / np.outer(sd, sd)).ravel(), covs_shape[0])])
    n_steps = 0

    def em_step(theta, support):
        nonlocal n_steps
        n_steps += 1
        mean, covs = theta[:n_mean].reshape(mean_shape), theta[n_mean:].reshape(covs_shape)
        new_mean, new_covs, new_support, stats, objective = step(mean, covs, support)
        # measured on the support: a constant feature's mean and variance are rounding noise
        # of its size, which would dominate the largest entry and stop EM at once
        keep = new_support.keep
        kept_covs = np.ix_(np.arange(len(covs)), keep, keep)
        change = max(np.abs(new_mean - mean)[:, keep].max(initial=0.0)
                     / max(np.abs(new_mean[:, keep]).max(initial=0.0), 1e-300),
                     np.abs(new_covs - covs)[kept_covs].max(initial=0.0)
                     / max(np.abs(new_covs[kept_covs]).max(initial=0.0), 1e-300))
        return _EMStep(np.concatenate([new_mean.ravel(), new_covs.ravel()]), new_support,
                       stats, objective, change)

    def norm(delta):  # inf where it overflows (a huge constant feature): no extrapolation then
        with np.errstate(over="ignore", invalid="ignore"):
            return float(np.linalg.norm(delta * unit))

    def valid(theta, support):
        return np.isfinite(theta).all() and _positive_definite(
            theta[n_mean:].reshape(covs_shape), support)

    theta = np.concatenate([mean.ravel(), covs.ravel()])
    while True:
        first = last = em_step(theta, support)
        if trace is not None:
            trace.append(first.objective)
        if first.change <= tol or n_steps >= max_iter:
            break
        second = last = em_step(first.theta, first.support)
        if second.change <= tol or n_steps >= max_iter:
            break
        r = first.theta - theta
        v = second.theta - first.theta - r
        norm_r, norm_v = norm(r), norm(v)
        alpha = min(-norm_r / norm_v, -1.0) if norm_v > 0 else -1.0
        extrapolated = theta - 2.0 * alpha * r + alpha * alpha * v
        # (theta_2 is valid: halve the way to it)
        while alpha < -1.0 and not valid(extrapolated, second.support):
            alpha = (alpha - 1.0) / 2.0 if alpha < -1.01 else -1.0
            extrapolated = theta - 2.0 * alpha * r + alpha * alpha * v
        theta, support = second.theta, second.support
        if alpha == -1.0:
            continue
        try:
            with np.errstate(all="ignore"):  # an extrapolation's overflow is refused below
                third = em_step(extrapolated, support)
        except (np.linalg.LinAlgError, ValueError):  # EM cannot take theta'
            third = None
        if third is not None and np.isfinite(third.theta).all() and (
                third.objective >= first.objective if likelihood
                else norm(third.theta - extrapolated) <= norm_r):
            theta, support, last = third.theta, third.support, third
        if last.change <= tol or n_steps >= max_iter:
            break
    if last.change > tol:
        warnings.warn(f"EM did not converge in max_iter={max_iter} iterations (relative change "
                      f"{last.change:.2g} > tol={tol:g}); increase max_iter.", ConvergenceWarning,
                      stacklevel=user_stacklevel())
    return last.stats, n_steps


# --------------------------------------------------------------------------------------------
# Conjugate priors of the Gaussian models.

# prior_strength="evidence" searches n0 (pseudo-observations) over this range: below it the prior
# weighs less than a ten-thousandth of one sample, above it it swamps the data of any usual set
EVIDENCE_STRENGTH_RANGE = (1e-4, 1e6)
MAX_STRENGTH = 1e100  # a pseudo-count: its sums with weights, and its products, stay in float64


class NormalInverseGamma(NamedTuple):
    """The Normal-Inverse-Gamma distribution of (mu, sigma^2), elementwise over arrays:
    sigma^2 ~ Scaled-Inv-chi^2(nu, var), i.e. Inv-Gamma(nu / 2, nu var / 2), and
    mu | sigma^2 ~ N(mean, sigma^2 / kappa) (Murphy 2007, section 6; Gelman et al., BDA3,
    section 3.3). ``kappa`` and ``nu`` are pseudo-counts: the prior weighs like kappa
    observations of the mean and nu of the variance."""

    kappa: np.ndarray
    mean: np.ndarray
    nu: np.ndarray
    var: np.ndarray

    def updated(self, n, mean, m2):
        """The posterior after observations of total weight n, mean ``mean`` and sum of squared
        deviations m2 (each observation's likelihood raised to its weight): kappa_n = kappa + n,
        nu_n = nu + n, mean_n = (kappa mean0 + n mean) / kappa_n and nu_n var_n = nu var + m2 +
        kappa n / kappa_n (mean - mean0)^2. n = 0 leaves it as it is."""
        kappa, nu = self.kappa + n, self.nu + n
        with np.errstate(over="ignore", invalid="ignore"):
            delta = mean - self.mean
            shift = self.kappa * (n / kappa)
            # (var (nu / nu_n): nu var underflows for a weak prior of a tiny variance)
            return NormalInverseGamma(kappa, self.mean + delta * (n / kappa), nu,
                                      self.var * (self.nu / nu)
                                      + (m2 + shift * delta * delta) / nu)

    def log_evidence(self, n, mean, m2):
        """log of the marginal likelihood of the observations (``updated``'s), elementwise:
        the log normaliser lgamma(nu/2) - (nu/2) log(nu var / 2) - log(kappa) / 2 of the
        posterior minus the prior's, less (n/2) log(2 pi), arranged so that no two large terms
        cancel (a strong prior's pseudo-counts dwarf n): with Q = nu var and Q_n = Q + D, D =
        m2 + kappa n / kappa_n (mean - mean0)^2, it is log_rising(nu/2, n/2) - log1p(n / kappa)
        / 2 - (n/2) log(pi Q_n) - (nu/2) log1p(D / Q). n = 0 gives 0. D / Q is formed as
        (D / var) / nu, and from logs where it is beyond float64: Q itself may underflow (a
        weak prior of a tiny variance) where Q_n does not."""
        q0 = self.nu * self.var
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            delta = mean - self.mean
            d = m2 + self.kappa * (n / (self.kappa + n)) * delta * delta
            ratio = d / self.var / self.nu
            tail = np.where(np.isinf(ratio), np.log(d) - np.log(self.var) - np.log(self.nu),
                            np.log1p(ratio))
            return (log_rising(self.nu / 2, n / 2) - 0.5 * np.log1p(n / self.kappa)
                    - 0.5 * n * np.log(np.pi * (q0 + d)) - 0.5 * self.nu * tail)

    def predictive(self):
        """The predictive density of one more observation, a Student-t with nu degrees of
        freedom, location ``mean`` and squared scale var (1 + 1/kappa), as the diagonal kernel's
        DIAG_STUDENT_T tables (A, S, B, P): log p(x) = B + P log(1 + (S (x - A))^2) with S = 1 /
        sqrt(nu scale^2), P = -(nu + 1)/2 and B = lgamma((nu+1)/2) - lgamma(nu/2) + log(S) -
        log(pi)/2."""
        with np.errstate(over="ignore", divide="ignore"):
            # (var (nu + nu / kappa): nu var underflows for a weak prior of a tiny variance)
            S = 1.0 / np.sqrt(self.var * (self.nu + self.nu / self.kappa))
            B = log_rising(self.nu / 2, 0.5) + np.log(S) - 0.5 * np.log(np.pi)
        return self.mean, S, B, -(self.nu + 1) / 2

    def draw(self, rng):
        """(mu, sigma^2) drawn from the distribution (inf where a chi^2 of nu well below 1
        underflows to 0)."""
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            var = self.nu * self.var / rng.chisquare(self.nu)
            return rng.normal(self.mean, np.sqrt(var / self.kappa)), var


def check_prior_vector(model, name, n_features, positive):
    """A prior hyperparameter of one value per feature (``name`` of ``model``): None, or an
    array-like of n_features finite numbers (``positive``: each above 0), as a read-only
    float64 copy."""
    value = getattr(model, name)
    if value is None:
        return None
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise invalid_parameter(model, name, "None or an array-like of floats") from None
    if array.shape != (n_features,):
        raise InvalidParameterError(f"{name} must have shape ({n_features},), one value a "
                                    f"feature; got shape {array.shape}.")
    if not np.isfinite(array).all():
        raise InvalidParameterError(f"{name} must be finite.")
    if positive and not (array > 0).all():
        raise InvalidParameterError(f"{name} must hold positive numbers.")
    array.flags.writeable = False
    return array


def check_prior_strength(model, n_features):
    """``prior_strength``: a number n0 in (0, MAX_STRENGTH], a pair (kappa0, nu0) of them with
    nu0 > n_features - 1 (the degrees of freedom of an Inverse-Wishart on n_features
    dimensions; an Inverse-Gamma's for one), or "evidence"; as a float, a tuple or the string."""
    value = model.prior_strength
    allowed = (f"a float in the range (0, {MAX_STRENGTH:g}], a pair (kappa0, nu0) of them or "
               '"evidence"')
    if isinstance(value, str):
        if plain_choice(value, ("evidence",)) is None:
            raise invalid_parameter(model, "prior_strength", allowed)
        return "evidence"

    def real(v):
        return real_in(v, 0.0, MAX_STRENGTH, above=True) is not None

    if real(value):
        return float(value)
    if not (isinstance(value, (tuple, list, np.ndarray)) and np.ndim(value) == 1
            and len(value) == 2 and all(map(real, value))):
        raise invalid_parameter(model, "prior_strength", allowed)
    kappa0, nu0 = map(float, value)
    if not nu0 > n_features - 1:
        raise InvalidParameterError(f"prior_strength=(kappa0, nu0) needs nu0 > n_features - 1 "
                                    f"= {n_features - 1} (the Inverse-Wishart's degrees of "
                                    f"freedom); got nu0={nu0:g}.")
    return kappa0, nu0