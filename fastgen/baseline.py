"""BaselineClassifier: the most-frequent-class baseline every result should be compared with."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._base import BaseClassifier, check_priors
from ._core import jll as _jll
from ._validation import check_sample_weight

__all__ = ["BaselineClassifier"]


class BaselineClassifier(BaseClassifier):
    """Predict from the class prior alone, ignoring the features (seed 002's baseline).

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Given class priors; if None, the (weighted) class frequencies.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    class_count_ : ndarray of shape (n_classes,)
        Weight of the training samples of each class.
    class_prior_ : ndarray of shape (n_classes,)
        Probability of each class: what ``predict_proba`` returns for every row.
    n_features_in_ : int
        Number of features seen during fit (their values are never used).

    Examples
    --------
    >>> from fastgen import BaselineClassifier
    >>> model = BaselineClassifier().fit([[0], [1], [2]], ["a", "b", "b"])
    >>> model.predict([[5]]), model.predict_proba([[5]]).round(3)
    (array(['b'], dtype='<U1'), array([[0.333, 0.667]]))
    """

    _X_constraints: dict = {"allow_nan": True}
    _poor_score = True
    n_threads = 1  # nothing to parallelise

    def __init__(self, priors: ArrayLike | None = None):
        self.priors = priors

    def __sklearn_is_fitted__(self):
        return hasattr(self, "class_prior_")

    def _more_input_tags(self):
        return {"sparse": True, "allow_nan": True}

    def _check_batch(self, X, n_classes, sample_weight):
        priors = None if self.priors is None else check_priors(self.priors, n_classes)
        return check_sample_weight(sample_weight, X.shape[0]), priors

    def _reset(self, classes, X):
        self.classes_ = classes
        self.class_count_ = np.zeros(len(classes))
        self._dtype = X.dtype if X.dtype == np.float32 else np.dtype(np.float64)

    def _accumulate(self, X, y_idx, has_nan, sample_weight, priors):
        self.class_count_ = self.class_count_ + np.bincount(
            y_idx, weights=sample_weight, minlength=len(self.classes_))
        self._derive(priors)

    def _derive(self, priors):
        self.class_prior_ = priors if priors is not None else (
            self.class_count_ / self.class_count_.sum())

    def _merge(self, other, classes, mine, theirs):
        """Nothing beyond the class counts, which merge() adds."""

    def _sample_X(self, y_idx, rng):
        raise TypeError("BaselineClassifier has no model of X (it predicts from the class prior "
                        "alone), so it cannot generate features.")

    def _score(self, X, kind, out, has_nan):
        with np.errstate(divide="ignore"):
            out[...] = np.log(self.class_prior_)
        if _jll.normalize_rows_inplace(out, kind, 1):
            raise MemoryError("could not allocate the scoring kernel's row buffers")
