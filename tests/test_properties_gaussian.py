"""Property-based tests (Hypothesis) of the Gaussian-family models of issue 3:
GaussianNB, PoissonNB, LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis.

The data are small and dense: class means (and Poisson rates) and a bounded
perturbation come from Hypothesis, the within-class noise from a NumPy generator seeded
by Hypothesis. Labels are built deterministically so that every class has at least
2 d + 6 rows (every covariance, per class or pooled, has full rank, also in each half
of a split for the partial_fit property).
"""

import os

import numpy as np
import pytest
from _gaussian_data import gnb_scale, mvn_scale
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal

import fastgen

MAX_EXAMPLES = int(os.environ.get("FASTGEN_HYPOTHESIS_EXAMPLES", "25"))
SETTINGS = settings(
    max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
METHODS = ("predict_joint_log_proba", "predict_log_proba", "predict_proba")
MODELS = ["GaussianNB", "PoissonNB", "LDA", "QDA"]
by_model = pytest.mark.parametrize("name", MODELS)

CLASS_NAMES = {
    "GaussianNB": "GaussianNB",
    "PoissonNB": "PoissonNB",
    "LDA": "LinearDiscriminantAnalysis",
    "QDA": "QuadraticDiscriminantAnalysis",
}


class _Classes:
    """name -> fastgen class, looked up when a test runs."""

    def __getitem__(self, name):
        return getattr(fastgen, CLASS_NAMES[name])


CLASSES = _Classes()
ATTRS = {
    "GaussianNB": ["class_count_", "class_prior_", "theta_", "var_", "epsilon_"],
    "PoissonNB": ["class_count_", "feature_count_", "observed_count_", "lambda_",
                  "class_log_prior_"],
    "LDA": ["class_count_", "priors_", "means_", "covariance_"],
    "QDA": ["class_count_", "priors_", "means_", "covariance_"],
}


# ---------------------------------------------------------------------------------------
# strategies


def params_for(name):
    if name == "GaussianNB":
        return st.fixed_dictionaries({"var_smoothing": st.sampled_from([1e-9, 1e-3])})
    if name == "PoissonNB":
        return st.fixed_dictionaries({
            "alpha": st.sampled_from([1.0, 0.1, 2.5]),
            "beta": st.sampled_from([1.0, 0.0, 3.0]),
            "fit_prior": st.booleans(),
        })
    if name == "LDA":
        return st.sampled_from([
            {}, {"shrinkage": 0.3}, {"covariance": "diagonal"}, {"covariance": "spherical"},
            {"covariance": "identity"},
        ])
    return st.fixed_dictionaries({"reg_param": st.sampled_from([0.0, 0.05, 0.5])})


@st.composite
def problems(draw, name):
    """(X float64 (n, d), y int, per-class row counts). Gaussian classes for the
    Gaussian models, Poisson counts for PoissonNB."""
    k = draw(st.integers(2, 4))
    d = draw(st.integers(1, 4))
    per_class = draw(st.lists(st.integers(2 * d + 6, 2 * d + 12), min_size=k, max_size=k))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = np.repeat(np.arange(k), per_class)
    y = y[rng.permutation(len(y))]
    n = len(y)
    if name == "PoissonNB":
        lam = draw(arrays(np.float64, (k, d), elements=st.floats(0.1, 20.0)))
        extra = draw(arrays(np.int64, (n, d), elements=st.integers(0, 3)))
        X = (rng.poisson(lam[y]) + extra).astype(np.float64)
    else:
        means = draw(arrays(np.float64, (k, d), elements=st.floats(-10.0, 10.0)))
        noise = draw(st.sampled_from([0.5, 1.0, 3.0]))
        bump = draw(arrays(np.float64, (n, d), elements=st.floats(-1.0, 1.0)))
        X = means[y] + noise * rng.standard_normal((n, d)) + bump
    return X, y, per_class


def holes(X, frac, seed, all_nan_row=True):
    rng = np.random.default_rng(seed)
    X = np.array(X, dtype=np.float64)
    X[rng.random(X.shape) < frac] = np.nan
    if all_nan_row:
        X[0] = np.nan
    return X


def outputs(est, X):
    out = {m: getattr(est, m)(X) for m in METHODS}
    out["predict"] = est.predict(X)
    return out


def scale_of(name, est, X):
    """Magnitude of the summed terms of the joint log-likelihoods (for absolute
    tolerances)."""
    X = np.asarray(X, dtype=np.float64)
    if name == "GaussianNB":
        return gnb_scale(X, est.theta_, est.var_, np.log(est.class_prior_))
    if name == "PoissonNB":
        Xz = np.nan_to_num(X)
        lam = np.asarray(est.lambda_, dtype=np.float64)
        terms = Xz @ np.abs(np.log(lam)).T + lam.sum(axis=1) + Xz.sum(axis=1, keepdims=True) * (
            1 + np.log1p(Xz.max(initial=0.0)))
        return max(1.0, float(terms.max()) + float(np.abs(est.class_log_prior_).max()))
    return mvn_scale(X, est.means_, est.covariance_, np.log(est.priors_))


def assert_normalised(est, X):
    out = outputs(est, X)
    for m in METHODS:
        assert not np.isnan(out[m]).any(), m
    lp, p = out["predict_log_proba"], out["predict_proba"]
    assert (lp <= 0).all()
    assert ((p >= 0) & (p <= 1)).all()
    tol = 1e-5 if p.dtype == np.float32 else 1e-12
    assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=tol)
    assert_array_equal(out["predict"], est.classes_[np.argmax(lp, axis=1)])


def clear_winner(jll, atol):
    """Rows whose top two joint log-likelihoods are further apart than atol."""
    s = np.sort(np.asarray(jll, dtype=np.float64), axis=1)
    return s[:, -1] - s[:, -2] > atol


# ---------------------------------------------------------------------------------------
# properties


@by_model
@SETTINGS
@given(data=st.data())
def test_posteriors_normalised_never_nan(name, data):
    X, y, _ = data.draw(problems(name))
    params = data.draw(params_for(name))
    est = CLASSES[name](**params).fit(X, y)
    assert_normalised(est, X)
    frac = data.draw(st.sampled_from([0.1, 0.3, 0.7]))
    assert_normalised(est, holes(X, frac, seed=len(y)))
    # far from every class: huge negative joint log-likelihoods, still no NaN
    far = np.abs(X) * 50 + 1e3 if name == "PoissonNB" else X * 50 + 1e3
    assert_normalised(est, far)
    assert np.isfinite(est.predict_log_proba(far)).all()


@by_model
@SETTINGS
@given(data=st.data())
def test_permuting_samples_permutes_results(name, data):
    X, y, _ = data.draw(problems(name))
    params = data.draw(params_for(name))
    perm = np.asarray(data.draw(st.permutations(range(len(y)))), dtype=np.intp)
    est = CLASSES[name](**params).fit(X, y)
    Xq = holes(X, 0.2, seed=1, all_nan_row=False)
    scale = scale_of(name, est, X)
    for Xe in (X, Xq):
        base, permuted = outputs(est, Xe), outputs(est, Xe[perm])
        for m in METHODS:
            assert_allclose(permuted[m], base[m][perm], rtol=1e-13, atol=1e-13 * scale,
                            err_msg=m)
        assert_array_equal(permuted["predict"], base["predict"][perm])
    # the order of the training rows only changes rounding
    est2 = CLASSES[name](**params).fit(X[perm], y[perm])
    for attr in ATTRS[name]:
        assert_allclose(getattr(est2, attr), getattr(est, attr), rtol=1e-10, atol=1e-12,
                        err_msg=attr)
    assert_allclose(est2.predict_log_proba(X), est.predict_log_proba(X), rtol=1e-9,
                    atol=1e-11 * scale)


@by_model
@SETTINGS
@given(data=st.data())
def test_float32_close_to_float64(name, data):
    X, y, _ = data.draw(problems(name))
    params = data.draw(params_for(name))
    X32 = X.astype(np.float32)
    e64 = CLASSES[name](**params).fit(X32.astype(np.float64), y)
    e32 = CLASSES[name](**params).fit(X32, y)
    for attr in ATTRS[name]:
        assert_allclose(getattr(e32, attr), getattr(e64, attr), rtol=1e-4,
                        atol=1e-5 * np.abs(getattr(e64, attr)).max(), err_msg=attr)
    Xq = holes(X, 0.2, seed=2)
    scale = scale_of(name, e64, X)
    for Xe in (X, Xq):
        o64, o32 = outputs(e64, Xe), outputs(e32, Xe.astype(np.float32))
        for m in METHODS:
            assert o32[m].dtype == np.float32, m
        atol = 2e-5 * scale
        assert_allclose(o32["predict_joint_log_proba"], o64["predict_joint_log_proba"],
                        rtol=1e-4, atol=atol)
        assert_allclose(o32["predict_log_proba"], o64["predict_log_proba"], rtol=1e-4,
                        atol=2 * atol)
        assert_allclose(o32["predict_proba"], o64["predict_proba"], rtol=1e-4, atol=2 * atol)
        ok = clear_winner(o64["predict_joint_log_proba"], 4 * atol)
        assert_array_equal(o32["predict"][ok], o64["predict"][ok])
        assert_normalised(e32, Xe.astype(np.float32))


@by_model
@SETTINGS
@given(data=st.data(), nan_fit=st.booleans())
def test_n_threads_identical(name, data, nan_fit):
    X, y, _ = data.draw(problems(name))
    params = data.draw(params_for(name))
    Xf = holes(X, 0.1, seed=3, all_nan_row=False) if nan_fit else X
    a = CLASSES[name](n_threads=1, **params).fit(Xf, y)
    b = CLASSES[name](n_threads=2, **params).fit(Xf, y)
    for attr in ATTRS[name]:
        assert np.array_equal(getattr(a, attr), getattr(b, attr)), attr
    # enough rows for the scoring kernels to split the work between threads
    Xe = np.tile(holes(X, 0.2, seed=4), (max(1, 2000 // len(X)), 1))
    for Xq in (Xe, Xe.astype(np.float32)):
        oa, ob = outputs(a, Xq), outputs(b, Xq)
        for m in oa:
            assert oa[m].dtype == ob[m].dtype, m
            assert np.array_equal(oa[m], ob[m]), m


@by_model
@SETTINGS
@given(data=st.data(), weighted=st.booleans())
def test_fit_union_equals_partial_fits(name, data, weighted):
    X, y, per_class = data.draw(problems(name))
    params = data.draw(params_for(name))
    d = X.shape[1]
    # split each class in two parts of at least d + 3 rows
    cut = {c: data.draw(st.integers(d + 3, per_class[c] - (d + 3)), label=f"cut{c}")
           for c in range(len(per_class))}
    rank = np.empty(len(y), dtype=np.intp)
    for c in range(len(per_class)):
        rows = np.flatnonzero(y == c)
        rank[rows] = np.arange(len(rows))
    first = rank < np.array([cut[c] for c in y])
    w = (np.asarray(data.draw(arrays(np.float64, len(y), elements=st.floats(0.25, 4.0))))
         if weighted else None)
    A, B = np.flatnonzero(first), np.flatnonzero(~first)
    sw = (lambda idx: None) if w is None else (lambda idx: w[idx])
    full = CLASSES[name](**params).fit(X, y, sample_weight=w)
    inc = CLASSES[name](**params)
    inc.partial_fit(X[A], y[A], classes=np.arange(len(per_class)), sample_weight=sw(A))
    inc.partial_fit(X[B], y[B], sample_weight=sw(B))
    assert_array_equal(inc.classes_, full.classes_)
    for attr in ATTRS[name]:
        want = np.asarray(getattr(full, attr))
        assert_allclose(getattr(inc, attr), want, rtol=1e-9,
                        atol=1e-12 * max(1.0, np.abs(want).max()), err_msg=attr)
    scale = scale_of(name, full, X)
    for m in METHODS:
        assert_allclose(getattr(inc, m)(X), getattr(full, m)(X), rtol=1e-9,
                        atol=1e-11 * scale, err_msg=m)
