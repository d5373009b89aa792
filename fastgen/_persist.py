"""Model files: ``model.save(path)`` and ``fastgen.load(path)``, without pickle.

Format (version 1), all integers little-endian::

    b"FASTGEN\\x00"                 8 bytes, magic
    format version                  uint32
    header length H                 uint64
    header                          H bytes of UTF-8 JSON
    array data                      the arrays' bytes, each C-ordered, at the offsets the header gives
    SHA-256                         32 bytes, of everything before it

The header is ``{"fastgen": version, "class": name, "state": node, "arrays": [...]}``: ``class``
is looked up among fastgen's estimators (nothing named in the file is imported or called), and
``state`` encodes the estimator's attributes as a tree of JSON values and tagged nodes --
``{"array": i}`` (entry i of ``arrays``: dtype, shape, offset, nbytes; numeric, bool or unicode
dtypes only), ``{"objects": [...]}`` (an object array of JSON scalars, e.g. string labels),
``{"tuple": [...]}``, ``{"dict": [[key, value], ...]}``, ``{"csr": [data, indices, indptr,
shape]}``, ``{"dtype": "float32"}``, ``{"estimator": name, "state": ...}`` and
``{"derived": alpha}`` (the smoothing of a text model, whose tables are rebuilt). After loading,
the statistics' shapes are checked against the classes and features and every parameter derived
from them is rebuilt, so a file can never hand the kernels inconsistent arrays.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct

import numpy as np
import scipy.sparse as sp

MAGIC = b"FASTGEN\x00"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
_DIGEST = 32
_ARRAY_KINDS = "biufU"


def _registry():
    """fastgen's public estimators by name: the only classes a model file can name."""
    import fastgen

    from ._base import BaseClassifier

    exported = (getattr(fastgen, name) for name in fastgen.__all__)
    return {cls.__name__: cls for cls in exported
            if isinstance(cls, type) and issubclass(cls, BaseClassifier)}


class _Writer:
    def __init__(self):
        self.arrays = []
        self.blobs = []
        self.offset = 0

    def array(self, a):
        a = np.ascontiguousarray(a)
        if a.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(f"cannot save an array of dtype {a.dtype}")
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        data = a.tobytes()
        self.arrays.append({"dtype": a.dtype.str, "shape": list(a.shape), "offset": self.offset,
                            "nbytes": len(data)})
        self.blobs.append(data)
        self.offset += len(data)
        return {"array": len(self.arrays) - 1}

    def encode(self, value):
        from ._base import BaseEstimator
        from .naive_bayes import _Derived

        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return float(value)
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                items = value.ravel().tolist()
                if not all(v is None or isinstance(v, (bool, int, float, str)) for v in items):
                    raise TypeError("cannot save an object array holding values other than "
                                    "str, int, float, bool or None")
                return {"objects": items, "shape": list(value.shape)}
            return self.array(value)
        if isinstance(value, np.dtype):
            return {"dtype": value.str}
        if isinstance(value, tuple):
            return {"tuple": [self.encode(v) for v in value]}
        if isinstance(value, list):
            return [self.encode(v) for v in value]
        if isinstance(value, dict):
            return {"dict": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        if sp.issparse(value):
            csr = value.tocsr()
            return {"csr": [self.array(csr.data), self.array(csr.indices),
                            self.array(csr.indptr), list(csr.shape)]}
        if isinstance(value, _Derived):
            return {"derived": self.encode(value.alpha)}
        if isinstance(value, BaseEstimator):
            return {"estimator": type(value).__name__, "state": self.encode(value.__getstate__())}
        raise TypeError(f"cannot save a value of type {type(value).__name__}")


def save(estimator, path):
    """Write ``estimator`` (fitted) to ``path`` in fastgen's model-file format."""
    from . import __version__
    from ._validation import check_is_fitted

    check_is_fitted(estimator)
    if type(estimator).__name__ not in _registry():
        raise TypeError(f"cannot save a {type(estimator).__name__}")
    writer = _Writer()
    state = writer.encode(estimator.__getstate__())
    header = json.dumps({"fastgen": __version__, "class": type(estimator).__name__,
                         "state": state, "arrays": writer.arrays}).encode("utf-8")
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
        if not isinstance(index, int) or not 0 <= index < len(self.arrays):
            raise self.bad("an array reference is out of range")
        entry = self.arrays[index]
        try:
            dtype = np.dtype(entry["dtype"])
            shape = tuple(int(n) for n in entry["shape"])
            offset, nbytes = int(entry["offset"]), int(entry["nbytes"])
        except (KeyError, TypeError, ValueError):
            raise self.bad("an array entry is malformed") from None
        if dtype.kind not in _ARRAY_KINDS or min(shape, default=0) < 0 or offset < 0 or \
                nbytes != dtype.itemsize * int(np.prod(shape)) or offset + nbytes > len(self.data):
            raise self.bad("an array entry does not fit the data")
        return np.frombuffer(self.data, dtype=dtype, count=int(np.prod(shape)),
                             offset=offset).reshape(shape).astype(dtype.newbyteorder("="))

    def decode(self, node):
        from .naive_bayes import _Derived

        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict) or len(node) not in (1, 2):
            raise self.bad("an unknown node")
        if "array" in node:
            return self.array(node["array"])
        if "objects" in node:
            values = np.empty(len(node["objects"]), dtype=object)
            values[:] = node["objects"]
            return values.reshape(node.get("shape", [len(values)]))
        if "dtype" in node:
            dtype = np.dtype(node["dtype"])
            return dtype.newbyteorder("=")
        if "tuple" in node:
            return tuple(self.decode(v) for v in node["tuple"])
        if "dict" in node:
            return {self._key(self.decode(k)): self.decode(v) for k, v in node["dict"]}
        if "csr" in node:
            data, indices, indptr, shape = node["csr"]
            try:
                return sp.csr_matrix((self.decode(data), self.decode(indices),
                                      self.decode(indptr)), shape=tuple(shape))
            except (TypeError, ValueError) as exc:
                raise self.bad(f"a sparse matrix is malformed: {exc}") from None
        if "derived" in node:
            return _Derived(self.decode(node["derived"]))
        if "estimator" in node:
            return self.estimator(node["estimator"], node.get("state"))
        raise self.bad("an unknown node")

    def _key(self, key):
        if isinstance(key, (list, dict, np.ndarray)):
            raise self.bad("a dictionary key is not a scalar")
        return key

    def estimator(self, name, state):
        registry = _registry()
        if name not in registry:
            raise self.bad(f"unknown estimator {name!r}")
        cls = registry[name]
        attributes = self.decode(state)
        if not isinstance(attributes, dict) or not all(isinstance(k, str) for k in attributes):
            raise self.bad("an estimator's state is not a mapping of attributes")
        estimator = cls.__new__(cls)
        estimator.__dict__.update(attributes)
        try:
            estimator._restore()
        except ValueError as exc:
            raise self.bad(f"inconsistent {name}: {exc}") from None
        except (TypeError, KeyError, AttributeError, IndexError) as exc:
            raise self.bad(f"inconsistent {name}: {type(exc).__name__}: {exc}") from None
        return estimator


def load(path):
    """Read a model written by ``save``.

    Parameters
    ----------
    path : str or path-like
        The model file.

    Returns
    -------
    estimator : fastgen estimator
        The fitted model, exactly as saved.

    Raises
    ------
    ValueError
        If the file is truncated, corrupted (checksum), not a fastgen model file, or written by a
        newer format version.
    """
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < _PREFIX.size + _DIGEST or not blob.startswith(MAGIC):
        raise ValueError(f"{path}: not a fastgen model file (no fastgen header).")
    _, version, header_length = _PREFIX.unpack_from(blob)
    if version > FORMAT_VERSION:
        raise ValueError(f"{path}: written by a newer fastgen (model file format {version}; this "
                         f"fastgen reads up to {FORMAT_VERSION}). Upgrade fastgen to load it.")
    if version < 1:
        raise ValueError(f"{path}: not a valid fastgen model file (format version {version}).")
    body, digest = blob[:-_DIGEST], blob[-_DIGEST:]
    if hashlib.sha256(body).digest() != digest:
        raise ValueError(f"{path}: the model file is truncated or corrupted (checksum mismatch).")
    start = _PREFIX.size
    if start + header_length > len(body):
        raise ValueError(f"{path}: the model file is truncated (header past the end).")
    try:
        header = json.loads(body[start:start + header_length].decode("utf-8"))
        name, state, arrays = header["class"], header["state"], header["arrays"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
        raise ValueError(f"{path}: not a valid fastgen model file (malformed header).") from None
    reader = _Reader(arrays, memoryview(body)[start + header_length:].tobytes(), path)
    return reader.estimator(name, state)
