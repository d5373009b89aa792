"""Input validation: the one boundary between users' data and the unchecked kernels.

Every public method of every estimator passes X, y and sample_weight through here before a kernel
sees them. The checks a kernel relies on (CSR structure, dtype, contiguity, finiteness, sign) are done
in one pass by ``fastgen._core._checks``; everything else is a handful of attribute tests, so a
single-row call stays cheap.
"""
from __future__ import annotations

import decimal
import math
import numbers
import operator
import os
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from ._core import _counts
from ._core import checks as _checks
from ._core._openmp import effective_n_threads
from ._frame import frame_numbers, is_frame

CsrStatus, ValuesStatus = _checks.CsrStatus, _checks.ValuesStatus


class NotFittedError(ValueError, AttributeError):
    """Raised when an estimator is used before it is fitted (same bases as scikit-learn's)."""


class InvalidParameterError(ValueError, TypeError):
    """Raised when a hyperparameter has the wrong type or is out of range, also for the data's
    shape (priors for another number of classes, an alpha per feature of another length): an
    error of the parameters, which the command line reports as one of --param, never as one of
    the lines it was reading. Same bases as scikit-learn's: ``except ValueError`` and ``except
    TypeError`` both catch it."""


def invalid_parameter(estimator, name, allowed):
    """The error for ``estimator``'s hyperparameter ``name`` (its current value) outside
    ``allowed``, in scikit-learn's words: "The 'alpha' parameter of MultinomialNB must be a
    float in the range [0.0, 1e+100]. Got -1 instead." """
    return InvalidParameterError(f"The {name!r} parameter of {type(estimator).__name__} must be "
                                 f"{allowed}. Got {short_repr(getattr(estimator, name))} instead.")


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel():
    """The ``stacklevel`` of a warning raised in fastgen that points at the first frame outside
    it: the user's line, however deep in fastgen the warning is raised (a fixed number pointed
    into fastgen from some methods and not others)."""
    frame, level = sys._getframe(), 0
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def check_n_threads(estimator):
    """``estimator.n_threads`` resolved (``effective_n_threads``); an InvalidParameterError if
    it is not None or a non-zero int (the compiled check raises a plain TypeError or
    ValueError, which a caller could not tell from an error of the data)."""
    try:
        return effective_n_threads(estimator.n_threads)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(str(exc)) from None


def short_repr(value, limit=80):
    """repr of a user's value for an error message: shortened, and never the value's own error
    (a hostile __repr__ must not hide the real one)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def plain_choice(value, options):
    """``value`` as the exact str among ``options`` that it is, else None. A subclass of str
    counts as its characters only if it also compares (==, !=) and hashes as they do against
    every option: what reads the parameter later compares it again, and its methods may say
    anything (an __eq__ always true passed as every option)."""
    if not isinstance(value, str):
        return None
    plain = str.__str__(value)  # the characters (a subclass's own __str__ is not called)
    if plain not in options:
        return None
    if type(value) is not str:
        try:
            if hash(value) != hash(plain) or any(
                    bool(value == o) != (plain == o) or bool(value != o) != (plain != o)
                    for o in options):
                return None
        except Exception:  # noqa: BLE001 -- a comparison that raises is no answer either
            return None
    return plain


def exact_int(value):
    """An Integral (not bool) as an exact int, else None: converted by ``operator.index`` and
    ``int.__int__``, so that a subclass's own operators (a comparison that lies) are not used."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        return None
    try:
        value = operator.index(value)
    except TypeError:
        return None
    return int.__int__(value)


def int_in(value, low, high=None):
    """``value`` as an exact int (``exact_int``) if it is one in [low, high] (high None: no
    bound), else None. Converted before it is compared."""
    number = exact_int(value)
    if number is None or number < low or (high is not None and number > high):
        return None
    return number


def real_in(value, low, high, *, above=False):
    """``value`` as a float if it is a real number (not a bool) in [low, high] (``above``: in
    (low, high]), else None. Converted before it is compared, and a conversion that fails is
    out of range: an int beyond float64 (10**400) is not an OverflowError, a complex number is
    not its real part, a float32 beside a float64 bound casts no warning, NaN is in no range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    try:
        number = float(value)
    except (OverflowError, TypeError, ValueError):
        return None
    return number if (low < number if above else low <= number) and number <= high else None


def check_bool(estimator, name):
    """A boolean hyperparameter as a bool (a string such as "False" is an error, not true)."""
    value = getattr(estimator, name)
    if not isinstance(value, (bool, np.bool_)):
        raise invalid_parameter(estimator, name,
                                "an instance of 'bool' or an instance of 'numpy.bool'")
    return bool(value)


class DataConversionWarning(UserWarning):
    """Warning raised when input is implicitly converted (same name as scikit-learn's)."""


class ConvergenceWarning(UserWarning):
    """Warning raised when an iterative fit (EM) stops before converging (same name as
    scikit-learn's)."""


FLOAT32 = np.dtype(np.float32)
FLOAT_DTYPES = (FLOAT32, np.dtype(np.float64))
INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))

_CSR_MESSAGES = {
    CsrStatus.CSR_BAD_START: "CSR indptr[0] must be 0",
    CsrStatus.CSR_NOT_MONOTONE: "CSR indptr must be non-decreasing",
    CsrStatus.CSR_BAD_END: "CSR indptr[-1] exceeds the number of stored entries (len(indices))",
    CsrStatus.CSR_BAD_INDEX: "CSR column indices must be in [0, n_features)",
}


def _not_fitted_error_class():
    """NotFittedError, also a subclass of scikit-learn's when scikit-learn is loaded (so that
    ``except sklearn.exceptions.NotFittedError`` works) -- without ever importing it ourselves."""
    sk_exceptions = sys.modules.get("sklearn.exceptions")
    if sk_exceptions is None:
        return NotFittedError
    global _SklearnNotFittedError
    if _SklearnNotFittedError is None:
        _SklearnNotFittedError = type("NotFittedError", (NotFittedError, sk_exceptions.NotFittedError),
                                      {"__module__": __name__})
    return _SklearnNotFittedError


_SklearnNotFittedError = None


def check_is_fitted(estimator) -> None:
    """Raise NotFittedError unless ``estimator`` has been fitted."""
    if not estimator.__sklearn_is_fitted__():
        raise _not_fitted_error_class()(
            f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
            "appropriate arguments before using this estimator."
        )


def get_feature_names(X):
    """Column names of a DataFrame-like X as an object array of str, or None (sklearn's rule)."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "dtypes") or sp.issparse(X):
        return None
    names = np.asarray(list(columns), dtype=object)
    if len(names) == 0:
        return None
    types = sorted({type(v).__qualname__ for v in names})
    if len(types) > 1 and "str" in types:
        raise TypeError(
            "Feature names are only supported if all input features have string names, but your "
            f"input has {types} as feature name / column name types. Convert them all to strings "
            "(X.columns = X.columns.astype(str)) or to a non-string type."
        )
    return names if types == ["str"] else None


# int32/int64 values (counts) are read as they are by the kernels; nothing else is.
KERNEL_INT_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _target_dtype(dtype, requested, accept_int=True):
    """The dtype the kernels get: int32/int64 kept, floats as ``requested`` (the model's dtype
    when predicting) or kept if float32/float64, anything else float64."""
    if dtype in KERNEL_INT_DTYPES and accept_int:
        return dtype
    if requested is not None:
        return np.dtype(requested)
    return dtype if dtype in FLOAT_DTYPES else np.dtype(np.float64)


def _raise_for_values(status, estimator_name, dtype, max_abs=np.inf, domain=None):
    if status == ValuesStatus.VALUES_NAN:
        raise ValueError(f"Input X contains NaN.\n{estimator_name} does not accept missing "
                         "values encoded as NaN natively.")
    if status == ValuesStatus.VALUES_INF:
        raise ValueError(f"Input X contains infinity or a value too large for {dtype!r}."
                         + (" A model fitted on float32 data takes values within the float32 "
                            "range (3.4e38)." if dtype == FLOAT32 else ""))
    if domain is not None and status in (ValuesStatus.VALUES_NEGATIVE,
                                         ValuesStatus.VALUES_TOO_LARGE):
        raise ValueError(f"{estimator_name} takes values of X in {domain}; X has a value "
                         "outside.")
    if status == ValuesStatus.VALUES_NEGATIVE:
        raise ValueError(f"Negative values in data passed to {estimator_name} (input X).")
    if status == ValuesStatus.VALUES_TOO_LARGE:
        raise ValueError(f"Input X has a value beyond {max_abs:.3g} in magnitude, which "
                         f"{estimator_name}'s likelihood would overflow; rescale X.")


# The most features (and classes) a model may have: an index of the kernels' int32 CSR.
MAX_FEATURES = 2**31 - 1


def _check_min_shape(shape, estimator_name):
    if shape[0] < 1:
        raise ValueError(
            f"Found array with {shape[0]} sample(s) (shape={shape}) while a minimum of 1 is "
            f"required by {estimator_name}."
        )
    if shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required by "
            f"{estimator_name}."
        )
    if shape[1] > MAX_FEATURES:
        raise ValueError(f"Found array with {shape[1]} features: {estimator_name} takes at most "
                         f"{MAX_FEATURES}.")


def check_X(X, *, estimator_name, dtype=None, allow_nan=False, allow_negative=True,
            accept_sparse=True, accept_int=True, max_abs=np.inf, domain=None):
    """Validate X for the kernels.

    Returns a CSR matrix/array (int32 or int64 indices and indptr of one dtype; contiguous arrays;
    valid structure) or a C-contiguous 2-D ndarray (never the caller's array object: at least a
    view of it, whose shape another thread cannot set), with values of one of the kernels' dtypes:
    int32/int64 counts stay as they are (no copy), floats become ``dtype`` if given (prediction
    uses the model's) and otherwise stay float32/float64, anything else becomes float64. Values
    must be finite (NaN only if ``allow_nan``) and non-negative unless ``allow_negative``.
    A sparse X that stores a column twice in a row comes back as a copy with those entries summed
    (the matrix scipy means: every model that is not linear in the values -- the predictive
    MultinomialNB, PoissonNB's log x!, a binarizing BernoulliNB -- must see the sums), before
    the values are checked; whether any row might is known from the structure check's pass, so
    X is only searched for repeats when some row's columns are not strictly increasing. Returns
    ``(X, has_nan)``: whether (allowed) NaN occurs, found by the same pass as the other checks
    of the values. Models whose
    kernels take dense floats only pass ``accept_sparse=False`` (a sparse X is a TypeError) and
    ``accept_int=False`` (integers become float64). ``domain`` describes the values that
    ``allow_negative`` and ``max_abs`` admit, for the error message, when they are a model's
    domain rather than a bound against overflow.
    """
    if sp.issparse(X):
        if not accept_sparse:
            raise TypeError(
                "Sparse data was passed for X, but dense data is required. Use '.toarray()' to "
                f"convert to a dense numpy array. {estimator_name} does not accept sparse input."
            )
        X, unsorted = _check_sparse(X, dtype, accept_int)
        if unsorted:  # the values checked are the matrix's: the sums
            X = _summed_duplicates(X)
        values = X.data[: X.indptr[-1]]
    else:
        given = X
        X = _check_dense(X, dtype, accept_int, estimator_name)
        if X is given:  # the caller's array: a view of it, whose shape no other thread can set
            X = X.view()
        values = X.reshape(-1)
    _check_min_shape(X.shape, estimator_name)
    status = _checks.values_status(values, allow_nan, allow_negative, max_abs)
    _raise_for_values(status, estimator_name, values.dtype, max_abs, domain)
    return X, status == ValuesStatus.VALUES_OK_WITH_NAN


def _to_csr(X):
    """Convert another sparse format to CSR after checking its structure: scipy's converters
    trust the index arrays, and out-of-range indices crash them (or corrupt memory). The check
    and the conversion read a private copy, which another thread cannot rewrite in between."""
    n_rows, n_cols = X.shape
    if X.format in ("csc", "coo"):
        X = X.copy()
    if X.format == "csc":
        indices, indptr = np.asarray(X.indices), np.asarray(X.indptr)
        if indptr.ndim != 1 or indptr.shape[0] != n_cols + 1 or indices.shape[0] != X.data.shape[0] \
                or indices.dtype != indptr.dtype or indptr.dtype not in INDEX_DTYPES:
            raise ValueError("Invalid sparse input: the CSC arrays are inconsistent.")
        status = _checks.csr_structure_status(np.ascontiguousarray(indices),
                                              np.ascontiguousarray(indptr), n_rows)
        if status != CsrStatus.CSR_OK:
            message = _CSR_MESSAGES[status].replace("CSR", "CSC").replace(
                "column indices must be in [0, n_features)", "row indices must be in [0, n_samples)")
            raise ValueError(f"Invalid sparse input: {message}.")
    elif X.format == "coo":
        row, col = np.asarray(X.row), np.asarray(X.col)
        if row.shape != col.shape or row.shape != X.data.shape or row.ndim != 1:
            raise ValueError("Invalid sparse input: the COO arrays differ in length.")
        if row.size and (row.min() < 0 or row.max() >= n_rows or col.min() < 0
                         or col.max() >= n_cols):
            raise ValueError("Invalid sparse input: COO indices out of range.")
    else:  # other formats go through COO, whose arrays are then checked
        return _to_csr(X.tocoo())
    return X.tocsr()


def _check_sparse(X, dtype, accept_int):
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D sparse matrix, got {X.ndim}D instead.")
    if X.format != "csr":
        X = _to_csr(X)
    if X.dtype.kind == "c":
        raise ValueError("Complex data not supported")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"Sparse X must have a numeric dtype, got {X.dtype}.")
    target = _target_dtype(X.dtype, dtype, accept_int)
    data, indices, indptr, shape = X.data, X.indices, X.indptr, X.shape  # each read once
    if indptr.ndim != 1 or indptr.shape[0] != shape[0] + 1:
        raise ValueError(
            f"CSR indptr has {indptr.shape[0]} entries, expected n_samples + 1 = {shape[0] + 1}"
        )
    if data.ndim != 1 or indices.ndim != 1:
        raise ValueError(f"CSR data and indices must be 1-D, got {data.ndim}-D and "
                         f"{indices.ndim}-D arrays.")
    if indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":  # (not truncated)
        raise ValueError(f"CSR indices and indptr must be integers, got {indices.dtype} and "
                         f"{indptr.dtype}.")
    if indices.dtype != indptr.dtype or indptr.dtype not in INDEX_DTYPES:
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
    if data.shape[0] != indices.shape[0]:
        raise ValueError(
            f"CSR data and indices differ in length ({data.shape[0]} != {indices.shape[0]})"
        )
    indices, indptr = np.ascontiguousarray(indices), np.ascontiguousarray(indptr)
    data = _converted(data, target)
    status = _checks.csr_structure_status(indices, indptr, shape[1], True)
    if status not in (CsrStatus.CSR_OK, CsrStatus.CSR_OK_UNSORTED):
        raise ValueError(f"Invalid sparse input: {_CSR_MESSAGES[status]}.")
    return _pinned_csr(X, data, indices, indptr, shape), status == CsrStatus.CSR_OK_UNSORTED


def _pinned_csr(X, data, indices, indptr, shape):
    """A CSR object of X's class over the checked arrays and shape, made in O(1): another thread
    that sets the caller's X.shape or X.indices afterwards does not reach it (the dense path's
    view does the same). scipy's constructor is not used: it takes microseconds and would turn
    int64 indices that fit int32 into a copy."""
    state = X.__dict__.copy()
    state.pop("_has_canonical_format", None)  # (about the caller's arrays)
    state.pop("_has_sorted_indices", None)
    state["data"], state["indices"], state["indptr"], state["_shape"] = data, indices, indptr, shape
    pinned = type(X).__new__(type(X))
    pinned.__dict__ = state
    return pinned


def _summed_duplicates(X):
    """X, or a copy with each column that a row stores twice summed into one entry. Called for a
    validated X some of whose rows' columns do not strictly increase (only then can a column
    repeat); scipy's cached canonical-format flag is not trusted, it goes stale when the arrays
    are edited."""
    found = _checks.csr_has_duplicates(X.indices, X.indptr, X.shape[1])
    if found < 0:
        raise MemoryError("could not allocate the duplicate check's column markers")
    if not found:
        return X
    if X.dtype.kind not in "iu":
        X = X.copy()
    else:  # integers are summed in int64 (int32's sums would wrap around), or in float64 where
        # a row's entries could reach 2^63 together: a sum beyond a model's bound is then
        # refused by the check of the values
        row_max = np.diff(X.indptr).max(initial=0)
        top = float(np.abs(X.data[: X.indptr[-1]]).max(initial=0))
        X = X.astype(np.int64 if top * row_max < 2.0**62 else np.float64)
    rechecked(X).sum_duplicates()
    return X


def rechecked(X):
    """X, a private copy of a validated CSR matrix, with its structure checked again: the copy
    may hold what another thread wrote to the original after its check, and scipy's C++
    routines (sum_duplicates, fancy indexing), unlike fastgen's kernels, trust the index
    arrays. A copy that fails the check is fastgen's ValueError that X changed."""
    status = _checks.csr_structure_status(X.indices, X.indptr, X.shape[1], False)
    if status not in (CsrStatus.CSR_OK, CsrStatus.CSR_OK_UNSORTED):
        _checks.raise_x_changed()
    return X


def check_unchanged(X, has_nan, *, allow_nan=False, allow_negative=True, max_abs=np.inf,
                    **_):
    """A validated X (``check_X``'s, which found NaN if ``has_nan``) whose values are checked
    again, for a caller that reads it more than once (EM): a value another thread wrote since,
    out of the range ``check_X`` was given, is fastgen's ValueError that X changed. The other
    keywords (a model's ``_X_constraints``) are not about values."""
    values = X.data[: X.indptr[-1]] if sp.issparse(X) else X.reshape(-1)
    status = _checks.values_status(values, allow_nan and has_nan, allow_negative, max_abs)
    if status not in (ValuesStatus.VALUES_OK, ValuesStatus.VALUES_OK_WITH_NAN):
        _checks.raise_x_changed()


def _check_dense(X, dtype, accept_int, estimator_name):
    columns = None
    if is_frame(X):  # DataFrame: ask for a numeric array
        columns, X = X.columns, frame_numbers(X)
    X = np.asarray(X)
    kind = X.dtype.kind
    if kind == "c":
        raise ValueError("Complex data not supported")
    if kind in "USV":
        raise ValueError("dtype='numeric' is not compatible with arrays of bytes/strings. "
                         f"Convert your data to numeric values explicitly instead (X has dtype "
                         f"{X.dtype}).")
    if kind in "mM":
        raise TypeError(f"X must be numeric; got an array of dtype {X.dtype}.")
    if X.ndim != 2:
        if X.ndim < 2:
            raise ValueError(
                f"Expected 2D array, got {X.ndim}D array instead:\narray={X}.\n"
                "Reshape your data either using array.reshape(-1, 1) if your data has a single "
                "feature or array.reshape(1, -1) if it contains a single sample."
            )
        raise ValueError(f"Found array with dim {X.ndim}, while dim <= 2 is required by "
                         f"{estimator_name}.")
    target = _target_dtype(X.dtype, dtype, accept_int)
    try:  # (an object array converts element-wise: a non-number raises numpy's TypeError or
        # ValueError, an int beyond float64 OverflowError)
        return _converted(X, target)
    except (TypeError, ValueError, OverflowError) as numpy_error:
        if kind != "O":
            raise
        # (NumPy's type, a string's a ValueError, and the value's words, which scikit-learn's
        # checks read)
        error = TypeError if isinstance(numpy_error, TypeError) else ValueError
        for (i, j), value in np.ndenumerate(X):
            try:
                float(value)
            except (TypeError, ValueError, OverflowError) as exc:
                column = j if columns is None else short_repr(columns[j])
                raise error(f"X must be numeric; row {i}, column {column} holds "
                           f"{short_repr(value)}: {exc}") from None
        raise


def _converted(values, target):
    """``values`` as a C-contiguous array of dtype ``target``. Narrowed to float32 (a float32
    model's prediction), a value beyond its range becomes inf, refused with the other values,
    without NumPy's overflow warning (errstate costs microseconds: taken only then)."""
    if target is not FLOAT32 or values.dtype is FLOAT32:  # (builtin dtypes are singletons)
        return np.ascontiguousarray(values, dtype=target)
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(values, dtype=target)


def check_y(y, n_samples, estimator_name=None):
    """Validate classification targets: 1-D, one per sample, no NaN/inf, not continuous.
    Returns a private copy: what is checked is what the kernels that index with the labels'
    codes read, whatever another thread writes to the caller's array meanwhile."""
    if y is None:
        whose = f"{estimator_name} estimator" if estimator_name else "estimator"
        raise ValueError(f"This {whose} requires y to be passed, but the target y is None.")
    y = np.asarray(y).copy()  # (np.array(y) would ask a legacy __array__ for a copy: warned)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape "
            "of y to (n_samples, ), for example using ravel().",
            DataConversionWarning,
            stacklevel=user_stacklevel(),
        )
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    if y.shape[0] != n_samples:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n_samples}, "
            f"{y.shape[0]}]"
        )
    return check_label_values(y, "y")


# Labels in an object array are of these types, or of a type that NumPy, pandas or the standard
# library's datetime, decimal, fractions and uuid modules define (times, periods, intervals,
# UUIDs: ordered as values are); a subclass of str, bytes, int or float is read as its value of
# the plain type, and other types are refused. Sorting and looking up labels trusts their
# comparisons; encode_labels also checks that no code is beyond the classes, which the kernels
# index with.
_PLAIN_LABELS = frozenset((str, bytes, int, float, bool))
_LABEL_MODULES = frozenset(("numpy", "pandas", "datetime", "decimal", "fractions", "uuid"))
_CHECKED_AT_ONCE = frozenset((str, bytes, int, bool))  # none is missing, NaN or a subclass
_BASE_VALUE = ((str, str.__str__), (bytes, lambda v: bytes.__getitem__(v, slice(None))),
               (int, int.__int__), (float, float.__float__))
_VALUED = (float, np.floating, decimal.Decimal, np.datetime64, np.timedelta64)  # NaN, NaT


def _plain_kind(kind, name):
    """How labels of type ``kind`` are read: None (as they are) or the function giving their
    plain value; a ValueError for a type that is no label (a missing value among them)."""
    if kind is type(None) or kind.__name__ in ("NAType", "NaTType"):
        raise ValueError(f"Input {name} contains a missing label "
                         f"({'None' if kind is type(None) else kind.__name__[:-4]}).")
    if issubclass(kind, (complex, np.complexfloating)):
        raise ValueError(f"Complex data not supported in {name}")
    if kind in _PLAIN_LABELS or kind.__module__.partition(".")[0] in _LABEL_MODULES:
        return None
    for base, value in _BASE_VALUE:
        if issubclass(kind, base):
            return value
    raise ValueError(f"Unknown label type in {name}: {kind.__name__}. Labels are strings, "
                     "bytes, numbers, booleans, times or other values NumPy and pandas order.")


def check_label_values(labels, name):
    """``labels`` (a 1-D array) checked as class labels (``name`` says whose), and returned:
    refused are complex numbers, NaN and infinity (also Decimal's), missing values (None,
    pandas' NA, NaT), floats with a fractional part (continuous targets) and, in an object
    array, labels of other types than _PLAIN_LABELS and _LABEL_MODULES' (judged once a type);
    a subclass of str, bytes, int or float there is read as its plain value (in a copy)."""
    if labels.dtype.kind in "Mm" and np.isnat(labels).any():
        raise ValueError(f"Input {name} contains NaT (a missing label).")
    if labels.dtype.kind == "c":
        raise ValueError(f"Complex data not supported in {name}")
    if labels.dtype.kind == "f":
        if np.isnan(labels).any():
            raise ValueError(f"Input {name} contains NaN.")
        if np.isinf(labels).any():
            raise ValueError(f"Input {name} contains infinity.")
        if np.any(labels != np.round(labels)):
            raise ValueError("Unknown label type: continuous. Classification targets must be "
                             "discrete labels (integers, strings or other hashables).")
    elif labels.dtype.kind == "O":
        kinds = set(map(type, labels))
        if kinds <= _CHECKED_AT_ONCE:  # (the common case: one pass in C)
            return labels
        read = {kind: _plain_kind(kind, name) for kind in kinds}
        if any(read.values()):
            plain = np.empty(len(labels), dtype=object)
            plain[:] = [v if read[type(v)] is None else read[type(v)](v) for v in labels]
            labels, kinds = plain, set(map(type, plain))
        valued = tuple(kind for kind in kinds if issubclass(kind, _VALUED))
        for v in (labels if valued else ()):
            if not isinstance(v, valued):
                continue
            if isinstance(v, (np.datetime64, np.timedelta64)):
                if np.isnat(v):
                    raise ValueError(f"Input {name} contains a missing label ({v!r}).")
            elif not (v.is_finite() if isinstance(v, decimal.Decimal) else math.isfinite(v)):
                # (Decimal's own test: math.isfinite cannot convert a signalling NaN)
                raise ValueError(f"Input {name} contains NaN or infinity.")
    return labels


def label_codes(labels, classes):
    """(each label's index among the sorted ``classes``, which labels are not among them): the
    lookup of given labels (a ValueError where they do not compare with the classes)."""
    codes = sorted_labels(np.searchsorted, classes, labels)
    last = len(classes) - 1
    return codes, (codes > last) | (classes[np.minimum(codes, last)] != labels)


def label_repr(classes, i):
    """repr of class i as the caller wrote it ('b', 2), not as a NumPy scalar (np.str_('b'))."""
    return repr(classes[i:i + 1].tolist()[0])


def encode_labels(y):
    """``np.unique(y, return_inverse=True)`` for a validated 1-D y: the sorted distinct labels and
    each sample's index among them (intp), without NumPy's argsort of y, which is slow for labels
    with few distinct values (0.4 ms for 10,000 labels). Integers of a compact range are counted
    (linear time); anything else is sorted once and looked up."""
    classes, codes = _distinct(y)
    if codes is None:
        codes = np.searchsorted(classes, y).astype(np.intp, copy=False)
        # (labels whose comparisons are no order would give codes the kernels cannot index)
        if codes.size and not codes.max() < len(classes):
            raise ValueError("The labels do not compare as an order does (a label sorts after "
                             "every class found).")
    return classes, codes


def distinct_labels(y):
    """``np.unique(y)`` for a validated 1-D y, counted where encode_labels counts."""
    return _distinct(y)[0]


def _distinct(y):
    """(sorted distinct labels, each label's index among them when counted, else None)."""
    if y.dtype.kind in "iu" and y.size:
        y = np.ascontiguousarray(y, dtype=y.dtype.newbyteorder("="))
        classes, codes = np.empty_like(y), np.empty(y.size, dtype=np.intp)
        n_classes = _counts.encode_compact(y, classes, codes, 4 * y.size + 1024)
        if n_classes >= 0:
            return classes[:n_classes].copy(), codes
    return sorted_labels(np.unique, y), None


def sorted_labels(sort, *args):
    """``sort(*args)`` of labels, whose TypeError (labels that do not compare: strings beside
    numbers) is the labels' fault, said as a ValueError."""
    try:
        return sort(*args)
    except (TypeError, ArithmeticError):  # (Decimal('NaN') raises InvalidOperation)
        raise ValueError("Mix of label input types: the labels do not compare with each other "
                         "(strings beside numbers?).") from None


def check_sample_weight(sample_weight, n_samples):
    """Validate sample_weight: None (all ones), a number, or n_samples finite non-negative values,
    not all zero, none positive below the smallest normal float64. Returns a contiguous float64
    array of its own (what is checked is what is summed, whatever another thread writes to
    the caller's array meanwhile)."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    if isinstance(sample_weight, numbers.Number):
        if not isinstance(sample_weight, numbers.Real):  # (complex: not its real part)
            raise TypeError(f"sample_weight must be numeric, got {type(sample_weight).__name__}.")
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    else:
        sample_weight = np.asarray(sample_weight)
        if sample_weight.dtype.kind not in "biuf":
            raise TypeError(f"sample_weight must be numeric, got dtype {sample_weight.dtype}.")
        sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64).copy()
    if sample_weight.ndim != 1:
        raise ValueError(f"Sample weights must be 1D array or scalar, got {sample_weight.ndim}D "
                         f"array. Expected either a scalar value or a 1D array of length "
                         f"{n_samples}.")
    if sample_weight.shape != (n_samples,):
        raise ValueError(f"sample_weight.shape == {sample_weight.shape}, expected {(n_samples,)}!")
    if not np.isfinite(sample_weight).all():
        raise ValueError("Input sample_weight contains NaN." if np.isnan(sample_weight).any()
                         else "Input sample_weight contains infinity or a value too large for "
                         f"{sample_weight.dtype!r}.")
    if (sample_weight < 0).any():
        raise ValueError("Negative values in data passed to `sample_weight`.")
    if not sample_weight.any():
        raise ValueError("Sample weights must contain at least one non-zero number.")
    if ((sample_weight > 0) & (sample_weight < np.finfo(np.float64).tiny)).any():
        # a subnormal weight keeps a few bits: weighted sums and moments lose every digit
        raise ValueError("sample_weight has a value below 2.2e-308 (subnormal), too small for "
                         "float64 to weigh a sample with: set it to 0, or rescale the weights.")
    return sample_weight
