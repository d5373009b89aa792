"""Gaussian discriminant analysis: LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis.

Both keep additive per-class statistics -- the weight, the mean and the scatter matrix about it
(pooled over the classes for LDA) -- combined exactly across batches, and derive covariances,
their eigen-decompositions and the scoring parameters from them in one place (``_derive``).
Missing values (NaN) are marginalised: a row is scored by the Gaussian of its observed
sub-vector, and fitting estimates means and covariances by EM under missing-at-random.
"""
from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import linalg

from ._base import OUT_JLL, BaseClassifier, MatrixLike, check_priors, maps_dask, spread
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
from ._validation import check_is_fitted, check_sample_weight

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]

COVARIANCES = ("full", "diagonal", "spherical", "identity")
ROW_BLOCK = 2048  # rows per BLAS product when scoring full covariances (fits in L2)


def _check_finite(cov):
    if not np.isfinite(cov).all():
        raise ValueError("The covariance overflows float64 (values beyond about 1e150): "
                         "rescale X.")


class _BaseDiscriminant(BaseClassifier):
    """Statistics, EM and scoring shared by LDA and QDA."""

    _X_constraints: dict = {"allow_nan": True, "accept_sparse": False, "accept_int": False,
                            "max_abs": 1e150}  # beyond, the squared deviations overflow
    _poor_score = False

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_scoring")

    def _fits_partitions_alone(self):
        return False  # a partition may hold a single class, which has no within-class scatter

    def _more_input_tags(self):
        return {"sparse": False, "allow_nan": True}

    def _is_full(self):
        return True

    def _reset(self, classes, X):
        n_classes, n_features = len(classes), X.shape[1]
        self.classes_ = classes
        self.class_count_ = np.zeros(n_classes)
        self.n_iter_ = 1
        self._dtype = X.dtype if X.dtype == np.float32 else np.dtype(np.float64)
        self._mean = np.zeros((n_classes, n_features))
        if self._is_full():
            shape = (n_classes, n_features, n_features)
            self._scatter = np.zeros(shape)
            # third and fourth co-moments, kept only for Ledoit-Wolf shrinkage
            self._third = self._fourth = np.zeros(shape) if self._wants_higher() else None
        else:
            self.observed_count_ = np.zeros((n_classes, n_features))
            self._m2 = np.zeros((n_classes, n_features))

    def _wants_higher(self):
        return False

    def _full_stats(self):
        return self.class_count_, self._mean, self._scatter, self._third, self._fourth

    def _check_classes(self, n_classes):
        if n_classes < 2:
            raise ValueError(f"The number of classes has to be greater than one; got "
                             f"{n_classes} class.")

    def _check_iteration_params(self):
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}.")
        if not isinstance(self.tol, numbers.Real) or not self.tol >= 0:
            raise ValueError(f"tol must be a non-negative number, got {self.tol!r}.")

    def _accumulate(self, X, y_idx, has_nan, sample_weight, *checked):
        n_classes = len(self.classes_)
        n_threads = self._n_threads_for(X.size)
        class_count = np.bincount(y_idx, weights=sample_weight, minlength=n_classes)
        if not self._is_full():
            batch = diagonal_moments(X, y_idx, sample_weight, n_classes, n_threads)
            self.observed_count_, self._mean, self._m2 = combine_moments(
                self.observed_count_, self._mean, self._m2, *batch)
        else:
            base = self._full_stats() if self.class_count_.any() else None
            higher = self._third is not None
            if has_nan:
                batch, self.n_iter_ = em_full(
                    X, y_idx, sample_weight, n_classes,
                    lambda stats: self._covariances(stats, checked[-1]), base, self.max_iter,
                    self.tol, n_threads, higher)
            else:
                batch = full_moments(X, y_idx, sample_weight, n_classes, n_threads,
                                     higher=higher)
            stats = batch if base is None else combine_full(base, batch)
            _, self._mean, self._scatter, self._third, self._fourth = stats
        self.class_count_ = self.class_count_ + class_count
        self._derive(*checked)

    def _merge(self, other, classes, mine, theirs):
        n = len(classes)
        if self._is_full():
            stats = [tuple(None if v is None else spread(v, rows, n) for v in m._full_stats())
                     for m, rows in ((self, mine), (other, theirs))]
            _, self._mean, self._scatter, self._third, self._fourth = combine_full(*stats)
        else:
            self.observed_count_, self._mean, self._m2 = combine_moments(
                *(spread(getattr(self, a), mine, n) for a in ("observed_count_", "_mean", "_m2")),
                *(spread(getattr(other, a), theirs, n)
                  for a in ("observed_count_", "_mean", "_m2")))

    def _state_shapes(self, n_classes, n_features):
        if getattr(self, "_fitted_covariance", "full") not in COVARIANCES:
            raise ValueError("unknown covariance kind")
        shapes = [("class_count_", (n_classes,)), ("_mean", (n_classes, n_features))]
        if self._is_full():
            full = (n_classes, n_features, n_features)
            shapes.append(("_scatter", full))
            if self._third is not None or self._fourth is not None:
                shapes += [("_third", full), ("_fourth", full)]
        else:
            shapes += [("observed_count_", (n_classes, n_features)),
                       ("_m2", (n_classes, n_features))]
        return shapes

    def _sample_X(self, y_idx, rng):
        """Multivariate normal draws: mean_c + L_c z with covariance_c = L_c L_c^T."""
        covs = self.covariance_ if self.covariance_.ndim == 3 else self.covariance_[None]
        X = np.empty((len(y_idx), self.n_features_in_))
        for g, cov in enumerate(covs):
            rows = np.arange(len(y_idx)) if len(covs) == 1 else np.flatnonzero(y_idx == g)
            z = rng.standard_normal((len(rows), cov.shape[0]))
            X[rows] = self.means_[y_idx[rows]] + z @ np.linalg.cholesky(cov).T
        return X

    def _priors(self, priors):
        if priors is not None:
            return priors
        return self.class_count_ / self.class_count_.sum()

    # ---------------------------------------------------------------- scoring
    def _publish_full(self, covs, block, log_prior):
        """Whitening of each covariance for the block-wise scorer and the missing-value path."""
        n_features = covs.shape[1]
        shift = self._shift()
        W, precisions, logdets = whitening(covs)
        offset = np.empty((len(block), n_features))
        for c, g in enumerate(block):
            offset[c] = (self._mean[c] - shift) @ W[:, g * n_features:(g + 1) * n_features]
        with np.errstate(invalid="ignore"):
            const = log_prior - 0.5 * (n_features * LOG_2PI + logdets[block])
        block = np.ascontiguousarray(block, dtype=np.intp)
        return ("full", (shift, W, offset, block, const), (precisions, logdets, block, log_prior))

    def _shift(self):
        """The weighted mean of all data: rows are centred on it before the products."""
        w = self.class_count_
        return (w @ self._mean) / w.sum() if w.sum() > 0 else np.zeros(self._mean.shape[1])

    def _score(self, X, kind, out, has_nan):
        scoring = self._scoring
        n_threads = self._n_threads_for(X.size * len(self.classes_))
        if scoring[0] == "diagonal":
            score_diagonal(scoring[1], X, kind, out, n_threads)
            failed = 0
        else:
            failed = self._score_full(X, kind, out)
            if has_nan:
                rows = np.flatnonzero(np.isnan(X).any(axis=1))
                jll = full_jll_missing(X[rows], self._mean, *scoring[2], n_threads)
                failed += _jll.normalize_rows_inplace(jll, kind, 1)
                out[rows] = jll
        if failed:
            raise MemoryError("could not allocate the scoring kernel's row buffers")

    def _score_full(self, X, kind, out):
        """Complete rows: whitened by BLAS products in blocks of rows, then finished in C.

        The finishing pass runs on one thread: alternating a threaded BLAS product and an OpenMP
        region block after block puts both thread pools, spinning, on the same cores (measured
        6-7x slower on two cores). The products take most of the time and use BLAS's threads."""
        shift, W, offset, block, const = self._scoring[1]
        n_rows = min(ROW_BLOCK, X.shape[0])
        centred = np.empty((n_rows, X.shape[1]))
        Z = np.empty((n_rows, W.shape[1]))
        failed = 0
        for start in range(0, X.shape[0], ROW_BLOCK):
            stop = min(start + ROW_BLOCK, X.shape[0])
            m = stop - start
            np.subtract(X[start:stop], shift, out=centred[:m])
            np.matmul(centred[:m], W, out=Z[:m])
            failed += _jll.quadratic_finish(Z[:m], offset, block, const, kind, out[start:stop],
                                            1)
        return failed


class LinearDiscriminantAnalysis(_BaseDiscriminant):
    """Linear discriminant analysis: Gaussian classes sharing one covariance.

    Parameters
    ----------
    covariance : {"full", "diagonal", "spherical", "identity"}, default="full"
        The shared covariance: the pooled maximum-likelihood estimate (seed 003), its diagonal,
        its mean variance times the identity, or the identity itself (seed 000's Rocchio rule
        with priors: nearest class mean in Euclidean distance, shifted by the log prior).
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
        Maximum EM iterations when the training data has missing values.
    tol : float, default=1e-6
        EM stops when no mean or covariance entry moves by more than ``tol`` (relative).
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
        EM iterations of the last batch with missing values (1: closed form, none missing).
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

    def _is_full(self):
        return getattr(self, "_fitted_covariance", self.covariance) == "full"

    def _reset(self, classes, X):
        self._fitted_covariance = self.covariance
        super()._reset(classes, X)

    def _check_batch(self, X, n_classes, sample_weight):
        if self.covariance not in COVARIANCES:
            raise ValueError(f"covariance must be one of {COVARIANCES}, got {self.covariance!r}.")
        if (self.__sklearn_is_fitted__() and hasattr(self, "_fitted_covariance")
                and self.covariance != self._fitted_covariance):
            raise ValueError(f"covariance was changed from {self._fitted_covariance!r} to "
                             f"{self.covariance!r} after fitting; call fit to start again.")
        shrinkage = self.shrinkage
        if isinstance(shrinkage, str):
            if shrinkage != "auto":
                raise ValueError(f"shrinkage must be None, a float in [0, 1] or 'auto', got "
                                 f"{shrinkage!r}.")
            if self.covariance != "full":
                raise ValueError("shrinkage='auto' (Ledoit-Wolf) needs covariance='full'.")
            if self.__sklearn_is_fitted__() and getattr(self, "_third", None) is None:
                raise ValueError("shrinkage='auto' needs statistics that this model did not "
                                 "keep (it was fitted without 'auto'); call fit to start again.")
        elif shrinkage is not None and (isinstance(shrinkage, bool)
                                        or not isinstance(shrinkage, numbers.Real)
                                        or not 0 <= shrinkage <= 1):
            raise ValueError(f"shrinkage must be None, a float in [0, 1] or 'auto', got "
                             f"{shrinkage!r}.")
        self._check_classes(n_classes)
        n_components = self.n_components
        if n_components is not None and (not isinstance(n_components, numbers.Integral)
                                         or not 1 <= n_components <= min(n_classes - 1,
                                                                         X.shape[1])):
            raise ValueError(f"n_components cannot be larger than min(n_features, n_classes - 1)"
                             f" = {min(n_classes - 1, X.shape[1])}; got {n_components!r}.")
        self._check_iteration_params()
        priors = None if self.priors is None else check_priors(self.priors, n_classes)
        return check_sample_weight(sample_weight, X.shape[0]), priors

    def _wants_higher(self):
        return self.shrinkage == "auto"

    def _covariances(self, stats, priors):
        """The shared covariance (1, d, d) of statistics, shrunk; every class uses it.

        Pooled by class weight (maximum likelihood). With "auto", each class's covariance is
        shrunk by Ledoit-Wolf on its standardised data first, as scikit-learn's lsqr solver does.
        """
        weight, _, scatter, _, fourth = stats
        total = weight.sum()
        if self.shrinkage == "auto" and fourth is not None:  # (EM's start has no moments)
            cov = sum(w / total * ledoit_wolf(w, scatter[c], fourth[c])
                      for c, w in enumerate(weight) if w > 0)
        else:
            cov = scatter.sum(axis=0) / total
            s = self.shrinkage
            if s is not None and s != "auto":
                cov = (1 - s) * cov + s * np.trace(cov) / cov.shape[0] * np.eye(cov.shape[0])
        self._check_rank(cov)
        return cov[None], np.zeros(len(weight), dtype=np.intp)

    @staticmethod
    def _check_rank(cov):
        _check_finite(cov)
        if rank_deficient(np.linalg.eigvalsh(cov)):
            raise ValueError(
                "The shared covariance is singular (rank-deficient: more features than the data "
                "can estimate, or a constant feature): its inverse is undefined. Set shrinkage "
                "(a float in (0, 1] or 'auto'), or use covariance='diagonal'/'identity'."
            )

    def _derive(self, priors):
        n_classes, n_features = self._mean.shape
        self.priors_ = self._priors(priors)
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.priors_)
        kind = self._fitted_covariance
        if kind == "full":
            cov = self._covariances(self._full_stats(), priors)[0][0]
            means = self._mean
        else:
            n = self.observed_count_
            pooled = self._m2.sum(axis=0) / np.maximum(n.sum(axis=0), np.finfo(float).tiny)
            if kind == "spherical":
                pooled = np.full(n_features, self._m2.sum() / max(n.sum(), np.finfo(float).tiny))
            elif kind == "identity":
                pooled = np.ones(n_features)
            elif self.shrinkage is not None:
                pooled = (1 - self.shrinkage) * pooled + self.shrinkage * pooled.mean()
            cov = np.diag(pooled)
            self._check_rank(cov)
            overall = (n * self._mean).sum(axis=0) / np.maximum(n.sum(axis=0), 1e-300)
            means = np.where(n > 0, self._mean, overall)
        self.covariance_ = cov
        self.means_ = means
        self.xbar_ = self.priors_ @ means
        coef = linalg.solve(cov, means.T, assume_a="pos").T
        intercept = -0.5 * np.einsum("ij,ij->i", means, coef) + log_prior
        self._coef_all, self._intercept_all = coef, intercept
        if n_classes == 2:
            self.coef_ = (coef[1] - coef[0])[None, :]
            self.intercept_ = np.array([intercept[1] - intercept[0]])
        else:
            self.coef_, self.intercept_ = coef, intercept
        between = (means - self.xbar_).T @ ((means - self.xbar_) * self.priors_[:, None])
        evals, evecs = linalg.eigh(between, cov)
        order = np.argsort(evals)[::-1]
        rank = min(n_classes - 1, n_features)
        self.scalings_ = evecs[:, order]
        ratio = evals[order] / evals.sum() if evals.sum() > 0 else np.zeros(len(evals))
        self.explained_variance_ratio_ = ratio[:self.n_components or rank]
        if kind == "full":
            self._scoring = self._publish_full(cov[None], np.zeros(n_classes, np.intp), log_prior)
        else:
            var = np.broadcast_to(pooled, (n_classes, n_features))
            self._scoring = ("diagonal", diagonal_tables(
                DIAG_GAUSSIAN, means, -0.5 / var, -0.5 * (LOG_2PI + np.log(var)), log_prior))

    def _score(self, X, kind, out, has_nan):
        if kind == OUT_JLL or self._scoring[0] != "full":
            return super()._score(X, kind, out, has_nan)
        # posteriors of the full model: the linear form (the quadratic term is common)
        jll = X @ self._coef_all.T
        jll += self._intercept_all
        failed = _jll.normalize_rows_inplace(jll, kind, self._n_threads_for(jll.size))
        out[...] = jll
        if has_nan:
            rows = np.flatnonzero(np.isnan(X).any(axis=1))
            part = full_jll_missing(X[rows], self._mean, *self._scoring[2],
                                    self._n_threads_for(X.size))
            failed += _jll.normalize_rows_inplace(part, kind, 1)
            out[rows] = part
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
        check_is_fitted(self)
        X, has_nan = self._validate_X(X, reset=False, dtype=self._dtype)
        if has_nan:
            log_proba = self.predict_log_proba(X)
            return log_proba[:, 1] - log_proba[:, 0] if len(self.classes_) == 2 else log_proba
        scores = X @ self.coef_.T + self.intercept_
        return scores.ravel() if len(self.classes_) == 2 else scores

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
        check_is_fitted(self)
        X, has_nan = self._validate_X(X, reset=False, dtype=self._dtype)
        n_components = self.n_components or min(len(self.classes_) - 1, self.n_features_in_)
        centred = X - self.xbar_
        if has_nan:
            centred[np.isnan(centred)] = 0.0
        return centred @ self.scalings_[:, :n_components]

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
        Maximum EM iterations when the training data has missing values.
    tol : float, default=1e-6
        EM stops when no mean or covariance entry moves by more than ``tol`` (relative).
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
        EM iterations of the last batch with missing values (1: closed form, none missing).
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

    def _check_batch(self, X, n_classes, sample_weight):
        r = self.reg_param
        if not isinstance(r, numbers.Real) or isinstance(r, bool) or not 0 <= r <= 1:
            raise ValueError(f"reg_param must be a number in [0, 1], got {r!r}.")
        self._check_iteration_params()
        self._check_classes(n_classes)
        priors = None if self.priors is None else check_priors(self.priors, n_classes)
        return check_sample_weight(sample_weight, X.shape[0]), priors

    def _covariances(self, stats, priors):
        """Per-class maximum-likelihood covariances (C, d, d), regularised by reg_param."""
        weight, _, scatter, _, _ = stats
        n_classes, n_features = scatter.shape[:2]
        covs = np.empty_like(scatter)
        r = self.reg_param
        for c in range(n_classes):
            if not weight[c] > 0:  # announced in partial_fit's classes, no data yet: prior 0
                covs[c] = np.eye(n_features)
                continue
            covs[c] = scatter[c] / weight[c]
            if r:
                covs[c] = (1 - r) * covs[c] + r * np.eye(n_features)
            _check_finite(covs[c])
            if rank_deficient(np.linalg.eigvalsh(covs[c])):
                raise ValueError(
                    f"The covariance of class {self.classes_[c]!r} is singular (rank-deficient: "
                    f"{weight[c]:g} samples for {n_features} features, or collinear features); "
                    "its density is undefined. Set reg_param > 0 (for example 0.01)."
                )
        return covs, np.arange(n_classes, dtype=np.intp)

    def _derive(self, priors):
        self.priors_ = self._priors(priors)
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.priors_)
        covs, block = self._covariances(self._full_stats(), priors)
        self.covariance_ = covs
        self.means_ = self._mean
        self._scoring = self._publish_full(covs, block, log_prior)
