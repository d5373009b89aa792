"""Reading a pandas DataFrame whose columns hold labels (text, categories, booleans) or numbers.

A model that takes labels (``CategoricalNB``, ``MixedNB``) learns each label column's categories
when it is first fitted (``learn_categories``) and keeps them in its fitted state (and so in its
files). Every later call reads a DataFrame through a ``FrameReader`` built once per fitted
snapshot from those categories and memoised with it: one float64 matrix, labels replaced by their
codes, missing values (NaN, None, pd.NA, NaT) by NaN.

A single-row call must stay within a few tens of microseconds, where pandas' public per-column
access (``X.iloc[:, j]``, a Series each: 7 us) and ``X.to_numpy(object)`` (100 us for adult's 14
columns) are too slow: the columns are read as the arrays pandas holds them in (its blocks,
``X._mgr.blocks``: 2 us for all 14), and a small frame's labels are looked up in a dict, a large
one's factorized first, so that each distinct label is looked up once (5x faster than
``Index.get_indexer`` on 10,000 rows; on one row, 7x slower than the dict).
"""
from __future__ import annotations

import numpy as np

# Rows up to which labels are looked up one by one (above: factorized first); the two cost
# the same near 600 rows of adult (8 text columns: 0.6 ms).
SMALL_FRAME = 512

# infer_dtype's answers for an object column that holds numbers (and missing values) only
_NUMBER_KINDS = frozenset({"integer", "floating", "mixed-integer-float", "decimal", "boolean",
                           "empty"})


# type -> whether it is a pandas DataFrame (asked once per type: a single-row call asks often)
_FRAME_TYPES: dict = {}


def is_frame(X):
    """Whether X is a pandas DataFrame (or a subclass): what this module reads. Other
    DataFrame-like types (polars, ...) are read as the arrays they convert to."""
    kind = type(X)
    found = _FRAME_TYPES.get(kind)
    if found is None:  # (asked of the type, without importing pandas)
        found = _FRAME_TYPES[kind] = any(
            cls.__name__ == "DataFrame" and cls.__module__.split(".")[0] == "pandas"
            for cls in kind.__mro__)
    return found


def holds_labels(dtype):
    """Whether a column of this dtype holds labels: anything but numbers, and booleans."""
    if isinstance(dtype, np.dtype):
        return dtype.kind not in "iuf"
    # a pandas extension dtype says it (what pandas.api.types.is_numeric_dtype and
    # is_bool_dtype read, 1.5 us each)
    return not dtype._is_numeric or dtype._is_boolean


def holds_numbers(dtype):
    """Whether a column of this dtype holds numbers or booleans (as 0 and 1): of NumPy's, or a
    pandas extension dtype that says so (nullable Int64, Float64, boolean; Arrow's, whose
    booleans pandas.api.types.is_numeric_dtype does not count)."""
    if isinstance(dtype, np.dtype):
        return dtype.kind in "biuf"
    return bool(dtype._is_numeric or dtype._is_boolean)


def learn_categories(X, columns):
    """{j: categories} for the columns ``j`` of the DataFrame X that hold labels: the sorted
    distinct labels seen, or every category of a pandas CategoricalDtype (used or not, so that
    batches streamed through partial_fit can declare them all up front)."""
    import pandas as pd

    categories = {}
    for j in columns:
        column = X.iloc[:, j]
        if isinstance(column.dtype, pd.CategoricalDtype):
            categories[j] = np.asarray(column.dtype.categories)
        elif holds_labels(column.dtype):
            try:
                categories[j] = np.asarray(pd.Categorical(column.dropna()).categories)
            except (TypeError, ValueError, NotImplementedError):  # (Arrow's lists: its own)
                raise ValueError(f"Column {X.columns[j]!r} holds values that are no labels "
                                 f"(dtype {column.dtype}): labels are strings, finite numbers "
                                 "and booleans.") from None
        if j in categories and categories[j].dtype.kind == "O":  # NumPy's scalars as Python's
            categories[j] = np.array([v.item() if isinstance(v, np.generic) else v
                                      for v in categories[j].tolist()], dtype=object)
        if j in categories and not _json_scalars(categories[j]):
            raise ValueError(f"Column {X.columns[j]!r} holds labels other than strings, "
                             "finite numbers and booleans (a model file could not hold them); "
                             "convert them to strings.")
    return categories


def _json_scalars(labels):
    """Whether ``labels`` is a 1-D array of distinct strings, finite numbers or booleans
    (distinct as dict keys are: 1, 1.0 and True are one label)."""
    if not isinstance(labels, np.ndarray) or labels.ndim != 1:
        return False
    if labels.dtype.kind == "O":
        if not all(isinstance(v, (str, bool, int, float)) for v in labels.tolist()):
            return False
    elif labels.dtype.kind not in "biufU":
        return False
    values = labels.tolist()
    return all(v == v and v not in (np.inf, -np.inf) for v in values) and \
        len(set(values)) == len(values)


def check_categories(categories, n_features, label_columns):
    """A model file's categories: a dict from the indices of columns that may hold labels
    (``label_columns``, a set) to arrays of distinct JSON scalars."""
    if not isinstance(categories, dict) or any(
            isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < n_features
            or j not in label_columns or not _json_scalars(labels)
            for j, labels in categories.items()):
        raise ValueError("categories must map columns of labels to arrays of distinct strings, "
                         "numbers or booleans")
    return dict(categories)


def check_category_counts(categories, n_categories):
    """Each label column's number of categories (``n_categories[j]``) is its number of labels:
    its codes index them."""
    for j, labels in categories.items():
        if n_categories[j] != len(labels):
            raise ValueError(f"column {j} has {len(labels)} categorical labels but "
                             f"{n_categories[j]} categories")


def same_categories(a, b):
    """Whether two categories dicts name the same labels for the same columns."""
    return a.keys() == b.keys() and all(
        a[j].dtype.kind == b[j].dtype.kind and np.array_equal(a[j], b[j]) for j in a)


def sampled_frame(X, fitted):
    """Values drawn by ``sample`` as the fitted DataFrame held them, or X itself for a model
    fitted on an array: a DataFrame with the fitted column names (by position, where they were
    not all strings; repeated names kept), a column of labels as a pandas Categorical of the
    model's labels (so that the model reads it back whatever the labels' kind; a NaN code, a
    feature that never had a value, is missing)."""
    categories = (fitted.extra or {}).get("categories") or {}
    if fitted.feature_names is None and not categories:
        return X
    import pandas as pd  # fitted on a DataFrame, so pandas is there

    columns = {}
    for j in range(X.shape[1]):
        if j in categories:
            codes = np.where(np.isnan(X[:, j]), -1, X[:, j]).astype(np.intp)
            columns[j] = pd.Categorical.from_codes(codes, categories=categories[j])
        else:
            columns[j] = X[:, j]
    frame = pd.DataFrame(columns)
    if fitted.feature_names is not None:
        frame.columns = list(fitted.feature_names)
    return frame


class FrameReader:
    """Reads a DataFrame whose columns have been checked against the fitted names: the label
    columns (``categories``: column index -> labels) as codes, the others as numbers."""

    __slots__ = ("codes", "positions", "strings")

    def __init__(self, categories, positions=None):
        import pandas as pd  # (a DataFrame is read, so pandas is there)

        self.codes = {j: {label: code for code, label in enumerate(labels.tolist())}
                      for j, labels in categories.items()}
        # the matrix column of each column of X, if not its own
        self.positions = None if positions is None else positions.tolist()
        # pandas' str columns, whose labels a small frame reads most cheaply through Arrow
        self.strings = getattr(pd.arrays, "ArrowStringArray", None)

    def read(self, X, handle_unknown, learning=False):
        """X as a float64 matrix. An unknown label is an error, or missing with
        ``handle_unknown="ignore"``; when ``learning`` (a batch added to a fitted model), it is
        always an error."""
        n_rows, n_columns = X.shape  # (the caller checks the number of columns)
        positions = self.positions if self.positions is not None and \
            len(self.positions) == n_columns else range(n_columns)
        columns_out = [None] * n_columns
        small = n_rows <= SMALL_FRAME
        for j, column in _columns(X):
            codes = self.codes.get(j)
            if codes is None:
                read = column if type(column) is np.ndarray and column.dtype.kind in "biuf" \
                    else _numbers(column, X, j)
            elif small and type(column) is self.strings:  # (0.6 us, not 2.5: one row's call
                # reads 8 of them in adult)
                read = [codes.get(label, -1) for label in column.__arrow_array__().to_pylist()]
                if -1 in read:  # missing or unknown
                    read = _codes(column, n_rows, codes, X, j, handle_unknown, learning)
            elif holds_labels(column.dtype):
                read = _codes(column, n_rows, codes, X, j, handle_unknown, learning)
            else:  # numbers where labels are expected: only missing values will do
                read = _numbers(column, X, j)
                if not np.isnan(read).all():
                    raise ValueError(f"Column {X.columns[j]!r} holds numbers (dtype "
                                     f"{column.dtype}) where the model takes labels.")
            columns_out[positions[j]] = read
        return np.array(columns_out, dtype=np.float64).reshape(n_columns, n_rows).T


def _columns(X):
    """(index, values) of each column of X, as pandas holds them: a NumPy array or an extension
    array. Read from pandas' blocks (a 2-D array for the columns of one NumPy dtype, an
    extension array for each other column): private, but 2 us for adult's 14 columns, where
    ``X.iloc[:, j]`` builds a Series, 7 us each. A frame without them (another pandas, a
    DataFrame-like type) is read the public way."""
    try:
        blocks = X._mgr.blocks
    except AttributeError:
        return [(j, X.iloc[:, j].values) for j in range(X.shape[1])]
    columns = []
    for block in blocks:
        values, locations = block.values, block.mgr_locs.as_array.tolist()
        if values.ndim == 1:
            columns.append((locations[0], values))
        else:
            columns.extend(zip(locations, values))
    return columns


def frame_numbers(X):
    """A DataFrame as an array for the models of numbers (check_X): as pandas gives it where
    every column is of a NumPy dtype; of float64, pandas' NA a NaN (a missing value), where
    they hold numbers of a nullable or Arrow dtype (Int64, Float64, boolean, ...), as
    ``_numbers`` reads such a column; else of objects, pandas' NA a NaN (refused, or converted,
    by the checks that follow)."""
    dtypes = list(X.dtypes)
    if all(isinstance(d, np.dtype) for d in dtypes):
        return X.to_numpy()
    if all(map(holds_numbers, dtypes)):
        return X.to_numpy(dtype=np.float64, na_value=np.nan)
    # other extension columns: pandas' NA a NaN, as in a number column (an Arrow dictionary's),
    # each on its own (pandas 3.1's DataFrame.to_numpy raises IndexError for an Arrow timestamp
    # column beside others); the NumPy columns in one block
    values = np.empty(X.shape, dtype=object)
    extension = [j for j, d in enumerate(dtypes) if not isinstance(d, np.dtype)]
    plain = [j for j, d in enumerate(dtypes) if isinstance(d, np.dtype)]
    values[:, plain] = X.iloc[:, plain].to_numpy(dtype=object)
    for j in extension:
        values[:, j] = X.iloc[:, j].to_numpy(dtype=object, na_value=np.nan)
    return values


def _numbers(values, X, j):
    """Column j of X, which must hold numbers, as float64 (missing values NaN)."""
    import pandas as pd

    dtype = values.dtype
    if isinstance(values, np.ndarray) and dtype.kind in "biuf":
        return values
    if dtype.kind == "O" and isinstance(values, np.ndarray):
        missing = pd.isna(values)
        if pd.api.types.infer_dtype(values, skipna=True) in _NUMBER_KINDS:
            try:
                return np.where(missing, np.nan, values).astype(np.float64)
            except (TypeError, ValueError):
                pass
    elif not isinstance(values, np.ndarray) and holds_numbers(dtype):
        # nullable Int64, Float64, boolean, Arrow numbers and booleans
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    raise ValueError(f"Column {X.columns[j]!r} holds labels or other non-numbers (dtype "
                     f"{dtype}) where the model takes numbers; declare it 'categorical' in "
                     "MixedNB's feature_types, or pass numbers.")


def _codes(values, n_rows, codes, X, j, handle_unknown, learning):
    """Column j of X, which holds labels, as codes (float64 or a list of ints): NaN for a
    missing value (and an ignored unknown)."""
    import pandas as pd

    try:
        if n_rows <= SMALL_FRAME:
            labels = values.tolist() if isinstance(values, np.ndarray) else \
                values.to_numpy(dtype=object).tolist()
            found = [codes.get(label, -1) for label in labels]
            if -1 not in found:
                return found
            found = np.array(found, dtype=np.float64)
            unknown = [i for i in np.flatnonzero(found < 0) if not pd.isna(labels[i])]
        else:  # each distinct label looked up once
            index, distinct = pd.factorize(values)  # -1: missing
            table = np.array([codes.get(label, -1) for label in distinct.tolist()] + [-1],
                             dtype=np.float64)
            found = table[index]
            unknown = np.flatnonzero((found < 0) & (index >= 0))
    except TypeError:  # a list, a dict, ...
        raise ValueError(f"Column {X.columns[j]!r} holds a value that cannot be a label "
                         "(it is not hashable).") from None
    if len(unknown):
        label, name = values[unknown[0]], X.columns[j]
        if learning:
            raise ValueError(f"Column {name!r} has a label not among the categories learned "
                             f"from the first batch ({label!r}); declare every category up "
                             "front with a pandas CategoricalDtype (its categories are "
                             "learned whether or not they occur).")
        if handle_unknown == "error":
            raise ValueError(f"Column {name!r} has a value not seen in training ({label!r}); "
                             "use handle_unknown='ignore' to marginalise it.")
    found[found < 0] = np.nan
    return found


def same_columns(X, fitted):
    """Whether the DataFrame X has exactly the snapshot's feature names, in order (the fast
    check of every call; anything else goes through the full check and its messages)."""
    names = fitted.memo.get("feature_index")
    if names is None:
        import pandas as pd

        names = fitted.memo.setdefault("feature_index", pd.Index(fitted.feature_names))
    return X.columns.equals(names)


class LabelColumns:
    """For the models that take DataFrame columns of labels (their snapshots' ``extra`` holds
    ``"categories"``, learned by ``learn_categories``, and ``hyper`` their handle_unknown)."""

    def _read_frame(self, X, fitted, learning):
        if not is_frame(X) or fitted.extra is None:  # (CategoricalNB fitted on an array)
            return X
        # a new fit's shell learned its categories from this X: no label is unknown
        handle_unknown = "error" if fitted.hyper is None else fitted.hyper["handle_unknown"]
        reader = fitted.memo.get("frame_reader")
        if reader is None:  # once per snapshot: its categories never change (a race builds
            # two equal readers)
            reader = fitted.memo.setdefault("frame_reader", FrameReader(
                fitted.extra["categories"], self._positions(fitted)))
        return reader.read(X, handle_unknown, learning)

    def _positions(self, fitted):
        """The matrix column of each DataFrame column (an intp array), or None: its own."""
        return None
