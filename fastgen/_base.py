"""Base classes: parameters, scikit-learn protocol, and the shared predict/score paths.

Subclasses implement ``_score``: given input validated by ``_validate_X``, write joint
log-likelihoods, log-posteriors or posteriors with one kernel call. Everything that all classifiers share -- argmax decisions, accuracy, the estimator
protocol (get_params/set_params/clone/repr/tags) -- lives here once.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._core import _counts
from ._core._openmp import effective_n_threads
from ._dask import is_dask_collection
from ._validation import (
    check_is_fitted,
    check_sample_weight,
    check_X,
    check_y,
    encode_labels,
    get_feature_names,
)

# Output kinds understood by the scoring kernels (fastgen/_core/_lse.pxd).
OUT_JLL, OUT_LOG_PROBA, OUT_PROBA = 0, 1, 2

# What the public methods accept as X: anything array-like, or a scipy sparse matrix/array.
if TYPE_CHECKING:
    MatrixLike = Union[ArrayLike, sp.spmatrix, sp.sparray]
else:  # annotations are not evaluated at run time, and sparray needs scipy >= 1.11
    MatrixLike = Any

# The most samples one sample() call draws (more cannot be held in memory anyway).
MAX_SAMPLES = 2**31 - 1

# Below this many multiply-adds a batch is scored on one thread: waking threads costs more.
PARALLEL_MIN_WORK = 200_000


def group_by_class(y_idx, n_classes):
    """Row numbers grouped by class (stable) and the class boundaries: rows of class c are
    ``order[class_ptr[c]:class_ptr[c + 1]]``, the layout the per-class kernels take. y_idx holds
    class indices in [0, n_classes)."""
    y_idx = np.ascontiguousarray(y_idx, dtype=np.intp)
    order = np.empty(y_idx.shape[0], dtype=np.intp)
    class_ptr = np.empty(n_classes + 1, dtype=np.intp)
    _counts.group_rows(y_idx, order, class_ptr)
    return order, class_ptr


def _same_param(a, b):
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        try:
            return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
        except (TypeError, ValueError):
            return False
    return a == b or (a is None and b is None)


def _generator(random_state):
    """A numpy Generator from None, an int, a Generator or a legacy RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    return np.random.default_rng(random_state)


def spread(values, rows, n_rows):
    """``values`` placed at ``rows`` of a zero array of n_rows (for merging class statistics)."""
    out = np.zeros((n_rows,) + np.shape(values)[1:])
    out[rows] = values
    return out


def check_loss(loss, n_classes):
    """Validate a loss matrix: (n_classes, n_classes), finite, non-negative; float64."""
    raw = np.asarray(loss)
    if raw.dtype.kind not in "biuf":
        raise TypeError(f"loss must be a matrix of real numbers, got dtype {raw.dtype}.")
    loss = raw.astype(np.float64)
    if loss.shape != (n_classes, n_classes):
        raise ValueError(f"loss must have shape (n_classes, n_classes) = ({n_classes}, "
                         f"{n_classes}), indexed [true, predicted] in classes_ order; got shape "
                         f"{loss.shape}.")
    if not np.isfinite(loss).all() or (loss < 0).any():
        raise ValueError("loss must contain finite, non-negative costs.")
    return loss


def check_priors(priors, n_classes):
    """Validate given class priors: n_classes finite, non-negative values summing to one."""
    try:
        priors = np.asarray(priors, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"priors must be numbers, got {priors!r}.") from None
    if priors.shape != (n_classes,):
        raise ValueError(f"Number of priors must match number of classes: priors has shape "
                         f"{priors.shape}, there are {n_classes} classes.")
    if not np.isfinite(priors).all() or (priors < 0).any() or (priors > 1).any():
        raise ValueError("Priors must be probabilities: finite, in [0, 1].")
    if not np.isclose(priors.sum(), 1.0):
        raise ValueError("The sum of the priors should be 1.")
    return priors


class BaseEstimator:
    """get_params/set_params/repr/tags following scikit-learn's conventions, without importing it."""

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Get the parameters of this estimator.

        Parameters
        ----------
        deep : bool, default=True
            Ignored (fastgen estimators have no sub-estimators); kept for scikit-learn compatibility.

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any):
        """Set the parameters of this estimator.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator instance
        """
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {valid!r}."
                )
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = []
        for name, value in self.get_params().items():
            default = defaults.get(name, inspect.Parameter.empty)
            same = value is default or (
                type(value) is type(default) and not isinstance(value, np.ndarray) and value == default
            )
            if not same:
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_is_fitted__(self):
        return hasattr(self, "n_features_in_")

    def __getstate__(self):
        return self.__dict__.copy()

    # Naive Bayes makes strong independence assumptions; scikit-learn tags its own NB models so
    # that generic accuracy checks do not demand more than the model can give.
    _poor_score = True

    def _more_input_tags(self):
        return {"sparse": True}

    def __sklearn_tags__(self):
        # Only scikit-learn calls this, so importing it here never happens at `import fastgen`.
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(poor_score=self._poor_score),
            input_tags=InputTags(**self._more_input_tags()),
        )

    def _check_n_features(self, X, reset):
        n_features = X.shape[1]
        if reset:
            self.n_features_in_ = n_features
        elif n_features != self.n_features_in_:
            raise ValueError(
                f"X has {n_features} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )

    def _check_feature_names(self, X, reset):
        """Record (reset) or compare DataFrame column names, with scikit-learn's messages."""
        names = get_feature_names(X)
        if reset:
            if names is not None:
                self.feature_names_in_ = names
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            return
        fitted = getattr(self, "feature_names_in_", None)
        if fitted is None and names is None:
            return
        if fitted is None:
            warnings.warn(f"X has feature names, but {type(self).__name__} was fitted without "
                          "feature names", stacklevel=4)
            return
        if names is None:
            warnings.warn(f"X does not have valid feature names, but {type(self).__name__} was "
                          "fitted with feature names", stacklevel=4)
            return
        if len(fitted) == len(names) and np.all(fitted == names):
            return
        unexpected, missing = sorted(set(names) - set(fitted)), sorted(set(fitted) - set(names))

        def listing(values):
            lines = [f"- {v}\n" for v in values[:5]]
            return "".join(lines) + ("- ...\n" if len(values) > 5 else "")

        message = "The feature names should match those that were passed during fit.\n"
        if unexpected:
            message += "Feature names unseen at fit time:\n" + listing(unexpected)
        if missing:
            message += "Feature names seen at fit time, yet now missing:\n" + listing(missing)
        if not unexpected and not missing:
            message += "Feature names must be in the same order as they were in fit.\n"
        raise ValueError(message)


def maps_dask(method):
    """Let a ``method(self, X, ...)`` of a fitted model take a dask collection: it then returns
    a lazy dask array computed partition by partition (fastgen._dask.predict)."""
    @functools.wraps(method)
    def wrapper(self, X, *args, **kwargs):
        if is_dask_collection(X):
            from . import _dask

            check_is_fitted(self)
            return _dask.predict(self, method.__name__, X, *args, **kwargs)
        return method(self, X, *args, **kwargs)
    return wrapper


class BaseClassifier(BaseEstimator):
    """Shared prediction paths of every fastgen classifier.

    Subclasses define ``_X_constraints`` (keyword arguments of ``check_X``), ``_dtype`` (the model's
    float dtype, set at fit), ``_score(X, kind, out, has_nan)`` writing the requested output, and
    the three steps of fitting on additive statistics: ``_check_batch`` (validate what a batch
    brings besides X and y), ``_reset`` (empty statistics for the classes) and ``_accumulate``
    (add a validated batch). ``_finish_fit`` runs at the end of ``fit`` only.
    """

    _X_constraints: dict = {}
    classes_: NDArray[Any]
    n_threads: int | None

    def _validate_X(self, X, reset, dtype=None, **constraints):
        """Validate X once at the boundary; returns ``(X, has_nan)`` (NaN only where the model
        allows it: missing values). constraints add to (or override) the class's _X_constraints
        (check_X's keywords). With reset (a new fit) nothing is recorded yet: fitting validates
        everything first and only then commits (``_set_input_features``), so a rejected call
        never leaves a half-updated model."""
        if not reset:
            self._check_feature_names(X, reset=False)
        X_valid, has_nan = check_X(X, estimator_name=type(self).__name__, dtype=dtype,
                                   **{**self._X_constraints, **constraints})
        if not reset:
            self._check_n_features(X_valid, reset=False)
        return X_valid, has_nan

    def _set_input_features(self, X, X_valid):
        """Record n_features_in_ and feature_names_in_ of a new fit (X as the user gave it)."""
        self._check_feature_names(X, reset=True)
        self._check_n_features(X_valid, reset=True)

    def _n_threads_for(self, work):
        return effective_n_threads(self.n_threads) if work >= PARALLEL_MIN_WORK else 1

    def _predict_output(self, X, kind):
        check_is_fitted(self)
        X, has_nan = self._validate_X(X, reset=False, dtype=self._dtype)
        out = np.empty((X.shape[0], len(self.classes_)), dtype=self._dtype)
        self._score(X, kind, out, has_nan)
        return out

    # ----------------------------------------------------------------- fitting
    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None):
        """Fit the model from scratch: accumulate the statistics and derive the parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            Training vectors. CSR is used as is where the model takes sparse input; other sparse
            formats are converted once; float32 stays float32. A dask collection is fitted
            partition by partition on its workers and the partitions' models are merged (see
            ``merge``); the result is an ordinary in-memory model.
        y : array-like or dask array/Series of shape (n_samples,)
            Target labels (any hashable values).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights applied to individual samples (1 for unweighted).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        effective_n_threads(self.n_threads)
        if is_dask_collection(X) or is_dask_collection(y):
            return self._adopt(self._fit_dask(X, y, sample_weight, None))
        X_valid, has_nan = self._validate_X(X, reset=True)
        y = check_y(y, X_valid.shape[0])
        classes, y_idx = encode_labels(y)
        checked = self._check_batch(X_valid, len(classes), sample_weight)
        self._set_input_features(X, X_valid)
        self._reset(classes, X_valid)
        self._accumulate(X_valid, y_idx, has_nan, *checked)
        self._finish_fit()
        return self

    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None):
        """Add a batch of samples to the statistics (incremental / out-of-core learning).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            Training vectors (a dask collection is fitted as in ``fit`` and merged in).
        y : array-like or dask array/Series of shape (n_samples,)
            Target labels, each of them in ``classes``.
        classes : array-like of shape (n_classes,), default=None
            Every label that can ever occur. Required on the first call, optional (and then must
            be the same) afterwards.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights applied to individual samples.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        effective_n_threads(self.n_threads)
        first = not self.__sklearn_is_fitted__()
        if first and classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        if classes is not None:
            classes = np.unique(np.asarray(classes))
            if classes.size == 0:
                raise ValueError("classes must name at least one class.")
            if not first and not (len(classes) == len(self.classes_)
                                  and np.all(classes == self.classes_)):
                raise ValueError(
                    f"`classes={classes!r}` is not the same as on last call to partial_fit, "
                    f"was: {self.classes_!r}"
                )
        if is_dask_collection(X) or is_dask_collection(y):
            part = self._fit_dask(X, y, sample_weight, classes if first else self.classes_)
            return self._adopt(part) if first else self.merge(part)
        X_valid, has_nan = self._validate_X(X, reset=first, dtype=None if first else self._dtype)
        y = check_y(y, X_valid.shape[0])
        known = classes if first else self.classes_
        y_idx = np.searchsorted(known, y)
        bad = (y_idx >= len(known)) | (known[np.minimum(y_idx, len(known) - 1)] != y)
        if bad.any():
            raise ValueError(
                f"The target label(s) {np.unique(y[bad])!r} in y do not exist in the initial "
                f"classes {known!r}"
            )
        checked = self._check_batch(X_valid, len(known), sample_weight)
        if first:
            self._set_input_features(X, X_valid)
            self._reset(classes, X_valid)
        self._accumulate(X_valid, y_idx, has_nan, *checked)
        return self

    def _finish_fit(self):
        """Run at the end of ``fit`` (not of ``partial_fit``); nothing by default."""

    def _fits_partitions_alone(self):
        """Whether a partition that sees only some of the classes can be fitted on its own, its
        model merged with the others' into the model of all the data: not with a parameter given
        per class (priors) or, in the discriminant models, a partition may hold a single class."""
        params = self.get_params(deep=False)
        return params.get("priors") is None and params.get("class_prior") is None

    def _fit_dask(self, X, y, sample_weight, classes):
        """A model of this kind fitted on dask collections (fastgen._dask.fit)."""
        from . import _dask

        return _dask.fit(self, X, y, sample_weight, classes)

    def _adopt(self, model):
        """Become ``model`` (a fitted model with this one's parameters), as a fit would."""
        self.__dict__.clear()
        self.__dict__.update(model.__dict__)
        self._finish_fit()
        return self

    # ----------------------------------------------------------------- combining models
    def merge(self, other):
        """Add another fitted model's statistics: afterwards this model is the one fitted on both
        models' data together (the statistics are additive), for parallel and distributed
        training. Classes seen by only one side are kept.

        Parameters
        ----------
        other : estimator of the same class
            Fitted on the same features with the same parameters (``n_threads`` aside).

        Returns
        -------
        self : object
            This estimator, updated.
        """
        if type(other) is not type(self):
            raise ValueError(f"Cannot merge a {type(other).__name__} into a "
                             f"{type(self).__name__}: the models must be of the same kind.")
        check_is_fitted(self)
        check_is_fitted(other)
        if other.n_features_in_ != self.n_features_in_:
            raise ValueError(f"Cannot merge models of {other.n_features_in_} and "
                             f"{self.n_features_in_} features.")
        mine, theirs = (getattr(m, "feature_names_in_", None) for m in (self, other))
        if (mine is None) != (theirs is None) or (mine is not None
                                                  and not np.array_equal(mine, theirs)):
            raise ValueError("Cannot merge models fitted on different feature names.")
        differ = [name for name, value in self.get_params().items()
                  if name != "n_threads" and not _same_param(value, other.get_params()[name])]
        if differ:
            raise ValueError(f"Cannot merge models with different parameters: {differ}.")
        classes = np.unique(np.concatenate([self.classes_, other.classes_]))
        mine, theirs = (np.searchsorted(classes, m.classes_) for m in (self, other))
        self._merge(other, classes, mine, theirs)  # the model's own statistics (class rows
        # spread over the merged classes); then what every model shares:
        n = len(classes)
        self.class_count_ = spread(self.class_count_, mine, n) + spread(other.class_count_,
                                                                        theirs, n)
        self.classes_ = classes
        self._rederive()
        return self

    def _rederive(self):
        """Rebuild the derived parameters from the statistics (after merge or load); this
        default serves the models whose only prior parameter is ``priors``."""
        priors = self.priors
        self._derive(None if priors is None else check_priors(priors, len(self.classes_)))

    # ----------------------------------------------------------------- model files
    def save(self, path) -> None:
        """Write the fitted model to a file (fastgen's documented format: no pickle, versioned,
        with a checksum); ``fastgen.load(path)`` reads it back exactly.

        Parameters
        ----------
        path : str or path-like
            Where to write the model.
        """
        from ._persist import save

        save(self, path)

    def _restore(self):
        """After loading a model file: check every statistic's shape against the classes and
        features, then rebuild what derives from them (nothing derived is trusted)."""
        classes = getattr(self, "classes_", None)
        n_features = getattr(self, "n_features_in_", None)
        if not isinstance(classes, np.ndarray) or classes.ndim != 1 or len(classes) < 1:
            raise ValueError("classes_ must be a non-empty 1-D array")
        if len(classes) > 1 and not np.all(classes[1:] > classes[:-1]):
            raise ValueError("classes_ must be sorted and unique")
        if not isinstance(n_features, int) or n_features < 1:
            raise ValueError("n_features_in_ must be a positive integer")
        if getattr(self, "_dtype", np.dtype(np.float64)) not in (np.float32, np.float64):
            raise ValueError("the model dtype must be float32 or float64")
        for name, shape in self._state_shapes(len(classes), n_features):
            value = getattr(self, name, None)
            if not isinstance(value, np.ndarray) or value.shape != shape or \
                    value.dtype.kind not in "iuf":
                raise ValueError(f"{name} must be a numeric array of shape {shape}")
        self._rederive()

    def _state_shapes(self, n_classes, n_features):
        """(attribute, shape) of the statistics (checked when a model file is loaded)."""
        return [("class_count_", (n_classes,))]

    # ----------------------------------------------------------------- generation
    def sample(self, n_samples: int = 1, y: Any = None, random_state: Any = None):
        """Generate samples from the fitted model (seed 004: a generative model can generate data
        given the label).

        Parameters
        ----------
        n_samples : int, default=1
            Number of samples.
        y : label or array-like of labels, default=None
            None draws each sample's class from the class prior; one label gives every sample
            that class; an array gives one label per sample (its length is then the number of
            samples).
        random_state : int, numpy Generator or RandomState, default=None
            Seed of the random draws.

        Returns
        -------
        X : ndarray or sparse matrix of shape (n_samples, n_features)
            The features, drawn from P(x | y).
        y : ndarray of shape (n_samples,)
            The labels.
        """
        check_is_fitted(self)
        rng = _generator(random_state)
        n_classes = len(self.classes_)
        if not isinstance(n_samples, (int, np.integer)) or not 1 <= n_samples <= MAX_SAMPLES:
            raise ValueError(f"n_samples must be an integer in [1, {MAX_SAMPLES}], got "
                             f"{n_samples!r}.")
        if y is None:
            prior = self._class_prior()
            if not prior.max(initial=0.0) > 0:
                raise ValueError("The class prior is zero for every class: pass y to choose "
                                 "the classes to sample.")
            prior = prior / prior.max()  # given priors need not sum to one (nor fit a float sum)
            y_idx = rng.choice(n_classes, size=n_samples, p=prior / prior.sum())
        else:
            labels = np.asarray(y)
            if labels.ndim == 1 and not 1 <= len(labels) <= MAX_SAMPLES:
                raise ValueError(f"y must give between 1 and {MAX_SAMPLES} labels.")
            if labels.ndim == 0:
                labels = np.full(n_samples, labels)
            y_idx = np.searchsorted(self.classes_, labels)
            bad = (y_idx >= n_classes) | (self.classes_[np.minimum(y_idx, n_classes - 1)]
                                          != labels)
            if labels.ndim != 1 or bad.any():
                raise ValueError(f"y must be labels from classes_ {self.classes_!r}; got "
                                 f"{np.unique(labels[bad]) if labels.ndim == 1 else labels!r}.")
        return self._sample_X(np.asarray(y_idx, dtype=np.intp), rng), self.classes_[y_idx]

    def _class_prior(self):
        for name in ("class_prior_", "priors_"):
            if hasattr(self, name):
                return np.asarray(getattr(self, name), dtype=np.float64)
        return np.exp(self.class_log_prior_)

    @maps_dask
    def predict_joint_log_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """Return the joint log-likelihood log P(x, y=c) of each sample and class.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            The samples. For a dask collection the result is a lazy dask array, computed
            partition by partition.

        Returns
        -------
        jll : ndarray of shape (n_samples, n_classes)
            Unnormalised log-posteriors ``log P(c) + log P(x | c)``, columns in ``classes_`` order.
        """
        return self._predict_output(X, OUT_JLL)

    @maps_dask
    def predict_log_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """Return log P(y=c | x), normalised by a max-shifted log-sum-exp (never underflows).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            The samples. For a dask collection the result is a lazy dask array, computed
            partition by partition.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-posteriors, columns in ``classes_`` order.
        """
        return self._predict_output(X, OUT_LOG_PROBA)

    @maps_dask
    def predict_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """Return the posterior probabilities P(y=c | x).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            The samples. For a dask collection the result is a lazy dask array, computed
            partition by partition.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Posteriors (rows sum to one), columns in ``classes_`` order.
        """
        return self._predict_output(X, OUT_PROBA)

    @maps_dask
    def predict(self, X: MatrixLike, loss: ArrayLike | None = None) -> NDArray[Any]:
        """Predict the class of minimum expected loss (maximum posterior under 0-1 loss).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            The samples. For a dask collection the result is a lazy dask array, computed
            partition by partition.
        loss : array-like of shape (n_classes, n_classes), default=None
            ``loss[true, predicted]``, in ``classes_`` order: the cost of predicting class k when
            the truth is c. The prediction minimises the conditional risk
            ``sum_c P(c | x) loss[c, k]`` (seed 001). None is the 0-1 loss: the most probable
            class.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels from ``classes_``.
        """
        if loss is None:
            # argmax of the log-posterior rather than of the jll: for float32 models the rounded
            # log-posteriors are what predict_proba shows, so predict agrees with it on near-ties
            log_proba = self._predict_output(X, OUT_LOG_PROBA)
            return self.classes_[np.argmax(log_proba, axis=1)]
        check_is_fitted(self)
        loss = check_loss(loss, len(self.classes_))
        if loss.max() > 0:  # the decision does not change with the scale; avoid overflow
            loss = loss / loss.max()
        risk = self._predict_output(X, OUT_PROBA).astype(np.float64) @ loss
        return self.classes_[np.argmin(risk, axis=1)]

    @maps_dask
    def decision_function(self, X: MatrixLike) -> NDArray[np.floating]:
        """Posterior log-odds (two classes) or log-posteriors (more classes).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            The samples. For a dask collection the result is a lazy dask array, computed
            partition by partition.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            With two classes ``log P(c1 | x) - log P(c0 | x)`` (seeds 001/002: positive means
            ``classes_[1]``); otherwise ``log P(c | x)`` per class.
        """
        log_proba = self._predict_output(X, OUT_LOG_PROBA)
        if len(self.classes_) == 2:
            with np.errstate(invalid="ignore"):
                return log_proba[:, 1] - log_proba[:, 0]
        return log_proba

    def score(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Return the (weighted) accuracy of ``predict(X)`` against ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            Mean accuracy.
        """
        y_pred = self.predict(X)
        y = np.asarray(y)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, y_pred.shape[0])
        if y.shape != y_pred.shape:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: "
                f"[{y_pred.shape[0]}, {y.shape[0] if y.ndim else 0}]"
            )
        return float(np.average(y_pred == y, weights=sample_weight))
