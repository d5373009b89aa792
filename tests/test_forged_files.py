"""Forged model files: ``fastgen.load`` must validate every field of a file it is given.

The SHA-256 at the end of a model file only guards against accidents: whoever forges a file
recomputes it. So a file with a valid checksum can still claim anything -- NaN or negative
counts, integer "pointers" past the end of the arrays, shapes of terabytes, a ``n_features_in_``
of 2**63, fields missing, unknown fields naming private attributes. Loading must check all of
it and never hand the compiled kernels inconsistent data (they index unchecked: a bad pointer is
a segfault or an out-of-bounds write, not an exception).

Required outcome for every forged file, checked by ``judge``:

* ``fastgen.load`` raises ``ValueError`` -- any other exception escaping (TypeError, KeyError,
  IndexError, OverflowError, MemoryError, AttributeError, a RuntimeWarning of fastgen's, which
  the project's pytest configuration makes an error, ...) is a bug; or
* it returns a *sound* model: ``predict_proba`` on valid input is finite with rows summing to 1,
  ``predict_joint_log_proba`` has no NaN; and a following ``partial_fit`` on valid data (labels
  from the model's ``classes_``) and a ``merge`` with a freshly fitted model of the same kind, in
  both directions, raise nothing but ``ValueError`` and leave sound models.
* never a crash or a hang.

Only the container is assumed, not the header's layout (which changes with the format version):
``b"FASTGEN\\x00"``, format version (uint32 LE), header length H (uint64 LE), H bytes of JSON,
the array data, SHA-256 of everything before it. The header's ``"arrays"`` lists
``{"dtype", "shape", "offset", "nbytes"}`` (offsets into the array data) and any node
``{"array": i}`` elsewhere refers to ``arrays[i]``; everything else is JSON scalars, lists and
dicts. A *mapping* is a JSON object, or a list of ``[str key, value]`` pairs.

The toolkit (``ModelFile``) reads a saved file, enumerates its array nodes, numeric scalars,
mappings and nodes, replaces arrays consistently at the container level (new bytes appended,
dtype/shape/offset/nbytes fixed up) and writes the file back with a recomputed checksum. The
mutations (``forgeries``) are made per model (the models of ``test_persist.py``, fitted on 60 rows)
and per kind; every array node gets every kind, the variants of a kind rotate over the nodes
except for integer arrays, which get them all (``FASTGEN_FORGE_ALL=1``: every variant of every
kind on every node). The issue's crashes
are pinned generically: integer arrays out of range, indptr-like arrays made non-monotone,
private attributes smuggled into the estimator's state. A Hypothesis test draws further
forgeries (``FASTGEN_HYPOTHESIS_EXAMPLES`` raises its example count).

Diagnosis (a segfault kills pytest): ``FASTGEN_FORGE_ISOLATE=1`` runs each battery in child
processes, a crash then failing only the forged file it happened on; or tabulate every forged
file's outcome for one model (``--isolate``: in children restarted after a crash)::

    PYTHONPATH=. python tests/test_forged_files.py MultinomialNB0 [kind ...] [--isolate] [--all]
    PYTHONPATH=. python tests/test_forged_files.py MultinomialNB0 nan --write out.fastgen LABEL
"""
from __future__ import annotations

import copy
import faulthandler
import gc
import hashlib
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import warnings
import zlib
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fastgen
from _memory import cap_address_space
from fastgen.data import load_sms_spam
from test_persist import CASES as PERSIST_CASES
from test_persist import IDS as PERSIST_IDS
from test_persist import Y as PERSIST_Y

N_ROWS = 60
FORGE_ALL = os.environ.get("FASTGEN_FORGE_ALL", "") not in ("", "0")
# each battery in child processes, so that a crash is one failed case, not the end of the run
ISOLATE = os.environ.get("FASTGEN_FORGE_ISOLATE", "") not in ("", "0")
HANG_SECONDS = 60  # one forged file (load, predict, partial_fit, merge) taking longer is a hang
ADDRESS_SPACE_CAP = 8 * 2**30  # a table sized by a forged dimension fails fast, not the machine
RELATIVE = 1e-6  # posterior rows sum to 1 within this

# ---------------------------------------------------------------------------------------
# the models: test_persist's cases on 60 rows


@dataclass(frozen=True)
class Case:
    id: str
    make: Callable
    X: object
    y: np.ndarray

    def fitted(self):
        return self.make().fit(self.X, self.y)


CASES = {id_: Case(id_, make, X[:N_ROWS], PERSIST_Y[:N_ROWS])
         for id_, (make, X) in zip(PERSIST_IDS, PERSIST_CASES)}
# semi-supervised EM: a model within a model, fitted on a third of the labels (the rest -1)
SEMI_Y = PERSIST_Y[:N_ROWS].astype(object)
SEMI_Y[N_ROWS // 3:] = -1
for _i in (0, 4, 9, 10):  # MultinomialNB, GaussianNB, QDA, MixedNB
    _make, _X = PERSIST_CASES[_i]
    CASES[f"SemiSupervised{_i}"] = Case(
        f"SemiSupervised{_i}", lambda make=_make: fastgen.SemiSupervised(make()),
        _X[:N_ROWS], SEMI_Y)
CASE_IDS = list(CASES)


@lru_cache(maxsize=None)
def _fitted(case_id):
    """(the fitted model's bytes as saved, its attributes as fit left them)."""
    case = CASES[case_id]
    model = case.fitted()
    live = dict(vars(model))  # before saving: saving may fold caches into statistics
    path = os.path.join(_scratch(), f"{case_id}.original")
    model.save(path)
    with open(path, "rb") as f:
        return f.read(), live


def original(case_id) -> ModelFile:
    """A fresh (mutable) copy of the model file of ``case_id``."""
    return ModelFile.parse(_fitted(case_id)[0])


def live_attributes(case_id):
    return _fitted(case_id)[1]


_SCRATCH = []  # the temporary directory the files are written to (removed at exit)


def _scratch():
    """The directory forged files are written to: a child process uses its parent's (it may
    crash before it could remove its own)."""
    if not _SCRATCH:
        _SCRATCH.append(os.environ.get("FASTGEN_FORGE_SCRATCH")
                        or tempfile.TemporaryDirectory(prefix="fastgen-forged-"))
    return getattr(_SCRATCH[0], "name", _SCRATCH[0])


# ---------------------------------------------------------------------------------------
# the forging toolkit

PREFIX = struct.Struct("<8sIQ")
MAGIC = b"FASTGEN\x00"
DIGEST = 32


def walk(node, path=()):
    """Every node of a JSON tree with its path (keys and list indices), pre-order."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, path + (index,))


def get_at(root, path):
    for step in path:
        root = root[step]
    return root


def set_at(root, path, value):
    get_at(root, path[:-1])[path[-1]] = value


def delete_at(root, path):
    del get_at(root, path[:-1])[path[-1]]


def is_array_node(node):
    return isinstance(node, dict) and isinstance(node.get("array"), int) and \
        not isinstance(node.get("array"), bool)


def is_pair_mapping(node):
    return isinstance(node, list) and len(node) > 0 and all(
        isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) for item in node)


def show(path):
    return "/".join(map(str, path)) or "<root>"


@dataclass
class ModelFile:
    """A model file taken apart: format version, header (JSON tree), array data."""
    version: int
    header: dict
    data: bytes

    @classmethod
    def parse(cls, blob):
        magic, version, length = PREFIX.unpack_from(blob)
        body = blob[:-DIGEST]
        assert magic == MAGIC and hashlib.sha256(body).digest() == blob[-DIGEST:]
        header = json.loads(body[PREFIX.size:PREFIX.size + length])
        return cls(version, header, bytes(body[PREFIX.size + length:]))

    def to_bytes(self):
        """The file, with a checksum that matches whatever was forged, laid out as fastgen's
        writer lays it out, so that the forgery, not the layout, is what load judges: the
        arrays' bytes end to end in the order of their entries, an entry that no node refers
        to dropped (a forgery that moved a node to another array leaves one, and a re-encoded
        array leaves its old bytes behind). An entry whose offset or size the forgery made
        malformed is kept as it is."""
        header, data = self.laid_out()
        header = json.dumps(header).encode("utf-8")
        body = PREFIX.pack(MAGIC, self.version, len(header)) + header + data
        return body + hashlib.sha256(body).digest()

    def laid_out(self):
        """(header, data) as to_bytes writes them."""
        header = copy.deepcopy(self.header)
        entries = header.get("arrays")
        if not isinstance(entries, list):
            return header, self.data
        nodes = [node for path, node in walk(header) if path[:1] != ("arrays",)
                 and isinstance(node, dict) and set(node) == {"array"}
                 and type(node["array"]) is int]  # (a forged reference of another type stays)
        used = {node["array"] for node in nodes}
        kept, new_index, data = [], {}, b""
        for i, entry in enumerate(entries):
            if i not in used:
                continue
            new_index[i] = len(kept)
            offset, nbytes = (entry.get("offset"), entry.get("nbytes")) \
                if isinstance(entry, dict) else (None, None)
            if type(offset) is int and type(nbytes) is int and 0 <= offset and \
                    0 <= nbytes and offset + nbytes <= len(self.data):
                entry = {**entry, "offset": len(data)}
                data += self.data[offset:offset + nbytes]
            kept.append(entry)
        for node in nodes:
            if node["array"] in new_index:
                node["array"] = new_index[node["array"]]
        header["arrays"] = kept
        return header, data

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    # ------------------------------------------------------------------ arrays
    @property
    def entries(self):
        return self.header["arrays"]

    def array(self, index):
        entry = self.entries[index]
        dtype, shape = np.dtype(entry["dtype"]), tuple(entry["shape"])
        return np.frombuffer(self.data, dtype=dtype, count=math.prod(shape),
                             offset=entry["offset"]).reshape(shape).copy()

    def put_raw(self, index, dtype, shape, raw):
        """arrays[index] becomes ``raw`` (appended to the data) with this dtype and shape."""
        self.entries[index].update(dtype=dtype, shape=list(shape), offset=len(self.data),
                                   nbytes=len(raw))
        self.data += raw

    def put_array(self, index, values):
        """arrays[index] becomes ``values``, encoded in their own dtype (little-endian unless
        the dtype says otherwise)."""
        values = np.ascontiguousarray(values)
        if values.dtype.byteorder == "=":
            values = values.astype(values.dtype.newbyteorder("<"))
        self.put_raw(index, values.dtype.str, values.shape, values.tobytes())

    def add_array(self, values):
        """A new entry of ``arrays`` holding ``values``; returns the node referring to it."""
        self.entries.append({})
        self.put_array(len(self.entries) - 1, values)
        return {"array": len(self.entries) - 1}

    # ------------------------------------------------------------------ the tree outside "arrays"
    def nodes(self):
        """(path, node) of every node of the header except the array table."""
        for path, node in walk(self.header):
            if path[:1] != ("arrays",):
                yield path, node

    def array_nodes(self):
        """(path, index) of every ``{"array": i}`` node."""
        return [(path, node["array"]) for path, node in self.nodes() if is_array_node(node)]

    def scalars(self):
        """Paths of the numeric scalars (not bools, not array references)."""
        return [path for path, node in self.nodes()
                if isinstance(node, (int, float)) and not isinstance(node, bool)
                and not (path[-1] == "array" and is_array_node(get_at(self.header, path[:-1])))]

    def mappings(self):
        """(path, keys) of every mapping: JSON object or list of [str key, value] pairs."""
        found = []
        for path, node in self.nodes():
            if isinstance(node, dict):
                found.append((path, list(node)))
            elif is_pair_mapping(node):
                found.append((path, [key for key, _ in node]))
        return found

    def remove_key(self, path, key):
        mapping = get_at(self.header, path)
        if isinstance(mapping, dict):
            del mapping[key]
        else:
            mapping[:] = [pair for pair in mapping if pair[0] != key]

    def add_key(self, path, key, value):
        mapping = get_at(self.header, path)
        if isinstance(mapping, dict):
            mapping[key] = value
        else:
            mapping.append([key, value])

    def encode(self, value):
        """A live attribute value as plain JSON: arrays become new array nodes, tuples and
        lists JSON lists, sparse matrices [data, indices, indptr, shape]. None if it has no
        such form."""
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, (np.integer, np.floating, np.bool_)):
            return value.item()
        if isinstance(value, np.ndarray) and value.dtype.kind in "biufU":
            return self.add_array(value)
        if sp.issparse(value):
            csr = sp.csr_matrix(value)
            return [self.add_array(csr.data), self.add_array(csr.indices),
                    self.add_array(csr.indptr), list(csr.shape)]
        if isinstance(value, (tuple, list)):
            items = [self.encode(v) for v in value]
            return None if any(i is None and v is not None for i, v in zip(items, value)) \
                else items
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            items = {k: self.encode(v) for k, v in value.items()}
            return None if any(items[k] is None and v is not None for k, v in value.items()) \
                else items
        return None


# ---------------------------------------------------------------------------------------
# the required outcome


class Failure(Exception):
    """A forged file was not handled as required: ``kind`` names the failure for the tables."""

    def __init__(self, kind, detail=""):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


def unsound(model, X, n_rows):
    """Why ``model`` is not sound on the valid input X, or None."""
    try:
        P = np.asarray(model.predict_proba(X), dtype=np.float64)
        J = np.asarray(model.predict_joint_log_proba(X), dtype=np.float64)
        n_classes = len(model.classes_)
    except Exception as exc:  # noqa: BLE001 - even a ValueError: the input is valid...
        if sp.issparse(X) and "sparse X cannot be binarized" in str(exc):
            # ...except for a BernoulliNB whose (valid) negative threshold takes dense X only
            return unsound(model, X.toarray(), n_rows)
        if "when binarize=None" in str(exc):
            # ...or one whose binarize=None (valid) takes binary X only
            return unsound(model, (X > 0).astype(np.float64), n_rows)
        return f"predict raises {type(exc).__name__}", str(exc)[:200]
    if P.shape != (n_rows, n_classes) or J.shape != (n_rows, n_classes):
        return "outputs of the wrong shape", f"{P.shape}, {J.shape}, {n_classes} classes"
    if np.isnan(P).any():
        return "NaN posterior", ""
    if not np.isfinite(P).all() or (P < 0).any() or (P > 1 + RELATIVE).any():
        return "posterior out of [0, 1]", f"{P.min()}..{P.max()}"
    if not np.allclose(P.sum(axis=1), 1.0, rtol=RELATIVE, atol=0):
        return "posterior rows do not sum to 1", f"{P.sum(axis=1)[:4]}"
    if np.isnan(J).any():
        return "NaN joint log-likelihood", ""
    return None


STEP_HOOK = None  # told each step before it runs (the child process: to name a crash's step)


def _check_sound(model, case, when):
    if STEP_HOOK:
        STEP_HOOK(f"predict {when}")
    problem = unsound(model, case.X, N_ROWS)
    if problem is not None:
        raise Failure(f"{problem[0]} {when}", problem[1])


def _step(call, what):
    """Run a step that may refuse (ValueError) but must not fail otherwise."""
    if STEP_HOOK:
        STEP_HOOK(what)
    try:
        call()
    except ValueError:
        pass
    except Exception as exc:  # noqa: BLE001
        raise Failure(f"{type(exc).__name__} escapes {what}", str(exc)[:200]) from None


def judge(case, forged: ModelFile):
    """'refused' or 'accepted' if the forged file is handled as required, else Failure."""
    path = os.path.join(_scratch(), f"{case.id}.forged")
    forged.write(path)
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # as the project's pytest configuration: fastgen's RuntimeWarnings are errors
            warnings.filterwarnings("error", category=RuntimeWarning, module="fastgen.*")
            if STEP_HOOK:
                STEP_HOOK("load")
            try:
                model = fastgen.load(path)
            except ValueError:
                return "refused"
            except Exception as exc:  # noqa: BLE001
                raise Failure(f"{type(exc).__name__} escapes load", str(exc)[:200]) from None
            _check_sound(model, case, "after load")
            y = np.asarray(model.classes_)[np.arange(N_ROWS) % len(model.classes_)]
            _step(lambda: model.partial_fit(case.X, y), "partial_fit")
            _check_sound(model, case, "after partial_fit")
            if isinstance(model, fastgen.SemiSupervised):  # (no merge: not a sum of statistics)
                return "accepted"
            _step(lambda: model.merge(case.fitted()), "merge")
            _check_sound(model, case, "after merge")
            fresh = case.fitted()
            _step(lambda: fresh.merge(model), "merge into a fresh model")
            _check_sound(fresh, case, "after a fresh model merged it")
            return "accepted"
    finally:
        faulthandler.cancel_dump_traceback_later()


# ---------------------------------------------------------------------------------------
# the mutations

NAN, INF = float("nan"), float("inf")
# value kind -> the values (a callable maps the old values); each goes to every element, the
# first or the last one. Integer-only values apply to integer arrays only.
VALUE_KINDS = {
    "nan": [NAN],
    "posinf": [INF],
    "neginf": [-INF],
    "negative": [-1, -1e300],
    "fraction": [lambda x: x + 0.5],
    "huge": [1e308, 2**62],
}
WHERE = ("all", "first", "last")
SHAPE_VARIANTS = ("longer", "shorter", "wider", "narrower", "flat", "transposed", "more_dims",
                  "scalar", "empty")
DTYPE_VARIANTS = ("float32", "int64", "bool", "unicode", "big_endian", "object", "void",
                  "complex", "datetime", "bytes", "json_list")
DIMS_VARIANTS = ("tera_2d", "tera_2d_consistent", "tera_1d_consistent", "first_dim_tera",
                 "wraps_2**64", "wraps_2**63x2", "zero_by_huge", "negative_pair")
ENTRY_VARIANTS = ("offset_negative", "offset_past_end", "offset_2**64", "nbytes_2**64",
                  "nbytes_off_by_one", "shape_fraction", "shape_null", "shape_text", "shape_nested",
                  "dtype_null", "dtype_bogus", "dtype_object", "no_dtype", "no_shape",
                  "no_offset", "no_nbytes")
REFERENCE_VARIANTS = ("minus_one", "past_end", "2**63", "text", "fraction", "other_array")
SCALAR_VALUES = (10**12, -1, 0, 1.5, 2**63, 1e308, NAN)
UNKNOWN_KEY = "__forged__"
ARRAY_KINDS = (*VALUE_KINDS, "zero", "shape", "dtype", "dims", "entry", "reference", "null",
               "drop")
HEADER_KINDS = ("scalar", "remove_key", "unknown_key", "null_node")
REGRESSION_KINDS = ("int_out_of_range", "pointer_non_monotone", "smuggled_attribute")
KINDS = ARRAY_KINDS + HEADER_KINDS + REGRESSION_KINDS


@dataclass(frozen=True)
class Forgery:
    label: str
    apply: Callable[[ModelFile], None]  # mutates a copy of the original file

    def __repr__(self):
        return self.label

    def make(self, case_id):
        forged = original(case_id)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            self.apply(forged)
        return forged


def _numeric_base(a):
    """A float64 stand-in for an array that cannot hold the forged values."""
    if a.dtype.kind in "biuf":
        return a.astype(np.float64)
    return np.arange(a.size, dtype=np.float64).reshape(a.shape)


def with_value(a, value, where):
    """``a`` with ``value`` (or value(old)) at ``where`` ("all", "first", "last" or a flat
    position); the dtype widens (to int64, else float64) when it cannot hold the value."""
    if isinstance(value, int) and a.dtype.kind in "iu":
        fits = [dt for dt in (a.dtype, np.dtype(np.int64))
                if np.iinfo(dt).min <= value <= np.iinfo(dt).max]
        out = a.astype(fits[0]) if fits else a.astype(np.float64)
    elif a.dtype.kind == "f":
        out = a.copy()
    else:
        out = _numeric_base(a)
    if out.size == 0:
        return out
    flat = out.reshape(-1)  # a view: out is a fresh contiguous array
    index = {"all": slice(None), "first": 0, "last": -1}.get(where, where)
    flat[index] = value(flat[index]) if callable(value) else value
    return out


def _resize_axis(a, axis, delta):
    if a.ndim == 0:
        a = a.reshape(1)
    if delta < 0:
        return np.take(a, np.arange(max(a.shape[axis] + delta, 0)), axis=axis)
    if a.shape[axis] == 0:
        shape = list(a.shape)
        shape[axis] = delta
        return np.zeros(shape, dtype=a.dtype)
    pad = [(0, 0)] * a.ndim
    pad[axis] = (0, delta)
    return np.pad(a, pad, mode="edge")


def reshaped(a, variant):
    """``a`` with a wrong shape (the values stay plausible: edges repeated)."""
    if variant == "longer":
        return _resize_axis(a, 0, 1)
    if variant == "shorter":
        return _resize_axis(a, 0, -1)
    if variant == "wider":
        return _resize_axis(a, -1, 1) if a.ndim > 1 else _resize_axis(a, 0, 2)
    if variant == "narrower":
        return _resize_axis(a, -1, -1) if a.ndim > 1 else _resize_axis(a, 0, -2)
    if variant == "flat":
        return a.reshape(-1) if a.ndim != 1 else a.reshape(1, -1)
    if variant == "transposed":
        return a.T.copy() if a.ndim > 1 and a.shape[0] != a.shape[-1] else a.reshape(-1, 1)
    if variant == "more_dims":
        return a.reshape(a.shape + (1,))
    if variant == "scalar":
        return (a.reshape(-1)[:1] if a.size else np.zeros(1, a.dtype)).reshape(())
    if variant == "empty":
        return np.zeros((0,) + a.shape[1:], dtype=a.dtype)
    raise AssertionError(variant)


def retyped(forged, index, node_path, variant):
    """The array in another dtype (the values converted where they can be)."""
    a = forged.array(index)
    numbers = np.nan_to_num(_numeric_base(a), posinf=1e300, neginf=-1e300)
    if variant == "float32":
        forged.put_array(index, numbers.astype(np.float32))
    elif variant == "int64":
        forged.put_array(index, np.clip(numbers, -2**62, 2**62).astype(np.int64))
    elif variant == "bool":
        forged.put_array(index, numbers != 0)
    elif variant == "unicode":
        forged.put_array(index, a.astype(str) if a.size else np.zeros(a.shape, "<U1"))
    elif variant == "big_endian":  # legal: the same values, other byte order
        forged.put_array(index, a.astype(a.dtype.newbyteorder(">")))
    elif variant == "object":  # pointers made up by the file
        forged.put_raw(index, "|O", a.shape, b"\x41" * (8 * a.size))
    elif variant == "void":
        forged.put_raw(index, f"|V{a.dtype.itemsize}", a.shape, a.tobytes())
    elif variant == "complex":
        forged.put_array(index, numbers.astype(np.complex128))
    elif variant == "datetime":
        forged.put_raw(index, "<M8[s]", a.shape, np.clip(numbers, -2**62, 2**62)
                       .astype("<i8").tobytes())
    elif variant == "bytes":
        forged.put_array(index, np.char.encode(a.astype(str), "utf-8") if a.size
                         else np.zeros(a.shape, "S1"))
    elif variant == "json_list":  # the values inline in the header instead of an array
        set_at(forged.header, node_path, a.tolist() if a.dtype.kind != "f"
               else np.nan_to_num(a, nan=0.0, posinf=1e308, neginf=-1e308).tolist())
    else:
        raise AssertionError(variant)


def redimensioned(forged, index, variant):
    """An entry claiming enormous (or impossible) dimensions; the data stays as it was."""
    entry = forged.entries[index]
    itemsize = np.dtype(entry["dtype"]).itemsize
    size = math.prod(entry["shape"])
    if variant == "tera_2d":
        entry["shape"] = [2**40, 2**40]
    elif variant == "tera_2d_consistent":
        entry.update(shape=[2**40, 2**40], nbytes=itemsize * 2**80)
    elif variant == "tera_1d_consistent":
        entry.update(shape=[2**40], nbytes=itemsize * 2**40)
    elif variant == "first_dim_tera":
        shape = list(entry["shape"]) or [1]
        shape[0] = 2**40
        entry.update(shape=shape, nbytes=itemsize * math.prod(shape))
    elif variant == "wraps_2**64":  # the element count overflows int64 to 0
        entry.update(shape=[2**32, 2**32], nbytes=0)
    elif variant == "wraps_2**63x2":
        entry.update(shape=[2**63, 2], nbytes=0)
    elif variant == "zero_by_huge":  # no bytes, one huge dimension
        entry.update(shape=[0, 2**62], nbytes=0)
    elif variant == "negative_pair":  # the product is the right element count
        entry.update(shape=[-1, -max(size, 1)], nbytes=itemsize * max(size, 1))
    else:
        raise AssertionError(variant)


def malformed_entry(forged, index, variant):
    """The container's entry for the array with a field missing or malformed."""
    entry = forged.entries[index]
    field, _, what = variant.partition("_")
    if field == "no":
        del entry[what]
        return
    value = {
        "offset_negative": -8, "offset_past_end": len(forged.data) + 8, "offset_2**64": 2**64,
        "nbytes_2**64": 2**64, "nbytes_off_by_one": entry["nbytes"] - 1 if entry["nbytes"] else 1,
        "shape_fraction": [1.5], "shape_null": None, "shape_text": "3",
        "shape_nested": [[1, 2]], "dtype_null": None, "dtype_bogus": "<f3",
        "dtype_object": "|O",
    }[variant]
    entry[field] = value


def re_referenced(forged, node_path, index, variant, k):
    """The array node refers to no array, or to another one."""
    n = len(forged.entries)
    value = {"minus_one": -1, "past_end": n, "2**63": 2**63, "text": str(index),
             "fraction": index + 0.5, "other_array": (index + 1 + k) % n}[variant]
    set_at(forged.header, node_path + ("array",), value)


def _drop(forged, path):
    if len(path) >= 2 and path[-1] == 1 and is_pair_mapping(get_at(forged.header, path[:-2])):
        # the value of a [key, value] pair: the pair goes (a missing field)
        delete_at(forged.header, path[:-1])
    else:
        delete_at(forged.header, path)


def _rotate(variants, k, salt, every=False):
    """Deterministic choice of the variants to run for the k-th node (all of them if
    ``every`` or with FORGE_ALL)."""
    if every or FORGE_ALL:
        return list(variants)
    return [variants[(k + zlib.crc32(salt.encode())) % len(variants)]]


def _array_variants(kind, a):
    if kind in VALUE_KINDS:
        values = [v for v in VALUE_KINDS[kind]
                  if not (isinstance(v, int) and abs(v) > 2**53 and a.dtype.kind not in "iu")]
        return [(v, where) for v in values for where in WHERE]
    return {"zero": ["all"], "shape": SHAPE_VARIANTS, "dtype": DTYPE_VARIANTS,
            "dims": DIMS_VARIANTS, "entry": ENTRY_VARIANTS, "reference": REFERENCE_VARIANTS,
            "null": ["null"], "drop": ["drop"]}[kind]


def _variant_name(variant):
    if isinstance(variant, tuple):
        value, where = variant
        value = "x+0.5" if callable(value) else repr(value)
        return f"{value}@{where}"
    return str(variant)


def _array_forgery(kind, path, index, variant, k):
    def apply(forged):
        if kind in VALUE_KINDS:
            value, where = variant
            forged.put_array(index, with_value(forged.array(index), value, where))
        elif kind == "zero":
            forged.put_array(index, np.zeros_like(forged.array(index)))
        elif kind == "shape":
            forged.put_array(index, reshaped(forged.array(index), variant))
        elif kind == "dtype":
            retyped(forged, index, path, variant)
        elif kind == "dims":
            redimensioned(forged, index, variant)
        elif kind == "entry":
            malformed_entry(forged, index, variant)
        elif kind == "reference":
            re_referenced(forged, path, index, variant, k)
        elif kind == "null":
            set_at(forged.header, path, None)
        elif kind == "drop":
            _drop(forged, path)
    return Forgery(f"{kind} {_variant_name(variant)} at {show(path)} (arrays[{index}])", apply)


def _is_pointer(a):
    """An indptr-like array: 1-D integers from 0, non-decreasing."""
    return a.dtype.kind in "iu" and a.ndim == 1 and len(a) >= 2 and a[0] == 0 and \
        bool(np.all(np.diff(a.astype(np.int64)) >= 0))


def _regression_forgeries(case_id, kind, base):
    """The issue's crashes, made generic (see the tests that run them)."""
    found = []
    if kind == "int_out_of_range":
        # _listed_counts' class_ptr = [0, 1, 10**9]; its feature entries all 10**9
        for path, index in base.array_nodes():
            a = base.array(index)
            if a.dtype.kind not in "iu":
                continue
            for value, where in ((10**9, "last"), (10**9, "all"), (-1, "first"),
                                 (2**31, "last"), (-2**62, "all")):
                found.append(Forgery(
                    f"{kind} {value}@{where} at {show(path)} (arrays[{index}])",
                    lambda f, i=index, v=value, w=where: f.put_array(
                        i, with_value(f.array(i), v, w))))
    elif kind == "pointer_non_monotone":
        # _length_count's indptr = [0, 10**7, 2]
        for path, index in base.array_nodes():
            a = base.array(index)
            if not _is_pointer(a):
                continue
            forged_pointers = {"[0, 10**7, ...]": lambda a: np.r_[a[:1], 10**7, a[2:]],
                               "reversed tail": lambda a: np.r_[a[:1], a[1:][::-1]],
                               "last past the end": lambda a: np.r_[a[:-1], a[-1] + 10**9],
                               "steps back to 0": lambda a: np.r_[a[:-1], 0]}
            for name, make in forged_pointers.items():
                found.append(Forgery(
                    f"{kind} {name} at {show(path)} (arrays[{index}])",
                    lambda f, i=index, m=make: f.put_array(
                        i, m(f.array(i)).astype(f.array(i).dtype))))
    elif kind == "smuggled_attribute":
        # attributes the live model holds (or its class declares) that the file does not carry,
        # e.g. _listed_counts, smuggled into every mapping that holds the estimator's attributes:
        # as the live model had them, and with their integers out of range
        live = live_attributes(case_id)
        cls = type(CASES[case_id].make())
        declared = {name: getattr(cls, name) for name in dir(cls)
                    if name.startswith("_") and not name.startswith("__")
                    and not callable(getattr(cls, name))
                    and not isinstance(getattr(cls, name), property)}
        candidates = {**declared, **live}
        for path, keys in base.mappings():
            if len(set(keys) & set(live)) < 2:
                continue  # not a mapping of the estimator's attributes
            for name, value in candidates.items():
                if name in keys:
                    continue
                for how in ("as live", "ints 10**9 at last", "ints all 10**9"):
                    found.append(Forgery(f"{kind} {name} ({how}) into {show(path)}",
                                         lambda f, p=path, n=name, v=value, h=how:
                                         _smuggle(f, p, n, v, h)))
    return found


def _smuggle(forged, path, name, value, how):
    """Add attribute ``name`` to the mapping at ``path``, holding ``value`` (a live model's) in
    plain JSON, its integer arrays set to 10**9 unless ``how`` is "as live"."""
    node = forged.encode(value)
    if value is not None and node is None:  # no JSON form: integers stand in for it
        node = [forged.add_array(np.arange(4, dtype=np.intp))]
    if how != "as live":
        where = "last" if how.endswith("last") else "all"
        for _, sub in walk(node):
            if is_array_node(sub):
                a = forged.array(sub["array"])
                if a.dtype.kind in "iu":
                    forged.put_array(sub["array"], with_value(a, 10**9, where))
    forged.add_key(path, name, node)


@lru_cache(maxsize=None)
def forgeries(case_id, kind):
    """The forged files of one kind for one model, as a list of Forgery."""
    base = original(case_id)
    found = []
    if kind in ARRAY_KINDS:
        for k, (path, index) in enumerate(base.array_nodes()):
            a = base.array(index)
            # integer arrays (indices, pointers, sizes) are what kernels index memory with:
            # they get every variant
            for variant in _rotate(_array_variants(kind, a), k, f"{case_id} {kind}",
                                   every=a.dtype.kind in "iu"):
                found.append(_array_forgery(kind, path, index, variant, k))
    elif kind == "scalar":
        for path in base.scalars():
            for value in SCALAR_VALUES:
                found.append(Forgery(f"scalar {value!r} at {show(path)}",
                                     lambda f, p=path, v=value: set_at(f.header, p, v)))
    elif kind == "remove_key":
        for path, keys in base.mappings():
            for key in keys:
                found.append(Forgery(f"remove {key!r} from {show(path)}",
                                     lambda f, p=path, key=key: f.remove_key(p, key)))
    elif kind == "unknown_key":
        for path, _ in base.mappings():
            for value in (1, None):
                found.append(Forgery(f"unknown key ({value!r}) in {show(path)}",
                                     lambda f, p=path, v=value: f.add_key(p, UNKNOWN_KEY, v)))
    elif kind == "null_node":
        for path, node in base.nodes():
            if path and not is_array_node(node) and not (
                    path[-1] == "array" and is_array_node(get_at(base.header, path[:-1]))):
                found.append(Forgery(f"null at {show(path)}",
                                     lambda f, p=path: set_at(f.header, p, None)))
    else:
        found = _regression_forgeries(case_id, kind, base)
    return found


def run_forgery(case_id, forgery):
    """(outcome, detail): outcome is 'refused', 'accepted' or a failure kind."""
    try:
        return judge(CASES[case_id], forgery.make(case_id)), ""
    except Failure as failure:
        return failure.kind, str(failure)


def battery(case_id, kind):
    """Every forged file of one kind for one model: [(label, outcome, detail)]."""
    return [(f.label, *run_forgery(case_id, f)) for f in forgeries(case_id, kind)]


def assert_battery(case_id, kind):
    """Fail with a table of what went wrong, if any forged file was not handled as required."""
    if not forgeries(case_id, kind):
        pytest.skip(f"no {kind!r} forgery applies to {case_id}'s file")
    results = isolated_battery(case_id, kind) if ISOLATE else battery(case_id, kind)
    failures = [(label, outcome, detail) for label, outcome, detail in results
                if outcome not in ("refused", "accepted")]
    if failures:
        counts = Counter(outcome for _, outcome, _ in failures)
        lines = [f"{len(failures)} of {len(results)} forged files of kind {kind!r} for "
                 f"{case_id} not handled as required:"]
        lines += [f"  {n} x {outcome}" for outcome, n in counts.most_common()]
        lines += [f"    {label}: {detail}" for label, _, detail in failures[:40]]
        pytest.fail("\n".join(lines), pytrace=False)


# ---------------------------------------------------------------------------------------
# the tests


@pytest.fixture(scope="module", autouse=True)
def _bounded_memory():
    """A table sized by a forged dimension is a MemoryError here (a failure the report shows)
    rather than the machine paging or the OOM killer picking a process."""
    restore = _cap_address_space()
    yield
    restore()


def _cap_address_space():
    return cap_address_space(ADDRESS_SPACE_CAP)


by_model = pytest.mark.parametrize("case_id", CASE_IDS)


@by_model
def test_original_files_are_sound(case_id):
    """The toolkit itself: an untouched file, re-written with a recomputed checksum, loads."""
    base = original(case_id)
    assert base.array_nodes() and base.scalars() and base.mappings()
    again = ModelFile.parse(base.to_bytes())
    assert (again.version, again.header, again.data) == (base.version, base.header, base.data)
    for _, index in base.array_nodes():  # re-encoding an array changes nothing
        base.put_array(index, base.array(index))
    assert judge(CASES[case_id], base) == "accepted"


@by_model
@pytest.mark.parametrize("kind", ARRAY_KINDS)
def test_forged_arrays(case_id, kind):
    """Every array node: values (NaN, +-inf, negative, fractional, huge, all zero), shape,
    dtype, terabyte dimensions, malformed entries, references to other arrays, null, dropped."""
    assert_battery(case_id, kind)


@by_model
@pytest.mark.parametrize("kind", HEADER_KINDS)
def test_forged_header(case_id, kind):
    """Every numeric scalar of the header set to 10**12, -1, 0, 1.5, 2**63, ...; every key of
    every mapping removed; unknown keys added; every node set to null."""
    assert_battery(case_id, kind)


@by_model
def test_integer_arrays_out_of_range(case_id):
    """Issue: a file whose ``_listed_counts`` holds class_ptr = [0, 1, 10**9] segfaults on
    predict_proba; one whose ``feature`` entries hold 10**9 makes complement_counts write out
    of bounds. Generically: every integer array with out-of-range entries."""
    assert_battery(case_id, "int_out_of_range")


@by_model
def test_pointer_arrays_made_non_monotone(case_id):
    """Issue: a ``_length_count`` CSR with indptr = [0, 10**7, 2] crashes inside SciPy on a
    later merge() or partial_fit. Generically: every indptr-like array (integers from 0,
    non-decreasing) made non-monotone or pointing past the end."""
    assert_battery(case_id, "pointer_non_monotone")


@by_model
def test_smuggled_private_attributes(case_id):
    """A file cannot set attributes the format does not declare: the caches and private
    attributes of a live model (``_listed_counts`` of the issue, derived tables, ...), added to
    the mappings that hold the estimator's attributes, as they were and with out-of-range
    integers, are refused or ignored."""
    assert_battery(case_id, "smuggled_attribute")


# ----------------------------------------------------------------------- hypothesis

SPECIAL_NUMBERS = [0, 1, -1, 2, 0.5, -0.5, 2**31, 2**53 + 1, 2**62, 2**63, -2**63, 2**64,
                   10**9, 10**12, 1e308, -1e308, 5e-324, NAN, INF, -INF]
FORGED_DTYPES = ["<f8", "<f4", ">f8", "<i8", "<i4", ">i8", "|u1", "<u8", "|b1", "<U4", "<c16"]


def _json_values():
    scalars = st.one_of(st.none(), st.booleans(), st.sampled_from(SPECIAL_NUMBERS),
                        st.integers(-2**70, 2**70), st.floats(), st.text(max_size=4))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=2),
        st.builds(lambda i: {"array": i}, st.integers(-2, 60))), max_leaves=6)


def _short(value):
    if isinstance(value, np.ndarray):
        return f"{value.dtype.str}{list(value.shape)} " + np.array2string(
            value, threshold=8, edgeitems=2, max_line_width=200)
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) < 120 else text[:117] + "..."


@st.composite
def forged_files(draw):
    """(model, Forgery): one array, container entry or header node replaced by drawn values."""
    case_id = draw(st.sampled_from(CASE_IDS), label="model")
    base = original(case_id)
    target = draw(st.sampled_from(["elements", "array", "entry", "node"]), label="target")
    path, index = draw(st.sampled_from(base.array_nodes()), label="array node")
    where = f"arrays[{index}] at {show(path)}"
    if target == "elements":  # a few elements changed, the dtype kept when it can hold them
        old = base.array(index)
        edits = draw(st.lists(st.tuples(st.integers(0, max(old.size - 1, 0)),
                                        st.sampled_from(SPECIAL_NUMBERS)),
                              min_size=1, max_size=3), label="edits") if old.size else []
        label = f"elements {edits} of {where}"

        def apply(f):
            a = f.array(index)
            for position, value in edits:
                a = with_value(a, value, position)
            f.put_array(index, a)
    elif target == "array":  # the whole array replaced: drawn dtype, shape and values
        old = base.array(index)
        dtype = np.dtype(draw(st.sampled_from([old.dtype.str, *FORGED_DTYPES]), label="dtype"))
        shape = draw(st.one_of(st.just(old.shape),
                               hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)),
                     label="shape")
        values = draw(hnp.arrays(dtype, shape), label="values")
        label = f"{where} := {_short(values)}"

        def apply(f):
            f.put_array(index, values)
    elif target == "entry":  # the container's entry claims other things
        field = draw(st.sampled_from(["shape", "offset", "nbytes", "dtype"]), label="field")
        value = draw(st.one_of(
            st.lists(st.one_of(st.sampled_from(SPECIAL_NUMBERS), st.integers(-2, 2**70)),
                     max_size=3),
            st.sampled_from(SPECIAL_NUMBERS), st.sampled_from(FORGED_DTYPES + ["|O", "|V8"]),
            _json_values()), label="value")
        label = f"entry of arrays[{index}]: {field} := {_short(value)}"

        def apply(f):
            f.entries[index][field] = value
    else:  # any node of the header (scalar, mapping, array node) replaced
        node_path = draw(st.sampled_from([p for p, _ in base.nodes() if p]), label="node")
        value = draw(_json_values(), label="value")
        label = f"{show(node_path)} := {_short(value)}"

        def apply(f):
            set_at(f.header, node_path, value)
    return case_id, Forgery(label, apply)


@settings(deadline=None, derandomize=True, report_multiple_bugs=False,  # a crash reproduces
          max_examples=int(os.environ.get("FASTGEN_HYPOTHESIS_EXAMPLES", "60")),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(forged=forged_files())
def test_hypothesis_forged_files(forged):
    """Forged by Hypothesis: a model, an array (some elements, or all of it with a drawn dtype
    and shape), a container entry or any header node, and what replaces it."""
    case_id, forgery = forged
    outcome, detail = run_forgery(case_id, forgery)
    assert outcome in ("refused", "accepted"), f"{case_id}, {forgery.label}: {detail}"


# ---------------------------------------------------------------------------------------
# diagnosis: python tests/test_forged_files.py MODEL [KIND ...] [--isolate] [--all]


def _child(case_id, kind, start, stop):
    """Run forgeries[start:stop] of a battery, one JSON line per step and forged file (flushed,
    so that the parent knows where a crash happened). The garbage is collected after each forged
    file: memory it corrupted then shows at its own cleanup more often than at a later one."""
    global STEP_HOOK
    _cap_address_space()
    faulthandler.enable()
    STEP_HOOK = lambda step: print(json.dumps({"step": step}), flush=True)  # noqa: E731
    for i, forgery in enumerate(forgeries(case_id, kind)[start:stop], start):
        print(json.dumps({"i": i, "start": True}), flush=True)
        outcome, detail = run_forgery(case_id, forgery)
        STEP_HOOK("cleanup")
        gc.collect()
        print(json.dumps({"i": i, "outcome": outcome, "detail": detail}), flush=True)
    STEP_HOOK("exit")


def _innermost(stderr, n=4):
    """The innermost frames of faulthandler's dump, as 'function (file:line)'."""
    frames = []
    for line in stderr.splitlines():
        line = line.strip()
        if line.startswith('File "') and " in " in line:
            where, _, function = line.rpartition(" in ")
            filename = where.split('"')[1].rsplit("/", 1)[-1]
            frames.append(f"{function} ({filename}:{where.rpartition(' ')[2]})")
    return " < ".join(frames[:n])


def _run_child(case_id, kind, start, stop):
    """({index: (outcome, detail)}, crash) for forgeries[start:stop] run in a child process;
    crash is None or (index of the forged file it happened on or after, (outcome, detail))."""
    env = dict(os.environ, FASTGEN_FORGE_SCRATCH=tempfile.mkdtemp(dir=_scratch()),
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(fastgen.__file__)),
                                           os.path.dirname(__file__),
                                           os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, __file__, "--child", case_id, kind, str(start),
                           str(stop)], capture_output=True, text=True, env=env, check=False)
    done, current, last, step = {}, None, None, "?"
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        if "step" in record:
            step = record["step"]
        elif record.get("start"):
            current = record["i"]
        else:
            done[record["i"]] = (record["outcome"], record["detail"])
            current, last = None, record["i"]
    if proc.returncode == 0:
        return done, None
    if proc.returncode > 0 and "Timeout" not in proc.stderr:
        raise RuntimeError(f"the child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    died = "hang" if proc.returncode > 0 else {
        11: "segfault", 6: "abort", 7: "bus error", 9: "killed"}.get(
        -proc.returncode, f"signal {-proc.returncode}")
    where = current if current is not None else last if last is not None else start
    return done, (where, (f"crash: {died} in {step}", _innermost(proc.stderr)))


def isolated_battery(case_id, kind):
    """The battery in child processes, [(label, outcome, detail)] as ``battery`` gives: a crash
    is the outcome of the forged file that crashes when run alone, and a new child takes up the
    rest."""
    labels = [f.label for f in forgeries(case_id, kind)]
    outcomes, start = {}, 0
    while start < len(labels):
        done, crash = _run_child(case_id, kind, start, len(labels))
        outcomes.update(done)
        if crash is None:
            break
        where, outcome = crash
        # which forged file crashes on its own (memory corrupted by an earlier one may only
        # show later): the one the child was on, else each of those it ran before
        for i in [where, *range(start, where)]:
            alone, alone_crash = _run_child(case_id, kind, i, i + 1)
            outcomes.update(alone)
            if alone_crash is not None:
                outcomes[i] = alone_crash[1]
        if where not in outcomes or not outcomes[where][0].startswith("crash") and not any(
                outcomes[i][0].startswith("crash") for i in range(start, where)):
            outcomes[where] = (outcome[0] + " (only after earlier forged files)", outcome[1])
        start = where + 1
    return [(labels[i], *outcomes[i]) for i in sorted(outcomes)]


def _main(argv):
    global FORGE_ALL
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[2], int(argv[3]), int(argv[4]))
        return
    isolate = "--isolate" in argv
    if "--all" in argv:
        FORGE_ALL = True
        os.environ["FASTGEN_FORGE_ALL"] = "1"  # and in the children
    write = None
    if "--write" in argv:
        at = argv.index("--write")
        write = argv[at + 1:at + 3]
        argv = argv[:at] + argv[at + 3:]
    args = [a for a in argv if not a.startswith("--")]
    case_ids = [args[0]] if args and args[0] in CASES else CASE_IDS
    kinds = [a for a in args if a in KINDS] or list(KINDS)
    if write:
        path, label = write
        forgery = next(f for f in forgeries(case_ids[0], kinds[0]) if f.label == label)
        forgery.make(case_ids[0]).write(path)
        return
    if not isolate:
        _cap_address_space()
    for case_id in case_ids:
        total = Counter()
        for kind in kinds:
            results = isolated_battery(case_id, kind) if isolate else battery(case_id, kind)
            counts = Counter(outcome for _, outcome, _ in results)
            total.update(counts)
            print(f"{case_id:32} {kind:22} " + "; ".join(
                f"{n} {outcome}" for outcome, n in counts.most_common()), flush=True)
            for label, outcome, detail in results:
                if outcome not in ("refused", "accepted"):
                    print(f"    {outcome}: {label}  {detail[:160]!r}", flush=True)
        print(f"{case_id:32} {'TOTAL':22} " + "; ".join(
            f"{n} {outcome}" for outcome, n in total.most_common()), flush=True)


if __name__ == "__main__":
    _main(sys.argv[1:])


# ---------------------------------------------------------------------------------------
# hyperparameters of the Bayesian prediction: a file with a valid checksum whose recorded
# constructor parameters are bad is refused on load, as the constructor would refuse them


@pytest.mark.parametrize("name, bad, match", [
    ("GaussianNB", {"prior_strength": -1.0}, "prior_strength"),
    ("GaussianNB", {"prior_var": [1.0, -1.0, 1.0]}, "prior_var"),
    ("QuadraticDiscriminantAnalysis",
     {"prior_covariance": [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]},
     "prior_covariance"),
    ("LinearDiscriminantAnalysis", {"prior_strength": (1.0, 1.5)}, "nu0"),
    ("MultinomialNB", {"predictive": "yes"}, "predictive"),
    ("MultinomialNB", {"alpha": 0.0, "predictive": True}, "alpha > 0"),
    ("PoissonNB", {"alpha": 0.0, "predictive": True}, "alpha > 0"),
    ("MixedNB", {"alpha": "max"}, "alpha"),
])
def test_forged_bayesian_hyperparameters_are_refused(tmp_path, name, bad, match):
    from fastgen._persist import write_model

    rng = np.random.default_rng(0)
    model = getattr(fastgen, name)().fit(np.abs(rng.normal(size=(20, 3))), np.repeat([0, 1], 10))
    path = tmp_path / "forged.fg"
    write_model(path, name, {**model.get_params(), **bad}, model._export(model._fitted))
    with pytest.raises(ValueError, match=match):
        fastgen.load(path)


# ---------------------------------------------------------------------------------------
# text models: a Pipeline of a vectoriser and a classifier (and a vectoriser alone), forged.
# Loading checks each vectoriser parameter as fit does, the vocabulary (str terms mapped to the
# columns 0..n-1), the steps (names, kinds, order, count) and that they agree (the vectoriser's
# width is the classifier's n_features_in_); the metadata is JSON.

TEXT_DOCS, TEXT_LABELS = (part[:80] for part in load_sms_spam())


@lru_cache(maxsize=None)
def _text_original(kind):
    """The bytes of the file of a fitted text model: ``count`` (CountVectorizer, 30 terms, then
    MultinomialNB), ``hashing`` (HashingVectorizer then MultinomialNB) or ``vectorizer`` (the
    CountVectorizer alone)."""
    from sklearn.pipeline import make_pipeline

    from fastgen.text import CountVectorizer, HashingVectorizer

    vectorizer = (HashingVectorizer(n_features=2**12, alternate_sign=False, norm=None)
                  if kind == "hashing" else CountVectorizer(max_features=30))
    obj = (vectorizer.fit(TEXT_DOCS) if kind == "vectorizer" else
           make_pipeline(vectorizer, fastgen.MultinomialNB()).fit(TEXT_DOCS, TEXT_LABELS))
    path = os.path.join(_scratch(), f"text-{kind}.original")
    fastgen.save(obj, path)
    with open(path, "rb") as f:
        return f.read()


def _entry(node, key):
    """The value of ``key`` in a ``{"dict": [[key, value], ...]}`` node."""
    return next(value for k, value in node["dict"] if k == key)


def _put(node, key, value):
    next(pair for pair in node["dict"] if pair[0] == key)[1] = value


def _steps(h):
    return _entry(h["params"], "steps")


def _states(h):
    return _entry(h["fitted"], "steps")


def _vec_params(h):
    return _entry(_steps(h)[0][1], "params") if h["class"] == "Pipeline" else h["params"]


def _vocab(h):
    fitted = _states(h)[0] if h["class"] == "Pipeline" else h["fitted"]
    return _entry(fitted, "vocabulary_")["dict"]


def _set_param(name, value):
    return lambda h: _put(_vec_params(h), name, value)


def _deep(n):
    node = 1
    for _ in range(n):
        node = [node]
    return node


TEXT_FORGERIES = [
    # the vocabulary
    ("count", "column n", lambda h: _vocab(h)[0].__setitem__(1, len(_vocab(h))),
     "doesn't contain index"),
    ("count", "column -1", lambda h: _vocab(h)[0].__setitem__(1, -1), "doesn't contain index"),
    ("count", "repeated column", lambda h: _vocab(h)[1].__setitem__(1, _vocab(h)[0][1]),
     "repeated indices"),
    ("count", "float column", lambda h: _vocab(h)[0].__setitem__(1, 0.0), "must be an int"),
    ("count", "bool column", lambda h: _vocab(h)[0].__setitem__(1, False), "must be an int"),
    ("count", "str column", lambda h: _vocab(h)[0].__setitem__(1, "0"), "must be an int"),
    ("vectorizer", "int term", lambda h: _vocab(h)[0].__setitem__(0, 7), "terms must be str"),
    ("count", "repeated term", lambda h: _vocab(h)[1].__setitem__(0, _vocab(h)[0][0]),
     "repeated"),
    ("count", "no terms", lambda h: _vocab(h).clear(), "empty vocabulary"),
    ("count", "last column dropped",
     lambda h: _vocab(h).remove(max(_vocab(h), key=lambda pair: pair[1])),
     r"gives 29 columns but step 'multinomialnb' was fitted on 30"),
    ("vectorizer", "terms as a list",
     lambda h: _put(h["fitted"], "vocabulary_", ["a", "b"]), "must be a mapping"),
    ("count", "no fitted state", lambda h: _states(h).__setitem__(0, None),
     "exactly vocabulary_"),
    ("vectorizer", "given and learned vocabularies",
     _set_param("vocabulary", {"dict": [["a", 0]]}), "has no learned one"),
    # the vectoriser's parameters, checked as fit checks them
    ("count", "ngram_range (0, 1)", _set_param("ngram_range", {"tuple": [0, 1]}), "at least 1"),
    ("count", "ngram_range a list", _set_param("ngram_range", [1, 1]),
     "ngram_range must be a tuple"),
    ("count", "max_df -1", _set_param("max_df", -1), "max_df"),
    ("count", "min_df 1.5", _set_param("min_df", 1.5), "min_df"),
    ("vectorizer", "max_features 0", _set_param("max_features", 0), "max_features"),
    ("count", "dtype object", _set_param("dtype", "object"), "numeric NumPy dtype"),
    ("count", "dtype float16", _set_param("dtype", "float16"), "float16"),
    ("count", "dtype not canonical", _set_param("dtype", "int"), "dtype must name"),
    ("count", "dtype a number", _set_param("dtype", 5), "dtype must name"),
    ("count", "analyzer", _set_param("analyzer", "python"), "analyzer must be"),
    ("count", "tokenizer a name", _set_param("tokenizer", "str.split"),
     "tokenizer must be None or a callable"),
    ("count", "preprocessor a name", _set_param("preprocessor", "os.system"),
     "preprocessor must be None or a callable"),
    ("count", "token_pattern groups", _set_param("token_pattern", "(a)(b)"), "capturing group"),
    ("count", "token_pattern invalid", _set_param("token_pattern", "("),
     "not a valid regular expression"),
    ("count", "input", _set_param("input", "url"), "input must be"),
    ("count", "encoding", _set_param("encoding", "rot13"), "not a text encoding"),
    ("count", "stop_words", _set_param("stop_words", "french"), "not a built-in stop list"),
    ("count", "stop_words not str", _set_param("stop_words", [1, 2.5]), "holding a int"),
    ("count", "lowercase", _set_param("lowercase", 1), "lowercase must be a bool"),
    ("count", "n_threads", _set_param("n_threads", "all"), "n_threads"),
    ("count", "parameter missing", lambda h: _vec_params(h)["dict"].pop(),
     "parameters must be exactly"),
    ("vectorizer", "parameter added",
     lambda h: _vec_params(h)["dict"].append(["_vocabulary", None]), "parameters must be exactly"),
    ("hashing", "n_features changed", _set_param("n_features", 2**10),
     r"'hashingvectorizer' gives 1024 columns but step 'multinomialnb' was fitted on 4096"),
    ("hashing", "n_features 0", _set_param("n_features", 0), "n_features must be"),
    ("hashing", "norm", _set_param("norm", "l3"), "norm must be"),
    ("hashing", "alternate_sign", _set_param("alternate_sign", "yes"), "alternate_sign"),
    ("hashing", "a fitted state", lambda h: _states(h).__setitem__(0, {"dict": []}),
     "no fitted state"),
    # the steps
    ("count", "names repeated", lambda h: _steps(h)[1].__setitem__(0, _steps(h)[0][0]),
     "distinct"),
    ("count", "name with __", lambda h: _steps(h)[0].__setitem__(0, "a__b"), "without '__'"),
    ("count", "name an int", lambda h: _steps(h)[0].__setitem__(0, 3), "names must be str"),
    ("count", "name a parameter", lambda h: _steps(h)[0].__setitem__(0, "verbose"),
     "not a Pipeline parameter"),
    ("count", "no steps", lambda h: (_steps(h).clear(), _states(h).clear()), "at least one step"),
    ("count", "states not the steps", lambda h: _states(h).append(None), "same length"),
    ("count", "steps reversed", lambda h: (_steps(h).reverse(), _states(h).reverse()),
     "'multinomialnb' is a MultinomialNB: .* as its last step"),
    ("count", "two vectorisers", lambda h: (_steps(h).insert(1, ["again", _steps(h)[0][1]]),
                                            _states(h).insert(1, _states(h)[0])),
     "'again' is a CountVectorizer: .* at most one"),
    ("count", "only the vectoriser", lambda h: (_steps(h).pop(), _states(h).pop()),
     "last step of a Pipeline file is a fastgen classifier"),
    ("count", "a Pipeline within", lambda h: _put(_steps(h)[0][1], "class", "Pipeline"),
     "unknown estimator 'Pipeline'"),
    ("count", "a function named", lambda h: _put(_steps(h)[0][1], "class", "os.system"),
     "unknown estimator 'os.system'"),
    ("count", "a private class", lambda h: _put(_steps(h)[0][1], "class", "_Vectorizer"),
     "unknown estimator"),
    ("count", "a class as a list", lambda h: _put(_steps(h)[0][1], "class", ["CountVectorizer"]),
     "unknown estimator"),
    ("count", "vectoriser relabelled", lambda h: _put(_steps(h)[0][1], "class",
                                                      "HashingVectorizer"),
     "parameters must be exactly"),
    ("count", "classifier relabelled", lambda h: _put(_steps(h)[0][1], "class", "MultinomialNB"),
     "hyperparameters must be exactly"),
    ("count", "a step 'drop'", lambda h: _steps(h)[0].__setitem__(1, "drop"),
     "must be a class and its parameters"),
    ("count", "passthrough with a state",
     lambda h: (_steps(h).insert(1, ["skip", "passthrough"]), _states(h).insert(1, {"dict": []})),
     "has a fitted state"),
    ("count", "verbose", lambda h: _put(h["params"], "verbose", "yes"), "verbose must be"),
    ("count", "memory", lambda h: h["params"]["dict"].append(["memory", "/tmp"]),
     "exactly steps and verbose"),
    ("count", "fitted not a mapping", lambda h: h.__setitem__("fitted", None),
     "fitted state must be exactly its steps"),
    ("vectorizer", "a function named", lambda h: h.__setitem__("class", "builtins.eval"),
     "unknown estimator 'builtins.eval'"),
    ("count", "a Pipeline as a vectoriser", lambda h: h.__setitem__("class", "CountVectorizer"),
     "parameters must be exactly"),
    ("vectorizer", "a vectoriser as a Pipeline", lambda h: h.__setitem__("class", "Pipeline"),
     "exactly steps and verbose"),
    # the metadata
    ("count", "metadata a list", lambda h: h.__setitem__("metadata", [1]),
     "metadata must be a dict"),
    ("vectorizer", "metadata NaN", lambda h: h.__setitem__("metadata", {"x": math.nan}), "NaN"),
    ("count", "metadata too deep", lambda h: h.__setitem__("metadata", {"x": _deep(40)}),
     "nested more than"),
]


@pytest.mark.parametrize("kind, label, mutate, match", TEXT_FORGERIES,
                         ids=[f"{kind}-{label}" for kind, label, _, _ in TEXT_FORGERIES])
def test_forged_text_models_are_refused(kind, label, mutate, match, tmp_path):
    forged = ModelFile.parse(_text_original(kind))
    mutate(forged.header)
    path = tmp_path / "forged.fastgen"
    forged.write(path)
    with pytest.raises(ValueError, match=match):
        fastgen.load(path)
    if "metadata" in forged.header:  # refused by load_metadata too: the same container checks
        with pytest.raises(ValueError, match=match):
            fastgen.load_metadata(path)


TEXT_VALUES = [-1, 0, 2**31, 2**63, 0.5, math.inf, True, None, "", "x", [], {"dict": []},
               {"tuple": [1, 2]}]


def _text_sound(obj):
    """Why a loaded text model (or vectoriser) is not sound on valid documents, or None."""
    try:
        if hasattr(obj, "predict_proba"):
            P = np.asarray(obj.predict_proba(TEXT_DOCS), dtype=np.float64)
            if P.shape != (len(TEXT_DOCS), 2) or not np.isfinite(P).all() or \
                    not np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=RELATIVE):
                return "predict_proba not finite rows summing to 1"
        else:
            X = obj.transform(TEXT_DOCS)
            if X.shape != (len(TEXT_DOCS), obj._n_features_out):
                return f"transform gave shape {X.shape}"
    except ValueError:  # a valid-looking model refusing valid input says so clearly
        return None
    return None


@pytest.mark.parametrize("kind", ["count", "hashing", "vectorizer"])
def test_forged_text_model_battery(kind, tmp_path):
    """Every mapping entry dropped and every leaf of the header replaced (three values of
    TEXT_VALUES each, rotating): ``load`` raises ValueError or gives a sound object."""
    original = ModelFile.parse(_text_original(kind))
    mutations = [(f"drop {show(path)}/{key}", lambda h, p=path, k=key: ModelFile.remove_key(
        ModelFile(0, h, b""), p, k)) for path, keys in original.mappings() for key in keys]
    leaves = [path for path, node in original.nodes()
              if path and not isinstance(node, (dict, list)) and path[-1] != "array"]
    for k, path in enumerate(leaves):
        for value in (TEXT_VALUES * 2)[k % len(TEXT_VALUES):][:3]:
            mutations.append((f"{show(path)} = {value!r}",
                              lambda h, p=path, v=value: set_at(h, p, json.loads(json.dumps(v)))))
    assert len(mutations) > 100
    path = tmp_path / "forged.fastgen"
    failures = []
    for label, mutate in mutations:
        forged = ModelFile.parse(_text_original(kind))
        mutate(forged.header)
        forged.write(path)
        try:
            obj = fastgen.load(path)
        except ValueError:
            continue
        except Exception as exc:  # anything else escaping is a bug
            failures.append(f"{label}: {type(exc).__name__}: {exc}")
            continue
        why = _text_sound(obj)
        if why:
            failures.append(f"{label}: {why}")
    assert not failures, "\n".join(failures[:20])


# categories of columns of labels: a file (valid checksum) whose categories could not have
# come from a fit is refused on load


def _labelled_model(name):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"v": ["a", "b", "c", "a", "b", "c"], "w": [True, False] * 3,
                      "n": [0.5, 1.5, 0.25, 2.0, 1.0, 0.75]})
    if name == "CategoricalNB":
        X = X.assign(n=[0, 1, 2, 1, 0, 2])
    return getattr(fastgen, name)().fit(X, [0, 1, 0, 1, 0, 1]), X


@pytest.mark.parametrize("name", ["CategoricalNB", "MixedNB"])
@pytest.mark.parametrize("forge", [
    lambda c: {**c, 0: np.array(["a", "a", "c"], dtype=object)},      # repeated
    lambda c: {**c, 0: np.array([1, 1.0, True], dtype=object)},        # one dict key thrice
    lambda c: {**c, 0: np.array(["a", None, "c"], dtype=object)},     # None is no label
    lambda c: {**c, 0: np.array(["a", np.nan, "c"], dtype=object)},   # NaN is no label
    lambda c: {**c, 0: np.array(["a", "b"], dtype=object)},            # fewer than counted
    lambda c: {**c, 0: np.array(["a", "b", "c", "d"], dtype=object)},  # more than counted
    lambda c: {**c, 0: np.array([["a", "b", "c"]], dtype=object)},    # not 1-D
    lambda c: {**c, 5: np.array(["a"], dtype=object)},                 # no such column
    lambda c: {**c, True: c[0]},                                       # a bool as index
], ids=["repeated", "equal-keys", "none", "nan", "fewer", "more", "2-d", "column",
        "bool-index"])
def test_forged_categories_are_refused(tmp_path, name, forge):
    from fastgen._persist import write_model

    model, X = _labelled_model(name)
    params, exported = model._file_record()
    path = tmp_path / "forged.fg"
    write_model(path, name, params, exported)  # as it is, the file loads
    np.testing.assert_array_equal(fastgen.load(path).predict_proba(X), model.predict_proba(X))
    extra = dict(exported["extra"])
    extra["categories"] = forge(dict(extra["categories"]))
    write_model(path, name, params, {**exported, "extra": extra})
    with pytest.raises(ValueError):
        fastgen.load(path)
