"""The posterior predictive of LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis
(``predictive=True``: a multivariate Student t per class) against the plug-in Gaussian of the
same model, in the same run.

Data (``bench/_dense.py``, built once, never timed): 10 Gaussian classes of equal prior with
their own covariances, 50 features, 100,000 training and 100,000 test rows (``--bench-size=small``:
10,000 each).

Groups ``{lda,qda}/predict_proba/dense-100kx50-10c`` (the whole test set) and
``{lda,qda}/predict_proba/1row-50-10c`` (one row at a time, ``bench_single_rows``); in each the
ids ``plug-in-{n}t`` and ``predictive-{n}t`` for every ``--bench-threads`` value (BLAS pools
pinned to it, ``threaded_blas``). The ratio predictive / plug-in of a group is the cost of the
predictive: the plug-in LDA's posteriors are one product by a (d, C) matrix; the predictive's
per-class scale factor keeps the quadratic term, so it needs z = (x - shift) W too, one product
by a (d, d + C) matrix, and a log1p per row and class.

Checks after timing: the predictive's ``predict_proba`` rows sum to 1, and its
``predict_joint_log_proba`` on 50 test rows equals the log prior plus
``scipy.stats.multivariate_t.logpdf`` with the posterior computed with NumPy from the training
rows (rtol 1e-9).
"""

from __future__ import annotations

import _dense
import numpy as np
import pytest
from conftest import Contender, bench_single_rows, record_extra_info
from numpy.testing import assert_allclose
from scipy.stats import multivariate_t

import fastgen

pytestmark = pytest.mark.threaded_blas

N_CLASSES = 10
SIZES = {"large": 100_000, "small": 10_000}
MODELS = {"lda": fastgen.LinearDiscriminantAnalysis,
          "qda": fastgen.QuadraticDiscriminantAnalysis}
MODES = ("plug-in", "predictive")
FASTGEN = Contender("fastgen", fastgen)


def pytest_generate_tests(metafunc):
    if "mode" not in metafunc.fixturenames:
        return
    n = SIZES[metafunc.config.getoption("--bench-size")]
    batch = metafunc.function.__name__ == "test_predict_proba"
    dataset = f"{_dense.dataset_name(n)}-{N_CLASSES}c" if batch else f"1row-50-{N_CLASSES}c"
    metafunc.parametrize(("model", "mode", "n_threads"), [
        pytest.param(model, mode, t, id=f"{model}-{mode}-{t}t",
                     marks=pytest.mark.benchmark(group=f"{model}/predict_proba/{dataset}"))
        for model in MODELS for mode in MODES for t in metafunc.config._fastgen_threads])


@pytest.fixture(scope="module")
def data(bench_size):
    return _dense.make_gaussian_blobs(SIZES[bench_size], n_classes=N_CLASSES,
                                      priors=(1 / N_CLASSES,) * N_CLASSES)


def _check(est, model, data):
    if not est.predictive:
        return
    X, y = data.X_train, data.y_train
    test = data.X_test[:50]
    d = X.shape[1]
    m0, cov0 = X.mean(axis=0), np.diag(X.var(axis=0))
    kappa0, nu0 = 1.0, float(d)  # prior_strength=1: n0 = 1, nu0 = n0 + d - 1
    stats = []
    for c in range(N_CLASSES):
        rows = X[y == c]
        xbar = rows.mean(axis=0)
        n = len(rows)
        spread = (rows - xbar).T @ (rows - xbar) + kappa0 * n / (kappa0 + n) * np.outer(
            xbar - m0, xbar - m0)
        stats.append((n, (kappa0 * m0 + n * xbar) / (kappa0 + n), kappa0 + n, spread))
    shared = sum(s[3] for s in stats)
    want = np.empty((len(test), N_CLASSES))
    for c, (n, m, kappa, spread) in enumerate(stats):
        psi, nu = (nu0 * cov0 + shared, nu0 + len(X)) if model == "lda" else (
            nu0 * cov0 + spread, nu0 + n)
        df = nu - d + 1
        want[:, c] = np.log(n / len(X)) + multivariate_t(
            m, psi * (kappa + 1) / (kappa * df), df=df).logpdf(test)
    assert_allclose(est.predict_joint_log_proba(test), want, rtol=1e-9)


def _fitted(model, mode, n_threads, data):
    est = MODELS[model](predictive=mode == "predictive", n_threads=n_threads)
    return est.fit(data.X_train, data.y_train)


def test_predict_proba(benchmark, model, mode, n_threads, data, request):
    est = _fitted(model, mode, n_threads, data)
    est.predict_proba(data.X_test[:1])
    proba = benchmark(est.predict_proba, data.X_test)
    record_extra_info(benchmark, FASTGEN, n_threads, data.X_test, data.name, request,
                      model=model, mode=mode)
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    _check(est, model, data)


def test_predict_proba_1row(benchmark, model, mode, n_threads, data, request):
    est = _fitted(model, mode, n_threads, data)
    _, rows, rounds = bench_single_rows(benchmark, est, data.X_test)
    record_extra_info(benchmark, FASTGEN, n_threads, rows[0], "1row", request, model=model,
                      mode=mode, rounds=rounds)
    _check(est, model, data)
