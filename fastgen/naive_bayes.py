"""Naive Bayes: the text models (MultinomialNB, BernoulliNB, ComplementNB), GaussianNB,
PoissonNB and CategoricalNB.

Each model is read top to bottom in its class: its declared statistics (``_fields``: the additive
per-class sufficient statistics, with their shapes and constraints), how a batch adds to them
(``_add``), the derivation of its parameters (``_derive``, one pure function of the statistics
and hyperparameters), its scoring (``_score``, one kernel call) and its sampling. Fitting,
merging, files, pickles and Dask are written once over the declaration (``_base``, ``_state``).

The text models score with a feature-major table ``[n_features, n_classes]`` and a per-class bias,
so that the joint log-likelihood is linear, ``jll[i, c] = bias[c] + sum_j v(x_ij) table[j, c]``,
and one kernel scores all three. ``fit`` derives eagerly; after ``partial_fit`` the parameters are
derived the first time they are needed (so streaming many small batches costs counting only). A
sparse first batch leaves its counts as the list of nonzeros the counting kernel made
(``_Listing``): derivation reads that list, and the dense ``feature_count_``, mostly zeros for a
large vocabulary and as large as the scoring table, is built when it is first read (by the user,
the next batch, merge, pickling or saving).
"""
from __future__ import annotations

import numbers
import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.special import gammaln

from ._base import (
    OUT_JLL,
    BaseClassifier,
    check_priors,
    class_prior,
    group_by_class,
    prior_array,
    spread,
)
from ._bayes import Conjugate, log_rising, maximise
from ._core import _counts, _tables
from ._core._errors import XChangedError
from ._core import checks as _checks
from ._core import jll as _jll
from ._frame import (
    LabelColumns,
    check_categories,
    check_category_counts,
    is_frame,
    learn_categories,
    same_categories,
    sampled_frame,
)
from ._gaussian import (
    DIAG_GAUSSIAN,
    DIAG_NEGBIN,
    DIAG_POISSON,
    DIAG_STUDENT_T,
    EVIDENCE_STRENGTH_RANGE,
    LOG_2PI,
    ROUNDING_RTOL,
    NormalInverseGamma,
    check_prior_strength,
    check_prior_vector,
    combine_moments,
    constant,
    diagonal_moments,
    diagonal_tables,
    overall_moments,
    score_diagonal,
)
from ._state import (
    CLASSES,
    FEATURES,
    Field,
    Fitted,
    check_at_most,
    fitted_attribute,
    float64_parameter,
    memoized,
    parameter,
    readonly,
    shown_statistic,
    statistic,
    zeros,
)
from ._validation import (
    InvalidParameterError,
    check_bool,
    invalid_parameter,
    label_repr,
    plain_choice,
    real_in,
    rechecked,
    user_stacklevel,
)

__all__ = ["MultinomialNB", "BernoulliNB", "ComplementNB"]

MAX_CATEGORIES = 2**24  # per feature: CategoricalNB's count table has n_classes x sum K_j cells
# Count models: larger counts are not integers in float64, and their sums and x log(theta)
# overflow. Continuous models: larger magnitudes overflow the squared deviations.
MAX_COUNT = 2.0**53
# The posterior predictive's counts (PoissonNB) and rows' total counts (MultinomialNB, in the
# kernel): larger ones lose their precision in float64 (_core/_jll.pxi, MAX_POLYA_LENGTH).
MAX_PREDICTIVE_COUNT = _jll.MAX_PREDICTIVE_COUNT
MAX_VALUE = 1e150
MAX_SMOOTHING = 1e100  # alpha, beta, var_smoothing: larger ones overflow the smoothed sums
# Smallest usable variance: -1/(2 var) must stay finite in float64.
MIN_GAUSSIAN_VARIANCE = 1e-300

ALPHA_MIN = 1e-10  # alpha is raised to this unless force_alpha=True (scikit-learn's bound)

def _repeated(value, n):
    """A read-only float64 vector of n times one value: a stride-0 view, as np.broadcast_to makes
    (whose generality costs microseconds a call)."""
    view = np.ndarray((n,), np.float64, np.array([value], dtype=np.float64), 0, (0,))
    view.flags.writeable = False
    return view


class _Listing(NamedTuple):
    """The counts of a sparse first batch as the counting kernel listed them: the nonzero entries
    of feature_count_, class by class (class_ptr, feature, count, and each class's sum of
    counts). Read-only, so it is shared, never copied; feature_count_ is built from it when first
    read (``_dense_counts``)."""

    class_ptr: np.ndarray
    feature: np.ndarray
    count: np.ndarray
    class_sum: np.ndarray

    def copy(self):
        return self


class _Params:
    """What scoring needs, derived from the statistics: the feature-major table, the per-class
    bias, the (rare) required features of BernoulliNB with alpha = 0, whether the table holds
    infinities (then the kernels skip zero values), the binarization, and for MultinomialNB's
    predictive its Polya tables (None: the model is linear). Built complete, never changed
    afterwards."""

    __slots__ = ("table", "bias", "log_prior", "must", "nonfinite", "binarize", "threshold",
                 "polya_blocks", "polya_lengths", "polya_counts", "polya_gamma")

    def __init__(self, table, bias, log_prior, nonfinite, hyper, must=None, polya_blocks=None,
                 polya_lengths=None, polya_counts=None, polya_gamma=None):
        self.table = table
        self.bias = np.ascontiguousarray(bias, dtype=np.float64)
        self.log_prior = log_prior
        self.nonfinite = bool(nonfinite)
        self.must = must
        self.binarize, self.threshold = hyper.get("binarize", (False, 0.0))
        self.polya_blocks = polya_blocks
        self.polya_lengths = polya_lengths
        self.polya_counts = polya_counts
        self.polya_gamma = polya_gamma


def check_class_prior(model, n_classes):
    """The model's ``class_prior`` validated (None: none given); unlike ``priors``, it need not
    sum to one."""
    prior = prior_array(model, "class_prior", n_classes)
    if prior is not None and (not np.isfinite(prior).all() or (prior < 0).any()
                              or not (prior > 0).any()):
        raise InvalidParameterError("class_prior must contain finite, non-negative "
                                    "probabilities, not all zero.")
    return prior


def class_log_prior(class_count, hyper):
    """Empirical (fit_prior), given (class_prior) or uniform log prior.

    A class announced in ``classes`` but not seen yet has prior 0 (log -inf) and so posterior
    0, without warnings or NaN (scikit-learn #13232)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if hyper["class_prior"] is not None:
            return np.log(hyper["class_prior"])
        if hyper["fit_prior"]:
            return np.log(class_count) - np.log(class_count.sum())
        return np.full(len(class_count), -np.log(len(class_count)))


def check_alpha(model, n_features, evidence=True):
    """A text model's or CategoricalNB's alpha: a number in [0, MAX_SMOOTHING] or (text models)
    an array of n_features of them, raised to ALPHA_MIN with a warning unless force_alpha; or
    (if ``evidence``) the string "evidence", chosen from the statistics by ``smoothing``."""
    alpha, force = model.alpha, check_bool(model, "force_alpha")
    allowed = f"a float in the range [0.0, {MAX_SMOOTHING:g}]" + (
        "" if n_features is None else " or an array-like") + (' or "evidence"' if evidence else "")
    if isinstance(alpha, (str, bool, np.bool_)):
        if evidence and plain_choice(alpha, ("evidence",)):
            return "evidence"
        raise invalid_parameter(model, "alpha", allowed)
    if isinstance(alpha, numbers.Real):
        alpha = real_in(alpha, 0.0, MAX_SMOOTHING)
        if alpha is None:
            raise invalid_parameter(model, "alpha", allowed)
    elif n_features is None or np.iscomplexobj(alpha):
        raise invalid_parameter(model, "alpha", allowed)
    else:
        try:
            alpha = np.array(alpha, dtype=np.float64)  # a copy: the caller's stays writeable
        except (TypeError, ValueError):
            raise invalid_parameter(model, "alpha", allowed) from None
        if alpha.shape != (n_features,):
            raise InvalidParameterError(
                f"When alpha is an array, it should contains `n_features`. Got {alpha.size} "
                f"elements instead of {n_features}."
                + ("" if alpha.ndim == 1 else f" It has shape {alpha.shape}."))
        if not ((alpha >= 0) & (alpha <= MAX_SMOOTHING)).all():
            raise InvalidParameterError(f"All values in alpha must be greater than 0. Each "
                                        f"must be in [0, {MAX_SMOOTHING:g}] (0 is no "
                                        "smoothing).")
        alpha.flags.writeable = False  # derivations take it as it is
    if np.min(alpha) < ALPHA_MIN and not force:
        warnings.warn(f"alpha too small will result in numeric errors, setting alpha = "
                      f"{ALPHA_MIN:.1e}. Use `force_alpha=True` to keep alpha unchanged.",
                      UserWarning, stacklevel=user_stacklevel())
        alpha = np.maximum(alpha, ALPHA_MIN) if np.ndim(alpha) else ALPHA_MIN
    return alpha


# MultinomialNB's predictive: whole counts up to this many are looked up in its Polya table, of
# this many times the plug-in table's size. Measured on the 20 Newsgroups test set (98% of the
# nonzero counts are at most 8), predict_proba takes 5.4x the plug-in's time with 4 blocks, 3.4x
# with 8 and 2.8x with 16 (each count beyond costs a logarithm per class).
POLYA_BLOCKS = 8
# ... larger whole counts, when the training counts are whole and alpha is one number, are
# differences of a table of R(alpha, m) = lgamma(alpha + m) - lgamma(alpha) over the whole m up
# to the largest training count (at most POLYA_GAMMA_MAX) plus POLYA_GAMMA_MARGIN; a class whose
# count plus the document's is beyond it computes R. Its entries grow as m log m, a million
# times a difference, so they are held as pairs whose differences are exact (rising_prefix). On
# the 20 Newsgroups test set it took predict_proba from 2.4x to 1.8x the plug-in's time
# (bench/README.md)
POLYA_GAMMA_MAX = 1 << 16
POLYA_GAMMA_MARGIN = 1024
# ... and documents up to this many words have their normaliser looked up (99.6% of the 20
# Newsgroups test set; a table of n_classes x 4096 float64)
POLYA_LENGTHS = 4096
# PoissonNB's predictive looks up whole counts up to this (larger or fractional ones take two
# lgammas per class); a model of more than NEGBIN_TABLE_ENTRIES / 65 feature-class cells gets
# fewer, so that the table stays within 32 MB
NEGBIN_TABLE_MAX = 64
NEGBIN_TABLE_ENTRIES = 1 << 22


def log_rising_rows(a, n_rows):
    """R(a, k) = lgamma(a + k) - lgamma(a) = sum_{m < k} log(a + m) for k = 1 .. n_rows, one row
    per k (float64, shape (n_rows, *a.shape)): cumulative sums of logarithms, which stay within
    about n_rows ulps, where a difference of lgammas loses log10(a / k) digits."""
    a = np.asarray(a, dtype=np.float64)
    rising = np.empty((n_rows, *a.shape))
    np.add(a, np.arange(n_rows, dtype=np.float64).reshape(-1, *[1] * a.ndim), out=rising)
    np.log(rising, out=rising)
    return np.cumsum(rising, axis=0, out=rising)


def rising_prefix(alpha, n):
    """R(alpha, m) = sum_{k < m} log(alpha + k) for m = 0 .. n - 1 as pairs (hi, lo), shape (n,
    2), whose differences keep the digits of R(alpha + m, x) = R(alpha, m + x) - R(alpha, m)
    however large R(alpha, m) is beside it: each logarithm is split into a multiple of 2^-26 and
    the (exact) rest, so that the hi sums, below 2^27 in magnitude for n <= 2^17 (a logarithm of
    a float64 is below 710), are exact, and so are their differences; the lo sums stay below
    n 2^-27."""
    logs = np.log(alpha + np.arange(n - 1, dtype=np.float64))
    hi = np.round(logs * 2.0**26) * 2.0**-26
    out = np.zeros((n, 2))
    np.cumsum(hi, out=out[1:, 0])
    np.cumsum(logs - hi, out=out[1:, 1])
    return out


# alpha="evidence" searches log(alpha) over this range: below it the smoothing is negligible
# next to any count, above it the prior swamps the counts of every usual data set
EVIDENCE_ALPHA_RANGE = (1e-4, 1e2)


class _EvidenceTerms(NamedTuple):
    """The log evidence of Dirichlet-smoothed counts as a function of the scale a of the prior,

        sum_i m_i [lgamma(a s_i + n_i) - lgamma(a s_i)]
        - sum_k w_k [lgamma(a t_k + T_k) - lgamma(a t_k)]

    with counts n_i > 0 of multiplicity m_i under Dirichlet parameters a s_i, and totals T_k > 0
    of multiplicity w_k under the summed parameters a t_k (each Dirichlet's normaliser). A zero
    count adds lgamma(a + 0) - lgamma(a) = 0 and is left out, so the terms are as many as the
    nonzero counts, fewer once equal counts are merged (scalar alpha: s and t are numbers)."""

    count: np.ndarray
    count_weight: np.ndarray
    count_scale: np.ndarray | float
    total: np.ndarray
    total_weight: np.ndarray
    total_scale: np.ndarray | float

    def __call__(self, a):
        with np.errstate(invalid="ignore"):
            s, t = a * np.asarray(self.count_scale), a * np.asarray(self.total_scale)
            return float(self.count_weight @ log_rising(s, self.count)
                         - self.total_weight @ log_rising(t, self.total))


# Whole counts up to this are merged by a histogram (linear time) rather than a sort
HISTOGRAM_MAX_COUNT = 2**20


def _merged(values, weight):
    """The distinct values of ``values`` (positive) and the summed weights of each (weight None:
    one each): by a histogram when they are whole numbers up to HISTOGRAM_MAX_COUNT, as the
    counts of unweighted text are, else by a sort."""
    if values.size and values.max() <= HISTOGRAM_MAX_COUNT:
        whole = values.astype(np.intp)
        if (whole == values).all():
            histogram = np.bincount(whole, weights=weight)
            distinct = np.flatnonzero(histogram)
            return distinct.astype(np.float64), histogram[distinct].astype(np.float64)
    distinct, where = np.unique(values, return_inverse=True)
    return distinct, np.bincount(where, weights=weight, minlength=len(distinct)).astype(
        np.float64)


def evidence_terms(count, count_scale, total, total_scale, count_weight=None, total_weight=None):
    """_EvidenceTerms of the given counts and totals, each with its prior scale (a number, or an
    array of the same shape) and optional multiplicities: zeros are dropped, and equal counts
    merged when their scale is one number."""
    def compact(values, scale, weight):
        values = np.asarray(values, dtype=np.float64).ravel()
        keep = values > 0
        if weight is not None:
            weight = np.asarray(weight, np.float64).ravel()[keep]
        if np.ndim(scale):
            return (values[keep], np.ones(keep.sum()) if weight is None else weight,
                    np.asarray(scale, dtype=np.float64).ravel()[keep])
        return *_merged(values[keep], weight), scale
    return _EvidenceTerms(*compact(count, count_scale, count_weight),
                          *compact(total, total_scale, total_weight))


def smoothing(model, fitted):
    """The alpha the parameters use: the hyperparameter, or for alpha="evidence" the maximiser
    of the log evidence over the model's ``_evidence_range``, computed once per snapshot."""
    alpha = fitted.hyper["alpha"]
    if not isinstance(alpha, str):
        return alpha
    chosen = fitted.memo.get("chosen_alpha")
    if chosen is None:
        with fitted.lock:  # from statistics that partial_fit may be adding to (and then
            # clearing the memo of): chosen and kept under one hold of the lock
            chosen = fitted.memo.get("chosen_alpha")
            if chosen is None:
                chosen = fitted.memo["chosen_alpha"] = maximise(
                    model._evidence_terms(fitted, 1.0), model._evidence_range)
    return chosen


class _Evidence(Conjugate):
    """The models with a conjugate Dirichlet (or Beta, or PoissonNB's Gamma) prior of scale
    alpha; each lists its evidence as ``_evidence_terms(fitted, alpha)`` (a function of the
    scale a, for alpha=1 per unit of a scalar alpha: an _EvidenceTerms for the Dirichlet
    models)."""

    _evidence_range = EVIDENCE_ALPHA_RANGE

    alpha_ = float64_parameter(smoothing, "float or ndarray of shape (n_features,): the "
                               "smoothing the parameters use (for alpha='evidence', the chosen "
                               "one).")

    def _log_evidence(self, fitted):
        alpha = smoothing(self, fitted)
        if np.min(alpha) <= 0:
            raise AttributeError(f"{type(self).__name__}.log_evidence_ needs alpha > 0 (alpha "
                                 "= 0 is an improper prior, without a marginal likelihood)")
        with fitted.lock:
            if np.ndim(alpha) == 0:
                return self._evidence_terms(fitted, 1.0)(alpha)
            return self._evidence_terms(fitted, alpha)(1.0)


def check_predictive(model, alpha):
    """The ``predictive`` hyperparameter of a model with a Dirichlet (or Beta) prior; it needs
    alpha > 0 (alpha = 0 leaves the posterior of a probability whose count is zero improper)."""
    predictive = check_bool(model, "predictive")
    if predictive:
        require_proper(model, alpha, "predictive=True")
    return predictive


def require_proper(model, alpha, what):
    if not isinstance(alpha, str) and np.min(alpha) <= 0:
        raise InvalidParameterError(
            f"{type(model).__name__}: {what} needs alpha > 0 (with alpha = 0 the posterior of a "
            "probability whose count is zero is improper).")


def require_samples(model, fitted):
    """class_count_, checked to be positive wherever P(c) > 0: a draw is held as counts scaled
    by the class's weight, which a class without samples does not have. P(c) is the model's,
    or for a part of MixedNB (whose own prior is uniform) MixedNB's: its draw gives it, and
    its name for the message, in ``fitted.extra`` ("class_log_prior", "owner")."""
    class_count = fitted.stats["class_count_"]
    owner = fitted.extra if fitted.extra and "class_log_prior" in fitted.extra else None
    log_prior = model._params_of(fitted).log_prior if owner is None else owner["class_log_prior"]
    empty = (class_count == 0) & (log_prior > -np.inf)
    if empty.any():
        name = type(model).__name__ if owner is None else owner["owner"]
        raise ValueError(f"{name}.sample_posterior: class "
                         f"{label_repr(fitted.classes, int(np.argmax(empty)))} has no training "
                         "samples but a positive prior; its drawn probabilities cannot be held "
                         "as counts.")
    return class_count


def log_gamma_draws(shape, rng):
    """log of independent Gamma(shape, 1) draws (shape > 0), drawn in log space so that tiny
    shapes do not underflow to log 0: Gamma(s) = Gamma(s + 1) U^(1/s) for s < 1 (Marsaglia &
    Tsang 2000). Floored at -DBL_MAX, so that differences of them are never NaN."""
    shape = np.asarray(shape, dtype=np.float64)
    small = shape < 1
    log_draw = np.log(rng.standard_gamma(np.where(small, shape + 1.0, shape)))
    with np.errstate(over="ignore"):
        log_draw[small] += np.log1p(-rng.random(np.count_nonzero(small))) / shape[small]
    return np.maximum(log_draw, -np.finfo(np.float64).max, out=log_draw)


def dirichlet_draws(shape, rng, starts=None):
    """Probabilities drawn from Dirichlet distributions over the columns of ``shape`` (2-D),
    or over each segment of columns beginning at ``starts``, normalised in log space (the
    largest of each is never 0)."""
    log_draw = log_gamma_draws(shape, rng)
    if starts is None:
        largest = log_draw.max(axis=1, keepdims=True)
    else:
        largest = np.repeat(np.maximum.reduceat(log_draw, starts, axis=1),
                            np.diff(np.append(starts, log_draw.shape[1])), axis=1)
    theta = np.exp(log_draw - largest, out=log_draw)
    total = (theta.sum(axis=1, keepdims=True) if starts is None else
             np.repeat(np.add.reduceat(theta, starts, axis=1),
                       np.diff(np.append(starts, theta.shape[1])), axis=1))
    return np.divide(theta, total, out=theta)


def check_handle_unknown(model):
    value = plain_choice(model.handle_unknown, ("error", "ignore"))
    if value is None:
        raise invalid_parameter(model, "handle_unknown", "a str among {'error', 'ignore'}")
    return value


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


# The length statistics of the text models: one entry per (class, document length, weight),
# added up into one entry per distinct (class, length) once there are more than this many (6 MB
# of entries), and more than twice the entries the last such compaction left
# (_compacted_entries). Semi-supervised EM's soft memberships are several entries a document:
# at 2**16, 10,000 unlabelled posts made every M-step compact (bench/README).
LENGTH_FIELDS = ("length_class", "length", "length_weight")
MAX_LENGTH_ENTRIES = 2**18
MAX_LENGTH = 2**53  # longer documents are counted at this length (float64 integers end there)
SAMPLE_BLOCK = 2**21  # sample draws the counts of this many (row, word) pairs at a time
# sample draws short documents word by word from vocabularies of this many words: in smaller
# ones, putting the rows back in the order asked for costs what drawing words saves
SAMPLE_WORDS_FROM = 512


def length_counts(stats, n_classes):
    """The length statistics as a CSR matrix of summed weights, (class, length)."""
    cls, length, weight = (stats[name] for name in LENGTH_FIELDS)
    width = int(length.max(initial=0)) + 1
    return _length_histogram(cls, length, weight, (n_classes, width))


def _compacted_entries(stats):
    """How many leading length entries are in strictly increasing (class, length) order, as a
    compaction leaves them (batches are appended after them), counted up to half the entries:
    beyond that, compacting again would not halve them."""
    cls, length = (stats[name][:len(stats["length"]) // 2 + 1] for name in LENGTH_FIELDS[:2])
    up = (cls[1:] > cls[:-1]) | ((cls[1:] == cls[:-1]) & (length[1:] > length[:-1]))
    return len(cls) if up.all() else int(np.argmin(up)) + 1


def _compact_lengths(stats, n_classes):
    """The length statistics with one entry per distinct (class, length)."""
    counts = length_counts(stats, n_classes).tocoo()
    return {"length_class": counts.row.astype(np.intp), "length": counts.col.astype(np.intp),
            "length_weight": counts.data.astype(np.float64)}


class _BaseDiscreteNB(BaseClassifier):
    """Statistics, derivation machinery and scoring shared by the three text models.

    Statistics: ``class_count_`` and ``feature_count_`` (a sparse first batch keeps the latter as
    the counting kernel's ``_Listing`` until it is read), and for the models that draw documents
    the distribution of document lengths per class (``LENGTH_FIELDS``). Parameters: a
    feature-major table ``[n_features, n_classes]`` and a per-class bias, so that the joint
    log-likelihood is linear, ``jll[i, c] = bias[c] + sum_j v(x_ij) table[j, c]``, and one kernel
    scores all three models.
    """

    _X_constraints = {"allow_negative": False, "max_abs": MAX_COUNT}
    _lazy = True  # parameters are derived on first use after partial_fit
    _counts_in_place = True
    _counts_words = False  # Multinomial and Complement keep document lengths (for sample)
    _has_evidence = True  # alpha="evidence" and predictive (the models with a conjugate prior)

    def _more_input_tags(self):
        return {"sparse": True, "positive_only": not self._X_constraints.get("allow_negative", True)}

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        fields = (Field("class_count_", (CLASSES,)),
                  Field("feature_count_", (CLASSES, FEATURES)))
        if self._counts_words:
            fields += (Field("length_class", (None,), integer=True),
                       Field("length", (None,), integer=True, upper=MAX_LENGTH),
                       Field("length_weight", (None,)))
        return fields

    def _agree(self, stats, hyper):
        if self._counts_words:
            sizes = {len(stats[name]) for name in LENGTH_FIELDS}
            if len(sizes) != 1:
                raise ValueError("the length statistics must have one class, length and weight "
                                 "per entry")
            class_count = stats["class_count_"]
            if len(stats["length_class"]) and stats["length_class"].max() >= len(class_count):
                raise ValueError("the statistic 'length_class' names a class that does not exist")
            # a class with documents has their lengths, which sample draws from (their total
            # weight is the class's only up to the order of the sums: not compared)
            weight = np.bincount(stats["length_class"], weights=stats["length_weight"],
                                 minlength=len(class_count))
            empty = (class_count > 0) & ~(weight > 0)
            if empty.any():
                c = int(np.argmax(empty))
                raise ValueError(f"class {c} has documents (class_count_ {class_count[c]:.17g}) "
                                 "but no document lengths in the length statistics")

    def _check_params(self, n_classes, X, fitted):
        n_features = X.shape[1] if X is not None else fitted.n_features
        alpha = check_alpha(self, n_features, self._has_evidence)
        bayes = {"predictive": check_predictive(self, alpha)} if self._has_evidence else {}
        return {"alpha": alpha, "class_prior": check_class_prior(self, n_classes),
                "fit_prior": check_bool(self, "fit_prior"), **bayes, **self._more_params(fitted)}

    def _more_params(self, fitted):
        """The model's own hyperparameters, validated (for a fitted model: against the
        statistics of ``fitted``)."""
        return {}

    def _start(self, hyper, n_classes, X):
        stats = {"class_count_": np.zeros(n_classes), "feature_count_": None}  # None: the first
        if self._counts_words:  # batch writes (or lists) the counts instead of adding to zeros
            stats.update(zeros(self._fields(hyper)[2:], {}))
        return stats

    def _add(self, stats, X, members, has_nan, hyper):
        """Count a validated batch into the statistics, in place: they are the model's own, and
        whatever reads the statistics of the snapshot being replaced holds its lock meanwhile
        (copying the table for every batch would cost as much as the counting)."""
        n_classes, n_features = len(stats["class_count_"]), X.shape[1]
        feature_count = stats["feature_count_"]
        listed = feature_count is None and sp.issparse(X)
        if isinstance(feature_count, _Listing):
            feature_count = dense_counts(feature_count, n_classes, n_features)
        elif feature_count is None and not listed:
            feature_count = np.zeros((n_classes, n_features))
        class_count = stats["class_count_"]
        rows, class_ptr, weights = members.by_class()
        binarize, threshold = hyper.get("binarize", (False, 0.0))
        if sp.issparse(X):
            # the document length of each entry comes with the counting pass
            lengths = np.empty(len(rows)) if self._counts_words else None
            n_threads = self._n_threads_for(X.indptr[-1])
            if listed:
                feature_count = _list_csr(X, rows, class_ptr, weights, binarize, threshold,
                                          class_count, lengths, n_threads)
            else:
                _counts.count_csr(X.data, X.indices, X.indptr, rows, class_ptr, weights,
                                  binarize, threshold, feature_count, class_count, lengths,
                                  n_threads)
        else:
            _counts.count_dense(X, rows, class_ptr, weights, binarize, threshold,
                                feature_count, class_count, self._n_threads_for(X.size))
            lengths = X.sum(axis=1, dtype=np.float64)[rows] if self._counts_words else None
        stats["feature_count_"] = feature_count
        if self._counts_words:
            # lengths beyond 2**53 words are not integers in float64 any more: kept at that cap
            batch = (np.repeat(np.arange(n_classes, dtype=np.intp), np.diff(class_ptr)),
                     np.minimum(np.rint(lengths), float(MAX_LENGTH)).astype(np.intp),
                     weights)
            for name, values in zip(LENGTH_FIELDS, batch):
                stats[name] = np.concatenate([stats[name], values])
            # (twice what the last compaction left: many distinct pairs would otherwise be
            # sorted again at every batch)
            n = len(stats["length"])
            if n > MAX_LENGTH_ENTRIES and n > 2 * _compacted_entries(stats):
                stats.update(_compact_lengths(stats, n_classes))
        return stats

    def _plain_stats(self, fitted):
        return {**fitted.stats, "feature_count_": self._dense_counts(fitted)}

    def _export_stats(self, fitted):
        stats = self._plain_stats(fitted)
        if self._counts_words:
            stats.update(_compact_lengths(stats, len(fitted.classes)))
        return stats

    def _combine(self, a, rows_a, b, rows_b, n_classes, hyper):
        out = {}
        for name in ("class_count_", "feature_count_"):
            out[name] = spread(a[name], rows_a, n_classes) + spread(b[name], rows_b, n_classes)
        if self._counts_words:
            out["length_class"] = np.concatenate([rows_a[a["length_class"]],
                                                  rows_b[b["length_class"]]])
            for name in LENGTH_FIELDS[1:]:
                out[name] = np.concatenate([a[name], b[name]])
            out.update(_compact_lengths(out, n_classes))
        return out

    def _dense_counts(self, fitted):
        """feature_count_ as a dense array, built from a listing on first read (and kept in the
        snapshot's statistics in its place, an equal value)."""
        counts = fitted.stats["feature_count_"]
        if isinstance(counts, _Listing):
            with fitted.lock:
                counts = fitted.stats["feature_count_"]
                if isinstance(counts, _Listing):
                    counts = dense_counts(counts, len(fitted.classes), fitted.n_features)
                    fitted.stats["feature_count_"] = counts
        return counts

    feature_count_ = fitted_attribute(
        lambda model, fitted: shown_statistic(model, fitted, lambda: model._dense_counts(fitted)),
        "ndarray of shape (n_classes, n_features): (weighted) sum of each feature per class.")
    class_log_prior_ = parameter("log_prior",
                                 "ndarray of shape (n_classes,): log prior of each class.")

    # ----------------------------------------------------------------- derivation machinery
    def _feature_log_prob(self, fitted):
        """Multinomial and complement models score with feature_log_prob_ itself (or, for the
        predictive, with a Polya table whose first block is log a_cj: the posterior mean of
        log theta_cj is that less log A_c)."""
        params = self._params_of(fitted)
        if params.polya_lengths is None:
            return params.table.T
        return (params.table - params.polya_lengths[0]).T

    feature_log_prob_ = parameter(
        lambda model, fitted: model._feature_log_prob(fitted),
        "ndarray of shape (n_classes, n_features): log P(x_j | y=c) (model-specific meaning).")

    def _fill_logged_counts(self, fitted, feature_term, class_term, listing, alpha):
        """_fill_table with the listed entries set to log(count + alpha_j) + class_term[c].
        alpha: a number, or a per-feature vector."""
        value = np.add(listing.count,
                       alpha if np.ndim(alpha) == 0 else np.asarray(alpha)[listing.feature])
        return self._fill_table(fitted, feature_term, class_term, listing,
                                np.log(value, out=value))

    def _fill_table(self, fitted, feature_term, class_term, listing, value,
                    value_class_term=None):
        """Feature-major table: feature_term[j] + class_term[c], with the listed nonzero entries
        set to value + value_class_term[c] (default: class_term); and whether any entry is not
        finite. See _tables.fill_table."""
        n_classes, n_features = len(fitted.classes), fitted.n_features
        class_term = np.ascontiguousarray(class_term, dtype=np.float64)
        if value_class_term is None:
            value_class_term = class_term
        table = np.empty((n_features, n_classes), dtype=fitted.dtype)
        nonfinite = _tables.fill_table(feature_term, class_term, listing.class_ptr,
                                       listing.feature, value,
                                       np.ascontiguousarray(value_class_term, dtype=np.float64),
                                       table, self._n_threads_for(table.size))
        if nonfinite < 0:
            raise MemoryError("could not allocate the buffers of the table-filling kernel")
        return table, nonfinite > 0

    # ----------------------------------------------------------------- scoring and sampling
    def _score(self, params, X, kind, out, has_nan):
        n_classes = out.shape[1]
        first_kind = kind if params.must is None else OUT_JLL
        if sp.issparse(X):
            n_threads = self._n_threads_for(X.indptr[-1] * n_classes)
            failed = _jll.jll_linear_csr(X.data, X.indices, X.indptr, params.table, params.bias,
                                         params.binarize, params.threshold, params.nonfinite,
                                         first_kind, out, n_threads, params.polya_blocks,
                                         params.polya_lengths, params.polya_counts,
                                         params.polya_gamma)
        else:
            n_threads = self._n_threads_for(X.size * n_classes)
            failed = _jll.jll_linear_dense(X, params.table, params.bias, params.binarize,
                                           params.threshold, first_kind, out, n_threads,
                                           params.polya_blocks, params.polya_lengths,
                                           params.polya_counts, params.polya_gamma)
        if params.must is not None:
            _apply_required_features(params, X, out)
            if kind != OUT_JLL:
                failed += _jll.normalize_rows_inplace(out, kind, n_threads)
        if failed:
            raise MemoryError("could not allocate the per-thread scoring buffer")

    def _word_probabilities(self, fitted):
        return np.exp(self._feature_log_prob(fitted))

    def _sample_X(self, fitted, y_idx, rng):
        """Documents: a length from the class's length distribution, then that many words from
        the class's word distribution (a CSR document-term matrix). With ``predictive``, each
        document's word distribution is first drawn from the class's posterior Dirichlet, so
        that the documents follow the Polya predictive the model scores with.

        A document of fewer words than an eighth of the vocabulary (of SAMPLE_WORDS_FROM words
        or more) draws them one by one (``_draw_words``), a longer one its counts of every word
        at once (NumPy's multinomial, after a Dirichlet draw for the predictive), so that none
        costs more than about its length or the vocabulary's (a word drawn alone costs 2-8
        counts drawn at once, more in larger vocabularies: bench/README). Both work in blocks of
        about SAMPLE_BLOCK words or counts (a longer document is a block of its own)."""
        theta = self._word_probabilities(fitted)
        theta = theta / theta.sum(axis=1, keepdims=True)
        posterior = (self._dense_counts(fitted) + smoothing(self, fitted)
                     if fitted.hyper.get("predictive") else None)
        lengths = length_counts(fitted.stats, len(fitted.classes))
        order, class_ptr = group_by_class(y_idx, len(fitted.classes))
        n_features = fitted.n_features
        n_words = np.empty(len(y_idx), dtype=np.int64)
        for c in np.flatnonzero(np.diff(class_ptr)):  # the classes drawn
            start, stop = lengths.indptr[c], lengths.indptr[c + 1]
            weights = lengths.data[start:stop]
            if not weights.sum() > 0:
                raise ValueError(f"Class {label_repr(fitted.classes, c)} has no training "
                                 "documents to draw lengths from.")
            n_words[order[class_ptr[c]:class_ptr[c + 1]]] = rng.choice(
                lengths.indices[start:stop], size=class_ptr[c + 1] - class_ptr[c],
                p=weights / weights.sum())
        blocks, drawn = [], []  # CSR blocks of rows, and their row numbers
        short = (8 * n_words[order] < n_features) & (n_features >= SAMPLE_WORDS_FROM)
        for c in np.unique(y_idx[order[short]]):  # short documents, word by word, by class
            rows = order[class_ptr[c]:class_ptr[c + 1]][short[class_ptr[c]:class_ptr[c + 1]]]
            cdf = np.cumsum(theta[c])
            cdf /= cdf[-1]
            ends = np.cumsum(n_words[rows])
            first = 0
            while first < len(rows):
                done = ends[first - 1] if first else 0
                stop = max(first + 1, int(np.searchsorted(ends, done + SAMPLE_BLOCK, "right")))
                block_rows = rows[first:stop]
                blocks.append(_draw_words(cdf, n_words[block_rows], n_features, rng,
                                          None if posterior is None else posterior[c].sum()))
                drawn.append(block_rows)
                first = stop
        long_rows = np.sort(order[~short])  # long documents, every word's count at once
        step = max(1, SAMPLE_BLOCK // max(n_features, 1))
        for first in range(0, len(long_rows), step):
            block_rows = long_rows[first:first + step]
            p = theta[y_idx[block_rows]] if posterior is None else \
                dirichlet_draws(posterior[y_idx[block_rows]], rng)
            blocks.append(sp.csr_matrix(rng.multinomial(n_words[block_rows], p)
                                        .astype(np.float64)))
            drawn.append(block_rows)
        if not blocks:
            return sp.csr_matrix((0, n_features))
        X, drawn = sp.vstack(blocks, format="csr"), np.concatenate(drawn)
        blocks.clear()  # (freed before the rows are put in order)
        # (the rows are in order when every document is long: no copy to put them so)
        return X if (drawn[1:] > drawn[:-1]).all() else X[np.argsort(drawn)]


def _draw_words(cdf, n_words, n_features, rng, urn=None):
    """CSR counts of documents of ``n_words`` words each, drawn one by one from the word
    distribution whose cumulative sums are ``cdf``: a multinomial draw. With ``urn`` (the sum
    A of a Dirichlet's parameters a, whose normalised a is the distribution), the words follow
    the Polya urn instead (the Dirichlet-multinomial): a document's word t (from 0) is a new
    draw from a / A with probability A / (A + t), else a copy of one of its t words before,
    each as likely, so that word k comes with probability (a_k + n_k) / (A + t)."""
    total = int(n_words.sum())
    starts = np.repeat(np.cumsum(n_words) - n_words, n_words)  # each word's document's first
    words = np.searchsorted(cdf, rng.random(total), side="right")
    if urn is not None:
        position = np.arange(total) - starts  # t, within its document
        copy = rng.random(total) * (urn + position) >= urn  # (never at t = 0)
        source = np.arange(total)
        source[copy] = starts[copy] + rng.integers(position[copy])
        while True:  # each copied word follows the words it copies to a new draw (doubling)
            further = source[source]
            if np.array_equal(further, source):
                break
            source = further
        words = words[source]
    documents = np.repeat(np.arange(len(n_words)), n_words)
    X = sp.csr_matrix((np.ones(total), (documents, words)), shape=(len(n_words), n_features))
    X.sum_duplicates()
    return X


def _list_csr(X, rows, class_ptr, weights, binarize, threshold, class_count, lengths, n_threads):
    """A sparse first batch's counts as a read-only _Listing (_counts.list_csr) from its entries
    grouped by class (``Members.by_class``); writes class_count and lengths (unless None)."""
    n_classes, n_features = len(class_count), X.shape[1]
    # a class lists at most min(its entries, n_features) nonzeros (the + 1s are spare: the
    # kernel's arrays are never empty; the kept ones may be)
    sizes = np.diff(X.indptr)[rows]
    if sizes.min(initial=0) < 0:  # (the kernel would clamp them, and count the wrong rows)
        _checks.raise_x_changed()
    entries = np.bincount(np.repeat(np.arange(n_classes), np.diff(class_ptr)), weights=sizes,
                          minlength=n_classes)
    room, size = None, int(min(entries.sum(), n_classes * n_features)) + n_classes + 1
    if n_threads > 1 and n_classes > 1:  # classes listed at once: a room each
        room = np.zeros(n_classes + 1, dtype=np.intp)
        np.cumsum(np.minimum(entries, n_features).astype(np.intp) + 1, out=room[1:])
        size = room[-1]
    class_ptr_out, feature, count = np.empty(n_classes + 1, np.intp), np.empty(size, np.intp), \
        np.empty(size)
    class_sum = np.empty(n_classes)
    if _counts.list_csr(X.data, X.indices, X.indptr, rows, class_ptr, weights, binarize,
                        threshold, n_features, room, class_count, lengths, class_ptr_out, feature,
                        count, class_sum, n_threads) < 0:
        raise MemoryError("could not allocate the counting kernel's scratch rows")
    n = class_ptr_out[-1]
    # shrunk in place to the first n entries (realloc: the pages past them, never touched, go
    # back to the allocator, which would otherwise hand out fresh pages, to be faulted in, for
    # every fit of a process that made no larger arrays), and read-only: derivations take them
    # as they are
    for array in (feature, count):
        array.resize(n, refcheck=False)  # no views of them exist
    listing = _Listing(class_ptr_out, feature, count, class_sum)
    for array in listing:
        array.flags.writeable = False
    return listing


def dense_counts(listing, n_classes, n_features):
    """feature_count_ from a _Listing."""
    feature_count = np.zeros((n_classes, n_features))
    rows = np.repeat(np.arange(n_classes), np.diff(listing.class_ptr))
    feature_count[rows, listing.feature] = listing.count
    return feature_count


def nonzero_counts(fitted):
    """The nonzero entries of a snapshot's feature_count_, class by class, as a _Listing (the
    kept listing itself when there is one). See _tables.nonzero_counts."""
    counts = fitted.stats["feature_count_"]
    if isinstance(counts, _Listing):
        return counts
    capacity = counts.size  # only the pages actually written are touched
    n_classes = counts.shape[0]
    class_ptr = np.empty(n_classes + 1, dtype=np.intp)
    feature = np.empty(capacity, dtype=np.intp)
    count = np.empty(capacity, dtype=np.float64)
    class_sum = np.empty(n_classes, dtype=np.float64)
    if _tables.nonzero_counts(counts, class_ptr, feature, count, class_sum):
        raise _counts_changed()
    n = class_ptr[-1]
    return _Listing(class_ptr, feature[:n], count[:n], class_sum)


def _counts_changed():
    """The error of a count table that holds negative or NaN counts, which only a race leaves
    (a batch's X rewritten while count_csr added it in: fastgen/_core/_guard.pxd); a loaded or
    merged table was validated."""
    return XChangedError(
        "feature_count_ holds negative or NaN counts: an X changed while it was counted (another "
        "thread must not modify an array during a fastgen call); fit the model again")


def alpha_per_feature(alpha, n_features):
    """alpha and log(alpha) as read-only (n_features,) vectors (stride-0 views for a scalar)."""
    with np.errstate(divide="ignore"):
        log_alpha = np.log(alpha)
    if np.ndim(alpha) == 0:
        return _repeated(alpha, n_features), _repeated(log_alpha, n_features)
    log_alpha.flags.writeable = False
    return alpha, log_alpha


def _apply_required_features(params, X, jll):
    """Set jll to -inf where a row lacks a feature that its class always had (BernoulliNB with
    alpha = 0: p = 1)."""
    must = params.must
    cols = np.flatnonzero(must.any(axis=0))
    if sp.issparse(X):  # (scipy's column selection trusts the indices: a checked copy)
        sub = rechecked(X.copy())[:, cols].toarray()
    else:
        sub = X[:, cols]
    present = (sub > params.threshold) if params.binarize else (sub != 0)
    have = present.astype(np.float64) @ must[:, cols].T.astype(np.float64)
    jll[have < must.sum(axis=1)] = -np.inf


class MultinomialNB(_Evidence, _BaseDiscreteNB):
    """Naive Bayes for multinomially distributed counts (word counts in text).

    P(x | y=c) is a multinomial over features with probabilities theta_cj estimated from
    smoothed counts: theta_cj = (N_cj + alpha_j) / (N_c + sum_j alpha_j).

    Parameters
    ----------
    alpha : float, array-like of shape (n_features,) or "evidence", default=1.0
        Additive (Laplace/Lidstone) smoothing; 0 for none. The prior of each class's word
        probabilities is Dirichlet(alpha).
        ``"evidence"``: the alpha in [1e-4, 1e2] that maximises ``log_evidence_`` (type-II
        maximum likelihood, MacKay 1992), chosen again from all the statistics after each
        ``partial_fit`` or ``merge`` and on load.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10 with a warning.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Given class priors (not adjusted by the data).
    predictive : bool, default=False
        Score with the posterior predictive probability of each document given the training
        data, the class's word probabilities integrated out under their Dirichlet posterior,
        instead of the plug-in smoothed estimate (see Notes). Needs alpha > 0. A document of
        more than 2^30 words is refused (float64 would lose the posterior's digits).
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
    alpha_ : float or ndarray of shape (n_features,)
        The smoothing the parameters use: ``alpha``, or the one chosen for ``"evidence"``.
    log_evidence_ : float
        Log marginal likelihood of the training features given their labels (see Notes).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Column names, when X was a DataFrame with string column names.

    See Also
    --------
    BernoulliNB : word presence/absence event model.
    ComplementNB : complement naive Bayes, for imbalanced text classes.

    Notes
    -----
    jll[i, c] = log P(c) + sum_j x_ij log theta_cj (the multinomial event model of
    McCallum & Nigam 1998). Identical to scikit-learn's MultinomialNB for the same parameters.

    ``log_evidence_`` is the probability of the training documents' word sequences given their
    classes, with theta_c integrated out under its Dirichlet(alpha) prior: per class, ``sum_j
    [lgamma(N_cj + alpha_j) - lgamma(alpha_j)] - [lgamma(N_c + A) - lgamma(A)]``, A = sum_j
    alpha_j. The probability of the bags of counts adds each document's multinomial coefficient,
    which does not depend on alpha. Only the nonzero counts cost a term. Weighted samples count
    as their weights (an integer weight is that many copies of the document). Needs alpha > 0.

    With ``predictive=True``, P(x | c, D) is the probability of the document's word sequence
    under the Dirichlet-compound-multinomial (Polya) distribution of the posterior
    Dirichlet(a_c), a_cj = alpha_j + N_cj (Minka 2000; Madsen, Kauchak & Elkan 2005):
    ``jll[i, c] = log P(c) + sum_j [lgamma(a_cj + x_ij) - lgamma(a_cj)] - [lgamma(A_c + n_i) -
    lgamma(A_c)]``, A_c = sum_j a_cj, n_i = sum_j x_ij. Unlike the plug-in, a word repeated
    in a document counts for less each time when it is rare in the class (burstiness); the two
    agree as the counts grow. The class prior P(c) is the plug-in's. ``feature_log_prob_`` is
    the same as the plug-in's (the posterior mean). ``sample_posterior`` draws each theta_c
    from Dirichlet(a_c); a drawn model (alpha=0) holds the drawn probabilities in
    ``feature_count_`` and this model's document lengths (for ``sample``).
    The predictive scores a count of k <= 8 from a table of lgamma(a_cj + k) - lgamma(a_cj)
    (8 times the plug-in table's memory); a larger whole count, when the training counts are
    whole and alpha is one number, from differences of a table of lgamma(alpha + m) -
    lgamma(alpha) over the whole m; other counts are computed. On 20 Newsgroups its
    ``predict_proba`` takes about 1.8 times the plug-in's time.

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
                 predictive: bool = False, n_threads: int | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.predictive = predictive
        self.n_threads = n_threads

    def _derive(self, fitted):
        # log theta_cj = log(N_cj + alpha_j) - log(N_c + sum alpha); log(alpha_j) - ... if N_cj = 0
        hyper = fitted.hyper
        alpha_in = smoothing(self, fitted)
        if hyper["predictive"]:
            return self._polya_params(fitted, alpha_in)
        alpha, log_alpha = alpha_per_feature(alpha_in, fitted.n_features)
        listing = nonzero_counts(fitted)
        total = listing.class_sum + alpha.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            table, nonfinite = self._fill_logged_counts(fitted, log_alpha, -np.log(total),
                                                        listing, alpha_in)
        log_prior = class_log_prior(fitted.stats["class_count_"], hyper)
        bias = log_prior.copy()
        empty = total == 0  # a class with no data and no smoothing produces nothing
        if empty.any():
            table[:, empty] = 0.0
            bias[empty] = -np.inf
        return _Params(table, bias, log_prior, nonfinite, hyper)

    def _log_prior_density(self, fitted):
        # each class's theta_c ~ Dirichlet(alpha_j + 1), whose mode the smoothed estimate is:
        # sum_j alpha_j log theta_cj (the table is log theta, feature-major)
        alpha = smoothing(self, fitted)
        table = self._params_of(fitted).table
        if np.ndim(alpha) == 0:
            return float(alpha * table.sum(dtype=np.float64)) if alpha > 0 else 0.0
        alpha = np.asarray(alpha, dtype=np.float64)
        if not (alpha > 0).all():  # a feature without smoothing has no prior term
            table = np.where(alpha[:, None] > 0, table, 0.0)
        return float((alpha @ table).sum())

    def _polya_params(self, fitted, alpha):
        """The predictive's Polya tables (design e of fastgen/_core/_jll.pxi): R(a_cj, k) for
        k = 1 .. POLYA_BLOCKS, feature-major blocks (block 0, log a_cj, is also the table), a_cj
        = alpha + N_cj; R(A_c, n) for n = 1 .. POLYA_LENGTHS (float64); and, when alpha is one
        number and the counts N_cj are whole, those counts (int32, feature-major, capped at the
        gamma table's length) with gamma[m] = R(alpha, m), from which a larger whole count x
        scores as gamma[N_cj + x] - gamma[N_cj]."""
        alpha = np.asarray(alpha, dtype=np.float64)
        counts = self._dense_counts(fitted).T
        if not counts.min(initial=0.0) >= 0:  # (NaN too)
            raise _counts_changed()
        a = counts + (alpha[:, None] if alpha.ndim else alpha)
        blocks = log_rising_rows(a, POLYA_BLOCKS).astype(fitted.dtype, copy=False)
        log_prior = class_log_prior(fitted.stats["class_count_"], fitted.hyper)
        whole = gamma = None
        if alpha.ndim == 0 and (counts == np.floor(counts)).all():
            n_gamma = int(min(counts.max(initial=0.0), POLYA_GAMMA_MAX)) + POLYA_GAMMA_MARGIN
            whole = np.ascontiguousarray(np.clip(counts, 0, n_gamma), dtype=np.int32)
            gamma = rising_prefix(alpha, n_gamma)
        return _Params(blocks[0], log_prior, log_prior, False, fitted.hyper, polya_blocks=blocks,
                       polya_lengths=log_rising_rows(a.sum(axis=0), POLYA_LENGTHS),
                       polya_counts=whole, polya_gamma=gamma)

    def _draw(self, fitted, rng):
        # theta_c ~ Dirichlet(alpha + N_c), held as the counts of an unsmoothed model
        alpha = smoothing(self, fitted)
        require_proper(self, alpha, "sample_posterior")
        theta = dirichlet_draws(self._dense_counts(fitted) + alpha, rng)
        return ({**self._plain_stats(fitted), "feature_count_": theta},
                {"alpha": 0.0, "force_alpha": True})

    def _evidence_terms(self, fitted, alpha):
        # per class, sum_j [lgamma(a_j + N_cj) - lgamma(a_j)] - [lgamma(A + N_c) - lgamma(A)]
        listing = nonzero_counts(fitted)
        per_feature = np.ndim(alpha) != 0
        return evidence_terms(listing.count, alpha[listing.feature] if per_feature else alpha,
                              listing.class_sum,
                              np.sum(alpha) if per_feature else alpha * fitted.n_features)


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
    feature_names_in_ : ndarray of shape (n_features,)

    See Also
    --------
    MultinomialNB : the multinomial event model it complements.

    Notes
    -----
    The complement count of class c for feature j is the other classes' count plus alpha_j,
    computed as ``(feature_all_[j] - feature_count_[c, j]) + alpha_j``: the count is taken away
    before the smoothing is added, so a feature that only class c has keeps the complement
    count alpha_j exactly, however small alpha_j is beside the count (scikit-learn's
    ``feature_all_ + alpha - feature_count_`` rounds 2e7 + 1e-10 - 2e7 to 0, whose log is -inf:
    infinite weights, and NaN posteriors with ``norm=True``). With alpha > 0 every weight is
    then finite. Otherwise identical to scikit-learn's ComplementNB for the same parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import ComplementNB
    >>> X = np.array([[2, 1, 0], [3, 0, 0], [0, 1, 4], [0, 2, 3]])
    >>> ComplementNB().fit(X, [0, 0, 1, 1]).predict([[0, 0, 5]])
    array([1])
    """
    _counts_words = True
    _has_evidence = False  # no generative model of the data, so no marginal likelihood

    def __init__(self, alpha: float | ArrayLike = 1.0, *, force_alpha: bool = True,
                 fit_prior: bool = True, class_prior: ArrayLike | None = None, norm: bool = False,
                 n_threads: int | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm
        self.n_threads = n_threads

    def _more_params(self, fitted):
        return {"norm": check_bool(self, "norm")}

    def _word_probabilities(self, fitted):
        # documents of class c are drawn from its own smoothed word counts
        return self._dense_counts(fitted) + alpha_per_feature(fitted.hyper["alpha"],
                                                               fitted.n_features)[0]

    feature_all_ = memoized(
        lambda model, fitted: model._dense_counts(fitted).sum(axis=0),
        "ndarray of shape (n_features,): counts of each feature over all classes.")

    def _derive(self, fitted):
        # logged_cj = log(complement count) - log(complement total), where the complement count
        # of a class lacking feature j is feature_all_j + alpha_j
        hyper = fitted.hyper
        alpha_in, n_features = hyper["alpha"], fitted.n_features
        listing = nonzero_counts(fitted)
        class_ptr, feature, count, class_sum = listing
        # base = feature_all_ + alpha, and the complement counts of the listed entries,
        # (feature_all_ - count) + alpha (complement_counts); then NumPy's logs. Counts are
        # subtracted before alpha is added, so that a complement the other classes do not have
        # is alpha, however small beside the count (scikit-learn's feature_all_ + alpha - count
        # rounds it to 0, and its log to -inf)
        alpha, _ = alpha_per_feature(alpha_in, n_features)
        base, value = np.empty(n_features), np.empty(len(feature))
        _tables.complement_counts(feature, count, alpha, base, value)
        comp_total = np.maximum(class_sum.sum() - class_sum, 0.0) + alpha.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            feature_term = np.log(base, out=base)
            np.log(value, out=value)
            log_comp_total = np.log(comp_total)
            if hyper["norm"]:
                table, nonfinite = self._fill_table(fitted, feature_term, -log_comp_total,
                                                    listing, value)
                norms = table.sum(axis=0, dtype=np.float64)
                # all of a class's complement mass on one feature (e.g. a single feature): every
                # logged value is 0 and so is their sum; the weights are then 0, not 0/0
                norms[norms == 0] = 1.0
                table /= norms
            else:  # weights are -logged
                table, nonfinite = self._fill_table(
                    fitted, np.negative(feature_term, out=feature_term), log_comp_total,
                    listing, np.negative(value, out=value))
        if np.min(alpha_in) == 0 and np.isnan(table).any():
            raise ValueError(
                "ComplementNB weights are undefined (0/0) for these counts with alpha=0"
                + (" and norm=True" if hyper["norm"] else "") + "; use alpha > 0."
            )
        n_classes = len(fitted.classes)
        log_prior = class_log_prior(fitted.stats["class_count_"], hyper)
        bias = log_prior if n_classes == 1 else np.zeros(n_classes)
        return _Params(table, bias, log_prior, nonfinite, hyper)


BINARY_X = {"allow_negative": False, "max_abs": 1.0,
            "domain": "[0, 1] when binarize=None (X binary already; set binarize to a threshold "
                      "to binarize it)"}


class BernoulliNB(_Evidence, _BaseDiscreteNB):
    """Naive Bayes for binary features (word presence or absence).

    P(x | y=c) = prod_j p_cj^x_j (1 - p_cj)^(1 - x_j), with
    p_cj = (N_cj + alpha_j) / (N_c + 2 alpha_j). Absent words count too, yet scoring touches only
    the words present: the per-class sum of log(1 - p_cj) is precomputed, and each present word
    adds log p_cj - log(1 - p_cj).

    Parameters
    ----------
    alpha : float, array-like of shape (n_features,) or "evidence", default=1.0
        Additive smoothing; 0 for none. The prior of each p_cj is Beta(alpha_j, alpha_j).
        ``"evidence"``: the alpha in [1e-4, 1e2] that maximises ``log_evidence_`` (type-II
        maximum likelihood, MacKay 1992), chosen again from all the statistics after each
        ``partial_fit`` or ``merge`` and on load.
    force_alpha : bool, default=True
        If False, alpha values below 1e-10 are raised to 1e-10 with a warning.
    binarize : float or None, default=0.0
        Threshold: x > binarize counts as present. None means X is already binary: values in
        [0, 1] (a fraction is a probability of presence), anything else is an error.
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Given class priors.
    predictive : bool, default=False
        Score with the posterior predictive probability given the training data (each p_cj
        integrated out under its Beta posterior): for one sample it is the plug-in's (see
        Notes). Needs alpha > 0.
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
    alpha_ : float or ndarray of shape (n_features,)
        The smoothing the parameters use: ``alpha``, or the one chosen for ``"evidence"``.
    log_evidence_ : float
        Log marginal likelihood of the training features given their labels (see Notes).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)

    See Also
    --------
    MultinomialNB : the word-count event model.

    Notes
    -----
    McCallum & Nigam (1998) contrast this event model with the multinomial one. Identical to scikit-learn's
    BernoulliNB for the same parameters; unlike it, an alpha array of n_features values works,
    and alpha=0 with a feature present in every sample of a class gives -inf (not NaN) to the
    samples lacking it.

    ``log_evidence_`` is the probability of the training samples' binarized features given
    their classes, each p_cj integrated out under its Beta prior: per class and feature,
    ``lgamma(N_cj + a) + lgamma(M_c - N_cj + a) - lgamma(M_c + 2a) + lgamma(2a) - 2 lgamma(a)``
    (M_c samples, N_cj with the feature). Weighted samples count as their weights. Needs
    alpha > 0.

    The posterior of p_cj is Beta(N_cj + a, M_c - N_cj + a), and the features of one sample are
    independent given the class, so the posterior predictive probability of a sample is the
    product over features of the posterior means, (N_cj + a) / (M_c + 2a) for a present
    feature: exactly the plug-in estimate. ``predictive=True`` therefore scores as the
    plug-in does. ``sample_posterior`` draws each p_cj from that Beta (two gammas); a drawn
    model (alpha=0) holds p_cj M_c in ``feature_count_``, so a probability within rounding of 0
    or 1 is 0 or 1 there.

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
                 class_prior: ArrayLike | None = None, predictive: bool = False,
                 n_threads: int | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.predictive = predictive
        self.n_threads = n_threads

    def _more_params(self, fitted):
        binarize = self._binarize_args()
        counted = None if fitted is None or fitted.hyper is None else fitted.hyper["binarize"]
        if counted is not None and tuple(counted) != binarize:
            # the counts were taken at the old threshold: no parameters of the new one follow
            raise InvalidParameterError(
                f"binarize was changed to {self.binarize!r} after fitting with "
                f"{counted[1] if counted[0] else None!r}: the counts were taken at that "
                "threshold; call fit to start again.")
        return {"binarize": binarize}

    def _agree(self, stats, hyper):
        check_at_most(stats["feature_count_"], stats["class_count_"][:, None],
                      "the statistic 'feature_count_' exceeds class_count_: a feature cannot be "
                      "present in more samples than its class has")

    def _binarizing(self, fitted):
        return self._binarize_args() if fitted is None or fitted.hyper is None \
            else fitted.hyper["binarize"]

    def _value_constraints(self, fitted, learning):
        # (duplicate entries of a column add up before thresholding, as in the dense matrix:
        # check_X); without binarization X is binary already: a value beyond [0, 1] is no
        # probability's exponent (and would take feature_count_ beyond class_count_)
        binarize, _ = self._binarizing(fitted)
        return {**self._X_constraints, **({} if binarize else BINARY_X)}

    def _validate_X(self, X, fitted, dtype=None, learning=False):
        binarize, threshold = self._binarizing(fitted)
        X, has_nan = super()._validate_X(X, fitted, dtype, learning)
        if sp.issparse(X) and binarize and threshold < 0:
            # zeros that are not stored would stay absent while stored ones count as present
            raise ValueError(
                f"BernoulliNB(binarize={self.binarize!r}): a sparse X cannot be binarized with a "
                "threshold < 0 (every zero would count as present); use a dense X or binarize >= 0."
            )
        return X, has_nan

    def _sample_X(self, fitted, y_idx, rng):
        """Binary vectors: feature j present with probability p_cj (CSR, built in blocks)."""
        p = np.exp(self._feature_log_prob(fitted))
        blocks = [sp.csr_matrix((rng.random((len(rows), p.shape[1])) < p[rows]).astype(np.float64))
                  for rows in np.array_split(y_idx, max(1, len(y_idx) // 1000))]
        return sp.vstack(blocks, format="csr")

    def _binarize_args(self):
        b = self.binarize
        if type(b) is float and b == b:  # the common case, without the generic checks
            return True, b
        if b is None:
            return False, 0.0
        b = real_in(b, -np.inf, np.inf)
        if b is None:
            raise invalid_parameter(self, "binarize", "None or a float (not NaN)")
        return True, b

    @staticmethod
    def _log_terms(fitted, alpha):
        """log(N_cj + a), log(N_c - N_cj + a) and log(N_c + 2a) (broadcastable)."""
        fc, cc = fitted.stats["feature_count_"], fitted.stats["class_count_"][:, None]
        with np.errstate(divide="ignore"):
            log_present = np.log(fc + alpha)
            log_absent = np.log(np.maximum(cc - fc, 0.0) + alpha)
            log_total = np.log(cc + 2 * np.asarray(alpha))
        return log_present, log_absent, log_total

    def _derive(self, fitted):
        # table_jc = log p - log(1 - p) = log(N_cj + a) - log(M_c - N_cj + a) and
        # bias_c = log prior + sum_j log(1 - p_cj), with p_cj = (N_cj + a) / (M_c + 2a)
        hyper = fitted.hyper
        alpha = smoothing(self, fitted)
        log_prior = class_log_prior(fitted.stats["class_count_"], hyper)
        if np.ndim(alpha) == 0:
            table, bias, nonfinite = self._derive_scalar_alpha(fitted, float(alpha), log_prior)
        else:
            self._dense_counts(fitted)
            log_present, log_absent, log_total = self._log_terms(fitted, alpha)
            with np.errstate(invalid="ignore"):
                table = np.ascontiguousarray((log_present - log_absent).T, dtype=fitted.dtype)
            bias = log_prior + (log_absent - log_total).sum(axis=1)
            nonfinite = not np.isfinite(table).all()
        must = None
        if np.min(alpha) == 0:
            must = self._patch_unsmoothed(fitted, alpha, table, bias, log_prior)
            nonfinite = True
        return _Params(table, bias, log_prior, nonfinite, hyper, must)

    def _log_prior_density(self, fitted):
        # each p_cj ~ Beta(alpha_j + 1, alpha_j + 1), whose mode the smoothed estimate is:
        # sum_j alpha_j (log p_cj + log(1 - p_cj))
        alpha = smoothing(self, fitted)
        if not np.any(alpha):
            return 0.0
        self._dense_counts(fitted)
        log_present, log_absent, log_total = self._log_terms(fitted, alpha)
        with np.errstate(invalid="ignore"):
            terms = alpha * (log_present + log_absent - 2 * log_total)
        return float(np.where(np.asarray(alpha) > 0, terms, 0.0).sum())

    def _derive_scalar_alpha(self, fitted, alpha, log_prior):
        """Scalar alpha: the entries of absent features (N_cj = 0) are per-class constants.
        Returns (table, bias, whether the table has infinities)."""
        n_features = fitted.n_features
        class_count = fitted.stats["class_count_"]
        listing = nonzero_counts(fitted)
        class_ptr, feature, count, _ = listing
        n_present = np.diff(class_ptr)
        total = class_count + 2 * alpha
        log_q_present_sum = np.empty(len(class_count))
        with np.errstate(divide="ignore", invalid="ignore"):
            # log p - log(1 - p) of the present features, and the sum over them of log(1 - p) =
            # log(M - N + a) - log(M + 2a), in one pass over log(M - N + a)
            log_absent = np.empty(len(count))
            _tables.rest_counts(class_ptr, count, class_count, alpha, log_absent)
            np.log(log_absent, out=log_absent)  # of M - N + a
            value = np.add(count, alpha)
            np.log(value, out=value)
            _tables.segment_sums(log_absent, class_ptr, np.log(total), log_q_present_sum, value)
            table, nonfinite = self._fill_table(
                fitted, _repeated(np.log(alpha), n_features), -np.log(class_count + alpha),
                listing, value, np.zeros(len(class_count)))
            # ... and over the absent features: log1p is exact for the tiny p of rare words
            log_q_zero = np.log1p(-alpha / total)
        log_q_sum = log_q_present_sum + (n_features - n_present) * log_q_zero
        return table, log_prior + log_q_sum, nonfinite

    def _draw(self, fitted, rng):
        # p_cj ~ Beta(N_cj + a, M_c - N_cj + a) = G1 / (G1 + G2), held as the counts p_cj M_c
        alpha = smoothing(self, fitted)
        require_proper(self, alpha, "sample_posterior")
        class_count = require_samples(self, fitted)
        present = self._dense_counts(fitted)
        log_present = log_gamma_draws(present + alpha, rng)
        log_absent = log_gamma_draws(np.maximum(class_count[:, None] - present, 0.0) + alpha, rng)
        p = np.exp(log_present - np.logaddexp(log_present, log_absent))
        return ({**self._plain_stats(fitted), "feature_count_": p * class_count[:, None]},
                {"alpha": 0.0, "force_alpha": True})

    def _evidence_terms(self, fitted, alpha):
        # per class and feature, a Beta(a, a) prior of the presence: lgamma(a + N_cj) - lgamma(a)
        # + lgamma(a + M_c - N_cj) - lgamma(a) - [lgamma(2a + M_c) - lgamma(2a)]
        class_count, n_features = fitted.stats["class_count_"], fitted.n_features
        if np.ndim(alpha) != 0:
            present = self._dense_counts(fitted)
            absent = np.maximum(class_count[:, None] - present, 0.0)
            scale = np.broadcast_to(alpha, present.shape)
            return evidence_terms(np.concatenate([present.ravel(), absent.ravel()]),
                                  np.concatenate([scale.ravel(), scale.ravel()]),
                                  np.broadcast_to(class_count[:, None], present.shape), 2 * scale)
        # scalar alpha: a feature absent from all of class c's samples counts M_c absences
        class_ptr, _, count, _ = nonzero_counts(fitted)
        n_present = np.diff(class_ptr)
        absent = np.maximum(np.repeat(class_count, n_present) - count, 0.0)
        return evidence_terms(
            np.concatenate([count, absent, class_count]), alpha, class_count, 2 * alpha,
            count_weight=np.concatenate([np.ones(2 * len(count)), n_features - n_present]),
            total_weight=np.full(len(class_count), float(n_features)))

    def _patch_unsmoothed(self, fitted, alpha, table, bias, log_prior):
        """alpha = 0 leaves probabilities of exactly 0 or 1, where log p - log(1 - p) is infinite.

        p = 1 (the feature is in every sample of the class): scored as neutral, and rows lacking
        it are sent to -inf by _apply_required_features. A class without data produces nothing.
        Patches table and bias (not yet published) in place; returns the required features (or
        None).
        """
        self._dense_counts(fitted)
        log_present, log_absent, log_total = self._log_terms(fitted, alpha)
        must = np.isneginf(log_absent) & ~np.isneginf(log_present)
        empty = np.isneginf(log_total).any(axis=1) | (np.isneginf(log_present)
                                                       & np.isneginf(log_absent)).any(axis=1)
        for c in np.flatnonzero(must.any(axis=1) & ~empty):  # (empty ones: below)
            log_q = np.where(must[c], log_present[c], log_absent[c]) - log_total[c]
            table[:, c] = np.where(must[c], 0.0, log_present[c] - log_absent[c])
            bias[c] = log_prior[c] + log_q.sum()
        if empty.any():
            table[:, empty] = 0.0
            bias[empty] = -np.inf
        return must if must.any() else None

    def _feature_log_prob(self, fitted):
        # log p_cj = log(N_cj + a_j) - log(M_c + 2 a_j); scalar a: log(a) - log(M_c + 2a) if N = 0
        with fitted.lock:  # read from statistics that partial_fit may be adding to
            alpha = smoothing(self, fitted)
            if np.ndim(alpha) != 0:
                self._dense_counts(fitted)
                log_present, _, log_total = self._log_terms(fitted, alpha)
                with np.errstate(invalid="ignore"):
                    return log_present - log_total
            alpha = float(alpha)
            with np.errstate(divide="ignore", invalid="ignore"):
                table, _ = self._fill_logged_counts(
                    fitted, _repeated(np.log(alpha), fitted.n_features),
                    -np.log(fitted.stats["class_count_"] + 2 * alpha), nonzero_counts(fitted),
                    alpha)
            return table.T


# --------------------------------------------------------------------------------------------
# Diagonal models of continuous and count features: GaussianNB and PoissonNB.


class _DiagonalParams(NamedTuple):
    tables: tuple  # diagonal_tables' output, read by the diagonal kernel
    log_prior: np.ndarray
    named: dict  # the public parameters (theta_, var_, ...), by attribute name




class _BaseDiagonalNB(BaseClassifier):
    """Shared scoring of GaussianNB and PoissonNB: one term per observed feature (a NaN drops
    out of the sum, the product over features marginalised), tables derived eagerly after every
    batch (they are n_classes x n_features, cheap to rebuild)."""

    _X_constraints: dict = {"allow_nan": True, "accept_sparse": False, "accept_int": False,
                            "max_abs": MAX_VALUE}

    def _more_input_tags(self):
        return {"sparse": self._X_constraints.get("accept_sparse", True), "allow_nan": True,
                "positive_only": not self._X_constraints.get("allow_negative", True)}

    def _agree(self, stats, hyper):
        check_at_most(stats["observed_count_"], stats["class_count_"][:, None],
                      "the statistic 'observed_count_' exceeds class_count_: a class cannot "
                      "observe a feature more often than it has samples")

    def _score(self, params, X, kind, out, has_nan):
        score_diagonal(params.tables, X, kind, out, self._n_threads_for(X.size * out.shape[1]))


def _named(name, doc):
    return parameter(lambda model, fitted: model._params_of(fitted).named[name], doc)


class GaussianNB(Conjugate, _BaseDiagonalNB):
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
    prior_mean : array-like of shape (n_features,), default=None
        Mean m0 of the Normal-Inverse-Gamma prior of each class's feature means (see Notes);
        None: each feature's mean over all classes.
    prior_var : array-like of shape (n_features,), default=None
        Typical variance s0^2 of the prior of each class's feature variances; None: each
        feature's variance over all classes plus ``epsilon_``.
    prior_strength : float, pair of floats or "evidence", default=1.0
        Weight of the prior in pseudo-observations: n0 gives kappa0 = nu0 = n0 (the prior counts
        as n0 observations of the mean and of the variance), a pair sets (kappa0, nu0), and
        ``"evidence"`` takes the n0 in [1e-4, 1e6] that maximises ``log_evidence_`` (type-II
        maximum likelihood), chosen again from all the statistics after each ``partial_fit``
        or ``merge`` and on load.
    predictive : bool, default=False
        Score with the posterior predictive density of each feature (a Student-t, see Notes)
        instead of the maximum-likelihood normal density. The prior hyperparameters above
        matter only for it, ``log_evidence_`` and ``sample_posterior``.
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
    prior_strength_ : float or tuple
        The prior's weight in use: ``prior_strength``, or the n0 chosen for ``"evidence"``.
    log_evidence_ : float
        Log marginal likelihood of the training features given their labels (see Notes).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit (DataFrame input only).

    See Also
    --------
    LinearDiscriminantAnalysis : one covariance shared by all classes.
    QuadraticDiscriminantAnalysis : one full covariance per class.

    Notes
    -----
    Maximum likelihood: per class c and feature j, theta is the mean and var the mean
    squared deviation of the observed values (weighted). The statistics (weights, means, squared
    deviations) combine exactly across ``partial_fit`` batches, and ``epsilon_`` follows the
    variance of all the data seen so far, not of the latest batch (scikit-learn #14054), leaving
    out constant features, whose only spread is the rounding of their values. If every feature
    is constant, ``epsilon_`` is ``var_smoothing`` itself. A class that never observed a
    feature uses that feature's mean and variance over all classes.

    Bayesian prediction. Each class's mean mu and variance sigma^2 of each feature have the
    conjugate Normal-Inverse-Gamma prior sigma^2 ~ Scaled-Inv-chi^2(nu0, s0^2), mu | sigma^2 ~
    N(m0, sigma^2 / kappa0) (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian
    distribution"; Gelman et al., BDA3, section 3.3), with m0 = ``prior_mean`` and s0^2 =
    ``prior_var``; nu0 s0^2 is the prior's sum of squares, so that s0^2 weighs as nu0 observed
    squared deviations. Given the class's n observed values (weight), their mean xbar and sum of
    squared deviations M2, the posterior is of the same form with kappa_n = kappa0 + n, nu_n =
    nu0 + n, m_n = (kappa0 m0 + n xbar) / kappa_n and nu_n s_n^2 = nu0 s0^2 + M2 + kappa0 n
    (xbar - m0)^2 / kappa_n. With ``predictive=True`` each observed feature contributes the
    posterior predictive density, a Student-t with nu_n degrees of freedom, location m_n and
    squared scale s_n^2 (1 + 1/kappa_n); a NaN feature drops out as before, and a class that
    never observed a feature gets the prior's predictive (nu0 degrees of freedom).
    ``log_evidence_`` is the sum over classes and features of the log marginal likelihood,
    lgamma(nu_n/2) - lgamma(nu0/2) + log(kappa0/kappa_n)/2 + (nu0/2) log(nu0 s0^2) -
    (nu_n/2) log(nu_n s_n^2) - (n/2) log(pi). A weighted sample counts as its likelihood raised
    to its weight (an integer weight: repeated rows). The defaults of ``prior_mean`` and
    ``prior_var`` come from the statistics (an empirical-Bayes prior), so they follow
    ``partial_fit`` and ``merge``. ``sample_posterior`` draws sigma^2 ~ Scaled-Inv-chi^2(nu_n,
    s_n^2) and mu ~ N(m_n, sigma^2 / kappa_n) for every class that has samples (a class without
    any keeps the plug-in's fallback, the overall mean and variance of the drawn ones).

    Examples
    --------
    A diagnosis from one test result, with a prior of 0.8 for the healthy class:

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
                 prior_mean: ArrayLike | None = None, prior_var: ArrayLike | None = None,
                 prior_strength: float | tuple | str = 1.0, predictive: bool = False,
                 n_threads: int | None = None):
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.prior_mean = prior_mean
        self.prior_var = prior_var
        self.prior_strength = prior_strength
        self.predictive = predictive
        self.n_threads = n_threads

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        return (Field("class_count_", (CLASSES,)), Field("observed_count_", (CLASSES, FEATURES)),
                # the mean of values within MAX_VALUE (and the rounding of sums of them)
                Field("mean", (CLASSES, FEATURES), nonneg=False, upper=2 * MAX_VALUE),
                Field("m2", (CLASSES, FEATURES), upper=np.inf))

    def _check_params(self, n_classes, X, fitted):
        vs = real_in(self.var_smoothing, 0.0, MAX_SMOOTHING)
        if vs is None:
            raise invalid_parameter(self, "var_smoothing",
                                    f"a float in the range [0.0, {MAX_SMOOTHING:g}]")
        n_features = X.shape[1] if X is not None else fitted.n_features
        return {"var_smoothing": vs,
                "priors": check_priors(self, n_classes),
                "prior_mean": check_prior_vector(self, "prior_mean", n_features, False),
                "prior_var": check_prior_vector(self, "prior_var", n_features, True),
                "prior_strength": check_prior_strength(self, 1),
                "predictive": check_bool(self, "predictive")}

    def _add(self, stats, X, members, has_nan, hyper):
        batch = diagonal_moments(X, members, self._n_threads_for(X.size))
        observed, mean, m2 = combine_moments(stats["observed_count_"], stats["mean"],
                                             stats["m2"], *batch)
        return {"class_count_": stats["class_count_"] + members.class_weight(),
                "observed_count_": observed, "mean": mean, "m2": m2}

    def _combine(self, a, rows_a, b, rows_b, n_classes, hyper):
        moments = [spread(s[name], rows, n_classes) for s, rows in ((a, rows_a), (b, rows_b))
                   for name in ("observed_count_", "mean", "m2")]
        observed, mean, m2 = combine_moments(*moments)
        return {"class_count_": spread(a["class_count_"], rows_a, n_classes)
                + spread(b["class_count_"], rows_b, n_classes),
                "observed_count_": observed, "mean": mean, "m2": m2}

    # ----------------------------------------------------------------- parameters
    @staticmethod
    def _overall(stats, var_smoothing):
        """Each feature's mean and variance over all classes (0 and 1 for a feature never
        observed), and epsilon: var_smoothing times the largest of those variances, leaving out
        those of constant features (a spread that the rounding of their values makes by itself,
        ``_gaussian.constant``: weighted means of a constant 0.1 differ by 1e-17 and their
        variance is 1e-34, which would otherwise set epsilon and let that rounding decide the
        posteriors)."""
        n, mean, m2 = stats["observed_count_"], stats["mean"], stats["m2"]
        overall_mean, overall_var = overall_moments(n, mean, m2)
        seen = n.sum(axis=0) > 0
        sizes = np.abs(np.where(n > 0, mean, 0.0)).max(axis=0, initial=0.0)
        with np.errstate(over="ignore", invalid="ignore"):  # (refused by _derive)
            # (no floor but rounding's: features of tiny units, variance 1e-120, are modelled)
            largest = overall_var[seen & ~constant(overall_var, sizes, ROUNDING_RTOL,
                                                   least=0.0)].max(initial=0.0)
            return overall_mean, overall_var, float(var_smoothing * (largest if largest > 0
                                                                     else 1.0))

    def _derive(self, fitted):
        stats, hyper = fitted.stats, fitted.hyper
        n, mean, m2 = stats["observed_count_"], stats["mean"], stats["m2"]
        overall_mean, overall_var, epsilon = self._overall(stats, hyper["var_smoothing"])
        with np.errstate(over="ignore", invalid="ignore"):
            has = n > 0
            theta = np.where(has, mean, overall_mean)
            var = np.where(has, m2 / np.where(has, n, 1.0), overall_var) + epsilon
        if not (np.isfinite(var).all() and np.isfinite(theta).all() and np.isfinite(epsilon)):
            raise ValueError("The feature means or variances overflow float64 (sums of weights "
                             "times values or squared deviations beyond about 1e308): rescale X "
                             "or sample_weight.")
        if (var < MIN_GAUSSIAN_VARIANCE).any():
            c, j = np.argwhere(var < MIN_GAUSSIAN_VARIANCE)[0]
            raise ValueError(
                f"Feature {j} has variance {var[c, j]:.3g} in class "
                f"{label_repr(fitted.classes, c)} even "
                f"after var_smoothing={hyper['var_smoothing']!r}: below {MIN_GAUSSIAN_VARIANCE:g} the "
                "Gaussian density overflows (or, at zero, is undefined). Use a larger var_smoothing."
            )
        prior, log_prior = class_prior(stats["class_count_"], hyper["priors"])
        if hyper["predictive"]:
            A, S, B, P = self._posterior(fitted).predictive()
            # (S at most 1/sqrt(MIN_GAUSSIAN_VARIANCE): S |x - A| stays finite for any X)
            if not (np.isfinite(A).all() and np.isfinite(B).all()
                    and (S <= MIN_GAUSSIAN_VARIANCE ** -0.5).all()):
                raise ValueError("The posterior predictive densities overflow float64: use a "
                                 "prior_var and prior_strength of moderate size, or rescale X.")
            tables = diagonal_tables(DIAG_STUDENT_T, A, S, B, log_prior, P)
        else:
            tables = diagonal_tables(DIAG_GAUSSIAN, theta, -0.5 / var,
                                     -0.5 * (LOG_2PI + np.log(var)), log_prior)
        return _DiagonalParams(tables, log_prior, {"theta_": theta, "var_": var,
                                                   "class_prior_": prior, "epsilon_": epsilon})

    def _prior(self, fitted):
        """(the Normal-Inverse-Gamma prior of every class, of arrays of n_features, and the
        prior_strength it has), computed once per snapshot; "evidence" maximises the log
        evidence over n0 = kappa0 = nu0 in EVIDENCE_STRENGTH_RANGE."""
        found = fitted.memo.get("nig_prior")
        if found is not None:
            return found
        hyper, stats = fitted.hyper, fitted.stats
        overall_mean, overall_var, epsilon = self._overall(stats, hyper["var_smoothing"])
        m0 = overall_mean if hyper["prior_mean"] is None else hyper["prior_mean"]
        v0 = overall_var + epsilon if hyper["prior_var"] is None else hyper["prior_var"]
        if not (v0 >= MIN_GAUSSIAN_VARIANCE).all():  # (also NaN)
            j = int(np.argmin(v0 >= MIN_GAUSSIAN_VARIANCE))
            raise ValueError(f"The prior variance of feature {j} is {v0[j]:.3g}, below "
                             f"{MIN_GAUSSIAN_VARIANCE:g} (a constant feature with "
                             "var_smoothing=0): give prior_var, or use var_smoothing > 0.")
        moments = (stats["observed_count_"], stats["mean"], stats["m2"])
        strength = hyper["prior_strength"]
        if strength == "evidence":
            strength = maximise(lambda n0: float(NormalInverseGamma(
                n0, m0, n0, v0).log_evidence(*moments).sum()), EVIDENCE_STRENGTH_RANGE)
        kappa0, nu0 = strength if isinstance(strength, tuple) else (strength, strength)
        found = (NormalInverseGamma(kappa0, m0, nu0, v0),
                 np.array(strength) if isinstance(strength, tuple) else strength)
        return fitted.memo.setdefault("nig_prior", found)

    def _posterior(self, fitted):
        stats = fitted.stats
        return self._prior(fitted)[0].updated(stats["observed_count_"], stats["mean"],
                                               stats["m2"])

    def _log_evidence(self, fitted):
        stats = fitted.stats
        with np.errstate(over="ignore", invalid="ignore"):
            value = float(self._prior(fitted)[0].log_evidence(
                stats["observed_count_"], stats["mean"], stats["m2"]).sum())
        if not np.isfinite(value):
            raise ValueError("The log evidence overflows float64: use a prior_var and "
                             "prior_strength of moderate size, or rescale X.")
        return value

    def _draw(self, fitted, rng):
        """A class's drawn mean and variance as the statistics of a plug-in model without
        smoothing: every value observed (the class's weight), mean mu, squared deviations
        sigma^2 times the weight. A class without samples keeps the plug-in's fallback (its
        draw, from the prior, is not used). Where a class with samples never observed a feature
        its draw is the prior's, whose variance with nu0 well below 1 may exceed float64."""
        stats = fitted.stats
        mu, var = self._posterior(fitted).draw(rng)
        observed = np.repeat(stats["class_count_"][:, None], fitted.n_features, axis=1)
        unseen = stats["class_count_"] == 0
        mu[unseen], var[unseen] = 0.0, 0.0
        with np.errstate(over="ignore", invalid="ignore"):
            m2 = var * observed
        if not (np.isfinite(mu).all() and np.isfinite(m2).all()):
            raise ValueError("A variance drawn from the prior (for a feature a class never "
                             "observed) overflows float64: its nu0 is too small. Use a larger "
                             "prior_strength.")
        return ({"class_count_": stats["class_count_"], "observed_count_": observed,
                 "mean": mu, "m2": m2}, {"var_smoothing": 0.0})

    observed_count_ = statistic("observed_count_")
    theta_ = _named("theta_", "ndarray of shape (n_classes, n_features): the class means.")
    var_ = _named("var_", "ndarray of shape (n_classes, n_features): the class variances.")
    class_prior_ = _named("class_prior_", "ndarray of shape (n_classes,): P(c).")
    epsilon_ = _named("epsilon_", "float: the absolute additive value to variances.")
    prior_strength_ = float64_parameter(lambda model, fitted: model._prior(fitted)[1],
                                        "float or tuple: the prior's weight in use (for "
                                        "prior_strength='evidence', the chosen n0).")

    def _sample_X(self, fitted, y_idx, rng):
        """Normal draws, or with ``predictive`` draws from the predictive Student t."""
        if fitted.hyper["predictive"]:
            post = self._posterior(fitted)
            scale = np.sqrt(post.var * (1.0 + 1.0 / post.kappa))
            return post.mean[y_idx] + scale[y_idx] * rng.standard_t(post.nu[y_idx])
        named = self._params_of(fitted).named
        return rng.normal(named["theta_"][y_idx], np.sqrt(named["var_"][y_idx]))


class _GammaPoissonEvidence(NamedTuple):
    """The log evidence of Poisson counts under Gamma(a, beta) priors of their rates, as a
    function of the shape a: per class and feature, with S the weighted sum of the observed
    counts and n their weight, a log beta - lgamma(a) + lgamma(a + S) - (a + S) log(beta + n),
    leaving out the prior-independent -sum log x!. A cell without observations adds 0."""

    total: np.ndarray  # S
    log1p_ratio: np.ndarray  # log1p(n / beta): a log beta - a log(beta + n)
    data_term: float  # sum of S log(beta + n)

    @classmethod
    def of(cls, total, observed, beta):
        """The function for statistics S (``total``) and n (``observed``) and the prior's beta,
        with the terms that do not depend on a computed once, not at every step of the search:
        log1p(n / beta), or log n - log beta where n / beta is beyond float64 (a tiny beta)."""
        with np.errstate(over="ignore", divide="ignore"):
            ratio = observed / beta
            log1p_ratio = np.where(ratio < np.inf, np.log1p(ratio),
                                   np.log(observed) - np.log(beta))
        return cls(total, log1p_ratio, float(np.sum(total * np.log(beta + observed))))

    def __call__(self, a):
        return float(np.sum(log_rising(a, self.total) - a * self.log1p_ratio)) - self.data_term


def negbin_table(minus_log1p_b, r):
    """The x-dependent part of the negative binomial log-pmf for the whole counts k < width,
    lgamma(r + k) - lgamma(r) - k log(1 + b), from (n_classes, n_features) r and -log(1 + b):
    (n_classes, n_features * width), feature j's count k at column j width + k, so that its
    transpose, the diagonal kernel's layout, reads the classes of a lookup contiguously. width
    is NEGBIN_TABLE_MAX + 1, or less (at least 1) so that the table holds at most
    NEGBIN_TABLE_ENTRIES numbers. The lgamma differences are ``log_rising_rows``."""
    n_classes, n_features = r.shape
    width = min(NEGBIN_TABLE_MAX + 1, max(1, NEGBIN_TABLE_ENTRIES // r.size))
    table = np.zeros((n_features, width, n_classes))
    table[:, 1:] = log_rising_rows(r.T, width - 1).transpose(1, 0, 2)
    table += np.arange(width)[:, None] * minus_log1p_b.T[:, None, :]
    return table.reshape(-1, n_classes).T


class PoissonNB(_Evidence, _BaseDiagonalNB):
    """Poisson naive Bayes: each count feature is Poisson within each class.

    Parameters
    ----------
    alpha : float or "evidence", default=1.0
        Shape of the Gamma(alpha, beta) prior on each rate: a pseudo-count, so that a feature
        never seen in a class does not get the rate 0 (0: none, the maximum-likelihood rate
        when beta = 0; a rate of 0 is then an error). ``"evidence"``: the alpha
        in [1e-4, 1e6] that maximises ``log_evidence_`` for the given beta (type-II maximum
        likelihood), chosen again from all the statistics after each ``partial_fit`` or
        ``merge`` and on load; it needs beta > 0.
    beta : float, default=1.0
        Rate of the Gamma prior: a pseudo-number of observations. Must be >= 0 (> 0 for
        ``log_evidence_`` and ``sample_posterior``).
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Given class priors.
    predictive : bool, default=False
        Score with the posterior predictive distribution of each count (a negative binomial,
        see Notes) instead of the Poisson of the posterior mean rate ``lambda_``. A count above
        2^30 is refused (float64 would lose the posterior's digits).
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
    alpha_ : float
        The prior shape the parameters use: ``alpha``, or the one chosen for ``"evidence"``.
    log_evidence_ : float
        Log marginal likelihood of the training counts given their labels, up to a constant
        (see Notes).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit (DataFrame input only).

    Notes
    -----
    ``lambda_ = (feature_count_ + alpha) / (observed_count_ + beta)``, the posterior mean of the
    rate; ``alpha -> 0, beta = 0`` is the maximum-likelihood rate. The joint log-likelihood is
    ``log P(c) + sum_j [x_j log lambda_cj - lambda_cj - log x_j!]`` over the observed features,
    the sum of ``scipy.stats.poisson.logpmf`` for integer counts (non-integer values use
    ``log Gamma(x + 1)``). Sparse input is scored through the zeros, which contribute
    ``-lambda_cj`` each; NaN marks a missing value in dense input.

    Bayesian prediction. The rate of feature j in class c has the conjugate prior
    Gamma(alpha, beta) (shape, rate), so its posterior is Gamma(r, b) with r = alpha + S_cj and
    b = beta + n_cj (S_cj = ``feature_count_``, n_cj = ``observed_count_``) and ``lambda_`` is
    its mean. With ``predictive=True`` a count x is scored by the posterior predictive, the
    negative binomial ``lgamma(r + x) - lgamma(r) - lgamma(x + 1) + r log(b / (b + 1)) - x
    log(b + 1)`` (Gelman et al., BDA3, section 2.6), which is wider than the Poisson of the
    mean rate where a class has few observations. Its x-dependent part for the whole counts up
    to 64 is tabulated when the model is fitted (n_classes x n_features x 65 float64; fewer
    counts where that would exceed 32 MB), so that scoring such a count is one look-up per
    class; larger or fractional counts take two lgammas per class. ``log_evidence_`` is the log marginal
    likelihood summed over classes and features, ``alpha log beta - lgamma(alpha) +
    lgamma(r) - r log b``, without the term ``-sum log x!`` of the training counts: that term
    does not depend on the prior (so it changes no comparison of priors, nor the choice of
    ``"evidence"``), and it is not a sufficient statistic of the model (MultinomialNB leaves out
    its multinomial coefficients likewise). A weighted sample counts as its likelihood raised to
    its weight (an integer weight: repeated rows). ``sample_posterior`` draws each rate from
    Gamma(r, b), held at the smallest normal double (about 2.2e-308) where the draw is below it
    (likely for r well below 1).

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

    _evidence_range = (1e-4, 1e6)  # alpha is a pseudo-count of events: rates can be large

    def __init__(self, alpha: float | str = 1.0, beta: float = 1.0, *, fit_prior: bool = True,
                 class_prior: ArrayLike | None = None, predictive: bool = False,
                 n_threads: int | None = None):
        self.alpha = alpha
        self.beta = beta
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.predictive = predictive
        self.n_threads = n_threads

    def _value_constraints(self, fitted, learning):
        # the negative binomial's R(r_c, x) grows as x log x and cancels between the classes:
        # beyond MAX_PREDICTIVE_COUNT float64 would leave posteriors an error of x log(x) 2^-52
        if not learning and fitted is not None and fitted.hyper is not None and \
                fitted.hyper.get("predictive"):
            return {**self._X_constraints, "max_abs": MAX_PREDICTIVE_COUNT,
                    "domain": "[0, 2^30] with predictive=True (the posterior predictive of a "
                              "larger count loses its precision in float64; score it with "
                              "predictive=False)"}
        return self._X_constraints

    def _validate_X(self, X, fitted, dtype=None, learning=False):
        X, has_nan = super()._validate_X(X, fitted, dtype, learning)
        if sp.issparse(X) and has_nan:
            raise ValueError("PoissonNB: NaN (missing values) is supported in dense input only; "
                             "a sparse matrix's absent entries are zeros, not missing.")
        return X, has_nan

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        return (Field("class_count_", (CLASSES,)), Field("observed_count_", (CLASSES, FEATURES)),
                Field("feature_count_", (CLASSES, FEATURES)))

    def _check_params(self, n_classes, X, fitted):
        evidence = plain_choice(self.alpha, ("evidence",)) is not None
        alpha = "evidence" if evidence else real_in(self.alpha, 0.0, MAX_SMOOTHING)
        beta = real_in(self.beta, 0.0, MAX_SMOOTHING)
        for name, value in (("alpha", alpha), ("beta", beta)):
            if value is None:
                raise invalid_parameter(self, name, f"a float in the range [0.0, "
                                        f"{MAX_SMOOTHING:g}]" + (' or "evidence"' if name ==
                                                                 "alpha" else ""))
        if evidence and beta == 0:
            raise InvalidParameterError('PoissonNB: alpha="evidence" needs beta > 0 (beta = 0 '
                                        "is an improper prior, without a marginal likelihood).")
        return {"alpha": alpha, "beta": beta,
                "predictive": check_predictive(self, alpha),
                "class_prior": check_class_prior(self, n_classes),
                "fit_prior": check_bool(self, "fit_prior")}

    def _add(self, stats, X, members, has_nan, hyper):
        n_classes = len(stats["class_count_"])
        class_count = members.class_weight()
        if sp.issparse(X):
            feature_count = np.zeros_like(stats["feature_count_"])
            rows, class_ptr, weights = members.by_class()
            _counts.count_csr(X.data, X.indices, X.indptr, rows, class_ptr, weights, False, 0.0,
                              feature_count, np.zeros(n_classes), None,
                              self._n_threads_for(X.indptr[-1]))
            observed = np.repeat(class_count[:, None], X.shape[1], axis=1)
        else:
            observed, mean, _ = diagonal_moments(X, members, self._n_threads_for(X.size))
            feature_count = observed * mean
            # counts rewritten since their check (the Gaussian moments' kernel takes any value)
            if not (np.isfinite(feature_count).all() and (feature_count >= 0).all()):
                _checks.raise_x_changed()
        return {"class_count_": stats["class_count_"] + class_count,
                "observed_count_": stats["observed_count_"] + observed,
                "feature_count_": stats["feature_count_"] + feature_count}

    # ----------------------------------------------------------------- parameters
    def _derive(self, fitted):
        stats, hyper = fitted.stats, fitted.hyper
        alpha = smoothing(self, fitted)
        denominator = stats["observed_count_"] + hyper["beta"]
        seen = stats["class_count_"] > 0
        if (denominator[seen] <= 0).any():
            raise ValueError("beta=0 and a class never observed some feature: its rate is "
                             "undefined. Use beta > 0.")
        with np.errstate(over="ignore"):
            b = np.where(denominator > 0, denominator, 1.0)
            lam = (stats["feature_count_"] + alpha) / b
            finite = np.isfinite(lam.sum(axis=1)).all()  # (each rate, and -sum_j lambda_cj)
        if not finite:
            raise ValueError("The Poisson rates (feature_count_ + alpha) / (observed_count_ + "
                             "beta) overflow float64: use a larger beta, or rescale "
                             "sample_weight if the weights are tiny.")
        if not lam.all():  # a count of zero with alpha = 0, or a tiny alpha over a large count
            raise ValueError(f"alpha={alpha!r} is too small for these counts: the Poisson "
                             "rate of a feature a class never had is 0 or underflows to 0 (a "
                             "log of -inf). Use a larger alpha.")
        log_lambda = np.log(lam)
        log_prior = class_log_prior(stats["class_count_"], hyper)
        if hyper["predictive"]:  # the negative binomial of r = alpha + S and b = beta + n
            r = stats["feature_count_"] + alpha
            minus_log1p_b = -np.log1p(b)
            tables = diagonal_tables(DIAG_NEGBIN, minus_log1p_b, r, -r * np.log1p(1.0 / b),
                                     log_prior, negbin_table(minus_log1p_b, r))
            sparse_table = None  # (the CSR kernel of the negative binomial reads tables)
        else:
            tables = diagonal_tables(DIAG_POISSON, log_lambda, log_lambda, -lam, log_prior)
            # the linear CSR kernel reads a table of the output's dtype
            sparse_table = tables[0].astype(fitted.dtype, copy=False)
        return _DiagonalParams(tables, log_prior, {"lambda_": lam, "sparse_table": sparse_table,
                                                   "class_log_prior_": log_prior})

    def _log_prior_density(self, fitted):
        # each rate ~ Gamma(alpha + 1, beta), whose mode the estimate is: alpha log lambda -
        # beta lambda
        lam = self._params_of(fitted).named["lambda_"]
        return float(smoothing(self, fitted) * np.log(lam).sum() - fitted.hyper["beta"] * lam.sum())

    def _evidence_terms(self, fitted, alpha):
        stats = fitted.stats
        return _GammaPoissonEvidence.of(stats["feature_count_"], stats["observed_count_"],
                                        fitted.hyper["beta"])

    def _log_evidence(self, fitted):
        if fitted.hyper["beta"] <= 0:
            raise AttributeError("PoissonNB.log_evidence_ needs beta > 0 (beta = 0 is an "
                                 "improper prior, without a marginal likelihood)")
        return super()._log_evidence(fitted)

    def _draw(self, fitted, rng):
        """The drawn rates lambda as the statistics of an unsmoothed plug-in model (alpha = 0)
        with the same beta and observed counts: feature_count_ = lambda (observed_count_ +
        beta), a Gamma(r, 1) draw, so that feature_count_ / (observed_count_ + beta) is lambda
        to rounding. A shape r well below 1 (a small alpha where a class never had a feature)
        puts most of a draw's mass below the smallest normal double, where it underflows to 0
        and the plug-in's log lambda would be -inf: such a draw is held at the smallest normal
        rate, a rate under which any count is as impossible as under the draw."""
        stats, beta = fitted.stats, fitted.hyper["beta"]
        b = stats["observed_count_"] + beta
        if not (b > 0).all():
            raise ValueError("PoissonNB.sample_posterior needs beta > 0 where a class never "
                             "observed a feature (the posterior of its rate is improper).")
        alpha = smoothing(self, fitted)
        require_proper(self, alpha, "sample_posterior")
        draw = rng.standard_gamma(stats["feature_count_"] + alpha)
        smallest = np.finfo(np.float64).tiny * np.maximum(b, 1.0)
        return ({"class_count_": stats["class_count_"],
                 "observed_count_": stats["observed_count_"],
                 "feature_count_": np.maximum(draw, smallest)}, {"alpha": 0.0})

    observed_count_ = statistic("observed_count_")
    feature_count_ = statistic("feature_count_")
    lambda_ = _named("lambda_", "ndarray of shape (n_classes, n_features): the Poisson rates.")
    class_log_prior_ = _named("class_log_prior_", "ndarray of shape (n_classes,): log P(c).")

    def _sample_X(self, fitted, y_idx, rng):
        """Poisson draws, or with ``predictive`` negative binomial ones (a rate drawn from its
        posterior Gamma for every value)."""
        rate = self._params_of(fitted).named["lambda_"][y_idx]
        if fitted.hyper["predictive"]:
            stats = fitted.stats
            shape = smoothing(self, fitted) + stats["feature_count_"]
            rate = rng.gamma(shape[y_idx], 1.0 / (fitted.hyper["beta"]
                                                  + stats["observed_count_"])[y_idx])
        # NumPy's Poisson takes rates up to about 9.2e18; beyond 2**60 a draw is Normal(rate,
        # rate) to within its skewness, rate**-0.5 < 1e-9, rounded to a whole count
        huge = rate >= 2.0**60
        counts = rng.poisson(np.where(huge, 0.0, rate)).astype(np.float64)
        if huge.any():
            counts[huge] = np.rint(rng.normal(rate[huge], np.sqrt(rate[huge])))
        return counts

    def _score(self, params, X, kind, out, has_nan):
        if not sp.issparse(X):
            return super()._score(params, X, kind, out, has_nan)
        A, S, _, _, bias, model, T = params.tables
        n_threads = self._n_threads_for(X.indptr[-1] * len(bias))
        if model == DIAG_NEGBIN:  # (with the -log(x!) terms of OUT_JLL)
            failed = _jll.jll_negbin_csr(X.data, X.indices, X.indptr, A, S, T, bias, kind, out,
                                         n_threads)
        else:
            failed = _jll.jll_linear_csr(X.data, X.indices, X.indptr,
                                         params.named["sparse_table"], bias, False, 0.0, False,
                                         kind, out, n_threads)
        if failed:
            raise MemoryError("could not allocate the scoring kernel's row buffers")
        if kind == OUT_JLL and model != DIAG_NEGBIN:  # the class-independent -log(x!) of the
            # stored counts, summed over a copy of the row pointers checked again (another
            # thread may have rewritten X's since its check: _guard.pxd)
            ptr = X.indptr.astype(np.intp)
            log_factorials = gammaln(X.data.astype(np.float64, copy=False) + 1.0)
            if not (ptr[0] == 0 and ptr[-1] <= len(log_factorials) and (np.diff(ptr) >= 0).all()):
                _checks.raise_x_changed()
            sums = np.empty(len(ptr) - 1)
            _tables.segment_sums(log_factorials, ptr, np.zeros(len(sums)), sums)
            out -= sums[:, None].astype(out.dtype, copy=False)


class _CategoricalParams(NamedTuple):
    table: np.ndarray  # feature-major: row offsets[j] + k holds log P(x_j = k | c) for every c
    log_prob: np.ndarray  # the same, class-major
    offsets: np.ndarray
    n_categories: np.ndarray
    log_prior: np.ndarray
    handle_unknown: str


def _offsets(n_categories):
    offsets = np.zeros(len(n_categories) + 1, dtype=np.intp)
    np.cumsum(n_categories, out=offsets[1:])
    return offsets


def _feature_sums(table, n_categories):
    """Per class, the sum of each feature's columns of a (n_classes, sum K_j) table: shape
    (n_classes, number of features with categories)."""
    nonempty = n_categories > 0  # (a feature without categories has no columns)
    if not table.shape[1]:
        return np.zeros((table.shape[0], 0))
    return np.add.reduceat(table, _offsets(n_categories)[:-1][nonempty], axis=1)


def _regrid(count, n_categories, wanted):
    """Category counts (n_classes, sum n_categories) laid out for ``wanted`` (>=) categories per
    feature, the new categories at zero."""
    if np.array_equal(n_categories, wanted):
        return count
    old, new = _offsets(n_categories), _offsets(wanted)
    out = np.zeros((count.shape[0], new[-1]))
    for j in range(len(wanted)):
        out[:, new[j]:new[j] + n_categories[j]] = count[:, old[j]:old[j + 1]]
    return out


class CategoricalNB(LabelColumns, _Evidence, BaseClassifier):
    """Naive Bayes for categorical features: feature j takes one of K_j values.

    Parameters
    ----------
    alpha : float or "evidence", default=1.0
        Additive (Laplace/Lidstone) smoothing over each feature's K_j values (K_j alphas
        in the denominator): the prior of each class's P(x_j | c) is Dirichlet(alpha, ..., alpha).
        ``"evidence"``: the alpha in [1e-4, 1e2] that maximises ``log_evidence_`` (type-II
        maximum likelihood, MacKay 1992), chosen again from all the statistics after each
        ``partial_fit`` or ``merge`` and on load.
    force_alpha : bool, default=True
        If False, alpha below 1e-10 is raised to 1e-10 (scikit-learn's rule).
    fit_prior : bool, default=True
        Learn class priors from the data; if False use a uniform prior.
    class_prior : array-like of shape (n_classes,), default=None
        Given class priors.
    min_categories : int or array-like of shape (n_features,), default=None
        Minimum number of categories per feature (for values that may not occur in training).
        A DataFrame column of labels has as many categories as labels (declare labels that may
        not occur with a pandas CategoricalDtype); its entry is not used.
    handle_unknown : {"error", "ignore"}, default="error"
        A code (or a DataFrame label) at prediction that is beyond the categories seen in
        training: a ValueError naming the feature, or (``"ignore"``) that feature is
        marginalised for that row. In a later ``partial_fit`` batch an unknown label is always
        an error.
    predictive : bool, default=False
        Score with the posterior predictive probability given the training data (each
        P(x_j | c) integrated out under its Dirichlet posterior): for one sample it is the
        plug-in's (see Notes). Needs alpha > 0.
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
    alpha_ : float
        The smoothing the parameters use: ``alpha``, or the one chosen for ``"evidence"``.
    log_evidence_ : float
        Log marginal likelihood of the training features given their labels (see Notes).
    n_categories_ : ndarray of shape (n_features,)
        Number of categories of each feature.
    categories_ : dict
        For the DataFrame columns of labels: column index -> the labels, in code order (empty
        when fitted on codes).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit (DataFrame input only).

    Notes
    -----
    X holds category codes 0 .. K_j - 1 (integers, or floats holding integers), or is a pandas
    DataFrame whose columns hold codes or labels (object, string, category or bool dtype). A
    column of labels learns its categories at the first fit: the sorted distinct labels seen,
    or every category of a CategoricalDtype, used or not, so that batches streamed through
    ``partial_fit`` can declare them all up front; label k of ``categories_[j]`` is code k, and
    the model equals scikit-learn's CategoricalNB on ``OrdinalEncoder`` codes of the frame (with
    ``min_categories`` for unused categories). A missing value -- NaN, None, pd.NA or NaT in a
    DataFrame, NaN or a negative code in an array -- is marginalised: it is skipped when counting
    and contributes nothing when predicting (the other features' likelihood is the marginal).
    ``P(x_j = k | c) = (N_cjk + alpha) / (N_cj + alpha K_j)`` with N_cj the weight of class c's
    observed values of feature j, which is scikit-learn's estimate on complete data (with alpha =
    0, a feature of which a class has no observed value, 0/0, is marginalised for that class).
    Unlike scikit-learn, a code never seen in training is a clear error (scikit-learn #16028
    raised an IndexError) or, with ``handle_unknown="ignore"``, marginalised.

    ``log_evidence_`` is the probability of the observed training values given their classes,
    each P(x_j | c) integrated out under its Dirichlet prior: per class and feature, ``sum_k
    [lgamma(N_cjk + alpha) - lgamma(alpha)] - [lgamma(N_cj + K_j alpha) - lgamma(K_j alpha)]``
    (missing values are left out; weighted samples count as their weights). Needs alpha > 0.

    The posterior of each class's P(x_j | c) is Dirichlet(N_cjk + alpha), and the features of
    one sample are independent given the class, so the posterior predictive probability of a
    sample is the product of the posterior means, (N_cjk + alpha) / (N_cj + K_j alpha): exactly
    the plug-in estimate (the Dirichlet-multinomial of one draw). ``predictive=True`` therefore
    scores as the plug-in does. ``sample_posterior`` draws each P(x_j | c) from that Dirichlet
    (gammas); a drawn model (alpha=0) holds the probabilities times N_cj (times the class's
    weight for a feature the class never observed) in ``category_count_``.

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

    def __init__(self, alpha: float | str = 1.0, *, force_alpha: bool = True, fit_prior: bool = True,
                 class_prior: ArrayLike | None = None,
                 min_categories: int | ArrayLike | None = None, handle_unknown: str = "error",
                 predictive: bool = False, n_threads: int | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories
        self.handle_unknown = handle_unknown
        self.predictive = predictive
        self.n_threads = n_threads

    def _more_input_tags(self):
        return {"sparse": False, "allow_nan": True, "categorical": True}

    # ----------------------------------------------------------------- statistics
    def _fields(self, hyper):
        return (Field("class_count_", (CLASSES,)),
                Field("n_categories_", (FEATURES,), integer=True, upper=MAX_CATEGORIES),
                Field("category_count", (CLASSES, "categories")))

    def _more_dims(self, stats, hyper):
        return {"categories": int(stats["n_categories_"].sum())}

    def _agree(self, stats, hyper):
        # a class observes a feature at most as often as it has samples
        observed = _feature_sums(stats["category_count"], stats["n_categories_"])
        if observed.size:
            check_at_most(observed, stats["class_count_"][:, None],
                          "the statistic 'category_count' exceeds class_count_: a class cannot "
                          "observe a feature more often than it has samples")

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

    def _check_params(self, n_classes, X, fitted):
        alpha = check_alpha(self, None)  # a number: one smoothing for every category
        n_features = X.shape[1] if X is not None else fitted.n_features
        minimum = self._check_min_categories(n_features)
        categories = _categories(fitted)
        if categories:  # a column of labels has as many categories as labels, used or not
            minimum = np.zeros(n_features, np.intp) if minimum is None else minimum.copy()
            for j, labels in categories.items():
                minimum[j] = len(labels)
        return {"alpha": alpha if isinstance(alpha, str) else float(alpha),
                "predictive": check_predictive(self, alpha),
                "class_prior": check_class_prior(self, n_classes),
                "fit_prior": check_bool(self, "fit_prior"),
                "handle_unknown": check_handle_unknown(self),
                "min_categories": minimum}

    def _new_shell(self, X):
        """A DataFrame's categories: those of every column of labels."""
        if not is_frame(X):
            return None
        return Fitted(None, X.shape[1], None, None, None, None,
                      extra={"categories": learn_categories(X, range(X.shape[1]))})

    def _import_extra(self, extra, classes, n_features):
        if extra is None:
            return None
        if not isinstance(extra, dict) or set(extra) != {"categories"}:
            raise ValueError("CategoricalNB's structure must be None or give categories")
        return {"categories": check_categories(extra["categories"], n_features,
                                               set(range(n_features)))}

    def _merged_extra(self, a, b):
        if (a.extra is None) != (b.extra is None) or not same_categories(
                _categories(a), _categories(b)):
            raise ValueError("Cannot merge CategoricalNB models whose columns have different "
                             "categorical labels.")
        return a.extra

    def _check_min_categories(self, n_features):
        """min_categories as n_features intp values (None: none given)."""
        if self.min_categories is None:
            return None
        minimum = np.asarray(self.min_categories)
        allowed = f"None, an array-like or an int in the range [0, {MAX_CATEGORIES}]"
        if minimum.ndim == 0 and (minimum.dtype.kind not in "iu" or not
                                  0 <= minimum <= MAX_CATEGORIES):
            raise invalid_parameter(self, "min_categories", allowed)
        if minimum.dtype.kind not in "iu":
            raise InvalidParameterError(f"'min_categories' should have integral type. Got "
                                        f"{minimum.dtype} instead.")
        if minimum.ndim == 1 and minimum.shape != (n_features,) or minimum.ndim > 1:
            raise InvalidParameterError(f"'min_categories' should have shape ({n_features},) "
                                        f"when an array-like is provided. Got {minimum.shape} "
                                        "instead.")
        if (minimum < 0).any() or (minimum > MAX_CATEGORIES).any():
            raise invalid_parameter(self, "min_categories", allowed)
        return np.broadcast_to(minimum.astype(np.intp), (n_features,))

    def _start(self, hyper, n_classes, X):
        return {"class_count_": np.zeros(n_classes),
                "n_categories_": np.zeros(X.shape[1], dtype=np.intp),
                "category_count": np.zeros((n_classes, 0))}

    def _add(self, stats, X, members, has_nan, hyper):
        largest = self._scan(X)
        if largest.max(initial=-1) >= MAX_CATEGORIES:
            j = int(np.argmax(largest))
            raise ValueError(f"Feature {j} has the category code {largest[j]}: more than "
                             f"{MAX_CATEGORIES} categories per feature is not supported (the "
                             "codes must be 0 .. K-1; encode the categories first).")
        n_categories = np.maximum(stats["n_categories_"], largest + 1)
        if hyper["min_categories"] is not None:
            n_categories = np.maximum(n_categories, hyper["min_categories"])
        n_categories = n_categories.astype(np.intp)
        count = _regrid(stats["category_count"], stats["n_categories_"], n_categories)
        batch = np.zeros_like(count)
        _counts.count_categorical(X, members.rows, members.classes, members.weights,
                                  _offsets(n_categories), batch, self._n_threads_for(X.size))
        return {"class_count_": stats["class_count_"] + members.class_weight(),
                "n_categories_": n_categories, "category_count": count + batch}

    def _combine(self, a, rows_a, b, rows_b, n_classes, hyper):
        n_categories = np.maximum(a["n_categories_"], b["n_categories_"])
        counts = [spread(_regrid(s["category_count"], s["n_categories_"], n_categories), rows,
                         n_classes) for s, rows in ((a, rows_a), (b, rows_b))]
        return {"class_count_": spread(a["class_count_"], rows_a, n_classes)
                + spread(b["class_count_"], rows_b, n_classes),
                "n_categories_": n_categories, "category_count": counts[0] + counts[1]}

    # ----------------------------------------------------------------- parameters
    def _derive(self, fitted):
        """Feature-major log table: row offsets[j] + k holds log P(x_j = k | c) for every c."""
        stats, hyper = fitted.stats, fitted.hyper
        n_categories = stats["n_categories_"]
        check_category_counts(_categories(fitted), n_categories)
        offsets = _offsets(n_categories)
        smoothed = stats["category_count"] + smoothing(self, fitted)
        nonempty = n_categories > 0
        totals = _feature_sums(smoothed, n_categories)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_prob = np.log(smoothed) - np.repeat(np.log(totals), n_categories[nonempty],
                                                    axis=1)
        # alpha = 0 and a class without an observed value of a feature (a class announced to
        # partial_fit but not seen yet, or all missing): 0/0, so the feature tells nothing about
        # the class, as a missing value tells nothing
        log_prob[np.repeat(totals == 0, n_categories[nonempty], axis=1)] = 0.0
        # ... but without smoothing a class without any weight has no distribution at all: it
        # produces nothing (P(x, c) = 0), as MultinomialNB's, rather than P(x | c) = 1 for every x
        if not smoothing(self, fitted) > 0:
            log_prob[stats["class_count_"] == 0] = -np.inf
        log_prob.flags.writeable = False
        return _CategoricalParams(np.ascontiguousarray(log_prob.T), log_prob, offsets,
                                  n_categories, class_log_prior(stats["class_count_"], hyper),
                                  hyper["handle_unknown"])

    def _log_prior_density(self, fitted):
        # each P(x_j | c) ~ Dirichlet(alpha + 1), whose mode the smoothed estimate is
        alpha = smoothing(self, fitted)
        return float(alpha * self._params_of(fitted).log_prob.sum()) if alpha > 0 else 0.0

    def _draw(self, fitted, rng):
        # P(x_j | c) ~ Dirichlet(N_cj. + alpha), held as the counts P(x_j = k | c) N_cj (the
        # class's weight where it never observed feature j: then the counts still say P)
        alpha = smoothing(self, fitted)
        require_proper(self, alpha, "sample_posterior")
        class_count = require_samples(self, fitted)
        stats = fitted.stats
        n_categories, count = stats["n_categories_"], stats["category_count"]
        nonempty = n_categories > 0
        starts = _offsets(n_categories)[:-1][nonempty]
        observed = _feature_sums(count, n_categories)
        scale = np.where(observed > 0, observed, class_count[:, None])
        theta = dirichlet_draws(count + alpha, rng, starts)
        return ({**stats, "category_count": theta * np.repeat(scale, n_categories[nonempty],
                                                               axis=1)},
                {"alpha": 0.0, "force_alpha": True})

    def _evidence_terms(self, fitted, alpha):
        # per class and feature, lgamma(a + N_cjk) - lgamma(a) summed over the categories k and
        # - [lgamma(K_j a + N_cj) - lgamma(K_j a)], N_cj the observed (not missing) values
        stats = fitted.stats
        n_categories, count = stats["n_categories_"], stats["category_count"]
        observed = _feature_sums(count, n_categories)
        return evidence_terms(count, alpha, observed, np.broadcast_to(
            alpha * n_categories[n_categories > 0], observed.shape))

    n_categories_ = statistic("n_categories_")
    categories_ = fitted_attribute(
        lambda model, fitted: {j: readonly(labels) for j, labels in _categories(fitted).items()},
        "dict: index of a DataFrame column of labels -> its labels, in code order.")
    class_log_prior_ = parameter("log_prior", "ndarray of shape (n_classes,): log P(c).")
    category_count_ = fitted_attribute(
        lambda model, fitted: _per_feature(readonly(fitted.stats["category_count"]),
                                           _offsets(fitted.stats["n_categories_"])),
        "list of ndarray of shape (n_classes, n_categories_[j]): counts per feature.")
    feature_log_prob_ = parameter(
        lambda model, fitted: _per_feature(model._params_of(fitted).log_prob,
                                           model._params_of(fitted).offsets),
        "list of ndarray of shape (n_classes, n_categories_[j]): log P(x_j = k | c).")

    def _sample_X(self, fitted, y_idx, rng):
        """Codes drawn per feature from the class's category probabilities (inverse CDF)."""
        params = self._params_of(fitted)
        # (a feature that never had a value has no columns: it is drawn as missing, NaN)
        empty = (np.isneginf(params.log_prob).all(axis=1) & (params.log_prob.shape[1] > 0))[y_idx]
        if empty.any():
            raise ValueError(f"CategoricalNB.sample: class {fitted.classes[y_idx[empty][0]]!r} "
                             "has no training samples and no smoothing (alpha = 0), so it has "
                             "no distribution to draw from.")
        X = np.empty((len(y_idx), fitted.n_features))
        for j, log_prob in enumerate(_per_feature(params.log_prob, params.offsets)):
            if not log_prob.shape[1]:
                X[:, j] = np.nan
                continue
            cdf = np.cumsum(np.exp(log_prob), axis=1)
            u = rng.random(len(y_idx)) * cdf[y_idx, -1]
            X[:, j] = (u[:, None] >= cdf[y_idx]).sum(axis=1)
        return sampled_frame(X, fitted)

    def _score(self, params, X, kind, out, has_nan):
        failed, unknown, fractional = _jll.jll_categorical(
            X, params.offsets, params.table, params.log_prior, kind, out,
            self._n_threads_for(X.size * out.shape[1]))
        if fractional or (unknown and params.handle_unknown == "error"):
            largest = self._scan(X)  # raises for fractional codes; names the unknown feature
            unknown = np.flatnonzero(largest >= params.n_categories)
            if not len(unknown):  # (another thread wrote the code the kernel read, and back)
                _checks.raise_x_changed()
            j = unknown[0]
            raise ValueError(
                f"Feature {j} has a category ({largest[j]}) not seen in training (it has "
                f"{params.n_categories[j]} categories). Use handle_unknown='ignore' to "
                "marginalise unknown categories, or min_categories to reserve them."
            )
        if failed:
            raise MemoryError("could not allocate the scoring kernel's row buffers")


def _categories(fitted):
    """A CategoricalNB snapshot's categories (none unless fitted on a DataFrame)."""
    return {} if fitted is None or fitted.extra is None else fitted.extra["categories"]


def _per_feature(table, offsets):
    return [table[:, a:b] for a, b in zip(offsets[:-1], offsets[1:])]
