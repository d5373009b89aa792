"""Categorical and mixed naive Bayes benchmarks, fastgen vs scikit-learn.

Data (built once per module, never timed; fixed seed): 5 classes, category codes 0..9 drawn from
class-dependent distributions; 200,000 training and 200,000 test rows (``--bench-size=small``:
20,000). Groups:

* ``categorical/{fit,predict_proba}/codes-200kx30``: CategoricalNB on 30 categorical columns,
  against scikit-learn's CategoricalNB. After timing, fastgen's ``predict_proba`` must equal
  scikit-learn's within 1e-9.
* ``mixed/{fit,predict_proba}/mixed-200kx50``: MixedNB on 20 gaussian + 30 categorical columns,
  against scikit-learn's GaussianNB on the gaussian columns plus CategoricalNB on the categorical
  ones, combined in log space (what MixedNB computes); equal within 1e-9 after timing.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import logsumexp

N_CLASSES, N_CATEGORIES, N_CAT, N_GAUSS = 5, 10, 30, 20


@functools.lru_cache(maxsize=None)
def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, n)
    probs = rng.dirichlet(np.ones(N_CATEGORIES), size=(N_CLASSES, N_CAT))   # (C, d, K)
    cdf = np.cumsum(probs, axis=2)
    u = rng.random((n, N_CAT))
    codes = (u[:, :, None] > cdf[y]).sum(axis=2).astype(np.int64)
    gauss = rng.normal(size=(n, N_GAUSS)) + 0.3 * y[:, None]
    return codes, gauss, y


@pytest.fixture(scope="module")
def data(bench_size):
    n = 200_000 if bench_size == "large" else 20_000
    train, test = _data(n, 0), _data(n, 1)
    return train, test, n


class SklearnMixed:
    """scikit-learn's GaussianNB + CategoricalNB on their columns, combined in log space."""

    def __init__(self):
        from sklearn.naive_bayes import CategoricalNB, GaussianNB

        self.gnb, self.cnb = GaussianNB(), CategoricalNB()

    def fit(self, X, y):
        self.gnb.fit(X[:, :N_GAUSS], y)
        self.cnb.fit(X[:, N_GAUSS:].astype(np.int64), y)
        self.classes_ = self.gnb.classes_
        return self

    def predict_proba(self, X):
        jll = (self.gnb.predict_joint_log_proba(X[:, :N_GAUSS])
               + self.cnb.predict_joint_log_proba(X[:, N_GAUSS:].astype(np.int64))
               - self.cnb.class_log_prior_)
        return np.exp(jll - logsumexp(jll, axis=1, keepdims=True))


def _estimator(contender, model, n_threads):
    if model == "categorical":
        if contender.name == "fastgen":
            return contender.module.CategoricalNB(n_threads=n_threads)
        from sklearn.naive_bayes import CategoricalNB

        return CategoricalNB()
    if contender.name == "fastgen":
        return contender.module.MixedNB(["gaussian"] * N_GAUSS + ["categorical"] * N_CAT,
                                        n_threads=n_threads)
    return SklearnMixed()


def _inputs(model, part):
    codes, gauss, y = part
    return (codes if model == "categorical" else np.hstack([gauss, codes])), y


def _reference(model, train, X_test):
    from sklearn.naive_bayes import CategoricalNB

    ref = CategoricalNB() if model == "categorical" else SklearnMixed()
    return ref.fit(*_inputs(model, train)).predict_proba(X_test)


@pytest.mark.parametrize("model", ["categorical", "mixed"])
def test_fit(benchmark, contender, n_threads, model, data, record_info):
    train, test, n = data
    benchmark.group = f"{model}/fit/{'codes-200kx30' if model == 'categorical' else 'mixed-200kx50'}"
    X, y = _inputs(model, train)
    est = benchmark(lambda: _estimator(contender, model, n_threads).fit(X, y))
    assert len(est.classes_) == N_CLASSES
    record_info(X, benchmark.group.split("/")[-1])


@pytest.mark.parametrize("model", ["categorical", "mixed"])
def test_predict_proba(benchmark, contender, n_threads, model, data, record_info):
    train, test, n = data
    benchmark.group = (f"{model}/predict_proba/"
                       f"{'codes-200kx30' if model == 'categorical' else 'mixed-200kx50'}")
    est = _estimator(contender, model, n_threads).fit(*_inputs(model, train))
    X_test, _ = _inputs(model, test)
    proba = benchmark(est.predict_proba, X_test)
    if contender.name == "fastgen":
        assert_allclose(proba, _reference(model, train, X_test), rtol=1e-9, atol=1e-9)
    record_info(X_test, benchmark.group.split("/")[-1])
