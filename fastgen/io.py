"""Out-of-core training data: batches streamed from svmlight/libsvm and CSV files.

Each reader yields ``(X, y)`` batches of at most ``batch_size`` rows and never holds more than one
batch, so a file of any size trains a model through ``partial_fit`` in memory bounded by the batch
size::

    model = fastgen.MultinomialNB()
    for X, y in fastgen.io.iter_svmlight("train.svm", n_features=130_000):
        model.partial_fit(X, y, classes=[0, 1])

A malformed line is a ``ValueError`` naming the file and the line, like ``train.svm:17: ...``.
"""
from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

__all__ = ["iter_csv", "iter_svmlight", "scan_csv", "scan_svmlight"]

BATCH_SIZE = 65_536
# The largest column index a file may use: n_features = 1 + the largest index must be an int64.
MAX_INDEX = 2**63 - 2


def _error(path, line_no, message):
    return ValueError(f"{os.fspath(path)}:{line_no}: {message}")


def _check_batch_size(batch_size):
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")


def _check_dtype(dtype):
    """The values' type: float32 or float64 (a missing CSV field is NaN; a fraction must not be
    truncated)."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be float32 or float64, got {dtype!r}") from None
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


def _as_label(text):
    """A label as a number when it reads as one (int when integral), else the text."""
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() else value


def _label(text, path, line_no):
    """An svmlight label: a number."""
    value = _as_label(text)
    if isinstance(value, str):
        raise _error(path, line_no, f"label {text!r} is not a number")
    return value


def _text_lines(path, f):
    """The numbered lines of a text file opened as UTF-8; bytes that are not UTF-8 are a
    ValueError naming the file and the last line read whole (text is decoded in blocks)."""
    line_no = 0
    try:
        for line_no, line in enumerate(f, start=1):
            yield line_no, line
    except UnicodeDecodeError as exc:
        raise ValueError(f"{os.fspath(path)}: not UTF-8 text after line {line_no} ({exc.reason}, "
                         f"byte {exc.object[exc.start:exc.start + 1]!r})") from None


def _svmlight_rows(path, zero_based):
    """(line number, label, [(column, value), ...]) for each data line; comments and blank
    lines skipped."""
    offset = 0 if zero_based else 1
    with open(path, encoding="utf-8") as f:
        for line_no, line in _text_lines(path, f):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            tokens = line.split()
            label = _label(tokens[0], path, line_no)
            pairs = []
            previous = -1
            for token in tokens[1:]:
                key, sep, value = token.partition(":")
                if not sep:
                    raise _error(path, line_no, f"{token!r} is not index:value")
                if key == "qid":
                    continue
                try:
                    column, x = int(key) - offset, float(value)
                except ValueError:
                    raise _error(path, line_no, f"{token!r} is not index:value") from None
                if column < 0:
                    raise _error(path, line_no, f"index {key} is below "
                                 f"{offset} ({'zero' if zero_based else 'one'}-based indices)")
                if column > MAX_INDEX:
                    raise _error(path, line_no, f"index {key} is too large (at most "
                                 f"{MAX_INDEX + offset})")
                if column <= previous:
                    raise _error(path, line_no, f"index {key} is not in increasing order")
                if not math.isfinite(x):
                    raise _error(path, line_no, f"value {value!r} is not finite")
                pairs.append((column, x))
                previous = column
            yield line_no, label, pairs


def scan_svmlight(path: str | os.PathLike,
                  zero_based: bool = False) -> tuple[int, int, np.ndarray]:
    """One streaming pass over an svmlight file: its rows, columns (1 + the largest index) and
    distinct labels, what ``iter_svmlight`` and ``partial_fit`` need to know in advance.

    Parameters
    ----------
    path : str or path-like
        The file.
    zero_based : bool, default=False
        Whether column indices start at 0 (libsvm's start at 1).

    Returns
    -------
    n_rows : int
    n_features : int
    classes : ndarray
        The sorted distinct labels.
    """
    largest, n_rows, labels = -1, 0, set()
    for _, label, pairs in _svmlight_rows(path, zero_based):
        n_rows += 1
        labels.add(label)
        if pairs:
            largest = max(largest, pairs[-1][0])
    return n_rows, largest + 1, np.array(sorted(labels))


def iter_svmlight(path: str | os.PathLike, n_features: int | None = None, *,
                  batch_size: int = BATCH_SIZE, zero_based: bool = False,
                  dtype=np.float64) -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
    """Stream an svmlight/libsvm file as ``(X, y)`` batches: X a CSR matrix of
    ``batch_size`` rows at most, y its labels.

    Parameters
    ----------
    path : str or path-like
        Lines ``label index:value index:value ...`` (``qid:`` pairs and ``#`` comments ignored).
    n_features : int, default=None
        Columns of every batch. None reads the file once first to find them
        (``scan_svmlight``).
    batch_size : int, default=65536
        Rows per batch: the memory bound.
    zero_based : bool, default=False
        Whether column indices start at 0.
    dtype : {np.float64, np.float32}, default=np.float64
        Type of the values.

    Yields
    ------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
    y : ndarray of shape (n_rows,)
    """
    _check_batch_size(batch_size)
    dtype = _check_dtype(dtype)
    if n_features is None:
        n_features = scan_svmlight(path, zero_based)[1]
    elif (not isinstance(n_features, int) or isinstance(n_features, bool)
          or not 0 <= n_features <= MAX_INDEX + 1):
        raise ValueError(f"n_features must be an int in [0, 2**63 - 1], got {n_features!r}")
    rows = _svmlight_rows(path, zero_based)
    while True:
        batch = list(itertools.islice(rows, batch_size))
        if not batch:
            return
        indptr = np.zeros(len(batch) + 1, dtype=np.int64)
        np.cumsum([len(pairs) for _, _, pairs in batch], out=indptr[1:])
        indices = np.fromiter((c for _, _, pairs in batch for c, _ in pairs), dtype=np.int64,
                              count=int(indptr[-1]))
        too_wide = np.flatnonzero(indices >= n_features)
        if too_wide.size:
            row = int(np.searchsorted(indptr, too_wide[0], side="right")) - 1
            raise _error(path, batch[row][0], f"index {indices[too_wide[0]] + (0 if zero_based else 1)}"
                         f" is beyond n_features={n_features}")
        data = np.fromiter((x for _, _, pairs in batch for _, x in pairs), dtype=dtype,
                           count=int(indptr[-1]))
        index_dtype = np.int32 if max(indptr[-1], n_features) < 2**31 else np.int64
        X = sp.csr_matrix((data, indices.astype(index_dtype), indptr.astype(index_dtype)),
                          shape=(len(batch), n_features))
        yield X, np.array([label for _, label, _ in batch])


def _csv_schema(path, label_column, header, delimiter, batch_size):
    """The columns of a CSV file of numbers, with label_column as the label."""
    from . import _input

    if isinstance(label_column, bool) or not isinstance(label_column, (int, str)):
        raise TypeError(f"label_column must be an int or a column name, got {label_column!r}")
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"delimiter must be one character, got {delimiter!r}")
    _input.check_file(path)
    options = _input.Options("csv", delimiter, bool(header), None, None, None, (), (), ())
    schema = _input.plain_schema(path, options, batch_size)
    columns = schema.columns
    if isinstance(label_column, str):
        if label_column not in columns:
            raise ValueError(f"{os.fspath(path)}: no column named {label_column!r}")
        label = label_column
    elif -len(columns) <= label_column < len(columns):
        label = columns[label_column]
    else:
        raise ValueError(f"{os.fspath(path)}: label_column={label_column} is outside the "
                         f"{len(columns)} columns")
    return schema._replace(label=label, features=tuple(c for c in columns if c != label),
                           ignored=())


def iter_csv(path: str | os.PathLike, *, label_column: int | str = -1, header: bool = True,
             delimiter: str = ",", batch_size: int = BATCH_SIZE,
             dtype=np.float64) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream a CSV file of numbers as ``(X, y)`` batches; an empty field is a missing value
    (NaN), which fastgen's models marginalise. The file is read by pandas (an optional
    dependency: ``pip install "fastgen[cli]"``) and may be gzip-compressed.

    Parameters
    ----------
    path : str or path-like
        The file.
    label_column : int or str, default=-1
        The column of the labels: a position (from 0; negative counts from the end) or, with a
        header, a name. Labels that read as numbers become numbers (an int when integral);
        otherwise they stay text (a file mixing both is an error naming the line).
    header : bool, default=True
        Whether the first line names the columns.
    delimiter : str, default=","
        The field separator.
    batch_size : int, default=65536
        Rows per batch: the memory bound.
    dtype : {np.float64, np.float32}, default=np.float64
        Type of X.

    Yields
    ------
    X : ndarray of shape (n_rows, n_columns - 1)
    y : ndarray of shape (n_rows,)
    """
    from . import _input

    _check_batch_size(batch_size)
    dtype = _check_dtype(dtype)
    schema = _csv_schema(path, label_column, header, delimiter, batch_size)
    unlabelled = _input.Unlabelled()
    for X, y, _ in _input.batches(path, schema, batch_size, unlabelled=unlabelled):
        if unlabelled:
            break
        yield X.to_numpy(dtype=dtype), y
    if unlabelled:
        raise ValueError(f"{os.fspath(path)}:{unlabelled.first}: the label is missing")


def scan_csv(path: str | os.PathLike, *, label_column: int | str = -1, header: bool = True,
             delimiter: str = ",") -> tuple[int, int, np.ndarray]:
    """One streaming pass over a CSV file: its rows, feature columns and distinct labels (as
    ``iter_csv`` reads them), what ``partial_fit`` needs to know in advance.

    Parameters
    ----------
    path, label_column, header, delimiter
        As for ``iter_csv``.

    Returns
    -------
    n_rows : int
    n_features : int
    classes : ndarray
        The sorted distinct labels.
    """
    n_rows, n_features, labels = 0, 0, set()
    for X, y in iter_csv(path, label_column=label_column, header=header, delimiter=delimiter):
        n_rows += X.shape[0]
        n_features = X.shape[1]
        labels.update(y.tolist())
    return n_rows, n_features, np.array(sorted(labels))
