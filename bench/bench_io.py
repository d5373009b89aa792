"""svmlight reading: ``fastgen.io`` vs scikit-learn's ``load_svmlight_file``, one core.

Data: the ``ng20-real`` training matrix of ``conftest.py`` (20 Newsgroups "bydate" train through
scikit-learn's ``CountVectorizer``; ``--bench-size=small``: its seeded 2,000-document subset),
written once per module with ``sklearn.datasets.dump_svmlight_file`` (one-based indices) into a
temporary directory, never timed. Every test skips with a reason when ``../shared/data`` is absent.

Groups (``fastgen`` and ``sklearn`` contenders, both single-threaded):

* ``svmlight/read/ng20-real`` — the whole file as a CSR matrix and labels: fastgen
  ``iter_svmlight(path, n_features=...)`` with every batch consumed and the batches stacked
  (``scipy.sparse.vstack``); scikit-learn ``load_svmlight_file(path, n_features=..., zero_based=False)``.
* ``svmlight/scan/ng20-real`` — what training from the file needs to know first (rows, columns,
  classes): fastgen ``scan_svmlight(path)``; scikit-learn has no scan, so its contender is
  ``load_svmlight_file(path, zero_based=False)`` again, the way to learn them with it.

Both read through the operating system's page cache (the file was just written), so this is parsing
speed, not disk speed. Each result is checked against scikit-learn's before and after timing:
identical ``indptr``, ``indices``, ``data`` and labels; for the scan, the same rows, columns and
classes.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

DATASET = "ng20-real"
ROUNDS = {"fastgen": 15, "sklearn": 5}


def group(op: str):
    return pytest.mark.benchmark(group=f"svmlight/{op}/{DATASET}")


@pytest.fixture(scope="module")
def svm_file(corpora, tmp_path_factory):
    """(path, X, y): the training matrix written as svmlight, and scikit-learn's reading of it."""
    datasets = pytest.importorskip("sklearn.datasets")
    corpus = corpora(DATASET)
    path = tmp_path_factory.mktemp("svmlight") / "ng20_train.svm"
    datasets.dump_svmlight_file(corpus.X_train, corpus.y_train, str(path), zero_based=False)
    X, y = datasets.load_svmlight_file(str(path), n_features=corpus.n_features, zero_based=False)
    return path, X, y


def _fastgen_read(path, n_features):
    from fastgen import io

    batches = list(io.iter_svmlight(path, n_features=n_features))
    return sp.vstack([X for X, _ in batches], format="csr"), np.concatenate([y for _, y in batches])


def _sklearn_read(path, **kwargs):
    from sklearn.datasets import load_svmlight_file

    return load_svmlight_file(str(path), zero_based=False, **kwargs)


def _check(result, X_ref, y_ref):
    X, y = result
    assert X.shape == X_ref.shape
    for name in ("indptr", "indices", "data"):
        assert_array_equal(getattr(X, name), getattr(X_ref, name), err_msg=name)
    assert_array_equal(y, y_ref)


def _run(benchmark, contender, fn):
    fn()  # warm-up (and the page cache)
    return benchmark.pedantic(fn, rounds=ROUNDS[contender.name], iterations=1, warmup_rounds=0)


@group("read")
def test_read(benchmark, contender, svm_file, request):
    from conftest import record_extra_info

    path, X_ref, y_ref = svm_file
    if contender.name == "fastgen":
        def read():
            return _fastgen_read(path, X_ref.shape[1])
    else:
        def read():
            return _sklearn_read(path, n_features=X_ref.shape[1])
    _check(read(), X_ref, y_ref)
    result = _run(benchmark, contender, read)
    _check(result, X_ref, y_ref)
    record_extra_info(benchmark, contender, 1, X_ref, DATASET, request,
                      file_bytes=path.stat().st_size)


@group("scan")
def test_scan(benchmark, contender, svm_file, request):
    from conftest import record_extra_info

    path, X_ref, y_ref = svm_file
    expected = (X_ref.shape[0], int(X_ref.indices.max()) + 1, np.unique(y_ref))
    if contender.name == "fastgen":
        from fastgen import io

        def scan():
            return io.scan_svmlight(path)
    else:
        def scan():
            X, y = _sklearn_read(path)
            return X.shape[0], X.shape[1], np.unique(y)
    for result in (scan(), _run(benchmark, contender, scan)):
        assert result[:2] == expected[:2]
        assert_array_equal(result[2], expected[2])
    record_extra_info(benchmark, contender, 1, X_ref, DATASET, request,
                      file_bytes=path.stat().st_size)
