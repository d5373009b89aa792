"""Bayesian (posterior predictive) scoring of GaussianNB and PoissonNB against their plug-in
scoring, in the same run, on the same data: what ``predictive=True`` costs.

Data (built once per session, never timed): 10 classes, 50 features, 100,000 test rows
(``--bench-size=small``: 10,000), and as many training rows: for GaussianNB normal features of
per-class means and scales, for PoissonNB Poisson counts of per-class rates (Gamma(2, 2)).

Groups ``{model}/predict_proba-predictive/{dataset}``, ``model`` in ``gaussian``, ``poisson``,
each with the two scorings side by side (ids ``plug-in`` and ``predictive``):

* ``dense-100kx50-10c`` -- batch throughput of ``predict_proba`` on the whole test set (fitted and
  warmed up outside the timing);
* ``1row-50-10c`` -- latency of ``predict_proba`` on one row (``benchmark.pedantic`` with many
  rounds, cycling over 256 fixed test rows);
* ``csr-100kx50-10c`` (PoissonNB only) -- the batch of ``dense-100kx50-10c`` as a CSR matrix.

fastgen only (scikit-learn has no posterior predictive), with each ``--bench-threads`` value.
Checks after timing: rows of the posteriors sum to 1, and on 200 test rows the predictive
posteriors equal those computed with ``scipy.stats.t`` (GaussianNB: Student-t, the posterior
predictive of the Normal-Inverse-Gamma prior) or ``scipy.stats.nbinom`` (PoissonNB: negative
binomial of the Gamma prior), within 1e-9; fastgen's results for every ``n_threads`` match its
first run within rtol = 1e-12. ``extra_info["scoring"]`` names the scoring; ``bench/summarize.py``
shows the two side by side (the ratio predictive / plug-in is what the group measures).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import bench_single_rows
from numpy.testing import assert_allclose
from scipy import stats
from scipy.special import logsumexp

N_FEATURES, N_CLASSES = 50, 10
SIZES = {"large": 100_000, "small": 10_000}
N_CHECK_ROWS = 200
SCORINGS = ("plug-in", "predictive")


@functools.lru_cache(maxsize=None)
def _data(model, n_rows):
    """(X_train, y_train, X_test) of ``model``, reproducible."""
    rng = np.random.default_rng(20261125)
    y = rng.integers(0, N_CLASSES, 2 * n_rows)
    if model == "gaussian":
        centre = rng.normal(0.0, 1.0, (N_CLASSES, N_FEATURES))
        scale = rng.uniform(0.5, 2.0, (N_CLASSES, N_FEATURES))
        X = centre[y] + scale[y] * rng.normal(size=(len(y), N_FEATURES))
    else:
        rate = rng.gamma(2.0, 2.0, (N_CLASSES, N_FEATURES))
        X = rng.poisson(rate[y]).astype(np.float64)
    return X[:n_rows], y[:n_rows], X[n_rows:]


def _dataset(n_rows, csr=False):
    return f"{'csr' if csr else 'dense'}-{n_rows // 1000}kx{N_FEATURES}-{N_CLASSES}c"


def pytest_generate_tests(metafunc):
    if "scoring" not in metafunc.fixturenames:
        return
    n_rows = SIZES[metafunc.config.getoption("--bench-size")]
    name = metafunc.function.__name__
    csr = name.endswith("csr")
    dataset = (f"1row-{N_FEATURES}-{N_CLASSES}c" if name.endswith("one_row")
               else _dataset(n_rows, csr))
    metafunc.parametrize("model, scoring", [
        pytest.param(m, s, id=f"{m}-{s}", marks=pytest.mark.benchmark(
            group=f"{m}/predict_proba-predictive/{dataset}"))
        for m in (("poisson",) if csr else ("gaussian", "poisson")) for s in SCORINGS])


@pytest.fixture
def fitted(contender, n_threads, model, scoring, bench_size):
    if contender.name != "fastgen":
        pytest.skip("scikit-learn has no posterior predictive")
    X, y, X_test = _data(model, SIZES[bench_size])
    cls = contender.module.GaussianNB if model == "gaussian" else contender.module.PoissonNB
    est = cls(predictive=scoring == "predictive", n_threads=n_threads).fit(X, y)
    est.predict_proba(X_test[:1])
    return est, X, y, X_test


def _predictive_reference(est, model, X_train, y_train, X):
    """log P(c | x) of the predictive from scipy.stats, for the rows X."""
    jll = np.tile(np.log(np.bincount(y_train, minlength=N_CLASSES) / len(y_train)),
                  (len(X), 1))
    for c in range(N_CLASSES):
        rows = X_train[y_train == c]
        n = len(rows)
        if model == "gaussian":  # the default prior: overall mean and variance (+ epsilon), n0 = 1
            m0, v0 = X_train.mean(axis=0), X_train.var(axis=0) + est.epsilon_
            xbar, m2 = rows.mean(axis=0), ((rows - rows.mean(axis=0)) ** 2).sum(axis=0)
            kappa, nu = 1.0 + n, 1.0 + n
            mean = (m0 + n * xbar) / kappa
            var = (v0 + m2 + n / kappa * (xbar - m0) ** 2) / nu
            jll[:, c] += stats.t.logpdf(X, nu, mean, np.sqrt(var * (1 + 1 / kappa))).sum(axis=1)
        else:  # the default prior Gamma(1, 1)
            r, b = 1.0 + rows.sum(axis=0), 1.0 + n
            jll[:, c] += stats.nbinom.logpmf(X, r, b / (b + 1)).sum(axis=1)
    return jll - logsumexp(jll, axis=1, keepdims=True)


def _check(est, model, scoring, n_threads, X_train, y_train, X, proba, rows, store):
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    first = store.setdefault((model, scoring, "proba", len(X)), proba)
    assert_allclose(proba, first, rtol=1e-12, err_msg=f"n_threads={n_threads}")
    if scoring == "predictive":
        reference = np.exp(_predictive_reference(est, model, X_train, y_train, X[rows]))
        assert_allclose(proba[rows], reference, rtol=0, atol=1e-9)


def test_predict_proba(benchmark, fitted, model, scoring, n_threads, record_info,
                       first_fastgen_result):
    est, X_train, y_train, X_test = fitted
    proba = benchmark(est.predict_proba, X_test)
    _check(est, model, scoring, n_threads, X_train, y_train, X_test, proba,
           np.arange(N_CHECK_ROWS), first_fastgen_result)
    record_info(X_test, _dataset(len(X_test)), estimator=type(est).__name__, scoring=scoring)


def test_predict_proba_csr(benchmark, fitted, model, scoring, n_threads, record_info,
                           first_fastgen_result):
    est, X_train, y_train, X_test = fitted
    X_csr = sp.csr_matrix(X_test)
    proba = benchmark(est.predict_proba, X_csr)
    _check(est, model, scoring, n_threads, X_train, y_train, X_test, proba,
           np.arange(N_CHECK_ROWS), first_fastgen_result)
    record_info(X_csr, _dataset(len(X_test), csr=True), estimator=type(est).__name__,
                scoring=scoring)


def test_predict_proba_one_row(benchmark, fitted, model, scoring, n_threads, record_info,
                               first_fastgen_result):
    est, X_train, y_train, X_test = fitted
    idx, rows, rounds = bench_single_rows(benchmark, est, X_test)
    proba = np.vstack([est.predict_proba(r) for r in rows])
    _check(est, model, scoring, n_threads, X_train, y_train, X_test[idx], proba,
           np.arange(len(idx)), first_fastgen_result)
    record_info(X_test[:1], f"1row-{N_FEATURES}-{N_CLASSES}c", estimator=type(est).__name__,
                scoring=scoring, rounds=rounds)
