"""Data files as they come: CSV, TSV and whitespace-separated tables (read by pandas) and JSON lines,
with numbers, text, categories and missing-value tokens, optionally gzip-compressed.

Training learns the file's *schema* -- its columns, which one is the label, which ones the model
reads and in which order, which of those hold text, how the file is separated and how it spells a
missing value -- and the command line stores it in the model file. Scoring reads a file through
that schema: columns are found by name (in any order), a missing or unknown column is a one-line
error naming it, and a file without a header must have the training file's layout (with or without
the label column). So a file with other columns never gives a silently wrong answer.

pandas is needed here (an optional dependency, ``pip install "fastgen[cli]"``) and imported here
only, never at ``import fastgen``.
"""
from __future__ import annotations

import csv
import errno
import gzip
import io
import itertools
import json
import os
import re
import stat
import zlib
from typing import NamedTuple

import numpy as np

GZIP_MAGIC = b"\x1f\x8b"
# Distinct values a column of numbers keeps while a training file is scanned.
DISTINCT_NUMBERS = 100_000
# What a missing value looks like unless --na-values says otherwise (the UCI files write "?").
NA_VALUES = ("", "?", "NA", "N/A", "NaN", "nan", "null", "None")
DELIMITERS = {"tab": "\t", "whitespace": "whitespace"}
# Rows read before a file's header and columns are decided (more when the batch size is larger).
FIRST_ROWS = 1_000


class InputError(ValueError):
    """A problem with a data file, named in one line (the file, the row or column, the fix)."""


def _pandas():
    try:
        import pandas as pd
    except ImportError:
        raise InputError("reading CSV, TSV and JSON lines files needs pandas: "
                         "pip install \"fastgen[cli]\"") from None
    return pd


class Schema(NamedTuple):
    """How a data file is read and what the model takes from it (stored in the model file)."""

    format: str                  # "csv" (any delimiter) or "jsonl"
    delimiter: str               # "," ";" "\t" ... or "whitespace" (csv)
    header: bool                 # whether line 1 names the columns (csv)
    columns: tuple               # every column of the training file, in its order
    label: str | None            # the label column
    features: tuple              # the columns the model reads, in the model's order
    text: tuple                  # those of them read as text (categories, or the documents)
    na_values: tuple             # tokens that mean "missing"
    ignored: tuple               # columns left out at training (they may come back when scoring)
    documents: str | None        # a text model's column of documents (then features == (documents,))

    def to_json(self):
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in self._asdict().items()}

    @classmethod
    def from_json(cls, record):
        """The schema a model file describes, every field checked (files are hostile)."""
        if not isinstance(record, dict) or set(record) != set(cls._fields):
            raise ValueError(f"the input schema must have exactly the fields {cls._fields}")

        listed = ("columns", "features", "text", "na_values", "ignored")

        def strings(name, allow_none=False):
            value = record[name]
            if allow_none and value is None:
                return None
            if name in listed:
                if not isinstance(value, list):
                    raise ValueError(f"the input schema's {name!r} must be a list")
                if not all(type(v) is str for v in value):
                    raise ValueError(f"the input schema's {name!r} must hold column names")
                return tuple(value)
            if type(value) is not str:
                raise ValueError(f"the input schema's {name!r} must be a str")
            return value

        fields = {name: strings(name, allow_none=name in ("label", "documents"))
                  for name in cls._fields if name != "header"}
        if type(record["header"]) is not bool:
            raise ValueError("the input schema's 'header' must be a bool")
        schema = cls(header=record["header"], **fields)
        try:
            valid = schema.format in ("csv", "jsonl") and \
                delimiter(schema.delimiter) == schema.delimiter
        except InputError:
            valid = False
        if not valid:
            raise ValueError(f"the input schema's format/delimiter are not valid: "
                             f"{schema.format!r}, {schema.delimiter!r}")
        columns = set(schema.columns)
        if (len(columns) != len(schema.columns) or not schema.features
                or len(set(schema.features)) != len(schema.features)
                or not columns.issuperset(schema.features) or not set(schema.features) >= set(
                    schema.text) or not columns.issuperset(schema.ignored)
                or (schema.label is not None and (schema.label not in columns
                                                  or schema.label in schema.features))
                or (schema.documents is not None
                    and (schema.features, schema.text) != ((schema.documents,),) * 2)):
            raise ValueError("the input schema's columns, label, features and text do not agree")
        return schema


# -- opening files ---------------------------------------------------------------------------------

def check_file(path):
    """A readable file, or the OSError that says what it is instead."""
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "a directory, not a data file", os.fspath(path))
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "no such file", os.fspath(path))
    if not os.access(path, os.R_OK):
        raise PermissionError(errno.EACCES, "not readable (permission denied)", os.fspath(path))


def check_rereadable(path, why):
    """An InputError unless ``path`` is a regular file, for a reader that reads it twice (``why``
    says how): a pipe or a FIFO gives its data once (the second read would find nothing, or
    wait for a writer for ever)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise InputError(f"{path}: not a regular file (a pipe?), and {why}: save it to a file "
                         "first")


class _GzipOfFile(gzip.GzipFile):
    """A gzip stream over a file object that it closes with itself."""

    def __init__(self, raw):
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw

    def close(self):
        try:
            super().close()
        finally:
            self._raw.close()


def open_binary(path):
    """The file's bytes, gunzipped when it is gzip (told by its content, whatever its name).
    The file is opened once and its first bytes are looked at in the read buffer, not read
    away: a pipe (or /dev/stdin, or a FIFO) is read from its start, and a FIFO's writer is not
    waited for twice. ``path`` must be a path: an int would be a file descriptor of the caller's,
    which closing the file would close."""
    if isinstance(path, bool) or not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"a path (str or os.PathLike) is needed, not {type(path).__name__}")
    raw = open(path, "rb")
    try:
        if raw.peek(len(GZIP_MAGIC))[:len(GZIP_MAGIC)] == GZIP_MAGIC:
            return _GzipOfFile(raw)
    except BaseException:
        raw.close()
        raise
    return raw


def open_text(path):
    """The file as UTF-8 text, gunzipped when it is gzip."""
    # utf-8-sig: a byte-order mark that Windows tools write first is skipped (pandas does so too)
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", newline="")


def guess_format(path):
    """The format a file's name suggests (a .gz suffix looked through): "svmlight", "csv", "tsv"
    or "jsonl"."""
    name = os.fspath(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if name.endswith((".tsv", ".tab")):
        return "tsv"
    if name.endswith((".csv", ".data", ".txt", ".dat")):
        return "csv"
    return "svmlight"


# -- raw batches: every field as text, missing values as None --------------------------------------

def _decode_error(path, exc):
    return InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start} of a block; "
                      "convert the file to UTF-8, e.g. with iconv)")


def _csv_chunks(path, delimiter, batch_size):
    """DataFrames of str, columns 0, 1, ..., of at most batch_size rows. A row with more fields
    than the first is an error; one with fewer has its last fields empty (pandas reads it so),
    that is, missing."""
    pd = _pandas()
    # (blank lines are kept, as rows of empty fields that _named drops, so that a row's line
    # number is its line in the file)
    options = {"header": None, "dtype": str, "na_filter": False, "skip_blank_lines": False,
               "encoding": "utf-8", "chunksize": batch_size}
    if delimiter == "whitespace":
        options["sep"] = r"\s+"
    elif delimiter == "\t":
        # a tab-separated file of documents: quotes are text, not quoting
        options.update(sep="\t", quoting=csv.QUOTE_NONE)
    else:
        options.update(sep=delimiter, skipinitialspace=True)
    try:
        with open_binary(path) as f:  # (pandas given the path would open it again: a pipe)
            reader = pd.read_csv(f, **options)
            for chunk in reader:
                yield chunk
    except UnicodeDecodeError as exc:
        raise _decode_error(path, exc) from None
    except pd.errors.EmptyDataError:
        return
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise _damaged_gzip(path, exc) from None
    except pd.errors.ParserError as exc:
        message = str(exc).replace("Error tokenizing data. C error: ", "").strip()
        found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
        if found:
            expected, line, saw = found.groups()
            raise InputError(f"{path}:{line}: {saw} fields, expected {expected} (as line 1 has)"
                             f"{_delimiter_hint(delimiter)}") from None
        raise InputError(f"{path}: {message}{_delimiter_hint(delimiter)}") from None
    except (ValueError, csv.Error) as exc:
        raise InputError(f"{path}: {exc}") from None


def _damaged_gzip(path, exc):
    return InputError(f"{path}: a damaged gzip file ({exc})")


def _delimiter_hint(delimiter):
    name = {"\t": "tab", "whitespace": "whitespace"}.get(delimiter, repr(delimiter))
    return f"; the fields are separated by {name}: is that right? (--delimiter)"


def _json_value(value, path, line_no, key):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return repr(value)
    raise InputError(f"{path}:{line_no}: field {key!r} is a {type(value).__name__}, "
                     "not a number or a string")


def _one_value_per_key(pairs):
    """A JSON object as a dict; a key given twice is an error (which value would be meant?)."""
    record = dict(pairs)
    if len(record) != len(pairs):
        key = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
        raise ValueError(f"the key {key!r} appears twice")
    return record


def _jsonl_chunks(path, batch_size):
    """DataFrames of str (None where a record lacks a field) from a JSON lines file."""
    pd = _pandas()
    # each record's index is its line's place after the chunk's first line (blank lines
    # skipped): start + index is its line in the file, as for csv
    records, lines, first = [], [], 1
    with open_text(path) as f:
        line_no = 0
        try:
            for line_no, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line, object_pairs_hook=_one_value_per_key)
                except ValueError as exc:
                    raise InputError(f"{path}:{line_no}: not a JSON object ({exc})") from None
                except RecursionError:
                    raise InputError(f"{path}:{line_no}: a value nested too deeply") from None
                if not isinstance(record, dict):
                    raise InputError(f"{path}:{line_no}: not a JSON object "
                                     f"(a {type(record).__name__})")
                records.append({key: _json_value(value, path, line_no, key)
                                for key, value in record.items()})
                lines.append(line_no - first)
                if len(records) == batch_size:
                    yield first, pd.DataFrame(records, index=lines)
                    records, lines, first = [], [], line_no + 1
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text after line {line_no} ({exc.reason}; "
                             "convert the file to UTF-8)") from None
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise _damaged_gzip(path, exc) from None
    if records:
        yield first, pd.DataFrame(records, index=lines)


# -- column references -----------------------------------------------------------------------------

def resolve(ref, columns, what):
    """A column named by the user: its name, or its position counted from 1 (-1 is the last)."""
    if ref in columns:
        return ref
    try:
        position = int(ref)
    except ValueError:
        position = None
    if position is not None and position != 0 and -len(columns) <= position <= len(columns):
        return columns[position - 1 if position > 0 else position]
    listing = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
    raise InputError(f"{what} {ref!r}: no such column (columns: {listing}; or a position "
                     f"from 1 to {len(columns)})")


def _unique_names(fields):
    """Header fields as column names: stripped; a repeated name gets .1, .2, ... (as pandas
    does), skipping any suffix that names another column (a header "a.1,a,a" gives a.1, a,
    a.2); an empty one is named by its position."""
    given = [str(field).strip() or str(position) for position, field in enumerate(fields, 1)]
    reserved, suffix, names = set(given), {}, []
    for name in given:
        if name in suffix:  # a repeat
            while f"{name}.{suffix[name] + 1}" in reserved:
                suffix[name] += 1
            suffix[name] += 1
            name = f"{name}.{suffix[name]}"
            reserved.add(name)
        suffix.setdefault(name, 0)
        names.append(name)
    return names


def shown(value, limit=40):
    """A value from a file, quoted for a message and cut short."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 5] + "...'"


def _is_number(token):
    """Whether a field reads as a number (as pandas reads numbers)."""
    return bool(np.isfinite(_pandas().to_numeric(token, errors="coerce")))


# -- training: learn the schema --------------------------------------------------------------------

class Options(NamedTuple):
    """What the command line says about a file (None: not said)."""

    format: str
    delimiter: str | None
    header: bool | None
    label: str | None
    documents: str | None
    columns: tuple | None     # --columns: the features, in this order
    drop: tuple               # --drop
    categorical: tuple        # --categorical: numeric-looking columns read as text
    na_values: tuple | None


class Scan(NamedTuple):
    """What training learns from a pass over the file."""

    schema: Schema
    n_rows: int
    classes: np.ndarray
    categories: dict          # text feature -> its sorted values (not for documents)
    unlabelled: Unlabelled    # rows left out for want of a label


def delimiter(text):
    """The separator --delimiter names: one character (not a line break), 'tab' or
    'whitespace'. (pandas would take a longer one as a regular expression.)"""
    text = DELIMITERS.get(text, text)
    if text != "whitespace" and (len(text) != 1 or text in "\r\n"):
        raise InputError(f"--delimiter {text!r}: give one character, 'tab' or 'whitespace'")
    return text


def _csv_delimiter(options):
    if options.delimiter is not None:
        return delimiter(options.delimiter)
    return "\t" if options.format == "tsv" else ","


class _Layout(NamedTuple):
    schema: Schema            # text and categories not known yet
    head: list                # (line, DataFrame) chunks of the first data rows read
    rest: object              # the other chunks


def _layout(path, options, batch_size, need_label=True):
    """A file's columns (from its header, or by position: 1, 2, ...), label and features, from
    its first rows and the command line's options."""
    fmt = "jsonl" if options.format == "jsonl" else "csv"
    check_rereadable(path, "a table is read twice, its first rows for its columns and then all "
                           "of them")
    delimiter = _csv_delimiter(options) if fmt == "csv" else ","
    na_values = tuple(dict.fromkeys(("",) + tuple(
        NA_VALUES if options.na_values is None else options.na_values)))
    chunks = _raw_chunks(path, fmt, delimiter, batch_size)
    head, frame = _head(chunks)
    if frame.empty:
        raise InputError(f"{path}: no data rows")
    header = True
    if fmt == "jsonl":
        columns = [str(c) for c in frame.columns]
    else:
        _check_split(path, frame, delimiter)
        header = _decide_header(path, frame, options.header)
        if header:
            columns = _unique_names(frame.iloc[0].tolist())
            head = _without_header(head)
        else:
            columns = [str(j) for j in range(1, frame.shape[1] + 1)]
    listing = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
    if options.label is None and need_label:
        raise InputError(f"{path}: which column is the label? pass --label NAME or position "
                         f"(columns: {listing})")
    label = None if options.label is None else resolve(options.label, columns, "--label")
    drop = [resolve(ref, columns, "--drop") for ref in options.drop]
    if label is not None and label in drop:
        raise InputError(f"--drop {label!r}: it is the label column")
    documents = None
    if options.documents is not None:
        documents = resolve(options.documents, columns, "--text")
        features = [documents]
    elif options.columns is not None:
        features = [resolve(ref, columns, "--columns") for ref in options.columns]
        features = [c for c in features if c not in drop]
    else:
        features = [c for c in columns if c != label and c not in drop]
    if label in features:
        raise InputError(f"{label!r} is the label column; it cannot also be a feature")
    if not features:
        raise InputError(f"{path}: no feature columns left (columns: {listing}; label "
                         f"{label!r}, dropped: {', '.join(drop) or 'none'})")
    if len(set(features)) != len(features):
        raise InputError("--columns names a column twice")
    ignored = [c for c in columns if c != label and c not in features]
    schema = Schema(fmt, delimiter, header, tuple(columns), label, tuple(features), (),
                    na_values, tuple(ignored), documents)
    return _Layout(schema, head, chunks)


def scan(path, options, batch_size):
    """One pass over a training file: its layout (``_layout``), which features hold text, their
    categories and the classes."""
    layout = _layout(path, options, batch_size)
    schema = layout.schema
    na = set(schema.na_values)
    forced = {resolve(ref, schema.columns, "--categorical") for ref in options.categorical}
    numeric = {c: c not in forced for c in schema.features if c != schema.documents}
    # distinct values (a column's categories if it turns out to hold text); a column of numbers
    # stops keeping them past DISTINCT_NUMBERS, so that memory does not grow with the file
    values = {c: set() for c in numeric}
    counts = {c: [0, 0] for c in numeric}  # values that read as numbers, and that do not
    classes, n_rows, text_labels, unlabelled = set(), 0, None, Unlabelled()
    for start, chunk in _named(itertools.chain(layout.head, layout.rest), schema.columns,
                               schema.format, path):
        chunk, labels = _labelled(chunk, schema.label, path, start, na, text_labels, unlabelled)
        text_labels = isinstance(labels[0], str) if len(labels) else text_labels
        classes.update(labels.tolist())
        n_rows += len(chunk)
        for c in values:
            column, missing = _clean(chunk[c], na)
            present = column[~missing]
            words = int(_pandas().to_numeric(present, errors="coerce").isna().sum())
            counts[c][0] += len(present) - words
            counts[c][1] += words
            if values[c] is not None:
                values[c].update(present.tolist())
                if numeric[c] and not counts[c][1] and len(values[c]) > DISTINCT_NUMBERS:
                    values[c] = None
    if n_rows == 0:
        raise InputError(f"{path}: no rows with a label" if unlabelled else f"{path}: no data rows")
    for c, (numbers, words) in counts.items():
        if numeric[c] and words:
            numeric[c] = False
            if values[c] is None:
                raise InputError(
                    f"{path}: column {c!r} holds over {DISTINCT_NUMBERS:,} distinct numbers, then "
                    f"{words:,} values that are not: add them to --na-values if they mean a "
                    "missing value, or leave the column out with --drop")
            if numbers > words:  # mostly numbers: a few distinct words are likely missing values
                odd = sorted(v for v in values[c] if not _is_number(v))
                if len(odd) <= 3:
                    raise InputError(
                        f"{path}: column {c!r} holds numbers, and {words:,} values that are "
                        f"not: {', '.join(shown(v) for v in odd)}: if that means a missing value, "
                        f"add it to --na-values; to read the column as categories, pass "
                        f"--categorical {shown(c)}")
    text = [c for c in schema.features if c == schema.documents or not numeric[c]]
    categories = {c: np.array(sorted(values[c]), dtype=object)
                  for c in text if c != schema.documents}
    return Scan(schema._replace(text=tuple(text)), n_rows, _exact_labels(sorted(classes)),
                categories, unlabelled)


def plain_schema(path, options, batch_size, names=None):
    """The schema of a table of numbers read for a model trained elsewhere (from Python, or
    without a stored schema): the label only if the command line names it; ``names``: the
    model's feature names, the columns it reads."""
    schema = _layout(path, options, batch_size, need_label=False).schema
    if names is None:
        return schema
    missing = [name for name in names if name not in schema.columns]
    if missing:
        raise InputError(f"{path}: no column {missing[0]!r}, which the model reads (it was "
                         "fitted on a DataFrame with that column)" + (
                             "; this file has no header line" if not schema.header else ""))
    features = tuple(names)
    return schema._replace(features=features, ignored=tuple(
        c for c in schema.columns if c != schema.label and c not in features))


def _head(chunks):
    """The first (line, DataFrame) chunks, FIRST_ROWS rows of them when the file has as many,
    and a DataFrame of their rows: a file's header and columns are judged on as many rows
    whatever the batch size."""
    head, rows = [], 0
    while rows < FIRST_ROWS and (chunk := next(chunks, None)) is not None:
        head.append(chunk)
        rows += len(chunk[1])
    frames = [frame for _, frame in head]
    return head, (_pandas().concat(frames, ignore_index=True) if head else
                  _pandas().DataFrame())


def _without_header(head):
    """The head's chunks without the header line (the first row of the first)."""
    (_, frame), *rest = head
    return [(2, frame.iloc[1:])] + rest


def _check_split(path, frame, delimiter):
    """A file read as one column, whose first line holds another separator, is a wrong
    --delimiter rather than a one-column table."""
    if frame.shape[1] == 1 and delimiter not in ("\t", "whitespace") and len(frame):
        line = str(frame.iat[0, 0])
        sniffed = [d for d in (";", "\t", "|", ":", ",") if d in line and d != delimiter]
        if sniffed:
            found = "tab" if sniffed[0] == "\t" else repr(sniffed[0])
            raise InputError(f"{path}:1: one column when split at {delimiter!r}, but the line "
                             f"holds {found}: pass --delimiter {found}")


def _decide_header(path, frame, header):
    """Whether line 1 names the columns. Said on the command line, it is taken as said; else
    line 1 must look like a header: a field that is a number in a column of numbers, or a value
    that the column also holds further down, looks like data, and a line where half the fields
    or more look like data is refused rather than silently taken as names (a label and a
    document: the label is found further down, the document nowhere)."""
    if header is not None:
        return header
    if len(frame) < 2:
        return True
    first, rest = frame.iloc[0], frame.iloc[1:]
    data_like = []
    for j in range(frame.shape[1]):
        token = first.iat[j]
        column = rest.iloc[:, j].dropna()
        if token is None or (isinstance(token, float) and np.isnan(token)):
            continue
        numbers = _pandas().to_numeric(column, errors="coerce")
        numeric_column = bool(numbers.notna().mean() > 0.5) if len(column) else False
        if (numeric_column and _is_number(token)) or (not numeric_column
                                                       and (column == token).any()):
            data_like.append(j + 1)
    if 2 * len(data_like) >= frame.shape[1]:
        fields = ", ".join(str(j) for j in data_like[:6]) + (", ..." if len(data_like) > 6 else "")
        raise InputError(f"{path}:1: line 1 looks like data, not a header (fields {fields} are "
                         "numbers or values found further down): pass --no-header if the file "
                         "has no header line, or --header if it does")
    return True


def _raw_chunks(path, fmt, delimiter, batch_size):
    """(line of the first row, DataFrame of str) pairs."""
    if fmt == "jsonl":
        yield from _jsonl_chunks(path, batch_size)
        return
    line = 1
    for chunk in _csv_chunks(path, delimiter, batch_size):
        yield line, chunk
        line += len(chunk)


def _named(chunks, columns, fmt, path):
    """Chunks with the file's column names: csv by position (every chunk as wide as the first),
    JSON lines by key (a key the first records lacked is an error, so that no field is silently
    dropped; a key a record lacks is a missing value)."""
    for start, chunk in chunks:
        if not len(chunk):  # a first chunk of one line, the header
            continue
        if fmt == "jsonl":
            unknown = [c for c in chunk.columns if c not in columns]
            if unknown:
                raise InputError(f"{path}:{start}: field {unknown[0]!r} is not in the first "
                                 f"records (fields: {', '.join(columns[:12])})")
            chunk = chunk.reindex(columns=columns)  # (its index: each record's line - start)
        else:
            if list(chunk.columns) != list(columns):
                if chunk.shape[1] != len(columns):
                    raise InputError(f"{path}:{start}: {chunk.shape[1]} fields, expected "
                                     f"{len(columns)}")
                chunk.columns = columns
            chunk = chunk.reset_index(drop=True)  # positions in the chunk: start + i is the line
        if fmt == "csv":
            blank = (chunk == "").to_numpy().all(axis=1)
            if blank.any():
                chunk = chunk[~blank]
        if len(chunk):
            yield start, chunk


def _clean(column, na):
    """A column of str with its fields stripped and missing values (absent, or a missing-value
    token) as None; and the mask of the missing ones."""
    if _pandas().api.types.is_string_dtype(column.dtype):  # object, or pandas 3's str
        column = column.str.strip()
    missing = column.isna() | column.isin(na)
    return column.mask(missing, None), missing


class Unlabelled:
    """Rows left out because their label is missing: how many, and the line of the first."""

    def __init__(self):
        self.rows, self.first = 0, None

    def __bool__(self):
        return self.rows > 0


def _labelled(chunk, label, path, start, na, text, unlabelled, as_text=False):
    """(the chunk's rows that have a label, their labels): numbers (an int when integral) or
    text, never a mix (``text``: whether earlier batches held text); with ``as_text``, every
    label as the text the file holds."""
    column, missing = _clean(chunk[label], na)
    if missing.any():
        if unlabelled.first is None:
            unlabelled.first = start + int(chunk.index[np.flatnonzero(missing.to_numpy())[0]])
        unlabelled.rows += int(missing.sum())
        chunk, column = chunk[~missing.to_numpy()], column[~missing.to_numpy()]
    values = column.tolist() if as_text else [as_label(v) for v in column.tolist()]
    return chunk, label_array(values, path, start, text, chunk.index)


# A label that is a number: ASCII digits, as a file writes one (float() would also take '1_2',
# non-ASCII digits and spaces, and would round an integer beyond 2**53).
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def as_label(text):
    """A label as a number when it reads as one (an int when integral, exactly), else the text."""
    if _INTEGER.fullmatch(text):
        return int(text)
    if not _DECIMAL.fullmatch(text):
        return text
    value = float(text)
    if not np.isfinite(value):
        return text
    return int(value) if value.is_integer() else value


def _exact_labels(labels):
    """Labels as an array, integers that float64 would round (beyond 2**53; NumPy makes
    integers beyond int64 floats) kept as Python ints: distinct labels must not merge."""
    array = np.array(labels)
    if array.dtype.kind == "f" and any(type(v) is int and not -2**53 <= v <= 2**53
                                       for v in labels):
        array = np.array(labels, dtype=object)
    return array


def label_array(labels, path, start, text, positions):
    """Labels of one batch as an array: numbers or text, never a mix (``text``: whether earlier
    batches held text; ``positions``: the rows' places in their chunk, for the line number)."""
    if text is None:
        text = bool(labels) and isinstance(labels[0], str)
    odd = next((i for i, v in enumerate(labels) if isinstance(v, str) != text), None)
    if odd is not None:
        raise InputError(f"{path}:{start + int(positions[odd])}: the labels mix numbers and text "
                         f"({shown(labels[odd])} among {'text' if text else 'numbers'}); check the "
                         "label column")
    return np.array(labels, dtype=object) if text else _exact_labels(labels)


# -- reading with a schema -------------------------------------------------------------------------

def batches(path, schema, batch_size, *, labels=True, categories=None, extra_ignored=(),
            unlabelled=None, text_labels=False):
    """(features, labels, line of the first row) batches of a file read through a schema.

    features is a DataFrame with the schema's features in its order -- numbers as float64, text as
    str (with ``categories``, as pandas categoricals holding all of them, as training needs) -- or,
    for a text model, a list of documents. With ``labels`` the file must have the label column and
    rows without a label are left out (counted in ``unlabelled``); without, labels are None.
    ``text_labels``: the labels as the text the file holds (for a model whose classes are text,
    even where they read as numbers)."""
    pd = _pandas()
    na = set(schema.na_values)
    chunks = _raw_chunks(path, schema.format, schema.delimiter, batch_size)
    head, frame = _head(chunks)
    if frame.empty:
        return
    if schema.format == "csv" and len(schema.features) > 1:  # else one column may be right
        _check_split(path, frame, schema.delimiter)
    columns = _scoring_columns(path, schema, frame, extra_ignored)
    if schema.format == "csv" and schema.header:
        head = _without_header(head)
    if labels and schema.label not in columns:
        raise InputError(f"{path}: no label column {schema.label!r} (the model was trained "
                         "with it), and the true labels are needed here")
    unlabelled = Unlabelled() if unlabelled is None else unlabelled
    held_text, y = (True if text_labels else None), None  # (whether earlier labels were text)
    for start, chunk in _named(itertools.chain(head, chunks), columns, schema.format, path):
        if labels:
            chunk, y = _labelled(chunk, schema.label, path, start, na, held_text, unlabelled,
                                 text_labels)
            held_text = isinstance(y[0], str) if len(y) else held_text
            if not len(y):
                continue
        if schema.documents is not None:
            docs = chunk[schema.documents]
            if docs.isna().any():
                row = start + int(chunk.index[np.flatnonzero(docs.isna().to_numpy())[0]])
                raise InputError(f"{path}:{row}: no document (column {schema.documents!r})")
            yield docs.tolist(), y, start
            continue
        out = {}
        for c in schema.features:
            column, missing = _clean(chunk[c], na)
            if c in schema.text:
                if categories is None:
                    out[c] = column.to_numpy(dtype=object)
                    continue
                # (one lookup: the codes, then the categorical of them) a value the scan did not
                # see would be a missing one: the file changed
                known = pd.Index(categories[c])
                codes = known.get_indexer(column)
                unseen = (codes < 0) & ~missing.to_numpy()
                if unseen.any():
                    i = int(np.flatnonzero(unseen)[0])
                    raise InputError(f"{path}:{start + int(chunk.index[i])}: column {c!r} holds "
                                     f"{shown(column.iloc[i])}, which the first pass over the "
                                     "file did not find: the file changed while it was read")
                out[c] = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(known))
                continue
            values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64,
                                                                      na_value=np.nan)
            bad = (np.isnan(values) & ~missing.to_numpy()) | np.isinf(values)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                row = start + int(chunk.index[i])
                hint = "; does the file have a header line? pass --header" \
                    if row == 1 and schema.format == "csv" else ""
                raise InputError(f"{path}:{row}: column {c!r} holds {shown(column.iloc[i])}, not a "
                                 f"finite number (the model reads it as numbers){hint}")
            out[c] = values
        yield pd.DataFrame(out), y, start


def _scoring_columns(path, schema, frame, extra_ignored):
    """The names of a file's columns, checked against the schema: by name when the file has a
    header (or is JSON lines), by position when it has none."""
    if schema.format == "jsonl" or schema.header:
        names = [str(c) for c in frame.columns] if schema.format == "jsonl" else \
            _unique_names(frame.iloc[0].tolist())
        missing = [c for c in schema.features if c not in names]
        if missing:
            hint = "" if schema.format == "jsonl" else (
                "; if the file has no header line, pass --no-header")
            raise InputError(f"{path}: no column {missing[0]!r}"
                             f"{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}"
                             f", which the model reads{hint}")
        known = set(schema.features) | set(schema.ignored) | set(extra_ignored) | {schema.label}
        unknown = [c for c in names if c not in known]
        if unknown:
            raise InputError(f"{path}: column {unknown[0]!r} is not one the model was trained on "
                             f"(leave it out with --drop {unknown[0]!r})")
        if schema.format == "jsonl":  # records may lack keys, later ones hold the others
            return list(dict.fromkeys([*names, *sorted(known - {None})]))
        return names
    width = frame.shape[1]
    if width == len(schema.columns):
        return list(schema.columns)
    if schema.label is not None and width == len(schema.columns) - 1:
        return [c for c in schema.columns if c != schema.label]
    raise InputError(f"{path}: {width} columns, but the model was trained on files of "
                     f"{len(schema.columns)} columns ({len(schema.columns) - 1} without the "
                     "label) and this file has no header to match them by name")
