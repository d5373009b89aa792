"""Naive Bayes for counts and word presence: MultinomialNB, BernoulliNB, ComplementNB.

Each model keeps additive per-class sufficient statistics (``class_count_``, ``feature_count_``):
``fit`` counts them in one kernel pass, ``partial_fit`` keeps adding to them. Everything scoring
needs is derived from the statistics in one place per model (``_derive``): a feature-major table
``[n_features, n_classes]`` and a per-class bias, so that the joint log-likelihood is linear,
``jll[i, c] = bias[c] + sum_j v(x_ij) table[j, c]``, and one kernel scores all three models.
``fit`` derives eagerly; ``partial_fit`` only marks the derived parameters stale, and they are
rebuilt the first time they are needed (so streaming many small batches costs counting only).

A sparse first batch leaves its counts as the list of nonzeros the counting kernel made
(``_listed_counts``): derivation reads that list, and the dense ``feature_count_``, mostly zeros for
a large vocabulary and as large as the scoring table, is built when it is first read (by the user,
the next batch, merge, pickling or saving).
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.special import gammaln

from ._base import OUT_JLL, BaseClassifier, check_priors, group_by_class, spread
from ._core import _checks, _counts, _tables
from ._core import jll as _jll
from ._gaussian import (
    DIAG_GAUSSIAN,
    DIAG_POISSON,
    LOG_2PI,
    combine_moments,
    diagonal_moments,
    diagonal_tables,
    score_diagonal,
)
from ._validation import check_sample_weight

__all__ = ["MultinomialNB", "BernoulliNB", "ComplementNB"]

MAX_CATEGORIES = 2**24  # per feature: CategoricalNB's count table has n_classes x sum K_j cells
# Count models: larger counts are not integers in float64, and their sums and x log(theta)
# overflow. Continuous models: larger magnitudes overflow the squared deviations.
MAX_COUNT = 2.0**53
MAX_VALUE = 1e150
MAX_SMOOTHING = 1e100  # alpha, beta, var_smoothing: larger ones overflow the smoothed sums
# Smallest usable variance: -1/(2 var) must stay finite in float64.
MIN_GAUSSIAN_VARIANCE = 1e-300

ALPHA_MIN = 1e-10  # alpha is raised to this unless force_alpha=True (scikit-learn's bound)
# Document lengths of this many batches, or rows, are added into the length statistics.
MAX_LENGTH_PARTS = 64
MAX_LENGTH_ROWS = 2**20


# Whole-number counts take their logs log(n + alpha) from a table of this many (fill_table), when
# there are at least LOG_TABLE_MIN_COUNTS of them to pay for it: no NumPy pass that adds alpha and
# another that takes the log (0.9 of 10.5 ms fitting the 20 Newsgroups-shaped corpus).
LOG_TABLE_SIZE = 4096
LOG_TABLE_MIN_COUNTS = 4 * LOG_TABLE_SIZE


def _log_table(count, alpha):
    """log(i + alpha) for i < LOG_TABLE_SIZE, for fill_table to take the logs of the listed counts
    from; None for a per-feature alpha, for fewer than LOG_TABLE_MIN_COUNTS counts, or for counts
    that do not look like whole numbers (a sample of 256; fill_table computes the log of any count
    the table does not hold, but one at a time)."""
    if np.ndim(alpha) != 0 or len(count) < LOG_TABLE_MIN_COUNTS:
        return None
    sample = count[:: len(count) // 256]
    if not np.array_equal(sample, np.floor(sample)):
        return None
    with np.errstate(divide="ignore"):
        return np.log(np.arange(LOG_TABLE_SIZE, dtype=np.float64) + alpha)


def _repeated(value, n):
    """A read-only float64 vector of n times one value: a stride-0 view, as np.broadcast_to makes
    (whose generality costs microseconds a call)."""
    view = np.ndarray((n,), np.float64, np.array([value], dtype=np.float64), 0, (0,))
    view.flags.writeable = False
    return view


class _Params:
    """What scoring needs, derived from the statistics: the feature-major table, the per-class
    bias, the (rare) required features of BernoulliNB with alpha = 0, and whether the table holds
    infinities (then the kernels skip zero values). Built complete, never modified afterwards."""

    __slots__ = ("table", "bias", "must", "nonfinite")

    def __init__(self, table, bias, nonfinite, must=None):
        self.table = table
        self.bias = np.ascontiguousarray(bias, dtype=np.float64)
        self.nonfinite = bool(nonfinite)
        self.must = must


class _Derived:
    """The smoothing in force and the parameters derived with it (``params is None``: stale,
    rebuilt on first use).

    A mutable holder, so that deriving during a predict call does not change the estimator's
    ``__dict__``; ``params`` is replaced by one reference store, so threads predicting at the same
    time see complete parameters or none (at worst two of them derive the same thing).
    """

    __slots__ = ("alpha", "params", "feature_log_prob")

    def __init__(self, alpha):
        self.alpha = alpha
        self.params = self.feature_log_prob = None


class _ClassPriorMixin:
    """``fit_prior`` / ``class_prior`` handling shared by the models that take them."""

    def _check_class_prior(self, n_classes):
        if self.class_prior is None:
            return None
        prior = np.asarray(self.class_prior, dtype=np.float64)
        if prior.shape != (n_classes,):
            raise ValueError(
                f"Number of priors must match number of classes: class_prior has shape "
                f"{prior.shape}, there are {n_classes} classes."
            )
        if not np.isfinite(prior).all() or (prior < 0).any() or not (prior > 0).any():
            raise ValueError("class_prior must contain finite, non-negative probabilities, not "
                             "all zero.")
        return prior

    def _update_class_log_prior(self, class_prior):
        """Empirical (fit_prior), given (class_prior) or uniform log prior.

        A class announced in ``classes`` but not seen yet has prior 0 (log -inf) and so posterior
        0, without warnings or NaN (scikit-learn #13232).
        """
        with np.errstate(divide="ignore"):
            if class_prior is not None:
                self.class_log_prior_ = np.log(class_prior)
            elif self.fit_prior:
                self.class_log_prior_ = np.log(self.class_count_) - np.log(self.class_count_.sum())
            else:
                n_classes = len(self.classes_)
                self.class_log_prior_ = np.full(n_classes, -np.log(n_classes))


def _length_histogram(y_idx, lengths, weight, shape):
    """The CSR matrix of the summed weights per (class, length), with sorted indices: rows are
    ordered by class, then length, by two linear-time radix sorts when both fit in 16 bits (NumPy
    sorts 64-bit keys slowly), and equal pairs summed in row order."""
    if n_rows := len(y_idx):
        if shape[0] <= 2**16 and shape[1] <= 2**16:
            by_length = np.argsort(lengths.astype(np.uint16), kind="stable")
            order = by_length[np.argsort(y_idx[by_length].astype(np.uint16), kind="stable")]
        else:
            order = np.lexsort((lengths, y_idx))
        row, col = y_idx[order], lengths[order]
        first = np.ones(n_rows, dtype=bool)
        first[1:] = (row[1:] != row[:-1]) | (col[1:] != col[:-1])
        starts = np.flatnonzero(first)
        data = np.add.reduceat(weight[order], starts)
        row, col = row[starts], col[starts]
    else:
        data, row, col = np.empty(0), np.empty(0, np.intp), np.empty(0, np.intp)
    indptr = np.zeros(shape[0] + 1, dtype=np.intp)
    np.cumsum(np.bincount(row, minlength=shape[0]), out=indptr[1:])
    return sp.csr_matrix((data, col, indptr), shape=shape)


class _BaseDiscreteNB(_ClassPriorMixin, BaseClassifier):
    """Shared fit/partial_fit/scoring of the discrete naive Bayes models."""

    _X_constraints = {"allow_negative": False, "max_abs": MAX_COUNT}

    #: (n_features, class_ptr, feature, count, class_sum): the statistics of a sparse first batch
    #: as the counting kernel listed them, until feature_count_ is built from them (__getattr__);
    #: read-only. None: feature_count_ is an attribute.
    _listed_counts: tuple | None = None

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_derived")

    def __getattr__(self, name):
        # reached only when normal lookup fails: feature_count_ still listed
        listed = self.__dict__.get("_listed_counts")
        if name == "feature_count_" and listed is not None:
            n_features, class_ptr, feature, count, _ = listed
            n_classes = len(class_ptr) - 1
            feature_count = np.zeros((n_classes, n_features))
            rows = np.repeat(np.arange(n_classes), np.diff(class_ptr))
            feature_count[rows, feature] = count
            self.feature_count_ = feature_count  # before the list goes: readers see one or both
            self._listed_counts = None
            return feature_count
        return object.__getattribute__(self, name)  # the usual AttributeError, or a property's

    def __getstate__(self):
        # Pickle the statistics, not what is derived from them (as large again); it is rebuilt
        # on first use after loading. Listed counts are stored as feature_count_.
        if self._listed_counts is not None:
            self.feature_count_  # noqa: B018  (built)
        state = self.__dict__.copy()
        state.pop("_listed_counts", None)
        if "_derived" in state:
            state["_derived"] = _Derived(self._derived.alpha)
        if state.pop("_length_parts", None):
            state["_length_count"] = self._lengths()
        return state

    def _more_input_tags(self):
        return {"sparse": True, "positive_only": not self._X_constraints.get("allow_negative", True)}

    # ----------------------------------------------------------------- statistics
    def _binarize_args(self):
        """(binarize?, threshold) for the kernels: only BernoulliNB binarizes."""
        return False, 0.0

    def _finish_fit(self):
        self._params()  # fit derives eagerly; partial_fit leaves it to the first use

    def _reset(self, classes, X):
        n_classes = len(classes)
        self.classes_ = classes
        self.class_count_ = np.zeros(n_classes, dtype=np.float64)
        self.feature_count_ = None  # written whole, or listed, by the first batch (_accumulate)
        self._listed_counts = None
        # parameters and outputs keep float32 input's dtype; counts and float64 give float64
        self._dtype = X.dtype if X.dtype == np.float32 else np.dtype(np.float64)
        self._derived = _Derived(None)
        if self._counts_words:
            self._length_count, self._length_parts = None, []  # None: no lengths yet

    # Multinomial and complement models draw documents: they keep each class's distribution of
    # document lengths, P(N | c) (seed 002), as weights per (class, rounded length). That is a CSR
    # matrix (_length_count) plus the batches added since it was built (_length_parts, arrays of
    # class, length and weight): fit and partial_fit only append, and readers add them up.
    _counts_words = False
    _length_parts: tuple | list = ()  # none in model files and pickles (see __getstate__)

    def _add_lengths(self, lengths, y_idx, sample_weight):
        # lengths beyond 2**53 words are not integers in float64 any more: kept at that cap
        lengths = np.minimum(np.rint(lengths), 2.0**53).astype(np.intp)
        parts = [*self._length_parts, (np.array(y_idx, dtype=np.intp), lengths,
                                       np.array(sample_weight, dtype=np.float64))]
        if len(parts) > MAX_LENGTH_PARTS or sum(len(p[0]) for p in parts) > MAX_LENGTH_ROWS:
            self._length_count, parts = self._lengths(parts), []
        self._length_parts = parts

    def _lengths(self, parts=None):
        """The length statistics with the pending parts (default: this model's) added in."""
        parts = self._length_parts if parts is None else parts
        current = self._length_count
        if current is None:
            current = sp.csr_matrix((len(self.classes_), 1))
        if not len(parts):
            return current
        y_idx, lengths, weight = (np.concatenate(arrays) for arrays in zip(*parts))
        width = max(current.shape[1], int(lengths.max(initial=0)) + 1)
        batch = _length_histogram(y_idx, lengths, weight, (current.shape[0], width))
        if current.nnz:
            current = current.tocsr(copy=True)
            current.resize(batch.shape)
            batch = (current + batch).tocsr()
        return batch

    def _merge(self, other, classes, mine, theirs):
        n = len(classes)
        self.feature_count_ = (spread(self.feature_count_, mine, n)
                               + spread(other.feature_count_, theirs, n))
        if self._counts_words:
            mine_count, theirs_count = self._lengths(), other._lengths()
            width = max(mine_count.shape[1], theirs_count.shape[1])
            total = sp.csr_matrix((n, width))
            for part, rows in ((mine_count, mine), (theirs_count, theirs)):
                part = part.tocoo()
                total = total + sp.csr_matrix((part.data, (rows[part.row], part.col)),
                                              shape=(n, width))
            self._length_count, self._length_parts = total.tocsr(), []

    def _rederive(self):
        self._update_class_log_prior(self._check_class_prior(len(self.classes_)))
        self._derived = _Derived(self._check_alpha(self.n_features_in_))

    def _state_shapes(self, n_classes, n_features):
        if self._counts_words and self._lengths().shape[0] != n_classes:
            raise ValueError("the document-length statistics do not match the classes")
        return [("class_count_", (n_classes,)), ("feature_count_", (n_classes, n_features))]

    def _word_probabilities(self):
        return np.exp(self._feature_log_prob(self._derived.alpha))

    def _sample_X(self, y_idx, rng):
        """Documents: a length from the class's length distribution, then that many words from
        the class's word distribution (a CSR document-term matrix)."""
        theta = self._word_probabilities()
        theta = theta / theta.sum(axis=1, keepdims=True)
        lengths = self._lengths()
        data, indices, indptr = [], [], [0]
        for c in y_idx:
            start, stop = lengths.indptr[c], lengths.indptr[c + 1]
            if stop == start:
                raise ValueError(f"Class {self.classes_[c]!r} has no training documents to "
                                 "draw lengths from.")
            weights = lengths.data[start:stop]
            n_words = rng.choice(lengths.indices[start:stop], p=weights / weights.sum())
            counts = rng.multinomial(n_words, theta[c])
            nonzero = np.flatnonzero(counts)
            data.append(counts[nonzero].astype(np.float64))
            indices.append(nonzero)
            indptr.append(indptr[-1] + len(nonzero))
        return sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr),
                             shape=(len(y_idx), self.n_features_in_))

    def _check_batch(self, X, n_classes, sample_weight):
        """Validate what a batch brings besides X and y: (sample_weight, alpha, class_prior)."""
        self._binarize_args()  # raises on a bad binarize before anything is committed
        return (check_sample_weight(sample_weight, X.shape[0]),
                self._check_alpha(X.shape[1]), self._check_class_prior(n_classes))

    def _accumulate(self, X, y_idx, has_nan, sample_weight, alpha, class_prior):
        """Add a validated batch to the statistics and mark the derived parameters stale.

        The first batch after _reset writes the statistics instead of adding to zeros; a sparse
        one lists them only (see the module docstring)."""
        n_classes, n_features = len(self.classes_), X.shape[1]
        first = self._listed_counts is None and self.feature_count_ is None
        listed = first and sp.issparse(X)
        if first and not listed:
            self.feature_count_ = np.zeros((n_classes, n_features))
        names = ("class_count_",) if listed else ("class_count_", "feature_count_")
        self._check_statistics(n_classes, n_features, names)  # before the counting kernel writes
        for name in names:  # e.g. a model loaded read-only (mmap)
            if not getattr(self, name).flags.writeable:
                setattr(self, name, getattr(self, name).copy())
        order, class_ptr = group_by_class(y_idx, n_classes)
        binarize, threshold = self._binarize_args()
        derived = _Derived(alpha)
        if sp.issparse(X):
            # the document lengths come with the counting pass
            lengths = np.empty(X.shape[0]) if self._counts_words else None
            n_threads = self._n_threads_for(X.indptr[-1])
            listing = {}
            if listed:
                # a class lists at most min(its entries, n_features) nonzeros (the + 1s are
                # spare: the kernel's arrays are never empty; the kept ones may be)
                room, size = None, min(X.indptr[-1], n_classes * n_features) + n_classes + 1
                if n_threads > 1 and n_classes > 1:  # classes listed at once: a room each
                    entries = np.bincount(y_idx, weights=np.diff(X.indptr), minlength=n_classes)
                    room = np.zeros(n_classes + 1, dtype=np.intp)
                    np.cumsum(np.minimum(entries, n_features).astype(np.intp) + 1, out=room[1:])
                    size = room[-1]
                listing = {"nz_room": room, "nz_ptr_out": np.empty(n_classes + 1, np.intp),
                           "nz_feature_out": np.empty(size, np.intp),
                           "nz_value_out": np.empty(size), "nz_sum_out": np.empty(n_classes)}
            _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, sample_weight,
                              binarize, threshold, None if listed else self.feature_count_,
                              self.class_count_, n_threads, overwrite=listed,
                              n_features=n_features, row_sum_out=lengths, **listing)
            if listed:
                n = listing["nz_ptr_out"][-1]
                # shrunk in place to the first n entries (realloc: the pages past them, never
                # touched, go back to the allocator, which would otherwise hand out fresh pages,
                # to be faulted in, for every fit of a process that made no larger arrays), and
                # read-only: derivations take them as they are
                for name in ("nz_feature_out", "nz_value_out"):
                    listing[name].resize(n, refcheck=False)  # no views of them exist
                listed_counts = (listing["nz_ptr_out"], listing["nz_feature_out"],
                                 listing["nz_value_out"], listing["nz_sum_out"])
                for array in listed_counts:
                    array.flags.writeable = False
                self._listed_counts = (n_features, *listed_counts)
                del self.feature_count_
        else:
            _counts.count_dense(X, order, class_ptr, sample_weight, binarize, threshold,
                                self.feature_count_, self.class_count_,
                                self._n_threads_for(X.size))
            lengths = X.sum(axis=1, dtype=np.float64) if self._counts_words else None
        if self._counts_words:
            self._add_lengths(lengths, y_idx, sample_weight)
        self._update_class_log_prior(class_prior)
        self._derived = derived

    def _check_statistics(self, n_classes, n_features,
                          names=("class_count_", "feature_count_", "class_log_prior_")):
        """The counting kernels write into these unchecked, and derivation reads them: refuse
        statistics that were replaced by arrays of another shape, dtype or layout (fitted
        attributes can be reassigned). Listed counts are private, but are checked against
        classes_ and n_features_in_, which are not."""
        shapes = {"class_count_": (n_classes,), "feature_count_": (n_classes, n_features),
                  "class_log_prior_": (n_classes,)}
        listed = self._listed_counts
        if listed is not None and "feature_count_" in names:
            if (listed[0], len(listed[1]) - 1) != (n_features, n_classes):
                raise ValueError(
                    f"classes_ or n_features_in_ was modified: the counts are of {listed[0]} "
                    f"features x {len(listed[1]) - 1} classes. Refit the model (fit) instead of "
                    "editing fitted attributes.")
            names = [name for name in names if name != "feature_count_"]
        for name in names:
            shape = shapes[name]
            value = getattr(self, name)
            if not (isinstance(value, np.ndarray) and value.shape == shape
                    and value.dtype == np.float64 and value.flags.c_contiguous):
                raise ValueError(
                    f"{name} was modified: expected a C-contiguous float64 array of shape "
                    f"{shape}. Refit the model (fit) instead of editing fitted attributes."
                )

    def _check_alpha(self, n_features):
        alpha = self.alpha
        if isinstance(alpha, numbers.Real) and not isinstance(alpha, bool):
            alpha = float(alpha)
            if not 0 <= alpha <= MAX_SMOOTHING:
                raise ValueError(f"alpha must be a number in [0, {MAX_SMOOTHING:g}], got "
                                 f"{alpha!r}.")
        else:
            try:
                alpha = np.asarray(alpha, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"alpha must be a number or an array of n_features numbers, got "
                                f"{self.alpha!r}.") from None
            if alpha.shape != (n_features,):
                raise ValueError(
                    f"When alpha is an array, it should contain n_features = {n_features} "
                    f"elements; got shape {alpha.shape}."
                )
            if not ((alpha >= 0) & (alpha <= MAX_SMOOTHING)).all():
                raise ValueError(f"All values in alpha must be in [0, {MAX_SMOOTHING:g}].")
        if np.min(alpha) < ALPHA_MIN and not self.force_alpha:
            warnings.warn(
                f"alpha too small will result in numeric errors, setting alpha = {ALPHA_MIN:.1e}. "
                "Use `force_alpha=True` to keep alpha unchanged.",
                UserWarning,
                stacklevel=3,
            )
            alpha = np.maximum(alpha, ALPHA_MIN)
        return alpha

    # ----------------------------------------------------------------- derived parameters
    def _params(self):
        """The derived parameters (a _Params), rebuilt from the statistics if stale."""
        derived = self._derived
        params = derived.params
        if params is None:
            self._check_statistics(len(self.classes_), self.n_features_in_)
            params = self._derive(derived.alpha)
            derived.params = params  # published whole, in one store
        return params

    @property
    def feature_log_prob_(self):
        """ndarray of shape (n_classes, n_features): log P(x_j | y=c) (model-specific meaning)."""
        if not self.__sklearn_is_fitted__():
            raise AttributeError("feature_log_prob_ is available after fit")
        derived = self._derived
        if derived.feature_log_prob is None:
            derived.feature_log_prob = self._feature_log_prob(derived.alpha)
        return derived.feature_log_prob

    def _feature_log_prob(self, alpha):
        """Multinomial and complement models score with feature_log_prob_ itself."""
        return self._params().table.T

    def _alpha_per_feature(self, alpha):
        """alpha and log(alpha) as read-only (n_features,) vectors (stride-0 views for a scalar)."""
        with np.errstate(divide="ignore"):
            log_alpha = np.log(alpha)
        if np.ndim(alpha) == 0:
            return _repeated(alpha, self.n_features_in_), _repeated(log_alpha, self.n_features_in_)
        alpha = np.asarray(alpha, dtype=np.float64).view()  # the model's own alpha: read-only
        alpha.flags.writeable = False
        log_alpha.flags.writeable = False
        return alpha, log_alpha

    def _nonzero_counts(self):
        """The nonzero entries of feature_count_, class by class: class_ptr, feature, count and
        the sum of each class's counts. See _tables.nonzero_counts. Read-only: they may be the
        listed counts."""
        listed = self._listed_counts
        if listed is not None:
            return listed[1:]
        capacity = self.feature_count_.size  # only the pages actually written are touched
        n_classes = len(self.classes_)
        class_ptr = np.empty(n_classes + 1, dtype=np.intp)
        feature = np.empty(capacity, dtype=np.intp)
        count = np.empty(capacity, dtype=np.float64)
        class_sum = np.empty(n_classes, dtype=np.float64)
        _tables.nonzero_counts(self.feature_count_, class_ptr, feature, count, class_sum)
        n = class_ptr[-1]
        return class_ptr, feature[:n], count[:n], class_sum

    def _fill_logged_counts(self, feature_term, class_term, class_ptr, feature, count, alpha):
        """_fill_table with the listed entries set to log(count + alpha_j) + class_term[c]:
        taken from a log table for enough whole-number counts (_log_table), else NumPy's add and
        log first. alpha: a number, or a per-feature vector."""
        log_table = _log_table(count, alpha)
        if log_table is not None:  # fill_table takes the logs of the counts themselves
            return self._fill_table(feature_term, class_term, class_ptr, feature, count,
                                    log_table=log_table, log_shift=alpha)
        value = np.add(count, alpha if np.ndim(alpha) == 0 else np.asarray(alpha)[feature])
        return self._fill_table(feature_term, class_term, class_ptr, feature,
                                np.log(value, out=value))

    def _fill_table(self, feature_term, class_term, class_ptr, feature, value,
                    value_class_term=None, negate=False, log_table=None, log_shift=0.0,
                    complement=False):
        """Feature-major table: feature_term[j] + class_term[c], with the listed nonzero entries
        set to value + value_class_term[c] (default: class_term; -value with negate; the value's
        log(value + log_shift) with a log_table, log_shift a number; ComplementNB's logs of
        complements with complement); and whether any entry is not finite. See
        _tables.fill_table."""
        n_classes, n_features = len(self.classes_), self.n_features_in_  # as the counts (checked)
        class_term = np.ascontiguousarray(class_term, dtype=np.float64)
        if value_class_term is None:
            value_class_term = class_term
        table = np.empty((n_features, n_classes), dtype=self._dtype)
        nonfinite = _tables.fill_table(feature_term, class_term, class_ptr, feature, value,
                                       np.ascontiguousarray(value_class_term, dtype=np.float64),
                                       table, self._n_threads_for(table.size), negate,
                                       log_table, float(log_shift), complement)
        return table, nonfinite > 0

    # ----------------------------------------------------------------- scoring
    def _score(self, X, kind, out, has_nan):
        params = self._params()
        # O(1) guards: the kernels index these arrays unchecked, and fitted attributes can be
        # reassigned by users
        n_features, n_classes = params.table.shape
        if (X.shape[1], out.shape[1], params.bias.shape[0]) != (n_features, n_classes, n_classes):
            raise ValueError(
                f"fitted parameters are inconsistent: {n_features} features x {n_classes} classes "
                f"in the table, {params.bias.shape[0]} class biases, {out.shape[1]} classes_, "
                f"{X.shape[1]} features in X. Were fitted attributes modified? Refit the model."
            )
        binarize, threshold = self._binarize_args()
        first_kind = kind if params.must is None else OUT_JLL
        if sp.issparse(X):
            n_threads = self._n_threads_for(X.indptr[-1] * n_classes)
            failed = _jll.jll_linear_csr(X.data, X.indices, X.indptr, params.table, params.bias,
                                         binarize, threshold, params.nonfinite, first_kind, out,
                                         n_threads)
        else:
            n_threads = self._n_threads_for(X.size * n_classes)
            failed = _jll.jll_linear_dense(X, params.table, params.bias, binarize, threshold,
                                           first_kind, out, n_threads)
        if params.must is not None:
            self._apply_required_features(X, params.must, out)
            if kind != OUT_JLL:
                failed += _jll.normalize_rows_inplace(out, kind, n_threads)
        if failed:
            raise MemoryError("could not allocate the per-thread scoring buffer")


class MultinomialNB(_BaseDiscreteNB):
    """Naive Bayes for multinomially distributed counts (word counts in text).

    P(x | y=c) is a multinomial over features with probabilities theta_cj estimated from
    smoothed counts: theta_cj = (N_cj + alpha_j) / (N_c + sum_j alpha_j).

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing; 0 for none.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10 with a warning.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Given class priors (not adjusted by the data).
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
        (Weighted) number of samples seen per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        (Weighted) sum of each feature per class.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        Smoothed log theta_cj.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, when X was a DataFrame with string column names.

    See Also
    --------
    BernoulliNB : word presence/absence event model.
    ComplementNB : complement naive Bayes, for imbalanced text classes.

    Notes
    -----
    jll[i, c] = log P(c) + sum_j x_ij log theta_cj (seed 000 and seed 002: the multinomial event
    model). Identical to scikit-learn's MultinomialNB for the same parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import MultinomialNB
    >>> X = np.array([[2, 1, 0], [3, 0, 0], [0, 1, 4], [0, 2, 3]])
    >>> clf = MultinomialNB().fit(X, ["ham", "ham", "spam", "spam"])
    >>> clf.predict([[1, 0, 0], [0, 0, 5]])
    array(['ham', 'spam'], dtype='<U4')
    """

    _counts_words = True

    def __init__(self, alpha: float | ArrayLike = 1.0, *, force_alpha: bool = True,
                 fit_prior: bool = True, class_prior: ArrayLike | None = None,
                 n_threads: int | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.n_threads = n_threads

    def _derive(self, alpha_in):
        # log theta_cj = log(N_cj + alpha_j) - log(N_c + sum alpha); log(alpha_j) - ... if N_cj = 0
        alpha, log_alpha = self._alpha_per_feature(alpha_in)
        class_ptr, feature, count, class_sum = self._nonzero_counts()
        total = class_sum + alpha.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            table, nonfinite = self._fill_logged_counts(log_alpha, -np.log(total), class_ptr,
                                                        feature, count, alpha_in)
        bias = self.class_log_prior_.copy()
        empty = total == 0  # a class with no data and no smoothing produces nothing
        if empty.any():
            table[:, empty] = 0.0
            bias[empty] = -np.inf
        return _Params(table, bias, nonfinite)


class ComplementNB(_BaseDiscreteNB):
    """Complement naive Bayes (Rennie et al. 2003), suited to imbalanced text data.

    Weights come from the counts of every class *except* c; with one class the prior is added.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive smoothing of the complement counts.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10 with a warning.
    fit_prior : bool, default=True
        Only used with a single class (as in scikit-learn).
    class_prior : array-like of shape (n_classes,), default=None
        Only used with a single class.
    norm : bool, default=False
        Normalise the weights (the second normalisation of Rennie et al.).
    n_threads : int, default=None
        OpenMP threads of the kernels: None uses the OpenMP default (all cores, or
        ``OMP_NUM_THREADS``, or a ``threadpoolctl`` limit), a positive number that many, a
        negative one counts back from all cores. Batches below about 200,000 multiply-adds run
        on one thread. Results do not depend on it.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
    feature_all_ : ndarray of shape (n_features,)
        Counts of each feature over all classes.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        Complement weights.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    MultinomialNB : the multinomial event model it complements.

    Notes
    -----
    Identical to scikit-learn's ComplementNB for the same parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import ComplementNB
    >>> X = np.array([[2, 1, 0], [3, 0, 0], [0, 1, 4], [0, 2, 3]])
    >>> ComplementNB().fit(X, [0, 0, 1, 1]).predict([[0, 0, 5]])
    array([1])
    """

    _counts_words = True

    def __init__(self, alpha: float | ArrayLike = 1.0, *, force_alpha: bool = True,
                 fit_prior: bool = True, class_prior: ArrayLike | None = None, norm: bool = False,
                 n_threads: int | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm
        self.n_threads = n_threads

    def _word_probabilities(self):
        # documents of class c are drawn from its own smoothed word counts
        return self.feature_count_ + self._alpha_per_feature(self._derived.alpha)[0]

    @property
    def feature_all_(self):
        """ndarray of shape (n_features,): counts of each feature over all classes."""
        if not self.__sklearn_is_fitted__():
            raise AttributeError("feature_all_ is available after fit")
        return self.feature_count_.sum(axis=0)

    def _derive(self, alpha_in):
        # logged_cj = log(complement count) - log(complement total), where the complement count
        # of a class lacking feature j is feature_all_j + alpha_j
        class_ptr, feature, count, class_sum = self._nonzero_counts()
        # With enough whole-number counts and a whole alpha (the default 1), the complement
        # count, feature_all_ + alpha - count as scikit-learn computes it, is exactly a whole
        # number + alpha: fill_table sums the features and takes the logs from a log table, block
        # by block (complement). Else base = feature_all_ + alpha and the complement counts first
        # (complement_counts), and NumPy's logs.
        log_table = _log_table(count, alpha_in) if np.ndim(alpha_in) == 0 \
            and alpha_in == np.floor(alpha_in) else None
        with np.errstate(divide="ignore", invalid="ignore"):
            if log_table is not None:
                # the sum of base: every count, and n_features alphas
                comp_total = (class_sum.sum() + self.n_features_in_ * alpha_in) - class_sum
                feature_term = _repeated(0.0, self.n_features_in_)  # made by fill_table
                value, fill = count, {"log_table": log_table, "log_shift": alpha_in,
                                      "complement": True}
            else:
                alpha, _ = self._alpha_per_feature(alpha_in)
                base, value = np.empty(self.n_features_in_), np.empty(len(feature))
                _tables.complement_counts(feature, count, alpha, base, value)
                comp_total = base.sum() - class_sum
                feature_term = np.log(base)
                np.log(value, out=value)
                fill = {}
            log_comp_total = np.log(comp_total)
            if self.norm:
                table, nonfinite = self._fill_table(feature_term, -log_comp_total, class_ptr,
                                                    feature, value, **fill)
                norms = table.sum(axis=0, dtype=np.float64)
                # all of a class's complement mass on one feature (e.g. a single feature): every
                # logged value is 0 and so is their sum; the weights are then 0, not 0/0
                norms[norms == 0] = 1.0
                table /= norms
            else:  # weights are -logged
                if not fill:
                    np.negative(feature_term, out=feature_term)
                table, nonfinite = self._fill_table(feature_term, log_comp_total, class_ptr,
                                                    feature, value, negate=True, **fill)
        if np.min(alpha_in) == 0 and np.isnan(table).any():
            raise ValueError(
                "ComplementNB weights are undefined (0/0) for these counts with alpha=0"
                + (" and norm=True" if self.norm else "") + "; use alpha > 0."
            )
        n_classes = len(self.classes_)
        bias = self.class_log_prior_ if n_classes == 1 else np.zeros(n_classes)
        return _Params(table, bias, nonfinite)

class BernoulliNB(_BaseDiscreteNB):
    """Naive Bayes for binary features (word presence or absence).

    P(x | y=c) = prod_j p_cj^x_j (1 - p_cj)^(1 - x_j), with
    p_cj = (N_cj + alpha_j) / (N_c + 2 alpha_j). Absent words count too, yet scoring touches only
    the words present: the per-class sum of log(1 - p_cj) is precomputed, and each present word
    adds log p_cj - log(1 - p_cj).

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive smoothing; 0 for none.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10 with a warning.
    binarize : float or None, default=0.0
        Threshold: x > binarize counts as present. None means X is already binary.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Given class priors.
    n_threads : int, default=None
        OpenMP threads of the kernels: None uses the OpenMP default (all cores, or
        ``OMP_NUM_THREADS``, or a ``threadpoolctl`` limit), a positive number that many, a
        negative one counts back from all cores. Batches below about 200,000 multiply-adds run
        on one thread. Results do not depend on it.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
        (Weighted) number of samples of each class in which each feature is present.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        log p_cj.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    MultinomialNB : the word-count event model.

    Notes
    -----
    Seed 002 contrasts this event model with the multinomial one. Identical to scikit-learn's
    BernoulliNB for the same parameters; unlike it, an alpha array of n_features values works,
    and alpha=0 with a feature present in every sample of a class gives -inf (not NaN) to the
    samples lacking it.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import BernoulliNB
    >>> X = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1], [0, 0, 1]])
    >>> BernoulliNB().fit(X, [0, 0, 1, 1]).predict([[1, 0, 0], [0, 0, 1]])
    array([0, 1])
    """

    _X_constraints = {"allow_negative": True}  # binarized: any magnitude is fine

    def __init__(self, alpha: float | ArrayLike = 1.0, *, force_alpha: bool = True,
                 binarize: float | None = 0.0, fit_prior: bool = True,
                 class_prior: ArrayLike | None = None, n_threads: int | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.n_threads = n_threads

    def _validate_X(self, X, reset, dtype=None):
        binarize, threshold = self._binarize_args()
        # duplicate entries of a column add up before thresholding, as in the dense matrix
        X, has_nan = super()._validate_X(X, reset, dtype, sum_duplicates=binarize)
        if sp.issparse(X) and binarize and threshold < 0:
            # zeros that are not stored would stay absent while stored ones count as present
            raise ValueError(
                f"BernoulliNB(binarize={self.binarize!r}): a sparse X cannot be binarized with a "
                "threshold < 0 (every zero would count as present); use a dense X or binarize >= 0."
            )
        return X, has_nan

    def _sample_X(self, y_idx, rng):
        """Binary vectors: feature j present with probability p_cj (CSR, built in blocks)."""
        p = np.exp(self._feature_log_prob(self._derived.alpha))
        blocks = [sp.csr_matrix((rng.random((len(rows), p.shape[1])) < p[rows]).astype(np.float64))
                  for rows in np.array_split(y_idx, max(1, len(y_idx) // 1000))]
        return sp.vstack(blocks, format="csr")

    def _binarize_args(self):
        b = self.binarize
        if type(b) is float and b == b:  # the common case, without the generic checks
            return True, b
        if b is None:
            return False, 0.0
        if isinstance(self.binarize, bool) or not isinstance(self.binarize, numbers.Real):
            raise TypeError(f"binarize must be None or a number, got {self.binarize!r}.")
        if np.isnan(self.binarize):
            raise ValueError("binarize must not be NaN.")
        return True, float(self.binarize)

    def _log_terms(self, alpha):
        """log(N_cj + a), log(N_c - N_cj + a) and log(N_c + 2a) (broadcastable)."""
        fc, cc = self.feature_count_, self.class_count_[:, None]
        with np.errstate(divide="ignore"):
            log_present = np.log(fc + alpha)
            log_absent = np.log(np.maximum(cc - fc, 0.0) + alpha)
            log_total = np.log(cc + 2 * np.asarray(alpha))
        return log_present, log_absent, log_total

    def _derive(self, alpha):
        # table_jc = log p - log(1 - p) = log(N_cj + a) - log(M_c - N_cj + a) and
        # bias_c = log prior + sum_j log(1 - p_cj), with p_cj = (N_cj + a) / (M_c + 2a)
        if np.ndim(alpha) == 0:
            table, bias, nonfinite = self._derive_scalar_alpha(float(alpha))
        else:
            log_present, log_absent, log_total = self._log_terms(alpha)
            with np.errstate(invalid="ignore"):
                table = np.ascontiguousarray((log_present - log_absent).T, dtype=self._dtype)
            bias = self.class_log_prior_ + (log_absent - log_total).sum(axis=1)
            nonfinite = not np.isfinite(table).all()
        must = None
        if np.min(alpha) == 0:
            must = self._patch_unsmoothed(alpha, table, bias)
            nonfinite = True
        return _Params(table, bias, nonfinite, must)

    def _derive_scalar_alpha(self, alpha):
        """Scalar alpha: the entries of absent features (N_cj = 0) are per-class constants.
        Returns (table, bias, whether the table has infinities)."""
        n_features = self.n_features_in_
        class_count = self.class_count_
        class_ptr, feature, count, _ = self._nonzero_counts()
        n_present = np.diff(class_ptr)
        total = class_count + 2 * alpha
        log_q_present_sum = np.empty(len(class_count))
        log_table = _log_table(count, alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            # log p - log(1 - p) of the present features, and the sum over them of log(1 - p) =
            # log(M - N + a) - log(M + 2a), in one pass over log(M - N + a)
            if log_table is not None:  # the logs of whole numbers from the table
                value = np.empty(len(count))
                _tables.bernoulli_terms(class_ptr, count, class_count, log_table, alpha,
                                        np.log(total), log_q_present_sum, value)
            else:
                log_absent = np.empty(len(count))
                _tables.rest_counts(class_ptr, count, class_count, alpha, log_absent)
                np.log(log_absent, out=log_absent)  # of M - N + a
                value = np.log(np.add(count, alpha))
                _tables.segment_sums(log_absent, class_ptr, np.log(total), log_q_present_sum,
                                     value)
            table, nonfinite = self._fill_table(
                _repeated(np.log(alpha), n_features), -np.log(class_count + alpha),
                class_ptr, feature, value, np.zeros(len(class_count)))
            # ... and over the absent features: log1p is exact for the tiny p of rare words
            log_q_zero = np.log1p(-alpha / total)
        log_q_sum = log_q_present_sum + (n_features - n_present) * log_q_zero
        return table, self.class_log_prior_ + log_q_sum, nonfinite

    def _patch_unsmoothed(self, alpha, table, bias):
        """alpha = 0 leaves probabilities of exactly 0 or 1, where log p - log(1 - p) is infinite.

        p = 1 (the feature is in every sample of the class): scored as neutral, and rows lacking
        it are sent to -inf by _apply_required_features. A class without data produces nothing.
        Patches table and bias (not yet published) in place; returns the required features (or
        None).
        """
        log_present, log_absent, log_total = self._log_terms(alpha)
        must = np.isneginf(log_absent) & ~np.isneginf(log_present)
        empty = np.isneginf(log_total).any(axis=1) | (np.isneginf(log_present)
                                                       & np.isneginf(log_absent)).any(axis=1)
        for c in np.flatnonzero(must.any(axis=1) | empty):
            log_q = np.where(must[c], log_present[c], log_absent[c]) - log_total[c]
            table[:, c] = np.where(must[c], 0.0, log_present[c] - log_absent[c])
            bias[c] = self.class_log_prior_[c] + log_q.sum()
        if empty.any():
            table[:, empty] = 0.0
            bias[empty] = -np.inf
        return must if must.any() else None

    def _feature_log_prob(self, alpha):
        # log p_cj = log(N_cj + a_j) - log(M_c + 2 a_j); scalar a: log(a) - log(M_c + 2a) if N = 0
        if np.ndim(alpha) != 0:
            log_present, _, log_total = self._log_terms(alpha)
            with np.errstate(invalid="ignore"):
                return (log_present - log_total).astype(self._dtype, copy=False)
        alpha = float(alpha)
        class_ptr, feature, count, _ = self._nonzero_counts()
        with np.errstate(divide="ignore", invalid="ignore"):
            table, _ = self._fill_logged_counts(
                _repeated(np.log(alpha), self.n_features_in_),
                -np.log(self.class_count_ + 2 * alpha), class_ptr, feature, count, alpha)
        return table.T

    def _apply_required_features(self, X, must, jll):
        """Set jll to -inf where a row lacks a feature that its class always had (p = 1)."""
        cols = np.flatnonzero(must.any(axis=0))
        binarize, threshold = self._binarize_args()
        sub = X[:, cols]
        if sp.issparse(sub):
            sub = sub.toarray()
        present = (sub > threshold) if binarize else (sub != 0)
        have = present.astype(np.float64) @ must[:, cols].T.astype(np.float64)
        jll[have < must.sum(axis=1)] = -np.inf


# --------------------------------------------------------------------------------------------
# Diagonal models of continuous and count features: GaussianNB and PoissonNB.


class _BaseDiagonalNB(BaseClassifier):
    """Shared scoring of GaussianNB and PoissonNB: one term per observed feature (a NaN drops
    out of the sum, seed 003's product over features marginalised), tables derived eagerly
    after every batch (they are n_classes x n_features, cheap to rebuild)."""

    _X_constraints: dict = {"allow_nan": True, "accept_sparse": False, "accept_int": False,
                            "max_abs": MAX_VALUE}
    _model = DIAG_GAUSSIAN

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_tables")

    def _more_input_tags(self):
        return {"sparse": self._X_constraints.get("accept_sparse", True), "allow_nan": True,
                "positive_only": not self._X_constraints.get("allow_negative", True)}

    def _reset(self, classes, X):
        self.classes_ = classes
        self.class_count_ = np.zeros(len(classes))
        self.observed_count_ = np.zeros((len(classes), X.shape[1]))
        self._dtype = X.dtype if X.dtype == np.float32 else np.dtype(np.float64)

    def _check_statistics(self, names):
        """Refuse statistics that were replaced by arrays of another shape (fitted attributes
        can be reassigned): the kernels and the derivation trust them."""
        shape = self.observed_count_.shape if hasattr(self, "observed_count_") else None
        for name in names:
            value = getattr(self, name)
            expected = shape[:1] if name == "class_count_" else shape
            if not (isinstance(value, np.ndarray) and value.shape == expected
                    and value.dtype == np.float64):
                raise ValueError(f"{name} was modified: expected a float64 array of shape "
                                 f"{expected}. Refit the model instead of editing fitted attributes.")

    def _publish(self, A, S, B, log_prior):
        """Store the diagonal kernel's tables (``diagonal_tables``) in one reference."""
        self._tables = diagonal_tables(self._model, A, S, B, log_prior)

    def _score(self, X, kind, out, has_nan):
        score_diagonal(self._tables, X, kind, out, self._n_threads_for(X.size * out.shape[1]))


class GaussianNB(_BaseDiagonalNB):
    """Gaussian naive Bayes: each feature is normal within each class, features independent.

    Missing values (NaN) are marginalised: fitting uses each feature's observed values, and a
    NaN feature drops out of the sum at prediction (a row with nothing observed gets the prior).

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes; if None they are the (weighted) class frequencies.
    var_smoothing : float, default=1e-9
        Portion of the largest feature variance (over all data seen so far) added to every
        variance, so that a constant feature does not give a zero variance.
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
        Probability of each class.
    observed_count_ : ndarray of shape (n_classes, n_features)
        Weight of the observed (non-NaN) values of each feature in each class.
    theta_ : ndarray of shape (n_classes, n_features)
        Mean of each feature per class (over its observed values).
    var_ : ndarray of shape (n_classes, n_features)
        Variance of each feature per class, plus ``epsilon_``.
    epsilon_ : float
        Absolute additive value to variances.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (DataFrame input only).

    See Also
    --------
    LinearDiscriminantAnalysis : one covariance shared by all classes.
    QuadraticDiscriminantAnalysis : one full covariance per class.

    Notes
    -----
    Maximum likelihood (seed 003): per class c and feature j, theta is the mean and var the mean
    squared deviation of the observed values (weighted). The statistics (weights, means, squared
    deviations) combine exactly across ``partial_fit`` batches, and ``epsilon_`` follows the
    variance of all the data seen so far, not of the latest batch (scikit-learn #14054). If every
    feature is constant, ``epsilon_`` is ``var_smoothing`` itself. A class that never observed a
    feature uses that feature's mean and variance over all classes.

    Examples
    --------
    Seed 001's diagnosis from one test result, with a prior of 0.8 for the healthy class:

    >>> import numpy as np
    >>> from fastgen import GaussianNB
    >>> x = np.array([[30.], [35.], [40.], [45.], [50.], [55.], [60.], [65.]])
    >>> y = np.array(["healthy"] * 4 + ["diabetes"] * 4)
    >>> model = GaussianNB(priors=[0.2, 0.8]).fit(x, y)   # classes_ sorted: diabetes, healthy
    >>> model.classes_
    array(['diabetes', 'healthy'], dtype='<U8')
    >>> model.predict_proba([[48.]]).round(3)
    array([[0.256, 0.744]])
    >>> model.predict([[48.], [np.nan]])   # nothing measured: the prior decides
    array(['healthy', 'healthy'], dtype='<U8')
    """

    def __init__(self, *, priors: ArrayLike | None = None, var_smoothing: float = 1e-9,
                 n_threads: int | None = None):
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.n_threads = n_threads

    def _reset(self, classes, X):
        super()._reset(classes, X)
        self._mean = np.zeros_like(self.observed_count_)
        self._m2 = np.zeros_like(self.observed_count_)

    def _check_batch(self, X, n_classes, sample_weight):
        vs = self.var_smoothing
        if not isinstance(vs, numbers.Real) or isinstance(vs, bool) or not (
                0 <= float(vs) <= MAX_SMOOTHING):
            raise ValueError(f"var_smoothing must be a number in [0, {MAX_SMOOTHING:g}], got "
                             f"{vs!r}.")
        priors = None if self.priors is None else check_priors(self.priors, n_classes)
        return check_sample_weight(sample_weight, X.shape[0]), priors

    def _accumulate(self, X, y_idx, has_nan, sample_weight, priors):
        self._check_statistics(("class_count_", "observed_count_", "_mean", "_m2"))
        n_classes = len(self.classes_)
        batch = diagonal_moments(X, y_idx, sample_weight, n_classes,
                                 self._n_threads_for(X.size))
        self.class_count_ = self.class_count_ + np.bincount(y_idx, weights=sample_weight,
                                                            minlength=n_classes)
        self.observed_count_, self._mean, self._m2 = combine_moments(
            self.observed_count_, self._mean, self._m2, *batch)
        self._derive(priors)

    def _derive(self, priors):
        n, mean, m2 = self.observed_count_, self._mean, self._m2
        total = n.sum(axis=0)
        seen = total > 0
        safe_total = np.where(seen, total, 1.0)
        overall_mean = (n * mean).sum(axis=0) / safe_total
        overall_var = np.where(seen, (m2 + n * (mean - overall_mean) ** 2).sum(axis=0)
                               / safe_total, 1.0)
        largest = overall_var[seen].max(initial=0.0)
        self.epsilon_ = float(self.var_smoothing * (largest if largest > 0 else 1.0))
        has = n > 0
        self.theta_ = np.where(has, mean, overall_mean)
        with np.errstate(over="ignore", invalid="ignore"):
            self.var_ = np.where(has, m2 / np.where(has, n, 1.0), overall_var) + self.epsilon_
        if not (np.isfinite(self.var_).all() and np.isfinite(self.theta_).all()):
            raise ValueError("The feature variances overflow float64 (values beyond about "
                             "1e150): rescale X.")
        if (self.var_ < MIN_GAUSSIAN_VARIANCE).any():
            c, j = np.argwhere(self.var_ < MIN_GAUSSIAN_VARIANCE)[0]
            raise ValueError(
                f"Feature {j} has variance {self.var_[c, j]:.3g} in class {self.classes_[c]!r} even "
                f"after var_smoothing={self.var_smoothing!r}: below {MIN_GAUSSIAN_VARIANCE:g} the "
                "Gaussian density overflows (or, at zero, is undefined). Use a larger var_smoothing."
            )
        if priors is not None:
            self.class_prior_ = priors
        else:
            self.class_prior_ = self.class_count_ / self.class_count_.sum()
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.class_prior_)
        self._publish(self.theta_, -0.5 / self.var_, -0.5 * (LOG_2PI + np.log(self.var_)),
                      log_prior)

    def _merge(self, other, classes, mine, theirs):
        n = len(classes)
        self.observed_count_, self._mean, self._m2 = combine_moments(
            *(spread(getattr(self, a), mine, n) for a in ("observed_count_", "_mean", "_m2")),
            *(spread(getattr(other, a), theirs, n) for a in ("observed_count_", "_mean", "_m2")))

    def _state_shapes(self, n_classes, n_features):
        return [("class_count_", (n_classes,))] + [
            (name, (n_classes, n_features)) for name in ("observed_count_", "_mean", "_m2")]

    def _sample_X(self, y_idx, rng):
        return rng.normal(self.theta_[y_idx], np.sqrt(self.var_[y_idx]))


class PoissonNB(_ClassPriorMixin, _BaseDiagonalNB):
    """Poisson naive Bayes: each count feature is Poisson within each class (seed 003).

    Parameters
    ----------
    alpha : float, default=1.0
        Shape of the Gamma(alpha, beta) prior on each rate: a pseudo-count, so that a feature
        never seen in a class does not get the rate 0. Must be > 0.
    beta : float, default=1.0
        Rate of the Gamma prior: a pseudo-number of observations. Must be >= 0.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Given class priors.
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
    class_log_prior_ : ndarray of shape (n_classes,)
        Log probability of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted sum of each feature's observed values per class.
    observed_count_ : ndarray of shape (n_classes, n_features)
        Weight of the observed (non-NaN) values of each feature in each class.
    lambda_ : ndarray of shape (n_classes, n_features)
        Poisson rate of each feature per class.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (DataFrame input only).

    Notes
    -----
    ``lambda_ = (feature_count_ + alpha) / (observed_count_ + beta)``, the posterior mean of the
    rate; ``alpha -> 0, beta = 0`` is the maximum-likelihood rate. The joint log-likelihood is
    ``log P(c) + sum_j [x_j log lambda_cj - lambda_cj - log x_j!]`` over the observed features,
    the sum of ``scipy.stats.poisson.logpmf`` for integer counts (non-integer values use
    ``log Gamma(x + 1)``). Sparse input is scored through the zeros, which contribute
    ``-lambda_cj`` each; NaN marks a missing value in dense input.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import PoissonNB
    >>> X = np.array([[0, 3], [1, 4], [5, 0], [4, 1]])
    >>> model = PoissonNB().fit(X, [0, 0, 1, 1])
    >>> model.predict([[0, 5], [6, np.nan]])
    array([0, 1])
    """

    _X_constraints: dict = {"allow_nan": True, "allow_negative": False, "accept_int": False,
                            "max_abs": MAX_COUNT}
    _model = DIAG_POISSON

    def __init__(self, alpha: float = 1.0, beta: float = 1.0, *, fit_prior: bool = True,
                 class_prior: ArrayLike | None = None, n_threads: int | None = None):
        self.alpha = alpha
        self.beta = beta
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.n_threads = n_threads

    def _validate_X(self, X, reset, dtype=None):
        X, has_nan = super()._validate_X(X, reset, dtype)
        if sp.issparse(X) and has_nan:
            raise ValueError("PoissonNB: NaN (missing values) is supported in dense input only; "
                             "a sparse matrix's absent entries are zeros, not missing.")
        return X, has_nan

    def _reset(self, classes, X):
        super()._reset(classes, X)
        self.feature_count_ = np.zeros_like(self.observed_count_)

    def _check_batch(self, X, n_classes, sample_weight):
        for name, value, low in (("alpha", self.alpha, 0.0), ("beta", self.beta, 0.0)):
            if (not isinstance(value, numbers.Real) or isinstance(value, bool)
                    or not (low <= float(value) <= MAX_SMOOTHING)
                    or (name == "alpha" and value == 0)):
                bound = "> 0" if name == "alpha" else ">= 0"
                raise ValueError(f"{name} must be a number {bound} and at most "
                                 f"{MAX_SMOOTHING:g}, got {value!r}.")
        return check_sample_weight(sample_weight, X.shape[0]), self._check_class_prior(n_classes)

    def _accumulate(self, X, y_idx, has_nan, sample_weight, class_prior):
        self._check_statistics(("class_count_", "observed_count_", "feature_count_"))
        n_classes = len(self.classes_)
        class_count = np.bincount(y_idx, weights=sample_weight, minlength=n_classes)
        if sp.issparse(X):
            feature_count = np.empty_like(self.feature_count_)
            order, class_ptr = group_by_class(y_idx, n_classes)
            _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, sample_weight,
                              False, 0.0, feature_count, np.empty(n_classes),
                              self._n_threads_for(X.indptr[-1]), overwrite=True)
            observed = np.repeat(class_count[:, None], X.shape[1], axis=1)
        else:
            observed, mean, _ = diagonal_moments(X, y_idx, sample_weight, n_classes,
                                                 self._n_threads_for(X.size))
            feature_count = observed * mean
        self.class_count_ = self.class_count_ + class_count
        self.observed_count_ = self.observed_count_ + observed
        self.feature_count_ = self.feature_count_ + feature_count
        self._update_class_log_prior(class_prior)
        self._derive()

    def _derive(self):
        denominator = self.observed_count_ + self.beta
        seen = self.class_count_ > 0
        if (denominator[seen] <= 0).any():
            raise ValueError("beta=0 and a class never observed some feature: its rate is "
                             "undefined. Use beta > 0.")
        with np.errstate(over="ignore"):
            self.lambda_ = (self.feature_count_ + self.alpha) / np.where(denominator > 0,
                                                                         denominator, 1.0)
        if not np.isfinite(self.lambda_).all():
            raise ValueError("The Poisson rates overflow float64 (sums of counts beyond 1e308).")
        if not self.lambda_.all():  # alpha > 0, so only a tiny alpha over a large count gets here
            raise ValueError(f"alpha={self.alpha!r} is too small for these counts: the Poisson "
                             "rate of a feature a class never had underflows to 0 (a log of "
                             "-inf). Use a larger alpha.")
        log_lambda = np.log(self.lambda_)
        self._publish(log_lambda, log_lambda, -self.lambda_, self.class_log_prior_)
        if self._dtype == np.float32:  # the CSR kernel reads a table of the output's dtype
            self._sparse_table = self._tables[0].astype(np.float32)
        else:
            self._sparse_table = self._tables[0]

    def _merge(self, other, classes, mine, theirs):
        n = len(classes)
        for name in ("observed_count_", "feature_count_"):
            setattr(self, name, spread(getattr(self, name), mine, n)
                    + spread(getattr(other, name), theirs, n))

    def _rederive(self):
        self._update_class_log_prior(self._check_class_prior(len(self.classes_)))
        self._derive()

    def _state_shapes(self, n_classes, n_features):
        return [("class_count_", (n_classes,))] + [
            (name, (n_classes, n_features)) for name in ("observed_count_", "feature_count_")]

    def _sample_X(self, y_idx, rng):
        return rng.poisson(self.lambda_[y_idx]).astype(np.float64)

    def _score(self, X, kind, out, has_nan):
        if not sp.issparse(X):
            return super()._score(X, kind, out, has_nan)
        bias = self._tables[4]
        table = self._sparse_table
        n_threads = self._n_threads_for(X.indptr[-1] * len(bias))
        if _jll.jll_linear_csr(X.data, X.indices, X.indptr, table, bias, False, 0.0, False,
                               kind, out, n_threads):
            raise MemoryError("could not allocate the scoring kernel's row buffers")
        if kind == OUT_JLL:  # the class-independent -log(x!) of the stored counts
            nnz = X.indptr[-1]
            log_factorials = sp.csr_matrix((gammaln(X.data[:nnz] + 1.0), X.indices[:nnz],
                                            X.indptr), shape=X.shape)
            out -= np.asarray(log_factorials.sum(axis=1), dtype=out.dtype)


class CategoricalNB(_ClassPriorMixin, BaseClassifier):
    """Naive Bayes for categorical features: feature j takes one of K_j values (seed 004).

    Parameters
    ----------
    alpha : float, default=1.0
        Additive (Laplace/Lidstone) smoothing over each feature's K_j values (seed 000's
        ``|X_i|`` in the denominator).
    force_alpha : bool, default=True
        If False, alpha below 1e-10 is raised to 1e-10 (scikit-learn's rule).
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Given class priors.
    min_categories : int or array-like of shape (n_features,), default=None
        Minimum number of categories per feature (for values that may not occur in training).
    handle_unknown : {"error", "ignore"}, default="error"
        A code at prediction that is beyond the categories seen in training: a ValueError naming
        the feature, or (``"ignore"``) that feature is marginalised for that row.
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
    class_log_prior_ : ndarray of shape (n_classes,)
        Log probability of each class.
    category_count_ : list of ndarray of shape (n_classes, n_categories_[j])
        Weight of the samples of each class having each category, per feature.
    feature_log_prob_ : list of ndarray of shape (n_classes, n_categories_[j])
        ``log P(x_j = k | c)``, per feature.
    n_categories_ : ndarray of shape (n_features,)
        Number of categories of each feature.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (DataFrame input only).

    Notes
    -----
    X holds category codes 0 .. K_j - 1 (integers, or floats holding integers). A missing value --
    NaN, or a negative code -- is marginalised: it is skipped when counting and contributes
    nothing when predicting (the other features' likelihood is the marginal). ``P(x_j = k | c) =
    (N_cjk + alpha) / (N_cj + alpha K_j)`` with N_cj the weight of class c's observed values of
    feature j, which is scikit-learn's estimate on complete data (with alpha = 0, a feature of
    which a class has no observed value, 0/0, is marginalised for that class). Unlike
    scikit-learn, a code never seen in training is a clear error (scikit-learn #16028 raised an
    IndexError) or, with ``handle_unknown="ignore"``, marginalised.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import CategoricalNB
    >>> X = np.array([[0, 1], [0, 2], [1, 0], [2, 0], [1, 1]])
    >>> y = np.array([0, 0, 1, 1, 1])
    >>> model = CategoricalNB().fit(X, y)
    >>> model.predict([[0, 2], [2, -1]])   # -1: the second feature is missing
    array([0, 1])
    """

    _X_constraints: dict = {"allow_nan": True, "accept_sparse": False}

    def __init__(self, alpha: float = 1.0, *, force_alpha: bool = True, fit_prior: bool = True,
                 class_prior: ArrayLike | None = None,
                 min_categories: int | ArrayLike | None = None, handle_unknown: str = "error",
                 n_threads: int | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories
        self.handle_unknown = handle_unknown
        self.n_threads = n_threads

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_table")

    def _more_input_tags(self):
        return {"sparse": False, "allow_nan": True, "categorical": True}

    # ----------------------------------------------------------------- statistics
    def _scan(self, X):
        """Largest code per column, after checking that the codes are integers."""
        largest = np.empty(X.shape[1], dtype=np.int64)
        status = _checks.codes_status(X, largest)
        if status == _checks.CodesStatus.CODES_NOT_INTEGER:
            raise ValueError(f"{type(self).__name__} expects category codes: integers 0, 1, ... "
                             "(NaN or a negative code for a missing value); X has a value with a "
                             "fractional part. Encode the categories first (e.g. OrdinalEncoder).")
        if status == _checks.CodesStatus.CODES_TOO_LARGE:
            raise ValueError(f"{type(self).__name__}: a category code is too large to index.")
        return largest

    def _check_batch(self, X, n_classes, sample_weight):
        alpha = self.alpha
        if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool) or not (
                0 <= float(alpha) <= MAX_SMOOTHING):
            raise ValueError(f"alpha must be a number in [0, {MAX_SMOOTHING:g}], got {alpha!r}.")
        if alpha < ALPHA_MIN and not self.force_alpha:
            warnings.warn(f"alpha too small will result in numeric errors, setting alpha = "
                          f"{ALPHA_MIN:.1e}. Use `force_alpha=True` to keep alpha unchanged.",
                          UserWarning, stacklevel=3)
            alpha = ALPHA_MIN
        if self.handle_unknown not in ("error", "ignore"):
            raise ValueError(f"handle_unknown must be 'error' or 'ignore', got "
                             f"{self.handle_unknown!r}.")
        needed = self._scan(X) + 1
        if needed.max(initial=0) > MAX_CATEGORIES:
            j = int(np.argmax(needed))
            raise ValueError(f"Feature {j} has the category code {needed[j] - 1}: more than "
                             f"{MAX_CATEGORIES} categories per feature is not supported (the "
                             "codes must be 0 .. K-1; encode the categories first).")
        if self.min_categories is not None:
            minimum = np.asarray(self.min_categories)
            if minimum.dtype.kind not in "iu" or minimum.ndim > 1 or (
                    minimum.ndim == 1 and minimum.shape[0] != X.shape[1]) or (minimum < 0).any():
                raise ValueError(f"min_categories must be a non-negative integer or an array of "
                                 f"n_features = {X.shape[1]} such integers, got "
                                 f"{self.min_categories!r}.")
            needed = np.maximum(needed, minimum)
        return (check_sample_weight(sample_weight, X.shape[0]), float(alpha),
                self._check_class_prior(n_classes), needed.astype(np.intp))

    def _reset(self, classes, X):
        self.classes_ = classes
        self.class_count_ = np.zeros(len(classes))
        self.n_categories_ = np.zeros(X.shape[1], dtype=np.intp)
        self._offsets = np.zeros(X.shape[1] + 1, dtype=np.intp)
        self._count = np.zeros((len(classes), 0))
        self._dtype = X.dtype if X.dtype == np.float32 else np.dtype(np.float64)

    def _grow(self, needed):
        """Make room for categories not seen before (zero counts), keeping the counts."""
        n_categories = np.maximum(self.n_categories_, needed)
        if np.array_equal(n_categories, self.n_categories_):
            return
        offsets = np.zeros(len(n_categories) + 1, dtype=np.intp)
        np.cumsum(n_categories, out=offsets[1:])
        count = np.zeros((self._count.shape[0], offsets[-1]))
        for j, (start, stop) in enumerate(zip(self._offsets[:-1], self._offsets[1:])):
            count[:, offsets[j]:offsets[j] + stop - start] = self._count[:, start:stop]
        self.n_categories_, self._offsets, self._count = n_categories, offsets, count

    def _accumulate(self, X, y_idx, has_nan, sample_weight, alpha, class_prior, needed):
        self._grow(needed)
        n_classes = len(self.classes_)
        count = np.zeros_like(self._count)
        _counts.count_categorical(X, np.asarray(y_idx, dtype=np.intp), sample_weight,
                                  self._offsets, count, self._n_threads_for(X.size))
        self._count = self._count + count
        self.class_count_ = self.class_count_ + np.bincount(y_idx, weights=sample_weight,
                                                            minlength=n_classes)
        self._update_class_log_prior(class_prior)
        self._alpha = alpha
        self._derive()

    def _derive(self):
        """Feature-major log table: row offsets[j] + k holds log P(x_j = k | c) for every c."""
        smoothed = self._count + self._alpha
        starts = self._offsets[:-1]
        nonempty = self.n_categories_ > 0
        totals = np.zeros((smoothed.shape[0], len(starts)))
        if smoothed.shape[1]:
            totals[:, nonempty] = np.add.reduceat(smoothed, starts[nonempty], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_prob = np.log(smoothed) - np.repeat(np.log(totals), self.n_categories_, axis=1)
        # alpha = 0 and a class without an observed value of a feature (a class announced to
        # partial_fit but not seen yet, or all missing): 0/0, so the feature tells nothing about
        # the class, as a missing value tells nothing
        log_prob[np.repeat(totals == 0, self.n_categories_, axis=1)] = 0.0
        self._log_prob = log_prob
        self._table = np.ascontiguousarray(log_prob.T)

    @property
    def category_count_(self):
        """list of ndarray of shape (n_classes, n_categories_[j]): counts per feature."""
        return [self._count[:, a:b] for a, b in zip(self._offsets[:-1], self._offsets[1:])]

    @property
    def feature_log_prob_(self):
        """list of ndarray of shape (n_classes, n_categories_[j]): log P(x_j = k | c)."""
        return [self._log_prob[:, a:b] for a, b in zip(self._offsets[:-1], self._offsets[1:])]

    def _merge(self, other, classes, mine, theirs):
        n = len(classes)
        self._grow(other.n_categories_)
        count = np.zeros((len(other.classes_), self._offsets[-1]))
        for j, (start, stop) in enumerate(zip(other._offsets[:-1], other._offsets[1:])):
            count[:, self._offsets[j]:self._offsets[j] + stop - start] = other._count[:, start:stop]
        self._count = spread(self._count, mine, n) + spread(count, theirs, n)

    def _rederive(self):
        self._update_class_log_prior(self._check_class_prior(len(self.classes_)))
        self._derive()

    def _state_shapes(self, n_classes, n_features):
        n_categories = np.asarray(self.n_categories_)
        if n_categories.shape != (n_features,) or n_categories.dtype.kind not in "iu" or \
                (n_categories < 0).any():
            raise ValueError("n_categories_ must hold a non-negative integer per feature")
        offsets = np.zeros(n_features + 1, dtype=np.intp)
        np.cumsum(n_categories, out=offsets[1:])
        if not np.array_equal(self._offsets, offsets) or self._offsets.dtype != np.intp:
            raise ValueError("the category offsets do not match n_categories_")
        if not (isinstance(self._alpha, float) and 0 <= self._alpha < np.inf):
            raise ValueError("alpha must be a non-negative number")
        return [("class_count_", (n_classes,)), ("_count", (n_classes, int(offsets[-1])))]

    def _sample_X(self, y_idx, rng):
        """Codes drawn per feature from the class's category probabilities (inverse CDF)."""
        X = np.empty((len(y_idx), self.n_features_in_))
        for j, log_prob in enumerate(self.feature_log_prob_):
            cdf = np.cumsum(np.exp(log_prob), axis=1)
            u = rng.random(len(y_idx)) * cdf[y_idx, -1]
            X[:, j] = (u[:, None] >= cdf[y_idx]).sum(axis=1)
        return X

    def _score(self, X, kind, out, has_nan):
        failed, unknown, fractional = _jll.jll_categorical(
            X, self._offsets, self._table, self.class_log_prior_, kind, out,
            self._n_threads_for(X.size * out.shape[1]))
        if fractional or (unknown and self.handle_unknown == "error"):
            largest = self._scan(X)  # raises for fractional codes; names the unknown feature
            j = np.flatnonzero(largest >= self.n_categories_)[0]
            raise ValueError(
                f"Feature {j} has a category ({largest[j]}) not seen in training (it has "
                f"{self.n_categories_[j]} categories). Use handle_unknown='ignore' to "
                "marginalise unknown categories, or min_categories to reserve them."
            )
        if failed:
            raise MemoryError("could not allocate the scoring kernel's row buffers")
