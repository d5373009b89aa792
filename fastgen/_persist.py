"""Model files: the container format without pickle, and what it holds. ``fastgen.save(obj,
path)`` (which ``model.save(path)`` calls) writes a fitted fastgen classifier, a fitted fastgen
vectoriser (``fastgen.text``) or a scikit-learn ``Pipeline`` of them; ``fastgen.load(path)``
gives the same kind of object back.

Format (version 2), all integers little-endian::

    b"FASTGEN\\x00"                 8 bytes, magic
    format version                  uint32
    header length H                 uint64
    header                          H bytes of UTF-8 JSON
    array data                      the arrays' bytes, each C-ordered, at the header's offsets;
                                    it ends where the last array ends (fastgen writes them
                                    end to end from offset 0, without padding)
    SHA-256                         32 bytes, of everything before it

The header is ``{"fastgen": version, "class": name, "params": node, "fitted": node, "arrays":
[...]}`` and, when the caller gave one, ``"metadata": {...}``. ``class`` names one of fastgen's
estimators or vectorisers (the registry ``_ESTIMATORS``: nothing named in the file is imported or
called), ``params`` its hyperparameters and ``fitted`` its fitted state -- for a classifier the
classes, the number, names and dtype of the features, and the declared statistics; for a
``CountVectorizer`` the vocabulary (term -> column), unless it was given as a parameter; nothing
derived. Values are JSON values or tagged nodes: ``{"array": i}`` (entry i of ``arrays``: dtype,
shape, offset, nbytes; numeric, bool or unicode dtypes only), ``{"objects": [...], "shape":
[...]}`` (an object array of JSON scalars, e.g. string labels), ``{"tuple": [...]}`` and
``{"dict": [[key, value], ...]}``.

A scikit-learn ``Pipeline`` is ``class`` ``"Pipeline"`` with ``params`` ``{"steps": [[name,
step], ...], "verbose": bool}``, each step ``{"class": name, "params": node}`` or a trivial step
(``"passthrough"`` or null), and ``fitted`` ``{"steps": [state or null, ...]}`` in the same
order. It holds at most one vectoriser, and a classifier as its last step.

``metadata`` is the caller's record, plain JSON (an object with str keys whose values are str,
numbers, booleans, null, lists and objects, nested at most ``MAX_DEPTH`` deep, no NaN or
infinity), not tagged: the command line keeps there how it read its training file.
``fastgen.load_metadata(path)`` returns it ({} when absent) without building the model.

This module checks the container (checksum, bounds, node shapes, metadata); each class then
validates every hyperparameter and every statistic before anything is derived, and a Pipeline's
steps are checked to agree (names, kinds, the vectoriser's width against the classifier's
``n_features_in_``), so a forged file with a valid checksum is an error, not an object. Version
1 files (which held derived state) are refused.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import stat
import struct
import sys
import threading

import numpy as np

from ._version import __version__

MAGIC = b"FASTGEN\x00"
FORMAT_VERSION = 2
_PREFIX = struct.Struct("<8sIQ")
_DIGEST = 32
_ARRAY_KINDS = "biufU"
MAX_DEPTH = 32  # nesting of the header's values (a model within a model is two levels)
_CHUNK = 1 << 20  # the header is read this much at a time

# fastgen's classes by name: the only ones a file can name (their modules fill it).
_ESTIMATORS: dict[str, type] = {}


class _Writer:
    def __init__(self):
        self.arrays = []
        self.blobs = []
        self.offset = 0

    def array(self, a):
        a = np.ascontiguousarray(a)
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        data = a.tobytes()
        self.arrays.append({"dtype": a.dtype.str, "shape": list(a.shape), "offset": self.offset,
                            "nbytes": len(data)})
        self.blobs.append(data)
        self.offset += len(data)
        return {"array": len(self.arrays) - 1}

    def encode(self, value):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return float(value)
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.ndarray):
            if value.dtype.kind in _ARRAY_KINDS:
                return self.array(value)
            items = value.ravel().tolist()
            if value.dtype != object or not all(
                    v is None or isinstance(v, (bool, int, float, str)) for v in items):
                raise TypeError(f"cannot save an array of dtype {value.dtype} holding values "
                                "other than str, int, float, bool or None")
            return {"objects": items, "shape": list(value.shape)}
        if isinstance(value, tuple):
            return {"tuple": [self.encode(v) for v in value]}
        if isinstance(value, list):
            return [self.encode(v) for v in value]
        if isinstance(value, dict):
            return {"dict": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        raise TypeError(f"cannot save a value of type {type(value).__name__}")


def write_model(path, class_name, params, fitted, metadata=None):
    """Write a model file: the estimator's class name, hyperparameters and fitted state, and
    the caller's metadata (already checked by ``check_metadata``) unless None."""
    writer = _Writer()
    header = {"fastgen": __version__, "class": class_name, "params": writer.encode(params),
              "fitted": writer.encode(fitted)}
    header["arrays"] = writer.arrays
    if metadata is not None:
        header["metadata"] = metadata
    header = json.dumps(header, allow_nan=True).encode("utf-8")
    body = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(header)) + header + b"".join(writer.blobs)
    digest = hashlib.sha256(body).digest()
    asked = os.fspath(path)
    # a link's file is written, not the link replaced; only a regular file is ever replaced
    # (never a FIFO, a device such as /dev/null, ...)
    target = os.path.realpath(asked) if os.path.islink(asked) else asked
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, "a directory, not a model file", asked)
    if os.path.lexists(target) and not os.path.isfile(target):
        raise FileExistsError(errno.EEXIST, "exists and is not a regular file, which a model "
                              "file would replace", asked)
    # never a half-written model file under the final name; one temporary name per thread
    tmp = f"{target}.tmp{os.getpid()}-{threading.get_ident()}"
    try:
        with open(tmp, "wb") as f:
            f.write(body)
            f.write(digest)
        os.replace(tmp, target)
    except OSError as exc:  # named by the file asked for, not the temporary one
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise type(exc)(exc.errno, f"cannot write the model file ({exc.strerror})",
                        asked) from None


def _invalid(path, why):
    return ValueError(f"{path}: not a valid fastgen model file ({why}).")


def _truncated(path, why):
    return ValueError(f"{path}: the model file is truncated ({why}).")


class _Reader:
    def __init__(self, arrays, data, path):
        self.arrays, self.data, self.path = arrays, data, path

    def bad(self, why):
        return _invalid(self.path, why)

    def array(self, index):
        """Array entry ``index`` (checked with the others by ``_entries`` before the data was
        read), as a copy in native byte order."""
        dtype, shape, offset, nbytes = self.arrays[index]
        return np.frombuffer(self.data, dtype=dtype, count=nbytes // dtype.itemsize,
                             offset=offset).reshape(shape).astype(dtype.newbyteorder("="))

    def decode(self, node, depth=0):
        if depth > MAX_DEPTH:
            raise self.bad("the header is nested too deeply")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        if not isinstance(node, dict):
            raise self.bad("an unknown node")
        keys = set(node)
        if keys == {"array"}:
            return self.array(node["array"])
        if keys == {"objects", "shape"}:
            items, shape = node["objects"], node["shape"]
            if not isinstance(items, list) or not all(
                    v is None or isinstance(v, (bool, int, float, str)) for v in items) or \
                    shape != [len(items)]:
                raise self.bad("an object array is malformed")
            values = np.empty(len(items), dtype=object)
            values[:] = items
            return values
        if keys == {"tuple"} and isinstance(node["tuple"], list):
            return tuple(self.decode(v, depth + 1) for v in node["tuple"])
        if keys == {"dict"} and isinstance(node["dict"], list):
            out = {}
            for pair in node["dict"]:
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise self.bad("a dictionary entry is malformed")
                key = self.decode(pair[0], depth + 1)
                if not isinstance(key, (str, int, float, bool)) or key is None:
                    raise self.bad("a dictionary key is not a scalar")
                if key in out:
                    raise self.bad("a dictionary key is repeated")
                out[key] = self.decode(pair[1], depth + 1)
            return out
        raise self.bad("an unknown node")


def _open(path):
    """A model file's container checked: (header, reader for its arrays, metadata). Only a
    regular file is read (a FIFO would block, a device never end), and only after its prefix
    says it is a model file of this format. Lengths are checked against the file's size before
    they are read, and the arrays the header declares against the bytes left for them, so a
    file (a sparse one of gigabytes) is read only as far as it is consistent; the array data is
    read once, into the buffer the arrays come from, and hashed as it is read."""
    # (non-blocking: opening a FIFO waits for a writer; a regular file ignores the flag)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        raise ValueError(f"{path}: not a fastgen model file (not a regular file).")
    with open(fd, "rb") as f:
        prefix = f.read(_PREFIX.size)
        if status.st_size < _PREFIX.size + _DIGEST or len(prefix) < _PREFIX.size or \
                not prefix.startswith(MAGIC):
            raise ValueError(f"{path}: not a fastgen model file (no fastgen header).")
        _, version, header_length = _PREFIX.unpack_from(prefix)
        _check_version(path, version)
        # the bytes between the prefix and the digest, by the file's size: no length the file
        # gives is read (or allocated) before it is checked against that
        space = status.st_size - _PREFIX.size - _DIGEST
        if header_length > space:
            raise _truncated(path, "header past the end")
        raw = _read_header(f, header_length, path)
        checksum = hashlib.sha256(prefix)
        checksum.update(raw)
        header, arrays = _parse_header(raw, path)
        arrays, end = _entries(header, arrays, space - header_length, path)
        if end > space - header_length:
            raise _truncated(path, "arrays past the end")
        if end < space - header_length:
            raise _invalid(path, f"its arrays fill {end} of the {space - header_length} bytes "
                                 "of array data")
        data = bytearray(end)
        _read_into(f, data, path)
        checksum.update(data)
        digest = f.read(_DIGEST)
    if len(digest) < _DIGEST:
        raise _truncated(path, "it shrank while read")
    if checksum.digest() != digest:
        raise ValueError(f"{path}: the model file is truncated or corrupted (checksum mismatch).")
    try:
        metadata = check_metadata(header.get("metadata", {}))
    except (TypeError, ValueError) as exc:
        raise _invalid(path, exc) from None
    return header, _Reader(arrays, data, path), metadata


def _check_version(path, version):
    if version > FORMAT_VERSION:
        raise ValueError(f"{path}: written by a newer fastgen (model file format {version}; this "
                         f"fastgen reads {FORMAT_VERSION}). Upgrade fastgen to load it.")
    if version < 1:
        raise _invalid(path, f"format version {version}")
    if version != FORMAT_VERSION:
        raise ValueError(f"{path}: model file format {version} (an earlier fastgen's, which also "
                         f"held derived state) is not supported; this fastgen reads format "
                         f"{FORMAT_VERSION}. Fit the model again and save it.")


def _read_header(f, length, path):
    """The header's ``length`` bytes, read a chunk at a time: UTF-8 JSON never holds a NUL byte
    (a string escapes it), so a hole in a sparse file is refused after one chunk, not read."""
    header = bytearray()
    while len(header) < length:
        chunk = f.read(min(_CHUNK, length - len(header)))
        if not chunk:
            raise _truncated(path, "it shrank while read")
        if b"\0" in chunk:
            raise _malformed_header(path)
        header += chunk
    return header


def _malformed_header(path):
    # (read before the checksum, which needs the array data that the header delimits: a
    # malformed header is as likely damage as a file fastgen did not write)
    return _invalid(path, "malformed header: corrupted, or not written by fastgen")


def _parse_header(raw, path):
    """(header, its array entries), checked to be a header; the entries not yet."""
    try:
        header = json.loads(raw.decode("utf-8"))
        name, arrays = header["class"], header["arrays"]
        if not isinstance(name, str) or not isinstance(arrays, list) or \
                not all(isinstance(a, dict) for a in arrays) or \
                not {"params", "fitted"} <= set(header) or \
                not isinstance(header.get("fastgen"), str):  # (the version that wrote it)
            raise TypeError
    except (ValueError, KeyError, TypeError, RecursionError):  # (ValueError: bad UTF-8 or
        # JSON, or an integer of more digits than Python converts)
        raise _malformed_header(path) from None
    return header, arrays


def _entries(header, arrays, space, path):
    """The array entries, checked before any array data is read: (their (dtype, shape, offset,
    nbytes), where the last one ends). Each must be as ``_Writer`` makes them -- a numeric,
    bool or unicode dtype named by a string, a shape of at most 3 sizes whose bytes it holds --
    laid end to end from offset 0 in their order, and referenced exactly once by the header's
    params or fitted state: a file declares no bytes that nothing reads, and no array that
    decodes into many (each reference is a copy: 1,000 references to an array of 8 MiB are
    8 GB). No size may exceed the ``space`` the file has for array data (an empty array's
    other sizes included)."""
    references = [0] * len(arrays)
    nodes = [header["params"], header["fitted"]]
    while nodes:  # (the header parsed: nesting bounded by the JSON parser's recursion)
        node = nodes.pop()
        if isinstance(node, dict):
            if set(node) == {"array"}:
                index = node["array"]
                if type(index) is not int or not 0 <= index < len(arrays):
                    raise _invalid(path, "an array reference is out of range")
                references[index] += 1
            else:
                nodes.extend(node.values())
        elif isinstance(node, list):
            nodes.extend(node)
    if any(count != 1 for count in references):
        raise _invalid(path, "an array entry is not referenced exactly once")
    checked, end = [], 0
    for entry in arrays:
        if set(entry) != {"dtype", "shape", "offset", "nbytes"} or \
                not isinstance(entry["dtype"], str) or not isinstance(entry["shape"], list):
            raise _invalid(path, "an array entry is malformed")
        try:
            dtype = np.dtype(entry["dtype"])
        except (TypeError, ValueError, SyntaxError):
            raise _invalid(path, "an array entry is malformed") from None
        shape, offset, nbytes = tuple(entry["shape"]), entry["offset"], entry["nbytes"]
        if dtype.kind not in _ARRAY_KINDS or dtype.fields is not None or \
                dtype.subdtype is not None or dtype.itemsize == 0 or len(shape) > 3 or \
                not all(type(n) is int and 0 <= n <= space for n in (offset, nbytes) + shape) or \
                nbytes != dtype.itemsize * math.prod(shape) or offset != end:
            raise _invalid(path, "an array entry does not fit the data")
        checked.append((dtype, shape, offset, nbytes))
        end += nbytes
    return checked, end


def _read_into(f, buffer, path):
    """Fill ``buffer`` from ``f``; a file that ends first shrank since its size was taken."""
    view = memoryview(buffer)
    while view:
        n = f.readinto(view)
        if not n:
            raise _truncated(path, "it shrank while read")
        view = view[n:]


def read_model(path):
    """Read a model file's container: returns (class name, hyperparameters, fitted state), the
    last two decoded but not yet validated (the class does that).

    Raises
    ------
    ValueError
        If the file is truncated, corrupted (checksum), not a fastgen model file, or of another
        format version.
    """
    header, reader, _ = _open(path)
    return header["class"], reader.decode(header["params"]), reader.decode(header["fitted"])


def check_metadata(metadata):
    """A copy of ``metadata`` if it is a JSON object: a dict with str keys whose values are str,
    int, finite float, bool, None, and lists and dicts of them, at most ``MAX_DEPTH`` deep;
    otherwise a TypeError (a ValueError for NaN, infinity or deeper nesting) saying where."""
    if type(metadata) is not dict:
        raise TypeError(f"metadata must be a dict, got {type(metadata).__name__}")
    return _json_value(metadata, "metadata", 0)


def _json_value(value, where, depth):
    if depth > MAX_DEPTH:
        raise ValueError(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value}; JSON has no NaN or infinity")
        return value
    if type(value) is list:
        return [_json_value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if type(value) is dict:
        for key in value:
            if type(key) is not str:
                raise TypeError(f"{where} has the key {key!r} of type {type(key).__name__}; "
                                "keys must be str")
        return {k: _json_value(v, f"{where}[{k!r}]", depth + 1) for k, v in value.items()}
    raise TypeError(f"{where} is of type {type(value).__name__}; metadata holds str, int, "
                    "float, bool, None, and lists and dicts of them")


# ----------------------------------------------------------------------------- the public API
def save(obj, path, metadata=None) -> None:
    """Write a fitted fastgen object to a model file (no pickle, versioned, with a checksum).

    Parameters
    ----------
    obj : fastgen classifier, fastgen vectoriser or sklearn.pipeline.Pipeline
        A fitted classifier (the same file as ``obj.save(path)``), a fitted
        ``fastgen.text.CountVectorizer`` or ``HashingVectorizer``, or a ``Pipeline`` of a
        fastgen vectoriser and a fastgen classifier (its last step; other steps may be
        ``"passthrough"`` or None), which then scores raw documents in one call.
    path : str or path-like
        Where to write the file.
    metadata : dict, default=None
        The caller's own record, kept in the file and returned by ``load_metadata``: str keys,
        values str, int, finite float, bool, None, and lists and dicts of them.

    Raises
    ------
    TypeError
        If ``obj`` (or a Pipeline step, named) is not one of these, if a parameter cannot be
        stored without pickle (a callable ``analyzer``, ``tokenizer``, ``preprocessor`` or
        ``strip_accents``; a ``dtype`` that is not a plain NumPy dtype), or if ``metadata`` is
        not JSON as above.
    NotFittedError
        If ``obj`` (or a step) is not fitted.

    Examples
    --------
    >>> import os, tempfile
    >>> import fastgen
    >>> from fastgen.text import CountVectorizer
    >>> from sklearn.pipeline import make_pipeline
    >>> docs, labels = ["cheap pills now", "lunch at noon?", "win cheap prizes"], [1, 0, 1]
    >>> pipe = make_pipeline(CountVectorizer(), fastgen.MultinomialNB()).fit(docs, labels)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "spam.fastgen")
    ...     fastgen.save(pipe, path, metadata={"source": "example"})
    ...     loaded, metadata = fastgen.load(path), fastgen.load_metadata(path)
    >>> type(loaded).__name__, [name for name, _ in loaded.steps]
    ('Pipeline', ['countvectorizer', 'multinomialnb'])
    >>> bool((loaded.predict_proba(["cheap lunch"]) == pipe.predict_proba(["cheap lunch"])).all())
    True
    >>> metadata
    {'source': 'example'}
    """
    metadata = None if metadata is None else check_metadata(metadata)
    if _is_pipeline(obj):
        name, (params, fitted) = "Pipeline", _pipeline_record(obj)
    else:
        name, (params, fitted) = type(obj).__name__, _record(obj, "obj")
    write_model(path, name, params, fitted, metadata)


def load(path, *, trusted: bool = False):
    """Read an object written by ``save`` (or ``model.save``).

    Parameters
    ----------
    path : str or path-like
        The model file.
    trusted : bool, default=False
        Whether the file comes from a source you trust. A file holds no code, but two settings
        of a vectoriser act like it, and an untrusted file may not give them: a
        ``token_pattern`` other than the default (a regular expression can take time exponential
        in a document's length, and the file's author chose it), and an ``input`` other than
        ``'content'`` (``transform`` would read the files its documents name).

    Returns
    -------
    obj : fastgen classifier, fastgen vectoriser or sklearn.pipeline.Pipeline
        The fitted object, exactly as saved (a Pipeline with the same step names).

    Raises
    ------
    ValueError
        If the file is truncated, corrupted (checksum), not a fastgen model file, of another
        format version, or holds anything not valid for its class: every hyperparameter goes
        through the checks of ``fit``, every statistic is checked against its declaration
        before anything is derived, a vocabulary must map distinct str terms to the columns
        0..n-1, and a Pipeline's steps must be named uniquely and agree with each other. Also
        if the file is not ``trusted`` and gives a vectoriser one of the settings above.
    ImportError
        If the file holds a Pipeline and scikit-learn is not installed.
    """
    if not isinstance(trusted, bool):
        raise TypeError(f"trusted must be a bool, got {type(trusted).__name__}")
    name, params, fitted = read_model(path)
    pipeline = _sklearn_pipeline(path) if name == "Pipeline" else None
    try:
        obj = (_pipeline_from_file(pipeline, params, fitted) if pipeline is not None
               else _from_file(name, params, fitted))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError,
            ZeroDivisionError, np.linalg.LinAlgError) as exc:
        raise _invalid(path, f"{name}: {type(exc).__name__}: {exc}") from None
    if not trusted:
        for step in [step for _, step in obj.steps] if pipeline is not None else [obj]:
            found = step._needs_trust() if hasattr(step, "_needs_trust") else []
            if found:
                raise ValueError(f"{path}: the file gives its {type(step).__name__} "
                                 f"{' and '.join(found)}. Load it with trusted=True (on the "
                                 "command line, --trusted) only if you trust where it comes "
                                 "from.")
    return obj


def load_metadata(path) -> dict:
    """The metadata ``save`` stored in a model file ({} if none), after checking the file's
    container (checksum, format version, header) but without building the object.

    Parameters
    ----------
    path : str or path-like
        The model file.

    Returns
    -------
    metadata : dict
        A JSON object: str keys, values str, int, float, bool, None, lists and dicts.

    Raises
    ------
    ValueError
        As ``load`` for a damaged or foreign file, or if the metadata is not such a JSON object.
    """
    return _open(path)[2]


def _record(obj, what):
    """(hyperparameters, fitted state) of one of fastgen's classes; a TypeError otherwise."""
    if _ESTIMATORS.get(type(obj).__name__) is not type(obj):
        raise TypeError(f"{what} is a {type(obj).__module__}.{type(obj).__qualname__}: a model "
                        "file holds a fastgen classifier, a fastgen vectoriser or a "
                        "scikit-learn Pipeline of them")
    return obj._file_record()


def _from_file(name, params, fitted):
    cls = _ESTIMATORS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"unknown estimator {name!r}")
    return cls._from_file(params, fitted)


# ----------------------------------------------------------------------------- Pipelines
def _is_pipeline(obj):
    module = sys.modules.get("sklearn.pipeline")  # not imported: obj is no Pipeline
    return module is not None and type(obj) is module.Pipeline


def _sklearn_pipeline(path):
    try:
        from sklearn.pipeline import Pipeline
    except ImportError:
        raise ImportError(f"{path} holds a scikit-learn Pipeline: install scikit-learn "
                          "(pip install scikit-learn) to load it") from None
    return Pipeline


def _pipeline_record(pipe):
    params = pipe.get_params(deep=False)
    for name, value in params.items():
        if name not in ("steps", "verbose") and value is not None:
            raise TypeError(f"the Pipeline's {name}={value!r} cannot be saved (only None)")
    if not isinstance(params["verbose"], bool):
        raise TypeError(f"the Pipeline's verbose must be a bool, got {params['verbose']!r}")
    steps = list(pipe.steps)
    records, states = [], []
    for name, step in steps:
        if _is_trivial(step):
            records.append([name, step])
            states.append(None)
        else:
            step_params, state = _record(step, f"Pipeline step {name!r}")
            records.append([name, {"class": type(step).__name__, "params": step_params}])
            states.append(state)
    _check_steps(steps)
    return {"steps": records, "verbose": params["verbose"]}, {"steps": states}


def _pipeline_from_file(pipeline, params, fitted):
    if not isinstance(params, dict) or set(params) != {"steps", "verbose"}:
        raise ValueError("the Pipeline's parameters must be exactly steps and verbose")
    if not isinstance(fitted, dict) or set(fitted) != {"steps"}:
        raise ValueError("the Pipeline's fitted state must be exactly its steps")
    records, states = params["steps"], fitted["steps"]
    if not isinstance(records, list) or not isinstance(states, list) or \
            len(records) != len(states):
        raise ValueError("the Pipeline's steps and their fitted states must be lists of the "
                         "same length")
    if not isinstance(params["verbose"], bool):
        raise ValueError("the Pipeline's verbose must be true or false")
    steps = []
    for record, state in zip(records, states):
        if not (isinstance(record, list) and len(record) == 2):
            raise ValueError("a Pipeline step must be a [name, step] pair")
        name, step = record
        if _is_trivial(step):
            if state is not None:
                raise ValueError(f"Pipeline step {name!r} is {step!r} and has a fitted state")
        elif isinstance(step, dict) and set(step) == {"class", "params"}:
            step = _from_file(step["class"], step["params"], state)
        else:
            raise ValueError(f"Pipeline step {name!r} must be a class and its parameters, "
                             "'passthrough' or null")
        steps.append((name, step))
    _check_steps(steps)
    return pipeline(steps, verbose=params["verbose"])


def _is_trivial(step):
    return step is None or (type(step) is str and step == "passthrough")


def _check_steps(steps):
    """A Pipeline's (name, step) pairs as a model file holds them: names str, distinct, without
    "__" and not a parameter of Pipeline; fastgen steps, at most one vectoriser, a classifier
    last, and the vectoriser's width that classifier's ``n_features_in_``."""
    if not steps:
        raise ValueError("a Pipeline has at least one step")
    names = [name for name, _ in steps]
    for name in names:
        if not isinstance(name, str) or "__" in name or name in ("steps", "memory", "verbose",
                                                                  "transform_input"):
            raise ValueError(f"Pipeline step names must be str without '__' and not a Pipeline "
                             f"parameter, got {name!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"Pipeline step names must be distinct, got {names}")
    vectorizer = None
    *head, (last_name, last) = steps
    for name, step in head:
        if _is_trivial(step):
            continue
        if _ESTIMATORS.get(type(step).__name__) is not type(step):
            raise TypeError(f"Pipeline step {name!r} is a {type(step).__module__}."
                            f"{type(step).__qualname__}: a Pipeline file holds fastgen steps")
        if hasattr(step, "predict_proba") or vectorizer is not None:
            raise TypeError(f"Pipeline step {name!r} is a {type(step).__name__}: a Pipeline file "
                            "holds at most one fastgen vectoriser, then a fastgen classifier "
                            "as its last step")
        vectorizer = (name, step)
    if _ESTIMATORS.get(type(last).__name__) is not type(last) or \
            not hasattr(last, "predict_proba"):
        raise TypeError(f"Pipeline step {last_name!r} is a {type(last).__module__}."
                        f"{type(last).__qualname__}: the last step of a Pipeline file is a "
                        "fastgen classifier")
    if vectorizer is not None:
        width, n_features = vectorizer[1]._n_features_out, last.n_features_in_
        if width != n_features:
            raise ValueError(f"Pipeline step {vectorizer[0]!r} gives {width} columns but step "
                             f"{last_name!r} was fitted on {n_features}")
