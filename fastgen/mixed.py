"""MixedNB: one naive Bayes over columns of different kinds.

Each kind of column is modelled by the fastgen model for it, fitted on those columns with a
uniform prior; the joint log-likelihood is the class prior plus every part's per-feature
log-likelihoods (each part's own uniform prior taken out), all in log space. Missing values are
marginalised in every kind, so a DataFrame with NaN/None in any column is used as it is.
"""
from __future__ import annotations

import copy
import numbers

import numpy as np
from numpy.typing import ArrayLike

from ._base import OUT_JLL, BaseClassifier, check_priors
from ._core import jll as _jll
from ._validation import check_sample_weight, check_X
from .naive_bayes import (
    MAX_SMOOTHING,
    CategoricalNB,
    GaussianNB,
    MultinomialNB,
    PoissonNB,
)

__all__ = ["MixedNB"]

KINDS = ("gaussian", "categorical", "bernoulli", "poisson", "multinomial")


def _as_slice(columns):
    """A slice for consecutive column indices (a view, copied far faster than a gather)."""
    if len(columns) and columns[-1] - columns[0] + 1 == len(columns):
        return slice(columns[0], columns[-1] + 1)
    return columns


def _infer_kind(dtype):
    """A DataFrame column's kind from its dtype: bool, category, object and strings are
    categorical; numbers are gaussian."""
    kind = getattr(dtype, "kind", "O")
    if str(dtype) in ("category", "boolean", "string") or kind in "bOSU":
        return "categorical"
    if kind in "iuf":
        return "gaussian"
    raise TypeError(f"MixedNB cannot infer a kind for columns of dtype {dtype}; pass "
                    "feature_types.")


class MixedNB(BaseClassifier):
    """Naive Bayes over columns of different kinds, with missing values marginalised.

    Parameters
    ----------
    feature_types : list of str, default=None
        One kind per column: "gaussian", "categorical" (codes 0..K-1, or any labels in a
        DataFrame), "bernoulli" (present when > 0), "poisson" (counts) or "multinomial" (the
        columns of this kind form one block of counts). None infers them from a DataFrame's
        dtypes (bool, category, object and string columns are categorical; numbers gaussian);
        for an array, None means every column is gaussian.
    alpha : float, default=1.0
        Smoothing of the categorical, Bernoulli, Poisson and multinomial parts.
    var_smoothing : float, default=1e-9
        Variance smoothing of the gaussian part (see ``GaussianNB``).
    priors : array-like of shape (n_classes,), default=None
        Class priors; if None, the (weighted) class frequencies.
    handle_unknown : {"error", "ignore"}, default="error"
        A categorical value not seen in training: an error, or marginalised.
    n_threads : int, default=None
        OpenMP threads of the kernels: None uses the OpenMP default (all cores, or
        ``OMP_NUM_THREADS``, or a ``threadpoolctl`` limit), a positive number that many, a
        negative one counts back from all cores. Batches below about 200,000 multiply-adds run
        on one thread. Results do not depend on it.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    class_count_ : ndarray of shape (n_classes,)
        Weight of the training samples of each class.
    class_prior_ : ndarray of shape (n_classes,)
        Class priors.
    feature_types_ : list of str
        The kind of every column.
    categories_ : dict
        For categorical DataFrame columns: column index -> the labels, in code order.
    parts_ : dict
        Kind -> (column indices, the fitted fastgen model of those columns).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (DataFrame input only).

    Notes
    -----
    ``log P(c, x) = log P(c) + sum over kinds of sum_j log P(x_j | c)`` over the observed values.
    A "bernoulli" column is a categorical one with the two values absent/present, so that a
    missing value is marginalised and the probabilities use the observed values. In a
    "multinomial" block a missing count is dropped from the sum.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import MixedNB
    >>> X = np.array([[1.0, 0, 3], [1.2, 0, 4], [5.0, 1, 0], [5.5, 1, np.nan]])
    >>> model = MixedNB(["gaussian", "categorical", "poisson"]).fit(X, [0, 0, 1, 1])
    >>> model.predict([[1.1, np.nan, 2], [np.nan, 1, np.nan]])
    array([0, 1])
    """

    _poor_score = True

    def __init__(self, feature_types: list[str] | None = None, *, alpha: float = 1.0,
                 var_smoothing: float = 1e-9, priors: ArrayLike | None = None,
                 handle_unknown: str = "error", n_threads: int | None = None):
        self.feature_types = feature_types
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.priors = priors
        self.handle_unknown = handle_unknown
        self.n_threads = n_threads

    def __sklearn_is_fitted__(self):
        return hasattr(self, "parts_")

    def _more_input_tags(self):
        return {"sparse": False, "allow_nan": True}

    # ----------------------------------------------------------------- input
    def _resolve_types(self, X, n_features):
        if self.feature_types is None:
            if hasattr(X, "dtypes") and hasattr(X, "columns"):
                return [_infer_kind(dtype) for dtype in X.dtypes]
            return ["gaussian"] * n_features
        types = list(self.feature_types)
        if len(types) != n_features or any(t not in KINDS for t in types):
            raise ValueError(f"feature_types must give one of {KINDS} for each of the "
                             f"{n_features} columns, got {self.feature_types!r}.")
        return types

    def _encode(self, X, types, categories, reset):
        """A float64 matrix: DataFrame categorical columns as codes (learned at reset), missing
        values (NaN, None, pd.NA, NaT) as NaN."""
        if not (hasattr(X, "dtypes") and hasattr(X, "columns")):
            return X, categories
        import pandas as pd  # a DataFrame was passed, so pandas is there

        columns = []
        categories = dict(categories)
        for j, kind in enumerate(types):
            column = X.iloc[:, j]
            if kind == "categorical" and (not pd.api.types.is_numeric_dtype(column.dtype)
                                          or pd.api.types.is_bool_dtype(column.dtype)):
                if reset:
                    categories[j] = np.asarray(pd.Categorical(column.dropna()).categories)
                elif j not in categories:
                    raise ValueError(f"Column {X.columns[j]!r} holds labels, but the model was "
                                     "fitted with numeric codes in that column.")
                # -1 for missing values and for labels not seen in training
                codes = pd.Index(categories[j]).get_indexer(column).astype(np.float64)
                unknown = (codes < 0) & column.notna().to_numpy()
                if unknown.any():
                    if self.handle_unknown == "error":
                        raise ValueError(f"Column {X.columns[j]!r} has a value not seen in "
                                         f"training ({column[unknown].iloc[0]!r}); use "
                                         "handle_unknown='ignore' to marginalise it.")
                codes[codes < 0] = np.nan
                columns.append(codes)
            else:
                try:
                    columns.append(column.to_numpy(dtype=np.float64, na_value=np.nan))
                except (TypeError, ValueError):
                    raise ValueError(f"Column {X.columns[j]!r} of kind {kind!r} is not numeric; "
                                     "declare it 'categorical' in feature_types.") from None
        return np.column_stack(columns) if columns else np.empty((len(X), 0)), categories

    def _validate_X(self, X, reset, dtype=None):
        if not reset:
            self._check_feature_names(X, reset=False)
            types, categories = self.feature_types_, self.categories_
        else:
            n_features = X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else None
            types = self._resolve_types(X, n_features if n_features is not None
                                        else np.asarray(X).shape[-1])
            categories = {}
        if self.handle_unknown not in ("error", "ignore"):
            raise ValueError(f"handle_unknown must be 'error' or 'ignore', got "
                             f"{self.handle_unknown!r}.")
        encoded, categories = self._encode(X, types, categories, reset)
        X_valid, has_nan = check_X(encoded, estimator_name=type(self).__name__,
                                   dtype=np.float64, allow_nan=True, accept_sparse=False,
                                   accept_int=False, max_abs=1e150)
        if not reset:
            self._check_n_features(X_valid, reset=False)
        else:
            types = self._resolve_types(X, X_valid.shape[1])
            self._pending = (types, categories)
        return X_valid, has_nan

    # ----------------------------------------------------------------- statistics
    def _check_batch(self, X, n_classes, sample_weight):
        for name in ("alpha", "var_smoothing"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or isinstance(value, bool) or not (
                    0 <= float(value) <= MAX_SMOOTHING):
                raise ValueError(f"{name} must be a number in [0, {MAX_SMOOTHING:g}], got "
                                 f"{value!r}.")
        priors = None if self.priors is None else check_priors(self.priors, n_classes)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        # every part checks its block before any part learns from it: a batch one part rejects
        # must leave the whole model unchanged
        kinds = np.asarray(self._pending[0] if hasattr(self, "_pending") else self.feature_types_)
        for kind in KINDS:
            columns = np.flatnonzero(kinds == kind)
            if columns.size:
                part = self._new_part(kind, n_classes)
                block, _ = part._validate_X(self._part_input(kind, X[:, _as_slice(columns)]),
                                            reset=True)
                part._check_batch(block, n_classes, sample_weight)
        return sample_weight, priors

    def _new_part(self, kind, n_classes):
        """The model of one kind of column, with a uniform class prior (taken out again when
        scoring: the class prior is MixedNB's own)."""
        common = {"n_threads": self.n_threads}
        if kind == "gaussian":
            return GaussianNB(priors=np.full(n_classes, 1.0 / n_classes),
                              var_smoothing=self.var_smoothing, **common)
        if kind == "categorical":
            return CategoricalNB(alpha=self.alpha, fit_prior=False,
                                 handle_unknown=self.handle_unknown, **common)
        if kind == "bernoulli":
            return CategoricalNB(alpha=self.alpha, fit_prior=False, min_categories=2, **common)
        if kind == "poisson":
            return PoissonNB(alpha=self.alpha, fit_prior=False, **common)
        return MultinomialNB(alpha=self.alpha, fit_prior=False, **common)

    def _reset(self, classes, X):
        self.feature_types_, self.categories_ = self._pending
        del self._pending
        self.classes_ = classes
        self.class_count_ = np.zeros(len(classes))
        self._dtype = np.dtype(np.float64)
        kinds = np.asarray(self.feature_types_)
        self.parts_ = {kind: (np.flatnonzero(kinds == kind), self._new_part(kind, len(classes)))
                       for kind in KINDS if (kinds == kind).any()}

    @staticmethod
    def _part_input(kind, X):
        if kind == "bernoulli":
            return np.where(np.isnan(X), np.nan, (X > 0).astype(np.float64))
        if kind == "multinomial":
            return np.where(np.isnan(X), 0.0, X)
        return X

    def _accumulate(self, X, y_idx, has_nan, sample_weight, priors):
        labels = self.classes_[y_idx]
        for kind, (columns, part) in self.parts_.items():
            part.partial_fit(self._part_input(kind, X[:, _as_slice(columns)]), labels,
                             classes=self.classes_,
                             sample_weight=sample_weight)
        self.class_count_ = self.class_count_ + np.bincount(
            y_idx, weights=sample_weight, minlength=len(self.classes_))
        self._priors = priors
        self.class_prior_ = priors if priors is not None else (
            self.class_count_ / self.class_count_.sum())

    def _merge(self, other, classes, mine, theirs):
        if self.feature_types_ != other.feature_types_ or self.categories_.keys() != \
                other.categories_.keys() or any(not np.array_equal(self.categories_[j],
                                                                   other.categories_[j])
                                                for j in self.categories_):
            raise ValueError("Cannot merge MixedNB models whose columns have different kinds or "
                             "categorical labels.")
        n = len(classes)
        for kind, (_, part) in self.parts_.items():
            other_part = other.parts_[kind][1]
            if kind == "gaussian":  # the uniform prior of the merged classes on both sides
                other_part = copy.copy(other_part).set_params(priors=np.full(n, 1.0 / n))
                part.set_params(priors=np.full(n, 1.0 / n))
            part.merge(other_part)

    def _rederive(self):
        n = len(self.classes_)
        priors = None if self.priors is None else check_priors(self.priors, n)
        self.class_prior_ = priors if priors is not None else (
            self.class_count_ / self.class_count_.sum())

    def _state_shapes(self, n_classes, n_features):
        types = self.feature_types_
        if not isinstance(types, list) or len(types) != n_features or \
                any(t not in KINDS for t in types):
            raise ValueError("feature_types_ must give a kind per feature")
        seen = np.zeros(n_features, dtype=int)
        for kind, (columns, part) in self.parts_.items():
            columns = np.asarray(columns)
            if kind not in KINDS or columns.dtype.kind not in "iu" or columns.ndim != 1 or \
                    (columns < 0).any() or (columns >= n_features).any():
                raise ValueError(f"the columns of the {kind!r} part are out of range")
            if part.n_features_in_ != len(columns) or not np.array_equal(part.classes_,
                                                                         self.classes_):
                raise ValueError(f"the {kind!r} part does not match the model")
            seen[columns] += 1
        if (seen != 1).any():
            raise ValueError("every column must belong to exactly one part")
        return [("class_count_", (n_classes,))]

    def _sample_X(self, y_idx, rng):
        """Each kind's columns drawn by its part; a DataFrame (with the original labels of the
        categorical columns) when the model was fitted on one."""
        X = np.empty((len(y_idx), self.n_features_in_))
        for kind, (columns, part) in self.parts_.items():
            block = part._sample_X(y_idx, rng)
            X[:, columns] = block.toarray() if hasattr(block, "toarray") else block
        if not hasattr(self, "feature_names_in_"):
            return X
        import pandas as pd  # fitted on a DataFrame, so pandas is there

        columns = {name: (self.categories_[j][X[:, j].astype(np.intp)] if j in self.categories_
                          else X[:, j]) for j, name in enumerate(self.feature_names_in_)}
        return pd.DataFrame(columns)

    def _score(self, X, kind, out, has_nan):
        n_classes = len(self.classes_)
        with np.errstate(divide="ignore"):
            jll = np.empty((X.shape[0], n_classes))
            jll[...] = np.log(self.class_prior_) + len(self.parts_) * np.log(n_classes)
        part_jll = np.empty_like(jll)
        for part_kind, (columns, part) in self.parts_.items():
            X_part = np.ascontiguousarray(self._part_input(part_kind, X[:, _as_slice(columns)]))
            if part_kind in ("gaussian", "categorical", "bernoulli"):
                # X was validated (finite floats, NaN = missing): all these parts accept
                part._score(X_part, OUT_JLL, part_jll, has_nan)
            else:  # counts must also be non-negative: the part validates its block
                part_jll = part._predict_output(X_part, OUT_JLL)
            jll += part_jll  # (each part's uniform prior, -log(n_classes), is taken out above)
        if kind != OUT_JLL and _jll.normalize_rows_inplace(jll, kind, 1):
            raise MemoryError("could not allocate the scoring kernel's row buffers")
        out[...] = jll
