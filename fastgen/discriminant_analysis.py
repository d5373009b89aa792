"""Gaussian discriminant analysis: LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis.

Both keep additive per-class statistics -- the weight, the mean and the scatter matrix about it
(pooled over the classes for LDA) -- combined exactly across batches. Missing values (NaN) are
marginalised: a row is scored by the Gaussian of its observed sub-vector, and fitting estimates
means and covariances by EM under missing-at-random (accelerated by SQUAREM, ``_gaussian``).

Where things are (on the declared state of ``_state``): the statistics are declared by
``_fields`` and accumulated, merged and checked by ``_add``, ``_combine`` and ``_agree`` of
``_BaseDiscriminant`` (for both models, and LDA's diagonal kinds); everything derived from them --
covariances, whitening, the linear form, the discriminant directions -- comes from one pure
``_derive`` per model, as a ``_LDAParams`` or ``_QDAParams``; ``_score``, ``decision_function``
and ``transform`` read only those parameters, of one snapshot.
"""
from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import linalg

from ._base import (
    OUT_JLL,
    OUT_LOG_PROBA,
    BaseClassifier,
    MatrixLike,
    check_priors,
    class_prior,
    maps_dask,
    spread,
)
from ._core import jll as _jll
from ._gaussian import (
    DIAG_GAUSSIAN,
    LOG_2PI,
    combine_full,
    combine_moments,
    diagonal_moments,
    diagonal_tables,
    em_full,
    full_jll_missing,
    full_moments,
    ledoit_wolf,
    rank_deficient,
    score_diagonal,
    whitening,
)
from ._state import CLASSES, FEATURES, Field, fitted_attribute, parameter, readonly
from ._validation import check_is_fitted

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
    """What full-covariance scoring reads: the whitening of each covariance for the block-wise
    scorer of complete rows, and the precisions for rows with missing values."""

    shift: np.ndarray  # (d,) the weighted mean of all data: rows are centred on it
    W: np.ndarray  # (d, G d) whitening of each covariance, side by side
    offset: np.ndarray  # (C, d) each class mean, centred and whitened
    block: np.ndarray  # (C,) intp: the covariance of each class
    const: np.ndarray  # (C,) log prior - (d log 2 pi + log det) / 2
    means: np.ndarray  # (C, d) class means (the missing-value path)
    precisions: np.ndarray  # (G, d, d)
    logdets: np.ndarray  # (G,)
    log_prior: np.ndarray  # (C,)


class _LDAParams(NamedTuple):
    priors: np.ndarray
    log_prior: np.ndarray
    means: np.ndarray  # diagonal kinds: a class's unobserved features at the overall mean
    covariance: np.ndarray  # (d, d)
    coef_all: np.ndarray  # (C, d) the linear form, one row per class
    intercept_all: np.ndarray  # (C,)
    coef: np.ndarray  # coef_: one row for two classes
    intercept: np.ndarray
    xbar: np.ndarray
    scalings: np.ndarray
    explained_variance_ratio: np.ndarray
    n_components: int
    full: _Full | None  # covariance="full"
    diagonal: tuple | None  # diagonal_tables() of the other kinds
    # whether the linear form of any accepted X (|x| <= MAX_ABS) stays far within float64: then
    # scoring skips the overflow checks (they cost a third of a single-row predict_proba)
    linear_safe: bool


def _linear_safe(coef, intercept):
    finite = intercept[np.isfinite(intercept)]
    bound = MAX_ABS * np.abs(coef).sum(axis=1).max(initial=0.0) + np.abs(finite).max(initial=0.0)
    return bool(bound < 1e300)


class _QDAParams(NamedTuple):
    priors: np.ndarray
    log_prior: np.ndarray
    means: np.ndarray
    covariance: np.ndarray  # (C, d, d)
    full: _Full


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
        params = dict(zip(("A", "S", "C", "fill", "bias", "model"), params))
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
                                 "beyond what can be scored (rescale X).")
            value.flags.writeable = False


def _shift(class_count, mean):
    """The weighted mean of all data: rows are centred on it before the products."""
    w = class_count
    return (w @ mean) / w.sum() if w.sum() > 0 else np.zeros(mean.shape[1])


def _whitened(class_count, mean, covs, block, log_prior):
    """Whitening of each covariance for the block-wise scorer and the missing-value path."""
    n_features = covs.shape[1]
    shift = _shift(class_count, mean)
    W, precisions, logdets = whitening(covs)
    offset = np.empty((len(block), n_features))
    for c, g in enumerate(block):
        offset[c] = (mean[c] - shift) @ W[:, g * n_features:(g + 1) * n_features]
    with np.errstate(invalid="ignore"):
        const = log_prior - 0.5 * (n_features * LOG_2PI + logdets[block])
    block = np.ascontiguousarray(block, dtype=np.intp)
    return _Full(shift, W, offset, block, const, readonly(mean), precisions, logdets, log_prior)


def _check_finite(cov):
    if not np.isfinite(cov).all():
        raise ValueError("The covariance overflows float64 (values beyond about 1e150): "
                         "rescale X.")


def _check_rank(cov):
    """LDA's shared covariance must be finite and non-singular."""
    _check_finite(cov)
    if rank_deficient(np.linalg.eigvalsh(cov)):
        raise ValueError(
            "The shared covariance is singular (rank-deficient: more features than the data "
            "can estimate, or a constant feature): its inverse is undefined. Set shrinkage "
            "(a float in (0, 1] or 'auto'), or use covariance='diagonal'/'identity'."
        )


def _full_stats(stats):
    """The declared statistics as the tuple ``_gaussian``'s full-covariance functions take."""
    return (stats["class_count_"], stats["mean"], stats["scatter"], stats.get("third"),
            stats.get("fourth"))


# ---------------------------------------------------------------------------- scoring
def _score_full(full, X, kind, out):
    """Complete rows: whitened by BLAS products in blocks of rows, then finished in C.

    The finishing pass runs on one thread: alternating a threaded BLAS product and an OpenMP
    region block after block puts both thread pools, spinning, on the same cores (measured
    6-7x slower on two cores). The products take most of the time and use BLAS's threads."""
    shift, W, offset, block, const = full.shift, full.W, full.offset, full.block, full.const
    n_rows = min(ROW_BLOCK, X.shape[0])
    centred = np.empty((n_rows, X.shape[1]))
    Z = np.empty((n_rows, W.shape[1]))
    failed = 0
    for start in range(0, X.shape[0], ROW_BLOCK):
        stop = min(start + ROW_BLOCK, X.shape[0])
        m = stop - start
        np.subtract(X[start:stop], shift, out=centred[:m])
        np.matmul(centred[:m], W, out=Z[:m])
        failed += _jll.quadratic_finish(Z[:m], offset, block, const, kind, out[start:stop], 1)
    return failed


def _score_missing(full, X, kind, out, n_threads):
    """Rows with missing values: the Gaussian of their observed sub-vector (overwritten in out)."""
    rows = np.flatnonzero(np.isnan(X).any(axis=1))
    jll = full_jll_missing(X[rows], full.means, full.precisions, full.logdets, full.block,
                           full.log_prior, n_threads)
    failed = _jll.normalize_rows_inplace(jll, kind, 1)
    out[rows] = jll
    return failed


class _BaseDiscriminant(BaseClassifier):
    """Statistics, EM and scoring shared by LDA and QDA (full covariances; LDA adds the diagonal
    kinds)."""

    _X_constraints: dict = {"allow_nan": True, "accept_sparse": False, "accept_int": False,
                            "max_abs": MAX_ABS}  # beyond, the squared deviations overflow
    _poor_score = False

    means_ = parameter("means", "ndarray of shape (n_classes, n_features): class means.")
    priors_ = parameter("priors", "ndarray of shape (n_classes,): class priors.")
    covariance_ = parameter("covariance", "ndarray: the covariance(s) the classes use.")
    n_iter_ = fitted_attribute(lambda model, fitted: fitted.hyper["n_iter"],
                               "int: EM iterations (E-step and M-step passes) of the last "
                               "batch with missing values.")

    def _fits_partitions_alone(self):
        return False  # a partition may hold a single class, which has no within-class scatter

    def _more_input_tags(self):
        return {"sparse": False, "allow_nan": True}

    # ----------------------------------------------------------------- hyperparameters
    @staticmethod
    def _check_classes(n_classes):
        if n_classes < 2:
            raise ValueError(f"The number of classes has to be greater than one; got "
                             f"{n_classes} class.")

    def _iteration_params(self, fitted):
        """max_iter and tol, validated, and ``n_iter``: the EM iterations of the last batch with
        missing values. ``n_iter`` is the one entry ``_add`` writes (the hyperparameters of a
        snapshot are those of the batch that made it); it is carried from ``fitted`` otherwise,
        and is 1 for a new fit and after a model file or a pickle (which do not keep it)."""
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}.")
        if not isinstance(self.tol, numbers.Real) or not self.tol >= 0:
            raise ValueError(f"tol must be a non-negative number, got {self.tol!r}.")
        last = None if fitted is None or fitted.hyper is None else fitted.hyper["n_iter"]
        return {"max_iter": self.max_iter, "tol": self.tol, "n_iter": last or 1}

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        return FULL_FIELDS + (HIGHER_FIELDS if hyper["higher"] else ())

    def _add(self, stats, X, y_idx, sample_weight, has_nan, hyper):
        n_classes = len(stats["class_count_"])
        n_threads = self._n_threads_for(X.size)
        class_count = np.bincount(y_idx, weights=sample_weight, minlength=n_classes)
        if "scatter" not in stats:  # LDA's diagonal kinds: each feature's observed values
            batch = diagonal_moments(X, y_idx, sample_weight, n_classes, n_threads)
            observed, mean, m2 = combine_moments(stats["observed_count"], stats["mean"],
                                                 stats["m2"], *batch)
            added = {"observed_count": observed, "mean": mean, "m2": m2}
        else:
            base = _full_stats(stats) if stats["class_count_"].any() else None
            higher = hyper["higher"]
            if has_nan:
                batch, hyper["n_iter"] = em_full(  # (see _iteration_params)
                    X, y_idx, sample_weight, n_classes,
                    lambda moments: self._covariances(moments, hyper), base, hyper["max_iter"],
                    hyper["tol"], n_threads, higher, not self._regularised(hyper))
            else:
                batch = full_moments(X, y_idx, sample_weight, n_classes, n_threads,
                                     higher=higher)
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
        for rows with missing values."""
        full = params.full
        failed = _score_full(full, X, kind, out)
        if has_nan:
            failed += _score_missing(full, X, kind, out,
                                     self._n_threads_for(X.size * len(full.log_prior)))
        if failed:
            raise MemoryError("could not allocate the scoring kernel's row buffers")

    def _class_prior(self, fitted):
        """priors_, as fit computed them (what sample draws classes from)."""
        return np.asarray(self._params_of(fitted).priors, dtype=np.float64)

    def _sample_X(self, fitted, y_idx, rng):
        """Multivariate normal draws: mean_c + L_c z with covariance_c = L_c L_c^T."""
        params = self._params_of(fitted)
        covs = params.covariance if params.covariance.ndim == 3 else params.covariance[None]
        X = np.empty((len(y_idx), fitted.n_features))
        for g, cov in enumerate(covs):
            rows = np.arange(len(y_idx)) if len(covs) == 1 else np.flatnonzero(y_idx == g)
            z = rng.standard_normal((len(rows), cov.shape[0]))
            X[rows] = params.means[y_idx[rows]] + z @ np.linalg.cholesky(cov).T
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
        Dimensions kept by ``transform`` (at most ``min(n_classes - 1, n_features)``).
    max_iter : int, default=300
        Maximum EM iterations (passes of an E-step and an M-step over the batch) when the
        training data has missing values. The extrapolations of SQUAREM count: each takes
        one (see Notes).
    tol : float, default=1e-6
        EM stops when an iteration moves no mean or covariance entry by more than ``tol``
        times the largest one.
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
        Weights of the linear decision function (one row for two classes, as scikit-learn).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts of the linear decision function.
    scalings_ : ndarray of shape (n_features, rank)
        Discriminant directions (generalised eigenvectors of the between- and within-class
        covariances), most discriminative first.
    xbar_ : ndarray of shape (n_features,)
        Overall mean.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Share of the between-class variance along each kept direction.
    n_iter_ : int
        EM iterations (E-step and M-step passes, those of SQUAREM's extrapolations included)
        of the last batch with missing values (1: closed form, none missing). Model files
        and pickles do not keep it (1 after loading).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
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

    def __init__(self, covariance: str = "full", *, priors: ArrayLike | None = None,
                 shrinkage: float | str | None = None, n_components: int | None = None,
                 max_iter: int = 300, tol: float = 1e-6, n_threads: int | None = None):
        self.covariance = covariance
        self.priors = priors
        self.shrinkage = shrinkage
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.n_threads = n_threads

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags  # only scikit-learn calls this

        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64"])
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
        kind = self.covariance
        if kind not in COVARIANCES:
            raise ValueError(f"covariance must be one of {COVARIANCES}, got {kind!r}.")
        fitted_kind = None if fitted is None or fitted.hyper is None else \
            fitted.hyper["covariance"]
        if fitted_kind is not None and kind != fitted_kind:
            raise ValueError(f"covariance was changed from {fitted_kind!r} to {kind!r} after "
                             "fitting; call fit to start again.")
        if fitted is None:
            higher = kind == "full" and self.shrinkage == "auto"
        else:
            higher = kind == "full" and isinstance(fitted.stats, dict) and "third" in fitted.stats
        shrinkage = self.shrinkage
        if isinstance(shrinkage, str):
            if shrinkage != "auto":
                raise ValueError(f"shrinkage must be None, a float in [0, 1] or 'auto', got "
                                 f"{shrinkage!r}.")
            if kind != "full":
                raise ValueError("shrinkage='auto' (Ledoit-Wolf) needs covariance='full'.")
            if not higher:
                raise ValueError("shrinkage='auto' needs statistics that this model did not "
                                 "keep (it was fitted without 'auto'); call fit to start again.")
        elif shrinkage is not None and (isinstance(shrinkage, bool)
                                        or not isinstance(shrinkage, numbers.Real)
                                        or not 0 <= shrinkage <= 1):
            raise ValueError(f"shrinkage must be None, a float in [0, 1] or 'auto', got "
                             f"{shrinkage!r}.")
        self._check_classes(n_classes)
        n_features = fitted.n_features if X is None else X.shape[1]
        n_components = self.n_components
        if n_components is not None and (not isinstance(n_components, numbers.Integral)
                                         or not 1 <= n_components <= min(n_classes - 1,
                                                                         n_features)):
            raise ValueError(f"n_components cannot be larger than min(n_features, n_classes - 1)"
                             f" = {min(n_classes - 1, n_features)}; got {n_components!r}.")
        iteration = self._iteration_params(fitted)
        priors = None if self.priors is None else check_priors(self.priors, n_classes)
        return {"covariance": kind, "priors": priors, "shrinkage": shrinkage, "higher": higher,
                "n_components": n_components, **iteration}

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        return super()._fields(hyper) if hyper["covariance"] == "full" else DIAGONAL_FIELDS

    # ----------------------------------------------------------------- parameters
    @staticmethod
    def _regularised(hyper):
        """Whether the covariance is shrunk: EM then iterates a regularised map, and does not
        ascend the likelihood (``em_full``)."""
        return hyper["shrinkage"] not in (None, 0)

    @staticmethod
    def _covariances(stats, hyper, classes=None):
        """The shared covariance (1, d, d) of statistics, shrunk; every class uses it.

        Pooled by class weight (maximum likelihood). With "auto", each class's covariance is
        shrunk by Ledoit-Wolf on its standardised data first, as scikit-learn's lsqr solver does.
        """
        weight, _, scatter, _, fourth = stats
        total = weight.sum()
        s = hyper["shrinkage"]
        if s == "auto" and fourth is not None:  # (EM's start has no moments)
            with np.errstate(over="ignore", invalid="ignore"):  # _check_rank refuses inf, NaN
                cov = sum(w / total * ledoit_wolf(w, scatter[c], fourth[c])
                          for c, w in enumerate(weight) if w > 0)
        else:
            cov = scatter.sum(axis=0) / total
            if s is not None and s != "auto":
                cov = (1 - s) * cov + s * np.trace(cov) / cov.shape[0] * np.eye(cov.shape[0])
        _check_rank(cov)
        return cov[None], np.zeros(len(weight), dtype=np.intp)

    def _derive(self, fitted):
        stats, hyper = fitted.stats, fitted.hyper
        n_classes, n_features = stats["mean"].shape
        priors = class_prior(stats["class_count_"], hyper["priors"])
        with np.errstate(divide="ignore"):
            log_prior = np.log(priors)
        kind = hyper["covariance"]
        if kind == "full":
            cov = self._covariances(_full_stats(stats), hyper)[0][0]
            means = readonly(stats["mean"])
        else:
            n, mean, m2 = stats["observed_count"], stats["mean"], stats["m2"]
            pooled = m2.sum(axis=0) / np.maximum(n.sum(axis=0), np.finfo(float).tiny)
            if kind == "spherical":
                pooled = np.full(n_features, m2.sum() / max(n.sum(), np.finfo(float).tiny))
            elif kind == "identity":
                pooled = np.ones(n_features)
            elif hyper["shrinkage"] is not None:
                pooled = (1 - hyper["shrinkage"]) * pooled + hyper["shrinkage"] * pooled.mean()
            cov = np.diag(pooled)
            _check_rank(cov)
            overall = (n * mean).sum(axis=0) / np.maximum(n.sum(axis=0), 1e-300)
            means = np.where(n > 0, mean, overall)
        xbar = priors @ means
        coef = linalg.solve(cov, means.T, assume_a="pos").T
        intercept = -0.5 * np.einsum("ij,ij->i", means, coef) + log_prior
        if n_classes == 2:
            coef_ = (coef[1] - coef[0])[None, :]
            intercept_ = np.array([intercept[1] - intercept[0]])
        else:
            coef_, intercept_ = coef, intercept
        between = (means - xbar).T @ ((means - xbar) * priors[:, None])
        evals, evecs = linalg.eigh(between, cov)
        order = np.argsort(evals)[::-1]
        n_components = hyper["n_components"] or min(n_classes - 1, n_features)
        ratio = evals[order] / evals.sum() if evals.sum() > 0 else np.zeros(len(evals))
        full = diagonal = None
        if kind == "full":
            full = _whitened(stats["class_count_"], stats["mean"], cov[None],
                             np.zeros(n_classes, np.intp), log_prior)
        else:
            var = np.broadcast_to(pooled, (n_classes, n_features))
            diagonal = diagonal_tables(DIAG_GAUSSIAN, means, -0.5 / var,
                                       -0.5 * (LOG_2PI + np.log(var)), log_prior)
        params = _LDAParams(priors, log_prior, means, cov, coef, intercept, coef_, intercept_,
                            xbar, evecs[:, order], ratio[:n_components], n_components, full,
                            diagonal, _linear_safe(coef, intercept))
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
        if kind == OUT_JLL:
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
        failed = _jll.normalize_rows_inplace(jll, kind, self._n_threads_for(jll.size))
        out[...] = jll
        if overflowed is not None and overflowed.any():
            rows = np.flatnonzero(overflowed)
            part = np.empty((len(rows), out.shape[1]), dtype=out.dtype)
            failed += _score_full(params.full, X[rows], kind, part)
            out[rows] = part
        if has_nan:
            failed += _score_missing(params.full, X, kind, out, self._n_threads_for(X.size))
        if failed:
            raise MemoryError("could not allocate the scoring kernel's row buffers")

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
        if has_nan:
            log_proba = np.empty((X.shape[0], len(fitted.classes)), dtype=fitted.dtype)
            self._score(params, X, OUT_LOG_PROBA, log_proba, has_nan)
            return log_proba[:, 1] - log_proba[:, 0] if two else log_proba
        if params.linear_safe:
            scores = X @ params.coef.T + params.intercept
            return scores.ravel() if two else scores
        with np.errstate(over="ignore", invalid="ignore"):
            scores = X @ params.coef.T + params.intercept
        overflowed = np.flatnonzero(np.isnan(scores).any(axis=1))
        if len(overflowed):  # the linear form overflowed (extreme models): the log-posteriors
            log_proba = np.empty((len(overflowed), len(fitted.classes)), dtype=fitted.dtype)
            self._score(params, X[overflowed], OUT_LOG_PROBA, log_proba, False)
            scores[overflowed] = log_proba[:, 1:] - log_proba[:, :1] if two else log_proba
        return scores.ravel() if two else scores

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
        X, has_nan, _, params = self._snapshot(X)
        centred = X - params.xbar
        if has_nan:
            centred[np.isnan(centred)] = 0.0
        return centred @ params.scalings[:, :params.n_components]

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
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (DataFrame input only).

    See Also
    --------
    LinearDiscriminantAnalysis : one covariance shared by all classes.

    Notes
    -----
    ``predict_joint_log_proba`` is ``log P(c) + log N(x; means_[c], covariance_[c])`` exactly
    (on the observed sub-vector when values are missing). Unlike scikit-learn, a rank-deficient
    class covariance (for example a class with no more samples than features) is an error
    naming ``reg_param``, never a silently wrong answer (scikit-learn #14997). The covariance is
    the maximum-likelihood estimate (divided by the class weight), not scikit-learn's unbiased
    one.

    Missing values at fit time are handled by EM, accelerated by SQUAREM with the safeguards
    described in ``LinearDiscriminantAnalysis``: without ``reg_param`` the observed-data
    log-likelihood never decreases from one iterate to the next.

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

    def __init__(self, *, priors: ArrayLike | None = None, reg_param: float = 0.0,
                 max_iter: int = 300, tol: float = 1e-6, n_threads: int | None = None):
        self.priors = priors
        self.reg_param = reg_param
        self.max_iter = max_iter
        self.tol = tol
        self.n_threads = n_threads

    def _check_params(self, n_classes, X, fitted):
        r = self.reg_param
        if not isinstance(r, numbers.Real) or isinstance(r, bool) or not 0 <= r <= 1:
            raise ValueError(f"reg_param must be a number in [0, 1], got {r!r}.")
        iteration = self._iteration_params(fitted)
        self._check_classes(n_classes)
        priors = None if self.priors is None else check_priors(self.priors, n_classes)
        return {"priors": priors, "reg_param": r, "higher": False, **iteration}

    @staticmethod
    def _regularised(hyper):
        """Whether the covariances are regularised: EM then iterates a regularised map, and does
        not ascend the likelihood (``em_full``)."""
        return hyper["reg_param"] != 0

    @staticmethod
    def _covariances(stats, hyper, classes=None):
        """Per-class maximum-likelihood covariances (C, d, d), regularised by reg_param.
        ``classes`` names the classes in errors (EM, which knows only their indices, omits it).
        """
        weight, _, scatter, _, _ = stats
        n_classes, n_features = scatter.shape[:2]
        covs = np.empty_like(scatter)
        r = hyper["reg_param"]
        for c in range(n_classes):
            if not weight[c] > 0:  # announced in partial_fit's classes, no data yet: prior 0
                covs[c] = np.eye(n_features)
                continue
            covs[c] = scatter[c] / weight[c]
            if r:
                covs[c] = (1 - r) * covs[c] + r * np.eye(n_features)
            _check_finite(covs[c])
            if rank_deficient(np.linalg.eigvalsh(covs[c])):
                name = f"class {classes[c]!r}" if classes is not None else f"class number {c}"
                raise ValueError(
                    f"The covariance of {name} is singular (rank-deficient: "
                    f"{weight[c]:g} samples for {n_features} features, or collinear features); "
                    "its density is undefined. Set reg_param > 0 (for example 0.01)."
                )
        return covs, np.arange(n_classes, dtype=np.intp)

    def _derive(self, fitted):
        stats, hyper = fitted.stats, fitted.hyper
        priors = class_prior(stats["class_count_"], hyper["priors"])
        with np.errstate(divide="ignore"):
            log_prior = np.log(priors)
        covs, block = self._covariances(_full_stats(stats), hyper, fitted.classes)
        params = _QDAParams(priors, log_prior, readonly(stats["mean"]), covs,
                            _whitened(stats["class_count_"], stats["mean"], covs, block,
                                      log_prior))
        _check_derived(params)
        return params
