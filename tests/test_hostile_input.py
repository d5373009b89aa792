"""Hostile input for every public entry point of every estimator (Hypothesis).

The contract: a call either raises a clear ``ValueError``/``TypeError`` (``NotFittedError`` is a
``ValueError``) or gives a correct answer -- never a crash, a hang, another exception type
(IndexError, ZeroDivisionError, OverflowError, MemoryError, KeyError, AttributeError, ...), a
leaked ``RuntimeWarning`` or a NaN posterior. ``assert_clean`` enforces it: when a call succeeds,
its output is checked (posterior rows finite, in [0, 1] and summing to one; log-posteriors <= 0;
no NaN anywhere; labels from ``classes_``; a fitted model scores its own training data cleanly).

Malformed CSR matrices are built from a valid one by replacing its ``data``, ``indices`` and
``indptr`` arrays afterwards, which bypasses scipy's own checks; an independent Python oracle
(``csr_problem``) says whether the corrupted arrays still describe a matrix, in which case the
answer must equal the one for that matrix. Inputs known to crash the interpreter run in a
subprocess (``run_isolated``) so that the rest of the file still reports.

FASTGEN_HYPOTHESIS_EXAMPLES raises the example count for a deeper (slower) run.
"""

import datetime
import faulthandler
import functools
import os
import re
import subprocess
import sys
import textwrap
import traceback
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

import fastgen
from _memory import cap_address_space
from fastgen.text import CountVectorizer, HashingVectorizer

MAX_EXAMPLES = int(os.environ.get("FASTGEN_HYPOTHESIS_EXAMPLES", "15"))
SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                           HealthCheck.data_too_large],
)
# a call that takes longer than this is a hang: faulthandler dumps the stacks and exits
HANG_SECONDS = 60

CLEAN = (ValueError, TypeError)  # fastgen.NotFittedError is a ValueError
# hostile sizes must fail fast on a shared machine, not page it out: cap the address space
ADDRESS_SPACE_CAP = 16 * 2**30


@pytest.fixture(scope="module", autouse=True)
def _bounded_memory():
    """An allocation bug (a table sized by a hostile value) is a MemoryError here rather than
    the OOM killer picking a process of the machine."""
    restore = cap_address_space(ADDRESS_SPACE_CAP)
    yield
    restore()


# ---------------------------------------------------------------------------------------
# valid small training sets


_rng = np.random.default_rng(0)
N_ROWS = 12
Y = np.arange(N_ROWS) % 3
CLASSES = np.array([0, 1, 2])
COUNTS = _rng.integers(0, 4, (N_ROWS, 5)).astype(np.float64)
COUNTS[:, 0] += 1  # every row has a word
GAUSS = _rng.normal(size=(N_ROWS, 3)) + Y[:, None]  # 4 rows per class > 3 features: QDA is fine
CODES = _rng.integers(0, 3, (N_ROWS, 4)).astype(np.float64)
MIXED_TYPES = ["gaussian", "categorical", "bernoulli", "poisson", "multinomial", "multinomial"]
MIXED = np.column_stack([GAUSS[:, 0], CODES[:, 0], COUNTS[:, 1] > 1, COUNTS[:, 2:5]]).astype(
    np.float64)

# the domain of each column: "real" (any finite float), "count" (non-negative), "code"
# (category codes: integers, negative = missing) or "any" (the model reads anything finite)
REAL, COUNT, CODE, ANY = "real", "count", "code", "any"


@dataclass(frozen=True)
class Case:
    name: str
    factory: object
    X: np.ndarray
    domains: tuple
    sparse: bool  # takes sparse input (the others must raise TypeError on it)
    nan: bool  # NaN is a missing value (the others must raise ValueError on it)
    extra: tuple = ()  # entry points beyond the common ones
    y: np.ndarray = field(default_factory=lambda: Y)

    def make(self, **params):
        return self.factory(**params)

    def fitted(self, **params):
        return self.make(**params).fit(self.X, self.y)

    def __repr__(self):
        return self.name


CASES = [
    Case("MultinomialNB", fastgen.MultinomialNB, COUNTS, (COUNT,) * 5, sparse=True, nan=False),
    Case("BernoulliNB", fastgen.BernoulliNB, COUNTS, (ANY,) * 5, sparse=True, nan=False),
    Case("ComplementNB", fastgen.ComplementNB, COUNTS, (COUNT,) * 5, sparse=True, nan=False),
    Case("GaussianNB", fastgen.GaussianNB, GAUSS, (REAL,) * 3, sparse=False, nan=True),
    Case("PoissonNB", fastgen.PoissonNB, COUNTS, (COUNT,) * 5, sparse=True, nan=True),
    Case("CategoricalNB", fastgen.CategoricalNB, CODES, (CODE,) * 4, sparse=False, nan=True),
    Case("MixedNB", functools.partial(fastgen.MixedNB, MIXED_TYPES), MIXED,
         (REAL, CODE, ANY, COUNT, COUNT, COUNT), sparse=False, nan=True),
    Case("LinearDiscriminantAnalysis", fastgen.LinearDiscriminantAnalysis, GAUSS, (REAL,) * 3,
         sparse=False, nan=True, extra=("transform",)),
    Case("QuadraticDiscriminantAnalysis", fastgen.QuadraticDiscriminantAnalysis, GAUSS,
         (REAL,) * 3, sparse=False, nan=True),
    Case("BaselineClassifier", fastgen.BaselineClassifier, GAUSS, (ANY,) * 3, sparse=True,
         nan=True),
]
CASE = {c.name: c for c in CASES}
SPARSE_CASES = [c for c in CASES if c.sparse]
by_case = pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)

PREDICT_POINTS = ["predict", "predict_loss", "predict_proba", "predict_log_proba",
                  "predict_joint_log_proba", "decision_function", "score"]
FIT_POINTS = ["fit", "fit_weighted", "partial_fit", "partial_fit_again"]
X_POINTS = FIT_POINTS + PREDICT_POINTS
LOSS = np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [1.0, 3.0, 0.0]])


def entry_points(case):
    return st.sampled_from(X_POINTS + list(case.extra))


# ---------------------------------------------------------------------------------------
# the contract


def _describe(value, limit=300):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def assert_clean(call, *args, must_raise=None, what=""):
    """Run ``call(*args)``: return ``(exception, None)`` for a clean ValueError/TypeError, or
    ``(None, value)``. Fails on any other exception, on a RuntimeWarning (overflow, invalid
    value, ... leaking from NumPy) and, with ``must_raise`` (an exception class or tuple), when
    the call succeeds or raises something else than it."""
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = call(*args)
            except CLEAN as exc:
                raised, value = exc, None
            except Exception as exc:  # noqa: BLE001 -- every other type is the bug we look for
                pytest.fail(f"{what}: unclean {type(exc).__module__}.{type(exc).__name__}: "
                            f"{exc}\n{''.join(traceback.format_exception(exc)[-6:])}")
            else:
                raised = None
    finally:
        faulthandler.cancel_dump_traceback_later()
    leaked = [f"{w.category.__name__}: {w.message} ({os.path.basename(w.filename)}:{w.lineno})"
              for w in caught if issubclass(w.category, RuntimeWarning)]
    if leaked:
        outcome = (f"raised {type(raised).__name__}: {raised}" if raised is not None
                   else f"returned {_describe(value)}")
        pytest.fail(f"{what}: RuntimeWarning leaked ({outcome}): {leaked}")
    if must_raise is not None:
        if raised is None:
            pytest.fail(f"{what}: expected {must_raise}, got a result {_describe(value)}")
        if not isinstance(raised, must_raise):
            pytest.fail(f"{what}: expected {must_raise}, got {type(raised).__name__}: {raised}")
    return raised, value


def check_proba(P, n_rows, n_classes, what):
    P = np.asarray(P)
    assert P.shape == (n_rows, n_classes), (what, P.shape)
    assert P.dtype.kind == "f", (what, P.dtype)
    assert np.isfinite(P).all(), f"{what}: non-finite posteriors {P[~np.isfinite(P).all(1)]}"
    assert ((P >= 0) & (P <= 1)).all(), f"{what}: posteriors outside [0, 1]: {P}"
    tol = 1e-5 if P.dtype == np.float32 else 1e-9
    if n_rows:
        bad = np.abs(P.sum(axis=1) - 1) > tol
        assert not bad.any(), f"{what}: rows do not sum to 1: {P[bad]}"


def check_log_proba(L, n_rows, n_classes, what):
    L = np.asarray(L)
    assert L.shape == (n_rows, n_classes), (what, L.shape)
    assert not np.isnan(L).any(), f"{what}: NaN log-posteriors {L}"
    assert (L <= 0).all(), f"{what}: positive log-posteriors {L[(L > 0).any(1)]}"
    if n_rows:
        tol = 1e-5 if L.dtype == np.float32 else 1e-9
        total = logsumexp(L.astype(np.float64), axis=1)
        assert np.all(np.abs(total) <= tol), f"{what}: log-posteriors not normalised {L}"


def check_jll(J, n_rows, n_classes, what):
    J = np.asarray(J)
    assert J.shape == (n_rows, n_classes), (what, J.shape)
    assert not np.isnan(J).any(), f"{what}: NaN joint log-likelihoods {J}"
    assert not (J == np.inf).any(), f"{what}: +inf joint log-likelihoods {J}"


def check_labels(pred, est, n_rows, what):
    pred = np.asarray(pred)
    assert pred.shape == (n_rows,), (what, pred.shape)
    assert np.isin(pred, est.classes_).all(), f"{what}: labels not in classes_: {pred}"


def check_output(where, value, est, n_rows, what):
    """Validate what entry point ``where`` returned for n_rows input rows."""
    if where in ("fit", "fit_weighted", "partial_fit", "partial_fit_again"):
        assert isinstance(value, fastgen._base.BaseClassifier), (what, value)
        return
    k = len(est.classes_)
    if where in ("predict", "predict_loss"):
        check_labels(value, est, n_rows, what)
    elif where == "predict_proba":
        check_proba(value, n_rows, k, what)
    elif where == "predict_log_proba":
        check_log_proba(value, n_rows, k, what)
    elif where == "predict_joint_log_proba":
        check_jll(value, n_rows, k, what)
    elif where == "decision_function":
        value = np.asarray(value)
        assert value.shape in ((n_rows,), (n_rows, k)), (what, value.shape)
        assert not np.isnan(value).any(), f"{what}: NaN decision_function {value}"
    elif where == "score":
        assert np.isfinite(value) and 0 <= value <= 1, f"{what}: score {value}"
    elif where == "transform":
        value = np.asarray(value)
        assert value.shape[0] == n_rows and not np.isnan(value).any(), (what, value)
    else:  # pragma: no cover
        raise AssertionError(where)


def check_model(est, probes, what):
    """A fitted model answers every predict method on every probe cleanly and correctly."""
    for X in probes:
        n = _n_rows(X)
        for where in ("predict_proba", "predict_log_proba", "predict_joint_log_proba",
                      "predict", "decision_function"):
            raised, value = assert_clean(getattr(est, where), X,
                                         what=f"{what} then {where}")
            if raised is None:
                check_output(where, value, est, n, f"{what} then {where}")


def _n_rows(X):
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2:
        return shape[0]
    try:
        return len(X)
    except TypeError:
        return N_ROWS


def labels_for(X):
    return np.arange(_n_rows(X)) % 3


def invoke(case, where, X, y=None):
    """Call one entry point with X (y defaults to valid labels for X's rows)."""
    if y is None:
        y = labels_for(X)
    if where == "fit":
        return case.make().fit(X, y)
    if where == "fit_weighted":
        return case.make().fit(X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))
    if where == "partial_fit":
        return case.make().partial_fit(X, y, classes=CLASSES)
    est = case.fitted()
    if where == "partial_fit_again":
        return est.partial_fit(X, y)
    if where == "predict_loss":
        return est.predict(X, loss=LOSS)
    if where == "score":
        return est.score(X, y)
    return getattr(est, where)(X)


def check_entry(case, where, X, *, must_raise=None, y=None, what=""):
    """Call an entry point under the contract; a successful fit is then probed with X itself
    and the valid training set; a rejected partial_fit leaves the model untouched."""
    what = f"{case.name}.{where} {what}".strip()
    est = before = None
    if where == "partial_fit_again":  # the same model, so that a rejected batch can be inspected
        est = case.fitted()
        before = est.predict_joint_log_proba(case.X)

        def call():
            return est.partial_fit(X, labels_for(X) if y is None else y)
    else:
        def call():
            return invoke(case, where, X, y)

    raised, value = assert_clean(call, must_raise=must_raise, what=what)
    if raised is not None:
        if before is not None:
            np.testing.assert_array_equal(est.predict_joint_log_proba(case.X), before,
                                          err_msg=f"{what}: a rejected batch changed the model")
        return raised, value
    if where in FIT_POINTS:
        check_output(where, value, value, _n_rows(X), what)
        check_model(value, [X, case.X] if _width(X) == case.X.shape[1] else [X], what)
    else:
        check_output(where, value, case.fitted(), _n_rows(X), what)
    return raised, value


def _width(X):
    shape = getattr(X, "shape", None)
    return shape[1] if shape is not None and len(shape) == 2 else None


# ---------------------------------------------------------------------------------------
# malformed CSR


def csr_problem(X):
    """Why the arrays of a CSR matrix do not describe a matrix (scipy's reading: storage past
    indptr[-1] is unused), or None if they do. Pure Python, independent of fastgen and scipy."""
    n_rows, n_features = X.shape
    data, indices, indptr = X.data, X.indices, X.indptr
    if data.ndim != 1 or indices.ndim != 1 or indptr.ndim != 1:
        return "arrays are not 1-D"
    if indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":
        return "non-integer index arrays"
    if len(indptr) != n_rows + 1:
        return "indptr length"
    if len(data) != len(indices):
        return "data and indices lengths differ"
    ptr = [int(v) for v in indptr]
    if ptr[0] != 0:
        return "indptr[0] != 0"
    if any(b < a for a, b in zip(ptr, ptr[1:])):
        return "indptr decreasing"
    if ptr[-1] > len(indices):
        return "indptr[-1] past the data"
    if any(not 0 <= int(j) < n_features for j in indices[: ptr[-1]]):
        return "index out of range"
    return None


def _set(arr, pos, value):
    """A copy of arr with arr[pos] = value, widening to int64 if value does not fit."""
    arr = arr.copy()
    if arr.dtype.kind in "iu" and not (np.iinfo(arr.dtype).min <= value
                                       <= np.iinfo(arr.dtype).max):
        arr = arr.astype(np.int64)
        value = int(np.clip(value, np.iinfo(np.int64).min, np.iinfo(np.int64).max))
    arr[pos] = value
    return arr


def replaced(X, **arrays_):
    """A copy of CSR X whose arrays are replaced without any check."""
    X = X.copy()
    for name, value in arrays_.items():
        setattr(X, name, np.asarray(value))
    return X


HUGE_INDEX_VALUES = [-1, -2, -(2**31), 2**31 - 1, 2**31, 2**32 + 1, -(2**63), 2**63 - 1]


@st.composite
def malformed_csr(draw, case):
    X = case.X
    kind = draw(st.sampled_from(["csr_matrix", "csr_array"]))
    M = (sp.csr_matrix if kind == "csr_matrix" else sp.csr_array)(X)
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    M.indices, M.indptr = M.indices.astype(index_dtype), M.indptr.astype(index_dtype)
    nnz, n_rows, n_features = M.nnz, M.shape[0], M.shape[1]
    how = draw(st.sampled_from([
        "index", "index_huge", "indptr", "indptr_huge", "indptr_first", "indptr_last",
        "indptr_short", "indptr_long", "indptr_empty", "data_short", "data_long",
        "indices_short", "indices_long", "index_dtype", "mixed_index_dtypes", "indices_2d",
        "data_2d", "declared_narrow", "empty_structure",
    ]))
    pos = draw(st.integers(0, nnz - 1))
    if how == "index":
        value = draw(st.integers(-3, n_features + 3))
        return replaced(M, indices=_set(M.indices, pos, value))
    if how == "index_huge":
        value = draw(st.sampled_from(HUGE_INDEX_VALUES))
        return replaced(M, indices=_set(M.indices, pos, value))
    if how in ("indptr", "indptr_huge"):
        p = draw(st.integers(0, n_rows))
        value = (draw(st.integers(-3, nnz + 3)) if how == "indptr"
                 else draw(st.sampled_from(HUGE_INDEX_VALUES)))
        return replaced(M, indptr=_set(M.indptr, p, value))
    if how == "indptr_first":
        return replaced(M, indptr=_set(M.indptr, 0, draw(st.integers(1, nnz))))
    if how == "indptr_last":  # below nnz is valid (unused storage), above is not
        return replaced(M, indptr=_set(M.indptr, n_rows, draw(st.integers(0, nnz + 5))))
    if how == "indptr_short":
        return replaced(M, indptr=M.indptr[: draw(st.integers(0, n_rows))])
    if how == "indptr_long":
        extra = draw(st.lists(st.integers(nnz, nnz + 2), min_size=1, max_size=3))
        return replaced(M, indptr=np.append(M.indptr, extra).astype(M.indptr.dtype))
    if how == "indptr_empty":
        return replaced(M, indptr=M.indptr[:0])
    if how == "data_short":
        return replaced(M, data=M.data[: draw(st.integers(0, nnz - 1))])
    if how == "data_long":
        return replaced(M, data=np.append(M.data, np.ones(draw(st.integers(1, 3)))))
    if how == "indices_short":
        return replaced(M, indices=M.indices[: draw(st.integers(0, nnz - 1))])
    if how == "indices_long":
        return replaced(M, indices=np.append(M.indices, [0, 1]).astype(M.indices.dtype))
    if how == "index_dtype":  # index arrays of an unusual integer (or float) dtype
        dtype = draw(st.sampled_from([np.int8, np.int16, np.uint16, np.uint32, np.uint64,
                                      np.float64]))
        return replaced(M, indices=M.indices.astype(dtype), indptr=M.indptr.astype(dtype))
    if how == "mixed_index_dtypes":
        return replaced(M, indices=M.indices.astype(np.int64), indptr=M.indptr.astype(np.int32))
    if how == "indices_2d":
        return replaced(M, indices=M.indices.reshape(1, -1))
    if how == "data_2d":
        return replaced(M, data=M.data.reshape(1, -1))
    if how == "declared_narrow":  # same arrays, a declared width below the stored indices
        return type(M)((M.data, M.indices, M.indptr), shape=(n_rows, draw(
            st.integers(1, n_features - 1))), copy=False) if n_features > 1 else M
    # empty_structure: every row empty, but data left behind
    return replaced(M, indptr=np.zeros_like(M.indptr))


def _as_valid_dense(X):
    """The matrix that valid CSR arrays describe (entries past indptr[-1] unused, duplicates
    summed), built by hand."""
    D = np.zeros(X.shape)
    for i in range(X.shape[0]):
        for k in range(int(X.indptr[i]), int(X.indptr[i + 1])):
            D[i, int(X.indices[k])] += X.data[k]
    return D


@by_case
@SETTINGS
@given(data=st.data())
def test_malformed_csr(case, data):
    X = data.draw(malformed_csr(case), label="X")
    where = data.draw(entry_points(case), label="where")
    problem = csr_problem(X)
    what = f"on CSR ({problem or 'valid arrays'})"
    if not case.sparse:
        # a declared width that contradicts MixedNB's feature_types may be reported first
        same_width = X.shape[1] == case.X.shape[1]
        check_entry(case, where, X, must_raise=TypeError if same_width else CLEAN, what=what)
        return
    if problem is not None and problem != "non-integer index arrays":
        check_entry(case, where, X, must_raise=ValueError, what=what)
        return
    raised, value = check_entry(case, where, X, what=what)
    if problem is None and raised is None and where == "predict_proba":
        # the same answer as for the matrix the arrays describe
        expected = case.fitted().predict_proba(_as_valid_dense(X))
        np.testing.assert_allclose(value, expected, rtol=1e-9, atol=1e-12, err_msg=what)


@pytest.mark.parametrize("case", [c for c in CASES if not c.sparse], ids=lambda c: c.name)
@pytest.mark.parametrize("fmt", ["csr_matrix", "csr_array", "csc", "coo", "lil", "dok", "bsr"])
def test_dense_only_models_raise_type_error_on_sparse(case, fmt):
    X = sp.csr_array(case.X) if fmt == "csr_array" else sp.csr_matrix(case.X).asformat(
        fmt.replace("_matrix", ""))
    for where in X_POINTS + list(case.extra):
        check_entry(case, where, X, must_raise=TypeError, what=fmt)


@pytest.mark.parametrize("case", SPARSE_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("fmt", ["csc", "coo", "lil", "dok", "bsr", "dia"])
def test_other_sparse_formats_equal_csr(case, fmt):
    X = sp.csr_matrix(case.X).asformat(fmt)
    expected = case.fitted().predict_proba(case.X)
    for where in X_POINTS:
        check_entry(case, where, X, what=fmt)
    np.testing.assert_allclose(case.make().fit(X, case.y).predict_proba(X), expected,
                               rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------
# unusual memory layouts: valid data, so the answer must be the usual one


def _big_endian(a):
    return a.astype(a.dtype.newbyteorder(">"))


def _layouts(X):
    readonly = X.copy()
    readonly.setflags(write=False)
    doubled = np.repeat(X, 2, axis=0)
    return {
        "fortran": np.asfortranarray(X),
        "reversed_rows": X[::-1][::-1],
        "strided_rows": doubled[::2],
        "strided_columns": np.repeat(X, 2, axis=1)[:, ::2],
        "readonly": readonly,
        "big_endian_f8": _big_endian(X),
        "big_endian_f4": _big_endian(X.astype(np.float32)),
        "big_endian_i8": _big_endian(np.rint(X).astype(np.int64)) if np.array_equal(
            X, np.rint(X)) else _big_endian(X),
        "list_of_lists": X.tolist(),
        "matrix": np.asmatrix(X),
    }


def _csr_layouts(X):
    M = sp.csr_matrix(X)
    out = {}
    R = M.copy()
    for a in (R.data, R.indices, R.indptr):
        a.setflags(write=False)
    out["csr_readonly"] = R
    B = M.copy()
    B.data = _big_endian(B.data)
    out["csr_big_endian_data"] = B
    Bi = M.copy()
    Bi.indices, Bi.indptr = _big_endian(Bi.indices), _big_endian(Bi.indptr)
    out["csr_big_endian_indices"] = Bi
    S = M.copy()
    S.data = np.repeat(S.data, 2)[::2]  # a strided view
    out["csr_strided_data"] = S
    U = M.copy()
    U.indices, U.indptr = U.indices.astype(np.uint32), U.indptr.astype(np.uint32)
    out["csr_uint32_indices"] = U
    D = M.copy()  # unsorted indices within rows
    for i in range(D.shape[0]):
        lo, hi = D.indptr[i], D.indptr[i + 1]
        D.indices[lo:hi] = D.indices[lo:hi][::-1]
        D.data[lo:hi] = D.data[lo:hi][::-1]
    D.has_sorted_indices = False
    out["csr_unsorted"] = D
    Z = sp.csr_matrix((np.append(M.data, 0.0), np.append(M.indices, 0),
                       np.append(M.indptr[:-1], M.nnz + 1)), shape=M.shape)
    out["csr_explicit_zero"] = Z
    return out


@by_case
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_unusual_memory_layouts(case):
    layouts = _layouts(case.X)
    if case.sparse:
        layouts.update(_csr_layouts(case.X))
    est = case.fitted()
    expected = est.predict_proba(case.X)
    for name, X in layouts.items():
        for where in X_POINTS + list(case.extra):
            check_entry(case, where, X, what=f"on {name} input")
        raised, got = assert_clean(est.predict_proba, X, what=f"predict_proba {name}")
        if raised is None:
            tol = 1e-5 if name == "big_endian_f4" else 1e-10
            np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=name)
        raised, refit = assert_clean(case.make().fit, X, case.y, what=f"fit {name}")
        if raised is None and name != "big_endian_f4":
            np.testing.assert_allclose(refit.predict_proba(case.X), expected, rtol=1e-10,
                                       atol=1e-12, err_msg=f"fit on {name}")


# ---------------------------------------------------------------------------------------
# wrong dtypes


def _object(X, fill, every=4):
    O = X.astype(object)
    for k in range(0, O.size, every):  # one element each (a list fill must not broadcast)
        O.flat[k] = fill
    return O


@st.composite
def wrong_dtype(draw, case):
    """(X, must_raise): X of a dtype no kernel reads; must_raise when no number can be read."""
    X = case.X
    kind = draw(st.sampled_from([
        "object_words", "object_numeric_strings", "object_none", "object_dicts",
        "object_complex", "object_bytes", "complex", "complex_zero_imag", "bool", "datetime",
        "timedelta", "str", "numeric_str", "bytes", "float16", "int8", "uint8", "uint64",
        "int64", "ragged", "nested_lists_of_str", "structured", "void",
    ]))
    if kind == "object_words":
        return _object(X, draw(st.sampled_from(["spam", "", " ", "nan?", "1,5"]))), CLEAN
    if kind == "object_numeric_strings":
        return X.astype(int).astype(str).astype(object), None
    if kind == "object_none":  # None reads as NaN: missing where the model allows it
        return _object(X, None), None if case.nan else ValueError
    if kind == "object_dicts":
        return _object(X, draw(st.sampled_from([{"a": 1}, [1, 2], (), object()]))), CLEAN
    if kind == "object_complex":
        return _object(X, 1 + 2j), CLEAN
    if kind == "object_bytes":
        return _object(X, b"\x00\xff"), CLEAN
    if kind == "complex":
        return X + 1j, CLEAN
    if kind == "complex_zero_imag":
        return X.astype(np.complex128), CLEAN
    if kind == "bool":
        return X > 1, None
    if kind == "datetime":
        return X.astype("datetime64[s]"), CLEAN
    if kind == "timedelta":
        return X.astype("timedelta64[ms]"), CLEAN
    if kind == "str":
        return np.full(X.shape, draw(st.sampled_from(["a", "spam", ""]))), CLEAN
    if kind == "numeric_str":  # '1', '2': strings all the same; either reading is fine
        return X.astype(int).astype(str), None
    if kind == "bytes":
        return X.astype(int).astype("S3"), None
    if kind == "float16":
        return X.astype(np.float16), None
    if kind == "int8":
        return X.astype(np.int8), None
    if kind == "uint8":
        return X.astype(np.uint8), None
    if kind == "uint64":
        return X.astype(np.uint64), None
    if kind == "int64":
        return np.rint(X).astype(np.int64), None
    if kind == "ragged":
        rows = [list(r) for r in X]
        rows[draw(st.integers(0, len(rows) - 1))].append(1.0)
        return rows, CLEAN
    if kind == "nested_lists_of_str":
        return [["a"] * X.shape[1]] * X.shape[0], CLEAN
    if kind == "structured":
        S = np.zeros(X.shape[0], dtype=[("a", "f8"), ("b", "i4")])
        return S, CLEAN
    # void / raw bytes
    return np.zeros(X.shape, dtype="V8"), CLEAN


@by_case
@SETTINGS
@given(data=st.data())
def test_wrong_dtypes(case, data):
    X, must_raise = data.draw(wrong_dtype(case), label="X")
    where = data.draw(entry_points(case), label="where")
    kind = getattr(X, "dtype", type(X))
    check_entry(case, where, X, must_raise=must_raise, what=f"on X of dtype {kind}")


SPARSE_DTYPES = [np.bool_, np.int8, np.uint16, np.int64, np.uint64, np.float32, np.complex64,
                 np.complex128, np.float16]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("dtype", SPARSE_DTYPES, ids=lambda d: np.dtype(d).name)
def test_sparse_dtypes(case, dtype):
    try:
        X = sp.csr_matrix(case.X.astype(dtype))
    except (TypeError, ValueError):  # scipy refuses the dtype itself
        pytest.skip(f"scipy cannot build a CSR matrix of {np.dtype(dtype)}")
    if not case.sparse:
        must = TypeError
    elif np.dtype(dtype).kind == "c":
        must = CLEAN
    else:
        must = None
    for where in X_POINTS + list(case.extra):
        check_entry(case, where, X, must_raise=must, what=f"sparse {np.dtype(dtype)}")


try:  # pandas is a test extra; the frames below are skipped without it
    import pandas as pd
except ImportError:  # pragma: no cover
    pd = None


LABEL_MODELS = ("MixedNB", "CategoricalNB")  # they take columns of labels


@pytest.mark.skipif(pd is None, reason="pandas not installed")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("frame", ["nullable_float_na", "nullable_int_na", "string_column",
                                   "category_column", "datetime_column", "mixed_name_types",
                                   "object_none"])
def test_dataframes(case, frame):
    X = pd.DataFrame(case.X, columns=[f"f{j}" for j in range(case.X.shape[1])])
    must = None
    if frame == "nullable_float_na":
        X = X.astype("Float64")
        X.iloc[1, 0] = pd.NA
        must = None if case.nan else CLEAN
    elif frame == "nullable_int_na":
        X = X.round().astype("Int64")
        X.iloc[2, -1] = pd.NA
        must = None if case.nan else CLEAN
    elif frame == "string_column":
        X["f0"] = ["a", "b", "c"] * (N_ROWS // 3)
        must = None if case.name in LABEL_MODELS else CLEAN
    elif frame == "category_column":
        X["f0"] = pd.Categorical(["a", "b", "c"] * (N_ROWS // 3))
        must = None if case.name in LABEL_MODELS else CLEAN
    elif frame == "datetime_column":
        X["f0"] = pd.date_range("2020-01-01", periods=N_ROWS)
        must = CLEAN  # neither numbers nor labels a model file can hold
    elif frame == "mixed_name_types":
        X.columns = ["a"] + list(range(1, X.shape[1]))
        must = TypeError
    elif frame == "object_none":
        X = X.astype(object)
        X.iloc[0, 0] = None
        must = None if case.nan else CLEAN
    for where in X_POINTS + list(case.extra):
        check_entry(case, where, X, must_raise=must if where in FIT_POINTS else None,
                    what=f"DataFrame {frame}")


@pytest.mark.skipif(pd is None, reason="pandas not installed")
@pytest.mark.parametrize("dtype", ["Float64", "Int64", "boolean", "int64[pyarrow]",
                                   "bool[pyarrow]"])
def test_pandas_na_is_a_missing_value(dtype):
    """pandas' NA in a nullable number column is the missing value NaN is (float() of it
    escaped as a TypeError in fit and predict), for every model that takes NaN; the others
    refuse it as they refuse NaN. Arrow's booleans too, which pandas' is_numeric_dtype does not
    count as numbers (float() of NA escaped from BernoulliNB, GaussianNB, ...)."""
    if "pyarrow" in dtype:
        pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    boolean = dtype.startswith("bool")
    values = rng.integers(0, 2 if boolean else 5, (40, 3)).astype(np.float64) + y[:, None]
    values[::7, 0] = np.nan
    plain = pd.DataFrame(values > 0 if boolean else values, columns=list("abc"))
    plain = plain.astype(np.float64)
    plain[np.isnan(values)] = np.nan
    nullable = plain.astype(dtype)
    assert nullable.isna().to_numpy().sum() == np.isnan(values).sum()
    for name in ("GaussianNB", "PoissonNB", "LinearDiscriminantAnalysis",
                 "QuadraticDiscriminantAnalysis", "CategoricalNB", "BernoulliNB"):
        model = getattr(fastgen, name)(**({"reg_param": 0.1} if name.startswith("Quad") else {}))
        try:
            want = model.fit(plain, y).predict_proba(plain)
        except ValueError as exc:  # (NaN refused: pandas' NA must be too, the same way)
            with pytest.raises(ValueError, match=re.escape(str(exc)[:20])):
                getattr(fastgen, name)().fit(nullable, y)
            continue
        np.testing.assert_array_equal(model.fit(nullable, y).predict_proba(nullable), want,
                                      err_msg=name)


# ---------------------------------------------------------------------------------------
# NaN and infinity


@st.composite
def non_finite(draw, case):
    """(X, must_raise): the valid set with NaN/inf in a cell, a row, a column, a class's column
    or everywhere; dense or CSR (NaN/inf stored explicitly), float64 or float32."""
    X = case.X.copy()
    value = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    pattern = draw(st.sampled_from(["cell", "row", "column", "class_column", "all"]))
    i, j = draw(st.integers(0, X.shape[0] - 1)), draw(st.integers(0, X.shape[1] - 1))
    if pattern == "cell":
        X[i, j] = value
    elif pattern == "row":
        X[i] = value
    elif pattern == "column":
        X[:, j] = value
    elif pattern == "class_column":
        X[Y == Y[i], j] = value
    else:
        X[...] = value
    X = X.astype(draw(st.sampled_from([np.float64, np.float32])))
    if case.sparse and draw(st.booleans()):
        X = sp.csr_matrix(X)
    must = None if (np.isnan(value) and case.nan) else ValueError
    return X, must


@by_case
@SETTINGS
@given(data=st.data())
def test_nan_and_inf(case, data):
    X, must_raise = data.draw(non_finite(case), label="X")
    where = data.draw(entry_points(case), label="where")
    check_entry(case, where, X, must_raise=must_raise, what="with NaN/inf")


def test_information_gain_non_finite():
    for value in (np.nan, np.inf, -np.inf):
        for fmt in (np.asarray, sp.csr_matrix):
            X = COUNTS.copy()
            X[2, 1] = value
            assert_clean(fastgen.information_gain, fmt(X), Y, must_raise=ValueError,
                         what=f"information_gain with {value}")


# ---------------------------------------------------------------------------------------
# empty input


EMPTY_SHAPES = [(0, None), (None, 0), (0, 0)]


@by_case
@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=["0_rows", "0_columns", "0x0"])
@pytest.mark.parametrize("fmt", ["dense", "csr", "list"])
def test_empty_input(case, shape, fmt):
    n = 0 if shape[0] == 0 else N_ROWS
    f = 0 if shape[1] == 0 else case.X.shape[1]
    X = case.X[:n, :f]
    if fmt == "csr":
        X = sp.csr_matrix(X)
    elif fmt == "list":
        X = X.tolist()  # [] for 0 rows: numpy reads it as 1-D
    for where in X_POINTS + list(case.extra):
        if fmt == "csr" and not case.sparse:
            must = TypeError if n and f else CLEAN  # an empty shape may be reported first
        elif where in FIT_POINTS or f == 0 or fmt == "list":
            must = ValueError
        else:
            must = None  # predicting no rows: an empty answer or a clear error
        check_entry(case, where, X, y=np.arange(n) % 3, must_raise=must,
                    what=f"{fmt} of shape ({n}, {f})")


@pytest.mark.parametrize("X", [np.zeros((0, 5)), np.zeros((4, 0)), sp.csr_matrix((0, 5)),
                               sp.csr_matrix((4, 0)), [], [[]]],
                         ids=["0_rows", "0_cols", "csr_0_rows", "csr_0_cols", "list", "nested"])
def test_information_gain_empty(X):
    assert_clean(lambda: fastgen.information_gain(X, np.zeros(_n_rows(X), dtype=int)),
                 must_raise=ValueError, what="information_gain on empty X")


# ---------------------------------------------------------------------------------------
# mismatched shapes, labels and sample weights


@by_case
@SETTINGS
@given(data=st.data())
def test_wrong_n_features_at_predict(case, data):
    width = data.draw(st.sampled_from([1, case.X.shape[1] - 1, case.X.shape[1] + 1,
                                       case.X.shape[1] * 3]).filter(
        lambda w: w != case.X.shape[1] and w > 0), label="width")
    reps = -(-width // case.X.shape[1])
    X = np.tile(case.X, reps)[:, :width]
    if case.sparse and data.draw(st.booleans()):
        X = sp.csr_matrix(X)
    where = data.draw(st.sampled_from(PREDICT_POINTS + ["partial_fit_again"]
                                      + list(case.extra)), label="where")
    check_entry(case, where, X, must_raise=ValueError, what=f"with {width} features")


BAD_Y = {
    "short": lambda n: np.arange(n - 1) % 3,
    "long": lambda n: np.arange(n + 3) % 3,
    "empty": lambda n: np.array([], dtype=int),
    "2d": lambda n: np.zeros((n, 2)),
    "scalar": lambda n: 1,
    "none": lambda n: None,
    "nan": lambda n: np.where(np.arange(n) == 2, np.nan, np.arange(n) % 3),
    "inf": lambda n: np.where(np.arange(n) == 2, np.inf, np.arange(n) % 3),
    "continuous": lambda n: np.linspace(0, 1, n),
    "complex": lambda n: np.arange(n) % 3 + 1j,
    "object_nan": lambda n: np.array([float("nan")] + ["a"] * (n - 1), dtype=object),
    "mixed_types": lambda n: np.array([1, "a"] * (n // 2), dtype=object),
    "dicts": lambda n: np.array([{"a": i} for i in range(n)], dtype=object),
    "sparse": lambda n: sp.csr_matrix((np.arange(n) % 3)[:, None]),
    "3d": lambda n: np.zeros((n, 1, 1)),
}


@by_case
@SETTINGS
@given(data=st.data())
def test_bad_y(case, data):
    name = data.draw(st.sampled_from(sorted(BAD_Y)), label="y")
    y = BAD_Y[name](N_ROWS)
    where = data.draw(st.sampled_from(["fit", "fit_weighted", "partial_fit", "score"]),
                      label="where")
    est = case.fitted()
    if where == "score":
        # a label outside classes_ simply counts as wrong; shapes must match
        must = None if name in ("nan", "inf", "continuous", "complex", "object_nan",
                                "mixed_types", "dicts") else CLEAN
        raised, value = assert_clean(lambda: est.score(case.X, y), must_raise=must,
                                     what=f"{case.name}.score with y {name}")
        if raised is None:
            check_output("score", value, est, N_ROWS, f"score with y {name}")
        return
    if where == "partial_fit":
        call = lambda: case.make().partial_fit(case.X, y, classes=CLASSES)
    elif where == "fit_weighted":
        call = lambda: case.make().fit(case.X, y, sample_weight=np.ones(N_ROWS))
    else:
        call = lambda: case.make().fit(case.X, y)
    assert_clean(call, must_raise=CLEAN, what=f"{case.name}.{where} with y {name}")


BAD_WEIGHTS = {
    "short": np.ones(N_ROWS - 1),
    "long": np.ones(N_ROWS + 1),
    "negative": -np.ones(N_ROWS),
    "one_negative": np.where(np.arange(N_ROWS) == 3, -1.0, 1.0),
    "nan": np.where(np.arange(N_ROWS) == 3, np.nan, 1.0),
    "inf": np.where(np.arange(N_ROWS) == 3, np.inf, 1.0),
    "all_zero": np.zeros(N_ROWS),
    "2d": np.ones((N_ROWS, 2)),
    "column": np.ones((N_ROWS, 1)),
    "strings": np.array(["1"] * N_ROWS),
    "objects": np.array([None] * N_ROWS, dtype=object),
    "complex": np.ones(N_ROWS) + 1j,
    "scalar_negative": -1.0,
    "scalar_nan": float("nan"),
    "scalar_zero": 0.0,
    "empty": np.array([]),
}


@by_case
@SETTINGS
@given(data=st.data())
def test_bad_sample_weight(case, data):
    name = data.draw(st.sampled_from(sorted(BAD_WEIGHTS)), label="sample_weight")
    w = BAD_WEIGHTS[name]
    where = data.draw(st.sampled_from(["fit", "partial_fit", "partial_fit_again", "score"]),
                      label="where")
    est = case.fitted()
    before = est.predict_joint_log_proba(case.X)
    calls = {
        "fit": lambda: case.make().fit(case.X, Y, sample_weight=w),
        "partial_fit": lambda: case.make().partial_fit(case.X, Y, classes=CLASSES,
                                                      sample_weight=w),
        "partial_fit_again": lambda: est.partial_fit(case.X, Y, sample_weight=w),
        # fit refuses these weights; score must not silently average with them either
        "score": lambda: est.score(case.X, Y, sample_weight=w),
    }
    assert_clean(calls[where], must_raise=CLEAN,
                 what=f"{case.name}.{where} with sample_weight {name}")
    np.testing.assert_array_equal(est.predict_joint_log_proba(case.X), before)


# ---------------------------------------------------------------------------------------
# labels: unseen in partial_fit, sample, classes


@by_case
@SETTINGS
@given(data=st.data())
def test_unseen_labels_in_partial_fit(case, data):
    unseen = data.draw(st.sampled_from([3, -1, 99, 2**62, "a", 1.5]), label="unseen")
    position = data.draw(st.integers(0, N_ROWS - 1), label="position")
    y = Y.astype(object)
    y[position] = unseen
    first = data.draw(st.booleans(), label="first call")
    if first:
        call = lambda: case.make().partial_fit(case.X, y, classes=CLASSES)
        assert_clean(call, must_raise=CLEAN, what=f"{case.name} first partial_fit with {unseen!r}")
        return
    est = case.make().partial_fit(case.X, Y, classes=CLASSES)
    before = est.predict_joint_log_proba(case.X)
    # a label of another type than classes_ may be reported as a TypeError
    must = ValueError if not isinstance(unseen, str) else CLEAN
    assert_clean(lambda: est.partial_fit(case.X, y), must_raise=must,
                 what=f"{case.name}.partial_fit with unseen label {unseen!r}")
    np.testing.assert_array_equal(est.predict_joint_log_proba(case.X), before)
    # and classes that changed between calls
    other = data.draw(st.sampled_from([[0, 1], [0, 1, 2, 3], [1, 2, 3], ["a", "b", "c"], []]))
    assert_clean(lambda: est.partial_fit(case.X, Y, classes=other), must_raise=ValueError,
                 what=f"{case.name}.partial_fit with classes {other}")
    np.testing.assert_array_equal(est.predict_joint_log_proba(case.X), before)


@by_case
@pytest.mark.parametrize("classes", [[], [0], [0, 0, 1, 2], [[0, 1, 2]], None, "abc",
                                     [0, 1, 2, np.nan], [0, 1, 2, None]],
                         ids=["empty", "one", "duplicates", "nested", "none", "string",
                              "with_nan", "with_none"])
def test_odd_classes_in_first_partial_fit(case, classes):
    y = Y if classes != [0] else np.zeros(N_ROWS, dtype=int)
    raised, est = assert_clean(lambda: case.make().partial_fit(case.X, y, classes=classes),
                               what=f"{case.name}.partial_fit(classes={classes!r})")
    if raised is None:
        check_model(est, [case.X], f"partial_fit(classes={classes!r})")
        # announced classes without data must not give NaN posteriors either
        raised, _ = assert_clean(lambda: est.sample(3, random_state=0), what="sample")


class _AlwaysEqual(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


def _random_order(base):
    """A subclass of ``base`` whose order comparisons answer at random (no order at all)."""
    coin = np.random.default_rng(0)
    answer = lambda self, other: bool(coin.random() < 0.5)  # noqa: E731
    return type(f"Random{base.__name__.title()}", (base,),
                {name: answer for name in ("__lt__", "__le__", "__gt__", "__ge__")} |
                {"__hash__": base.__hash__})


@by_case
@pytest.mark.parametrize("kind", ["frozenset", "always_equal", "random_order_str",
                                  "random_order_date"])
def test_labels_that_do_not_compare_as_values_do(case, kind):
    """Labels whose comparisons are no order gave codes beyond the classes, and the kernels
    wrote past their arrays (an abort or a segfault), or dropped or repeated classes. A subclass
    of str is read as its characters; a type that is no label (frozenset), or a user's subclass
    of a time (pandas' own are kept), is refused."""
    names = np.array(["a", "b", "c"])[case.y]
    plain = case.fitted() if kind == "random_order_date" else case.make().fit(case.X, names)
    y = names.astype(object)
    if kind == "frozenset":
        y[:] = [frozenset({i % 3, 5}) if i % 2 else frozenset({i % 3}) for i in range(len(y))]
    elif kind == "always_equal":
        y[::2] = [_AlwaysEqual(v) for v in y[::2]]
    elif kind == "random_order_str":
        y[:] = [_random_order(str)(v) for v in y]
    else:
        day = _random_order(datetime.date)
        y[:] = [day(2020, 1, 1 + int(v)) for v in case.y]
    raised, model = assert_clean(lambda: case.make().fit(case.X, y), what=f"{kind} labels")
    if kind in ("frozenset", "random_order_date"):
        assert raised is not None and "Unknown label type in y: " in str(raised)
    else:
        assert raised is None and type(model.classes_[0]) is str
        np.testing.assert_array_equal(model.classes_, ["a", "b", "c"])
        np.testing.assert_array_equal(model.predict_proba(case.X), plain.predict_proba(case.X))
    for kind_of_call in ("partial_fit", "score"):
        est = case.make().fit(case.X, names) if kind_of_call == "score" else case.make()
        call = (lambda: est.score(case.X, y)) if kind_of_call == "score" else \
            (lambda: est.partial_fit(case.X, y, classes=y))
        assert_clean(call, what=f"{kind_of_call} with {kind} labels")


class _Named(str):
    """A str subclass that behaves as its characters (as a StrEnum member does)."""


_CODES3 = np.random.default_rng(3).integers(0, 3, (40, 3)).astype(np.float64)
_CHOICES = {
    "handle_unknown": (lambda v: fastgen.CategoricalNB(handle_unknown=v), "ignore"),
    "covariance": (lambda v: fastgen.LinearDiscriminantAnalysis(covariance=v), "diagonal"),
    "shrinkage": (lambda v: fastgen.LinearDiscriminantAnalysis(shrinkage=v), "auto"),
    "alpha": (lambda v: fastgen.MultinomialNB(alpha=v), "evidence"),
    "poisson_alpha": (lambda v: fastgen.PoissonNB(alpha=v), "evidence"),
    "prior_strength": (lambda v: fastgen.GaussianNB(prior_strength=v), "evidence"),
    "feature_types": (lambda v: fastgen.MixedNB(["gaussian", v, "gaussian"]), "categorical"),
}


@pytest.mark.parametrize("name", list(_CHOICES))
def test_a_choice_is_the_characters_of_a_str_that_behaves_as_them(name):
    """A str subclass is the option its characters are only if it also compares and hashes as
    they do: one that says it equals everything passed every check and then acted as whichever
    option the code compared it with first (LDA's covariance 'diagonal' fitted as 'full', and
    its model file refused by load; a MixedNB column read by the wrong part), and such a 'bogus'
    was accepted. One that behaves (as a StrEnum member does) is its option."""
    make, value = _CHOICES[name]
    y = np.arange(len(_CODES3)) % 2
    expected = make(value).fit(_CODES3, y).predict_proba(_CODES3)
    np.testing.assert_array_equal(make(_Named(value)).fit(_CODES3, y).predict_proba(_CODES3),
                                  expected)
    try:  # (refused where it equals more than one option; else it is the one there is)
        got = make(_AlwaysEqual(value)).fit(_CODES3, y).predict_proba(_CODES3)
    except ValueError:
        assert name in ("handle_unknown", "covariance", "feature_types")
    else:
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError):
        make(_AlwaysEqual("bogus")).fit(_CODES3, y)


@pytest.mark.parametrize("name, value", [("decode_error", "ignore"), ("strip_accents", "ascii"),
                                         ("analyzer", "char"), ("input", "content")])
@pytest.mark.parametrize("Vectorizer", [CountVectorizer, HashingVectorizer])
def test_a_vectoriser_choice_is_the_characters_of_a_str_that_behaves_as_them(Vectorizer, name,
                                                                            value):
    """The vectorisers' choices as the models': 'bogus' in a str that equals everything raised
    Python's LookupError or KeyError where it was used, and input='content' in one read each
    document as a file name."""
    docs = [b"caf\xc3\xa9 au lait \xff", b"th\xc3\xa9"]
    params = {"decode_error": "ignore"} if name != "decode_error" else {}
    expected = Vectorizer(**params, **{name: value}).fit_transform(docs)
    got = Vectorizer(**params, **{name: _Named(value)}).fit_transform(docs)
    assert (got != expected).nnz == 0
    for hostile in (_AlwaysEqual(value), _AlwaysEqual("bogus")):
        with pytest.raises(ValueError, match=name):
            Vectorizer(**params, **{name: hostile}).fit_transform(docs)


def test_a_parameter_changed_while_the_parameters_are_validated_is_refused():
    """A value whose __float__ calls set_params: the model used the value it validated and
    recorded the other, so that its model file and its pickle predicted differently."""
    model = fastgen.MultinomialNB()

    class Sneaky(float):
        def __float__(self):
            model.set_params(alpha=50.0)
            return 1.0

    model.set_params(alpha=Sneaky(1.0))
    with pytest.raises(ValueError, match="changed while the hyperparameters were validated"):
        model.fit(COUNTS, Y)


# ---------------------------------------------------------------------------------------
# sample


@by_case
@SETTINGS
@given(data=st.data())
def test_sample_hostile(case, data):
    est = case.fitted()
    n = data.draw(st.sampled_from([0, -1, 1, 3, 2.5, "3", None, True, np.int64(2), 2**70,
                                   np.float64(3.0)]), label="n_samples")
    y = data.draw(st.sampled_from([None, 0, 2, 3, "a", np.nan, [0, 1], [0, 7], [[0, 1]], [],
                                   np.array([2, 2, 0])]), label="y")
    seed = data.draw(st.sampled_from([0, None, -1, 2**70, "seed", 1.5,
                                      np.random.RandomState(0), np.random.default_rng(1)]),
                     label="random_state")
    raised, value = assert_clean(lambda: est.sample(n, y=y, random_state=seed),
                                 what=f"{case.name}.sample({n!r}, y={y!r}, random_state="
                                      f"{seed!r})")
    if raised is not None:
        return
    Xs, ys = value
    assert Xs.shape[1] == case.X.shape[1] and Xs.shape[0] == len(ys)
    assert np.isin(ys, est.classes_).all()
    if len(ys) == 0:  # only when asked for none
        assert n == 0 or (y is not None and np.size(y) == 0), (n, y)
    vals = Xs.toarray() if sp.issparse(Xs) else np.asarray(Xs, dtype=np.float64)
    assert np.isfinite(vals).all(), f"non-finite samples {vals}"


# ---------------------------------------------------------------------------------------
# merge


def _others(case):
    """Objects a fitted model may be asked to merge."""
    half = slice(0, N_ROWS // 2)
    other_params = {"MultinomialNB": {"alpha": 2.0}, "BernoulliNB": {"binarize": 1.0},
                    "ComplementNB": {"norm": True}, "GaussianNB": {"var_smoothing": 1e-3},
                    "PoissonNB": {"beta": 2.0}, "CategoricalNB": {"alpha": 0.5},
                    "MixedNB": {"alpha": 0.5}, "LinearDiscriminantAnalysis":
                    {"covariance": "diagonal"}, "QuadraticDiscriminantAnalysis":
                    {"reg_param": 0.5}, "BaselineClassifier": {"priors": [0.2, 0.3, 0.5]}}
    return {
        "none": lambda: None,
        "int": lambda: 42,
        "string": lambda: "model",
        "array": lambda: case.X,
        "unfitted": lambda: case.make(),
        "other_kind": lambda: (fastgen.GaussianNB() if case.name != "GaussianNB"
                               else fastgen.BaselineClassifier()).fit(GAUSS, Y),
        "other_params": lambda: case.make(**other_params[case.name]).fit(case.X, Y),
        "narrower": lambda: (case.make(feature_types=MIXED_TYPES[:-1]) if case.name == "MixedNB"
                             else case.make()).fit(case.X[:, :-1], Y),
        "self": None,  # the model itself
        "string_labels": lambda: case.make().fit(case.X, np.array(["a", "b", "c"])[Y]),
        "new_classes": lambda: case.make().fit(case.X, Y + 3),
        "one_class_half": lambda: case.make().fit(case.X[half], np.where(Y[half] == 0, 0, 1)),
        "announced_only": lambda: case.make().partial_fit(case.X[:3], [0, 0, 0],
                                                           classes=[0, 5]),
        "weighted": lambda: case.make().fit(case.X, Y, sample_weight=np.linspace(1e-3, 1e3,
                                                                                  N_ROWS)),
        "foreign_estimator": _foreign_estimator,
    }


def _foreign_estimator():
    """A fitted scikit-learn model (same fitted-attribute names), or a look-alike without it."""
    try:
        from sklearn.naive_bayes import GaussianNB
    except ImportError:  # pragma: no cover
        class GaussianNB:
            def fit(self, X, y):
                self.classes_, self.n_features_in_ = np.unique(y), X.shape[1]
                return self
    return GaussianNB().fit(GAUSS, Y)


@by_case
@SETTINGS
@given(data=st.data())
def test_merge_hostile(case, data):
    others = _others(case)
    name = data.draw(st.sampled_from(sorted(others)), label="other")
    est = case.fitted()
    if name == "self":
        other = est
    else:
        raised, other = assert_clean(others[name], what=f"building {name}")
        if raised is not None:  # e.g. a one-class LDA/QDA: nothing to merge
            return
    unfitted_self = data.draw(st.booleans(), label="unfitted self")
    target = case.make() if unfitted_self else est
    raised, value = assert_clean(lambda: target.merge(other),
                                 what=f"{case.name}.merge({name})"
                                      f"{' into an unfitted model' if unfitted_self else ''}")
    if raised is None:
        assert value is target
        check_model(target, [case.X], f"{case.name}.merge({name})")


# ---------------------------------------------------------------------------------------
# loss matrices


BAD_LOSSES = {
    "short": (np.ones((2, 3)), ValueError),
    "wide": (np.ones((3, 4)), ValueError),
    "1d": (np.ones(3), ValueError),
    "scalar": (1.0, ValueError),
    "3d": (np.ones((3, 3, 1)), ValueError),
    "nan": (np.where(np.eye(3) > 0, np.nan, 1.0), ValueError),
    "inf": (np.where(np.eye(3) > 0, 0.0, np.inf), ValueError),
    "negative": (-LOSS, ValueError),
    "strings": (np.full((3, 3), "1"), CLEAN),
    "objects": (np.full((3, 3), None, dtype=object), CLEAN),
    "complex": (LOSS + 1j, CLEAN),
    "ragged": ([[0, 1, 2], [1, 0], [1, 1, 0]], CLEAN),
    "none_in_list": ([[0, 1, None], [1, 0, 1], [1, 1, 0]], CLEAN),
    "zeros": (np.zeros((3, 3)), None),
    "bool": (~np.eye(3, dtype=bool), None),
    "int": (np.ones((3, 3), dtype=np.int64) - np.eye(3, dtype=np.int64), None),
    "max_float": (np.where(np.eye(3) > 0, 0.0, np.finfo(np.float64).max), None),
    "subnormal": (np.where(np.eye(3) > 0, 0.0, 5e-324), None),
    "huge_and_tiny": (np.array([[0, 1e308, 5e-324], [1e-300, 0, 1e308], [1e308, 1e308, 0]]),
                      None),
    "float32": (LOSS.astype(np.float32), None),
    "sparse": (sp.csr_matrix(LOSS), CLEAN),
    "list": (LOSS.tolist(), None),
}


@by_case
@SETTINGS
@given(data=st.data())
def test_bad_loss_matrices(case, data):
    name = data.draw(st.sampled_from(sorted(BAD_LOSSES)), label="loss")
    loss, must = BAD_LOSSES[name]
    X = data.draw(st.sampled_from([case.X, case.X[:1]]), label="X")
    est = case.fitted()
    raised, pred = assert_clean(lambda: est.predict(X, loss=loss), must_raise=must,
                                what=f"{case.name}.predict(loss={name})")
    if raised is None:
        check_labels(pred, est, X.shape[0], f"predict(loss={name})")
        if name == "zeros":  # every decision costs nothing: the first class
            np.testing.assert_array_equal(pred, est.classes_[0])


def test_predict_loss_on_unfitted_models():
    for case in CASES:
        assert_clean(case.make().predict, case.X, LOSS,
                     must_raise=fastgen.NotFittedError, what=case.name)


# ---------------------------------------------------------------------------------------
# extreme parameters


SINGULAR = {
    # a constant feature, a duplicated feature, and fewer rows per class than features
    "constant_column": lambda X: np.column_stack([X[:, :-1], np.full(len(X), 3.0)]),
    "duplicate_column": lambda X: np.column_stack([X[:, :-1], X[:, 0]]),
    "all_equal": lambda X: np.ones_like(X),
    "one_row_per_class": lambda X: X[:3],
}

EXTREME_FLOATS = [0.0, -0.0, 5e-324, 1e-300, 1e-10, 1.0, 1e300, 1e308, np.finfo(float).max,
                  np.inf, -np.inf, np.nan, -1.0, -5e-324]
ODD_VALUES = [None, "1", True, [1.0], np.float32(0.5), np.int64(1), 1 + 0j]
BAD_PRIORS = [[0.5, 0.5, 0.5], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1e308, 1e308, 1e308],
              [np.nan, 0.5, 0.5], [-0.5, 1.0, 0.5], [0.5, 0.5], [1 / 3] * 3,
              [1 / 3 + 1e-9, 1 / 3, 1 / 3], [5e-324, 0.5, 0.5], "abc", [[0.3, 0.3, 0.4]],
              np.array([0.2, 0.3, 0.5], dtype=np.float32), [0.2, 0.3, 0.5 + 1e-7]]
N_THREADS = [None, 1, 2, -1, -(10**6), 0, 1.5, "2", True, 2**31, 2**63]


def param_space(case):
    floats = st.sampled_from(EXTREME_FLOATS + ODD_VALUES)
    priors = st.sampled_from([None] + BAD_PRIORS)
    n_threads = st.sampled_from(N_THREADS)
    common = {"n_threads": n_threads} if case.name != "BaselineClassifier" else {}
    name = case.name
    if name in ("MultinomialNB", "BernoulliNB", "ComplementNB"):
        space = {"alpha": st.one_of(floats, st.sampled_from([np.zeros(5), np.full(5, 1e308),
                                                             np.ones(4), np.full(5, np.nan)])),
                 "force_alpha": st.booleans(), "fit_prior": st.sampled_from([True, False, None]),
                 "class_prior": priors}
        if name == "BernoulliNB":
            space["binarize"] = floats
        if name == "ComplementNB":
            space["norm"] = st.sampled_from([True, False, "yes"])
    elif name == "GaussianNB":
        space = {"var_smoothing": floats, "priors": priors}
    elif name == "PoissonNB":
        space = {"alpha": floats, "beta": floats, "fit_prior": st.booleans(),
                 "class_prior": priors}
    elif name == "CategoricalNB":
        space = {"alpha": floats, "force_alpha": st.booleans(), "class_prior": priors,
                 "min_categories": st.sampled_from([None, 0, 1, 5, -1, 2.5, [1, 2, 3, 4],
                                                    [1, 2], np.full(4, 7), "3"]),
                 "handle_unknown": st.sampled_from(["error", "ignore", "bogus", None])}
    elif name == "MixedNB":
        space = {"alpha": floats, "var_smoothing": floats, "priors": priors,
                 "handle_unknown": st.sampled_from(["error", "ignore", "x"]),
                 "feature_types": st.sampled_from([MIXED_TYPES, MIXED_TYPES[:-1], None,
                                                   ["gaussian"] * 6, ["bogus"] * 6,
                                                   ["categorical"] * 6, "gaussian"])}
    elif name == "LinearDiscriminantAnalysis":
        space = {"covariance": st.sampled_from(["full", "diagonal", "spherical", "identity",
                                                "bogus", None]),
                 "shrinkage": st.sampled_from([None, 0.0, 1.0, 0.5, "auto", -0.1, 1.5, np.nan,
                                               "x", 5e-324]),
                 "n_components": st.sampled_from([None, 0, 1, 2, 5, -1, 1.5]),
                 "priors": priors, "max_iter": st.sampled_from([300, 1, 0, -1, 2.5]),
                 "tol": st.sampled_from([1e-6, 0.0, -1.0, np.nan, np.inf])}
    elif name == "QuadraticDiscriminantAnalysis":
        space = {"reg_param": st.sampled_from([0.0, 5e-324, 1e-300, 1e-12, 1.0, 1.0000001,
                                               -1e-300, np.nan, "0.1"]),
                 "priors": priors, "max_iter": st.sampled_from([300, 1, 0]),
                 "tol": st.sampled_from([1e-6, 0.0, np.nan])}
    else:
        space = {"priors": priors}
    space.update(common)
    return st.fixed_dictionaries({}, optional=space)


@by_case
@SETTINGS
@given(data=st.data())
def test_extreme_parameters(case, data):
    params = data.draw(param_space(case), label="params")
    if case.name == "MixedNB" and "feature_types" in params:
        est = fastgen.MixedNB(**params)
    else:
        est = case.make(**params)
    data_kind = data.draw(st.sampled_from(["valid"] + sorted(SINGULAR)), label="data")
    X = case.X if data_kind == "valid" else SINGULAR[data_kind](case.X)
    y = case.y[: len(X)]
    how = data.draw(st.sampled_from(["fit", "partial_fit", "partial_fit_twice"]), label="how")

    def fit():
        if how == "fit":
            return est.fit(X, y)
        if how == "partial_fit":
            return est.partial_fit(X, y, classes=CLASSES)
        est.partial_fit(X[: len(X) // 2 + 1], y[: len(X) // 2 + 1], classes=CLASSES)
        return est.partial_fit(X[len(X) // 2 + 1:], y[len(X) // 2 + 1:])

    what = f"{case.name}({params}).{how} on {data_kind} data"
    raised, _ = assert_clean(fit, what=what)
    if raised is not None:
        return
    check_model(est, [X, case.X], what)
    raised, pred = assert_clean(lambda: est.predict(case.X, loss=LOSS), what=f"{what} loss")
    if raised is None:
        check_labels(pred, est, N_ROWS, f"{what} predict(loss)")
    raised, score = assert_clean(lambda: est.score(case.X, case.y), what=f"{what} score")
    if raised is None:
        check_output("score", score, est, N_ROWS, what)
    assert_clean(lambda: est.sample(4, random_state=0), what=f"{what} sample")


# ---------------------------------------------------------------------------------------
# extreme values


EXTREMES = {
    REAL: [1e308, -1e308, np.finfo(float).max, -np.finfo(float).max, 5e-324, -5e-324,
           2.2e-308, 1e154, -1e154, 3e9, -3e9, 1e20, 0.0],
    COUNT: [1e308, np.finfo(float).max, 5e-324, 2.2e-308, 1e154, 3e9, 1e15, 1e20, 2.0**63,
            0.0, 1.0],
    CODE: [0.0, 1.0, 2.0, 3.0, 1000.0, -1.0, -1e15, 3e9, np.nan],
    ANY: [1e308, -1e308, 5e-324, -5e-324, 3e9, 1e20, 0.0],
}


@st.composite
def extreme_values(draw, case):
    """The valid set with some cells replaced by extreme values from each column's domain."""
    X = case.X.copy()
    cells = draw(st.lists(st.tuples(st.integers(0, X.shape[0] - 1),
                                    st.integers(0, X.shape[1] - 1)), min_size=1, max_size=8))
    everywhere = draw(st.booleans())
    for i, j in cells:
        X[i, j] = draw(st.sampled_from(EXTREMES[case.domains[j]]))
    if everywhere:  # one extreme value scaling whole columns
        j = draw(st.integers(0, X.shape[1] - 1))
        value = draw(st.sampled_from(EXTREMES[case.domains[j]]))
        X[:, j] = value if case.domains[j] == CODE else (
            X[:, j] / max(1.0, np.abs(X[:, j]).max()) * abs(value))  # divide first: no inf
    if not case.nan:
        X[np.isnan(X)] = 0.0
    dtype = draw(st.sampled_from([np.float64, np.float64, np.float32]))
    if dtype == np.float32:
        X = np.clip(X, -3e38, 3e38).astype(np.float32)  # no overflow to inf in the cast
    if case.sparse and draw(st.booleans()):
        X = sp.csr_matrix(X)
    return X


@by_case
@SETTINGS
@given(data=st.data())
def test_extreme_values_in_fit(case, data):
    X = data.draw(extreme_values(case), label="X")
    where = data.draw(st.sampled_from(FIT_POINTS), label="where")
    check_entry(case, where, X, what="on extreme values")


@by_case
@SETTINGS
@given(data=st.data())
def test_extreme_values_at_predict(case, data):
    X = data.draw(extreme_values(case), label="X")
    where = data.draw(st.sampled_from(PREDICT_POINTS + list(case.extra)), label="where")
    check_entry(case, where, X, what="on extreme values")


@by_case
@pytest.mark.parametrize("value", [1e308, -1e308, 5e-324, 3e9, 1e15, 1e20],
                         ids=["1e308", "-1e308", "5e-324", "3e9", "1e15", "1e20"])
def test_one_extreme_column_everywhere(case, value):
    """Pinned examples: one column of the training set scaled to an extreme magnitude (sign kept
    where the domain allows it), then every entry point."""
    X = case.X.copy()
    j = 0
    domain = case.domains[j]
    if domain == CODE:
        if value < 0 or value != int(value):
            pytest.skip("not a category code")
        X[Y == 0, j] = value
    elif domain == COUNT and value < 0:
        pytest.skip("counts are non-negative")
    else:
        X[:, j] = X[:, j] / np.abs(X[:, j]).max() * value
    for where in X_POINTS + list(case.extra):
        check_entry(case, where, X, what=f"with column 0 at {value:g}")


# ---------------------------------------------------------------------------------------
# huge documents


TEXT_CASES = [c for c in CASES if c.name in ("MultinomialNB", "BernoulliNB", "ComplementNB",
                                             "PoissonNB")]


@pytest.mark.parametrize("case", TEXT_CASES + [CASE["MixedNB"]], ids=lambda c: c.name)
@pytest.mark.parametrize("length", [3e9, 1e15, 2.0**63, 1e19, 1e300],
                         ids=["3e9", "1e15", "2^63", "1e19", "1e300"])
def test_huge_documents(case, length):
    """Documents of billions of words (and beyond an int64): fit, every predict method, and
    sample (which draws document lengths from the training lengths)."""
    X = case.X.copy()
    count_cols = [j for j, d in enumerate(case.domains) if d in (COUNT, ANY)]
    X[0, count_cols] = length / len(count_cols)
    X[5, count_cols[-1]] = length
    for fmt in ("dense", "csr") if case.sparse else ("dense",):
        Xf = sp.csr_matrix(X) if fmt == "csr" else X
        for where in X_POINTS:
            check_entry(case, where, Xf, what=f"{fmt} with a document of {length:g} words")
        raised, est = assert_clean(case.make().fit, Xf, Y, what="fit")
        if raised is None:
            raised, value = assert_clean(functools.partial(est.sample, 6, y=[0, 0, 2, 2, 1, 1],
                                                              random_state=0),
                                         what=f"{case.name}.sample after huge documents")
            if raised is None:
                vals = value[0].toarray() if sp.issparse(value[0]) else value[0]
                assert np.isfinite(vals).all() and (vals >= 0).all()


@pytest.mark.parametrize("case", TEXT_CASES, ids=lambda c: c.name)
def test_long_sparse_rows(case):
    """A vocabulary of 300 000 words and one document using every word."""
    n_features = 300_000
    rng = np.random.default_rng(1)
    X = sp.random(30, n_features, density=1e-3, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 5, k).astype(float))
    full = sp.csr_matrix(np.ones((1, n_features)))
    X = sp.vstack([X, full]).tocsr()
    y = np.arange(31) % 3
    est = case.make().fit(X, y)
    for where in ("predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        raised, value = assert_clean(getattr(est, where), X, what=where)
        assert raised is None
        check_output(where, value, est, 31, f"{case.name}.{where} on long rows")


# ---------------------------------------------------------------------------------------
# information_gain


@SETTINGS
@given(data=st.data())
def test_information_gain_hostile(data):
    case = CASE["MultinomialNB"]
    source = data.draw(st.sampled_from(["csr", "dtype", "extreme"]), label="source")
    must = None
    if source == "csr":
        X = data.draw(malformed_csr(case), label="X")
        problem = csr_problem(X)
        must = ValueError if problem not in (None, "non-integer index arrays") else None
    elif source == "dtype":
        X, must = data.draw(wrong_dtype(CASE["BernoulliNB"]), label="X")  # any sign, no NaN
    else:
        X = data.draw(extreme_values(CASE["BernoulliNB"]), label="X")
    w = data.draw(st.sampled_from([None, "ones", "tiny", "huge"]), label="sample_weight")
    weights = {None: None, "ones": np.ones(_n_rows(X)),
               "tiny": np.full(_n_rows(X), 5e-324), "huge": np.full(_n_rows(X), 1e308)}[w]
    raised, mi = assert_clean(lambda: fastgen.information_gain(X, labels_for(X),
                                                               sample_weight=weights),
                              must_raise=must, what=f"information_gain({source}, w={w})")
    if raised is None:
        mi = np.asarray(mi)
        assert mi.shape == (_width(X),) and np.isfinite(mi).all() and (mi >= 0).all(), mi
        assert (mi <= np.log(3) + 1e-12).all(), mi


@pytest.mark.parametrize("w", ["short", "negative", "nan", "all_zero", "strings"])
def test_information_gain_bad_sample_weight(w):
    assert_clean(lambda: fastgen.information_gain(COUNTS, Y, sample_weight=BAD_WEIGHTS[w]),
                 must_raise=CLEAN, what=f"information_gain sample_weight {w}")


@pytest.mark.parametrize("n_threads", [0, 1.5, "2", True, None, -(10**6)])
def test_information_gain_odd_n_threads(n_threads):
    must = None if n_threads is None or n_threads == -(10**6) else CLEAN
    assert_clean(lambda: fastgen.information_gain(COUNTS, Y, n_threads=n_threads),
                 must_raise=must, what=f"information_gain n_threads={n_threads!r}")


@pytest.mark.parametrize("n_threads", [2**31, 2**63, 2**100], ids=["2^31", "2^63", "2^100"])
def test_information_gain_n_threads_too_large_for_an_int(n_threads):
    """On work above PARALLEL_MIN_WORK the count reaches the kernel: OverflowError."""
    X = np.tile(COUNTS, (20_000 // N_ROWS + 1, 4))
    raised, mi = assert_clean(lambda: fastgen.information_gain(X, labels_for(X),
                                                               n_threads=n_threads),
                              what=f"information_gain n_threads={n_threads} on {X.shape}")
    if raised is None:
        assert np.isfinite(mi).all()


# ---------------------------------------------------------------------------------------
# n_threads: odd values on work large enough to reach the parallel kernels


@by_case
@pytest.mark.parametrize("n_threads", [2**31], ids=["2^31"])
def test_n_threads_too_large_for_an_int(case, n_threads):
    """Work above PARALLEL_MIN_WORK passes n_threads to the kernels: a value beyond a C int must
    be a clear error (or be clamped), not an OverflowError from the C conversion."""
    if case.name == "BaselineClassifier":
        pytest.skip("no n_threads")
    reps = 20_000 // N_ROWS + 1
    X = np.tile(case.X, (reps, 12))
    if case.name == "MixedNB":
        est = fastgen.MixedNB(MIXED_TYPES * 12, n_threads=n_threads)
    else:
        est = case.make(n_threads=n_threads)
    y = np.tile(Y, reps)
    raised, _ = assert_clean(lambda: est.fit(X, y), what=f"{case.name}(n_threads={n_threads})"
                                                         f".fit on {X.shape}")
    if raised is None:
        check_model(est, [X[:2000]], f"{case.name}(n_threads={n_threads})")


# ---------------------------------------------------------------------------------------
# inputs that crash the interpreter: run in a subprocess


def run_isolated(code, *, address_space_gb=None, timeout=120):
    """Run ``code`` in a fresh interpreter; return (returncode, stdout + stderr). A negative
    returncode is a signal (-11: segmentation fault)."""
    prelude = ""
    if address_space_gb is not None:
        prelude = ("import resource\nresource.setrlimit(resource.RLIMIT_AS, "
                   f"({int(address_space_gb * 2**30)}, resource.RLIM_INFINITY))\n")
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], check=False,
                          capture_output=True, text=True, timeout=timeout,
                          cwd=os.path.dirname(os.path.dirname(fastgen.__file__)))
    return proc.returncode, proc.stdout + proc.stderr


NON_CSR_CORRUPTIONS = {
    "csc_index_too_large": "M = sp.csc_matrix(X); M.indices = M.indices.copy(); "
                           "M.indices[1] = 10**6",
    "csc_index_negative": "M = sp.csc_matrix(X); M.indices = M.indices.copy(); "
                          "M.indices[1] = -10**6",
    "csc_indptr_past_data": "M = sp.csc_matrix(X); M.indptr = M.indptr.copy(); "
                            "M.indptr[-1] = 10**6",
    "coo_row_too_large": "M = sp.coo_matrix(X); M.row = M.row.copy(); M.row[1] = 10**6",
    "coo_col_negative": "M = sp.coo_matrix(X); M.col = M.col.copy(); M.col[1] = -5",
    "bsr_index_too_large": "M = sp.bsr_matrix(X); M.indices = M.indices.copy(); "
                           "M.indices[1] = 10**6",
}


@pytest.mark.parametrize("corruption", sorted(NON_CSR_CORRUPTIONS))
@pytest.mark.parametrize("model", ["MultinomialNB", "PoissonNB", "BaselineClassifier"])
def test_malformed_non_csr_sparse_is_an_error(model, corruption):
    """fastgen converts other sparse formats to CSR itself; arrays of a CSC/COO/BSR matrix that
    do not describe a matrix must be a ValueError, not a crash inside the conversion."""
    code = f"""
        import numpy as np, scipy.sparse as sp, fastgen
        X = np.array([[1, 0, 2], [0, 3, 1], [2, 2, 0], [0, 0, 1], [4, 1, 1], [1, 1, 1.]])
        {NON_CSR_CORRUPTIONS[corruption]}
        try:
            fastgen.{model}().fit(M, np.arange(6) % 3)
        except (ValueError, TypeError) as exc:
            print("clean", type(exc).__name__, exc)
        else:
            print("accepted")
    """
    returncode, output = run_isolated(code)
    assert returncode == 0, f"{model}.fit on {corruption}: process died ({returncode}): {output}"
    assert output.startswith("clean"), output


def test_n_threads_beyond_what_the_system_gives_is_not_a_crash():
    """n_threads=10000 on parallel-sized work, with a 3 GiB address space (a container limit):
    thread creation fails; that must not abort the interpreter (libgomp's gomp_fatal)."""
    code = """
        import numpy as np, fastgen
        rng = np.random.default_rng(0)
        X = rng.integers(0, 3, (2000, 200)).astype(float)
        y = rng.integers(0, 3, 2000)
        try:
            fastgen.MultinomialNB(n_threads=10_000).fit(X, y).predict_proba(X)
        except (ValueError, TypeError, RuntimeError) as exc:
            print("clean", type(exc).__name__, exc)
        else:
            print("ok")
    """
    if not fastgen.openmp_enabled():
        pytest.skip("built without OpenMP")
    returncode, output = run_isolated(code, address_space_gb=3)
    assert returncode == 0, f"process died ({returncode}): {output}"


# ---------------------------------------------------------------------------------------
# pinned regressions found by the properties above (each fails until fixed)


def test_score_with_all_zero_sample_weight_is_a_value_error():
    est = CASE["MultinomialNB"].fitted()
    assert_clean(lambda: est.score(COUNTS, Y, sample_weight=np.zeros(N_ROWS)),
                 must_raise=ValueError, what="score(sample_weight=zeros)")


@pytest.mark.parametrize("w", ["nan", "negative", "inf"])
def test_score_validates_sample_weight_like_fit(w):
    est = CASE["MultinomialNB"].fitted()
    assert_clean(lambda: est.score(COUNTS, Y, sample_weight=BAD_WEIGHTS[w]),
                 must_raise=ValueError, what=f"score(sample_weight={w})")


@pytest.mark.parametrize("make, error", [
    (lambda: fastgen.MultinomialNB(alpha=10**400), ValueError),
    (lambda: fastgen.GaussianNB(var_smoothing=10**400), ValueError),
    (lambda: fastgen.PoissonNB(beta=10**400), ValueError),
    (lambda: fastgen.MixedNB(var_smoothing=10**400), ValueError),
    (lambda: fastgen.MultinomialNB(class_prior=[10**400, 1, 1]), ValueError),
    (lambda: fastgen.GaussianNB(priors=[10**400, 1, 1]), ValueError),
    (lambda: fastgen.MultinomialNB(alpha=np.complex128(1 + 5j)), ValueError),
    (lambda: fastgen.MultinomialNB(class_prior=np.array([0.5 + 1j, 0.25, 0.25])), ValueError),
    (lambda: fastgen.BernoulliNB(binarize=float("nan")), ValueError),
], ids=["alpha", "var_smoothing", "beta", "mixed", "class_prior", "priors", "complex-alpha",
        "complex-prior", "binarize-nan"])
def test_parameters_beyond_float64_or_complex(make, error):
    """An int beyond float64 is out of range (float() of it escaped as an OverflowError), a
    complex number is not its real part (dropped, with NumPy's ComplexWarning), a float32 strength
    casts no warning, a Fraction is the number it is: one check of real parameters
    (_validation.real_in)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(error, match="parameter of"):
            make().fit(COUNTS, Y)


def test_real_parameters_of_other_types():
    """A complex sample_weight is not its real part; a float32 or float16 prior_strength casts
    no NumPy warning; a Fraction is the number it is (NumPy's isnan refused it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="sample_weight must be numeric"):
            fastgen.MultinomialNB().fit(COUNTS, Y, sample_weight=1 + 5j)
        for strength in (np.float32(0.5), np.float16(2.0)):
            for cls in (fastgen.GaussianNB, fastgen.LinearDiscriminantAnalysis):
                cls(prior_strength=strength, predictive=True).fit(GAUSS, Y)
        fraction = fastgen.BernoulliNB(binarize=Fraction(1, 3)).fit(COUNTS, Y)
        np.testing.assert_array_equal(fraction.predict_proba(COUNTS), fastgen.BernoulliNB(
            binarize=1 / 3).fit(COUNTS, Y).predict_proba(COUNTS))


def test_array_forms_and_counts_said_by_name():
    """CSR arrays that are 2-D or not integers (Cython's "No matching signature found"; a float
    indptr was truncated and accepted), more columns than a model can have (a MemoryError of
    32 GiB), bools for LDA's max_iter and tol (accepted), NumPy's ints for n_threads (refused,
    though scikit-learn's grids are made of them)."""
    X = sp.csr_matrix(COUNTS)
    flat = sp.csr_matrix(COUNTS)
    flat.indices = flat.indices.reshape(-1, 1)
    floats = sp.csr_matrix(COUNTS)
    floats.indptr = floats.indptr.astype(np.float64)
    for bad, match in ((flat, "must be 1-D"), (floats, "must be integers")):
        with pytest.raises(ValueError, match=match):
            fastgen.MultinomialNB().fit(bad, Y)
    wide = sp.csr_matrix((np.ones(2), np.array([0, 2**31 + 4]), np.array([0, 1, 2])),
                         shape=(2, 2**31 + 5))
    with pytest.raises(ValueError, match="2147483653 features: MultinomialNB takes at most"):
        fastgen.MultinomialNB().fit(wide, [0, 1])
    for name in ("max_iter", "tol"):
        with pytest.raises(ValueError, match=f"'{name}' parameter"):
            fastgen.LinearDiscriminantAnalysis(**{name: True}).fit(GAUSS, Y)
    np.testing.assert_array_equal(
        fastgen.MultinomialNB(n_threads=np.int64(2)).fit(X, Y).predict_proba(X),
        fastgen.MultinomialNB(n_threads=2).fit(X, Y).predict_proba(X))


def test_score_of_weights_whose_sum_overflows():
    """Weights each finite, as fit takes them, whose sum passes 1e308: the weighted accuracy
    (NaN, with two NumPy warnings) is the ratio it always is; the caller's weights unchanged."""
    est = CASE["MultinomialNB"].fitted()
    plain = est.score(COUNTS, Y)
    weight = np.full(N_ROWS, 1e308)
    assert est.score(COUNTS, Y, sample_weight=weight) == pytest.approx(plain, rel=1e-12)
    assert (weight == 1e308).all()
    mixed = np.where(np.arange(N_ROWS) < 2, 1e308, 1.0)
    right = est.predict(COUNTS) == Y
    assert est.score(COUNTS, Y, sample_weight=mixed) == pytest.approx(
        np.average(right, weights=mixed / 1e308), rel=1e-12)


@pytest.mark.parametrize("scale", [1e20, 1e154, 1e307])
@pytest.mark.parametrize("Estimator", [fastgen.MultinomialNB, fastgen.ComplementNB],
                         ids=lambda c: c.__name__)
def test_counts_beyond_int64_fit_cleanly(Estimator, scale):
    """Document lengths are kept per (class, rounded length): a length >= 2**63 must not wrap to
    a negative int64 (scipy's 'negative axis 1 index' plus a RuntimeWarning)."""
    X = COUNTS / COUNTS.max() * scale
    raised, est = assert_clean(Estimator().fit, X, Y, what=f"fit on counts x{scale:g}")
    if raised is None:
        check_model(est, [X, COUNTS], f"fit on counts x{scale:g}")
    else:
        assert "negative axis" not in str(raised), raised


@pytest.mark.parametrize("scale", [1e154, 1e307])
@pytest.mark.parametrize("Estimator", [fastgen.GaussianNB, fastgen.MixedNB],
                         ids=lambda c: c.__name__)
def test_gaussian_variance_overflow_gives_no_nan_posteriors(Estimator, scale):
    """Values whose squares overflow: variances become inf and predict_proba returned rows of
    zeros (log-posteriors -inf, joint log-likelihoods NaN)."""
    X = GAUSS / np.abs(GAUSS).max() * scale
    raised, est = assert_clean(Estimator().fit, X, Y, what=f"fit on x{scale:g}")
    if raised is None:
        check_model(est, [X, GAUSS], f"{Estimator.__name__} fit on x{scale:g}")


@pytest.mark.parametrize("code", [3e9, 1e15])
@pytest.mark.parametrize("where", ["fit", "partial_fit"])
def test_categorical_code_in_the_billions_is_a_value_error(where, code):
    """A code that passes the 'fits an index' check (< 9e15) but whose table cannot be allocated:
    a ValueError naming the code, not numpy's MemoryError (603 GiB for 3e9)."""
    X = CODES.copy()
    X[0, 0] = code
    case = CASE["CategoricalNB"]
    check_entry(case, where, X, what=f"with category code {code:g}")


def test_counts_whose_row_sum_wraps_int64_fit_cleanly():
    """int64 counts are read as they are; a row summing past 2**63 wrapped to a negative
    document length (ValueError 'negative axis 1 index', meaningless to the caller)."""
    X = COUNTS.astype(np.int64)
    X[0, :2] = 2**62
    for Estimator in (fastgen.MultinomialNB, fastgen.ComplementNB):
        raised, est = assert_clean(Estimator().fit, X, Y,
                                   what=f"{Estimator.__name__}.fit on int64 rows past 2**63")
        if raised is None:
            check_model(est, [COUNTS], f"{Estimator.__name__} on int64 rows past 2**63")
        else:
            assert "negative axis" not in str(raised), raised


@pytest.mark.parametrize("where", ["fit", "predict"])
def test_poisson_huge_counts_give_no_nan_posteriors(where):
    """A count of 1e308 in training, or the largest float at prediction (finite, non-negative):
    PoissonNB's joint log-likelihoods were NaN (inf - inf) and predict_proba rows NaN or all
    zero."""
    X = COUNTS.copy()
    X[0, 0] = 1e308 if where == "fit" else np.finfo(np.float64).max
    case = CASE["PoissonNB"]
    if where == "fit":
        check_entry(case, "fit", X, what="with a count of 1e308")
    else:
        for point in ("predict_proba", "predict_log_proba", "predict_joint_log_proba"):
            check_entry(case, point, X, what=f"with a count of {X[0, 0]:g}")


@pytest.mark.parametrize("where", ["predict", "partial_fit"])
def test_mixed_nb_fitted_on_array_given_dataframe_with_text_column(where):
    """MixedNB fitted on an ndarray, then given a DataFrame whose categorical column is not
    numeric (object/str): KeyError from the empty categories_ (should be a clear error or read
    the codes)."""
    X = np.column_stack([GAUSS[:, 0], CODES[:, 0]])
    est = fastgen.MixedNB(["gaussian", "categorical"]).fit(X, Y)
    frame = pd.DataFrame({"a": GAUSS[:, 0], "b": np.array(["x", "y", "z"])[Y]})
    call = (lambda: est.predict(frame)) if where == "predict" else (
        lambda: est.partial_fit(frame, Y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # fitted without feature names
        assert_clean(call, what=f"MixedNB.{where} on a DataFrame with a text column")


@pytest.mark.parametrize("other", [None, 42, "model", COUNTS, object()],
                         ids=["None", "int", "str", "ndarray", "object"])
def test_merge_with_a_non_model_is_a_clean_error(other):
    """merge(other) calls other.__sklearn_is_fitted__(): AttributeError for anything else."""
    est = CASE["MultinomialNB"].fitted()
    assert_clean(lambda: est.merge(other), must_raise=CLEAN, what=f"merge({type(other)})")


@pytest.mark.parametrize("classes", [[], np.array([])], ids=["list", "array"])
def test_partial_fit_with_no_classes_is_a_value_error(classes):
    """partial_fit(classes=[]): IndexError from known[len(known) - 1]."""
    assert_clean(lambda: fastgen.GaussianNB().partial_fit(GAUSS, Y, classes=classes),
                 must_raise=ValueError, what="partial_fit(classes=[])")


@pytest.mark.parametrize("n_samples", [2**63, 2**70])
def test_sample_with_an_impossible_count_is_a_clean_error(n_samples):
    """sample(n_samples=2**70): OverflowError from numpy's size conversion."""
    est = CASE["GaussianNB"].fitted()
    assert_clean(lambda: est.sample(n_samples, random_state=0), must_raise=CLEAN,
                 what=f"sample({n_samples})")


# Cases found from outside the test suite that the declared model state closed: min_categories
# is validated with the other hyperparameters (its offsets wrapped around int64: a segfault),
# and MixedNB learns its columns' form before indexing them.
@pytest.mark.parametrize("minimum", [2**62, 2**40, [2**62, 1, 1, 1], -1])
def test_categorical_min_categories_beyond_the_cap_is_a_value_error(minimum):
    with pytest.raises(ValueError, match="min_categories"):
        fastgen.CategoricalNB(min_categories=minimum).fit(np.zeros((2, 4)), [0, 1])


@pytest.mark.parametrize("X", [3.0, (row for row in [[1.0], [2.0]]), [[[1.0]]]],
                         ids=["scalar", "generator", "3d"])
def test_mixed_nb_fit_on_what_is_not_a_matrix_is_a_value_error(X):
    with pytest.raises(ValueError, match="2D array|dimension"):
        fastgen.MixedNB().fit(X, [0, 1])


def test_mixed_nb_predict_with_other_columns_is_a_value_error():
    model = fastgen.MixedNB(["gaussian", "categorical"]).fit(
        np.array([[0.1, 1], [0.5, 0], [0.3, 1]]), [0, 1, 0])
    for X in (np.zeros((2, 3)), np.zeros((2, 1))):
        with pytest.raises(ValueError, match="features"):
            model.predict(X)


# Extreme integer codes: int64 codes were read through a double, and 2**63 - 512 and above
# rounded to 2**63, whose conversion back is undefined (the release build counted them as
# category 0); the largest code then wrapped around when one was added to it. Huge negative
# float codes (missing) were converted to an integer the same way when predicting.
@pytest.mark.parametrize("code", [np.iinfo(np.int64).max, 2**63 - 512, 2**62, 2**24])
@pytest.mark.parametrize("where", ["fit", "partial_fit"])
def test_categorical_extreme_int64_code_is_a_value_error(where, code):
    X = np.zeros((2, 3), dtype=np.int64)
    X[0, 1] = code
    model = fastgen.CategoricalNB()
    call = model.fit if where == "fit" else functools.partial(model.partial_fit, classes=[0, 1])
    with pytest.raises(ValueError, match=f"Feature 1 has the category code {code}"):
        call(X, [0, 1])


@pytest.mark.parametrize("code", [-1e300, -1e17, -(2.0**63), np.finfo(np.float64).min])
def test_categorical_huge_negative_code_is_missing(code):
    model = fastgen.CategoricalNB().fit(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), [0, 1, 0])
    X = np.array([[code, 1.0]])
    want = model.predict_log_proba(np.array([[np.nan, 1.0]]))
    np.testing.assert_array_equal(model.predict_log_proba(X), want)
    refit = fastgen.CategoricalNB().fit(np.array([[1.0, 0.0], [code, 1.0], [1.0, 1.0]]), [0, 1, 0])
    np.testing.assert_array_equal(refit.category_count_[0], [[0.0, 2.0], [0.0, 0.0]])


# ---------------------------------------------------------------------------------------
# the text front end, IO and the command line (an outside attack on fastgen.text, fastgen.io
# and python -m fastgen): crashes closed at the boundary that should have stopped them


def _same_csr(X, R):
    """X is a well-formed CSR matrix equal to R (shape, dtype and values)."""
    X.check_format(full_check=True)
    return X.shape == R.shape and X.dtype == R.dtype and (X != R).nnz == 0


def test_str_subclass_whose_lower_is_not_a_str_is_a_type_error():
    """A document is read by the kernel from its internal buffer: the Python layer hands over
    exact str only. A str subclass whose lower() returns a list, an array, bytes or a dict
    crashed the tokeniser (SIGSEGV, std::bad_alloc abort or garbage)."""
    code = """
        import numpy as np
        from fastgen.text import CountVectorizer, HashingVectorizer
        for value in ([1, 2, 3] * 1000, np.arange(10**6), b"some bytes" * 1000, {"a": 1}):
            class Doc(str):
                def lower(self, value=value):
                    return value
            for make in (lambda: HashingVectorizer().transform([Doc("Some Text here")]),
                         lambda: CountVectorizer().fit_transform([Doc("Some Text here")]),
                         lambda: CountVectorizer(vocabulary=["text"]).transform([Doc("Some")])):
                try:
                    make()
                    print("no error", type(value).__name__)
                except TypeError as exc:
                    assert "lower()" in str(exc) and type(value).__name__ in str(exc), exc
        print("done")
    """
    rc, out = run_isolated(code)
    assert rc == 0 and out.strip() == "done", out


def _plain_result(make, docs):
    return make().fit_transform([str.__str__(d) for d in docs])


class _Lying(str):
    """A str whose methods lie about it (kept out of every decision about its characters)."""

    def __len__(self):
        return 10**9

    def __iter__(self):
        return iter(["x"] * 3)

    def encode(self, *args, **kwargs):
        return b"\xff" * 10**6

    def __hash__(self):
        return 7

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def isascii(self):
        return True

    def __str__(self):
        return "lies"


@pytest.mark.parametrize("python_path", [False, True], ids=["tokeniser", "python-analyzer"])
@pytest.mark.parametrize("Vectorizer", ["HashingVectorizer", "CountVectorizer"])
def test_str_subclass_documents_count_as_their_characters(Vectorizer, python_path):
    from fastgen import text as ft

    docs = [_Lying("Alpha beta Gamma beta"), _Lying("gamma DELTA ünïcode")]
    kwargs = {"token_pattern": r"(?u)\b\w+\b"} if python_path else {}
    make = functools.partial(getattr(ft, Vectorizer), **kwargs)
    X = make().fit_transform(docs)
    assert _same_csr(X, _plain_result(make, docs))


def test_lower_returning_a_str_subclass_is_copied_and_preprocessor_checked():
    from fastgen import text as ft

    class Doc(str):
        def lower(self):
            return _Lying(str.lower(self))

    X = ft.CountVectorizer().fit_transform([Doc("Big CAT"), Doc("cat")])
    assert _same_csr(X, ft.CountVectorizer().fit_transform(["big cat", "cat"]))
    for bad in (b"bytes", ["list"], None):
        with pytest.raises(TypeError, match=f"preprocessor returned {type(bad).__name__}"):
            ft.HashingVectorizer(preprocessor=lambda d, bad=bad: bad).transform(["a doc"])
    with pytest.raises(TypeError, match="strip_accents returned int"):
        ft.CountVectorizer(strip_accents=lambda d: 3).fit(["a doc"])


def test_str_subclass_stop_words_and_vocabulary_terms_are_their_characters():
    from fastgen import text as ft

    docs = ["the cat and the dog", "a cat"]
    stop = [_Lying("the"), _Lying("and")]
    for kwargs in ({}, {"token_pattern": r"(?u)\b\w+\b"}):
        X = ft.CountVectorizer(stop_words=stop, **kwargs).fit_transform(docs)
        ref = ft.CountVectorizer(stop_words=["the", "and"], **kwargs).fit_transform(docs)
        assert _same_csr(X, ref)
    cv = ft.CountVectorizer(vocabulary=[_Lying("cat"), _Lying("dog")])
    assert _same_csr(cv.fit_transform(docs), ft.CountVectorizer(vocabulary=["cat", "dog"])
                     .fit_transform(docs))
    assert all(type(t) is str for t in cv.vocabulary_)
    with pytest.raises(ValueError, match="Duplicate term"):
        ft.CountVectorizer(vocabulary=[_Lying("cat"), "cat"]).fit(docs)


def test_ngram_range_of_int_and_tuple_subclasses_is_read_by_value():
    from fastgen import text as ft

    class Int(int):
        def __sub__(self, other):
            return -10**6

        def __lt__(self, other):
            return True

    class Pair(tuple):
        def __len__(self):
            return 2

        def __iter__(self):
            return iter((1, 10**9))

    X = ft.HashingVectorizer(ngram_range=Pair((Int(1), Int(2)))).transform(["a b c dd ee ff"])
    assert _same_csr(X, ft.HashingVectorizer(ngram_range=(1, 2)).transform(["a b c dd ee ff"]))
    with pytest.raises(TypeError, match="ngram_range"):
        ft.HashingVectorizer(ngram_range=Pair((1,))).transform(["a b"])


def test_assigning_or_mutating_vocabulary_cannot_desynchronise_transform():
    """Assigning vocabulary_ left the cached lookup table behind: transform returned a (1, 1)
    matrix with column indices up to 299,999, whose toarray() aborted."""
    from fastgen import text as ft

    cv = ft.CountVectorizer().fit(["apple banana cherry " * 3 + " ".join(f"w{i}" for i in range(300_000))])
    cv.vocabulary_ = {"cherry": 0}
    X = cv.transform(["cherry banana cherry"])
    assert _same_csr(X, sp.csr_matrix(np.array([[2]], dtype=np.int64)))
    assert X.toarray().tolist() == [[2]]
    for mutate in (lambda v: v.__setitem__("banana", 1), lambda v: v.__delitem__("cherry"),
                   lambda v: v.clear(), lambda v: v.update(x=3)):
        with pytest.raises((TypeError, AttributeError)):
            mutate(cv.vocabulary_)
    for bad, error, fragment in (({"cherry": 0, "apple": 299_999}, ValueError, "index 1"),
                                 ({"cherry": 0, "apple": 0}, ValueError, "repeated indices"),
                                 ({}, ValueError, "empty"), ({b"x": 0}, TypeError, "str"),
                                 ({"x": 0.0}, TypeError, "int"), (["x"], TypeError, "mapping")):
        with pytest.raises(error, match=fragment):
            cv.vocabulary_ = bad
        assert dict(cv.vocabulary_) == {"cherry": 0}  # unchanged by a refused assignment
    assert _same_csr(cv.transform(["cherry"]), sp.csr_matrix(np.array([[1]], dtype=np.int64)))
    restored = pickle_roundtrip(cv)
    assert dict(restored.vocabulary_) == {"cherry": 0}
    assert _same_csr(restored.transform(["cherry cherry"]), sp.csr_matrix(np.array([[2]])))
    del cv.vocabulary_
    with pytest.raises(ValueError, match="not fitted"):
        cv.transform(["cherry"])


def pickle_roundtrip(obj):
    import pickle

    return pickle.loads(pickle.dumps(obj))


def test_fit_in_one_thread_while_others_transform():
    """Every transform runs on one published vocabulary: a concurrent fit gives the old model's
    answer or the new one's, never a malformed mix."""
    import threading

    from fastgen import text as ft

    docs_a = ["alpha beta gamma", "beta delta epsilon", "zeta"]
    docs_b = ["omega zeta", "alpha alpha psi"]
    probe = ["alpha beta zeta omega", "psi gamma gamma", "nothing known"] * 20
    refs = [ft.CountVectorizer(n_threads=1).fit(d).transform(probe) for d in (docs_a, docs_b)]
    assert refs[0].shape != refs[1].shape
    cv = ft.CountVectorizer(n_threads=1).fit(docs_a)
    stop, failures, seen = threading.Event(), [], set()

    def reader():
        while not stop.is_set():
            X = cv.transform(probe)
            try:
                match = [k for k, R in enumerate(refs) if _same_csr(X, R)]
            except Exception as exc:  # a malformed matrix
                failures.append(repr(exc))
                continue
            if not match:
                failures.append(f"a matrix of shape {X.shape} equal to neither model's")
            seen.update(match)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(300):
            cv.fit(docs_b if i % 2 else docs_a)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not failures, failures[:5]
    assert seen  # the readers ran


def test_kernel_allocation_failure_is_a_memory_error():
    """std::bad_alloc inside the tokeniser was swallowed ("Exception ignored in _reserve") and an
    uninitialised indptr returned: every allocation of the kernel path is a status now, and the
    Python layer raises MemoryError."""
    pytest.importorskip("resource")
    code = """
        import resource
        from fastgen.text import CountVectorizer, HashingVectorizer
        doc = " ".join(f"w{i}" for i in range(20_000))
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + 300 * 2**20, resource.RLIM_INFINITY))
        for make in (lambda: HashingVectorizer(ngram_range=(1, 20_000), n_threads=1),
                     lambda: HashingVectorizer(ngram_range=(1, 20_000), n_threads=2),
                     lambda: CountVectorizer(ngram_range=(1, 20_000))):
            try:
                make().fit_transform([doc])
                print("no error")
            except MemoryError as exc:
                assert "out of memory" in str(exc), exc
        X = HashingVectorizer(n_features=2**31 - 1).transform([doc])  # still working after them
        X.check_format(full_check=True)
        print("done", X.nnz)
    """
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("needs /proc/self/statm to size the address-space limit")
    rc, out = run_isolated(code)
    assert rc == 0 and out.split() == ["done", "20000"], out


def test_wide_ngram_range_costs_what_it_outputs():
    """ngram_range=(1, 65536) on one long document ran for minutes: n-gram lengths beyond the
    document's token count cost nothing, the n-grams from one token are hashed as prefixes of
    each other, and a document with more n-grams than a row can hold is a clear error."""
    import time

    from fastgen import text as ft

    tokens = [f"tok{i % 97}x{i}" for i in range(300)]
    doc = " ".join(tokens)
    for Vectorizer in (ft.HashingVectorizer, ft.CountVectorizer):
        fast = Vectorizer(ngram_range=(1, 65536), norm=None) if Vectorizer is ft.HashingVectorizer \
            else Vectorizer(ngram_range=(1, 65536))
        slow = clone_with(fast, tokenizer=str.split, lowercase=False)  # the exact Python path
        assert _same_csr(fast.fit_transform([doc, "tok1x1 tok2x2"]),
                         slow.fit_transform([doc, "tok1x1 tok2x2"]))
    long_doc = " ".join(f"w{i}" for i in range(2500))
    start = time.perf_counter()
    X = ft.HashingVectorizer(ngram_range=(1, 65536), norm=None, alternate_sign=False,
                             n_threads=1).transform([long_doc])
    assert time.perf_counter() - start < 15  # minutes before
    assert X.sum() == 2500 * 2501 // 2
    with pytest.raises(ValueError, match="n-grams"):
        ft.HashingVectorizer(ngram_range=(1, 65536)).transform([" ".join(["ab"] * 70_000)])


def clone_with(est, **params):
    out = type(est)(**est.get_params())
    out.set_params(**params)
    return out


@pytest.mark.parametrize("Vectorizer", ["HashingVectorizer", "CountVectorizer"])
def test_counts_that_do_not_fit_the_dtype_are_a_value_error(Vectorizer):
    """dtype=float16 with norm='l2' gave NaN for a word repeated 70,000 times (scikit-learn
    raises a ValueError: scipy.sparse has no float16); narrow integer dtypes wrapped."""
    from fastgen import text as ft

    make = getattr(ft, Vectorizer)
    extra = {"norm": None} if Vectorizer == "HashingVectorizer" else {}
    with pytest.raises(ValueError, match="float16"):
        make(dtype=np.float16).fit_transform(["word " * 70_000])
    for dtype, n in ((np.int8, 200), (np.uint8, 300), (np.int16, 40_000)):
        with pytest.raises(ValueError, match=f"cannot be represented in dtype={np.dtype(dtype)}"):
            make(dtype=dtype, alternate_sign=False, **extra).fit_transform(["word " * n]) \
                if Vectorizer == "HashingVectorizer" else make(dtype=dtype).fit_transform(["word " * n])
        X = make(dtype=dtype, binary=True, **extra).fit_transform(["word " * n])
        assert X.dtype == dtype and X.data.tolist() == [1]
    X = make(dtype=np.int8, **extra).fit_transform(["word " * 127])
    assert X.dtype == np.int8 and abs(int(X.data[0])) == 127
    if Vectorizer == "HashingVectorizer":
        with pytest.raises(ValueError, match="dtype=uint8"):  # a negative signed count
            make(dtype=np.uint8, **extra).fit_transform([" ".join(f"w{i}" for i in range(50))])
        X = make(dtype=np.float32, norm="l2").fit_transform(["word " * 70_000])
        assert np.isfinite(X.data).all() and np.allclose(np.abs(X.data), 1)


@pytest.mark.parametrize("params, fragment", [
    ({"token_pattern": "("}, "token_pattern"),
    ({"token_pattern": "(?P<x>a)(?P=y)"}, "token_pattern"),
    ({"encoding": "bogus"}, "encoding"),
    ({"encoding": "base64"}, "encoding"),
    ({"encoding": "utf-8\0"}, "encoding"),
])
@pytest.mark.parametrize("Vectorizer", ["HashingVectorizer", "CountVectorizer"])
def test_bad_text_parameters_are_value_errors_at_validation(Vectorizer, params, fragment):
    from fastgen import text as ft

    est = getattr(ft, Vectorizer)(**params)
    with pytest.raises(ValueError, match=fragment):
        est.fit(["no document is read"])
    with pytest.raises(ValueError, match=fragment):
        est.build_analyzer()


def test_io_hostile_files_are_value_errors(tmp_path):
    from fastgen import io as fio

    big = tmp_path / "big.csv"
    big.write_text("a,b,label\n" + "x" * 140_000 + ",1,0\n")
    with pytest.raises(ValueError, match=r"big\.csv:2: column 'a' holds 'xxxx[x]*\.\.\.', not a fin"):
        list(fio.iter_csv(big))
    huge = tmp_path / "huge.svm"
    huge.write_text(f"1 1:1\n0 {2**63}:1\n")
    with pytest.raises(ValueError, match=r"huge\.svm:2: index 9223372036854775808 is too large"):
        list(fio.iter_svmlight(huge))
    with pytest.raises(ValueError, match=r"huge\.svm:2: .*too large"):
        fio.scan_svmlight(huge)
    ok = tmp_path / "ok.svm"
    ok.write_text("1 1:1\n")
    with pytest.raises(ValueError, match="n_features"):
        list(fio.iter_svmlight(ok, n_features=2**64))
    latin = tmp_path / "latin.svm"
    latin.write_bytes(b"1 1:1\n\xff 2:1\n")
    with pytest.raises(ValueError, match=r"latin\.svm: not UTF-8 text"):
        fio.scan_svmlight(latin)
    with pytest.raises(ValueError, match="delimiter"):
        list(fio.iter_csv(big, delimiter=""))


@pytest.mark.parametrize("content", [
    "a,b,label\n" + "x" * 140_000 + ",1,0\n",
    b"a,b,label\n1,2,\xff\n",
], ids=["field-over-the-csv-limit", "not-utf8"])
def test_cli_hostile_csv_is_one_line_error(tmp_path, capsys, content):
    from fastgen.__main__ import main

    path = tmp_path / "bad.csv"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    assert main(["train", "GaussianNB", str(path), "-o", str(tmp_path / "m.fgm")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fastgen: error: ") and err.count("\n") == 1 and "bad.csv" in err


def test_cli_huge_svmlight_index_is_one_line_error(tmp_path, capsys):
    from fastgen.__main__ import main

    path = tmp_path / "huge.svm"
    path.write_text(f"1 1:1\n0 {2**63}:1\n")
    assert main(["train", "MultinomialNB", str(path), "-o", str(tmp_path / "m.fgm")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fastgen: error: ") and err.count("\n") == 1 and "too large" in err


@pytest.mark.skipif(pd is None, reason="pandas not installed")
def test_arrow_and_datetime_columns_are_read_or_refused_clearly():
    """Outside attack: an Arrow dictionary column with a missing value is read as the pandas
    category column it mirrors (float() of NA escaped); a datetime column beside numbers is
    refused naming its value (float() of a Timestamp escaped); MixedNB reads an Arrow decimal
    column as numbers, as its Float64 twin (it took it for labels); an Arrow list column is
    no column of labels (pyarrow's ArrowNotImplementedError escaped)."""
    pa = pytest.importorskip("pyarrow")
    y = np.arange(8) % 2
    values = [0, 1, 2, None, 1, 0, 2, 1]
    encoded = pa.array(values).dictionary_encode()
    arrow = pd.DataFrame({"x": pd.Series(encoded, dtype=pd.ArrowDtype(encoded.type)),
                          "v": np.arange(8.0)})
    category = pd.DataFrame({"x": pd.Series(values, dtype="category"), "v": np.arange(8.0)})
    for name in ("GaussianNB", "PoissonNB", "LinearDiscriminantAnalysis", "MultinomialNB"):
        try:
            want = getattr(fastgen, name)().fit(category, y).predict_proba(category)
        except ValueError as exc:
            with pytest.raises(ValueError, match=re.escape(str(exc))):
                getattr(fastgen, name)().fit(arrow, y)
            continue
        np.testing.assert_array_equal(
            getattr(fastgen, name)().fit(arrow, y).predict_proba(arrow), want)
    stamps = pd.Series(pd.date_range("2020", periods=8))
    for column in (stamps, stamps.astype(pd.ArrowDtype(pa.timestamp("ns")))):
        with pytest.raises(TypeError, match=r"row 0, column 't' holds Timestamp\(.*\): float"):
            fastgen.GaussianNB().fit(pd.DataFrame({"t": column, "v": np.arange(8.0)}), y)
    # a string stays NumPy's ValueError, as it was; an int beyond float64 is one too (its
    # OverflowError escaped)
    with pytest.raises(ValueError, match=r"row 1, column 1 holds 'x': could not convert"):
        fastgen.GaussianNB().fit(np.array([[1.0, 2.0], [3.0, "x"]], dtype=object), [0, 1])
    with pytest.raises(ValueError, match=r"row 0, column 1 holds 1000000.*: int too large"):
        fastgen.GaussianNB().fit(np.array([[1.0, 10**400], [3.0, 4.0]], dtype=object), [0, 1])
    nested = np.array([[1.0, 2.0], [3.0, None]], dtype=object)
    nested[1, 1] = np.array([0, 1])  # (NumPy's ValueError, where float() of it is a TypeError)
    with pytest.raises(ValueError, match=r"row 1, column 1 holds array"):
        fastgen.GaussianNB().fit(nested, [0, 1])
    decimals = [1.25, 3.5, 2.0, 7.75] * 2
    as_decimal = pd.DataFrame({"x": pd.Series([str(v) for v in decimals]).astype(
        pd.ArrowDtype(pa.decimal128(10, 2)))})
    as_float = pd.DataFrame({"x": pd.Series(decimals, dtype="Float64")})
    np.testing.assert_array_equal(fastgen.MixedNB().fit(as_decimal, y).predict_proba(as_decimal),
                       fastgen.MixedNB().fit(as_float, y).predict_proba(as_float))
    lists = pd.DataFrame({"l": pd.Series([[1], [2]] * 4,
                                         dtype=pd.ArrowDtype(pa.list_(pa.int64())))})
    for model in (fastgen.CategoricalNB(), fastgen.MixedNB()):
        with pytest.raises(ValueError, match="holds values that are no labels"):
            model.fit(lists, y)


class _LyingInt(int):
    """An int whose order comparisons say whatever lets it through a range check."""

    __ge__ = __le__ = lambda self, other: True  # noqa: E731
    __gt__ = __lt__ = lambda self, other: False  # noqa: E731
    __hash__ = int.__hash__


def test_integer_parameters_are_compared_as_plain_ints(tmp_path):
    """Integer parameters were compared as given, then converted: a subclass whose comparisons
    lie passed the range check with -5 (SemiSupervised's max_iter then failed with an
    IndexError inside EM; sample_posterior(0) returned no models). Each is now converted first
    (``_validation.int_in``), refused out of range, and used as its plain value in range
    (outside attack)."""
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (20, 3)), rng.normal(3, 1, (20, 3))]
    y = np.repeat([0, 1], 20)
    partly = np.where(np.arange(40) % 4 == 0, y, -1)
    bad = _LyingInt(-5)
    refused = [
        lambda: fastgen.SemiSupervised(fastgen.GaussianNB(), max_iter=bad).fit(X, partly),
        lambda: fastgen.LinearDiscriminantAnalysis(max_iter=bad).fit(X, y),
        lambda: fastgen.LinearDiscriminantAnalysis(n_components=bad).fit(X, y),
        lambda: fastgen.GaussianNB().fit(X, y).sample_posterior(_LyingInt(0)),
        lambda: fastgen.GaussianNB().fit(X, y).sample(3, random_state=bad),
        lambda: fastgen.text.HashingVectorizer(n_features=bad).transform(["a b"]),
        lambda: fastgen.text.CountVectorizer(max_features=bad).fit(["a b"]),
        lambda: fastgen.text.CountVectorizer(min_df=bad).fit(["a b"]),
    ]
    svm, csv = tmp_path / "t.svm", tmp_path / "t.csv"
    svm.write_text("0 1:1\n1 2:1\n")
    csv.write_text("a,y\n1,0\n2,1\n")
    refused += [  # (a batch size of 0 made iter_svmlight loop forever: review)
        lambda: fastgen.GaussianNB().fit(X, y).sample(_LyingInt(0)),
        lambda: list(fastgen.io.iter_svmlight(svm, batch_size=_LyingInt(0))),
        lambda: list(fastgen.io.iter_svmlight(svm, n_features=bad)),
        lambda: list(fastgen.io.iter_csv(csv, label_column="y", batch_size=_LyingInt(0))),
        lambda: fastgen.text.CountVectorizer(max_df=bad).fit(["alpha beta"]),
    ]
    for call in refused:
        with pytest.raises(ValueError, match="-5|0"):
            call()
    good = _LyingInt(3)
    ss = fastgen.SemiSupervised(fastgen.GaussianNB(), max_iter=good, tol=0.0)
    with pytest.warns(fastgen.ConvergenceWarning):
        assert ss.fit(X, partly).n_iter_ == 3
    assert len(fastgen.GaussianNB().fit(X, y).sample_posterior(good)) == 3
