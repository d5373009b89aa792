"""fastgen.io: svmlight and CSV files streamed in bounded batches, for partial_fit."""
import codecs
import gzip
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import fastgen
from fastgen import io as fio

from _reference import svmlight_rows

datasets = pytest.importorskip("sklearn.datasets")


@pytest.fixture
def svm_file(tmp_path):
    X = sp.random(1000, 40, density=0.1, format="csr", random_state=0)
    X.data = np.ceil(X.data * 5)
    y = np.arange(1000) % 3
    path = tmp_path / "train.svm"
    datasets.dump_svmlight_file(X, y, str(path), zero_based=False, comment="made by the tests")
    return path, X, y


def test_svmlight_batches_equal_sklearns_reader(svm_file):
    path, X, y = svm_file
    X_sk, y_sk = datasets.load_svmlight_file(str(path), n_features=40, zero_based=False)
    assert_allclose(X_sk.toarray(), X.toarray())
    assert_array_equal(y_sk, y)
    batches = list(fio.iter_svmlight(path, batch_size=300))
    assert [b[0].shape[0] for b in batches] == [300, 300, 300, 100]
    assert all(b[0].shape[1] == 40 for b in batches)  # n_features found by a first pass
    assert_allclose(sp.vstack([b[0] for b in batches]).toarray(), X_sk.toarray())
    assert_array_equal(np.concatenate([b[1] for b in batches]), y_sk)
    n_rows, n_features, classes = fio.scan_svmlight(path)
    assert (n_rows, n_features, classes.tolist()) == (1000, 40, [0, 1, 2])


def test_streamed_partial_fit_equals_fit(svm_file):
    path, X, y = svm_file
    model = fastgen.MultinomialNB()
    for X_batch, y_batch in fio.iter_svmlight(path, n_features=40, batch_size=128):
        model.partial_fit(X_batch, y_batch, classes=[0, 1, 2])
    reference = fastgen.MultinomialNB().fit(X, y)
    assert_allclose(model.feature_count_, reference.feature_count_)
    assert_allclose(model.predict_log_proba(X), reference.predict_log_proba(X))


def test_reading_is_lazy(tmp_path):
    """Batches come before the whole file is read: a fault far down is met only when reached."""
    path = tmp_path / "late_fault.svm"
    path.write_text("".join(f"{i % 2} 1:{i}\n" for i in range(500)) + "1 1:oops\n")
    batches = fio.iter_svmlight(path, n_features=2, batch_size=100)
    first = next(batches)
    assert first[0].shape == (100, 2)
    with pytest.raises(ValueError, match=r"late_fault.svm:501: '1:oops' is not index:value"):
        list(batches)


def test_zero_based_and_qid_and_comments(tmp_path):
    path = tmp_path / "z.svm"
    path.write_text("# header comment\n1 qid:3 0:1.5 4:2 # trailing\n\n0 2:1\n")
    (X, y), = fio.iter_svmlight(path, zero_based=True)
    assert_allclose(X.toarray(), [[1.5, 0, 0, 0, 2], [0, 0, 1, 0, 0]])
    assert_array_equal(y, [1, 0])


@pytest.mark.parametrize("line, match", [
    ("x 1:2", "label 'x' is not a finite number"),
    ("nan 1:2", "label 'nan' is not a finite number"),
    ("-inf 1:2", "label '-inf' is not a finite number"),
    ("1 1:2 3", "'3' is not index:value"),
    ("1 a:2", "'a:2' is not index:value"),
    ("1 0:2", "index 0 is below 1"),
    ("1 3:2 2:1", "not in increasing order"),
    ("1 1:inf", "not finite"),
    ("1 99:1", "beyond n_features=10"),
])
def test_svmlight_errors_name_file_and_line(tmp_path, line, match):
    path = tmp_path / "bad.svm"
    path.write_text("0 1:1\n" + line + "\n")
    with pytest.raises(ValueError, match=rf"bad.svm:2: .*{match}"):
        list(fio.iter_svmlight(path, n_features=10))


def test_csv_missing_values_and_labels(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("h,w,label\n1.5,2,ham\n3,,spam\n\n,6,ham\n")
    batches = list(fio.iter_csv(path, batch_size=2))
    assert all(len(b[1]) <= 2 for b in batches)  # (the header and the blank line take places)
    X = np.vstack([b[0] for b in batches])
    assert_array_equal(np.isnan(X), [[False, False], [False, True], [True, False]])
    assert_array_equal(np.concatenate([b[1] for b in batches]), ["ham", "spam", "ham"])
    named = tmp_path / "named.csv"
    named.write_text("h,w,label\n1,2.5,3\n4,7,6\n")
    (X2, y2), = fio.iter_csv(named, label_column="w")
    assert_array_equal(X2, [[1, 3], [4, 6]])
    assert y2.tolist() == [2.5, 7]  # a label that reads as a number becomes one
    named.write_text("h,w,label\n1,2.5,3\n4,,6\n")
    with pytest.raises(ValueError, match=r"named\.csv:3: the label is missing"):
        list(fio.iter_csv(named, label_column="w"))
    model = fastgen.GaussianNB()
    for X_batch, y_batch in fio.iter_csv(path, batch_size=1):
        model.partial_fit(X_batch, y_batch, classes=["ham", "spam"])
    assert model.class_count_.tolist() == [2.0, 1.0]
    n_rows, n_features, classes = fio.scan_csv(path)
    assert (n_rows, n_features, classes.tolist()) == (3, 2, ["ham", "spam"])


def test_csv_without_header_and_numeric_labels(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text("0,1.0,2\n1,3.0,4\n")
    (X, y), = fio.iter_csv(path, header=False, label_column=0)
    assert_allclose(X, [[1, 2], [3, 4]])
    assert y.dtype.kind == "i" and y.tolist() == [0, 1]


@pytest.mark.parametrize("text, kwargs, match", [
    ("a,b,y\n1,2\n", {}, r"r.csv:2: the label is missing"),  # a short row's last fields
    ("a,b,y\n1,zz,0\n", {}, r"r.csv:2: column 'b' holds 'zz', not a finite number"),
    ("a,b,y\n1,-inf,0\n", {}, r"r.csv:2: column 'b' holds '-inf', not a finite number"),
    ("a,b,y\n1,2,0\n3,4,x\n", {}, r"r.csv:3: the labels mix numbers and text \('x'"),
    ("a,b,y\n1,2,0,9\n", {}, r"r.csv:2: 4 fields, expected 3"),
    ("a,b,y\n1,2,0\n", {"label_column": "z"}, "no column named 'z'"),
    ("a,b,y\n1,2,0\n", {"label_column": 5}, "outside the 3 columns"),
    ("a,b,y\n1,2,0\n", {"batch_size": 0}, "batch_size must be a positive int"),
])
def test_csv_errors(tmp_path, text, kwargs, match):
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        list(fio.iter_csv(path, **kwargs))


def test_bad_arguments(svm_file):
    path = svm_file[0]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="batch_size"):
            list(fio.iter_svmlight(path, batch_size=bad))
    with pytest.raises(ValueError, match="n_features"):
        list(fio.iter_svmlight(path, n_features=-3))
    with pytest.raises(FileNotFoundError):
        list(fio.iter_csv(path.parent / "missing.csv"))


def test_bad_dtype_and_label_column(svm_file, tmp_path):
    """Integer values would truncate fractions (and cannot hold a missing CSV field): refused, as
    is a label column that is neither a position nor a name."""
    csv_path = tmp_path / "r.csv"
    csv_path.write_text("a,b,y\n1.5,,0\n")
    for read in (lambda **kw: fio.iter_svmlight(svm_file[0], **kw),
                 lambda **kw: fio.iter_csv(csv_path, **kw)):
        for bad in (np.int64, "int32", bool, "U3", np.complex128):
            with pytest.raises(ValueError, match="dtype must be float32 or float64"):
                list(read(dtype=bad))
        with pytest.raises(TypeError, match="dtype must be float32 or float64"):
            list(read(dtype="no such type"))
        X, _ = next(read(dtype=np.float32))
        assert X.dtype == np.float32
    for bad in (1.5, True, None, [0]):
        with pytest.raises(TypeError, match="label_column must be an int or a column name"):
            list(fio.iter_csv(csv_path, label_column=bad))


# ---- svmlight: parity with scikit-learn's reader, streaming, and every fault ----------------

def _read_all(path, **kwargs):
    """All batches of iter_svmlight stacked: (X, y, batch row counts)."""
    batches = list(fio.iter_svmlight(path, **kwargs))
    if not batches:
        return None, np.empty(0), []
    X = sp.vstack([X for X, _ in batches], format="csr")
    return X, np.concatenate([y for _, y in batches]), [len(y) for _, y in batches]


def _assert_same_csr(X, X_ref):
    """Equal structure and bit-for-bit equal values."""
    assert X.shape == X_ref.shape and X.dtype == X_ref.dtype
    assert_array_equal(X.indptr, X_ref.indptr)
    assert_array_equal(X.indices, X_ref.indices)
    assert_array_equal(X.data.view(f"i{X.data.itemsize}"), X_ref.data.view(f"i{X.data.itemsize}"))


@st.composite
def _sparse_problems(draw):
    n_rows, n_cols = draw(st.integers(1, 12)), draw(st.integers(1, 15))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    # "%.16g" (scikit-learn's writer) rounds the largest doubles up to inf; float32: within its
    # range (beyond is an error)
    values = st.one_of(st.integers(-3, 1000).map(float),
                       st.floats(allow_nan=False, allow_infinity=False, width=32)
                       if dtype == np.float32 else st.floats(-1e308, 1e308))
    dense = np.array(draw(st.lists(st.lists(st.one_of(st.just(0.0), values), min_size=n_cols,
                                            max_size=n_cols), min_size=n_rows, max_size=n_rows)))
    labels = st.integers(-5, 5) if draw(st.booleans()) else st.floats(-1e6, 1e6)
    y = np.array(draw(st.lists(labels, min_size=n_rows, max_size=n_rows)))
    return sp.csr_matrix(dense), y, draw(st.booleans()), dtype


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=_sparse_problems(), batch_size=st.integers(1, 13))
def test_svmlight_round_trip_equals_sklearns_reader(tmp_path, problem, batch_size):
    X, y, zero_based, dtype = problem
    path = tmp_path / "r.svm"
    datasets.dump_svmlight_file(X, y, str(path), zero_based=zero_based, comment="a\ncomment")
    X_sk, y_sk = datasets.load_svmlight_file(str(path), n_features=X.shape[1], dtype=dtype,
                                             zero_based=zero_based)
    X_fg, y_fg, sizes = _read_all(path, n_features=X.shape[1], batch_size=batch_size,
                                  zero_based=zero_based, dtype=dtype)
    _assert_same_csr(X_fg, X_sk)
    assert_array_equal(y_fg, y_sk)
    assert y_fg.dtype.kind == ("i" if (y == np.round(y)).all() else "f")
    assert sizes == [batch_size] * (len(y) // batch_size) + ([len(y) % batch_size] if len(y) % batch_size else [])
    n_rows, n_features, classes = fio.scan_svmlight(path, zero_based=zero_based)
    assert (n_rows, n_features) == (len(y), X.indices.max() + 1 if X.nnz else 0)
    assert_array_equal(classes, np.unique(y_sk))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=_sparse_problems(), data=st.data())
def test_svmlight_odd_layout_equals_sklearns_reader(tmp_path, problem, data):
    """Tabs and runs of spaces, qid pairs, comments, blank lines, CRLF, signs, leading zeros and
    every float notation: read as scikit-learn reads them."""
    X, y, zero_based, dtype = problem
    space = st.sampled_from([" ", "\t", "  ", " \t "])
    number = st.sampled_from(["{!r}", "{:.17g}", "{:.6e}", "{:+.17g}", "{:.3f}", "{:E}"])
    lines = []
    for i in range(X.shape[0]):
        parts = [data.draw(number).format(float(y[i]))]
        if data.draw(st.booleans()):
            parts.append(f"qid:{data.draw(st.integers(0, 99))}")
        for j, v in zip(X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]):
            index = data.draw(st.sampled_from(["{}", "+{}", "00{}"])).format(j + (not zero_based))
            parts.append(f"{index}:{data.draw(number).format(float(v))}")
        line = data.draw(space).join(parts) + data.draw(st.sampled_from(["", " ", " # note é"]))
        lines += [line] + data.draw(st.lists(st.sampled_from(["", "# comment", "  \t"]), max_size=2))
    path = tmp_path / "odd.svm"
    path.write_bytes(data.draw(st.sampled_from(["\n", "\r\n"])).join(lines).encode())
    X_sk, y_sk = datasets.load_svmlight_file(str(path), n_features=X.shape[1], dtype=dtype,
                                             zero_based=zero_based)
    X_fg, y_fg, _ = _read_all(path, n_features=X.shape[1], batch_size=5, zero_based=zero_based,
                              dtype=dtype)
    _assert_same_csr(X_fg, X_sk)
    assert_array_equal(y_fg, y_sk)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(st.one_of(
    st.from_regex(r"[+-]?[0-9]{0,25}(\.[0-9]{0,25})?([eE][+-]?[0-9]{1,4})?", fullmatch=True),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map("{:.9g}".format),
    st.integers(0, 2**64).map(str)), min_size=1, max_size=40))
def test_svmlight_values_are_pythons_float(tmp_path, tokens):
    """Every number notation, exact: bit for bit what float(token) gives (and float32 its
    rounding), including mantissas beyond 2**53, huge exponents and subnormals."""
    expected = []
    for token in tokens:
        try:
            expected.append(float(token))
        except ValueError:
            expected.append(None)
    good = [t for t, x in zip(tokens, expected) if x is not None and np.isfinite(x)]
    path = tmp_path / "v.svm"
    path.write_text("".join(f"{t} {i + 1}:{t}\n" for i, t in enumerate(good)))
    for dtype in (np.float64, np.float32):
        if dtype == np.float32:  # beyond its range is an error
            good = [t for t in good if abs(float(t)) < 3.4e38]
            path.write_text("".join(f"{t} {i + 1}:{t}\n" for i, t in enumerate(good)))
        X, y, _ = _read_all(path, n_features=len(good), dtype=dtype)
        want = np.array([float(t) for t in good], dtype=dtype)
        if good:
            assert_array_equal(X.data.view(f"i{want.itemsize}"), want.view(f"i{want.itemsize}"))
            assert_array_equal(y.astype(np.float64), [float(t) for t in good])
    for token, x in zip(tokens, expected):
        if x is None or not np.isfinite(x):
            path.write_text(f"0 1:{token}\n")
            with pytest.raises(ValueError, match="is not index:value" if x is None else "not finite"):
                list(fio.iter_svmlight(path, n_features=2))


def _write_batches_file(tmp_path, n=7):
    path = tmp_path / "b.svm"
    path.write_bytes(b"".join(b"%d 1:%d %d:1.5 # row %d\r\n" % (i % 3, i + 1, i + 2, i)
                              for i in range(n)))
    return path


@pytest.mark.parametrize("batch_size", [1, 2, 7, 8])
def test_svmlight_batch_boundaries(tmp_path, batch_size):
    path = _write_batches_file(tmp_path)
    X_sk, y_sk = datasets.load_svmlight_file(str(path), n_features=9, zero_based=False)
    batches = list(fio.iter_svmlight(path, n_features=9, batch_size=batch_size))
    assert [len(y) for _, y in batches] == [min(batch_size, 7 - k) for k in range(0, 7, batch_size)]
    for k, (X, y) in enumerate(batches):
        rows = slice(k * batch_size, (k + 1) * batch_size)
        _assert_same_csr(X, X_sk[rows])
        assert_array_equal(y, y_sk[rows])
        assert X.indices.dtype == X.indptr.dtype == np.int32 and y.dtype == np.int64
    X, _ = next(fio.iter_svmlight(path, n_features=2**31, batch_size=batch_size))
    assert X.indices.dtype == X.indptr.dtype == np.int64
    (X, y), = fio.iter_svmlight(path, n_features=9, batch_size=2**60)  # allocates by the rows read
    _assert_same_csr(X, X_sk)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunk_size=st.integers(1, 40), capacity=st.integers(1, 5), batch_size=st.integers(1, 6),
       line_end=st.sampled_from(["\n", "\r\n", "\r"]))
def test_svmlight_lines_straddling_chunks(tmp_path, monkeypatch, chunk_size, capacity,
                                          batch_size, line_end):
    """Tiny chunks (a line, a number, a CRLF or a two-byte character cut anywhere) and tiny
    output arrays that must grow read the same as one chunk."""
    text = line_end.join(["# héader ¤", "1 qid:2 1:0.5 3:12345678901234567890 # ½", "",
                          "2\t2:7e-3   4:-1", "0 " + " ".join(f"{j}:{j}.25" for j in range(1, 30)),
                          "3 5:1e2"])
    path = tmp_path / "c.svm"
    path.write_bytes(text.encode())
    X_ref, y_ref, _ = _read_all(path, n_features=30)
    monkeypatch.setattr(fio, "CHUNK_SIZE", chunk_size)
    monkeypatch.setattr(fio, "_INITIAL_CAPACITY", capacity)
    X, y, sizes = _read_all(path, n_features=30, batch_size=batch_size)
    _assert_same_csr(X, X_ref)
    assert_array_equal(y, y_ref)
    assert y.tolist() == [1, 2, 0, 3] and X[0, 2] == 12345678901234567890.0
    assert fio.scan_svmlight(path)[:2] == (4, 29)
    bad = tmp_path / "c_bad.svm"
    bad.write_bytes((text + line_end + "1 3:1 3:2").encode())
    with pytest.raises(ValueError, match=r"c_bad.svm:7: index 3 is not in increasing order"):
        fio.scan_svmlight(bad)


def test_svmlight_byte_order_mark_is_skipped(tmp_path, svm_file):
    """A UTF-8 byte-order mark first (Windows tools write one) is not part of the first label,
    plain or gzipped, as a CSV file's is not; one anywhere else is still refused."""
    path, _, _ = svm_file
    X_ref, y_ref, _ = _read_all(path)
    marked = tmp_path / "marked.svm"
    for content in (codecs.BOM_UTF8 + path.read_bytes(),
                    gzip.compress(codecs.BOM_UTF8 + path.read_bytes())):
        marked.write_bytes(content)
        X, y, _ = _read_all(marked)
        _assert_same_csr(X, X_ref)
        assert_array_equal(y, y_ref)
        assert fio.scan_svmlight(marked)[:2] == fio.scan_svmlight(path)[:2]
    marked.write_bytes(b"1 1:1\n" + codecs.BOM_UTF8 + b"0 2:1\n")
    with pytest.raises(ValueError, match=r"marked.svm:2: label '\\ufeff0' is not a finite"):
        fio.scan_svmlight(marked)


def test_svmlight_gzip(tmp_path, svm_file):
    path, X, y = svm_file
    packed = tmp_path / "train.svm.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    X_ref, y_ref, _ = _read_all(path)
    X_gz, y_gz, sizes = _read_all(packed, batch_size=300)
    _assert_same_csr(X_gz, X_ref)
    assert_array_equal(y_gz, y_ref)
    assert sizes == [300, 300, 300, 100]
    assert_array_equal(fio.scan_svmlight(packed)[2], [0, 1, 2])
    bad = tmp_path / "bad.svm.gz"
    bad.write_bytes(gzip.compress(b"1 1:1\n\n1 2:x\n"))
    with pytest.raises(ValueError, match=r"bad.svm.gz:3: '2:x' is not index:value"):
        fio.scan_svmlight(bad)
    damaged = tmp_path / "damaged.svm.gz"
    damaged.write_bytes(packed.read_bytes()[:5000])
    with pytest.raises(ValueError, match=r"damaged.svm.gz: damaged gzip data after line \d+"):
        list(fio.iter_svmlight(damaged, n_features=40))
    # the content decides, not the name: plain text named .gz, gzip named .svm
    damaged.write_bytes(path.read_bytes())
    assert fio.scan_svmlight(damaged)[0] == 1000
    unnamed = tmp_path / "packed.svm"
    unnamed.write_bytes(packed.read_bytes())
    X_unnamed, _, _ = _read_all(unnamed)
    _assert_same_csr(X_unnamed, X_ref)


def _decimal_comma_locale(tmp_path):
    """Environment variables selecting a locale whose decimal point is a comma: an installed one
    (``locale -a``), else de_DE compiled into tmp_path with localedef; None when neither works."""
    try:
        installed = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    except OSError:
        installed = []
    for name in installed:
        if name.lower().replace("-", "") in ("de_de.utf8", "fr_fr.utf8", "it_it.utf8", "es_es.utf8"):
            return {"LC_ALL": name}
    try:
        made = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8",
                               str(tmp_path / "de_DE.UTF-8")], capture_output=True).returncode
    except OSError:
        return None
    return {"LC_ALL": "de_DE.UTF-8", "LOCPATH": str(tmp_path)} if made == 0 else None


def test_svmlight_ignores_the_c_locale(tmp_path):
    """Under a decimal-comma locale C's strtod reads "1.5" as 1; the reader still reads 1.5, on
    its own path and on Python's (a mantissa beyond 2**53)."""
    env = _decimal_comma_locale(tmp_path)
    if env is None:
        pytest.skip("no decimal-comma locale installed (locale -a) and none could be compiled")
    path = tmp_path / "l.svm"
    path.write_text("1.5 1:1.5 2:2.25e1 3:0.1 4:12345678901234567890.5\n")
    code = ("import ctypes, locale, sys; locale.setlocale(locale.LC_ALL, ''); "
            "strtod = ctypes.CDLL(None).strtod; strtod.restype = ctypes.c_double; "
            "assert strtod(b'1.5', None) == 1.0; from fastgen import io; "
            "X, y = next(io.iter_svmlight(sys.argv[1])); print(X.data.tolist(), y.tolist())")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                         env=dict(os.environ, **env),
                         cwd=os.path.dirname(os.path.dirname(fio.__file__)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1.5, 22.5, 0.1, 1.2345678901234567e+19] [1.5]"


@pytest.mark.parametrize("content, kwargs, match", [
    (b"1 1:1\n0 -1:2\n", {}, r"f.svm:2: index -1 is below 1 \(one-based indices\)"),
    (b"1 -1:2\n", {"zero_based": True}, r"f.svm:1: index -1 is below 0 \(zero-based indices\)"),
    (b"1 %d:1\n" % 2**63, {}, r"f.svm:1: index 9223372036854775808 is too large \(at most 9223372036854775807\)"),
    (b"1 %d:1\n" % 2**63, {"zero_based": True}, r"f.svm:1: index 9223372036854775808 is too large \(at most 9223372036854775806\)"),
    (b"1 -%d:1\n" % 2**70, {}, r"f.svm:1: index -1180591620717411303424 is below 1"),
    (b"1 2:1 2:1\n", {}, r"f.svm:1: index 2 is not in increasing order"),
    (b"1 1:nan\n", {}, r"f.svm:1: value 'nan' is not finite"),
    (b"1 1:1e400\n", {}, r"f.svm:1: value '1e400' is not finite"),
    (b"1 1:1e39\n", {"dtype": np.float32}, r"f.svm:1: value '1e39' is beyond the float32 range"),
    (b"1 1:1_0x\n", {}, r"f.svm:1: '1:1_0x' is not index:value"),
    (b"1 qid\n", {}, r"f.svm:1: 'qid' is not index:value"),
    (b"1 1:\n", {}, r"f.svm:1: '1:' is not index:value"),
    (b"1:1 2:1\n", {}, r"f.svm:1: label '1:1' is not a finite number"),
    (b"\n\r\n\r1 1:1\r\n1e 1:1\n", {}, r"f.svm:5: label '1e' is not a finite number"),
    (b"1 1:1\n1 7:1 # \xc3\n", {}, r"f.svm: not UTF-8 text on line 2 \(byte b'\\xc3'\)"),
    (b"1 1:1\n1 7:x \xed\xa0\x80\n", {}, r"f.svm: not UTF-8 text on line 2 \(byte b'\\xed'\)"),
    (b"1 1:1\n\xff 2:1\n", {}, r"f.svm: not UTF-8 text on line 2 \(byte b'\\xff'\)"),
    (b"1 007:1\n", {"n_features": 5}, r"f.svm:1: index 7 is beyond n_features=5"),
])
def test_svmlight_every_fault_names_file_and_line(tmp_path, content, kwargs, match):
    path = tmp_path / "f.svm"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        list(fio.iter_svmlight(path, **kwargs))
    if "n_features" not in kwargs and "dtype" not in kwargs:
        with pytest.raises(ValueError, match=match):
            fio.scan_svmlight(path, zero_based=kwargs.get("zero_based", False))


def test_svmlight_what_python_accepts(tmp_path):
    """Unicode whitespace splits, underscores and non-ASCII digits read as int()/float() read
    them, a label that is not a finite number is an error (no class is NaN), a last line needs no
    line end, an empty file has no rows."""
    path = tmp_path / "u.svm"
    path.write_text("1_0\u00a02:1_5\u30001:2\n-inf 0003:\u0661.5\n0 4:1", encoding="utf-8")
    with pytest.raises(ValueError, match=r"u.svm:1: index 1 is not in increasing order"):
        list(fio.iter_svmlight(path))
    path.write_text("1_0\u00a02:1_5\u3000 3:2\nnan 0004:\u0661.5 \x1c5:1\n0 6:1", encoding="utf-8")
    with pytest.raises(ValueError, match=r"u.svm:2: label 'nan' is not a finite number"):
        list(fio.iter_svmlight(path, n_features=6))
    path.write_text("1_0\u00a02:1_5\u3000 3:2\n2.5 0004:\u0661.5 \x1c5:1\n0 6:1", encoding="utf-8")
    (X, y), = fio.iter_svmlight(path, n_features=6)
    assert_array_equal(X.toarray(), [[0, 15, 2, 0, 0, 0], [0, 0, 0, 1.5, 1, 0], [0] * 5 + [1]])
    assert y.dtype == np.float64 and y.tolist() == [10, 2.5, 0]
    path.write_bytes(b"")
    assert list(fio.iter_svmlight(path, n_features=3)) == []
    n_rows, n_features, classes = fio.scan_svmlight(path)
    assert (n_rows, n_features, classes.size) == (0, 0, 0)


_FRAGMENTS = [b"0", b"1", b"7", b"-", b"+", b".", b"e", b":", b"qid", b" ", b"\t", b"\n", b"\r",
              b"\r\n", b"#", b"inf", b"nan", b"_", b"99999999999999999999", b"\xc2\xa0",
              b"\xe3\x80\x80", b"\xd9\xa1", b"\xff", b"\xc3", b"\xe2\x82", b"\x00", b"\x1c", b"x"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.binary(max_size=60),
                         st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map(b"".join)),
       zero_based=st.booleans(), chunk_size=st.sampled_from([1, 3, 1 << 20]))
def test_svmlight_hostile_bytes_read_as_python_reads_them(tmp_path, monkeypatch, content,
                                                         zero_based, chunk_size):
    """Any bytes: the rows Python's own text reading, str.split, int() and float() find, or the
    same error on the same line; bytes that are not UTF-8 are that error, on their line, unless
    an earlier line has a fault."""
    assume(not content.startswith(b"\x1f\x8b"))  # gzip's magic: read through gzip, tested apart
    path = tmp_path / "h.svm"
    path.write_bytes(content)
    monkeypatch.setattr(fio, "CHUNK_SIZE", chunk_size)
    try:
        rows = svmlight_rows(path, zero_based)
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError) as exc:  # where in the file (not in a block)
            content.decode("utf-8")
        exc = exc.value
        line_ends = list(re.finditer(rb"\r\n|\r|\n", content[:exc.start]))
        head = tmp_path / "head.svm"
        head.write_bytes(content[:line_ends[-1].end()] if line_ends else b"")
        try:
            svmlight_rows(head, zero_based)
        except ValueError as earlier:
            expected = f"{path}:{earlier}"
        else:
            expected = (f"{path}: not UTF-8 text on line {len(line_ends) + 1} "
                        f"(byte {content[exc.start:exc.start + 1]!r})")
        with pytest.raises(ValueError) as caught:
            fio.scan_svmlight(path, zero_based)
        assert str(caught.value) == expected
        return
    except ValueError as exc:
        for read in (lambda: fio.scan_svmlight(path, zero_based),
                     lambda: list(fio.iter_svmlight(path, 2**40, batch_size=2, zero_based=zero_based))):
            with pytest.raises(ValueError) as caught:
                read()
            assert str(caught.value) == f"{path}:{exc}"
        return
    n_rows, n_features, classes = fio.scan_svmlight(path, zero_based)
    width = 1 + max((pairs[-1][0] for _, pairs in rows if pairs), default=-1)
    assert (n_rows, n_features) == (len(rows), width)
    X, y, _ = _read_all(path, batch_size=2, zero_based=zero_based)
    if rows:
        assert_array_equal(y.astype(np.float64), [label for label, _ in rows])
        assert X.shape == (len(rows), width)
        X_ref = sp.csr_matrix(([x for _, pairs in rows for _, x in pairs],
                               [j for _, pairs in rows for j, _ in pairs],
                               np.cumsum([0] + [len(pairs) for _, pairs in rows])),
                              shape=X.shape)
        _assert_same_csr(X, X_ref)


def _through_a_pipe(content):
    """A path that reads ``content`` through a pipe (/dev/fd/N), its writer a thread."""
    import threading

    read, write = os.pipe()
    threading.Thread(target=lambda: os.fdopen(write, "wb").write(content), daemon=True).start()
    return f"/dev/fd/{read}", read


@pytest.mark.skipif(not os.path.exists("/dev/fd"), reason="needs /dev/fd")
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_svmlight_from_a_pipe_is_read_from_its_start(compressed):
    """The gzip test read the first bytes and opened the file again: from a pipe those bytes
    were gone, and rows were lost or made up from line fragments (19,475 of 20,000 rows, a label
    5 that no line has), with no error. The file is opened once now."""
    lines = "".join(f"{i % 2} 1:{i} 3:0.5\n" for i in range(20_000)).encode()
    path, fd = _through_a_pipe(gzip.compress(lines) if compressed else lines)
    try:
        batches = list(fio.iter_svmlight(path, n_features=4, batch_size=4096))
    finally:
        os.close(fd)
    y = np.concatenate([y for _, y in batches])
    assert_array_equal(y, np.arange(20_000) % 2)
    assert_array_equal(sp.vstack([X for X, _ in batches]).toarray()[:, 0], np.arange(20_000))


@pytest.mark.skipif(not os.path.exists("/dev/fd"), reason="needs /dev/fd")
def test_a_table_from_a_pipe_is_a_clear_error():
    """A CSV table is read twice (its columns, then its rows): from a pipe the second read found
    nothing, and iter_csv yielded no rows without an error."""
    path, fd = _through_a_pipe(b"a,y\n" + b"".join(b"%d,%d\n" % (i, i % 2) for i in range(100)))
    try:
        with pytest.raises(ValueError, match="not a regular file"):
            list(fio.iter_csv(path))
    finally:
        os.close(fd)


def test_a_file_descriptor_is_not_a_path(svm_file):
    """An int path was opened (and closed: the caller's descriptor) by the gzip test."""
    fd = os.open(svm_file[0], os.O_RDONLY)
    try:
        with pytest.raises(TypeError, match="path"):
            fio.scan_svmlight(fd)
        os.fstat(fd)  # still the caller's, open
    finally:
        os.close(fd)


def test_flags_are_true_or_false(svm_file, tmp_path):
    """zero_based="auto" (scikit-learn's default) was read as True, and header="false" as a
    header: a TypeError now."""
    with pytest.raises(TypeError, match="zero_based"):
        fio.scan_svmlight(svm_file[0], zero_based="auto")
    with pytest.raises(TypeError, match="zero_based"):
        list(fio.iter_svmlight(svm_file[0], zero_based=1))
    path = tmp_path / "t.csv"
    path.write_text("1,0\n2,1\n")
    with pytest.raises(TypeError, match="header"):
        list(fio.iter_csv(path, header="false"))
    assert len(next(fio.iter_csv(path, header=np.False_))[1]) == 2


@pytest.mark.skipif(not os.path.exists("/dev/fd"), reason="needs /dev/fd")
def test_svmlight_without_n_features_from_a_pipe_is_a_clear_error():
    """Without n_features the file is scanned first, then read: from a pipe the read found
    nothing, and no error was raised."""
    path, fd = _through_a_pipe(b"1 1:2\n0 2:3\n")
    try:
        with pytest.raises(ValueError, match="not a regular file"):
            list(fio.iter_svmlight(path))
    finally:
        os.close(fd)
