"""BaselineClassifier: the most-frequent-class baseline every result should be compared with."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._base import BaseClassifier, check_priors, class_prior
from ._core import jll as _jll
from ._state import CLASSES, Field, parameter

__all__ = ["BaselineClassifier"]


class BaselineClassifier(BaseClassifier):
    """Predict from the class prior alone, ignoring the features.

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

    def _more_input_tags(self):
        return {"sparse": True, "allow_nan": True}

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        return (Field("class_count_", (CLASSES,)),)

    def _check_params(self, n_classes, X, fitted):
        return {"priors": check_priors(self, n_classes)}

    def _add(self, stats, X, members, has_nan, hyper):
        return {"class_count_": stats["class_count_"] + members.class_weight()}

    # ----------------------------------------------------------------- parameters
    def _derive(self, fitted):
        return _Params(*class_prior(fitted.stats["class_count_"], fitted.hyper["priors"]))

    class_prior_ = parameter("prior", "ndarray of shape (n_classes,): P(c), what "
                             "predict_proba returns for every row.")

    # ----------------------------------------------------------------- scoring and sampling
    def _score(self, params, X, kind, out, has_nan):
        out[...] = params.log_prior
        if _jll.normalize_rows_inplace(out, kind, 1):
            raise MemoryError("could not allocate the scoring kernel's row buffers")

    def _sample_X(self, fitted, y_idx, rng):
        raise TypeError("BaselineClassifier has no model of X (it predicts from the class prior "
                        "alone), so it cannot generate features.")


class _Params(NamedTuple):
    prior: np.ndarray
    log_prior: np.ndarray
