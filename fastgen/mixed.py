"""MixedNB: one naive Bayes over columns of different kinds.

Each kind of column is modelled by the fastgen model for it, with a uniform prior: MixedNB's
declared statistics are the class counts and every part's statistics (named "kind.field"), and
each part's own hooks add to, derive and score its columns. The joint log-likelihood is the
class prior plus every part's per-feature log-likelihoods (each part's own uniform prior taken
out), all in log space. Missing values are
marginalised in every kind, so a DataFrame with NaN/None in any column is used as it is.
"""
from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._bayes import Conjugate
from ._base import OUT_JLL, BaseClassifier, check_priors, class_prior, spread
from ._core import jll as _jll
from ._frame import (
    LabelColumns,
    check_categories,
    check_category_counts,
    holds_numbers,
    is_frame,
    learn_categories,
    same_categories,
    sampled_frame,
)
from ._state import CLASSES, FEATURES, Field, Fitted, fitted_attribute, parameter, readonly
from ._validation import (
    InvalidParameterError,
    check_bool,
    invalid_parameter,
    plain_choice,
    real_in,
)
from .naive_bayes import (
    MAX_SMOOTHING,
    CategoricalNB,
    GaussianNB,
    MultinomialNB,
    PoissonNB,
    check_handle_unknown,
)

__all__ = ["MixedNB"]

KINDS = ("gaussian", "categorical", "bernoulli", "poisson", "multinomial")


def _order(types):
    """The columns in the parts' order: every kind's columns together, kinds in KINDS' order (so
    that each part's block of the validated X is a slice, a view, not a gather); None when that
    is their own order."""
    order = np.argsort([KINDS.index(t) for t in types], kind="stable")
    return None if (order == np.arange(len(order))).all() else order


def _blocks(parts):
    """Each part's columns (``hyper["parts"]``, in KINDS' order) in the parts' order: a slice."""
    ends = np.cumsum([len(columns) for columns, _, _ in parts.values()]).tolist()
    return {kind: slice(end - len(parts[kind][0]), end) for kind, end in zip(parts, ends)}


def _infer_kind(dtype):
    """A DataFrame column's kind from its dtype: bool, category, object and strings are
    categorical; numbers are gaussian."""
    kind = getattr(dtype, "kind", "O")
    if str(dtype) in ("category", "boolean", "string") or kind == "b" or \
            getattr(dtype, "_is_boolean", False):
        return "categorical"
    if holds_numbers(dtype):  # (booleans are above; Arrow's decimals are of kind "O")
        return "gaussian"
    if kind in "OSU":
        return "categorical"
    raise TypeError(f"MixedNB cannot infer a kind for columns of dtype {dtype}; pass "
                    "feature_types.")


class MixedNB(LabelColumns, Conjugate, BaseClassifier):
    """Naive Bayes over columns of different kinds, with missing values marginalised.

    Parameters
    ----------
    feature_types : list of str, default=None
        One kind per column: "gaussian", "categorical" (codes 0..K-1, or any labels in a
        DataFrame), "bernoulli" (present when > 0), "poisson" (counts) or "multinomial" (the
        columns of this kind form one block of counts). None infers them from a DataFrame's
        dtypes (bool, category, object and string columns are categorical; numbers gaussian);
        for an array, None means every column is gaussian.
    alpha : float or "evidence", default=1.0
        Smoothing of the categorical, Bernoulli, Poisson and multinomial parts (the scale of
        their Dirichlet, Beta or Gamma priors); ``"evidence"``: each part takes the alpha that
        maximises its own evidence (see the parts' ``alpha_`` in ``parts_``).
    var_smoothing : float, default=1e-9
        Variance smoothing of the gaussian part (see ``GaussianNB``).
    prior_strength : float, pair of floats or "evidence", default=1.0
        The weight, in pseudo-observations, of the gaussian part's Normal-Inverse-Gamma prior,
        centred on each column's overall mean with its overall variance (see ``GaussianNB``).
    priors : array-like of shape (n_classes,), default=None
        Class priors; if None, the (weighted) class frequencies.
    handle_unknown : {"error", "ignore"}, default="error"
        A categorical value not seen in training: an error, or marginalised. In a later
        ``partial_fit`` batch an unknown label is always an error.
    predictive : bool, default=False
        Score every part with its posterior predictive (see each part's model) instead of its
        plug-in estimate.
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
    log_evidence_ : float
        Log marginal likelihood of the training features given their labels: the sum of the
        parts' (each with the terms its model leaves out; see their Notes).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit (DataFrame input only).

    Notes
    -----
    ``log P(c, x) = log P(c) + sum over kinds of sum_j log P(x_j | c)`` over the observed values.
    A categorical DataFrame column of labels learns its categories at the first fit: the sorted
    distinct labels seen, or every category of a pandas CategoricalDtype, used or not (so that
    batches streamed through ``partial_fit`` can declare them up front); it has as many
    categories as labels. A column given later must hold the same kind of values it held in
    training (labels or numbers), or it is an error naming it.
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
    _X_constraints: dict = {"allow_nan": True, "accept_sparse": False, "accept_int": False,
                            "max_abs": 1e150}

    def __init__(self, feature_types: list[str] | None = None, *, alpha: float | str = 1.0,
                 var_smoothing: float = 1e-9, prior_strength: float | tuple | str = 1.0,
                 priors: ArrayLike | None = None, handle_unknown: str = "error",
                 predictive: bool = False, n_threads: int | None = None):
        self.feature_types = feature_types
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.prior_strength = prior_strength
        self.priors = priors
        self.handle_unknown = handle_unknown
        self.predictive = predictive
        self.n_threads = n_threads

    def _more_input_tags(self):
        return {"sparse": False, "allow_nan": True}

    # ----------------------------------------------------------------- input
    def _resolve_types(self, X, n_features):
        if self.feature_types is None:
            if hasattr(X, "dtypes") and hasattr(X, "columns"):
                return [_infer_kind(dtype) for dtype in X.dtypes]
            return ["gaussian"] * n_features
        types = [plain_choice(t, KINDS) for t in self.feature_types]
        if len(types) != n_features or None in types:
            raise InvalidParameterError(f"feature_types must give one of {KINDS} for each of "
                                        f"the {n_features} columns, got "
                                        f"{self.feature_types!r}.")
        return types

    def _new_shell(self, X):
        """The columns' kinds and a DataFrame's categories, learned from X's form."""
        shape = getattr(X, "shape", None)
        if shape is None or len(shape) != 2:
            shape = np.shape(np.asarray(X, dtype=object))
        if len(shape) != 2:
            raise ValueError(f"Expected a 2D array, got an array of shape {shape} instead.")
        types = self._resolve_types(X, shape[1])
        categories = learn_categories(X, [j for j, kind in enumerate(types)
                                          if kind == "categorical"]) if is_frame(X) else {}
        return Fitted(None, len(types), np.dtype(np.float64), None, None, None,
                      extra={"feature_types": types, "categories": categories})

    def _validate_X(self, X, fitted, dtype=None, learning=False):
        """X validated, its columns in the parts' order (see ``_order``): a DataFrame is read
        into that order directly, an array is gathered into it."""
        frame = is_frame(X)
        X, has_nan = super()._validate_X(X, fitted, dtype, learning)
        order = self._order_of(fitted)
        return (X if frame or order is None else X[:, order]), has_nan

    def _order_of(self, fitted):
        if "order" not in fitted.memo:  # (a race computes it twice, the same)
            fitted.memo["order"] = _order(fitted.extra["feature_types"])
        return fitted.memo["order"]

    def _positions(self, fitted):
        order = self._order_of(fitted)
        if order is None:
            return None
        positions = np.empty_like(order)
        positions[order] = np.arange(len(order))
        return positions

    # ----------------------------------------------------------------- the parts
    def _new_part(self, kind, n_classes, columns, categories):
        """The model of one kind of column, with a uniform class prior (taken out again when
        scoring: the class prior is MixedNB's own). It serves as the mathematics of its columns:
        MixedNB's snapshot holds the statistics and parameters of all of them. A column of
        labels has as many categories as labels (``categories``), used or not."""
        common = {"predictive": self.predictive, "n_threads": self.n_threads}
        if kind == "gaussian":
            return GaussianNB(priors=np.full(n_classes, 1.0 / n_classes),
                              var_smoothing=self.var_smoothing,
                              prior_strength=self.prior_strength, **common)
        if kind == "categorical":
            return CategoricalNB(alpha=self.alpha, fit_prior=False,
                                 min_categories=[len(categories.get(j, ())) for j in columns],
                                 handle_unknown=self.handle_unknown, **common)
        if kind == "bernoulli":
            return CategoricalNB(alpha=self.alpha, fit_prior=False, min_categories=2, **common)
        if kind == "poisson":
            return PoissonNB(alpha=self.alpha, fit_prior=False, **common)
        return MultinomialNB(alpha=self.alpha, fit_prior=False, **common)

    @staticmethod
    def _part_input(kind, X):
        if kind == "bernoulli":
            return np.where(np.isnan(X), np.nan, (X > 0).astype(np.float64))
        if kind == "multinomial":
            return np.where(np.isnan(X), 0.0, X)
        return X

    def _part_fields(self, hyper):
        """(kind, columns, part model, part hyper, fields renamed "kind.field")."""
        for kind, (columns, part, part_hyper) in hyper["parts"].items():
            fields = tuple(f._replace(name=f"{kind}.{f.name}", shape=tuple(
                d if d == CLASSES or not isinstance(d, str) else f"{kind}.{d}" for d in f.shape))
                for f in part._fields(part_hyper))
            yield kind, columns, part, part_hyper, fields

    @staticmethod
    def _sub(stats, kind):
        prefix = kind + "."
        return {name[len(prefix):]: value for name, value in stats.items()
                if name.startswith(prefix)}

    def _part_fitted(self, fitted, kind, columns, part_hyper, params=None):
        return Fitted(fitted.classes, len(columns), np.dtype(np.float64), None,
                      self._sub(fitted.stats, kind), part_hyper, params, lock=fitted.lock)

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        fields = (Field("class_count_", (CLASSES,)),)
        for *_, part_fields in self._part_fields(hyper):
            fields += part_fields
        return fields

    def _more_dims(self, stats, hyper):
        dims = {}
        for kind, columns, part, part_hyper, _ in self._part_fields(hyper):
            dims[f"{kind}.{FEATURES}"] = len(columns)
            if all(f"{kind}.{f.name}" in stats for f in part._fields(part_hyper)[:2]):
                dims.update({f"{kind}.{k}": v for k, v in
                             part._more_dims(self._sub(stats, kind), part_hyper).items()})
        return dims

    def _check_params(self, n_classes, X, fitted):
        handle_unknown = check_handle_unknown(self)
        check_bool(self, "predictive")
        for name in ("alpha", "var_smoothing"):
            value = getattr(self, name)
            if name == "alpha" and plain_choice(value, ("evidence",)):
                continue  # (each part's own search)
            if real_in(value, 0.0, MAX_SMOOTHING) is None:
                raise invalid_parameter(self, name, f"a float in the range [0.0, "
                                        f"{MAX_SMOOTHING:g}]" + (' or "evidence"' if name ==
                                                                 "alpha" else ""))
        kinds = np.asarray(fitted.extra["feature_types"])
        parts, start = {}, 0
        for kind in KINDS:
            columns = np.flatnonzero(kinds == kind)
            if columns.size:
                part = self._new_part(kind, n_classes, columns.tolist(),
                                      fitted.extra["categories"])
                block, start = slice(start, start + columns.size), start + columns.size
                part_X = None if X is None else self._part_input(kind, X[:, block])
                if part_X is not None:  # every part checks its block before any part learns
                    part._validate_X(part_X, None)
                part_fitted = Fitted(fitted.classes, len(columns), np.dtype(np.float64), None,
                                     None, None)
                parts[kind] = (columns, part, part._hyper(n_classes, part_X, part_fitted))
        return {"priors": check_priors(self, n_classes),
                "handle_unknown": handle_unknown, "parts": parts}

    def _start(self, hyper, n_classes, X):
        stats = {"class_count_": np.zeros(n_classes)}
        blocks = _blocks(hyper["parts"])
        for kind, columns, part, part_hyper, _ in self._part_fields(hyper):
            block = self._part_input(kind, X[:, blocks[kind]])
            stats.update({f"{kind}.{name}": value for name, value in
                          part._start(part_hyper, n_classes, block).items()})
        return stats

    def _add(self, stats, X, members, has_nan, hyper):
        out = {"class_count_": stats["class_count_"] + members.class_weight()}
        blocks = _blocks(hyper["parts"])
        for kind, columns, part, part_hyper, _ in self._part_fields(hyper):
            block, part_nan = part._validate_X(
                self._part_input(kind, X[:, blocks[kind]]), None)
            # a copy of the part's statistics: the multinomial part counts in place, and a batch
            # refused afterwards (here, or by the derivation) must leave the model as it was
            own = {name: value.copy() if isinstance(value, np.ndarray) else value
                   for name, value in self._sub(stats, kind).items()}
            added = part._add(own, block, members, part_nan, part_hyper)
            part._check_moments(added, part_hyper)
            out.update({f"{kind}.{name}": value for name, value in added.items()})
        return out

    def _plain_stats(self, fitted):
        stats = {"class_count_": fitted.stats["class_count_"]}
        for kind, columns, part, part_hyper, _ in self._part_fields(fitted.hyper) \
                if fitted.hyper is not None else ():
            part_stats = part._export_stats(self._part_fitted(fitted, kind, columns, part_hyper))
            stats.update({f"{kind}.{name}": value for name, value in part_stats.items()})
        return stats if fitted.hyper is not None else dict(fitted.stats)

    def _agree(self, stats, hyper):
        for kind, columns, part, part_hyper, _ in self._part_fields(hyper):
            part._agree(self._sub(stats, kind), part_hyper)

    def _combine(self, a, rows_a, b, rows_b, n_classes, hyper):
        out = {"class_count_": spread(a["class_count_"], rows_a, n_classes)
               + spread(b["class_count_"], rows_b, n_classes)}
        for kind, columns, part, part_hyper, _ in self._part_fields(hyper):
            out.update({f"{kind}.{name}": value for name, value in part._combine(
                self._sub(a, kind), rows_a, self._sub(b, kind), rows_b, n_classes,
                part_hyper).items()})
        return out

    def _merged_extra(self, a, b):
        if a.extra["feature_types"] != b.extra["feature_types"] or not same_categories(
                a.extra["categories"], b.extra["categories"]):
            raise ValueError("Cannot merge MixedNB models whose columns have different kinds or "
                             "categorical labels.")
        return a.extra

    def _import_extra(self, extra, classes, n_features):
        if not isinstance(extra, dict) or set(extra) != {"feature_types", "categories"}:
            raise ValueError("MixedNB's structure must give feature_types and categories")
        types = extra["feature_types"]
        if not isinstance(types, list) or len(types) != n_features or \
                any(not isinstance(t, str) or t not in KINDS for t in types):
            raise ValueError("feature_types must give a kind per feature")
        return {"feature_types": list(types), "categories": check_categories(
            extra["categories"], n_features,
            {j for j, kind in enumerate(types) if kind == "categorical"})}

    # ----------------------------------------------------------------- parameters
    def _derive(self, fitted):
        hyper = fitted.hyper
        if "categorical" in hyper["parts"]:  # a labelled column's codes index its labels
            columns = hyper["parts"]["categorical"][0]
            check_category_counts(fitted.extra["categories"], dict(zip(
                columns.tolist(), fitted.stats["categorical.n_categories_"].tolist())))
        prior, log_prior = class_prior(fitted.stats["class_count_"], hyper["priors"])
        parts = []
        for kind, columns, part, part_hyper, _ in self._part_fields(hyper):
            part_fitted = self._part_fitted(fitted, kind, columns, part_hyper)
            part_fitted.params = part._derive(part_fitted)
            parts.append((kind, columns, part, part_fitted))
        with np.errstate(divide="ignore"):  # (a class of prior 0: -inf)
            # each part's uniform prior, -log(n_classes), taken out of its scores
            shift = log_prior + len(parts) * np.log(len(prior))
        return _MixedParams(prior, log_prior, shift, parts, list(_blocks(hyper["parts"]).values()))

    class_prior_ = parameter("prior", "ndarray of shape (n_classes,): P(c).")
    feature_types_ = fitted_attribute(lambda model, fitted: list(fitted.extra["feature_types"]),
                                      "list of str: the kind of every column.")
    categories_ = fitted_attribute(
        lambda model, fitted: {j: readonly(labels)
                               for j, labels in fitted.extra["categories"].items()},
        "dict: categorical DataFrame column index -> its labels.")

    @property
    def parts_(self):
        """dict: kind -> (column indices, the fitted fastgen model of those columns)."""
        fitted = self.__dict__.get("_fitted")
        if fitted is None:
            raise AttributeError("parts_ is available after fit")
        out = {}
        params = self._params_of(fitted)
        with fitted.lock:  # the parts' own statistics: partial_fit adds to MixedNB's in place
            for kind, columns, part, part_fitted in params.parts:
                model = copy.copy(part)
                model._publish(part_fitted.replace(
                    stats={name: value.copy() for name, value in part_fitted.stats.items()},
                    params=part_fitted.params))
                out[kind] = (columns, model)
        return out

    # ----------------------------------------------------------------- the posterior
    def _log_prior_density(self, fitted):
        return sum(part._log_prior_density(part_fitted)
                   for _, _, part, part_fitted in self._params_of(fitted).parts)

    def _log_evidence(self, fitted):
        return sum(part._log_evidence(part_fitted)
                   for _, _, part, part_fitted in self._params_of(fitted).parts)

    def _draw(self, fitted, rng):
        """Every part's draw, as the statistics of its unsmoothed plug-in model (alpha = 0,
        var_smoothing = 0: what each part's draw asks for)."""
        stats = {"class_count_": fitted.stats["class_count_"]}
        params = self._params_of(fitted)
        for kind, _, part, part_fitted in params.parts:
            # (under MixedNB's class prior: a class it gives prior 0 needs no samples)
            part_stats, _ = part._draw(part_fitted.replace(
                params=part_fitted.params,
                extra={"class_log_prior": params.log_prior, "owner": type(self).__name__}), rng)
            stats.update({f"{kind}.{name}": value for name, value in
                          part._export_stats(part_fitted.replace(stats=part_stats)).items()})
        return stats, {"alpha": 0.0, "var_smoothing": 0.0}

    # ----------------------------------------------------------------- scoring and sampling
    def _sample_X(self, fitted, y_idx, rng):
        """Each kind's columns drawn by its part; a DataFrame (with the original labels of the
        categorical columns) when the model was fitted on one."""
        X = np.empty((len(y_idx), fitted.n_features))
        for kind, columns, part, part_fitted in self._params_of(fitted).parts:
            block = part._sample_X(part_fitted, y_idx, rng)
            X[:, columns] = block.toarray() if hasattr(block, "toarray") else block
        return sampled_frame(X, fitted)

    def _score(self, params, X, kind, out, has_nan):
        jll = out  # (float64: MixedNB's snapshots are)
        jll[...] = params.shift
        part_jll = np.empty_like(jll)
        for (part_kind, _, part, part_fitted), columns in zip(params.parts, params.blocks):
            X_part = np.ascontiguousarray(self._part_input(part_kind, X[:, columns]))
            if part_kind not in ("gaussian", "categorical", "bernoulli"):
                # counts must also be non-negative: the part validates its block (its error
                # said as MixedNB's, of its kind of columns)
                try:
                    X_part, _ = part._validate_X(X_part, part_fitted)
                except ValueError as error:
                    raise type(error)(f"MixedNB's {part_kind} columns: {error}") from None
            # X was validated (finite floats, NaN = missing): all these parts accept it
            part._score(part_fitted.params, X_part, OUT_JLL, part_jll, has_nan)
            jll += part_jll
        if kind != OUT_JLL and _jll.normalize_rows_inplace(jll, kind, 1):
            raise MemoryError("could not allocate the scoring kernel's row buffers")


class _MixedParams(NamedTuple):
    prior: np.ndarray
    log_prior: np.ndarray
    shift: np.ndarray  # log P(c) plus the parts' uniform priors taken out
    parts: list  # (kind, columns, part model, part snapshot with its parameters)
    blocks: list  # each part's columns in the validated X (see _order): a slice
