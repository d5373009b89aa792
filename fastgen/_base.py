"""Base classes: the estimator protocol, and everything classifiers share, written once over
the declared state (``_state``): fit, partial_fit, merge, set_params, pickle, model files, Dask,
sampling, and the predict/score paths. A model class holds only its mathematics (see
``BaseClassifier``).
"""
from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import numbers
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Union

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from . import _dask, _persist
from ._core import _counts, jll
from ._core._errors import XChangedError
from ._core._openmp import effective_n_threads
from ._dask import in_memory, is_dask_collection
from ._frame import is_frame, same_columns
from ._persist import _ESTIMATORS
from ._state import (
    CLASSES,
    FEATURES,
    MAX_CLASS_WEIGHT,
    STATS_SHOWN,
    Fitted,
    counting_in_place,
    fitted_attribute,
    new_lock,
    readonly,
    statistic,
    validate,
    zeros,
)
from ._validation import (
    MAX_FEATURES,
    InvalidParameterError,
    check_is_fitted,
    check_label_values,
    check_n_threads,
    check_sample_weight,
    check_X,
    check_y,
    encode_labels,
    get_feature_names,
    int_in,
    invalid_parameter,
    label_codes,
    sorted_labels,
    user_stacklevel,
)

# Output kinds understood by the scoring kernels (defined in fastgen/_core/_lse.pxd).
OUT_JLL, OUT_LOG_PROBA, OUT_PROBA = jll.OUTPUT_KINDS

# What the public methods accept as X: anything array-like, or a scipy sparse matrix/array.
if TYPE_CHECKING:
    MatrixLike = Union[ArrayLike, sp.spmatrix, sp.sparray]
else:  # annotations are not evaluated at run time, and sparray needs scipy >= 1.11
    MatrixLike = Any

# The most samples one sample() call draws (more cannot be held in memory anyway).
MAX_SAMPLES = 2**31 - 1

# Below this many multiply-adds a batch is scored on one thread: waking threads costs more.
PARALLEL_MIN_WORK = 200_000


def threads_for(n_threads, work):
    """The threads for a kernel call of ``work`` multiply-adds (or the like) given the
    ``n_threads`` a model may use: one below PARALLEL_MIN_WORK. Decided per call: a call made
    for a block of the data is as small as its block (on a loaded machine a parallel region of
    little work costs a scheduling time slice per thread that waits)."""
    return n_threads if work >= PARALLEL_MIN_WORK else 1


def group_by_class(y_idx, n_classes):
    """Row numbers grouped by class (stable) and the class boundaries: rows of class c are
    ``order[class_ptr[c]:class_ptr[c + 1]]``, the layout the per-class kernels take. y_idx holds
    class indices in [0, n_classes)."""
    y_idx = np.ascontiguousarray(y_idx, dtype=np.intp)
    order = np.empty(y_idx.shape[0], dtype=np.intp)
    class_ptr = np.empty(n_classes + 1, dtype=np.intp)
    _counts.group_rows(y_idx, order, class_ptr)
    return order, class_ptr


class Members(NamedTuple):
    """Which classes the rows of a batch count for, and with what weight: the nonzero entries of
    an (n_rows, n_classes) matrix of weights, in row order. Labels (fit, partial_fit) give one
    entry a row, its class with its sample weight (``hard``); EM's soft class memberships
    (``SemiSupervised``, from ``_counts.soft_members``) give a row one entry for each class it
    may belong to, weighted by its posterior probability. Every statistic adds each entry as a
    row of its class with its weight, reading the row where it is: a row is never copied per
    class, and an entry of weight 0 (a labelled row of sample_weight 0) costs nothing."""

    rows: np.ndarray  # intp (n_entries,), non-decreasing: the row of each entry
    classes: np.ndarray  # intp (n_entries,): its class
    weights: np.ndarray  # float64 (n_entries,): its weight, finite and positive or 0
    n_classes: int

    @classmethod
    def hard(cls, y_idx, sample_weight, n_classes):
        """One entry a row: class y_idx[i], weight sample_weight[i]."""
        y_idx = np.ascontiguousarray(y_idx, dtype=np.intp)
        return cls(np.arange(len(y_idx), dtype=np.intp), y_idx,
                   np.ascontiguousarray(sample_weight, dtype=np.float64), n_classes)

    def join(self, other):
        """Both sets of entries (of the same batch), in row order."""
        order = np.argsort(np.concatenate([self.rows, other.rows]), kind="stable")
        return Members(*(np.concatenate([a, b])[order] for a, b in zip(self[:3], other[:3])),
                       self.n_classes)

    def class_weight(self):
        """The total weight of each class."""
        return np.bincount(self.classes, weights=self.weights, minlength=self.n_classes)

    def by_class(self):
        """(rows, class_ptr, weights): the entries grouped by class (stably), the layout of the
        per-class kernels: class c's are rows[class_ptr[c]:class_ptr[c + 1]]."""
        order, class_ptr = group_by_class(self.classes, self.n_classes)
        return self.rows[order], class_ptr, self.weights[order]

    def gathered(self, X):
        """(X, members) with one row of X for each entry: X itself when the entries are its
        rows, once each, in order (for the few computations that change a row per class: EM's
        completion of missing values)."""
        if len(self.rows) == X.shape[0] and (self.rows == np.arange(X.shape[0])).all():
            return X, self
        return X[self.rows], Members.hard(self.classes, self.weights, self.n_classes)


def _same_param(a, b):
    """Whether two parameter values are equal (False where they cannot be compared)."""
    try:
        if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)) \
                or hasattr(a, "__array__") or hasattr(b, "__array__"):
            return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
        return bool(a == b) or (a is None and b is None)
    except (TypeError, ValueError):
        return False


def _generator(random_state):
    """A numpy Generator from None, a non-negative int, what ``np.random.default_rng`` takes
    besides (a Generator, SeedSequence or BitGenerator) or a legacy RandomState (anything else:
    an error naming random_state)."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, (bool, np.bool_)) or not (random_state is None or isinstance(
            random_state, (numbers.Integral, np.random.Generator, np.random.SeedSequence,
                           np.random.BitGenerator))):
        raise TypeError("random_state must be None, an int, a numpy Generator, SeedSequence, "
                        f"BitGenerator or RandomState, got {type(random_state).__name__}")
    if isinstance(random_state, numbers.Integral):
        seed = int_in(random_state, 0)
        if seed is None:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}")
        random_state = seed
    return np.random.default_rng(random_state)


def spread(values, rows, n_rows):
    """``values`` placed at ``rows`` of a zero array of n_rows (for merging class statistics)."""
    out = np.zeros((n_rows,) + np.shape(values)[1:])
    out[rows] = values
    return out


def _model_dtype(X):
    """Parameters and outputs keep float32 input's dtype; anything else gives float64."""
    return X.dtype if X.dtype == np.float32 else np.dtype(np.float64)


def _label_kind(classes):
    """Numbers, text, bytes or times (also in an object array): labels of one kind only are
    ordered together without being converted."""
    kinds = {"b": "number", "i": "number", "u": "number", "f": "number", "U": "text",
             "S": "bytes", "M": "time", "m": "timedelta"}
    if classes.dtype.kind != "O":
        return kinds.get(classes.dtype.kind, classes.dtype.kind)
    found = {"text" if issubclass(kind, str) else "bytes" if issubclass(kind, bytes) else
             "number" if issubclass(kind, (int, float, np.number)) else kind.__name__
             for kind in set(map(type, classes.tolist()))}  # (judged once a type)
    return found.pop() if len(found) == 1 else "mixed"


def check_classes(classes):
    """Validate the classes of a model file or pickle (or partial_fit's): a non-empty 1-D array
    of sorted, distinct labels (numbers, strings, bytes, datetimes, or an object array of the
    labels fit takes, ``check_label_values``: a pickle holds the Timestamps, Decimals or dates
    a model was fitted with; model files hold only str, int, float and bool)."""
    if not isinstance(classes, np.ndarray) or classes.ndim != 1 or not 1 <= len(classes) <= \
            MAX_FEATURES or classes.dtype.kind not in "biufUSOMm":
        raise ValueError("classes must be a non-empty 1-D array of labels")
    try:
        classes = check_label_values(classes, "classes")
    except ValueError as exc:
        raise ValueError(f"classes must be labels: {exc}") from None
    try:
        ordered = len(classes) == 1 or bool(np.all(classes[1:] > classes[:-1]))
    except TypeError:
        ordered = False
    if not ordered:
        raise ValueError("classes must be sorted and distinct")
    return classes


def partial_fit_classes(classes):
    """partial_fit's ``classes`` as the model's classes: its sorted distinct labels (neither
    order nor repeats matter), validated as scikit-learn's ``unique_labels`` validates them --
    an array-like that is not a string, of labels that are all strings or all numbers, none of
    them NaN, infinite or continuous -- and then as any model's classes (``check_classes``).
    Unlike scikit-learn, a 2-D array is an error rather than read as a label indicator matrix."""
    if isinstance(classes, (str, bytes)) or not (isinstance(classes, Sequence)
                                                 or hasattr(classes, "__array__")):
        raise ValueError(f"Expected array-like (array or non-string sequence), got {classes!r}")
    try:
        labels = np.asarray(classes)
    except ValueError:  # a ragged nesting of sequences
        labels = None
    if labels is None or labels.ndim != 1:
        raise ValueError(f"classes must be a 1-D array-like of labels, got {classes!r}.")
    if labels.size == 0:
        raise ValueError("classes must name at least one class.")
    # NumPy turns a list of strings and numbers into strings: look at the labels as given
    given = labels.tolist() if labels.dtype.kind == "O" else (
        () if hasattr(classes, "__array__") else classes)
    if len({isinstance(c, str) for c in given}) > 1:
        raise ValueError(f"Mix of label input types (string and number); Got "
                         f"{np.unique(labels.astype(str))}.")
    return check_classes(sorted_labels(np.unique, check_label_values(labels, "classes")))


def class_prior(class_count, priors):
    """P(c) and log P(c): the given priors, else the class frequencies (a class of no weight has
    prior 0 and so posterior 0, without warnings or NaN: scikit-learn #13232). The log is taken
    of the weights, not of their ratio, so that a class far lighter than another (a weight of
    1e-300 against 1e100) keeps its finite log prior where its frequency underflows to 0."""
    with np.errstate(divide="ignore"):
        if priors is not None:
            return priors, np.log(priors)
        total = class_count.sum()
        if not total > 0:
            uniform = np.full(len(class_count), 1.0 / len(class_count))
            return uniform, np.log(uniform)
        return class_count / total, np.log(class_count) - np.log(total)


def check_class_weight(total, classes):
    """Refuse class totals of sample weight beyond MAX_CLASS_WEIGHT (see ``_state``): called
    with the totals a batch or a merge would make, before anything is added."""
    if not total.max() <= MAX_CLASS_WEIGHT:  # (also for an overflow to inf)
        c = int(np.argmax(~(total <= MAX_CLASS_WEIGHT)))
        label = classes[c:c + 1].tolist()[0]
        raise ValueError(f"The total sample weight of class {label!r} would be {total[c]:.3g}, "
                         f"beyond {MAX_CLASS_WEIGHT:g}: the statistics (sums of weights times "
                         "values) would overflow float64. Rescale sample_weight.")


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


def prior_array(model, name, n_classes):
    """The model's class-prior hyperparameter ``name`` as a read-only float64 copy of n_classes
    numbers, or None where it is not given; the checks of its values are the caller's."""
    value = getattr(model, name)
    if value is None:
        return None
    try:  # (a complex prior is not its real part; an int beyond float64 is not a number here)
        prior = None if np.iscomplexobj(value) else np.array(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        prior = None
    if prior is None or prior.ndim != 1:
        raise invalid_parameter(model, name, "an array-like of numbers or None")
    if prior.shape != (n_classes,):
        given = "priors" if name == "priors" else f"values in {name}"
        raise InvalidParameterError(f"Number of priors must match number of classes. There "
                                    f"are {n_classes} classes and {len(prior)} {given}.")
    prior.flags.writeable = False
    return prior


def check_priors(model, n_classes):
    """The model's ``priors`` validated (None: none given): n_classes non-negative values
    summing to one, as a read-only float64 copy."""
    priors = prior_array(model, "priors", n_classes)
    if priors is None:
        return None
    if (priors < 0).any():
        raise InvalidParameterError(f"Priors must be non-negative. Got {priors}.")
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(priors.sum())
    if not np.isclose(total, 1.0):  # (also NaN or infinity)
        raise InvalidParameterError(f"The sum of the priors should be 1. They sum to {total}.")
    return priors


class BaseEstimator:
    """get_params/set_params/repr/tags following scikit-learn's conventions, without importing it."""

    @classmethod
    def _param_names(cls):
        names = cls.__dict__.get("_param_names_of_class")
        if names is None:  # inspect.signature costs tens of microseconds: once per class
            sig = inspect.signature(cls.__init__)
            names = tuple(sorted(p.name for p in sig.parameters.values()
                                 if p.name != "self" and p.kind != p.VAR_KEYWORD))
            cls._param_names_of_class = names
        return list(names)

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

    def _write_lock(self):
        """The lock a model's writers (fit, partial_fit, merge; a vectoriser's fit) hold: they run
        one at a time, and statistics this model owns are changed only under it."""
        lock = self.__dict__.get("_lock")
        if lock is None:
            lock = self.__dict__.setdefault("_lock", new_lock())
        return lock

    def __repr__(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = []
        for name, value in self.get_params(deep=False).items():
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
        return {name: value for name, value in self.__dict__.items() if name != "_lock"}

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

    def _check_feature_names(self, X, fitted):
        """Compare DataFrame column names with the fitted ones (scikit-learn's messages). X may
        be a dask collection (fastgen._dask checks it here, once, before its partitions are
        read)."""
        names = get_feature_names(X)
        if fitted is None and names is None:
            return
        if fitted is None:
            warnings.warn(f"X has feature names, but {type(self).__name__} was fitted without "
                          "feature names", stacklevel=user_stacklevel())
            return
        if names is None:
            warnings.warn(f"X does not have valid feature names, but {type(self).__name__} was "
                          "fitted with feature names", stacklevel=user_stacklevel())
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
            check_is_fitted(self)
            return _dask.predict(self, method.__name__, X, *args, **kwargs)
        return method(self, X, *args, **kwargs)
    return wrapper


class BaseClassifier(BaseEstimator):
    """What every fastgen classifier shares, written once over the declared state (``_state``).

    A model class holds only its mathematics, through these hooks:

    - ``_fields(hyper)``: the declared statistics (``Field``s; they may depend on the validated
      hyperparameters), and ``_more_dims(stats, hyper)`` for dimensions computed from them;
    - ``_check_params(n_classes, X, fitted)``: the validated hyperparameters (a dict) for a
      batch, ``fitted`` being the model it is added to (None for a new fit);
    - ``_start(hyper, n_classes, X)``: empty statistics (default: zeros of the declaration);
    - ``_add(stats, X, members, has_nan, hyper)``: the statistics with a validated batch added,
      its rows counted for the classes ``members`` (``Members``) says, with its weights (it may add in place: they are this model's own, copied first otherwise);
    - ``_combine(a, rows_a, b, rows_b, n_classes, hyper)``: two models' statistics added, their
      class rows spread over the merged classes (default: the class-major fields summed);
    - ``_agree(stats, hyper)``: checks across fields (raise ValueError), on load and merge;
    - ``_derive(fitted)``: the parameters, one pure function of the snapshot;
    - ``_log_prior_density(fitted)``: the log density of the parameters under the prior whose
      posterior mode they are (default 0: maximum-likelihood estimates), EM's objective's term;
    - ``_score(params, X, kind, out, has_nan)``: one kernel call writing jll, log-posteriors or
      posteriors; ``_sample_X(fitted, y_idx, rng)``: features drawn given the classes.

    ``_lazy`` models (the text models) leave the parameters to be derived on first use after
    ``partial_fit``, so that streaming many small batches costs counting only. A dask
    partition's model is ``_deferred`` (fastgen._dask): it derives nothing, in ``partial_fit``,
    ``merge`` or unpickling, as only the merged statistics of all partitions need make a model
    (LDA's on 8 rows of 10 features would be singular). LDA and QDA with missing values still
    need each partition's own model: their EM completes a partition's rows under it.
    """

    _X_constraints: dict = {}
    _lazy = False
    _deferred = False
    # whether partial_fit adds to the statistics it owns in place (the text models; copying them
    # for every batch would cost as much as counting), so that reading them takes the lock
    _counts_in_place = False
    n_threads: int | None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("fastgen.") and not cls.__name__.startswith("_"):
            _ESTIMATORS[cls.__name__] = cls

    def __sklearn_is_fitted__(self):
        return "_fitted" in self.__dict__

    def __copy__(self):
        """A shallow copy that shares the fitted snapshot but not the writers' lock. The
        snapshot is handed over to a lock of its own first (as a writer: under this model's
        lock), so that neither model owns its statistics: each copies them before it changes
        them (partial_fit)."""
        clone = type(self).__new__(type(self))
        with self._write_lock():
            clone.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_lock"})
            fitted = self.__dict__.get("_fitted")
            if fitted is not None:
                with fitted.lock:
                    shared = fitted.replace(params=fitted.params)
                self._fitted = clone._fitted = shared
        return clone

    def _frozen(self):
        """A model that predicts with the current snapshot's parameters whatever this one
        becomes (for dask's lazy predictions); this model keeps owning its statistics."""
        check_is_fitted(self)
        fitted = self._fitted
        params = self._params_of(fitted)
        frozen = type(self).__new__(type(self))
        frozen.__dict__.update({k: v for k, v in self.__dict__.items()
                                if k not in ("_lock", "_fitted")})
        frozen._fitted = fitted.replace(params=params)
        return frozen

    # ----------------------------------------------------------------- the published state
    classes_ = fitted_attribute(lambda model, fitted: readonly(fitted.classes),
                                "ndarray of shape (n_classes,): the class labels.")
    n_features_in_ = fitted_attribute(lambda model, fitted: fitted.n_features,
                                      "int: the number of features seen during fit.")
    class_count_ = statistic("class_count_", "ndarray of shape (n_classes,): the weight of the "
                             "training samples of each class.")

    @property
    def feature_names_in_(self):
        """ndarray of shape (n_features,): column names, when X was a DataFrame."""
        fitted = self.__dict__.get("_fitted")
        if fitted is None or fitted.feature_names is None:
            raise AttributeError(f"{type(self).__name__} has no feature_names_in_ (it is set "
                                 "by a fit on a DataFrame with string column names).")
        return readonly(fitted.feature_names)

    def _publish(self, fitted):
        """Make ``fitted`` the model: one assignment, so that predictions see all of it or none."""
        self._fitted = fitted

    def _params_of(self, fitted):
        """The parameters of a snapshot, derived on first use if the model is lazy (under the
        lock of the statistics they are derived from)."""
        params = fitted.params
        if params is None:
            with fitted.lock:
                params = fitted.params
                if params is None:
                    params = self._derive(fitted)
                    fitted.params = params  # published whole, in one store
        return params

    # ----------------------------------------------------------------- hooks' defaults
    def _more_dims(self, stats, hyper):
        return {}

    def _new_shell(self, X):
        """For a new fit: None, or a ``Fitted`` holding only what the model learns from X's form
        before its values (its ``extra``: MixedNB's column kinds and categories), which
        ``_validate_X`` and ``_check_params`` then read."""
        return None

    def _dims(self, n_classes, n_features):
        return {CLASSES: n_classes, FEATURES: n_features}

    def _start(self, hyper, n_classes, X):
        return zeros(self._fields(hyper), self._dims(n_classes, X.shape[1]))

    def _agree(self, stats, hyper):
        """Checks across fields (a model file's statistics must agree with each other)."""

    def _check_moments(self, stats, hyper):
        """Refuse statistics that overflowed float64 (fit, partial_fit and merge make only
        models that a model file may hold). Sums of weights, and of weights times counts, stay
        within bounds (MAX_CLASS_WEIGHT); the moments of the Gaussian family -- the fields that
        may be negative or are unbounded: means, sums of squared deviations -- may not."""
        for f in self._fields(hyper):
            if (not f.nonneg or f.upper == np.inf) and not np.isfinite(stats[f.name]).all():
                raise ValueError(f"The statistic {f.name!r} overflows float64 (sums of weights "
                                 "times values or squared deviations beyond about 1e308): "
                                 "rescale X or sample_weight.")

    def _combine(self, a, rows_a, b, rows_b, n_classes, hyper):
        """Two models' statistics added: every field is class-major and additive."""
        return {name: spread(a[name], rows_a, n_classes) + spread(b[name], rows_b, n_classes)
                for name in a}

    def _log_prior_density(self, fitted):
        """log p(parameters), up to a constant, under the prior whose posterior mode the
        parameters are: 0 for maximum-likelihood estimates; the models whose smoothing is alpha
        pseudo-counts of a conjugate prior add its density. EM (``SemiSupervised``) adds it to the
        log-likelihood: its objective, the log posterior, is what each M-step maximises."""
        return 0.0

    # ----------------------------------------------------------------- input
    def _validate_X(self, X, fitted, dtype=None, learning=False, **constraints):
        """Validate X once at the boundary; returns ``(X, has_nan)`` (NaN only where the model
        allows it: missing values). ``fitted``: the snapshot X must agree with (its features,
        their names and its dtype), or a new fit's shell (``_new_shell``), or None for a new fit
        without one. ``learning``: X is a batch to add to ``fitted`` (partial_fit). constraints
        add to (or override) the class's _X_constraints (check_X's keywords)."""
        if fitted is not None:
            if fitted.classes is not None and not (  # (a shell has no names to check)
                    fitted.feature_names is not None and is_frame(X)
                    and same_columns(X, fitted)):
                self._check_feature_names(X, fitted.feature_names)
            dtype = fitted.dtype
            X = self._read_frame(X, fitted, learning)
        X_valid, has_nan = check_X(X, estimator_name=type(self).__name__, dtype=dtype,
                                   **{**self._value_constraints(fitted, learning),
                                      **constraints})
        if fitted is not None and X_valid.shape[1] != fitted.n_features:
            raise ValueError(f"X has {X_valid.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {fitted.n_features} features as input.")
        return X_valid, has_nan

    def _value_constraints(self, fitted, learning):
        """check_X's keywords for X's values against ``fitted`` (as ``_validate_X`` takes it):
        the class's _X_constraints, unless the model's hyperparameters narrow them. Also what a
        caller that reads X again checks its values against (``check_unchanged``)."""
        return self._X_constraints

    def _read_frame(self, X, fitted, learning):
        """X with a DataFrame's columns read as the snapshot ``fitted`` takes them (the models
        that take columns of labels: see ``_frame.LabelColumns``); check_X then validates it."""
        return X

    def _n_threads_for(self, work):
        # (resolved only for work that may use them: an explicit count costs os.cpu_count's
        # 5 us, as much as scoring one row)
        return effective_n_threads(self.n_threads) if work >= PARALLEL_MIN_WORK else 1

    def _output(self, X, kind, fitted=None):
        """(output of the requested kind, the classes) from one snapshot (by default the
        published one, read once)."""
        if fitted is None:
            fitted = self.__dict__.get("_fitted")
        if fitted is None:
            check_is_fitted(self)
        X, has_nan = self._validate_X(X, fitted)
        params = fitted.params
        if params is None:
            params = self._params_of(fitted)
        out = np.empty((X.shape[0], len(fitted.classes)), dtype=fitted.dtype)
        self._score(params, X, kind, out, has_nan)
        return out, fitted.classes

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
            Target labels (any hashable values; a dask collection is computed when X is in
            memory).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights applied to individual samples (1 for unweighted): finite, non-negative,
            and at most 1e200 in total for each class, so that every statistic (weights times
            counts) stays within float64 and within what a model file holds.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        check_n_threads(self)
        if is_dask_collection(X):
            fitted = self._fit_dask(X, y, sample_weight, None)._fitted
            with self._write_lock():
                self._publish(self._rederived(fitted))
            return self
        y, sample_weight = in_memory(y), in_memory(sample_weight)  # (X's own rows: computed)
        with self._write_lock():
            shell = self._new_shell(X)
            X_valid, has_nan = self._validate_X(X, shell)
            y = check_y(y, X_valid.shape[0], type(self).__name__)
            classes, y_idx = encode_labels(y)
            sample_weight = check_sample_weight(sample_weight, X_valid.shape[0])
            members = Members.hard(y_idx, sample_weight, len(classes))
            hyper = self._hyper(len(classes), X_valid, shell)
            self._publish(self._fitted_on(X, X_valid, has_nan, shell, classes, members, hyper))
        return self

    def _fitted_on(self, X, X_valid, has_nan, shell, classes, members, hyper):
        """A new snapshot: the statistics of a validated batch (``X_valid`` of the input X,
        ``shell`` from ``_new_shell``), its rows counted for ``classes`` as ``members`` says,
        and the parameters derived from them with the validated hyperparameters ``hyper``."""
        check_class_weight(members.class_weight(), classes)
        stats = self._add(self._start(hyper, len(classes), X_valid), X_valid, members, has_nan,
                          hyper)
        self._check_moments(stats, hyper)
        fitted = Fitted(classes, X_valid.shape[1], _model_dtype(X_valid), get_feature_names(X),
                        stats, hyper, lock=self._write_lock(),
                        extra=None if shell is None else shell.extra)
        fitted.params = self._derive(fitted)
        return fitted

    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None):
        """Add a batch of samples to the statistics (incremental / out-of-core learning).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            Training vectors (a dask collection is fitted as in ``fit`` and merged in).
        y : array-like or dask array/Series of shape (n_samples,)
            Target labels, each of them in ``classes`` (a dask collection is computed when X
            is in memory).
        classes : array-like of shape (n_classes,), default=None
            Every label that can ever occur, in any order (repeats are ignored): the model's
            ``classes_`` are its sorted distinct labels. Required on the first call; optional
            afterwards, and then it must name the same labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights applied to individual samples; each class's total over all the batches
            (and merges) may be at most 1e200, as in ``fit``. A batch that would pass it is
            refused and leaves the model as it was.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        check_n_threads(self)
        if not is_dask_collection(X):  # (a dask y or sample_weight of X's own rows: computed)
            y, sample_weight = in_memory(y), in_memory(sample_weight)
        with self._write_lock(), contextlib.ExitStack() as counting:
            fitted = self.__dict__.get("_fitted")
            if fitted is None and classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            if classes is not None:
                given, classes = classes, partial_fit_classes(classes)
                if fitted is not None and not np.array_equal(classes, fitted.classes):
                    raise ValueError(
                        f"`classes={given!r}` is not the same as on last call to "
                        f"partial_fit, was: {fitted.classes!r}")
            if is_dask_collection(X):
                part = self._fit_dask(X, y, sample_weight,
                                      classes if fitted is None else fitted.classes, fitted)
                if fitted is None:
                    self._publish(self._rederived(part._fitted))
                    return self
                self.merge(part)
                if "n_iter" in part._fitted.hyper:  # (EM's steps over this batch, as in memory;
                    # merge keeps the model's)
                    merged = self._fitted
                    self._publish(merged.replace(
                        hyper={**merged.hyper, "n_iter": part._fitted.hyper["n_iter"]},
                        params=merged.params, lock=self._write_lock()))
                return self
            known = classes if fitted is None else fitted.classes
            shell = self._new_shell(X) if fitted is None else None
            X_valid, has_nan, members = self._batch(X, y, sample_weight, known,
                                                    fitted or shell)
            check_class_weight(members.class_weight() + (
                0.0 if fitted is None else fitted.stats["class_count_"]), known)
            hyper = self._hyper(len(known), X_valid, fitted or shell)
            stats = None
            in_place = False  # (a first batch counts into statistics of its own)
            if fitted is None:
                stats = self._start(hyper, len(known), X_valid)
                fitted = Fitted(known, X_valid.shape[1], _model_dtype(X_valid),
                                get_feature_names(X), stats, hyper,
                                extra=None if shell is None else shell.extra)
            with fitted.lock:  # lazy derivations of earlier snapshots of these statistics wait
                if stats is None:
                    # counted in place into statistics this model owns (copying them for every
                    # batch would cost as much as counting), unless another model may read
                    # them or a fitted attribute has shown them (whose views must not change)
                    shown = self.__dict__.pop(STATS_SHOWN, False)
                    in_place = fitted.lock is self._write_lock() and not shown
                    stats = fitted.stats if in_place else \
                        {k: v.copy() for k, v in fitted.stats.items()}
                try:
                    if in_place:  # (until the snapshot of these counts is published)
                        counting.enter_context(counting_in_place(self))
                    stats = self._add(stats, X_valid, members, has_nan, hyper)
                    if in_place:  # what the memo holds was computed from the counts before
                        fitted.memo.clear()
                except XChangedError as error:  # a counting kernel may have counted part of it
                    if in_place:  # no longer the statistics of any data
                        self.__dict__.pop("_fitted", None)
                        error.add_note(f"{type(self).__name__} had counted part of this batch "
                                       "into its statistics: it is no longer fitted (fit it "
                                       "again).")
                    raise
            self._check_moments(stats, hyper)
            fitted = fitted.replace(stats=stats, hyper=hyper, lock=self._write_lock())
            if not (self._lazy or self._deferred):
                fitted.params = self._derive(fitted)
            self._publish(fitted)
        return self

    def _batch(self, X, y, sample_weight, known, fitted):
        """A batch for partial_fit (or a dask partition of one) validated against the snapshot
        or shell ``fitted``: (X, has_nan, its Members among the classes ``known``)."""
        X, has_nan = self._validate_X(X, fitted, learning=True)
        y = check_y(y, X.shape[0], type(self).__name__)
        y_idx, bad = label_codes(y, known)
        if bad.any():
            raise ValueError(f"The target label(s) {np.unique(y[bad])} in y do not exist in the "
                             f"initial classes {known}")
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        return X, has_nan, Members.hard(y_idx, sample_weight, len(known))

    def _fits_partitions_alone(self):
        """Whether a partition that sees only some of the classes can be fitted on its own, its
        model merged with the others' into the model of all the data: not with a parameter given
        per class (priors) or, in the discriminant models, a partition may hold a single class."""
        params = self.get_params(deep=False)
        return params.get("priors") is None and params.get("class_prior") is None

    def _dask_fit(self, map_reduce, classes, fitted, structure, X):
        """The model of a dask collection made otherwise than by merging its partitions' models
        (LDA's and QDA's, whose EM over missing values runs over all the partitions), or None:
        the partitions' models are merged."""
        return None

    def _fit_dask(self, X, y, sample_weight, classes, fitted=None):
        """A model of this kind fitted on dask collections (fastgen._dask.fit), or, with the
        snapshot ``fitted``, a batch to be merged into it."""
        return _dask.fit(self, X, y, sample_weight, classes, fitted)

    def _hyper(self, n_classes, X, fitted):
        """The validated hyperparameters (``_check_params``) and, as ``hyper["params"]``, the
        constructor parameters they come from: what the snapshot's files and pickles record, even
        after a ``set_params`` that the snapshot could not follow."""
        given = self.get_params()
        hyper = self._check_params(n_classes, X, fitted)
        if any(value is not given[name] for name, value in self.get_params().items()):
            raise ValueError("A hyperparameter was changed while the hyperparameters were "
                             "validated (set_params from another thread, or a value's own method "
                             "calling it): the model would record other values than it uses.")
        hyper["params"] = {name: copy.copy(value) for name, value in given.items()}
        return hyper

    def _rederived(self, fitted, **changes):
        """A snapshot of ``fitted``'s statistics (validated against this model's declaration),
        with this model's hyperparameters, and its parameters derived: for merge, load, unpickle,
        set_params and a dask fit."""
        fitted = fitted.replace(**changes)
        hyper = self._hyper(len(fitted.classes), None, fitted)
        stats = validate(self._fields(hyper), self._plain_stats(fitted),
                         self._dims(len(fitted.classes), fitted.n_features),
                         lambda done: self._more_dims(done, hyper))
        if not stats["class_count_"].sum() > 0:  # every model declares it
            raise ValueError("the statistics hold no sample weight")
        self._agree(stats, hyper)
        fitted = fitted.replace(stats=stats, hyper=hyper, lock=self._write_lock())
        if not self._deferred:
            fitted.params = self._derive(fitted)
        return fitted

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

        Raises
        ------
        ValueError
            If the merged model's statistics would pass what a model holds: a class's total
            sample weight beyond 1e200, or sums of squared deviations beyond float64.
        """
        if type(other) is not type(self):
            raise ValueError(f"Cannot merge a {type(other).__name__} into a "
                             f"{type(self).__name__}: the models must be of the same kind.")
        check_is_fitted(self)
        check_is_fitted(other)
        b = other._fitted
        with b.lock:  # (another lock than ours: taken first, never while ours is held)
            b_stats = {name: value.copy() for name, value in other._plain_stats(b).items()}
        with self._write_lock():
            a = self._fitted
            if a.n_features != b.n_features:
                raise ValueError(f"Cannot merge models of {b.n_features} and {a.n_features} "
                                 "features.")
            if (a.feature_names is None) != (b.feature_names is None) or (
                    a.feature_names is not None
                    and not np.array_equal(a.feature_names, b.feature_names)):
                raise ValueError("Cannot merge models fitted on different feature names.")
            differ = [name for name, value in self.get_params().items()
                      if name != "n_threads" and not _same_param(value, other.get_params()[name])]
            if differ:
                raise ValueError(f"Cannot merge models with different parameters: {differ}.")
            if _label_kind(a.classes) != _label_kind(b.classes):
                raise ValueError(f"Cannot merge models whose labels are of different kinds: "
                                 f"{a.classes[:3]!r} and {b.classes[:3]!r}.")
            classes = sorted_labels(np.unique, np.concatenate([a.classes, b.classes]))
            rows_a, rows_b = (np.searchsorted(classes, f.classes) for f in (a, b))
            stats = self._combine(self._plain_stats(a), rows_a, b_stats, rows_b, len(classes),
                                  a.hyper)
            check_class_weight(stats["class_count_"], classes)
            self._check_moments(stats, a.hyper)
            self._publish(self._rederived(a, classes=classes, stats=stats,
                                          extra=self._merged_extra(a, b)))
        return self

    def _merged_extra(self, a, b):
        """What else besides statistics a merged model keeps (MixedNB: its columns)."""
        return a.extra

    # ----------------------------------------------------------------- set_params
    def set_params(self, **params: Any):
        """Set the parameters of this estimator.

        On a fitted model the parameters are derived again from the statistics with the new
        values, so ``predict`` follows them at once. Where the statistics cannot serve them (a
        value that is not valid, or one that needs other statistics, such as
        ``covariance="full"`` on a model fitted with a diagonal one), the model keeps the
        parameters it had -- its model file and its pickle record those -- and the next ``fit``
        or ``partial_fit`` reports the problem (as scikit-learn validates parameters at fit).

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator instance
        """
        super().set_params(**params)
        if params.keys() - {"n_threads"}:
            with self._write_lock():
                fitted = self.__dict__.get("_fitted")
                if fitted is not None:
                    try:
                        fitted = self._rederived(fitted)
                    except (ValueError, TypeError):
                        return self  # reported by the next fit
                    self._publish(fitted)
        return self

    # ----------------------------------------------------------------- pickle and files
    def __getstate__(self):
        """The hyperparameters and, when fitted, the snapshot's statistics only: nothing
        derived, no lock (see ``_state``)."""
        state = {name: value for name, value in self.__dict__.items()
                 if name not in ("_fitted", "_lock", STATS_SHOWN)}
        fitted = self.__dict__.get("_fitted")
        if fitted is not None:
            state["_fitted"] = {**self._export(fitted), "params": fitted.hyper["params"]}
        return state

    def __setstate__(self, state):
        state = dict(state)
        exported = state.pop("_fitted", None)
        earlier = set(state) & {"classes_", "n_features_in_", "class_count_", "_dtype"}
        if earlier:  # fitted attributes in __dict__: an earlier fastgen's pickle
            raise ValueError(f"This {type(self).__name__} pickle holds {sorted(earlier)}, which "
                             "this fastgen keeps in a declared snapshot instead: it was written "
                             "by an earlier fastgen. Fit the model again.")
        if exported is not None and not isinstance(exported, dict):
            raise ValueError("the pickled fitted state is not a mapping")
        # as a writer (a state set into a model in use: a fit beside it waits), and whole: the
        # state of an unfitted model leaves this one unfitted
        with self._write_lock():
            self.__dict__.update(state)
            if exported is None:
                self.__dict__.pop("_fitted", None)
                return
            # derived with the parameters the snapshot had (a set_params it could not follow
            # leaves them behind the estimator's own)
            exported = dict(exported)
            params = exported.pop("params", None)
            if not isinstance(params, dict) or set(params) != set(self._param_names()):
                raise ValueError("the pickled fitted state does not name its parameters")
            missing = object()
            same = all(name == "n_threads" or _same_param(value, state.get(name, missing))
                       for name, value in params.items())
            source = self if same else type(self)(**params)
            fitted = source._import(exported)
            self._publish(fitted.replace(params=fitted.params, lock=self._write_lock()))

    def _export(self, fitted):
        """The snapshot as plain values: what a model file and a pickle hold (read under its
        lock: the text models' partial_fit adds to statistics it owns in place)."""
        with fitted.lock:
            stats = {name: value.copy() for name, value in self._export_stats(fitted).items()}
        return {"classes": fitted.classes, "n_features": fitted.n_features,
                "dtype": fitted.dtype.name, "feature_names": fitted.feature_names,
                "statistics": stats, "extra": fitted.extra}

    def _plain_stats(self, fitted):
        """The statistics as plain arrays, as validate takes them."""
        return dict(fitted.stats)

    def _export_stats(self, fitted):
        """The statistics as a model file and a pickle hold them."""
        return self._plain_stats(fitted)

    def _import(self, exported):
        """A validated snapshot from ``_export``'s values (a model file's or a pickle's): every
        entry and every declared statistic is checked before anything is derived."""
        if not isinstance(exported, dict) or set(exported) != {
                "classes", "n_features", "dtype", "feature_names", "statistics", "extra"}:
            raise ValueError("the fitted state must have the entries classes, n_features, "
                             "dtype, feature_names, statistics and extra")
        classes = check_classes(exported["classes"])
        n_features = exported["n_features"]
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or \
                not 1 <= n_features <= MAX_FEATURES:
            raise ValueError(f"n_features must be an integer in [1, {MAX_FEATURES}]")
        if exported["dtype"] not in ("float32", "float64"):
            raise ValueError("the model dtype must be float32 or float64")
        names = exported["feature_names"]
        if names is not None and not (isinstance(names, np.ndarray) and names.dtype == object
                                      and names.shape == (n_features,)
                                      and all(isinstance(n, str) for n in names)):
            raise ValueError("feature_names must be None or n_features strings")
        fitted = Fitted(classes, int(n_features), np.dtype(exported["dtype"]), names,
                        exported["statistics"], None,
                        extra=self._import_extra(exported["extra"], classes, int(n_features)))
        return self._rederived(fitted)

    def _import_extra(self, extra, classes, n_features):
        if extra is not None:
            raise ValueError("this model keeps nothing besides its statistics")
        return None

    def save(self, path) -> None:
        """Write the fitted model to a file (fastgen's documented format: no pickle, versioned,
        with a checksum; the hyperparameters and the statistics only); ``fastgen.load(path)``
        reads it back exactly, validating every field. The same as ``fastgen.save(self, path)``.

        Parameters
        ----------
        path : str or path-like
            Where to write the model.
        """
        _persist.save(self, path)

    def _file_record(self):
        """(hyperparameters, fitted state): what a model file holds of this model."""
        check_is_fitted(self)
        fitted = self._fitted
        params = dict(fitted.hyper["params"])
        if "n_threads" in params:  # changes nothing derived, so set_params left no snapshot
            params["n_threads"] = self.n_threads
        return params, self._export(fitted)

    @classmethod
    def _from_file(cls, params, exported):
        """The model a file's hyperparameters and fitted state describe, each validated
        (``load``)."""
        if not isinstance(params, dict) or set(params) != set(cls._param_names()):
            raise ValueError(f"the hyperparameters must be exactly {cls._param_names()}")
        model = cls(**params)
        check_n_threads(model)  # the only hyperparameter no derivation checks
        model._publish(model._import(exported))
        return model

    # ----------------------------------------------------------------- generation
    def sample(self, n_samples: int = 1, y: Any = None, random_state: Any = None):
        """Generate samples from the fitted model (a generative model can generate data
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
        fitted = self._fitted
        with fitted.lock:  # the statistics sampled from do not change meanwhile
            return self._sample(fitted, n_samples, y, random_state)

    def _sample(self, fitted, n_samples, y, random_state):
        classes = fitted.classes
        rng = _generator(random_state)
        n_classes = len(classes)
        count = int_in(n_samples, 1, MAX_SAMPLES)
        if count is None:
            raise ValueError(f"n_samples must be an integer in [1, {MAX_SAMPLES}], got "
                             f"{n_samples!r}.")
        n_samples = count
        if y is None:
            prior = self._class_prior(fitted)
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
            try:
                y_idx, bad = label_codes(labels, classes)
            except ValueError:  # labels that do not compare with the classes (None, a set)
                raise ValueError(f"y must be labels from classes_ {classes!r}; got {y!r}.") \
                    from None
            if labels.ndim != 1 or bad.any():
                raise ValueError(f"y must be labels from classes_ {classes!r}; got "
                                 f"{np.unique(labels[bad]) if labels.ndim == 1 else labels!r}.")
        y_idx = np.asarray(y_idx, dtype=np.intp)
        return self._sample_X(fitted, y_idx, rng), classes[y_idx]

    def _class_prior(self, fitted):
        """P(c) of a snapshot (the prior that ``sample`` draws classes from)."""
        return np.exp(self._params_of(fitted).log_prior)

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
        return self._output(X, OUT_JLL)[0]

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
        return self._output(X, OUT_LOG_PROBA)[0]

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
        return self._output(X, OUT_PROBA)[0]

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
            ``sum_c P(c | x) loss[c, k]`` (Duda, Hart & Stork 2001, ch. 2). None is the 0-1 loss: the most probable
            class.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels from ``classes_``.
        """
        if loss is None:
            # argmax of the log-posterior rather than of the jll: for float32 models the rounded
            # log-posteriors are what predict_proba shows, so predict agrees with it on near-ties
            log_proba, classes = self._output(X, OUT_LOG_PROBA)
            return classes[np.argmax(log_proba, axis=1)]
        check_is_fitted(self)
        fitted = self._fitted  # one snapshot: the loss matrix is indexed by its classes
        loss = check_loss(loss, len(fitted.classes))
        # the decision does not change with the scale: scaled only where the expected losses,
        # sums of n_classes costs times probabilities, could overflow (scaling always would
        # turn costs 1e-308 times the largest into 0, and ties)
        if loss.max() > np.finfo(np.float64).max / (2 * len(fitted.classes)):
            loss = loss / loss.max()
        proba, classes = self._output(X, OUT_PROBA, fitted)
        return classes[np.argmin(proba.astype(np.float64) @ loss, axis=1)]

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
            With two classes ``log P(c1 | x) - log P(c0 | x)`` (positive means
            ``classes_[1]``); otherwise ``log P(c | x)`` per class.
        """
        log_proba, classes = self._output(X, OUT_LOG_PROBA)
        if len(classes) == 2:
            with np.errstate(invalid="ignore"):
                return log_proba[:, 1] - log_proba[:, 0]
        return log_proba

    def score(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Return the (weighted) accuracy of ``predict(X)`` against ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            Test samples. A dask collection is predicted partition by partition (``predict``)
            and the predictions are computed (as are dask ``y`` and ``sample_weight``).
        y : array-like or dask array/Series of shape (n_samples,)
            True labels.
        sample_weight : array-like or dask array/Series of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            Mean accuracy.
        """
        y_pred = self.predict(X)
        # a dask X's predictions computed (a dask DataFrame's are of unknown length), and dask
        # labels and weights; one by one: dask arrays (the predictions) and DataFrames (a Series
        # of labels) computed together make dask warn and materialise the DataFrames
        y_pred, y, sample_weight = map(in_memory, (y_pred, y, sample_weight))
        # as labels are checked for fit (a column is raveled with a warning; NaN is refused),
        # and of the classes' kind: text beside numbers would compare as unequal everywhere
        y = check_y(y, y_pred.shape[0], type(self).__name__)
        given, predicted = _label_kind(y), _label_kind(self._fitted.classes)
        plain = {"number", "text", "bytes", "time", "timedelta"}
        if given != predicted and ("mixed" in (given, predicted) or {given, predicted} <= plain):
            raise ValueError(f"Mix of label input types: the labels of y are of kind {given}, "
                             f"the classes of {type(self).__name__} of kind {predicted}.")
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, y_pred.shape[0])
            sample_weight = sample_weight / sample_weight.max()  # (their sum may pass 1e308)
        return float(np.average(y_pred == y, weights=sample_weight))
