"""Base classes: parameters, scikit-learn protocol, and the shared predict/score paths.

Subclasses implement ``_score``: given input validated by ``_validate_X``, write joint
log-likelihoods, log-posteriors or posteriors with one kernel call. Everything that all classifiers share -- argmax decisions, accuracy, the estimator
protocol (get_params/set_params/clone/repr/tags) -- lives here once.
"""
from __future__ import annotations

import inspect
import warnings
from typing import TYPE_CHECKING, Any, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._core._openmp import effective_n_threads
from ._validation import check_is_fitted, check_X, get_feature_names

# Output kinds understood by the scoring kernels (fastgen/_core/_lse.pxd).
OUT_JLL, OUT_LOG_PROBA, OUT_PROBA = 0, 1, 2

# What the public methods accept as X: anything array-like, or a scipy sparse matrix/array.
if TYPE_CHECKING:
    MatrixLike = Union[ArrayLike, sp.spmatrix, sp.sparray]
else:  # annotations are not evaluated at run time, and sparray needs scipy >= 1.11
    MatrixLike = Any

# Below this many multiply-adds a batch is scored on one thread: waking threads costs more.
PARALLEL_MIN_WORK = 200_000


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


class BaseClassifier(BaseEstimator):
    """Shared prediction paths of every fastgen classifier.

    Subclasses define ``_X_constraints`` (keyword arguments of ``check_X``), ``_dtype`` (the model's
    float dtype, set at fit), and ``_score(X, kind, out, n_threads)`` writing the requested output.
    """

    _X_constraints: dict = {}
    classes_: NDArray[Any]
    n_threads: int | None

    def _validate_X(self, X, reset, dtype=None):
        """Validate X once at the boundary. With reset (a new fit) nothing is recorded yet:
        fitting validates everything first and only then commits (``_set_input_features``), so a
        rejected call never leaves a half-updated model."""
        if not reset:
            self._check_feature_names(X, reset=False)
        X_valid = check_X(X, estimator_name=type(self).__name__, dtype=dtype,
                          **self._X_constraints)
        if not reset:
            self._check_n_features(X_valid, reset=False)
        return X_valid

    def _set_input_features(self, X, X_valid):
        """Record n_features_in_ and feature_names_in_ of a new fit (X as the user gave it)."""
        self._check_feature_names(X, reset=True)
        self._check_n_features(X_valid, reset=True)

    def _n_threads_for(self, work):
        return effective_n_threads(self.n_threads) if work >= PARALLEL_MIN_WORK else 1

    def _predict_output(self, X, kind):
        check_is_fitted(self)
        X = self._validate_X(X, reset=False, dtype=self._dtype)
        out = np.empty((X.shape[0], len(self.classes_)), dtype=self._dtype)
        self._score(X, kind, out)
        return out

    def predict_joint_log_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """Return the joint log-likelihood log P(x, y=c) of each sample and class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        jll : ndarray of shape (n_samples, n_classes)
            Unnormalised log-posteriors ``log P(c) + log P(x | c)``, columns in ``classes_`` order.
        """
        return self._predict_output(X, OUT_JLL)

    def predict_log_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """Return log P(y=c | x), normalised by a max-shifted log-sum-exp (never underflows).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-posteriors, columns in ``classes_`` order.
        """
        return self._predict_output(X, OUT_LOG_PROBA)

    def predict_proba(self, X: MatrixLike) -> NDArray[np.floating]:
        """Return the posterior probabilities P(y=c | x).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Posteriors (rows sum to one), columns in ``classes_`` order.
        """
        return self._predict_output(X, OUT_PROBA)

    def predict(self, X: MatrixLike) -> NDArray[Any]:
        """Predict the class of maximum posterior probability (the Bayes rule under 0-1 loss).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels from ``classes_``.
        """
        # argmax of the log-posterior rather than of the jll: for float32 models the rounded
        # log-posteriors are what predict_proba shows, so predict agrees with it on near-ties
        log_proba = self._predict_output(X, OUT_LOG_PROBA)
        return self.classes_[np.argmax(log_proba, axis=1)]

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
        if y.shape != y_pred.shape:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: "
                f"[{y_pred.shape[0]}, {y.shape[0] if y.ndim else 0}]"
            )
        return float(np.average(y_pred == y, weights=sample_weight))
