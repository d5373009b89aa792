"""Rank-deficient LDA: scikit-learn's digits (1,797 8x8 images, 3 pixels 0 in every image), whose
pooled covariance is singular. fastgen fits the Gaussian on the data's support; scikit-learn's
svd solver restricts itself to the data's rank, so the two compute the same posteriors.

Groups ``lda/fit/digits`` (fit, then ``predict_proba`` of one row: everything before the first
prediction) and ``lda/predict_proba/digits`` (all 1,797 rows):

* fastgen: ``LinearDiscriminantAnalysis()`` (covariance="full").
* scikit-learn: ``LinearDiscriminantAnalysis(solver="svd")`` (its default; lsqr gives the same
  posteriors here, eigen refuses the singular covariance).

BLAS pools are pinned to each ``--bench-threads`` value for both (``threaded_blas``). Checks after
timing: the posteriors of the two agree within 1e-9 (absolute), and fastgen's for every
``n_threads`` match its first run within rtol = 1e-12. Skipped without scikit-learn, which ships
the data.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

DATASET = "digits"


@pytest.fixture(scope="module")
def digits():
    datasets = pytest.importorskip("sklearn.datasets", reason="the data ship with scikit-learn")
    return datasets.load_digits(return_X_y=True)


def make(contender, n_threads):
    if contender.name == "fastgen":
        return contender.module.LinearDiscriminantAnalysis(n_threads=n_threads)
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    return LinearDiscriminantAnalysis(solver="svd")


def _check(contender, n_threads, proba, X, y, store):
    if contender.name == "fastgen":
        first = store.setdefault(("digits", "proba"), proba)
        assert_allclose(proba, first, rtol=1e-12, err_msg=f"n_threads={n_threads}")
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    reference = LinearDiscriminantAnalysis(solver="svd").fit(X, y).predict_proba(X)
    assert_allclose(proba, reference, rtol=0, atol=1e-9)


@pytest.mark.threaded_blas
@pytest.mark.benchmark(group=f"lda/fit/{DATASET}")
def test_fit_singular(benchmark, contender, n_threads, digits, record_info, first_fastgen_result):
    X, y = digits

    def fit():
        est = make(contender, n_threads).fit(X, y)
        est.predict_proba(X[:1])
        return est

    est = benchmark(fit)
    _check(contender, n_threads, est.predict_proba(X), X, y, first_fastgen_result)
    record_info(X, DATASET, estimator=type(est).__name__)


@pytest.mark.threaded_blas
@pytest.mark.benchmark(group=f"lda/predict_proba/{DATASET}")
def test_predict_proba_singular(benchmark, contender, n_threads, digits, record_info,
                                first_fastgen_result):
    X, y = digits
    est = make(contender, n_threads).fit(X, y)
    proba = benchmark(est.predict_proba, X)
    _check(contender, n_threads, proba, X, y, first_fastgen_result)
    record_info(X, DATASET, estimator=type(est).__name__)
