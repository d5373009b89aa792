"""Gaussian discriminant analysis: LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis.

Both keep additive per-class statistics -- the weight, the mean and the scatter matrix about it
(pooled over the classes for LDA) -- combined exactly across batches. Missing values (NaN) are
marginalised: a row is scored by the Gaussian of its observed sub-vector, and fitting estimates
means and covariances by EM under missing-at-random (accelerated by SQUAREM, ``_gaussian``). A
singular covariance whose null directions the class means share (constant or collinear features)
gives the Gaussian on its support (``_gaussian.support_of``): constant features are left out by
index, the other null directions by a basis of the covariance's range.

Both have a conjugate Normal-Inverse-Wishart prior (``_bayes``): ``predictive=True`` scores with
the posterior predictive Student t, ``log_evidence_`` is the marginal likelihood,
``prior_strength="evidence"`` maximises it, and ``sample_posterior`` draws plug-in models; all
from the same statistics (``_niw_posterior``).

Where things are (on the declared state of ``_state``): the statistics are declared by
``_fields`` and accumulated, merged and checked by ``_add``, ``_combine`` and ``_agree`` of
``_BaseDiscriminant`` (for both models, and LDA's diagonal kinds); everything derived from them --
covariances, whitening, the linear form, the discriminant directions -- comes from one pure
``_derive`` per model, as a ``_LDAParams`` or ``_QDAParams``; ``_score``, ``decision_function``
and ``transform`` read only those parameters, of one snapshot.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import solve_triangular

from ._base import (
    OUT_JLL,
    OUT_LOG_PROBA,
    OUT_PROBA,
    BaseClassifier,
    MatrixLike,
    check_class_weight,
    check_priors,
    class_prior,
    maps_dask,
    spread,
)
from ._bayes import Conjugate, log_rising, maximise
from ._core import checks as _checks
from ._core import jll as _jll
from ._gaussian import (
    DIAG_GAUSSIAN,
    EVIDENCE_STRENGTH_RANGE,
    LOG_2PI,
    Support,
    combine_full,
    combine_moments,
    completed_moments,
    constant,
    diagonal_moments,
    diagonal_tables,
    em_full,
    em_start,
    em_update,
    full_jll_missing,
    full_moments,
    mean_spread,
    check_prior_strength,
    check_prior_vector,
    ledoit_wolf,
    observed_terms,
    score_diagonal,
    singular,
    squarem,
    support_of,
    whitening,
    without_noise,
)
from ._state import (CLASSES, FEATURES, Field, Fitted, fitted_attribute, float64_parameter,
                     parameter, readonly)
from ._validation import (
    InvalidParameterError,
    check_bool,
    check_is_fitted,
    get_feature_names,
    int_in,
    invalid_parameter,
    plain_choice,
    real_in,
)

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]

COVARIANCES = ("full", "diagonal", "spherical", "identity")
ROW_BLOCK = 2048  # rows per BLAS product when scoring full covariances (fits in L2)
MAX_ABS = 1e150  # the largest |x| fit and predict accept: beyond, squared deviations overflow
# The largest |class mean| a model file may hold: twice any value of accepted data (room for
# rounding and EM's imputations), as far as the scoring arithmetic is known not to overflow.
MAX_MEAN = 2 * MAX_ABS
STATS_RTOL = 1e-9  # relative tolerance of the checks of a model file's statistics

FULL_FIELDS = (
    Field("class_count_", (CLASSES,)),
    Field("mean", (CLASSES, FEATURES), nonneg=False, upper=MAX_MEAN),
    Field("scatter", (CLASSES, FEATURES, FEATURES), nonneg=False, upper=np.inf),
)
# third and fourth co-moments, kept only for Ledoit-Wolf shrinkage (LDA's shrinkage="auto")
HIGHER_FIELDS = (
    Field("third", (CLASSES, FEATURES, FEATURES), nonneg=False, upper=np.inf),
    Field("fourth", (CLASSES, FEATURES, FEATURES), nonneg=False, upper=np.inf),
)
DIAGONAL_FIELDS = (
    Field("class_count_", (CLASSES,)),
    Field("observed_count", (CLASSES, FEATURES)),
    Field("mean", (CLASSES, FEATURES), nonneg=False, upper=MAX_MEAN),
    Field("m2", (CLASSES, FEATURES), upper=np.inf),
)


# ---------------------------------------------------------------------------- parameters
class _Full(NamedTuple):
    """What full-covariance scoring reads: the whitening of each covariance on the support (of
    rank r) for the block-wise scorer of complete rows, and the precisions of the kept features
    (k of them) for rows with missing values."""

    shift: np.ndarray  # (d,) the weighted mean of all data: rows are centred on it
    W: np.ndarray  # (d, G r) whitening of each covariance, side by side
    offset: np.ndarray  # (C, r) each class mean, centred and whitened
    block: np.ndarray  # (C,) intp: the covariance of each class
    const: np.ndarray  # (C,) log prior - (r log 2 pi + log pseudo-det) / 2
    means: np.ndarray  # (C, k) class means of the kept features (the missing-value path)
    precisions: np.ndarray | None  # (G, k, k); None if the kept features are collinear
    logdets: np.ndarray  # (G,)
    log_prior: np.ndarray  # (C,)
    keep: np.ndarray  # (k,) intp: the features that are not constant


# ---------------------------------------------------------------------------- the conjugate prior

class _Posterior(NamedTuple):
    """A Normal-Inverse-Wishart posterior on the features ``keep`` (k of them): the class means
    mu_c | Sigma_g ~ N(mean[c], Sigma_g / kappa[c]) and Sigma_g ~ IW(scale[g], nu[g]), g =
    block[c] (one group for LDA's shared covariance, one a class for QDA); ``prior`` is the
    (m0, Psi0, kappa0, nu0, nu0 - (k - 1)) it was updated from (the last exact for a small n0,
    whose digits nu0 = n0 + k - 1 rounds away), ``count`` the class weights and ``spread`` the
    scale[g] - Psi0 the data added (kept apart: a strong prior's Psi0 swamps it in scale)."""

    keep: np.ndarray  # (k,) intp
    mean: np.ndarray  # (C, k)
    kappa: np.ndarray  # (C,)
    scale: np.ndarray  # (G, k, k)
    nu: np.ndarray  # (G,)
    block: np.ndarray  # (C,) intp
    prior: tuple
    count: np.ndarray  # (C,)
    spread: np.ndarray  # (G, k, k)


def _prior_moments(stats, hyper):
    """The prior's features, location and typical covariance on them: ``prior_mean`` (default:
    the weighted mean of all the data) and ``prior_covariance`` (default: each feature's variance
    in all the data, classes together, on the features that are not constant in all of it: a
    constant feature is left out, as the plug-in model leaves it out)."""
    weight, mean = stats["class_count_"], stats["mean"]
    xbar = _shift(weight, mean)
    m0 = xbar if hyper["prior_mean"] is None else hyper["prior_mean"]
    cov0 = hyper["prior_covariance"]
    if cov0 is None:
        dev = mean - xbar
        scattered = np.diagonal(stats["scatter"], axis1=1, axis2=2).sum(axis=0)
        with np.errstate(over="ignore", invalid="ignore"):  # (_niw_posterior refuses inf)
            variances = (scattered + weight @ (dev * dev)) / weight.sum()
        present = mean[weight > 0]
        sizes = np.abs(present).max(axis=0)
        flat = constant(variances, sizes)
        # a feature left out as constant to its rounding whose class means differ beyond the
        # spread within the classes would leave out what separates them (support_of refuses
        # it for the plug-in; a feature of too small a variance is support_of's to refuse)
        gap, slack = mean_spread(present, scattered / weight.sum(), sizes)
        separating = np.flatnonzero(constant(variances, sizes, least=0.0) & (gap > slack))
        if len(separating):
            j = separating[0]
            raise ValueError(f"Feature {j} is constant in all the data to the rounding of its "
                             f"values (about {sizes[j]:.3g}), but its class means differ by "
                             f"{gap[j]:.3g}: the default prior leaves constant features out, "
                             "and this one separates the classes. Center X (subtract each "
                             "feature's mean) or give prior_covariance.")
        keep = np.flatnonzero(~flat)
        cov0 = np.diag(variances[keep])
    else:
        keep = np.arange(len(m0))
        cov0 = np.diag(cov0) if cov0.ndim == 1 else cov0
    return keep, m0[keep], cov0


# where some strengths have no evidence in float64, the search starts from a grid of this many
EVIDENCE_GRID = 41
# the posterior's scale matrix or the evidence cannot be computed in float64
ILL_CONDITIONED = (
    "The posterior's scale matrix is too ill-conditioned for float64: its spread along the "
    "class means (from the prior's mean) dwarfs the spread within the classes, or the prior's "
    "covariance is far from the data's. Raise prior_covariance or prior_strength, or center and "
    "scale X near the prior.")


def _niw_posterior(stats, hyper, strength, shared):
    """The posterior of the prior of ``prior_strength`` ``strength`` (n0, or (kappa0, nu0))
    given the statistics (Murphy 2007; for ``shared``, one Sigma for all classes, each
    class mean with its own Gaussian given it): kappa_c = kappa0 + n_c, m_c = (kappa0 m0 + n_c
    xbar_c) / kappa_c, and per group Psi = Psi0 + sum_c [S_c + kappa0 n_c / kappa_c (xbar_c - m0)
    (xbar_c - m0)^T], nu = nu0 + sum_c n_c, the sums over the group's classes."""
    keep, m0, cov0 = _prior_moments(stats, hyper)
    k = len(keep)
    kappa0, nu0 = (strength, strength + (k - 1)) if np.ndim(strength) == 0 else strength
    excess = strength if np.ndim(strength) == 0 else nu0 - (k - 1)
    n = stats["class_count_"]
    n_classes = len(n)
    xbar = stats["mean"][:, keep]
    with np.errstate(over="ignore", invalid="ignore"):
        psi0 = nu0 * cov0
        kappa = kappa0 + n
        mean = (kappa0 * m0 + n[:, None] * xbar) / kappa[:, None]
        dev = xbar - m0
        spread = (stats["scatter"][np.ix_(range(n_classes), keep, keep)]
                  + (kappa0 * n / kappa)[:, None, None] * dev[:, :, None] * dev[:, None, :])
        if shared:
            spread, nu = spread.sum(axis=0)[None], np.array([nu0 + n.sum()])
            block = np.zeros(n_classes, np.intp)
        else:
            nu, block = nu0 + n, np.arange(n_classes)
        scale = psi0 + spread
    if not (np.isfinite(scale).all() and np.isfinite(mean).all()):
        raise ValueError("The posterior's scale matrix overflows float64: lower prior_strength "
                         "or prior_covariance, or rescale X.")
    try:  # positive definite, as Psi0 is, but perhaps not in float64
        np.linalg.cholesky(scale)
    except np.linalg.LinAlgError:
        raise ValueError(ILL_CONDITIONED) from None
    return _Posterior(keep, mean, kappa, scale, nu, block, (m0, psi0, kappa0, nu0, excess), n,
                      spread)


def _logdet(spd):
    return 2.0 * float(np.log(np.diag(np.linalg.cholesky(spd))).sum())


def _niw_log_evidence(post):
    """log P(X | y) under the prior (Murphy 2007, and its shared-Sigma form): with
    N the total weight, k features, a sum over the groups g and classes c,
    -N k/2 log pi + sum_g [log Gamma_k(nu_g/2) - log Gamma_k(nu0/2) + nu0/2 log|Psi0|
    - nu_g/2 log|Psi_g|] + k/2 sum_c log(kappa0 / kappa_c). (A group without data adds 0.)
    Arranged so that no two large terms cancel (a strong prior's pseudo-counts dwarf the data):
    with n_g = nu_g - nu0 and Psi_g = Psi0 + D_g, a group adds sum_{i<k} log_rising((nu0 -
    i)/2, n_g/2) - n_g/2 log|Psi_g| - nu0/2 log|I + L^-1 D_g L^-T| (Psi0 = L L^T; the last
    determinant from the eigenvalues e, as sum log1p(e)), and a class -k/2 log1p(n_c / kappa0).
    A ValueError (ILL_CONDITIONED) where float64 cannot give it: e below -1 (D_g is positive
    semi-definite; its rounding is not), a factorization that fails, a result not finite."""
    m0, psi0, kappa0, nu0, excess = post.prior
    k = len(post.keep)
    if k == 0:
        return 0.0
    value = -0.5 * k * (post.count.sum() * np.log(np.pi) + np.log1p(post.count / kappa0).sum())
    group_count = np.bincount(post.block, weights=post.count, minlength=len(post.nu))
    with np.errstate(invalid="ignore", over="ignore"):
        try:
            L = np.linalg.cholesky(psi0)
            for n, scale, data in zip(group_count, post.scale, post.spread):
                whitened = solve_triangular(L, solve_triangular(L, data, lower=True).T,
                                            lower=True)
                added = np.linalg.eigvalsh((whitened + whitened.T) / 2)
                # nu0 - i as excess + (k - 1 - i): exact at i = k - 1 for a small n0
                value += (log_rising((excess + np.arange(k - 1, -1, -1)) / 2, n / 2).sum()
                          - 0.5 * n * _logdet(scale) - 0.5 * nu0 * np.log1p(added).sum())
        except np.linalg.LinAlgError:
            raise ValueError(ILL_CONDITIONED) from None
    if not np.isfinite(value):
        raise ValueError(ILL_CONDITIONED)
    return float(value)


def _draw_niw(post, rng):
    """One draw of the covariances (G, k, k) and class means (C, k) from the posterior:
    Sigma_g ~ IW(Psi_g, nu_g) by the Bartlett decomposition of its inverse (Sigma_g^-1 = L A
    A^T L^T ~ Wishart(Psi_g^-1, nu_g) with L = U^-T, Psi_g = U U^T, A lower triangular with
    A_ii^2 ~ chi2(nu_g - i), i = 0..k-1, and standard normals below; so Sigma_g = B B^T, B =
    U A^-T), then mu_c = m_c + B z / sqrt(kappa_c), z standard normal. A group without data
    (QDA's class without samples) is not drawn: its draw would not be used, and with nu0
    near k - 1 a chi^2 of it underflows to 0, making A singular; its covariance is 0."""
    k = len(post.keep)
    factors = np.zeros_like(post.scale)
    lower = np.tril_indices(k, -1)
    used = np.bincount(post.block, weights=post.count, minlength=len(post.nu)) > 0
    for g, (scale, nu) in enumerate(zip(post.scale, post.nu)):
        if not used[g]:
            continue
        A = np.zeros((k, k))
        A[lower] = rng.standard_normal(len(lower[0]))
        chi2 = rng.chisquare(nu - np.arange(k))
        if not (chi2 > 0).all():
            raise _draw_beyond_float64(nu - k + 1)
        A[np.diag_indices(k)] = np.sqrt(chi2)
        factors[g] = np.linalg.cholesky(scale) @ np.linalg.inv(A).T
    with np.errstate(over="ignore", invalid="ignore"):
        covs = factors @ factors.transpose(0, 2, 1)
        z = rng.standard_normal(post.mean.shape)
        means = post.mean + np.einsum("cij,cj->ci", factors[post.block], z) / np.sqrt(
            post.kappa)[:, None]
    if not (np.isfinite(covs).all() and np.isfinite(means).all()):
        raise _draw_beyond_float64(post.nu.min() - k + 1)
    return (covs + covs.transpose(0, 2, 1)) / 2, means


def _draw_beyond_float64(dof):
    return ValueError(
        f"A draw from the posterior is beyond float64: with nu - k + 1 = {dof:.3g} degrees of "
        "freedom (prior_strength plus the sample weight), its chi-square draws underflow to 0 "
        "and the drawn covariance is unbounded. Raise prior_strength or the sample weights.")


class _Predictive(NamedTuple):
    """What predictive scoring reads. Class c's posterior predictive is the multivariate Student
    t of ``dof[c]`` = nu_g - k + 1 degrees of freedom, location m_c and scale ``factor[c]`` Psi_g,
    factor = (kappa_c + 1) / (kappa_c dof) (Murphy 2007). ``full`` whitens each Psi_g
    (its const is 0: the block scorer gives -||z - offset_c||^2 / 2 = -q_c / 2, with q_c the
    distance under Psi_g), so that a complete row's jll is ``const[c] + slope[c] log1p(rate[c]
    q_c)``, rate = 1 / (factor dof), slope = -(dof + k) / 2.

    With one shared Psi (LDA), ``linear`` = [W | -2 rate_c W offset_c] (d, k + C) gives z and
    the cross terms of rate_c q_c = rate_c ||z||^2 - 2 rate_c z.offset_c + ``offset_term[c]``
    in one product (the posteriors' route, see ``_shared_t``)."""

    full: _Full
    dof: np.ndarray  # (C,)
    factor: np.ndarray  # (C,)
    rate: np.ndarray  # (C,)
    slope: np.ndarray  # (C,)
    const: np.ndarray  # (C,) log prior + the log normaliser of the t on the k features
    log_prior: np.ndarray  # (C,)
    linear: np.ndarray | None  # (d, k + C), one shared Psi only
    offset_term: np.ndarray  # (C,) rate_c ||offset_c||^2


def _t_log_density(pred, log_q, logdet, n_observed):
    """log P(c) + the log density of the t of class c on n observed features (rows, C), from the
    log distances ``log_q`` and log-determinants ``logdet`` of the observed sub-vectors under
    Psi_g (``observed_terms(..., log_distance=True)``): the marginal of a t on a sub-vector is
    the t of the same dof, the sub-vector of the location and the sub-matrix of the scale. In
    log q, a row too far for its distance to be a float64 still has its density."""
    nu, factor = pred.dof, pred.factor
    n = np.asarray(n_observed, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore"):  # -inf log prior plus finite terms
        return (pred.log_prior + log_rising(nu / 2, n / 2)
                - 0.5 * n * np.log(np.pi * nu * factor) - 0.5 * logdet
                - (nu + n) / 2 * np.logaddexp(0.0, log_q + np.log(pred.rate)))


def _predictive(post, class_count, log_prior, n_features):
    """The ``_Predictive`` of a posterior (on the features it keeps: the others carry no
    information)."""
    keep, k = post.keep, len(post.keep)
    n_classes, n_groups = len(post.kappa), len(post.nu)
    support = Support(keep, None)
    # dof = nu - k + 1 = (nu0 - k + 1) + the group's weight, formed from n0 itself (nu0 rounds
    # a small n0 away)
    group_count = np.bincount(post.block, weights=post.count, minlength=n_groups)
    dof = post.prior[4] + group_count[post.block]
    scale = np.zeros((n_groups, n_features, n_features))
    scale[np.ix_(range(n_groups), keep, keep)] = post.scale
    mean = np.zeros((n_classes, n_features))
    mean[:, keep] = post.mean
    full = _whitened(class_count, mean, whitening(scale, support), post.block, log_prior, support)
    full = full._replace(const=np.zeros(n_classes))
    # statistics beyond float64 (a factor or rate of 0 or inf): _check_derived refuses what
    # follows from them, with the error that says so
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        factor = (post.kappa + 1) / (post.kappa * dof)
        rate = 1.0 / (factor * dof)
        linear = None if n_groups > 1 else np.hstack([full.W,
                                                      full.W @ (full.offset.T * (-2 * rate))])
        pred = _Predictive(full, dof, factor, rate, -(dof + k) / 2, np.zeros(n_classes),
                           log_prior, linear,
                           rate * np.einsum("ij,ij->i", full.offset, full.offset))
        const = _t_log_density(pred, np.full((1, n_classes), -np.inf),
                               full.logdets[post.block][None], [k])[0]
    return pred._replace(const=const)


def _sample_t(post, pred, mean, y_idx, rng):
    """Draws from the classes' posterior predictive t (``pred`` of ``post``): m_c + sqrt(factor_c
    dof_c / g) L z, Psi = L L^T, z standard normal, g ~ chi2(dof_c); a feature the prior leaves
    out keeps its constant, ``mean``'s."""
    X = mean[y_idx]
    dof = pred.dof[y_idx]
    z = rng.standard_normal((len(y_idx), len(post.keep)))
    radius = np.sqrt(pred.factor[y_idx] * dof / rng.chisquare(dof))
    group = post.block[y_idx]
    for g, scale in enumerate(post.scale):
        rows = np.flatnonzero(group == g)
        X[np.ix_(rows, post.keep)] = (post.mean[y_idx[rows]] + radius[rows, None]
                                      * (z[rows] @ np.linalg.cholesky(scale).T))
    return X


def _t_finish(distances, pred):
    """The t's jll from rate_c q_c, in place."""
    np.log1p(distances, out=distances)  # (a -inf log prior in const stays -inf)
    distances *= pred.slope
    distances += pred.const


def _shared_t(pred, X, kind, out):
    """LDA's posteriors (``kind`` is not the jll) under its shared scale, into ``out``, by
    blocks of rows: z and the cross terms of rate_c q_c from one BLAS product by ``linear``
    (see ``_Predictive``), then ||z||^2, the t and the normalisation in one pass in C
    (``shared_t_finish``) while the block is in cache. The cost of the plug-in's quadratic form
    with C more columns in the product, and no pass per class. The expansion loses
    ||offset_c||^2 eps to rounding, negligible next to the distances that matter unless the
    classes lie millions of standard deviations apart (the posteriors are then 0 and 1 anyway),
    which is why the joint log-likelihood takes the direct form, as the plug-in's posteriors
    take the linear form. The finishing pass runs on one thread, as ``_score_full``'s does."""
    failed = 0
    for start in range(0, X.shape[0], ROW_BLOCK):
        Y = (X[start:start + ROW_BLOCK] - pred.full.shift) @ pred.linear
        failed += _jll.shared_t_finish(Y, pred.rate, pred.offset_term, pred.slope, pred.const,
                                       kind, out[start:start + ROW_BLOCK], 1)
    return failed


def _score_predictive(pred, X, kind, out, has_nan, n_threads):
    """Rows scored by their posterior predictive t: complete ones from the block scorer's
    distances, or for LDA's posteriors ``_shared_t`` (one log1p a class either way), rows with
    missing values by the t of their observed sub-vector (``observed_terms``, each pattern's
    sub-matrices factored once), finished apart."""
    full = pred.full
    if pred.linear is not None and kind != OUT_JLL:
        failed = _shared_t(pred, X, kind, out)
        rows = np.flatnonzero(np.isnan(X).any(axis=1)) if has_nan else None
    else:
        jll = out if out.dtype == np.float64 else np.empty(out.shape)
        failed = _score_full(full, X, OUT_JLL, jll)  # -q / 2 (NaN on rows with missing values)
        jll *= -2.0 * pred.rate
        _t_finish(jll, pred)
        # rows with missing values, and rows so far that q overflowed (a finite density,
        # -inf here), are scored apart
        rows = np.flatnonzero((~np.isfinite(jll) & np.isfinite(pred.const)).any(axis=1))
        failed += _jll.normalize_rows_inplace(jll, kind, n_threads)
        if jll is not out:
            out[...] = jll
    if rows is not None and len(rows):
        X_rows = X[rows] if len(full.keep) == X.shape[1] else X[np.ix_(rows, full.keep)]
        jll = _t_log_density(pred, *observed_terms(X_rows, full.means, full.precisions,
                                                   full.logdets, full.block, n_threads,
                                                   log_distance=True))
        failed += _jll.normalize_rows_inplace(jll, kind, 1)
        out[rows] = jll
    return failed


def _check_prior_covariance(model, n_features):
    """None, positive variances (n_features,) or a symmetric positive definite matrix."""
    value = model.prior_covariance
    if value is None:
        return None
    try:
        cov = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise invalid_parameter(model, "prior_covariance", "None or an array-like of floats") \
            from None
    if cov.shape not in ((n_features,), (n_features, n_features)):
        raise InvalidParameterError(f"prior_covariance must have shape ({n_features}, "
                                    f"{n_features}) or ({n_features},) (a diagonal); got shape "
                                    f"{cov.shape}.")
    if not np.isfinite(cov).all():
        raise InvalidParameterError("prior_covariance must be finite.")
    if cov.ndim == 1:
        if not (cov > 0).all():
            raise InvalidParameterError(
                "prior_covariance, a diagonal, must hold positive variances.")
    else:
        if not (np.abs(cov - cov.T) <= STATS_RTOL * np.abs(cov).max()).all():
            raise InvalidParameterError("prior_covariance must be symmetric.")
        cov = (cov + cov.T) / 2
        try:
            np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise InvalidParameterError("prior_covariance must be positive definite.") from None
    cov.flags.writeable = False
    return cov


def prior_strength(model, fitted):
    """The prior strength the posterior uses: the hyperparameter, or for "evidence" the n0 in
    EVIDENCE_STRENGTH_RANGE maximising the log evidence, computed once per snapshot."""
    model._check_conjugate(fitted.hyper, AttributeError)
    value = fitted.hyper["prior_strength"]
    if not isinstance(value, str):
        return value
    chosen = fitted.memo.get("chosen_strength")
    if chosen is None:
        with fitted.lock:  # (statistics are read whole, not while a batch is added)
            stats = dict(fitted.stats)
        holes = []

        def evidence(n0):  # a strength float64 cannot evaluate is no candidate
            try:
                return _niw_log_evidence(_niw_posterior(stats, fitted.hyper, n0, model._shared))
            except ValueError:
                holes.append(n0)
                return -np.inf

        with np.errstate(invalid="ignore"):  # (Brent's steps between -inf values)
            chosen = maximise(evidence, EVIDENCE_STRENGTH_RANGE)
            if holes:  # the search met strengths without an evidence, which mislead it: the
                # best of a grid over the range, refined between its neighbours
                grid = np.geomspace(*EVIDENCE_STRENGTH_RANGE, EVIDENCE_GRID)
                values = np.array([evidence(n0) for n0 in grid])
                best = int(np.argmax(values))
                if values[best] == -np.inf:
                    raise ValueError(ILL_CONDITIONED)
                chosen = maximise(evidence, (grid[max(best - 1, 0)],
                                             grid[min(best + 1, len(grid) - 1)]))
                if not evidence(chosen) >= values[best]:
                    chosen = float(grid[best])
        chosen = fitted.memo.setdefault("chosen_strength", chosen)
    return chosen


class _LDAParams(NamedTuple):
    priors: np.ndarray
    log_prior: np.ndarray
    means: np.ndarray  # diagonal kinds: a class's unobserved features at the overall mean
    covariance: np.ndarray  # (d, d)
    # the linear form of the posteriors, one row per class, from the class means' deviations
    # from xbar: its terms stay the size of the classes' differences, so data far from the
    # origin does not cancel them away (P m_c and m_c P m_c / 2 grow with |m_c|^2)
    coef_all: np.ndarray  # (C, d)
    intercept_all: np.ndarray  # (C,)
    coef: np.ndarray  # coef_: one row for two classes
    intercept: np.ndarray
    xbar: np.ndarray
    scalings: np.ndarray
    explained_variance_ratio: np.ndarray
    n_components: int
    full: _Full | None  # covariance="full"
    diagonal: tuple | None  # diagonal_tables() of the other kinds
    # whether the linear forms of any accepted X (|x| <= MAX_ABS) stay far within float64: then
    # scoring skips the overflow checks (they cost a third of a single-row predict_proba)
    linear_safe: bool
    support: Support
    predictive: _Predictive | None  # predictive=True


def _linear_safe(*forms):
    """Whether ``x @ coef.T + intercept`` stays far within float64 for every (coef, intercept)
    of ``forms`` and |x| <= MAX_ABS."""
    bounds = [MAX_ABS * np.abs(coef).sum(axis=1).max(initial=0.0)
              + np.abs(intercept[np.isfinite(intercept)]).max(initial=0.0)
              for coef, intercept in forms]
    return bool(max(bounds) < 1e300)


class _QDAParams(NamedTuple):
    priors: np.ndarray
    log_prior: np.ndarray
    means: np.ndarray
    covariance: np.ndarray  # (C, d, d)
    full: _Full
    support: Support
    predictive: _Predictive | None  # predictive=True


# Derived arrays that are -inf where a class has prior 0 (and LDA's two-class intercept_, a
# difference of two of them, +inf too); every other one must be finite.
MAY_BE_MINUS_INF = {"log_prior", "intercept_all", "const", "bias"}
MAY_BE_INF = {"intercept"}


def _check_derived(params):
    """Refuse parameters that overflowed (statistics beyond what float64 scoring can use), so
    that no NaN is ever published; then make them read-only (fitted attributes show them)."""
    if hasattr(params, "_fields"):
        params = params._asdict()
    else:  # diagonal_tables()
        params = dict(zip(("A", "S", "B", "log_prior", "bias", "model"), params))
    for name, value in params.items():
        if isinstance(value, tuple):
            _check_derived(value)
        elif isinstance(value, np.ndarray):
            # one reduction an array (a fit's fixed cost): a sum is NaN for NaN or inf - inf,
            # infinite for any inf; a max is NaN for NaN, +inf for +inf
            if name in MAY_BE_INF:
                bad = np.isnan(value.max(initial=-np.inf))
            elif name in MAY_BE_MINUS_INF:
                top = value.max(initial=-np.inf)
                bad = np.isnan(top) or top == np.inf
            else:
                bad = not np.isfinite(value.sum())
            if bad:
                raise ValueError(f"The model's {name} overflows float64: the statistics are "
                                 "beyond what can be scored (rescale X or sample_weight).")
            value.flags.writeable = False


def _shift(class_count, mean):
    """The weighted mean of all data: rows are centred on it before the products."""
    w = class_count
    return (w @ mean) / w.sum() if w.sum() > 0 else np.zeros(mean.shape[1])


def _whitened(class_count, mean, whitened, block, log_prior, support):
    """The block-wise scorer's and the missing-value path's arrays, from ``whitening``'s
    (W, precisions, logdets) on ``support``."""
    W, precisions, logdets = whitened
    rank = support.rank
    shift = _shift(class_count, mean)
    offset = np.empty((len(block), rank))
    for c, g in enumerate(block):
        offset[c] = (mean[c] - shift) @ W[:, g * rank:(g + 1) * rank]
    with np.errstate(invalid="ignore"):
        const = log_prior - 0.5 * (rank * LOG_2PI + logdets[block])
    block = np.ascontiguousarray(block, dtype=np.intp)
    return _Full(shift, W, offset, block, const, readonly(mean[:, support.keep]), precisions,
                 logdets, log_prior, support.keep)


def _check_finite(cov):
    if not np.isfinite(cov).all():
        raise ValueError("The covariance overflows float64 (sums of weights times squared "
                         "deviations beyond about 1e308): rescale X or sample_weight.")


def _collinear_missing(regulariser):
    return ValueError(
        "The covariance is singular along a combination of several features (collinear "
        "features, such as one that is the sum of others), and rows with missing values are "
        "not supported then (the Gaussian of their observed values would need a "
        f"pseudo-inverse for each pattern of missing values). Set {regulariser}, remove the "
        "collinear features, or impute the missing values."
    )


def _full_stats(stats):
    """The declared statistics as the tuple ``_gaussian``'s full-covariance functions take."""
    return (stats["class_count_"], stats["mean"], stats["scatter"], stats.get("third"),
            stats.get("fourth"))


# ---------------------------------------------------------------------------- scoring
def _score_full(full, X, kind, out, refuse_nan=False):
    """Complete rows: whitened by BLAS products in blocks of rows, then finished in C (with
    ``refuse_nan``, a row that held NaN when multiplied is the error that X changed).

    The finishing pass runs on one thread: alternating a threaded BLAS product and an OpenMP
    region block after block puts both thread pools, spinning, on the same cores (measured
    6-7x slower on two cores). The products take most of the time and use BLAS's threads."""
    shift, W, offset, block, const = full.shift, full.W, full.offset, full.block, full.const
    if W.shape[1] == 0:  # no feature varies: every row scores the class constants (the kernel
        # takes whitened rows of at least one coordinate)
        jll = np.repeat(const[None, :], X.shape[0], axis=0)
        failed = _jll.normalize_rows_inplace(jll, kind, 1)
        out[...] = jll
        return failed
    n_rows = min(ROW_BLOCK, X.shape[0])
    centred = np.empty((n_rows, X.shape[1]))
    Z = np.empty((n_rows, W.shape[1]))
    failed = 0
    for start in range(0, X.shape[0], ROW_BLOCK):
        stop = min(start + ROW_BLOCK, X.shape[0])
        m = stop - start
        np.subtract(X[start:stop], shift, out=centred[:m])
        np.matmul(centred[:m], W, out=Z[:m])
        failed += _jll.quadratic_finish(Z[:m], offset, block, const, kind, out[start:stop], 1,
                                        refuse_nan)
    return failed


def _check_rows_scored(out, kind):
    """A row of ``out`` that NumPy's product made NaN (normalised, all zeros: the finishing
    kernels leave NaN rows to be scored apart as rows with missing values) means X changed
    during the call: a row read as complete held NaN when multiplied. Fastgen's ValueError
    that X changed, rather than such rows (no valid row is all zeros: one of no class's
    support gets the uniform posterior). For a batch with missing values or a predictive
    model; a batch without is checked by the finishing kernels (``refuse_nan``), for free."""
    if kind == OUT_PROBA:
        bad = not (out.sum(axis=1) > 0).all()
    elif kind == OUT_LOG_PROBA:
        bad = not (out.max(axis=1, initial=-np.inf) > -np.inf).all() if out.shape[1] else False
    else:
        bad = np.isnan(out).any()
    if bad:
        _checks.raise_x_changed()


def _score_missing(full, X, kind, out, n_threads, regulariser):
    """Rows with missing values: the Gaussian of their observed sub-vector of the kept features
    (overwritten in out); constant features carry no information, observed or not."""
    if full.precisions is None:
        raise _collinear_missing(regulariser)
    rows = np.flatnonzero(np.isnan(X).any(axis=1))
    # gathering rows only, where every feature is kept, costs an eighth of gathering both
    X_rows = X[rows] if len(full.keep) == X.shape[1] else X[np.ix_(rows, full.keep)]
    jll = full_jll_missing(X_rows, full.means, full.precisions, full.logdets, full.block,
                           full.log_prior, n_threads)
    failed = _jll.normalize_rows_inplace(jll, kind, 1)
    out[rows] = jll
    return failed


def _part(kind, params, X, y, w, classes, structure):
    """A dask partition's rows validated as the model's partial_fit validates a batch (of a new
    model, or read through the ``structure`` of a fitted one): (X, its Members among
    ``classes``, the threads its kernels take)."""
    model = kind(**params)
    shell = model._new_shell(X) if structure is None else Fitted(**structure, stats=None)
    X, _, members = model._batch(X, np.asarray(y), None if w is None else np.asarray(w),
                                 classes, shell)
    return X, members, model._n_threads_for(X.size)


def _start_part(X, y, w, kind, params, classes, structure, higher):
    """A partition's first pass (``_dask_fit``): (its dtype, its class weights, and its
    statistics, or, if it misses a value, its observed moments: EM's start)."""
    X, members, n_threads = _part(kind, params, X, y, w, classes, structure)
    if np.isnan(X).any():
        return X.dtype, members.class_weight(), None, diagonal_moments(X, members, n_threads)
    return X.dtype, members.class_weight(), full_moments(X, members, n_threads, higher=higher), \
        None


def _combined_starts(a, b):
    """Two parts' first passes (``_start_part``) as one: their statistics added up, or, if
    either misses a value, their observed moments (a complete part's follow from its
    statistics)."""
    dtype, class_weight = np.result_type(a[0], b[0]), a[1] + b[1]
    if a[2] is not None and b[2] is not None:
        return dtype, class_weight, combine_full(a[2], b[2]), None
    return dtype, class_weight, None, combine_moments(*_observed_moments(a),
                                                      *_observed_moments(b))


def _observed_moments(start):
    """A first pass's observed moments (``diagonal_moments``), from its statistics if it has
    them (every value observed)."""
    if start[2] is None:
        return start[3]
    weight, mean, scatter = start[2][:3]
    return (np.repeat(weight[:, None], mean.shape[1], axis=1), mean,
            np.diagonal(scatter, axis1=1, axis2=2).copy())


def _completed_part(X, y, w, kind, params, classes, structure, fill, mean, precisions, block,
                    keep, higher):
    """A partition's E-step (``completed_moments``) under the parameters given."""
    X, members, n_threads = _part(kind, params, X, y, w, classes, structure)
    return completed_moments(X, members, fill, mean, precisions, block, keep, n_threads,
                             higher)


def _combined_completions(a, b):
    """Two parts' E-steps (``completed_moments``) as one. Their scatters hold the conditional
    covariances, their higher moments only the completed rows, and combine_full shifts the
    higher moments with the scatter: the rows' moments are added up alone, then the
    covariances (with them, LDA's shrinkage="auto" on missing values differed from memory)."""
    (stats_a, entropy_a, logdet_a, extra_a), (stats_b, entropy_b, logdet_b, extra_b) = a, b
    weight, mean, scatter, third, fourth = combine_full(_rows_alone(stats_a, extra_a),
                                                        _rows_alone(stats_b, extra_b))
    extra = extra_a + extra_b
    return ((weight, mean, scatter + extra, third, fourth), entropy_a + entropy_b,
            logdet_a + logdet_b, extra)


def _rows_alone(stats, extra):
    return (stats[0], stats[1], stats[2] - extra) + tuple(stats[3:])


class _BaseDiscriminant(Conjugate, BaseClassifier):
    """Statistics, EM and scoring shared by LDA and QDA (full covariances; LDA adds the diagonal
    kinds), and their Normal-Inverse-Wishart prior: LDA's ``_shared`` covariance has one."""

    _shared: bool
    _unregularised: dict  # the constructor parameters of a model without regularisation

    _X_constraints: dict = {"allow_nan": True, "accept_sparse": False, "accept_int": False,
                            "max_abs": MAX_ABS}  # beyond, the squared deviations overflow
    _poor_score = False

    means_ = parameter("means", "ndarray of shape (n_classes, n_features): class means.")
    priors_ = parameter("priors", "ndarray of shape (n_classes,): class priors.")
    covariance_ = parameter("covariance", "ndarray: the covariance(s) the classes use.")
    n_iter_ = fitted_attribute(lambda model, fitted: fitted.hyper["n_iter"],
                               "int: EM iterations (E-step and M-step passes) of the last "
                               "batch with missing values.")
    prior_strength_ = float64_parameter(prior_strength, "float or tuple: the prior strength "
                                        "the posterior uses (for prior_strength='evidence', the "
                                        "chosen n0).")

    def _fits_partitions_alone(self):
        return False  # a partition may hold a single class, which has no within-class scatter

    def _more_input_tags(self):
        return {"sparse": False, "allow_nan": True}

    # ----------------------------------------------------------------- hyperparameters
    @staticmethod
    def _check_classes(n_classes):
        if n_classes < 2:
            raise ValueError(f"The number of classes has to be greater than one. Got "
                             f"{n_classes} class.")

    def _iteration_params(self, fitted):
        """max_iter and tol, validated, and ``n_iter``: the EM iterations of the last batch with
        missing values. ``n_iter`` is the one entry ``_add`` writes (the hyperparameters of a
        snapshot are those of the batch that made it); it is carried from ``fitted`` otherwise,
        and is 1 for a new fit and after a model file or a pickle (which do not keep it)."""
        max_iter, tol = self.max_iter, real_in(self.tol, 0.0, np.inf)
        max_iter = int_in(max_iter, 1)
        if max_iter is None:
            raise invalid_parameter(self, "max_iter", "an int in the range [1, inf)")
        if tol is None:
            raise invalid_parameter(self, "tol", "a float in the range [0.0, inf)")
        last = None if fitted is None or fitted.hyper is None else fitted.hyper["n_iter"]
        return {"max_iter": max_iter, "tol": tol, "n_iter": last or 1}

    def _prior_params(self, n_features, regularised):
        """The prior's hyperparameters and ``predictive``, validated; the predictive takes no
        other regularisation than the prior's (``regularised``: the model's is set)."""
        prior = {"prior_mean": check_prior_vector(self, "prior_mean", n_features, False),
                 "prior_covariance": _check_prior_covariance(self, n_features),
                 "prior_strength": check_prior_strength(self, n_features),
                 "predictive": check_bool(self, "predictive")}
        if prior["predictive"] and regularised:
            raise InvalidParameterError(
                f"predictive=True takes no {self._regulariser.split()[0]}: the prior regularises "
                "the posterior predictive (set prior_strength or prior_covariance instead).")
        return prior

    def _check_conjugate(self, hyper, error):
        """Raise ``error`` where the model has no conjugate prior (LDA's diagonal kinds)."""

    # ----------------------------------------------------------------- the posterior
    def _posterior(self, fitted):
        """The ``_Posterior`` of a snapshot."""
        strength = prior_strength(self, fitted)
        with fitted.lock:
            return _niw_posterior(fitted.stats, fitted.hyper, strength, self._shared)

    def _log_evidence(self, fitted):
        return _niw_log_evidence(self._posterior(fitted))

    def _draw(self, fitted, rng):
        """A plug-in model's statistics whose means and (maximum-likelihood) covariances are one
        posterior draw: each class keeps its weight (so the class prior stays this model's) and
        gets the drawn mean, and the scatter matrix of weight times the drawn covariance. A
        feature left out by the prior (constant) keeps its constant and no variance, so the
        plug-in model leaves it out too."""
        self._check_conjugate(fitted.hyper, ValueError)
        post = self._posterior(fitted)
        covs, means = _draw_niw(post, rng)
        count = fitted.stats["class_count_"]
        present = count > 0
        mean = fitted.stats["mean"].copy()
        mean[np.ix_(present, post.keep)] = means[present]
        scatter = np.zeros_like(fitted.stats["scatter"])
        scatter[np.ix_(present, post.keep, post.keep)] = (count[present, None, None]
                                                          * covs[post.block[present]])
        return {"class_count_": count.copy(), "mean": mean, "scatter": scatter}, \
            self._unregularised

    def _em_of_missing(self, hyper):
        """What EM over missing values uses: the covariances of its M-step
        (``_em_covariances``), and whether its map ascends the likelihood (no regularisation)."""
        return (lambda moments: self._em_covariances(moments, hyper),
                not (self._regularised(hyper) or hyper["predictive"]))

    def _dask_fit(self, map_reduce, classes, fitted, structure, X):
        """The model of a dask collection's rows for full covariances (fastgen._dask.fit's
        hook), in one pass over the partitions where none misses a value: their statistics
        added up. Where some does, EM over all the partitions at once, as over the same rows in
        memory (each partition's own EM, under its own model, gave another model, and a small
        partition none). None for the diagonal kinds (the partitions' models are merged).
        ``map_reduce(func, combine, *args)`` computes ``func(X_part, y_part, w_part, *args)`` of
        every non-empty partition and combines them pairwise on the workers (None if there are
        none). The batch's statistics are completed under the model of ``fitted``'s statistics
        (or none) and the batch's, as partial_fit completes a batch in memory, its partitions
        read through ``structure`` (``_dask._structure``). EM reads X once a step (persisting
        it first saves the reads)."""
        n_features = X.shape[1]
        # (a width dask does not know: each partition's check; no classes: no rows, refused as
        # in memory)
        if not n_features == n_features or not len(classes):
            return None
        kind, params = type(self), self.get_params()
        width = np.empty((0, n_features))
        hyper = self._hyper(len(classes), width, fitted or self._new_shell(width))
        if "scatter" not in (field.name for field in self._fields(hyper)):
            return None
        higher = hyper["higher"]
        start = map_reduce(_start_part, _combined_starts, kind, params, classes, structure,
                           higher)
        if start is None:  # (no rows: refused as in memory)
            return None
        dtype, class_weight, stats, moments = start
        check_class_weight(class_weight + (0.0 if fitted is None else
                                           fitted.stats["class_count_"]), classes)
        if stats is None:  # (a value is missing)
            stats, hyper["n_iter"] = self._dask_em(map_reduce, kind, params, classes, fitted,
                                                   structure, hyper, moments, class_weight)
        _, mean, scatter, third, fourth = stats
        batch = {"class_count_": class_weight, "mean": mean, "scatter": scatter}
        if higher:
            batch.update(third=third, fourth=fourth)
        self._check_moments(batch, hyper)
        model = kind(**params)
        model._deferred = True  # (its caller derives the parameters of the merged statistics)
        model._publish(Fitted(classes, n_features, dtype, get_feature_names(X), batch, hyper,
                              lock=model._write_lock()))
        return model

    def _dask_em(self, map_reduce, kind, params, classes, fitted, structure, hyper, moments,
                 class_weight):
        """EM over the partitions (``_dask_fit``) from their observed moments and class
        weights: (the batch's completed statistics, EM steps taken)."""
        base = _full_stats(fitted.stats) if fitted is not None and \
            fitted.stats["class_count_"].any() else None
        covariances, likelihood = self._em_of_missing(hyper)
        fill, mean, covs, block, support = em_start(moments, class_weight, base, covariances)

        def step(mean, covs, support):
            _, precisions, logdets = whitening(covs, support)
            completed = map_reduce(_completed_part, _combined_completions, kind, params,
                                   classes, structure, fill, mean, precisions, block,
                                   support.keep, hyper["higher"])
            return em_update(completed, base, mean, precisions, logdets, block, support.keep,
                             covariances)

        return squarem(step, mean, covs, support, hyper["max_iter"], hyper["tol"], likelihood)

    def _em_covariances(self, moments, hyper):
        """The covariances EM completes missing values with: the model's (maximum likelihood,
        regularised as set), or for a predictive model each covariance's posterior mode under
        the prior, Psi_g / (nu_g + k + 2) (the Normal-Inverse-Wishart's), so that EM needs no
        more data than the predictive does (a class may have fewer rows than features). With
        prior_strength="evidence" EM's prior has one pseudo-observation: the evidence is
        maximised afterwards, over the completed statistics."""
        if not hyper["predictive"]:
            return self._covariances(moments, hyper, missing=True)
        weight, mean, scatter, _, _ = moments
        strength = hyper["prior_strength"]
        post = _niw_posterior({"class_count_": weight, "mean": mean, "scatter": scatter}, hyper,
                              1.0 if isinstance(strength, str) else strength, self._shared)
        keep, k = post.keep, len(post.keep)
        modes = np.zeros((len(post.nu),) + scatter.shape[1:])
        modes[:, keep[:, None], keep] = post.scale / (post.nu + k + 2)[:, None, None]
        present = weight > 0
        share = weight[present] / weight[present].sum()
        variances = np.diagonal(scatter[present], axis1=1, axis2=2).sum(axis=0) \
            / weight[present].sum()
        support = self._support(np.tensordot(share, modes[post.block[present]], axes=1),
                                mean[present], variances, missing=True, check=False)
        return modes, post.block, support

    def _predictive_params(self, fitted, log_prior):
        """The ``_Predictive`` of a snapshot, if its model predicts with it (else None)."""
        if not fitted.hyper["predictive"]:
            return None
        return _predictive(self._posterior(fitted), fitted.stats["class_count_"], log_prior,
                           fitted.n_features)

    # ----------------------------------------------------------------- parameters
    def _support(self, cov, means, variances, missing=False, check=True):
        """The ``Support`` of the covariance whose null directions every class shares (LDA's
        shared one, the class-weighted mean of QDA's). It must be finite; where it is
        singular, the class means must agree (else the classes are separated by a direction of
        no variance, and their densities are degenerate: ``_degenerate``), unless not
        ``check`` (a predictive model only shows the plug-in's parameters); with ``missing``
        (EM), the singular directions must be constant features. ``variances``: the data's
        variances before any regularisation (``support_of``)."""
        _check_finite(cov)
        support, agree = support_of(cov, means, variances)
        if check and not agree:
            raise ValueError(self._degenerate.format(self._regulariser))
        if missing and support.basis is not None:
            raise _collinear_missing(self._regulariser)
        return support

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        return FULL_FIELDS + (HIGHER_FIELDS if hyper["higher"] else ())

    def _add(self, stats, X, members, has_nan, hyper):
        n_threads = self._n_threads_for(X.size)
        class_count = members.class_weight()
        if "scatter" not in stats:  # LDA's diagonal kinds: each feature's observed values
            batch = diagonal_moments(X, members, n_threads)
            observed, mean, m2 = combine_moments(stats["observed_count"], stats["mean"],
                                                 stats["m2"], *batch)
            added = {"observed_count": observed, "mean": mean, "m2": m2}
        else:
            base = _full_stats(stats) if stats["class_count_"].any() else None
            higher = hyper["higher"]
            if has_nan:
                covariances, likelihood = self._em_of_missing(hyper)
                batch, hyper["n_iter"] = em_full(  # (see _iteration_params)
                    X, members, covariances, base, hyper["max_iter"], hyper["tol"], n_threads,
                    higher, likelihood)
            else:
                batch = full_moments(X, members, n_threads, higher=higher)
            _, mean, scatter, third, fourth = batch if base is None else combine_full(base, batch)
            added = {"mean": mean, "scatter": scatter}
            if higher:
                added.update(third=third, fourth=fourth)
        return {"class_count_": stats["class_count_"] + class_count, **added}

    def _combine(self, a, rows_a, b, rows_b, n_classes, hyper):
        if ("scatter" in a) != ("scatter" in b):
            raise ValueError("Cannot merge models fitted with a full and a diagonal covariance.")
        count = spread(a["class_count_"], rows_a, n_classes) + spread(b["class_count_"], rows_b,
                                                                      n_classes)
        if "scatter" not in a:
            observed, mean, m2 = combine_moments(
                *(spread(a[name], rows_a, n_classes) for name in ("observed_count", "mean", "m2")),
                *(spread(b[name], rows_b, n_classes) for name in ("observed_count", "mean", "m2")))
            return {"class_count_": count, "observed_count": observed, "mean": mean, "m2": m2}
        # the higher moments are kept only if both models have them (combine_full)
        parts = [tuple(None if value is None else spread(value, rows, n_classes)
                       for value in _full_stats(stats))
                 for stats, rows in ((a, rows_a), (b, rows_b))]
        _, mean, scatter, third, fourth = combine_full(*parts)
        merged = {"class_count_": count, "mean": mean, "scatter": scatter}
        if third is not None:
            merged.update(third=third, fourth=fourth)
        return merged

    def _agree(self, stats, hyper):
        """Statistics from outside (a model file, a pickle, a merge) must be ones that fitting
        can produce (besides the declared bounds, and some sample weight): symmetric scatter
        matrices with a non-negative diagonal, each feature observed at most as often as its
        class, and nothing but zeros where there is no weight (a class announced to partial_fit
        but not seen yet, or seen with weight 0 only)."""
        count = stats["class_count_"]
        if "scatter" in stats:
            scatter = stats["scatter"]
            with np.errstate(over="ignore", invalid="ignore"):
                asymmetry = np.abs(scatter - scatter.transpose(0, 2, 1)).max(axis=(1, 2))
            if not (asymmetry <= STATS_RTOL * np.abs(scatter).max(axis=(1, 2))).all():
                raise ValueError("the scatter matrices must be symmetric")
            if (np.diagonal(scatter, axis1=1, axis2=2) < 0).any():
                raise ValueError("the scatter matrices must have a non-negative diagonal")
            empty, names = count == 0, ("mean", "scatter", "third", "fourth")
        else:
            observed = stats["observed_count"]
            if (observed > count[:, None] * (1 + STATS_RTOL)).any():
                raise ValueError("observed_count exceeds the class weight")
            empty, names = observed == 0, ("mean", "m2")
        if any(stats[name][empty].any() for name in names if name in stats):
            raise ValueError("a class (or feature) of no sample weight must have zero statistics")

    # ----------------------------------------------------------------- scoring and sampling
    def _score(self, params, X, kind, out, has_nan):
        """The quadratic form of each class (complete rows), the observed sub-vector's Gaussian
        for rows with missing values; or the posterior predictive's t."""
        full = params.full
        n_threads = self._n_threads_for(X.size * len(params.log_prior))
        if params.predictive is not None:
            failed = _score_predictive(params.predictive, X, kind, out, has_nan, n_threads)
        else:
            failed = _score_full(full, X, kind, out, refuse_nan=not has_nan)
            if has_nan:
                failed += _score_missing(full, X, kind, out, n_threads, self._regulariser)
        if failed:
            raise MemoryError("could not allocate the scoring kernel's row buffers")
        if has_nan or params.predictive is not None:
            _check_rows_scored(out, kind)

    def _class_prior(self, fitted):
        """priors_, as fit computed them (what sample draws classes from)."""
        return np.asarray(self._params_of(fitted).priors, dtype=np.float64)

    def _sample_X(self, fitted, y_idx, rng):
        """Multivariate normal draws: mean_c + E L_c z with E^T covariance_c E = L_c L_c^T on
        the support (basis E): nothing varies along the null directions. With predictive, draws
        from the classes' posterior predictive t (``_sample_t``)."""
        params = self._params_of(fitted)
        if params.predictive is not None:
            return _sample_t(self._posterior(fitted), params.predictive, fitted.stats["mean"],
                             y_idx, rng)
        covs = params.covariance if params.covariance.ndim == 3 else params.covariance[None]
        support = params.support
        X = np.empty((len(y_idx), fitted.n_features))
        for g, cov in enumerate(covs):
            rows = np.arange(len(y_idx)) if len(covs) == 1 else np.flatnonzero(y_idx == g)
            factor = support.embed(np.linalg.cholesky(support.restrict(cov)), fitted.n_features)
            z = rng.standard_normal((len(rows), factor.shape[1]))
            X[rows] = params.means[y_idx[rows]] + z @ factor.T
        return X

    def _snapshot(self, X):
        """(validated X, has_nan, the snapshot, its parameters): one read of the model."""
        fitted = self.__dict__.get("_fitted")
        if fitted is None:
            check_is_fitted(self)
        X, has_nan = self._validate_X(X, fitted)
        return X, has_nan, fitted, self._params_of(fitted)


class LinearDiscriminantAnalysis(_BaseDiscriminant):
    """Linear discriminant analysis: Gaussian classes sharing one covariance.

    Parameters
    ----------
    covariance : {"full", "diagonal", "spherical", "identity"}, default="full"
        The shared covariance: the pooled maximum-likelihood estimate, its diagonal, its mean
        variance times the identity, or the identity itself (the Rocchio rule of Manning,
        Raghavan & Schuetze 2008, ch. 14, with priors: nearest class mean in Euclidean distance, shifted by the log prior).
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities; if None, the (weighted) class frequencies.
    shrinkage : None, float in [0, 1] or "auto", default=None
        Shrinkage of the full or diagonal covariance towards ``trace / d`` times the identity:
        ``(1 - s) S + s tr(S)/d I``. "auto" (full only) shrinks each class's covariance by the
        Ledoit-Wolf lemma on its standardised data before pooling, as scikit-learn's lsqr and
        eigen solvers do; the model then also keeps third and fourth co-moments per class, so
        that ``partial_fit`` stays exact.
    n_components : int, default=None
        Dimensions kept by ``transform`` (at most ``min(n_classes - 1, n_features)``, and
        at most the rank of the covariance: fewer are kept if it is lower).
    max_iter : int, default=300
        Maximum EM iterations (passes of an E-step and an M-step over the batch) when the
        training data has missing values. The extrapolations of SQUAREM count: each takes
        one (see Notes).
    tol : float, default=1e-6
        EM stops when an iteration moves no mean or covariance entry by more than ``tol``
        times the largest one.
    prior_mean : array-like of shape (n_features,), default=None
        Location m0 of the conjugate Normal-Inverse-Wishart prior of the class means and
        their shared covariance (see Notes). None: the weighted mean of all the training
        data, computed from the statistics (so that ``partial_fit``, ``merge`` and a loaded
        model derive the same).
    prior_covariance : array-like of shape (n_features, n_features) or (n_features,), \
default=None
        The prior's typical covariance Sigma0: symmetric positive definite, or its diagonal
        (positive). The Inverse-Wishart scale is Psi0 = nu0 Sigma0, so that the prior's expected
        precision E[Sigma^-1] is Sigma0^-1 whatever its strength (the strength changes how
        tightly the prior holds, not where). None: each feature's variance in all the training
        data (classes together) on the diagonal; a feature constant in all of it is then left
        out, as the plug-in model leaves it out.
    prior_strength : float, pair of floats or "evidence", default=1.0
        n0 > 0, the prior's weight in pseudo-observations: kappa0 = n0 for the means and
        nu0 = n0 + d - 1 for the covariance (d features). A pair ``(kappa0, nu0)`` sets both
        (nu0 > d - 1). "evidence": the n0 in [1e-4, 1e6] that maximises ``log_evidence_``
        (type-II maximum likelihood), shown in ``prior_strength_``.
    predictive : bool, default=False
        Score with the posterior predictive P(x | c, D), a multivariate Student t per class
        (see Notes), instead of the plug-in Gaussian: ``predict``, ``predict_proba``,
        ``predict_log_proba``, ``predict_joint_log_proba``, ``score``, decisions under a
        loss, ``decision_function`` and ``sample`` follow it; the class prior stays
        ``priors_``. The prior is then the only regulariser: ``shrinkage`` must be left at
        None, and the covariance "full".
    n_threads : int, default=None
        OpenMP threads of the kernels: None uses the OpenMP default (all cores, or
        ``OMP_NUM_THREADS``, or a ``threadpoolctl`` limit), a positive number that many, a
        negative one counts back from all cores. Batches below about 200,000 multiply-adds run
        on one thread. Results do not depend on it.
        BLAS products follow the BLAS library's own setting (``threadpoolctl``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    class_count_ : ndarray of shape (n_classes,)
        Weight of the training samples of each class.
    priors_ : ndarray of shape (n_classes,)
        Class priors.
    means_ : ndarray of shape (n_classes, n_features)
        Class means.
    covariance_ : ndarray of shape (n_features, n_features)
        The shared covariance (after shrinkage).
    coef_ : ndarray of shape (n_features,) or (n_classes, n_features)
        Weights of the linear decision function (one row for two classes, as scikit-learn);
        for a singular covariance the pseudo-inverse (minimum-norm) solution, zero along
        its null directions.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts of the linear decision function.
    scalings_ : ndarray of shape (n_features, rank)
        Discriminant directions (generalised eigenvectors of the between- and within-class
        covariances on the support of the latter, ``rank`` its rank), most discriminative
        first.
    xbar_ : ndarray of shape (n_features,)
        Overall mean.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Share of the between-class variance along each kept direction.
    n_iter_ : int
        EM iterations (E-step and M-step passes, those of SQUAREM's extrapolations included)
        of the last batch with missing values (1: closed form, none missing). Model files
        and pickles do not keep it (1 after loading).
    log_evidence_ : float
        log P(X | y): the marginal likelihood of the training features given their labels
        under the prior (see Notes) (covariance "full" only).
    prior_strength_ : float or tuple
        The prior strength the posterior uses: ``prior_strength``, or the n0 chosen for
        "evidence".
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit (DataFrame input only).

    See Also
    --------
    QuadraticDiscriminantAnalysis : one covariance per class.
    GaussianNB : a diagonal covariance per class.

    Notes
    -----
    The covariance is the within-class scatter divided by the total weight (maximum
    likelihood). With ``priors`` given, scikit-learn weights the class covariances by the
    priors instead; with the default priors both coincide. ``predict_joint_log_proba`` is the
    exact ``log P(c) + log N(x; mean_c, covariance_)`` (on the observed sub-vector when values
    are missing); the posteriors use the equivalent linear form. Missing values at fit time are
    handled by EM for "full" and by each feature's observed values for the diagonal kinds (exact
    maximum likelihood there, as the features are independent given the class).

    A singular covariance is no error where it is harmless. Along a direction of no within-class
    variance in which the class means agree, every class puts x at the same place: the direction
    carries no information and cancels from every posterior, and the model is the Gaussian on
    the covariance's support, with its pseudo-inverse and pseudo-determinant (the product of the
    non-zero eigenvalues), as scikit-learn's "svd" solver restricts itself to the data's rank
    (it decides that rank on the standardised features with an absolute threshold, 1e-4 on their
    singular values, so it also drops nearly collinear directions, which are kept here). A
    constant feature is left out: every output is that of the model fitted without it (without
    shrinkage, whose target averages over all the features), ``predict_joint_log_proba`` and
    rows with missing values included, and its missing values in fit are its constant. Collinear
    features (one a linear combination of others) leave a null direction across features:
    ``predict_joint_log_proba`` is then the log-density on the subspace the data spans (with
    respect to the area on it, so it differs from the model on a basis of those features by a
    constant common to all classes), a row off the subspace is scored by its orthogonal
    projection onto it, and ``coef_`` is the minimum-norm solution, as scikit-learn's "lsqr"
    solver gives. The tests do not depend on the features' units: a feature is constant when its
    standard deviation in the data (before shrinkage) is at most 100 eps times its size (a
    spread that rounding makes by itself), and a direction among the others is null when the
    eigenvalue of their correlation matrix is at most ``100 d`` eps times the largest; the means
    agree along it when they spread by at most the resolution of that test plus the rounding of
    the means (``_gaussian.support_of``). Errors remain where no answer is exact: class means
    that differ along a null direction (degenerate classes, perfectly separated: set
    ``shrinkage``, as for fewer samples than features), and rows with missing values on
    collinear features (their observed part's Gaussian would need a pseudo-inverse for each
    pattern of missing values: set ``shrinkage``, or remove the collinear features). With
    missing values in fit, EM on collinear features approaches their singular maximum-likelihood
    covariance without reaching it, and stops at a nearly singular one: set ``shrinkage`` there
    too.

    Bayesian prediction (covariance "full"). The conjugate prior has one covariance for all
    classes, Sigma ~ Inverse-Wishart(Psi0, nu0), and each class mean mu_c | Sigma ~ N(m0, Sigma
    / kappa0) (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian distribution"; Gelman
    et al. 2013, Bayesian Data Analysis, sec. 3.6). From the statistics -- the class weights n_c
    (N in all), means xbar_c and scatter matrices S_c -- its posterior has kappa_c = kappa0 +
    n_c, m_c = (kappa0 m0 + n_c xbar_c) / kappa_c, nu_n = nu0 + N and Psi_n = Psi0 + sum_c [S_c
    + kappa0 n_c / kappa_c (xbar_c - m0)(xbar_c - m0)^T]. With ``predictive=True`` class c
    scores with the multivariate Student t of nu_n - d + 1 degrees of freedom, location m_c and
    scale Psi_n (kappa_c + 1) / (kappa_c (nu_n - d + 1)): one whitening shared by the classes
    and a factor per class, so the quadratic term no longer cancels between classes (the
    posteriors cost one product by a (d, d + C) matrix instead of the plug-in's (d, C)). A row
    with missing values is scored by the t of its observed sub-vector (same degrees of freedom,
    sub-matrix of the scale). ``log_evidence_`` is -N d/2 log pi + log Gamma_d(nu_n / 2) - log
    Gamma_d(nu0 / 2) + nu0/2 log|Psi0| - nu_n/2 log|Psi_n| + d/2 sum_c log(kappa0 / kappa_c).
    ``sample_posterior`` draws Sigma by the Bartlett decomposition (Anderson 2003, An
    Introduction to Multivariate Statistical Analysis, ch. 7) and each mu_c given it, as
    plug-in models without shrinkage whose ``means_`` and ``covariance_`` are the draw. The
    posterior's scale is positive definite, so the predictive needs no shrinkage and scores
    where the plug-in cannot (more features than samples, missing values on collinear features);
    ``covariance_``, ``coef_``, ``intercept_``, ``scalings_`` and ``transform`` remain the
    maximum-likelihood model's (its pseudo-inverse solution where its classes are degenerate).
    The class prior is ``priors_`` in the predictive and in every draw. With missing values in
    the training data, the posterior is that of EM's completed statistics, EM run under the prior
    (its covariances are the posterior modes, so it needs no more data than the predictive): an
    approximation that counts each imputed value as observed (the exact posterior of the
    observed values has no closed form), so that ``log_evidence_`` is then the evidence of the
    completed data, not of the observed values alone.

    EM is accelerated by SQUAREM (Varadhan & Roland 2008, scheme S3): two EM iterations give
    a direction and a step length, an extrapolation along it is followed by one more EM
    iteration, and its fixed points are those of EM. An extrapolation that is not a valid
    Gaussian (a covariance not positive definite) is drawn back towards the plain EM
    iterates, and one whose merit is worse than the current iterate's is replaced by them:
    without shrinkage the merit is the observed-data log-likelihood (of this batch, and of
    the statistics of earlier ``partial_fit`` batches as complete data), which therefore
    never decreases; with shrinkage EM is the fixed-point iteration of a regularised map, and
    the merit is the size of the change an EM iteration would make.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import LinearDiscriminantAnalysis
    >>> X = np.array([[-1., -1.], [-2., -1.], [-3., -2.], [1., 1.], [2., 1.], [3., 2.]])
    >>> y = np.array([1, 1, 1, 2, 2, 2])
    >>> LinearDiscriminantAnalysis().fit(X, y).predict([[-0.8, -1.], [np.nan, 2.]])
    array([1, 2])
    """

    _regulariser = "shrinkage (a float in (0, 1] or 'auto')"  # what errors advise
    _degenerate = ("The shared covariance is singular along a direction in which the class "
                   "means differ (more features than the data can estimate, or a feature "
                   "constant within each class but not across classes): the classes are "
                   "degenerate Gaussians on parallel subspaces. Set {}, or use "
                   "covariance='identity'.")

    _shared = True
    _unregularised = {"shrinkage": None}

    def __init__(self, covariance: str = "full", *, priors: ArrayLike | None = None,
                 shrinkage: float | str | None = None, n_components: int | None = None,
                 max_iter: int = 300, tol: float = 1e-6, prior_mean: ArrayLike | None = None,
                 prior_covariance: ArrayLike | None = None,
                 prior_strength: float | tuple | str = 1.0, predictive: bool = False,
                 n_threads: int | None = None):
        self.covariance = covariance
        self.priors = priors
        self.shrinkage = shrinkage
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.prior_mean = prior_mean
        self.prior_covariance = prior_covariance
        self.prior_strength = prior_strength
        self.predictive = predictive
        self.n_threads = n_threads

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags  # only scikit-learn calls this

        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64", "float32"])
        return tags

    coef_ = parameter("coef", "ndarray: weights of the linear decision function.")
    intercept_ = parameter("intercept", "ndarray: intercepts of the linear decision function.")
    scalings_ = parameter("scalings", "ndarray of shape (n_features, rank): discriminant "
                          "directions, most discriminative first.")
    xbar_ = parameter("xbar", "ndarray of shape (n_features,): overall mean.")
    explained_variance_ratio_ = parameter(
        "explained_variance_ratio", "ndarray of shape (n_components,): share of the "
        "between-class variance along each kept direction.")

    # ----------------------------------------------------------------- hyperparameters
    def _check_params(self, n_classes, X, fitted):
        """The covariance kind is fixed by the first fit (it decides the statistics), and "auto"
        shrinkage needs the higher moments, which are kept from a first fit with "auto" on (as
        long as the statistics have them: a merge with a model without them drops them)."""
        kind = plain_choice(self.covariance, COVARIANCES)
        if kind is None:
            raise invalid_parameter(self, "covariance",
                                    f"a str among {{{', '.join(map(repr, COVARIANCES))}}}")
        fitted_kind = None if fitted is None or fitted.hyper is None else \
            fitted.hyper["covariance"]
        if fitted_kind is not None and kind != fitted_kind:
            raise InvalidParameterError(f"covariance was changed from {fitted_kind!r} to "
                                        f"{kind!r} after fitting; call fit to start again.")
        shrinkage = self.shrinkage
        allowed = "a str among {'auto'}, a float in the range [0.0, 1.0] or None"
        if isinstance(shrinkage, str):
            shrinkage = plain_choice(shrinkage, ("auto",))
            if shrinkage is None:
                raise invalid_parameter(self, "shrinkage", allowed)
        if fitted is None:
            higher = kind == "full" and isinstance(shrinkage, str)
        else:
            higher = kind == "full" and isinstance(fitted.stats, dict) and "third" in fitted.stats
        if isinstance(shrinkage, str):  # "auto"
            if kind != "full":
                raise InvalidParameterError(
                    "shrinkage='auto' (Ledoit-Wolf) needs covariance='full'.")
            if not higher:
                raise InvalidParameterError(
                    "shrinkage='auto' needs statistics that this model did not keep (it was "
                    "fitted without 'auto'); call fit to start again.")
        elif shrinkage is not None:
            shrinkage = real_in(shrinkage, 0.0, 1.0)
            if shrinkage is None:
                raise invalid_parameter(self, "shrinkage", allowed)
        self._check_classes(n_classes)
        n_features = fitted.n_features if X is None else X.shape[1]
        n_components, most = self.n_components, min(n_classes - 1, n_features)
        if n_components is not None:
            n_components = int_in(n_components, 1)
            if n_components is None:
                raise invalid_parameter(self, "n_components",
                                        "an int in the range [1, inf) or None")
        if n_components is not None and n_components > most:
            raise InvalidParameterError(
                f"n_components cannot be larger than min(n_features, n_classes - 1). Here that "
                f"is {most}; got {n_components!r}.")
        iteration = self._iteration_params(fitted)
        priors = check_priors(self, n_classes)
        hyper = {"covariance": kind, "priors": priors, "shrinkage": shrinkage, "higher": higher,
                 "n_components": n_components, **iteration}
        hyper.update(self._prior_params(n_features, self._regularised(hyper)))
        if hyper["predictive"] or hyper["prior_strength"] == "evidence":
            self._check_conjugate(hyper, InvalidParameterError)
        return hyper

    @staticmethod
    def _check_conjugate(hyper, error):
        """The prior is on a full covariance: the other kinds have no posterior (``error``:
        for a fitted attribute, AttributeError)."""
        if hyper["covariance"] != "full":
            raise error("predictive=True, prior_strength='evidence', log_evidence_ and "
                        "sample_posterior need covariance='full' (the prior is a "
                        "Normal-Inverse-Wishart on the full covariance).")

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        return super()._fields(hyper) if hyper["covariance"] == "full" else DIAGONAL_FIELDS

    # ----------------------------------------------------------------- parameters
    @staticmethod
    def _regularised(hyper):
        """Whether the covariance is shrunk: EM then iterates a regularised map, and does not
        ascend the likelihood (``em_full``)."""
        return hyper["shrinkage"] not in (None, 0)

    def _covariances(self, stats, hyper, classes=None, missing=False, check=True):
        """The shared covariance (1, d, d) of statistics, shrunk; every class uses it; and its
        ``Support`` (see ``_support``; ``check``: whether the classes must not be degenerate).

        Pooled by class weight (maximum likelihood). With "auto", each class's covariance is
        shrunk by Ledoit-Wolf on its standardised data first, as scikit-learn's lsqr solver does.
        """
        weight, mean, scatter, _, fourth = stats
        total = weight.sum()
        s = hyper["shrinkage"]
        with np.errstate(over="ignore", invalid="ignore"):  # _support refuses inf, NaN
            variances = np.diagonal(scatter, axis1=1, axis2=2).sum(axis=0) / total
            flat = constant(variances, np.abs(mean[weight > 0]).max(axis=0, initial=0.0))
            if s == "auto" and fourth is not None:  # (EM's start has no moments)
                cov = sum(w / total * ledoit_wolf(w, without_noise(scatter[c], flat),
                                                  without_noise(fourth[c], flat))
                          for c, w in enumerate(weight) if w > 0)
            else:
                cov = scatter.sum(axis=0) / total
            cov = without_noise(cov, flat)
            if s is not None and s != "auto":
                cov = (1 - s) * cov + s * np.trace(cov) / cov.shape[0] * np.eye(cov.shape[0])
        support = self._support(cov, mean[weight > 0], variances, missing, check)
        return cov[None], np.zeros(len(weight), dtype=np.intp), support

    def _derive(self, fitted):
        stats, hyper = fitted.stats, fitted.hyper
        n_classes, n_features = stats["mean"].shape
        priors, log_prior = class_prior(stats["class_count_"], hyper["priors"])
        kind = hyper["covariance"]
        if kind == "full":  # (the predictive scores with the posterior: the plug-in's
            # parameters are shown only, its pseudo-inverse where the classes are degenerate)
            covs, _, support = self._covariances(_full_stats(stats), hyper,
                                                 check=not hyper["predictive"])
            cov = covs[0]
            means = readonly(stats["mean"])
        else:
            n, mean, m2 = stats["observed_count"], stats["mean"], stats["m2"]
            overall = (n * mean).sum(axis=0) / np.maximum(n.sum(axis=0), 1e-300)
            means = np.where(n > 0, mean, overall)
            present = means[stats["class_count_"] > 0]
            with np.errstate(over="ignore", invalid="ignore"):  # _support refuses inf, NaN
                variances = m2.sum(axis=0) / np.maximum(n.sum(axis=0), np.finfo(float).tiny)
                varying = ~constant(variances, np.abs(present).max(axis=0, initial=0.0))
                pooled = np.where(varying, variances, 0.0)
                if kind == "spherical":  # the mean variance of the features that vary
                    pooled = np.full(n_features, m2[:, varying].sum()
                                     / max(n[:, varying].sum(), np.finfo(float).tiny))
                elif kind == "identity":
                    pooled = np.ones(n_features)
                elif hyper["shrinkage"] is not None:
                    pooled = ((1 - hyper["shrinkage"]) * pooled
                              + hyper["shrinkage"] * pooled.mean())
            cov = np.diag(pooled)
            support = self._support(cov, present, variances)
        whitened = whitening(cov[None], support)
        W = whitened[0]  # (d, r): W W^T is the pseudo-inverse of cov
        xbar = priors @ means
        coef = (means @ W) @ W.T
        intercept = -0.5 * np.einsum("ij,ij->i", means, coef) + log_prior
        centred = means - xbar
        coef_all = (centred @ W) @ W.T  # P (m_c - xbar): P m_c less a vector common to all
        intercept_all = (-0.5 * np.einsum("ij,ij->i", centred, coef_all) + log_prior
                         - coef_all @ xbar)
        if n_classes == 2:  # the log-odds
            coef_ = (coef_all[1] - coef_all[0])[None, :]
            intercept_ = np.array([intercept_all[1] - intercept_all[0]])
        else:
            coef_, intercept_ = coef, intercept
        # the discriminant directions: the generalised eigenproblem (between, cov) on the
        # support, as the standard one of the whitened between-class covariance
        between = (means - xbar).T @ ((means - xbar) * priors[:, None])
        evals, evecs = np.linalg.eigh(W.T @ between @ W)
        order = np.argsort(evals)[::-1]
        n_components = min(hyper["n_components"] or n_classes - 1, support.rank)
        ratio = evals[order] / evals.sum() if evals.sum() > 0 else np.zeros(len(evals))
        full = diagonal = None
        if kind == "full":
            full = _whitened(stats["class_count_"], stats["mean"], whitened,
                             np.zeros(n_classes, np.intp), log_prior, support)
        else:  # a constant feature adds nothing: S = B = 0
            keep = support.keep
            S, B = np.zeros(n_features), np.zeros(n_features)
            S[keep] = -0.5 / pooled[keep]
            B[keep] = -0.5 * (LOG_2PI + np.log(pooled[keep]))
            diagonal = diagonal_tables(DIAG_GAUSSIAN, means, np.broadcast_to(S, means.shape),
                                       np.broadcast_to(B, means.shape), log_prior)
        params = _LDAParams(priors, log_prior, means, cov, coef_all, intercept_all, coef_,
                            intercept_, xbar, W @ evecs[:, order], ratio[:n_components],
                            n_components, full, diagonal,
                            _linear_safe((coef_all, intercept_all), (coef_, intercept_)), support,
                            self._predictive_params(fitted, log_prior))
        _check_derived(params)
        return params

    # ----------------------------------------------------------------- scoring
    def _score(self, params, X, kind, out, has_nan):
        """The diagonal kernel; for "full", the quadratic form for the joint log-likelihood and
        the equivalent linear one for posteriors."""
        if params.full is None:
            score_diagonal(params.diagonal, X, kind, out,
                           self._n_threads_for(X.size * len(params.log_prior)))
            return
        if kind == OUT_JLL or params.predictive is not None:
            return super()._score(params, X, kind, out, has_nan)
        # posteriors of the full model: the linear form (the quadratic term is common)
        if params.linear_safe:
            jll = X @ params.coef_all.T
            jll += params.intercept_all
            overflowed = None
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                jll = X @ params.coef_all.T
                jll += params.intercept_all
            # a complete row whose linear form overflowed takes the quadratic one
            overflowed = ~np.isfinite(jll.max(axis=1))
            if has_nan:
                overflowed &= ~np.isnan(X).any(axis=1)
        # one thread, as _score_full's finish: right after BLAS's threaded product, OpenMP's
        # threads would spin against BLAS's (bench/README.md)
        # (a NaN row where none was checked means X changed, unless it overflowed: scored apart)
        failed = _jll.normalize_rows_inplace(jll, kind, 1, not has_nan and overflowed is None)
        out[...] = jll
        if overflowed is not None and overflowed.any():
            rows = np.flatnonzero(overflowed)
            part = np.empty((len(rows), out.shape[1]), dtype=out.dtype)
            failed += _score_full(params.full, X[rows], kind, part, refuse_nan=not has_nan)
            out[rows] = part
        if has_nan:
            failed += _score_missing(params.full, X, kind, out, self._n_threads_for(X.size),
                                     self._regulariser)
        if failed:
            raise MemoryError("could not allocate the scoring kernel's row buffers")
        if has_nan:
            _check_rows_scored(out, kind)

    @maps_dask
    def decision_function(self, X: MatrixLike) -> NDArray[np.floating]:
        """Linear decision function: log-posterior differences, as scikit-learn's.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (NaN: missing, marginalised).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes the log-odds of the second class; otherwise per-class scores
            ``X @ coef_.T + intercept_``.
        """
        X, has_nan, fitted, params = self._snapshot(X)
        two = len(fitted.classes) == 2
        if has_nan or params.predictive is not None:
            log_proba = np.empty((X.shape[0], len(fitted.classes)), dtype=fitted.dtype)
            self._score(params, X, OUT_LOG_PROBA, log_proba, has_nan)
            return log_proba[:, 1] - log_proba[:, 0] if two else log_proba
        if params.linear_safe:
            scores = X @ params.coef.T + params.intercept
            return (scores.ravel() if two else scores).astype(fitted.dtype, copy=False)
        with np.errstate(over="ignore", invalid="ignore"):
            scores = X @ params.coef.T + params.intercept
        overflowed = np.flatnonzero(np.isnan(scores).any(axis=1))
        if len(overflowed):  # the linear form overflowed (extreme models): the log-posteriors
            log_proba = np.empty((len(overflowed), len(fitted.classes)), dtype=fitted.dtype)
            self._score(params, X[overflowed], OUT_LOG_PROBA, log_proba, False)
            scores[overflowed] = log_proba[:, 1:] - log_proba[:, :1] if two else log_proba
        return (scores.ravel() if two else scores).astype(fitted.dtype, copy=False)

    def transform(self, X: MatrixLike) -> NDArray[np.floating]:
        """Project onto the discriminant directions (most discriminative first).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples; a missing value (NaN) is placed at the overall mean ``xbar_``, so it
            contributes nothing to the projection.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            ``(X - xbar_) @ scalings_[:, :n_components]``.
        """
        X, has_nan, fitted, params = self._snapshot(X)
        centred = X - params.xbar
        if has_nan:
            centred[np.isnan(centred)] = 0.0
        return (centred @ params.scalings[:, :params.n_components]).astype(fitted.dtype,
                                                                            copy=False)

    def fit_transform(self, X: MatrixLike, y: ArrayLike, **fit_params) -> NDArray[np.floating]:
        """Fit, then transform X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Target labels.
        **fit_params : dict
            Passed to ``fit``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            The transformed training samples.
        """
        return self.fit(X, y, **fit_params).transform(X)


class QuadraticDiscriminantAnalysis(_BaseDiscriminant):
    """Quadratic discriminant analysis: one full-covariance Gaussian per class.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities; if None, the (weighted) class frequencies.
    reg_param : float, default=0.0
        Regularisation: each covariance becomes ``(1 - reg_param) S + reg_param I``.
    max_iter : int, default=300
        Maximum EM iterations (passes of an E-step and an M-step over the batch) when the
        training data has missing values. The extrapolations of SQUAREM count: each takes
        one (see Notes).
    tol : float, default=1e-6
        EM stops when an iteration moves no mean or covariance entry by more than ``tol``
        times the largest one.
    prior_mean : array-like of shape (n_features,), default=None
        Location m0 of the conjugate Normal-Inverse-Wishart prior of each class's mean and
        covariance (see Notes). None: the weighted mean of all the training data, computed
        from the statistics (so that ``partial_fit``, ``merge`` and a loaded model derive the
        same).
    prior_covariance : array-like of shape (n_features, n_features) or (n_features,), \
default=None
        The prior's typical covariance Sigma0: symmetric positive definite, or its diagonal
        (positive). The Inverse-Wishart scale is Psi0 = nu0 Sigma0, so that the prior's expected
        precision E[Sigma^-1] is Sigma0^-1 whatever its strength (the strength changes how
        tightly the prior holds, not where). None: each feature's variance in all the training
        data (classes together) on the diagonal; a feature constant in all of it is then left
        out, as the plug-in model leaves it out.
    prior_strength : float, pair of floats or "evidence", default=1.0
        n0 > 0, the prior's weight in pseudo-observations: kappa0 = n0 for the means and
        nu0 = n0 + d - 1 for the covariances (d features). A pair ``(kappa0, nu0)`` sets both
        (nu0 > d - 1). "evidence": the n0 in [1e-4, 1e6] that maximises ``log_evidence_``
        (type-II maximum likelihood), shown in ``prior_strength_``.
    predictive : bool, default=False
        Score with the posterior predictive P(x | c, D), a multivariate Student t per class
        (see Notes), instead of the plug-in Gaussian: ``predict``, ``predict_proba``,
        ``predict_log_proba``, ``predict_joint_log_proba``, ``score``, decisions under a
        loss and ``sample`` follow it; the class prior stays ``priors_``. The prior is then
        the only regulariser: ``reg_param`` must be left at 0.
    n_threads : int, default=None
        OpenMP threads of the kernels: None uses the OpenMP default (all cores, or
        ``OMP_NUM_THREADS``, or a ``threadpoolctl`` limit), a positive number that many, a
        negative one counts back from all cores. Batches below about 200,000 multiply-adds run
        on one thread. Results do not depend on it.
        BLAS products follow the BLAS library's own setting (``threadpoolctl``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    class_count_ : ndarray of shape (n_classes,)
        Weight of the training samples of each class.
    priors_ : ndarray of shape (n_classes,)
        Class priors.
    means_ : ndarray of shape (n_classes, n_features)
        Class means.
    covariance_ : ndarray of shape (n_classes, n_features, n_features)
        Per-class maximum-likelihood covariances, regularised by ``reg_param``.
    n_iter_ : int
        EM iterations (E-step and M-step passes, those of SQUAREM's extrapolations included)
        of the last batch with missing values (1: closed form, none missing). Model files
        and pickles do not keep it (1 after loading).
    log_evidence_ : float
        log P(X | y): the marginal likelihood of the training features given their labels
        under the prior (see Notes).
    prior_strength_ : float or tuple
        The prior strength the posterior uses: ``prior_strength``, or the n0 chosen for
        "evidence".
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit (DataFrame input only).

    See Also
    --------
    LinearDiscriminantAnalysis : one covariance shared by all classes.

    Notes
    -----
    ``predict_joint_log_proba`` is ``log P(c) + log N(x; means_[c], covariance_[c])`` exactly
    (on the observed sub-vector when values are missing). A rank-deficient class covariance (for
    example a class with no more samples than features) is an error naming ``reg_param``
    (``numpy.linalg.LinAlgError``, a ``ValueError``), never a silently wrong answer. The
    covariance is the maximum-likelihood estimate (divided by the class weight), as in
    scikit-learn 1.9, whose posteriors equal fastgen's for the same ``priors`` and
    ``reg_param``; its ``tol``, though, is a threshold on the covariances' eigenvalues, not
    EM's tolerance.

    Directions of no variance in every class (a constant feature, collinear features) along
    which the class means agree carry no information, and are handled as by
    ``LinearDiscriminantAnalysis``: the model is the Gaussian on the covariances' common
    support (pseudo-inverses, pseudo-determinants); a constant feature is left out, so that
    every output is that of the model fitted without it, missing values included. They are
    the directions of no variance of the class covariances' weighted mean, with the same
    tolerances. Still errors naming ``reg_param``: a class singular where another class has
    variance, class means that differ along a common null direction, and rows with missing
    values on collinear features (and EM on them, which stops at a nearly singular
    covariance, needs ``reg_param`` too).

    Missing values at fit time are handled by EM, accelerated by SQUAREM with the safeguards
    described in ``LinearDiscriminantAnalysis``: without ``reg_param`` the observed-data
    log-likelihood never decreases from one iterate to the next.

    Bayesian prediction. Each class has the conjugate prior Sigma_c ~ Inverse-Wishart(Psi0,
    nu0), mu_c | Sigma_c ~ N(m0, Sigma_c / kappa0) (Murphy 2007, "Conjugate Bayesian analysis of
    the Gaussian distribution"; Gelman et al. 2013, Bayesian Data Analysis, sec. 3.6). From the
    class weight n_c, mean xbar_c and scatter S_c its posterior has kappa_c = kappa0 + n_c, m_c
    = (kappa0 m0 + n_c xbar_c) / kappa_c, nu_c = nu0 + n_c and Psi_c = Psi0 + S_c + kappa0 n_c /
    kappa_c (xbar_c - m0)(xbar_c - m0)^T. With ``predictive=True`` class c scores with the
    multivariate Student t of nu_c - d + 1 degrees of freedom, location m_c and scale Psi_c
    (kappa_c + 1) / (kappa_c (nu_c - d + 1)), on the observed sub-vector for a row with missing
    values. ``log_evidence_`` is the sum over the classes of -n_c d/2 log pi + log Gamma_d(nu_c
    / 2) - log Gamma_d(nu0 / 2) + nu0/2 log|Psi0| - nu_c/2 log|Psi_c| + d/2 log(kappa0 /
    kappa_c). ``sample_posterior`` draws each Sigma_c by the Bartlett decomposition (Anderson
    2003, An Introduction to Multivariate Statistical Analysis, ch. 7) and mu_c given it, as
    plug-in models (``reg_param=0``) whose ``means_`` and ``covariance_`` are the draw. The
    posterior's scales are positive definite, so the predictive needs no ``reg_param`` and
    scores a class with fewer samples than features (``covariance_`` then shows its singular
    maximum-likelihood covariance). The class prior is ``priors_`` in the predictive and in
    every draw. With missing values in the training data, the posterior is that of EM's
    completed statistics, EM run under the prior (its covariances are the posterior modes): an
    approximation that counts each imputed value as observed, so that ``log_evidence_`` is then
    the evidence of the completed data, not of the observed values alone.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import QuadraticDiscriminantAnalysis
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (50, 2)), rng.normal(3, 2, (50, 2))])
    >>> y = np.repeat([0, 1], 50)
    >>> QuadraticDiscriminantAnalysis().fit(X, y).predict([[0., 0.], [5., np.nan]])
    array([0, 1])
    """

    _regulariser = "reg_param > 0 (for example 0.01)"  # what errors advise
    _degenerate = ("The class covariances are all singular along a direction in which the "
                   "class means differ (a feature constant within each class but not across "
                   "classes): the classes are degenerate Gaussians on parallel subspaces. Set "
                   "{}.")

    _shared = False
    _unregularised = {"reg_param": 0.0}

    def __init__(self, *, priors: ArrayLike | None = None, reg_param: float = 0.0,
                 max_iter: int = 300, tol: float = 1e-6, prior_mean: ArrayLike | None = None,
                 prior_covariance: ArrayLike | None = None,
                 prior_strength: float | tuple | str = 1.0, predictive: bool = False,
                 n_threads: int | None = None):
        self.priors = priors
        self.reg_param = reg_param
        self.max_iter = max_iter
        self.tol = tol
        self.prior_mean = prior_mean
        self.prior_covariance = prior_covariance
        self.prior_strength = prior_strength
        self.predictive = predictive
        self.n_threads = n_threads

    def _check_params(self, n_classes, X, fitted):
        r = real_in(self.reg_param, 0.0, 1.0)
        if r is None:
            raise invalid_parameter(self, "reg_param", "a float in the range [0.0, 1.0]")
        iteration = self._iteration_params(fitted)
        self._check_classes(n_classes)
        priors = check_priors(self, n_classes)
        n_features = fitted.n_features if X is None else X.shape[1]
        return {"priors": priors, "reg_param": r, "higher": False, **iteration,
                **self._prior_params(n_features, r != 0)}

    @staticmethod
    def _regularised(hyper):
        """Whether the covariances are regularised: EM then iterates a regularised map, and does
        not ascend the likelihood (``em_full``)."""
        return hyper["reg_param"] != 0

    def _covariances(self, stats, hyper, classes=None, missing=False, check=True):
        """Per-class maximum-likelihood covariances (C, d, d), regularised by reg_param, and
        their common ``Support``: the directions of no variance in every class (those of the
        weighted mean covariance), where the class means must agree. On the support each
        class's covariance must be non-singular; with ``missing`` (EM), the common singular
        directions must be constant features. ``classes`` names the classes in errors (EM,
        which knows only their indices, omits it). Without ``check`` (the predictive scores
        with the posterior, and only shows these), singular covariances are no error.
        """
        weight, mean, scatter, _, _ = stats
        n_classes, n_features = scatter.shape[:2]
        covs = np.empty_like(scatter)
        r = hyper["reg_param"]
        present = weight > 0
        with np.errstate(over="ignore", invalid="ignore"):  # (refused below if not finite)
            variances = (np.diagonal(scatter[present], axis1=1, axis2=2).sum(axis=0)
                         / weight[present].sum())
        flat = constant(variances, np.abs(mean[present]).max(axis=0, initial=0.0))
        for c in range(n_classes):
            if not present[c]:  # announced in partial_fit's classes, no data yet: prior 0
                covs[c] = np.eye(n_features)
                continue
            covs[c] = without_noise(scatter[c] / weight[c], flat)
            _check_finite(covs[c])  # (before 0 * inf: reg_param=1 does not hide an overflow)
            if r:
                covs[c] = (1 - r) * covs[c] + r * np.eye(n_features)
        pooled = np.tensordot(weight[present] / weight[present].sum(), covs[present], axes=1)
        support = self._support(pooled, mean[present], variances, missing, check)
        for c in np.flatnonzero(present) if check else ():
            if singular(support.restrict(covs[c]), None if r else support.sizes(mean[c])):
                name = f"class {classes[c]}" if classes is not None else f"class number {c}"
                raise np.linalg.LinAlgError(
                    f"The covariance matrix of {name} is not full rank. It is singular "
                    f"({weight[c]:g} samples for {n_features} features, or collinear features), "
                    f"so its density is undefined. Set {self._regulariser}."
                )
        return covs, np.arange(n_classes, dtype=np.intp), support

    def _derive(self, fitted):
        stats, hyper = fitted.stats, fitted.hyper
        priors, log_prior = class_prior(stats["class_count_"], hyper["priors"])
        predictive = self._predictive_params(fitted, log_prior)
        covs, block, support = self._covariances(_full_stats(stats), hyper, fitted.classes,
                                                 check=predictive is None)
        full = predictive.full if predictive is not None else _whitened(
            stats["class_count_"], stats["mean"], whitening(covs, support), block, log_prior,
            support)
        params = _QDAParams(priors, log_prior, readonly(stats["mean"]), covs, full, support,
                            predictive)
        _check_derived(params)
        return params
