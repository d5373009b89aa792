"""Model files: the container format, without pickle. ``model.save(path)`` and
``fastgen.load(path)`` (in ``_base``) put a model's hyperparameters and declared statistics in it.

Format (version 2), all integers little-endian::

    b"FASTGEN\\x00"                 8 bytes, magic
    format version                  uint32
    header length H                 uint64
    header                          H bytes of UTF-8 JSON
    array data                      the arrays' bytes, each C-ordered, at the offsets the header gives
    SHA-256                         32 bytes, of everything before it

The header is ``{"fastgen": version, "class": name, "params": node, "fitted": node, "arrays":
[...]}``: ``class`` names one of fastgen's estimators (nothing named in the file is imported or
called), ``params`` its hyperparameters and ``fitted`` its fitted state -- the classes, the
number, names and dtype of the features, and the declared statistics; nothing derived. Values are
JSON values or tagged nodes: ``{"array": i}`` (entry i of ``arrays``: dtype, shape, offset,
nbytes; numeric, bool or unicode dtypes only), ``{"objects": [...], "shape": [...]}`` (an object
array of JSON scalars, e.g. string labels), ``{"tuple": [...]}`` and ``{"dict": [[key, value],
...]}``. This module checks the container (checksum, bounds, node shapes); the estimator then
validates every hyperparameter and every statistic against its declaration before anything is
derived, so a forged file with a valid checksum is an error, not a model. Version 1 files (which
held derived state) are refused.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct

import numpy as np

from ._version import __version__

MAGIC = b"FASTGEN\x00"
FORMAT_VERSION = 2
_PREFIX = struct.Struct("<8sIQ")
_DIGEST = 32
_ARRAY_KINDS = "biufU"
MAX_DEPTH = 32  # nesting of the header's values (a model within a model is two levels)


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


def write_model(path, class_name, params, fitted):
    """Write a model file: the estimator's class name, hyperparameters and fitted state."""
    writer = _Writer()
    header = {"fastgen": __version__, "class": class_name, "params": writer.encode(params),
              "fitted": writer.encode(fitted)}
    header["arrays"] = writer.arrays
    header = json.dumps(header, allow_nan=True).encode("utf-8")
    body = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(header)) + header + b"".join(writer.blobs)
    digest = hashlib.sha256(body).digest()
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(body)
        f.write(digest)
    os.replace(tmp, path)  # never a half-written model file under the final name


class _Reader:
    def __init__(self, arrays, data, path):
        self.arrays, self.data, self.path = arrays, data, path

    def bad(self, why):
        return ValueError(f"{self.path}: not a valid fastgen model file ({why}).")

    def array(self, index):
        if isinstance(index, bool) or not isinstance(index, int) or \
                not 0 <= index < len(self.arrays):
            raise self.bad("an array reference is out of range")
        entry = self.arrays[index]
        try:
            dtype = np.dtype(entry["dtype"])
            shape = tuple(entry["shape"])
            offset, nbytes = entry["offset"], entry["nbytes"]
        except (KeyError, TypeError, ValueError, SyntaxError):
            raise self.bad("an array entry is malformed") from None
        numbers = (offset, nbytes) + shape
        if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= len(self.data)
                   for n in numbers) or len(shape) > 3:
            raise self.bad("an array entry does not fit the data")
        if dtype.kind not in _ARRAY_KINDS or dtype.fields is not None or dtype.subdtype is \
                not None or nbytes != dtype.itemsize * int(np.prod(shape, dtype=object)) or \
                offset + nbytes > len(self.data):
            raise self.bad("an array entry does not fit the data")
        count = nbytes // dtype.itemsize if dtype.itemsize else 0
        return np.frombuffer(self.data, dtype=dtype, count=count,
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


def read_model(path):
    """Read a model file's container: returns (class name, hyperparameters, fitted state), the
    last two decoded but not yet validated (the estimator does that).

    Raises
    ------
    ValueError
        If the file is truncated, corrupted (checksum), not a fastgen model file, or of another
        format version.
    """
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < _PREFIX.size + _DIGEST or not blob.startswith(MAGIC):
        raise ValueError(f"{path}: not a fastgen model file (no fastgen header).")
    _, version, header_length = _PREFIX.unpack_from(blob)
    if version > FORMAT_VERSION:
        raise ValueError(f"{path}: written by a newer fastgen (model file format {version}; this "
                         f"fastgen reads {FORMAT_VERSION}). Upgrade fastgen to load it.")
    if version < 1:
        raise ValueError(f"{path}: not a valid fastgen model file (format version {version}).")
    if version != FORMAT_VERSION:
        raise ValueError(f"{path}: model file format {version} (an earlier fastgen's, which also "
                         f"held derived state) is not supported; this fastgen reads format "
                         f"{FORMAT_VERSION}. Fit the model again and save it.")
    body, digest = blob[:-_DIGEST], blob[-_DIGEST:]
    if hashlib.sha256(body).digest() != digest:
        raise ValueError(f"{path}: the model file is truncated or corrupted (checksum mismatch).")
    start = _PREFIX.size
    if start + header_length > len(body):
        raise ValueError(f"{path}: the model file is truncated (header past the end).")
    try:
        header = json.loads(body[start:start + header_length].decode("utf-8"))
        name, params, fitted, arrays = (header["class"], header["params"], header["fitted"],
                                        header["arrays"])
        if not isinstance(name, str) or not isinstance(arrays, list) or \
                not all(isinstance(a, dict) for a in arrays):
            raise TypeError
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, RecursionError):
        raise ValueError(f"{path}: not a valid fastgen model file (malformed header).") from None
    reader = _Reader(arrays, memoryview(body)[start + header_length:].tobytes(), path)
    return name, reader.decode(params), reader.decode(fitted)
