"""The declared state of a fitted model: statistics -> parameters -> scores.

Every model keeps additive sufficient statistics and derives everything it scores with from them
in one place. This module holds the two pieces every model shares:

``Field``
    One declared statistic: its name, its shape in terms of the model's dimensions (``"classes"``,
    ``"features"``, or a dimension the model computes from fields declared before it, such as
    CategoricalNB's total number of categories; ``None`` for a free length), and its constraints:
    integer or float64, non-negative, bounded in magnitude (by default ``MAX_WEIGHT``: most
    statistics are sums of weights). Floats are always finite. A model declares
    its fields once (``_fields``); ``validate`` checks any statistics against that declaration --
    a model file's, a pickle's, or another model's before a merge -- before anything is derived
    from them.

``Fitted``
    One fitted model, as prediction sees it: the classes, the number and names of the features,
    the float dtype, the declared statistics, the validated hyperparameters the parameters were
    derived with, and those parameters. It is published by one assignment (``model._fitted =
    fitted``), and prediction reads it once, at entry, so a prediction running beside a refit
    sees the old model or the new one, never a mix of the two.

The dtypes of fitted attributes follow one rule, in every model. A model has the dtype of the X
it was first fitted on: float32 for float32 X, float64 for anything else (integer counts too;
MixedNB, whose columns are of several kinds, is always float64); ``partial_fit`` and prediction
cast X to it. *Parameters* -- every fitted attribute derived from the statistics
(``feature_log_prob_``, ``class_log_prior_``, ``theta_``, ``var_``, ``epsilon_``, ``means_``,
``covariance_``, ``coef_``, ...) -- are shown in the model's dtype, as are the outputs of the
predict methods. *Statistics* -- counts and sums of weights (``class_count_``,
``feature_count_``, ``observed_count_``, ``category_count_``, ...) -- are float64 (integer ones
intp), whatever the dtype of X: they are accumulated in float64, and a float32 count stops being
exact at 2**24. Only what the attributes show follows the rule: derivations work from the
float64 statistics, and what scoring reads is each model's own (kept in float64 where that
matters), so rounding a float32 model's attributes costs its predictions nothing. The
exceptions are the chosen hyperparameters (``alpha_``, ``prior_strength_``) and
``log_evidence_``, float64 in every model (``float64_parameter``): a prior strength may be far
beyond float32's range, and an evidence of -2e4 would be rounded by 1e-3, more than the
differences it is compared by. ``parameter`` applies the rule; ``statistic`` shows a statistic
as it is kept.

Statistics are mutated in place only by the model that owns them (``Fitted.lock``: partial_fit of
the text models adds a batch's counts into the existing tables), under that lock; parameters
derived lazily from such statistics are derived under the same lock, and whatever else reads them
(pickles, files, merges, sampling) reads them under it.
"""
from __future__ import annotations

import contextlib
import os
import threading
import warnings
import weakref
from typing import Any, NamedTuple

import numpy as np

from ._validation import user_stacklevel

CLASSES, FEATURES = "classes", "features"
# The largest count or sum of weights a statistic may hold by default: sums of as many of them as
# a model has classes x features cannot overflow float64 in a derivation.
MAX_WEIGHT = 1e250
# The largest total sample weight of one class that fit, partial_fit and merge produce. A count
# statistic sums a class's sample weights times values of at most 2**53 (the largest count a
# model accepts), so it stays far below MAX_WEIGHT, with room for rounding: every model a fit
# makes is one that a model file may hold.
MAX_CLASS_WEIGHT = 1e200


class Field(NamedTuple):
    """One declared sufficient statistic (see the module docstring)."""

    name: str
    shape: tuple  # dimension names, ints, or None (any length)
    integer: bool = False  # intp values (else float64, always finite)
    nonneg: bool = True
    upper: float = MAX_WEIGHT  # largest allowed magnitude


def resolve_shape(field, dims):
    """The concrete shape of ``field`` given the dimensions (``None`` entries stay None)."""
    return tuple(dims[d] if isinstance(d, str) else d for d in field.shape)


def zeros(fields, dims):
    """Empty statistics (all zero) of the declared fields, for a model's first batch."""
    return {f.name: np.zeros([0 if n is None else n for n in resolve_shape(f, dims)],
                             dtype=np.intp if f.integer else np.float64) for f in fields}


def validate(fields, stats, dims, more_dims=None):
    """Check statistics against their declaration; returns them as C-contiguous arrays of the
    declared dtype (copies, never views of the input).

    ``dims`` maps dimension names to sizes; ``more_dims(validated)``, if given, is called for a
    dimension not in ``dims`` with the fields validated so far and returns the missing sizes.
    Every violation -- a missing or unknown field, a wrong dtype or shape, NaN or infinity, a
    negative value, a fractional or too large value -- is a ValueError naming the field.
    """
    if not isinstance(stats, dict):
        raise ValueError("the statistics must be a mapping of field names to arrays")
    names = [f.name for f in fields]
    unknown = sorted(set(map(str, stats)) - set(names))
    if unknown:
        raise ValueError(f"unknown statistics {unknown}; {names} are declared")
    dims = dict(dims)
    out = {}
    for f in fields:
        if f.name not in stats:
            raise ValueError(f"the statistic {f.name!r} is missing")
        value = stats[f.name]
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
            raise ValueError(f"the statistic {f.name!r} must be a numeric array")
        if any(isinstance(d, str) and d not in dims for d in f.shape):
            dims.update(more_dims(out))
        shape = resolve_shape(f, dims)
        if value.ndim != len(shape) or any(want is not None and have != want
                                           for have, want in zip(value.shape, shape)):
            raise ValueError(f"the statistic {f.name!r} has shape {value.shape}, expected "
                             f"{tuple('any' if s is None else s for s in shape)}")
        if f.integer:
            if value.dtype.kind == "f":
                if not np.isfinite(value).all() or (value != np.floor(value)).any():
                    raise ValueError(f"the statistic {f.name!r} must hold whole numbers")
            low, high = (float(value.min()), float(value.max())) if value.size else (0, 0)
            if not (high <= f.upper and high < 2.0**63):
                raise ValueError(f"the statistic {f.name!r} holds a value above {f.upper:g}")
            if not low >= (0 if f.nonneg else -2.0**63):
                raise ValueError(f"the statistic {f.name!r} holds a negative value")
            value = np.array(value, dtype=np.intp, order="C")
        else:
            value = np.array(value, dtype=np.float64, order="C")
            if not np.isfinite(value).all():
                raise ValueError(f"the statistic {f.name!r} holds NaN or infinity")
            if value.size and np.abs(value).max() > f.upper:
                raise ValueError(f"the statistic {f.name!r} holds a value beyond {f.upper:g} in "
                                 "magnitude")
        if f.nonneg and value.size and value.min() < 0:
            raise ValueError(f"the statistic {f.name!r} holds a negative value")
        out[f.name] = value
    return out


def check_at_most(values, bound, message):
    """``values <= bound`` up to rounding (the same weights summed in another order), else a
    ValueError saying ``message``: for statistics that must agree (a count within its class's)."""
    if (values > bound + 1e-9 * bound + 1e-300).any():
        raise ValueError(message)


def readonly(array):
    """A read-only view: fitted attributes show the statistics without letting a caller change
    what the kernels trust. The view is made over a read-only buffer of the array, so that its
    WRITEABLE flag cannot be set back (a plain view's can, while the array it views is
    writeable); an array no buffer can show (no entries; object, datetime or timedelta dtype)
    is shown as a copy."""
    try:
        if array.size:
            return np.asarray(memoryview(array).toreadonly())
    except (TypeError, ValueError, BufferError):
        pass
    view = array.copy()
    view.flags.writeable = False
    return view


# A process forked while another thread held one of fastgen's locks would keep it held forever:
# that thread does not exist in the child, whose first fit, or read of a statistic, would wait
# for it. Every lock fastgen makes comes from new_lock, and the child frees those it cannot take,
# as CPython's logging does its handlers'. A model that was counting a batch into its own
# statistics in place (counting_in_place) holds part of that batch: the child unfits it, warning.
_LOCKS: weakref.WeakSet = weakref.WeakSet()
_COUNTING: dict[int, Any] = {}  # id(model) -> model, while its partial_fit counts in place


def new_lock():
    """A reentrant lock that a forked child does not inherit held by another thread."""
    lock = threading.RLock()
    _LOCKS.add(lock)
    return lock


@contextlib.contextmanager
def counting_in_place(model):
    """Marks ``model`` as counting into its statistics in place (for a fork meanwhile)."""
    _COUNTING[id(model)] = model
    try:
        yield
    finally:
        _COUNTING.pop(id(model), None)


def _after_fork_in_child():
    for lock in list(_LOCKS):
        if lock.acquire(blocking=False):  # (free, or held by the thread that forked)
            lock.release()
        else:
            lock._at_fork_reinit()
    counting = list(_COUNTING.values())
    _COUNTING.clear()
    for model in counting:  # (all unfitted before any warning, which may be an error)
        model.__dict__.pop("_fitted", None)
    for model in counting:
        with contextlib.suppress(Exception):  # (an error here would be printed, not raised)
            warnings.warn(f"This process was forked while another thread was adding a batch "
                          f"to {type(model).__name__}'s statistics: here it holds part of that "
                          "batch, so it is no longer fitted (fit it again).", RuntimeWarning,
                          stacklevel=user_stacklevel())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class Fitted:
    """One fitted model as prediction sees it (see the module docstring).

    After publication, ``params`` is set at most once (a model that derives lazily, after
    ``partial_fit``), ``memo`` collects values computed from the snapshot on first read (fitted
    attributes that scoring does not use, and what reading a DataFrame needs; never saved;
    cleared when the owner's partial_fit adds to the statistics in place), and
    the statistics change only in place, under ``lock``, by the model that owns them (the text
    models' ``partial_fit`` adds a batch's counts to the tables; its new snapshot then replaces
    this one): whatever reads the statistics of a snapshot that may still be published holds
    ``lock``.
    """

    __slots__ = ("classes", "n_features", "dtype", "feature_names", "stats", "hyper", "params",
                 "lock", "extra", "memo")

    def __init__(self, classes, n_features, dtype, feature_names, stats, hyper, params=None,
                 lock=None, extra=None):
        self.classes = classes
        self.n_features = n_features
        self.dtype = dtype
        self.feature_names = feature_names
        self.stats = stats
        self.hyper = hyper
        self.params = params
        self.lock = new_lock() if lock is None else lock
        self.extra = extra
        self.memo = {}

    def replace(self, **changes: Any) -> Fitted:
        """A new snapshot with some entries changed (and a fresh lock unless one is given)."""
        values = {name: getattr(self, name) for name in self.__slots__
                  if name not in ("lock", "memo")}
        values["params"] = None
        values.update(changes)
        return Fitted(**values)


class fitted_attribute:
    """A read-only fitted attribute computed from the published ``Fitted`` (``read(model,
    fitted)``): absent (AttributeError) before fit, and not assignable -- the statistics are
    the model's, and changing them means refitting."""

    def __init__(self, read, doc=None):
        self.read = read
        self.__doc__ = doc

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, model, owner=None):
        if model is None:
            return self
        return self.read(model, self._snapshot(model))

    def _snapshot(self, model):
        fitted = model.__dict__.get("_fitted")
        if fitted is None:
            raise AttributeError(f"{type(model).__name__}.{self.name} is available after fit")
        return fitted

    def __set__(self, model, value):
        raise AttributeError(f"{type(model).__name__}.{self.name} is a fitted attribute: it "
                             "comes from the model's statistics and cannot be set (refit the "
                             "model instead).")

    def __delete__(self, model):
        self.__set__(model, None)


# The model's flag (in its __dict__) that a fitted attribute has shown its statistics: the text
# models' partial_fit, which adds to the statistics it owns in place, copies them first when it
# is set (and clears it), so that a view once shown never changes
STATS_SHOWN = "_stats_shown"


def shown_statistic(model, fitted, read):
    """A statistic as a fitted attribute shows it: a read-only view of ``read()``; for a model
    that counts in place (``_counts_in_place``), taken under the snapshot's lock (never half a
    batch that partial_fit is adding) and marked shown (``mark_shown``)."""
    if not model._counts_in_place:
        return readonly(read())
    with fitted.lock:
        model.__dict__[STATS_SHOWN] = True
        return readonly(read())


def mark_shown(model, fitted):
    """Mark the statistics of a model that counts in place as shown, under the snapshot's lock
    (after any batch being added): its next partial_fit copies them instead of adding to them,
    so that they can be read without the lock from then on."""
    if model._counts_in_place:
        with fitted.lock:
            model.__dict__[STATS_SHOWN] = True


def statistic(name, doc=None):
    """A fitted attribute showing one declared statistic (read-only, ``shown_statistic``)."""
    return fitted_attribute(
        lambda model, fitted: shown_statistic(model, fitted, lambda: fitted.stats[name]), doc)


class memoized(fitted_attribute):
    """A read-only fitted attribute computed from the snapshot's statistics on first read
    (``read(model, fitted)``) and kept in its ``memo``, both under the snapshot's lock (its
    partial_fit clears the memo when it adds to the statistics in place)."""

    def __get__(self, model, owner=None):
        if model is None:
            return self
        fitted = self._snapshot(model)
        value = fitted.memo.get(self.name)
        if value is None:
            with fitted.lock:  # from statistics that partial_fit may be adding to (and then
                # clearing the memo of): computed and kept under one hold of the lock
                value = fitted.memo.get(self.name)
                if value is None:
                    value = fitted.memo[self.name] = self._compute(model, fitted)
        return value

    def _compute(self, model, fitted):
        return readonly(self.read(model, fitted))


def shown(value, dtype):
    """A parameter as its fitted attribute shows it (the rule of the module docstring): float
    arrays in ``dtype`` (a copy only if kept in another), read-only, also in a list; a float as
    a scalar of ``dtype``; anything else as it is."""
    if isinstance(value, list):
        return [shown(v, dtype) for v in value]
    if isinstance(value, np.ndarray):
        return readonly(value.astype(dtype, copy=False) if value.dtype.kind == "f" else value)
    if isinstance(value, float):
        return dtype.type(value)
    return value


class parameter(memoized):
    """A fitted attribute showing a parameter in the model's dtype (``shown``): ``read`` names
    an attribute of the snapshot's parameters, or is ``read(model, fitted)``, which reads them
    through ``model._params_of`` (and takes the snapshot's lock itself if it also reads the
    statistics). Kept in the snapshot's memo, so a float32 model casts once: a race casts
    twice, never a mix, as the parameters of a snapshot never change."""

    def __init__(self, read, doc=None):
        super().__init__(_params_attribute(read) if isinstance(read, str) else read, doc)

    def _compute(self, model, fitted):
        return shown(self.read(model, fitted), fitted.dtype)


class float64_parameter(parameter):
    """A ``parameter`` shown in float64 whatever the model's dtype (the rule's exceptions, in
    the module docstring)."""

    def _compute(self, model, fitted):
        return shown(self.read(model, fitted), np.dtype(np.float64))


def _params_attribute(name):
    """``read(model, fitted)`` of the parameters' attribute ``name``."""
    return lambda model, fitted: getattr(model._params_of(fitted), name)
