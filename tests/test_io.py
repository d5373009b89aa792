"""fastgen.io: svmlight and CSV files streamed in bounded batches, for partial_fit."""
import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

import fastgen
from fastgen import io as fio

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
    ("x 1:2", "label 'x' is not a number"),
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
    assert len(batches) == 2
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
