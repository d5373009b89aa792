"""Gaussian-family benchmarks: GaussianNB, LinearDiscriminantAnalysis and
QuadraticDiscriminantAnalysis, fastgen vs scikit-learn, on dense float64 data.

Data (``bench/_dense.py``, built once per session, never timed): 5 Gaussian classes with different
covariances, 50 features, 200,000 training and 200,000 test rows (``--bench-size=small``: 20,000 each).

Groups are ``{model}/{operation}/{dataset}`` with ``model`` in ``gaussian``, ``lda``, ``qda``:

* ``fit/dense-200kx50`` — ``est.fit(X_train, y_train)`` on a fresh estimator, then ``predict_proba`` of
  one row, so that both libraries pay for everything needed before the first prediction (fastgen may
  derive some parameters lazily; the one-row prediction costs microseconds).
* ``predict_proba/dense-200kx50`` — batch throughput on the whole test set (fitted and warmed up
  outside the timing).
* ``gaussian/fit/dense-200kx50-nan10`` and ``gaussian/predict_proba/dense-200kx50-nan10`` — fastgen
  only (scikit-learn rejects NaN): the same data with 10% of the entries NaN completely at random,
  marginalised.  Compared with the complete-data groups this gives the cost of missing values
  (``bench/summarize.py`` prints that ratio).
* ``predict_proba/1row-50`` — latency of ``predict_proba`` on one row (``benchmark.pedantic`` with many
  rounds, cycling over 256 fixed test rows).

The module is marked ``threaded_blas``: every contender runs with each ``--bench-threads`` value
(labelled ``fastgen-1t``, ``fastgen-2t``, ``sklearn-1t``, ``sklearn-2t``), and its BLAS pools are pinned
to that thread count with threadpoolctl (scikit-learn's LDA and QDA spend their time in BLAS).

Checks after timing:

* GaussianNB: ``theta_``, ``var_``, ``class_prior_``, ``epsilon_`` and ``predict_proba`` equal
  scikit-learn's within rtol = atol = 1e-9; with NaN, the parameters equal the NaN-aware NumPy
  estimates and ``predict_proba`` equals the marginalised posterior computed with NumPy from
  scikit-learn's complete-data fit (features that are NaN dropped from the sum), within 1e-9.
* LDA: ``predict_proba`` equals scikit-learn's ``LinearDiscriminantAnalysis(solver="lsqr")`` within
  atol = 1e-6; ``means_``, ``covariance_`` and ``priors_`` within 1e-9.
* QDA: ``means_`` and ``covariance_`` equal the NumPy maximum-likelihood estimates and rows of
  ``predict_proba`` sum to 1.  ``predict_proba`` is compared with scikit-learn's (atol = 1e-6) only when
  the installed scikit-learn estimates the class covariances by maximum likelihood too (dividing by n,
  as 1.9 does; older releases divided by n - 1, a different model); the maximum difference is recorded
  in ``extra_info`` either way.
* LDA and QDA: ``predict_joint_log_proba`` on 200 test rows equals ``log prior +
  scipy.stats.multivariate_normal.logpdf`` with fastgen's own ``means_`` / ``covariance_``.
* fastgen's results for every ``n_threads`` must match its first run within rtol = 1e-12;
  ``extra_info["bit_identical"]`` records whether they are bit-identical.
"""

from __future__ import annotations

import functools

import _dense
import numpy as np
import pytest
from conftest import bench_single_rows
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

pytestmark = pytest.mark.threaded_blas

MODEL_KEYS = ("gaussian", "lda", "qda")
#: tolerance of predict_proba against scikit-learn (QDA: only if scikit-learn's model is the same,
#: see _proba_tol)
PROBA_TOL = {"gaussian": 1e-9, "lda": 1e-6, "qda": 1e-6}
PARAM_TOL = 1e-9
NAN_SUFFIX = f"-nan{round(_dense.NAN_FRACTION * 100)}"
NAN_MODELS = ("gaussian",)  # fastgen only; scikit-learn rejects NaN

N_SELF_CHECK_ROWS = 200


def pytest_generate_tests(metafunc):
    """(model, variant) parameters with their benchmark groups; the dataset part of the group name
    depends on ``--bench-size`` (``dense-200kx50`` or ``dense-20kx50``)."""
    if "variant" not in metafunc.fixturenames:
        return
    name = _dense.dataset_name(_dense.SIZES[metafunc.config.getoption("--bench-size")])
    op = metafunc.function.__name__.removeprefix("test_")
    params = [
        pytest.param(m, "", id=f"{m}-{name}", marks=pytest.mark.benchmark(group=f"{m}/{op}/{name}"))
        for m in MODEL_KEYS
    ] + [
        pytest.param(m, NAN_SUFFIX, id=f"{m}-{name}{NAN_SUFFIX}",
                     marks=pytest.mark.benchmark(group=f"{m}/{op}/{name}{NAN_SUFFIX}"))
        for m in NAN_MODELS
    ]
    metafunc.parametrize(("model", "variant"), params)


@functools.cache
def _sklearn_qda_is_ml() -> bool:
    """Whether scikit-learn's QDA divides the class scatter by n (maximum likelihood, as fastgen and
    scikit-learn 1.9 do) rather than by n - 1 (older releases): checked on a tiny fit."""
    try:
        from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
    except ImportError:
        return False
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [3.0, 1.0], [2.0, 2.0]])
    qda = QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, [0, 0, 0, 1, 1, 1])
    return bool(np.allclose(qda.covariance_[0], np.cov(X[:3], rowvar=False, bias=True), rtol=1e-12))


def _proba_tol(model):
    """Tolerance of predict_proba against scikit-learn, or None when the models differ."""
    if model == "qda" and not _sklearn_qda_is_ml():
        return None
    return PROBA_TOL[model]


def _skip_nan_for_sklearn(contender, variant):
    if variant and contender.name != "fastgen":
        pytest.skip("scikit-learn rejects NaN: the -nan groups time fastgen's marginalisation only")


def _check_close_to_first(store, key, contender, n_threads, value) -> bool | None:
    """fastgen's results for another n_threads must match its first run (rtol 1e-12); returns
    whether they are bit-identical (None for the first run and for scikit-learn)."""
    if contender.name != "fastgen":
        return None
    value = np.asarray(value)
    if key not in store:
        store[key] = (n_threads, value.copy())
        return None
    t0, first = store[key]
    assert_allclose(value, first, rtol=1e-12, atol=1e-300,
                    err_msg=f"fastgen n_threads={n_threads} differs from n_threads={t0}")
    return bool(np.array_equal(value, first, equal_nan=True))


def _max_abs_err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, float) - np.asarray(b, float)))) if np.size(a) else 0.0


def _gnb_log_proba(theta, var, prior, X):
    """GaussianNB posteriors with NaN features dropped from the sum (NumPy reference)."""
    jll = np.empty((X.shape[0], theta.shape[0]))
    for c in range(theta.shape[0]):
        terms = np.log(2.0 * np.pi * var[c]) + (X - theta[c]) ** 2 / var[c]
        jll[:, c] = np.log(prior[c]) - 0.5 * np.nansum(terms, axis=1)
    return jll - logsumexp(jll, axis=1, keepdims=True)


def _gnb_nan_params(X, y, classes, var_smoothing=1e-9):
    theta = np.array([np.nanmean(X[y == c], axis=0) for c in classes])
    var = np.array([np.nanvar(X[y == c], axis=0) for c in classes])
    eps = var_smoothing * np.max(np.nanvar(X, axis=0))
    counts = np.array([np.sum(~np.isnan(X[y == c]), axis=0) for c in classes], dtype=float)
    return theta, var + eps, eps, counts


def _check_fitted(est, model, variant, X, y, classes, ref):
    """Check fastgen's fitted parameters; return (a fingerprint array, extra_info entries)."""
    more = {}
    if model == "gaussian":
        if variant:
            theta, var, eps, counts = _gnb_nan_params(X, y, classes)
            assert_allclose(est.observed_count_, counts, rtol=0, atol=0)
        elif ref is not None:
            theta, var, eps = ref.estimator.theta_, ref.estimator.var_, ref.estimator.epsilon_
        else:
            theta = None
        if theta is not None:
            assert_allclose(est.theta_, theta, rtol=PARAM_TOL, atol=PARAM_TOL)
            assert_allclose(est.var_, var, rtol=PARAM_TOL, atol=PARAM_TOL)
            assert_allclose(est.epsilon_, eps, rtol=PARAM_TOL)
            more["max_abs_err"] = max(_max_abs_err(est.theta_, theta), _max_abs_err(est.var_, var))
        assert_allclose(est.class_prior_, np.bincount(y) / y.size, rtol=PARAM_TOL)
        return np.concatenate([est.theta_.ravel(), est.var_.ravel()]), more
    means = np.array([X[y == c].mean(axis=0) for c in classes])
    assert_allclose(est.means_, means, rtol=PARAM_TOL, atol=PARAM_TOL)
    assert_allclose(est.priors_, np.bincount(y) / y.size, rtol=PARAM_TOL)
    if model == "lda":
        if ref is not None:
            assert_allclose(est.covariance_, ref.estimator.covariance_, rtol=PARAM_TOL, atol=PARAM_TOL)
            more["max_abs_err"] = _max_abs_err(est.covariance_, ref.estimator.covariance_)
    else:
        covs = np.array([np.cov(X[y == c], rowvar=False, bias=True) for c in classes])
        assert_allclose(est.covariance_, covs, rtol=PARAM_TOL, atol=PARAM_TOL)
        more["max_abs_err_vs_numpy"] = _max_abs_err(est.covariance_, covs)
    return np.asarray(est.covariance_).ravel(), more


def _self_check_joint(est, model, X):
    """predict_joint_log_proba == log prior + full Gaussian log-density (scipy), complete rows."""
    from scipy.stats import multivariate_normal

    got = est.predict_joint_log_proba(X)
    want = np.empty_like(got)
    for k in range(len(est.classes_)):
        cov = est.covariance_ if model == "lda" else est.covariance_[k]
        want[:, k] = np.log(est.priors_[k]) + multivariate_normal(est.means_[k], cov).logpdf(X)
    assert_allclose(got, want, rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------------------------------------------
# throughput


def test_fit(benchmark, contender, n_threads, model, variant, dense_data, dense_references,
             new_estimator, record_info, first_fastgen_result):
    _skip_nan_for_sklearn(contender, variant)
    X = dense_data.X_train_nan if variant else dense_data.X_train
    y = dense_data.y_train
    X1 = dense_data.X_test[:1]

    def fit():
        est = new_estimator(model).fit(X, y)
        est.predict_proba(X1)  # lazily derived parameters, if any, are part of fit
        return est

    est = benchmark(fit)

    more = {}
    assert_array_equal(est.classes_, dense_data.classes)
    if contender.name == "fastgen":  # scikit-learn is the reference
        fingerprint, more = _check_fitted(est, model, variant, X, y, dense_data.classes,
                                          dense_references(model))
        more["bit_identical"] = _check_close_to_first(first_fastgen_result, ("fit", model, variant),
                                                      contender, n_threads, fingerprint)
    record_info(X, dense_data.name + variant, **more)


def test_predict_proba(benchmark, contender, n_threads, model, variant, dense_data, dense_references,
                       new_estimator, record_info, first_fastgen_result):
    _skip_nan_for_sklearn(contender, variant)
    est = new_estimator(model).fit(dense_data.X_train, dense_data.y_train)
    X = dense_data.X_test_nan if variant else dense_data.X_test
    est.predict_proba(X[:1])  # warm-up outside the timing

    out = benchmark(est.predict_proba, X)

    ref = dense_references(model)
    more = {"accuracy": float(np.mean(est.classes_[np.argmax(out, axis=1)] == dense_data.y_test))}
    assert out.shape == (X.shape[0], len(dense_data.classes))
    assert out.dtype == np.float64
    assert np.all(np.isfinite(out)) and np.all(out >= 0) and np.all(out <= 1)
    assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    if ref is not None:
        if variant:  # marginalised posterior from scikit-learn's complete-data parameters
            r = ref.estimator
            want = np.exp(_gnb_log_proba(r.theta_, r.var_, r.class_prior_, X))
        else:
            want = np.exp(ref.log_proba)
        more["max_abs_err"] = _max_abs_err(out, want)
        tol = _proba_tol(model)
        if tol is not None:
            assert_allclose(out, want, rtol=tol, atol=tol)
    if contender.name == "fastgen" and model in ("lda", "qda"):
        _self_check_joint(est, model, X[:N_SELF_CHECK_ROWS])
    if contender.name == "fastgen":
        more["bit_identical"] = _check_close_to_first(
            first_fastgen_result, ("predict_proba", model, variant), contender, n_threads, out)
    record_info(X, dense_data.name + variant, **more)


# --------------------------------------------------------------------------------------------------
# latency


@pytest.mark.parametrize("model", [
    pytest.param(m, id=m, marks=pytest.mark.benchmark(group=f"{m}/predict_proba/1row-{_dense.N_FEATURES}"))
    for m in MODEL_KEYS
])
def test_predict_proba_one_row(benchmark, contender, n_threads, model, dense_data, dense_references,
                               new_estimator, record_info):
    est = new_estimator(model).fit(dense_data.X_train, dense_data.y_train)
    X = dense_data.X_test
    idx, rows, rounds = bench_single_rows(benchmark, est, X)

    got = np.vstack([est.predict_proba(r) for r in rows])
    ref = dense_references(model)
    more = {}
    assert got.shape == (len(rows), len(dense_data.classes))
    assert_allclose(got.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    if ref is not None:
        want = np.exp(ref.log_proba[idx])
        more["max_abs_err"] = _max_abs_err(got, want)
        tol = _proba_tol(model)
        if tol is not None:
            assert_allclose(got, want, rtol=tol, atol=tol)
    # one row at a time == the same rows in one batch
    assert_allclose(got, est.predict_proba(X[idx]), rtol=1e-12, atol=1e-15)
    record_info(X[idx], f"1row-{_dense.N_FEATURES}", rows_cycled=len(rows), rounds=rounds, **more)
