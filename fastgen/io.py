"""Out-of-core training data: batches streamed from svmlight/libsvm and CSV files.

Each reader yields ``(X, y)`` batches of at most ``batch_size`` rows and never holds more than one
batch, so a file of any size trains a model through ``partial_fit`` in memory bounded by the batch
size::

    model = fastgen.MultinomialNB()
    for X, y in fastgen.io.iter_svmlight("train.svm", n_features=130_000):
        model.partial_fit(X, y, classes=[0, 1])

A malformed line is a ``ValueError`` naming the file and the line, like ``train.svm:17: ...``.
svmlight files are parsed by a compiled kernel (``fastgen/_core/_svmlight.pyx``), and a
gzip-compressed file is read through gzip.
"""
from __future__ import annotations

import codecs
import gzip
import math
import os
import zlib
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from . import _input
from ._core import _svmlight
from ._validation import int_in

__all__ = ["iter_csv", "iter_svmlight", "scan_csv", "scan_svmlight"]

BATCH_SIZE = 65_536
# The largest column index a file may use: n_features = 1 + the largest index must be an int64.
MAX_INDEX = 2**63 - 2
# svmlight files are read in chunks of this many bytes (tests make it tiny, so lines straddle chunks).
CHUNK_SIZE = 1 << 20
_INITIAL_CAPACITY = 1 << 16  # entries a batch's arrays hold before they grow


def _error(path, line_no, message):
    return ValueError(f"{os.fspath(path)}:{line_no}: {message}")


def _check_batch_size(batch_size):
    """batch_size as a plain positive int (converted before it is compared)."""
    plain = int_in(batch_size, 1)
    if plain is None:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return plain


def _check_flag(name, value):
    """A True/False option as a bool; anything else (scikit-learn's zero_based="auto", a
    header="false") is a TypeError, not its truth value."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


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


def _svmlight_batches(path, zero_based, batch_size, n_features, dtype, store):
    """(X arrays, labels, largest column so far) for each batch of at most ``batch_size`` rows:
    X arrays ``(indptr, indices, data)`` when ``store``, else None (a scan).

    The file is read in chunks of ``CHUNK_SIZE`` bytes (more while a line is longer) and parsed
    by the kernel; the incomplete line at a chunk's end is carried over to the next chunk. Rows
    and entries go into arrays that double when full (up to ``batch_size`` rows) and are copied
    out, tight, with each batch."""
    zero_based = _check_flag("zero_based", zero_based)
    index_dtype = np.int32 if n_features < 2**31 else np.int64
    capacity = _INITIAL_CAPACITY if store else 1
    indices, data = np.empty(capacity, dtype=index_dtype), np.empty(capacity, dtype=dtype)
    labels = np.empty(min(batch_size, _INITIAL_CAPACITY), dtype=np.float64)
    indptr = np.zeros(labels.size + 1, dtype=np.int64)
    state = np.zeros(_svmlight.N_STATE, dtype=np.int64)
    state[_svmlight.LARGEST] = -1
    block, final, started = b"", False, False
    with _input.open_binary(path) as f:
        while True:
            status = _svmlight.parse_svmlight(block, final, zero_based, n_features, store, indptr,
                                              indices, data, labels, state)
            if status == _svmlight.NEED_MORE and not final:
                carry = block[state[_svmlight.POS]:]
                chunk = _read(path, f, max(CHUNK_SIZE, len(carry)), state[_svmlight.LINE])
                if not started:  # a byte-order mark first (Windows tools write one) is
                    # skipped, as a CSV file's is
                    chunk, started = chunk.removeprefix(codecs.BOM_UTF8), True
                block, final, state[_svmlight.POS] = carry + chunk, not chunk, 0
            elif status == _svmlight.NEED_SPACE:
                indices, data = (np.concatenate([a, np.empty_like(a)]) for a in (indices, data))
            elif status == _svmlight.BATCH_FULL and labels.size < batch_size:
                more = min(labels.size, batch_size - labels.size)
                labels, indptr = (np.concatenate([a, np.empty(more, a.dtype)]) for a in (labels, indptr))
            elif status in (_svmlight.NEED_MORE, _svmlight.BATCH_FULL):
                rows, nnz = state[_svmlight.ROWS], state[_svmlight.NNZ]
                if rows:
                    batch_index = np.int32 if max(nnz, n_features) < 2**31 else np.int64
                    arrays = (indptr[:rows + 1].astype(batch_index),
                              indices[:nnz].astype(batch_index), data[:nnz].copy()) if store else None
                    yield arrays, _labels(labels[:rows]), int(state[_svmlight.LARGEST])
                if status == _svmlight.NEED_MORE:
                    return
                state[_svmlight.ROWS] = state[_svmlight.NNZ] = 0
            else:
                raise _svmlight_error(path, status, block, state, zero_based, n_features)


def _read(path, f, size, line_no):
    """The next bytes of f; a damaged gzip stream is a ValueError naming the file."""
    try:
        return f.read(size)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise ValueError(f"{os.fspath(path)}: damaged gzip data after line {line_no}: "
                         f"{exc}") from None


def _labels(values):
    """svmlight labels (finite: the kernel refuses others): ints when all are integral (as int64
    holds them), else floats."""
    if (values == np.round(values)).all() and (np.abs(values) < 2.0**63).all():
        return values.astype(np.int64)
    return values.copy()


_MESSAGES = {
    _svmlight.BAD_LABEL: "label {token!r} is not a finite number",
    _svmlight.BAD_PAIR: "{token!r} is not index:value",
    _svmlight.BELOW_BASE: "index {key} is below {offset} ({base}-based indices)",
    _svmlight.TOO_LARGE: "index {key} is too large (at most {largest})",
    _svmlight.NOT_INCREASING: "index {key} is not in increasing order",
    _svmlight.NOT_FINITE: "value {value!r} is not finite",
    _svmlight.BEYOND: "index {key} is beyond n_features={n_features}",
}


def _svmlight_error(path, status, block, state, zero_based, n_features):
    """The ValueError for the kernel's status: the file, the line and the offending token."""
    line_no, start, end = (int(state[k]) for k in (_svmlight.LINE, _svmlight.ERR_START,
                                                   _svmlight.ERR_END))
    if status == _svmlight.NOT_UTF8:
        return ValueError(f"{os.fspath(path)}: not UTF-8 text on line {line_no} "
                          f"(byte {block[start:end]!r})")
    token = block[start:end].decode("utf-8")
    key, _, value = token.partition(":")
    message = _MESSAGES[status]
    if status == _svmlight.NOT_FINITE and math.isfinite(float(value)):
        message = "value {value!r} is beyond the float32 range"
    return _error(path, line_no, message.format(
        token=token, key=int(key) if status == _svmlight.BEYOND else key, value=value,
        offset=0 if zero_based else 1, base="zero" if zero_based else "one",
        largest=MAX_INDEX + (0 if zero_based else 1), n_features=n_features))


def scan_svmlight(path: str | os.PathLike,
                  zero_based: bool = False) -> tuple[int, int, np.ndarray]:
    """One streaming pass over an svmlight file: its rows, columns (1 + the largest index) and
    distinct labels, what ``iter_svmlight`` and ``partial_fit`` need to know in advance.

    Parameters
    ----------
    path : str or path-like
        The file; a gzip-compressed one is read through gzip.
    zero_based : bool, default=False
        Whether column indices start at 0 (libsvm's start at 1).

    Returns
    -------
    n_rows : int
    n_features : int
    classes : ndarray
        The sorted distinct labels.
    """
    n_rows, classes = 0, np.empty(0)
    batches = _svmlight_batches(path, zero_based, BATCH_SIZE, MAX_INDEX + 1, np.float64,
                                store=False)
    largest = -1
    for _, y, largest in batches:
        n_rows += len(y)
        classes = np.union1d(classes, y)
    return n_rows, largest + 1, _labels(classes)


def iter_svmlight(path: str | os.PathLike, n_features: int | None = None, *,
                  batch_size: int = BATCH_SIZE, zero_based: bool = False,
                  dtype=np.float64) -> Iterator[tuple[sp.csr_matrix, np.ndarray]]:
    """Stream an svmlight/libsvm file as ``(X, y)`` batches: X a CSR matrix of
    ``batch_size`` rows at most, y its labels.

    Parameters
    ----------
    path : str or path-like
        Lines ``label index:value index:value ...`` (``qid:`` pairs and ``#`` comments ignored),
        UTF-8 (a byte-order mark first is skipped); a gzip-compressed one is read through gzip.
    n_features : int, default=None
        Columns of every batch. None reads the file once first to find them
        (``scan_svmlight``), so that it must be a file; with n_features it may be a pipe.
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
        Integers when every label of the batch is integral, else floats.

    Notes
    -----
    Values are exactly Python's ``float(value)`` (rounded once more to float32 with
    ``dtype=np.float32``), labels ``float(label)``, indices ``int(index)``, whatever the C locale:
    a compiled parser converts the usual decimal numbers exactly (W. D. Clinger, "How to read
    floating point numbers accurately", PLDI 1990) and hands any other token to Python. Tokens
    are separated as ``str.split`` separates them, Unicode whitespace included; bytes that are
    not UTF-8 are an error naming the line.
    """
    batch_size = _check_batch_size(batch_size)
    dtype = _check_dtype(dtype)
    if n_features is None:
        _input.check_rereadable(path, "without n_features it is read twice (a scan for them, "
                                      "then the rows)")
        n_features = scan_svmlight(path, zero_based)[1]
    else:
        plain = int_in(n_features, 0, MAX_INDEX + 1)
        if plain is None:
            raise ValueError(f"n_features must be an int in [0, 2**63 - 1], got "
                             f"{n_features!r}")
        n_features = plain
    for (indptr, indices, data), y, _ in _svmlight_batches(path, zero_based, batch_size,
                                                            n_features, dtype, store=True):
        yield sp.csr_matrix((data, indices, indptr), shape=(len(y), n_features)), y


def _csv_schema(path, label_column, header, delimiter, batch_size):
    """The columns of a CSV file of numbers, with label_column as the label."""
    if isinstance(label_column, bool) or not isinstance(label_column, (int, str)):
        raise TypeError(f"label_column must be an int or a column name, got {label_column!r}")
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"delimiter must be one character, got {delimiter!r}")
    _input.check_file(path)
    options = _input.Options("csv", delimiter, _check_flag("header", header), None, None, None,
                             (), (), ())
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
    batch_size = _check_batch_size(batch_size)
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
