"""LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis (issue 3).

Posteriors, decision_function, coef_/intercept_ and transform are compared with
scikit-learn (solver="lsqr" for the posteriors, "eigen" for transform) on complete data
with default priors, where the models coincide. Joint log-likelihoods are compared with
the brute-force ``full_gaussian_jll`` oracle (scipy.stats.multivariate_normal on the
observed sub-vector) built from each model's own means_ and covariance_, and the
covariances with NumPy formulas. Fits with missing values (EM) are compared both with the
complete-data fit and with a plain-EM maximum-likelihood oracle.
"""

import pickle
import warnings

import numpy as np
import pytest
from _gaussian_data import (
    METHODS,
    assert_normalised,
    blobs,
    class_cov,
    mvn_scale,
    observed_loglik,
    pooled_cov,
    rel_fro,
    with_holes,
)
from _data import horse_colic
from _reference import full_gaussian_jll, gaussian_em_reference, log_posterior
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import fastgen
from fastgen import _gaussian
from fastgen._base import Members

LDA = fastgen.LinearDiscriminantAnalysis
QDA = fastgen.QuadraticDiscriminantAnalysis
KINDS = ["full", "diagonal", "spherical", "identity"]


def sk_da():
    return pytest.importorskip("sklearn.discriminant_analysis")


def assert_jll_matches_oracle(est, X, covs=None, rtol=1e-9):
    """predict_joint_log_proba / predict_log_proba / predict_proba / predict equal the
    scipy.stats oracle built from the model's own means_, covariance_ and priors_."""
    covs = est.covariance_ if covs is None else covs
    log_prior = np.log(est.priors_)
    jll = full_gaussian_jll(X, est.means_, covs, log_prior)
    atol = 1e-12 * mvn_scale(X, est.means_, covs, log_prior)
    assert_allclose(est.predict_joint_log_proba(X), jll, rtol=rtol, atol=atol,
                    err_msg="predict_joint_log_proba")
    lp = log_posterior(jll)
    assert_allclose(est.predict_log_proba(X), lp, rtol=rtol, atol=atol, err_msg="log_proba")
    assert_allclose(est.predict_proba(X), np.exp(lp), rtol=rtol, atol=atol, err_msg="proba")
    assert_array_equal(est.predict(X), est.classes_[np.argmax(jll, axis=1)])


def class_means(X, y, classes, w=None):
    w = np.ones(len(y)) if w is None else w
    return np.array([np.average(X[y == c], axis=0, weights=w[y == c]) for c in classes])


@pytest.fixture(scope="module")
def shared3():
    """Three classes with one shared covariance, d=4."""
    X, y = blobs(360, 4, k=3, seed=21, sep=1.5, shared=True)
    return X[:240], y[:240], X[240:], y[240:]


@pytest.fixture(scope="module")
def hetero3():
    """Three classes with their own covariances, d=4."""
    X, y = blobs(360, 4, k=3, seed=22, sep=1.5)
    return X[:240], y[:240], X[240:], y[240:]


# ---------------------------------------------------------------------------------------
# LDA: parity with scikit-learn (complete data, default priors)


@pytest.mark.parametrize("shrinkage", [None, 0.3, "auto"], ids=["none", "0.3", "auto"])
@pytest.mark.parametrize("n_classes", [2, 3, 4])
def test_lda_parity_sklearn_lsqr(n_classes, shrinkage, global_random_seed):
    X, y = blobs(300, 5, k=n_classes, seed=global_random_seed, sep=1.2, shared=True,
                 scale=2.0, shift=3.0)
    Xtr, ytr, Xte = X[:200], y[:200], X[200:]
    fg = LDA(shrinkage=shrinkage).fit(Xtr, ytr)
    sk = sk_da().LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage,
                                            store_covariance=True).fit(Xtr, ytr)
    assert_array_equal(fg.classes_, sk.classes_)
    assert_allclose(fg.priors_, sk.priors_, rtol=1e-12)
    assert_allclose(fg.means_, sk.means_, rtol=1e-12, atol=1e-12)
    assert_allclose(fg.covariance_, sk.covariance_, rtol=1e-9, atol=1e-12)
    # shapes and values of the linear decision function
    d = X.shape[1]
    want_shape = ((1, d), (1,)) if n_classes == 2 else ((n_classes, d), (n_classes,))
    assert fg.coef_.shape == want_shape[0]
    assert fg.intercept_.shape == want_shape[1]
    assert_allclose(fg.coef_, sk.coef_, rtol=1e-6, atol=1e-9 * np.abs(sk.coef_).max())
    assert_allclose(fg.intercept_, sk.intercept_, rtol=1e-6,
                    atol=1e-9 * np.abs(sk.intercept_).max())
    for Xe, ye in ((Xte, y[200:]), (Xtr, ytr)):
        dec = sk.decision_function(Xe)
        got = fg.decision_function(Xe)
        assert got.shape == dec.shape
        assert_allclose(got, dec, rtol=1e-6, atol=1e-9 * max(1.0, np.abs(dec).max()))
        proba = sk.predict_proba(Xe)
        assert_allclose(fg.predict_proba(Xe), proba, rtol=1e-6, atol=1e-9)
        # scikit-learn takes log(predict_proba) (and 1 - expit for two classes): compare
        # the log-posteriors where its probabilities keep their digits
        ok = proba > 1e-6
        assert_allclose(fg.predict_log_proba(Xe)[ok], np.log(proba[ok]), rtol=1e-6, atol=1e-9)
        assert_array_equal(fg.predict(Xe), sk.predict(Xe))
        assert fg.score(Xe, ye) == pytest.approx(sk.score(Xe, ye))


@pytest.mark.parametrize("n_classes", [3, 4])
def test_lda_transform_matches_sklearn_eigen(n_classes):
    X, y = blobs(300, 5, k=n_classes, seed=31, sep=1.5, shared=True)
    fg = LDA().fit(X, y)
    sk = sk_da().LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    T, S = fg.transform(X), sk.transform(X)
    assert T.shape == (len(X), n_classes - 1) == S.shape
    assert_allclose(fg.xbar_, X.mean(axis=0), rtol=1e-12, atol=1e-12)
    # each direction is a generalised eigenvector: the same up to sign and scale (and
    # scikit-learn's "eigen" transform does not centre)
    for j in range(n_classes - 1):
        r = np.corrcoef(T[:, j], S[:, j])[0, 1]
        assert abs(r) == pytest.approx(1.0, abs=1e-9), (j, r)
    assert_allclose(fg.transform(X[:7]), (X[:7] - fg.xbar_) @ fg.scalings_[:, : n_classes - 1],
                    rtol=1e-10, atol=1e-12)
    assert_allclose(fg.explained_variance_ratio_, sk.explained_variance_ratio_, rtol=1e-6,
                    atol=1e-9)
    one = LDA(n_components=1).fit(X, y)
    assert one.transform(X).shape == (len(X), 1)
    assert abs(np.corrcoef(one.transform(X)[:, 0], S[:, 0])[0, 1]) == pytest.approx(1, abs=1e-9)
    with pytest.raises(ValueError):
        LDA(n_components=n_classes).fit(X, y)


# ---------------------------------------------------------------------------------------
# LDA: covariance kinds, shrinkage and the oracle


def expected_lda_cov(kind, X, y, classes, w=None, shrinkage=None):
    S = pooled_cov(X, y, classes, w)
    d = S.shape[0]
    if kind == "full":
        if shrinkage is not None:
            S = (1 - shrinkage) * S + shrinkage * np.trace(S) / d * np.eye(d)
        return S
    if kind == "diagonal":
        return np.diag(np.diag(S))
    if kind == "spherical":
        return np.mean(np.diag(S)) * np.eye(d)
    return np.eye(d)


@pytest.mark.parametrize("kind", KINDS)
def test_lda_covariance_kinds_and_oracle(kind, shared3):
    X, y, Xt, _ = shared3
    est = LDA(covariance=kind).fit(X, y)
    assert_allclose(est.means_, class_means(X, y, est.classes_), rtol=1e-12, atol=1e-12)
    assert_allclose(est.priors_, np.bincount(y) / len(y), rtol=1e-12)
    assert_allclose(est.class_count_, np.bincount(y), rtol=1e-15)
    want = expected_lda_cov(kind, X, y, est.classes_)
    assert est.covariance_.shape == (4, 4)
    assert_allclose(est.covariance_, want, rtol=1e-9, atol=1e-14)
    assert_jll_matches_oracle(est, Xt)
    # missing values at predict time are marginalised
    Xh = with_holes(Xt, 0.3, seed=1, all_nan_row=0)
    assert_jll_matches_oracle(est, Xh)
    assert_allclose(est.predict_joint_log_proba(Xh[:1]), np.log([est.priors_]), rtol=1e-12)
    assert_normalised(est, Xh)


@pytest.mark.parametrize("shrinkage", [0.0, 0.3, 1.0])
def test_lda_float_shrinkage_formula(shrinkage, shared3):
    X, y, Xt, _ = shared3
    est = LDA(shrinkage=shrinkage).fit(X, y)
    want = expected_lda_cov("full", X, y, est.classes_, shrinkage=shrinkage)
    assert_allclose(est.covariance_, want, rtol=1e-9, atol=1e-14)
    assert_jll_matches_oracle(est, with_holes(Xt, 0.2, seed=2))


def test_lda_sample_weight_and_priors(shared3):
    X, y, Xt, _ = shared3
    w = np.random.default_rng(5).uniform(0.2, 3.0, len(y))
    est = LDA().fit(X, y, sample_weight=w)
    assert_allclose(est.class_count_, np.bincount(y, weights=w), rtol=1e-12)
    assert_allclose(est.priors_, np.bincount(y, weights=w) / w.sum(), rtol=1e-12)
    assert_allclose(est.means_, class_means(X, y, est.classes_, w), rtol=1e-12, atol=1e-12)
    assert_allclose(est.covariance_, pooled_cov(X, y, est.classes_, w), rtol=1e-9, atol=1e-14)
    assert_jll_matches_oracle(est, Xt)
    # given priors change the prior term only, not the pooled covariance
    priors = [0.6, 0.3, 0.1]
    p = LDA(priors=priors).fit(X, y)
    plain = LDA().fit(X, y)
    assert_allclose(p.priors_, priors, rtol=1e-15)
    assert_allclose(p.covariance_, plain.covariance_, rtol=1e-12)
    assert_jll_matches_oracle(p, Xt)


def test_lda_nan_column_equals_column_dropped(shared3):
    """The Gaussian marginal of a feature subset is the sub-vector / sub-matrix, so a
    NaN column equals a model fitted without it (pooled ML covariance, no shrinkage)."""
    X, y, Xt, _ = shared3
    keep = [0, 2, 3]
    for kind in ("full", "diagonal"):
        full = LDA(covariance=kind).fit(X, y)
        dropped = LDA(covariance=kind).fit(X[:, keep], y)
        Xn = Xt.copy()
        Xn[:, 1] = np.nan
        scale = mvn_scale(Xt[:, keep], dropped.means_, dropped.covariance_,
                          np.log(dropped.priors_))
        for m in METHODS:
            assert_allclose(getattr(full, m)(Xn), getattr(dropped, m)(Xt[:, keep]),
                            rtol=1e-9, atol=1e-12 * scale, err_msg=(kind, m))


@pytest.mark.parametrize("shrinkage", [0.5, 1.0, "auto"])
def test_lda_rank_deficient_needs_shrinkage(shrinkage):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 10))
    y = np.array([0, 1, 0, 1, 0, 1])
    with pytest.raises(ValueError, match="shrinkage"):
        LDA().fit(X, y)
    est = LDA(shrinkage=shrinkage).fit(X, y)
    assert_jll_matches_oracle(est, rng.standard_normal((4, 10)))


# ---------------------------------------------------------------------------------------
# LDA: missing values in fit


@pytest.mark.parametrize("Model, params", [(LDA, {}), (LDA, {"covariance": "diagonal"}),
                                           (QDA, {})], ids=["LDA", "LDA-diagonal", "QDA"])
def test_n_iter_is_one_without_missing_values(Model, params, hetero3):
    """n_iter_ counts EM iterations; complete data is fitted in closed form, which counts as
    one (scikit-learn's convention for estimators with max_iter: n_iter_ >= 1)."""
    X, y, _, _ = hetero3
    assert Model(**params).fit(X, y).n_iter_ == 1


def test_lda_auto_shrinkage_needs_its_statistics():
    """'auto' keeps third and fourth co-moments; switching to it after a fit without them, or
    asking for it with a diagonal covariance, is a clear error."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 3)), np.arange(20) % 2
    est = LDA().fit(X, y)
    before = est.predict_proba(X)
    est.set_params(shrinkage="auto")  # the statistics cannot serve it: the model keeps its
    assert_array_equal(est.predict_proba(X), before)  # parameters, and partial_fit says why
    with pytest.raises(ValueError, match="call fit"):
        est.partial_fit(X, y)
    with pytest.raises(ValueError, match="needs covariance='full'"):
        LDA("diagonal", shrinkage="auto").fit(X, y)
    auto = LDA(shrinkage="auto").fit(X, y)
    assert {"third", "fourth"} <= auto._fitted.stats.keys()
    # kept through another shrinkage, so that "auto" can come back without a refit
    auto.set_params(shrinkage=0.2).partial_fit(X, y)
    assert {"third", "fourth"} <= auto._fitted.stats.keys()
    again = LDA(shrinkage="auto").fit(np.vstack([X, X]), np.concatenate([y, y]))
    assert_allclose(auto.set_params(shrinkage="auto").covariance_, again.covariance_,
                    rtol=1e-9)


def em_problem(n, shared, seed=7):
    X, y = blobs(n, 5, k=3, seed=seed, sep=1.5, scale=1.0, shift=3.0, shared=shared)
    return X, with_holes(X, 0.15, seed=seed + 1), y


def test_lda_em_close_to_complete_data_fit():
    X, Xh, y = em_problem(3000, shared=True)
    ref = LDA().fit(X, y)
    est = LDA().fit(Xh, y)
    assert est.n_iter_ > 0
    assert rel_fro(est.means_, ref.means_) < 0.05
    assert rel_fro(est.covariance_, ref.covariance_) < 0.05
    assert (np.linalg.eigvalsh(est.covariance_) > 0).all()
    assert_allclose(est.covariance_, est.covariance_.T, rtol=1e-12)


@pytest.mark.parametrize("Model, shared, seed", [(LDA, True, 7), (QDA, False, 11)],
                         ids=["LDA", "QDA"])
def test_em_reaches_observed_data_mle(Model, shared, seed):
    """EM maximises the observed-data likelihood: fastgen's fit must reach (to its tol)
    the maximum found by a plain, long-run EM oracle, and score holes with that density."""
    _, Xh, y = em_problem(3000, shared=shared, seed=seed)
    est = Model(tol=1e-8, max_iter=1000).fit(Xh, y)
    means, cov = gaussian_em_reference(Xh, y, 3, shared=shared)
    ll_ref = observed_loglik(Xh, y, means, cov)
    ll = observed_loglik(Xh, y, est.means_, est.covariance_)
    assert ll <= ll_ref + 1e-9
    assert ll_ref - ll < 1e-6, (ll, ll_ref)
    assert rel_fro(est.means_, means) < 1e-3
    assert rel_fro(est.covariance_, cov) < 1e-3
    assert_jll_matches_oracle(est, Xh[:40])


@pytest.mark.parametrize("kind", ["diagonal", "spherical", "identity"])
def test_lda_nan_fit_non_full_uses_observed_values(kind, shared3):
    """Without a full covariance there is no EM: each feature's statistics use its
    observed values (means per class; pooled variance = within-class squared deviations
    over the observed values / their total weight)."""
    X, y, Xt, _ = shared3
    Xh = with_holes(X, 0.2, seed=3)
    est = LDA(covariance=kind).fit(Xh, y)
    means = np.array([np.nanmean(Xh[y == c], axis=0) for c in est.classes_])
    assert_allclose(est.means_, means, rtol=1e-12, atol=1e-12)
    dev = Xh - means[np.searchsorted(est.classes_, y)]
    var = np.nanmean(dev**2, axis=0)
    # spherical: one variance for every feature, its maximum-likelihood estimate over the
    # observed entries (all squared deviations / their count), not the mean of per-feature ones
    spherical = np.nansum(dev**2) / np.sum(~np.isnan(dev))
    want = {"diagonal": np.diag(var), "spherical": spherical * np.eye(4),
            "identity": np.eye(4)}[kind]
    assert_allclose(est.covariance_, want, rtol=1e-9, atol=1e-14)
    assert_jll_matches_oracle(est, with_holes(Xt, 0.2, seed=4))


# ---------------------------------------------------------------------------------------
# LDA / QDA: incremental fitting


@pytest.mark.parametrize("params", [{}, {"shrinkage": 0.3}, {"shrinkage": "auto"},
                                    {"covariance": "diagonal"}, {"covariance": "spherical"}],
                         ids=["full", "shrink0.3", "auto", "diagonal", "spherical"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_lda_partial_fit_batches_equal_fit(params, weighted, shared3):
    X, y, Xt, _ = shared3
    w = np.random.default_rng(8).uniform(0.3, 2.0, len(y)) if weighted else None
    full = LDA(**params).fit(X, y, sample_weight=w)
    inc = LDA(**params)
    for s in np.array_split(np.arange(len(y)), 3):
        inc.partial_fit(X[s], y[s], classes=[0, 1, 2], sample_weight=None if w is None else w[s])
    for name in ("class_count_", "priors_", "means_", "covariance_", "coef_", "intercept_"):
        assert_allclose(getattr(inc, name), getattr(full, name), rtol=1e-9, atol=1e-12,
                        err_msg=name)
    for m in METHODS:
        assert_allclose(getattr(inc, m)(Xt), getattr(full, m)(Xt), rtol=1e-9, atol=1e-10,
                        err_msg=m)


@pytest.mark.parametrize("reg_param", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_qda_partial_fit_batches_equal_fit(reg_param, weighted, hetero3):
    X, y, Xt, _ = hetero3
    w = np.random.default_rng(9).uniform(0.3, 2.0, len(y)) if weighted else None
    full = QDA(reg_param=reg_param).fit(X, y, sample_weight=w)
    inc = QDA(reg_param=reg_param)
    for s in np.array_split(np.arange(len(y)), 3):
        inc.partial_fit(X[s], y[s], classes=[0, 1, 2], sample_weight=None if w is None else w[s])
    for name in ("class_count_", "priors_", "means_", "covariance_"):
        assert_allclose(getattr(inc, name), getattr(full, name), rtol=1e-9, atol=1e-12,
                        err_msg=name)
    for m in METHODS:
        assert_allclose(getattr(inc, m)(Xt), getattr(full, m)(Xt), rtol=1e-9, atol=1e-10,
                        err_msg=m)


@pytest.mark.parametrize("Model", [LDA, QDA], ids=["LDA", "QDA"])
def test_partial_fit_unseen_label_raises(Model, shared3):
    X, y, _, _ = shared3
    est = Model().partial_fit(X[:60], y[:60], classes=[0, 1, 2])
    with pytest.raises(ValueError):
        est.partial_fit(X[60:70], np.full(10, 5))


# ---------------------------------------------------------------------------------------
# QDA


@pytest.mark.parametrize("reg_param", [0.0, 0.3, 1.0])
def test_qda_covariance_and_oracle(reg_param, hetero3):
    X, y, Xt, _ = hetero3
    est = QDA(reg_param=reg_param).fit(X, y)
    assert est.covariance_.shape == (3, 4, 4)
    assert_allclose(est.means_, class_means(X, y, est.classes_), rtol=1e-12, atol=1e-12)
    assert_allclose(est.priors_, np.bincount(y) / len(y), rtol=1e-12)
    assert_allclose(est.class_count_, np.bincount(y), rtol=1e-15)
    for i, c in enumerate(est.classes_):
        cov = np.cov(X[y == c].T, bias=True)
        assert_allclose(est.covariance_[i], (1 - reg_param) * cov + reg_param * np.eye(4),
                        rtol=1e-9, atol=1e-14)
    assert_jll_matches_oracle(est, Xt)
    Xh = with_holes(Xt, 0.3, seed=5, all_nan_row=2)
    assert_jll_matches_oracle(est, Xh)
    assert_allclose(est.predict_log_proba(Xh[2:3]), np.log([est.priors_]), rtol=1e-12)
    assert_normalised(est, Xh)


def test_qda_sample_weight_and_priors(hetero3):
    X, y, Xt, _ = hetero3
    w = np.random.default_rng(6).uniform(0.2, 3.0, len(y))
    est = QDA(reg_param=0.1).fit(X, y, sample_weight=w)
    assert_allclose(est.class_count_, np.bincount(y, weights=w), rtol=1e-12)
    assert_allclose(est.priors_, np.bincount(y, weights=w) / w.sum(), rtol=1e-12)
    assert_allclose(est.means_, class_means(X, y, est.classes_, w), rtol=1e-12, atol=1e-12)
    for i, c in enumerate(est.classes_):
        want = 0.9 * class_cov(X[y == c], w[y == c]) + 0.1 * np.eye(4)
        assert_allclose(est.covariance_[i], want, rtol=1e-9, atol=1e-14)
    assert_jll_matches_oracle(est, Xt)
    p = QDA(priors=[0.2, 0.2, 0.6]).fit(X, y)
    assert_allclose(p.priors_, [0.2, 0.2, 0.6], rtol=1e-15)
    assert_jll_matches_oracle(p, Xt)


def test_qda_nan_column_equals_column_dropped(hetero3):
    X, y, Xt, _ = hetero3
    keep = [0, 1, 3]
    for r in (0.0, 0.25):
        full = QDA(reg_param=r).fit(X, y)
        dropped = QDA(reg_param=r).fit(X[:, keep], y)
        Xn = Xt.copy()
        Xn[:, 2] = np.nan
        for m in METHODS:
            assert_allclose(getattr(full, m)(Xn), getattr(dropped, m)(Xt[:, keep]),
                            rtol=1e-9, atol=1e-10, err_msg=(r, m))


@pytest.mark.parametrize("n_small", [1, 3, 4])
def test_qda_small_class_needs_reg_param(hetero3, n_small):
    X, y, Xt, _ = hetero3
    # class 3 has at most 4 samples in 4 dimensions: its ML covariance is singular
    X2 = np.vstack([X, np.random.default_rng(1).standard_normal((n_small, 4)) + 4])
    y2 = np.append(y, [3] * n_small)
    with pytest.raises(ValueError, match="reg_param"):
        QDA().fit(X2, y2)
    est = QDA(reg_param=0.1).fit(X2, y2)
    assert_jll_matches_oracle(est, Xt)


def test_qda_em_close_to_complete_data_fit():
    # 2000 rows per class: the EM estimate from 85 % of the values stays within a few
    # percent of the complete-data one (about 2-3 % at this size)
    X, Xh, y = em_problem(6000, shared=False)
    ref = QDA().fit(X, y)
    est = QDA().fit(Xh, y)
    assert est.n_iter_ > 0
    assert rel_fro(est.means_, ref.means_) < 0.05
    for i in range(3):
        assert rel_fro(est.covariance_[i], ref.covariance_[i]) < 0.05, i
        assert (np.linalg.eigvalsh(est.covariance_[i]) > 0).all()


# ---------------------------------------------------------------------------------------
# both: input validation, dtypes, pickling


@pytest.mark.parametrize("kind", ["inf", "-inf", "complex", "strings"])
@pytest.mark.parametrize("Model", [LDA, QDA], ids=["LDA", "QDA"])
def test_bad_input_raises(Model, kind, shared3):
    X, y, _, _ = shared3
    bad = X[:30].copy()
    if kind == "inf":
        bad[2, 1] = np.inf
    elif kind == "-inf":
        bad[0, 0] = -np.inf
    elif kind == "complex":
        bad = bad.astype(np.complex128) + 1j
    else:
        bad = np.array([["x"] * X.shape[1]] * 30)
    with pytest.raises(ValueError):
        Model().fit(bad, y[:30])
    est = Model().fit(X, y)
    with pytest.raises(ValueError):
        est.predict_proba(bad)


@pytest.mark.parametrize("priors", [[0.5, 0.6, 0.1], [1.2, -0.2, 0.0], [0.5, 0.5]],
                         ids=["sum", "negative", "length"])
@pytest.mark.parametrize("Model", [LDA, QDA], ids=["LDA", "QDA"])
def test_bad_priors_raise(Model, priors, shared3):
    X, y, _, _ = shared3
    with pytest.raises(ValueError):
        Model(priors=priors).fit(X, y)


@pytest.mark.parametrize("Model", [LDA, QDA], ids=["LDA", "QDA"])
def test_float32_outputs_and_pickle(Model, hetero3):
    X, y, Xt, _ = hetero3
    est = Model().fit(X.astype(np.float32), y)
    X32 = Xt.astype(np.float32)
    for m in METHODS:
        assert getattr(est, m)(X32).dtype == np.float32, m
    clone = pickle.loads(pickle.dumps(est))
    for m in METHODS:
        assert np.array_equal(getattr(clone, m)(X32), getattr(est, m)(X32))
    assert_array_equal(clone.predict(X32), est.predict(X32))
    params = est.get_params()
    assert "priors" in params and "n_threads" in params


@pytest.mark.parametrize("Model", [LDA, QDA])
def test_em_warns_when_max_iter_is_reached(Model):
    """EM that stops at max_iter says so (ConvergenceWarning), as scikit-learn's iterative
    estimators do; with enough iterations it is silent."""
    X, Xh, y = em_problem(600, shared=Model is LDA)
    with pytest.warns(fastgen.ConvergenceWarning, match="max_iter=2"):
        est = Model(max_iter=2).fit(Xh, y)
    assert est.n_iter_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", fastgen.ConvergenceWarning)
        assert Model(max_iter=500).fit(Xh, y).n_iter_ < 500


def test_lda_auto_shrinkage_with_missing_values():
    """'auto' with NaN: EM completes the rows, Ledoit-Wolf shrinks the completed statistics;
    the model is a proper Gaussian whose marginals the predictions use."""
    X, Xh, y = em_problem(600, shared=True)
    est = LDA(shrinkage="auto").fit(Xh, y)
    complete = LDA(shrinkage="auto").fit(X, y)
    assert rel_fro(est.covariance_, complete.covariance_) < 0.1
    assert_jll_matches_oracle(est, Xh[:50])


# ---------------------------------------------------------------------------------------
# both: EM accelerated by SQUAREM -- EM's fixed point, a log-likelihood that never
# decreases, valid extrapolations. Plain EM, the oracle, iterates the model's own EM map
# (``_gaussian._em_map``) from the same start.


def plain_em(est, X, y_idx, n_classes, base=None, tol=1e-14, max_iter=20000):
    """(means, covariances (G, d, d), iterations) of plain EM run to a relative change <= tol."""
    hyper = est._check_params(n_classes, X, None)
    step, mean, covs, support = _gaussian._em_map(
        X, Members.hard(y_idx, np.ones(len(y_idx)), n_classes),
        lambda stats: est._covariances(stats, hyper, missing=True), base, 1, hyper["higher"])
    for n_iter in range(1, max_iter + 1):
        new_mean, new_covs, support, _, _ = step(mean, covs, support)
        change = max(np.abs(new_mean - mean).max() / np.abs(new_mean).max(),
                     np.abs(new_covs - covs).max() / np.abs(new_covs).max())
        mean, covs = new_mean, new_covs
        if change <= tol:
            return mean, covs, n_iter
    raise AssertionError("plain EM did not converge")


def assert_same_gaussians(got_means, got_covs, means, covs, rtol):
    """Class means and covariances (G, d, d) equal (means, covs) to rtol in units of the
    standard deviations (so that features of every scale are held to the same precision)."""
    sd = np.sqrt(np.diagonal(covs, axis1=1, axis2=2).mean(axis=0))
    assert_allclose(got_means / sd, means / sd, rtol=0, atol=rtol, err_msg="means")
    assert_allclose(np.reshape(got_covs, covs.shape) / np.outer(sd, sd),
                    covs / np.outer(sd, sd), rtol=0, atol=rtol, err_msg="covariances")


@pytest.fixture
def em_runs(monkeypatch):
    """Records every EM run of the test: a dict per run with the objective of each SQUAREM
    iterate ("trace", em_full's) and the number of EM-map evaluations ("steps")."""
    runs = []

    def em_map(*args, **kwargs):
        step, *start = real_em_map(*args, **kwargs)

        def counted(*args):
            runs[-1]["steps"] += 1
            return step(*args)

        return counted, *start

    def em_full(*args, **kwargs):
        runs.append({"trace": [], "steps": 0})
        return _gaussian.em_full(*args, **kwargs, trace=runs[-1]["trace"])

    real_em_map = _gaussian._em_map
    monkeypatch.setattr(_gaussian, "_em_map", em_map)
    monkeypatch.setattr(fastgen.discriminant_analysis, "em_full", em_full)
    return runs


def breast_cancer_with_holes(n_features=30):
    """scikit-learn's copy of breast cancer Wisconsin (diagnostic), 30% of the values removed
    completely at random, the first ``n_features`` columns (the first 10: the means)."""
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_breast_cancer(return_X_y=True)
    X = with_holes(X, 0.3, seed=0)[:, :n_features]
    return np.ascontiguousarray(X), y


EM_MODELS = [(LDA, {}), (QDA, {}), (LDA, {"shrinkage": 0.3}), (LDA, {"shrinkage": "auto"}),
             (QDA, {"reg_param": 0.1})]
EM_IDS = ["LDA", "QDA", "LDA-shrink0.3", "LDA-auto", "QDA-reg0.1"]


@pytest.mark.parametrize("Model, params", EM_MODELS, ids=EM_IDS)
@pytest.mark.parametrize("base", [False, True], ids=["fit", "partial_fit"])
@pytest.mark.parametrize("constant", [False, True], ids=["", "constant"])
def test_em_objective_is_the_observed_data_loglik(Model, params, base, constant):
    """_em_map's objective at any parameters is the weighted log-likelihood of the batch's
    observed values plus that of the earlier batches' (complete-data) statistics, brute
    force: scipy.stats on the observed sub-vector of every row, and on every earlier row, on
    the features of the support (a constant feature is left out)."""
    X, y = blobs(90, 4, k=3, seed=5, sep=1.5)
    if constant:
        X[:, 2] = 5.0
    Xh = with_holes(X[:60], 0.3, seed=6, all_nan_row=0)
    w = np.random.default_rng(7).uniform(0.5, 2.0, 90)
    est = Model(**params)
    hyper = est._check_params(3, Xh, None)
    earlier = None
    if base:
        earlier = _gaussian.full_moments(X[60:], Members.hard(y[60:], w[60:], 3), 1,
                                         higher=hyper["higher"])
    step, _, _, support = _gaussian._em_map(
        Xh, Members.hard(y[:60], w[:60], 3), lambda stats: est._covariances(stats, hyper, missing=True),
        earlier, 1, hyper["higher"])
    keep = support.keep
    if not params:  # maximum likelihood: a constant feature is off the support
        assert len(keep) == (3 if constant else 4)
    rng = np.random.default_rng(8)
    means = rng.normal(0.0, 2.0, (3, 4))
    covs = np.array([class_cov(rng.standard_normal((20, 4))) for _ in range(3 if Model is QDA
                                                                            else 1)])
    objective = step(means, covs, support)[4]
    rows = np.vstack([Xh, X[60:]])[:90 if base else 60][:, keep]
    sub = covs[:, keep][:, :, keep]
    jll = full_gaussian_jll(rows, means[:, keep], sub if Model is QDA else sub[0], np.zeros(3))
    want = (w[:len(rows)] * jll[np.arange(len(rows)), y[:len(rows)]]).sum()
    assert_allclose(objective, want, rtol=1e-12)


@pytest.mark.parametrize("Model, params", EM_MODELS, ids=EM_IDS)
@pytest.mark.parametrize("base", [False, True], ids=["fit", "partial_fit"])
def test_em_reaches_the_fixed_point_of_plain_em(Model, params, base):
    """SQUAREM converges to plain EM's fixed point, regularised or not, with or without the
    statistics of an earlier batch: to 1e-8 of each standard deviation."""
    shared = Model is LDA
    X, y = blobs(600, 5, k=3, seed=7, sep=1.5, scale=1.0, shift=3.0, shared=shared)
    Xh = with_holes(X, 0.3, seed=8)
    est = Model(tol=1e-13, max_iter=1000, **params)
    earlier = None
    if base:  # a complete batch first: EM combines its statistics with the completed rows'
        est.partial_fit(X[:200], y[:200], classes=[0, 1, 2])
        earlier = fastgen.discriminant_analysis._full_stats(est._fitted.stats)
    est.partial_fit(Xh[200:], y[200:], classes=[0, 1, 2])
    means, covs, _ = plain_em(Model(**params), Xh[200:], y[200:], 3, earlier)
    assert_same_gaussians(est.means_, est.covariance_, means, covs, 1e-8)


@pytest.mark.parametrize("Model, params", [(LDA, {}), (QDA, {"reg_param": 0.01})],
                         ids=["LDA", "QDA-reg0.01"])
def test_em_breast_cancer_reaches_the_fixed_point_of_plain_em(Model, params):
    """The same on real data with 30% holes (the ten mean features of breast cancer: plain EM
    on all thirty takes some 13,000 iterations to this precision)."""
    X, y = breast_cancer_with_holes(10)
    est = Model(tol=1e-13, max_iter=1000, **params).fit(X, y)
    means, covs, _ = plain_em(Model(**params), X, y, 2)
    assert_same_gaussians(est.means_, est.covariance_, means, covs, 1e-8)


@pytest.mark.parametrize("Model, params, max_steps", [(LDA, {}, 100),
                                                      (QDA, {"reg_param": 0.01}, 50)],
                         ids=["LDA", "QDA-reg0.01"])
def test_em_converges_on_breast_cancer_with_holes(Model, params, max_steps):
    """Breast cancer with 30% holes, the first training fold of a 5-fold split: plain EM took
    300 iterations and warned with LDA, 84 with QDA; SQUAREM converges well within max_iter,
    without a warning."""
    model_selection = pytest.importorskip("sklearn.model_selection")
    X, y = breast_cancer_with_holes()
    train, _ = next(model_selection.StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    with warnings.catch_warnings():
        warnings.simplefilter("error", fastgen.ConvergenceWarning)
        est = Model(**params).fit(X[train], y[train])
    assert est.n_iter_ <= max_steps


def test_em_converges_on_horse_colic(shared_data):
    """Horse colic, 24% of its values missing: plain EM takes 384 iterations (it warned at
    max_iter=300); SQUAREM about 50."""
    X, y = horse_colic(shared_data)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fastgen.ConvergenceWarning)
        est = LDA().fit(X, y)
    assert est.n_iter_ <= 100


def overshoot_problem():
    """Two small correlated classes, 60% of the values missing: plain EM needs some 3,000
    iterations, and SQUAREM extrapolations can lower the log-likelihood."""
    X, y = blobs(300, 4, k=2, seed=3, sep=1.0, cond=100)
    return with_holes(X, 0.6, seed=3), y


@pytest.mark.parametrize("data", ["synthetic", "horse colic"])
def test_em_loglik_never_decreases(data, em_runs, request):
    """Without regularisation the observed-data log-likelihood never decreases from one
    SQUAREM iterate to the next (up to rounding), on data where extrapolations alone would
    lower it; n_iter_ counts the EM-map evaluations, extrapolations included."""
    if data == "synthetic":
        (X, y), Model = overshoot_problem(), QDA
    else:
        (X, y), Model = horse_colic(request.getfixturevalue("shared_data")), LDA
    est = Model().fit(X, y)
    (run,) = em_runs
    trace = np.array(run["trace"])
    assert est.n_iter_ == run["steps"]
    assert 2 * len(trace) - 1 <= run["steps"] <= 3 * len(trace)  # 2 or 3 per iterate
    assert np.all(np.diff(trace) >= -1e-12 * np.abs(trace[1:])), np.diff(trace).min()
    assert trace[-1] > trace[0]


def pd_problem():
    """Three correlated classes sharing a covariance, 40% of the values missing: some
    SQUAREM extrapolations of the covariance are not positive definite."""
    X, y = blobs(200, 6, k=3, seed=5, sep=1.0, cond=300, shared=True)
    return with_holes(X, 0.4, seed=5), y


@pytest.mark.parametrize("params", [{}, {"shrinkage": 0.1}], ids=["ML", "shrink0.1"])
def test_em_extrapolations_that_are_not_positive_definite_are_drawn_back(params, monkeypatch):
    """An extrapolated covariance that is not positive definite is never used (EM on it
    would fail): the fit goes on without an error or a warning to plain EM's fixed point."""
    checked = []

    def positive_definite(*args):
        checked.append(real(*args))
        return checked[-1]

    real = _gaussian._positive_definite
    monkeypatch.setattr(_gaussian, "_positive_definite", positive_definite)
    X, y = pd_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = LDA(tol=1e-13, max_iter=1000, **params).fit(X, y)
    assert not all(checked)
    means, covs, _ = plain_em(LDA(**params), X, y, 3)
    assert_same_gaussians(est.means_, est.covariance_, means, covs, 1e-8)


def test_em_failing_on_an_extrapolation_takes_the_plain_step(monkeypatch):
    """EM that fails on an extrapolated point (the model's covariances raise there, once)
    takes theta_2 instead, and still reaches plain EM's fixed point."""
    X, y = pd_problem()
    est = LDA()
    hyper = est._check_params(3, X, None)
    valid, failed = [], []

    def positive_definite(*args):
        valid.append(real(*args))
        return valid[-1]

    def covariances(stats):
        if valid and valid[-1] and not failed:  # EM on the first valid extrapolation
            failed.append(True)
            raise ValueError("The shared covariance is singular")
        return est._covariances(stats, hyper, missing=True)

    real = _gaussian._positive_definite
    monkeypatch.setattr(_gaussian, "_positive_definite", positive_definite)
    stats, _ = _gaussian.em_full(X, Members.hard(y, np.ones(len(y)), 3), covariances, None, 1000,
                                 1e-13, 1)
    assert failed
    means, covs, _ = plain_em(est, X, y, 3)
    assert_same_gaussians(stats[1], covariances(stats)[0], means, covs, 1e-8)


# ---------------------------------------------------------------------------------------
# both: the fitted state (statistics in model._fitted, parameters derived from them)


@pytest.mark.parametrize("Model", [LDA, QDA], ids=["LDA", "QDA"])
def test_fitted_attributes_are_read_only(Model, shared3):
    X, y, _, _ = shared3
    est = Model().fit(X, y)
    for name in ("means_", "covariance_", "priors_", "class_count_"):
        with pytest.raises(AttributeError, match="fitted attribute"):
            setattr(est, name, getattr(est, name) * 2)
        with pytest.raises(ValueError, match="read-only"):
            getattr(est, name)[0] = 0.0
    with pytest.raises(AttributeError, match="after fit"):
        Model().means_


def test_lda_covariance_kind_is_kept_until_refit(shared3):
    X, y, _, _ = shared3
    est = LDA().fit(X, y)
    full = est.covariance_
    est.set_params(covariance="diagonal")  # the statistics cannot serve it: kept until a fit
    assert_array_equal(est.covariance_, full)
    with pytest.raises(ValueError, match="covariance was changed from 'full' to 'diagonal'"):
        est.partial_fit(X, y)
    assert_allclose(est.fit(X, y).covariance_, np.diag(np.diag(full)), rtol=1e-12)


@pytest.mark.parametrize("Model", [LDA, QDA], ids=["LDA", "QDA"])
def test_n_iter_follows_the_last_batch_with_missing_values(Model, tmp_path):
    X, Xh, y = em_problem(600, shared=Model is LDA)
    est = Model(max_iter=3).partial_fit(X, y, classes=[0, 1, 2])
    assert est.n_iter_ == 1
    with pytest.warns(fastgen.ConvergenceWarning):
        est.partial_fit(Xh, y)
    assert est.n_iter_ == 3
    est.partial_fit(X, y)  # complete: no EM
    assert est.n_iter_ == 3
    est.save(tmp_path / "model")
    assert fastgen.load(tmp_path / "model").n_iter_ == 1  # not kept by model files


FORGERIES = {
    "no weight": lambda s: s["class_count_"].fill(0.0),
    "weight without data": lambda s: s["class_count_"].__setitem__(0, 0.0),
    "asymmetric scatter": lambda s: s["scatter"].__setitem__((0, 0, 1), 1e3),
    "negative variance": lambda s: s["scatter"].__setitem__((1, 2, 2), -1.0),
    "not positive definite": lambda s: s["scatter"].__setitem__(slice(None), -np.eye(4)),
    "mean beyond the data": lambda s: s["mean"].__setitem__((0, 0), 1e200),
    "NaN": lambda s: s["mean"].__setitem__((0, 0), np.nan),
    "missing statistic": lambda s: s.pop("scatter"),
    "unknown statistic": lambda s: s.__setitem__("m2", s["mean"]),
}


@pytest.mark.parametrize("forgery", FORGERIES, ids=list(FORGERIES))
@pytest.mark.parametrize("Model", [LDA, QDA], ids=["LDA", "QDA"])
def test_forged_model_files_are_refused(Model, forgery, shared3, tmp_path):
    """A model file whose checksum is valid but whose statistics no fit can produce is a
    ValueError at load, never a model scoring NaN."""
    from fastgen._persist import write_model

    X, y, _, _ = shared3
    est = Model().fit(X, y)
    exported = est._export(est._fitted)
    stats = {name: value.copy() for name, value in exported["statistics"].items()}
    FORGERIES[forgery](stats)
    write_model(tmp_path / "forged", type(est).__name__, est.get_params(),
                dict(exported, statistics=stats))
    with pytest.raises(ValueError, match="not a valid fastgen model file"):
        fastgen.load(tmp_path / "forged")


@pytest.mark.parametrize("kind", ["diagonal", "spherical"])
def test_lda_forged_diagonal_statistics_are_refused(kind, shared3, tmp_path):
    from fastgen._persist import write_model

    X, y, _, _ = shared3
    est = LDA(kind).fit(X, y)
    exported = est._export(est._fitted)
    for name, index, value in (("observed_count", (0, 0), 1e6), ("observed_count", (0, 1), 0.0),
                               ("m2", (1, 1), -1.0)):
        stats = {k: v.copy() for k, v in exported["statistics"].items()}
        stats[name][index] = value
        write_model(tmp_path / "forged", "LinearDiscriminantAnalysis", est.get_params(),
                    dict(exported, statistics=stats))
        with pytest.raises(ValueError, match="not a valid fastgen model file"):
            fastgen.load(tmp_path / "forged")


@pytest.mark.parametrize("Model", [LDA, QDA], ids=["LDA", "QDA"])
def test_far_rows_with_missing_values_are_never_nan(Model):
    """Rows with missing values far from narrow classes: the Mahalanobis distance of the
    observed part overflows in its intermediate products, not in its value; posteriors are
    normalised, never NaN."""
    rng = np.random.default_rng(0)
    y = np.arange(90) % 3
    mix = np.array([[1, 0.9, 0], [0, 0.5, 0], [0, 0, 1]])
    X = rng.normal(size=(90, 3)) @ mix * 1e-6 + y[:, None]
    est = Model().fit(X, y)
    Xq = np.array([[1e150, np.nan, 0.3], [1e150, -1e150, np.nan], [np.nan, 1e150, -1e150],
                   [1e-3, np.nan, 1e140]])
    assert_normalised(est, Xq)
    assert not np.isnan(est.predict_joint_log_proba(Xq)).any()


# ---------------------------------------------------------------------------------------
# Rank-deficient covariances: constant and collinear features

EPS = np.finfo(np.float64).eps
BOTH = pytest.mark.parametrize("Model", [LDA, QDA], ids=["LDA", "QDA"])


def assert_same_outputs(est, X, ref, X_ref, jll_shift=0.0, rtol=1e-9):
    """est on X answers as ref on X_ref: posteriors, predictions, decision function (LDA),
    and joint log-likelihoods up to ``jll_shift`` (the same for every class)."""
    jll = ref.predict_joint_log_proba(X_ref)
    atol = 1e-12 * np.abs(jll).max()
    assert_allclose(est.predict_joint_log_proba(X), jll + jll_shift, rtol=rtol, atol=atol,
                    err_msg="predict_joint_log_proba")
    for m in ("predict_log_proba", "predict_proba"):
        assert_allclose(getattr(est, m)(X), getattr(ref, m)(X_ref), rtol=rtol, atol=atol,
                        err_msg=m)
    assert_array_equal(est.predict(X), ref.predict(X_ref))
    if isinstance(est, LDA):
        dec = ref.decision_function(X_ref)
        assert_allclose(est.decision_function(X), dec, rtol=rtol,
                        atol=1e-12 * np.abs(dec).max(), err_msg="decision_function")


@pytest.fixture(scope="module")
def digits():
    """scikit-learn's 8x8 digits; pixels 0, 32 and 39 are 0 in every image."""
    X, y = pytest.importorskip("sklearn.datasets").load_digits(return_X_y=True)
    keep = np.flatnonzero(X[:1200].std(axis=0) > 0)
    assert len(keep) == 61
    return X[:1200], y[:1200], X[1200:], y[1200:], keep


@pytest.mark.parametrize("kind", ["full", "diagonal"])
def test_lda_constant_features_are_left_out(kind, digits):
    """A constant feature carries no information: the model is the model without it, every
    output (joint log-likelihoods, rows with missing values in any column, and a value off
    the constant, which the model's support does not see) and every attribute."""
    X, y, Xt, _, keep = digits
    est = LDA(kind).fit(X, y)
    ref = LDA(kind).fit(X[:, keep], y)
    off = Xt[:20].copy()
    off[:, [0, 32, 39]] = 5.0
    for T in (Xt, with_holes(Xt, 0.1, seed=3), off):
        assert_same_outputs(est, T, ref, T[:, keep])
    dropped = np.setdiff1d(np.arange(64), keep)
    assert_array_equal(est.coef_[:, dropped], 0.0)
    assert_allclose(est.coef_[:, keep], ref.coef_, rtol=1e-9, atol=1e-12 * np.abs(ref.coef_).max())
    assert_allclose(est.intercept_, ref.intercept_, rtol=1e-9)
    assert est.scalings_.shape == (64, 61)
    assert_array_equal(est.scalings_[dropped], 0.0)
    assert_allclose(est.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-9)
    T, T_ref = est.transform(Xt), ref.transform(Xt[:, keep])
    assert_allclose(np.abs(T), np.abs(T_ref), rtol=1e-7, atol=1e-9 * np.abs(T_ref).max())


def test_lda_digits_parity_sklearn(digits):
    """On digits (3 constant pixels) fastgen and scikit-learn's svd and lsqr solvers are all
    the maximum-likelihood Gaussian model on the data's support: the same posteriors,
    predictions and explained variance; lsqr's coef_ is the same minimum-norm solution,
    svd's differs from it by one vector common to all classes (it centres the linear form on
    xbar_), which cancels from the posteriors."""
    sk = sk_da()
    X, y, Xt, yt, keep = digits
    fg = LDA().fit(X, y)
    svd = sk.LinearDiscriminantAnalysis(solver="svd").fit(X, y)
    lsqr = sk.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    pinv = np.linalg.pinv(fg.covariance_)
    assert_allclose(fg.coef_, fg.means_ @ pinv, rtol=1e-9, atol=1e-12 * np.abs(fg.coef_).max())
    for Z in (X, Xt):
        for sk_est in (svd, lsqr):
            assert_allclose(fg.predict_proba(Z), sk_est.predict_proba(Z), rtol=1e-9, atol=1e-12)
            assert_array_equal(fg.predict(Z), sk_est.predict(Z))
        dec = lsqr.decision_function(Z)
        assert_allclose(fg.decision_function(Z), dec, rtol=1e-9, atol=1e-12 * np.abs(dec).max())
    scale = np.abs(fg.coef_).max()
    # The constant pixels' coefficients are exactly 0 in the minimum-norm solution. fastgen
    # gives 0; a dense least-squares solve or pseudo-inverse (lsqr's, np.linalg.pinv) leaves
    # rounding noise there, up to ~2e-12 * scale depending on the BLAS kernel the CPU gets, so
    # those columns are held to a tolerance of their own and the others to 1e-12 * scale.
    constant = np.setdiff1d(np.arange(X.shape[1]), keep)
    assert not fg.coef_[:, constant].any()
    assert_allclose(lsqr.coef_[:, constant], 0, atol=1e-10 * scale)
    assert_allclose(fg.coef_[:, keep], lsqr.coef_[:, keep], rtol=1e-9, atol=1e-12 * scale)
    common = fg.coef_ - svd.coef_
    assert_allclose(common[:, constant], 0, atol=1e-10 * scale)
    shift = (pinv @ fg.xbar_)[keep]
    assert_allclose(common[:, keep], np.broadcast_to(shift, (len(common), len(keep))), rtol=1e-9,
                    atol=1e-12 * scale)
    assert_allclose(fg.explained_variance_ratio_, svd.explained_variance_ratio_, rtol=1e-9,
                    atol=1e-15)
    assert fg.score(Xt, yt) == svd.score(Xt, yt) > 0.9


def collinear_problem(seed=5):
    """x3 = x1 - 2 x2 (a plane in R^3, the same for every class); the fit on (x1, x2)."""
    X2, y = blobs(600, 2, k=3, seed=seed, sep=2.0)
    return X2, np.column_stack([X2, X2[:, 0] - 2 * X2[:, 1]]), y


@BOTH
def test_collinear_features_give_the_gaussian_on_their_plane(Model):
    """x3 = x1 - 2 x2: the posteriors are those of the fit on (x1, x2); the joint
    log-likelihood is the density on the plane (pseudo-determinant), which differs from the
    density of (x1, x2) by the area factor of (x1, x2) -> (x1, x2, x1 - 2 x2),
    sqrt(det(A^T A)) = sqrt(6), and is scipy's degenerate density; a row off the plane is
    scored by its orthogonal projection onto it (scipy gives it density 0); coef_ is
    orthogonal to the null direction."""
    X2, X3, y = collinear_problem()
    est, ref = Model().fit(X3[:450], y[:450]), Model().fit(X2[:450], y[:450])
    assert_same_outputs(est, X3[450:], ref, X2[450:], jll_shift=-0.5 * np.log(6.0))
    null = np.array([1.0, -2.0, -1.0]) / np.sqrt(6.0)
    assert_same_outputs(est, X3[450:] + 0.7 * null, ref, X2[450:], jll_shift=-0.5 * np.log(6.0))
    oracle = full_gaussian_jll(X3[450:], est.means_, est.covariance_, np.log(est.priors_),
                               singular=True)
    assert_allclose(est.predict_joint_log_proba(X3[450:]), oracle, rtol=1e-9)
    if Model is LDA:
        assert_allclose(est.coef_ @ null, 0.0, atol=1e-12 * np.abs(est.coef_).max())
        assert est.scalings_.shape == (3, 2)
        assert_allclose(np.abs(est.transform(X3[450:])), np.abs(ref.transform(X2[450:])),
                        rtol=1e-7, atol=1e-9)


@BOTH
def test_constant_feature_with_missing_values_and_em(Model):
    """A constant feature (5, not 0) with missing values in it and elsewhere: EM runs as on
    the data without it (same iterations, same estimates), the constant's missing values
    are the constant, and every output equals the model without it."""
    X, y = blobs(400, 3, k=3, seed=8, sep=2.0, shared=Model is LDA)
    Xc = np.insert(X, 1, 5.0, axis=1)
    keep = [0, 2, 3]
    Xh = with_holes(Xc, 0.15, seed=4, all_nan_row=0)
    est = Model(tol=1e-9).fit(Xh[:300], y[:300])
    ref = Model(tol=1e-9).fit(Xh[:300][:, keep], y[:300])
    assert est.n_iter_ == ref.n_iter_ > 2
    assert_allclose(est.means_[:, keep], ref.means_, rtol=1e-9, atol=1e-12)
    assert_array_equal(est.means_[:, 1], 5.0)
    cov, cov_ref = est.covariance_, ref.covariance_
    index = np.ix_(keep, keep) if Model is LDA else (slice(None),) + np.ix_(keep, keep)
    assert_allclose(cov[index], cov_ref, rtol=1e-9, atol=1e-12)
    assert_array_equal(cov[..., 1, :], 0.0)
    for T in (Xc[300:], Xh[300:]):
        assert_same_outputs(est, T, ref, T[:, keep])
    Xs, _ = est.sample(50, random_state=0)
    assert_array_equal(Xs[:, 1], 5.0)


@BOTH
def test_rank_deficient_model_partial_fit_merge_and_model_file(Model, tmp_path):
    """partial_fit, merge and model files keep a rank-deficient model (a constant feature and
    a collinear one) the same as one fit; samples lie on its support."""
    X2, X3, y = collinear_problem(seed=6)
    X = np.insert(X3, 0, -2.5, axis=1)
    whole = Model().fit(X, y)
    inc = Model()
    for s in np.array_split(np.arange(len(y)), 3):
        inc.partial_fit(X[s], y[s], classes=[0, 1, 2])
    halves = Model().fit(X[:300], y[:300])
    halves.merge(Model().fit(X[300:], y[300:]))
    whole.save(tmp_path / "model")
    for other in (inc, halves, fastgen.load(tmp_path / "model")):
        assert_same_outputs(other, X[:50], whole, X[:50])
    Xs, _ = whole.sample(200, random_state=1)
    assert_array_equal(Xs[:, 0], -2.5)
    assert_allclose(Xs[:, 3], Xs[:, 1] - 2 * Xs[:, 2], atol=1e-12 * np.abs(Xs).max())


@pytest.mark.parametrize("Model, name", [(LDA, "shrinkage"), (QDA, "reg_param")],
                         ids=["LDA", "QDA"])
def test_means_that_differ_along_a_null_direction_raise(Model, name):
    """A feature constant within each class: left out while its class values agree to rounding
    (d eps of their size), and an error naming the regulariser when they differ by more,
    however little (a feature in tiny units is a feature like any other): the classes are then
    degenerate Gaussians on parallel planes."""
    X, y = blobs(300, 2, k=3, seed=9, sep=2.0, shared=True)
    ref = Model().fit(X, y)

    def offset(delta):
        return np.column_stack([X, np.where(y == 0, 1.0, 1.0 + delta)])

    assert_same_outputs(Model().fit(offset(EPS), y), offset(EPS), ref, X)
    with pytest.raises(ValueError, match=f"means differ.*{name}"):
        Model().fit(offset(1e-12), y)


def test_qda_class_constant_feature_needs_reg_param():
    """A feature constant in one class only: that class is singular where the others have
    variance, which leaving out a common direction cannot cure."""
    X, y = blobs(300, 2, k=3, seed=10, sep=2.0)
    noise = np.random.default_rng(10).standard_normal(len(y))
    Xc = np.column_stack([X, np.where(y == 1, 2.0, noise)])
    with pytest.raises(ValueError, match=r"class 1 is not full rank.*reg_param"):
        QDA().fit(Xc, y)
    assert_jll_matches_oracle(QDA(reg_param=0.01).fit(Xc, y), Xc[:20])


@pytest.mark.parametrize("Model, name", [(LDA, "shrinkage"), (QDA, "reg_param")],
                         ids=["LDA", "QDA"])
def test_collinear_features_with_missing_values_raise(Model, name):
    """Rows with missing values on collinear features: the observed part's density is not
    given by sub-matrices of one precision, so they are an error naming the regulariser, in
    predict and in EM (a one-row batch adds no variance to the earlier batches' covariance,
    and its mean moves only along the plane and a fourth, independent feature)."""
    _, X3, y = collinear_problem()
    X = np.column_stack([X3, np.random.default_rng(14).standard_normal(len(y))])
    est = Model().fit(X, y)
    holed = X[:5].copy()
    holed[0, 1] = np.nan
    for method in ("predict", "predict_proba", "predict_joint_log_proba"):
        with pytest.raises(ValueError, match=f"collinear.*{name}"):
            getattr(est, method)(holed)
    if Model is LDA:
        with pytest.raises(ValueError, match=f"collinear.*{name}"):
            est.decision_function(holed)
    oracle = full_gaussian_jll(X[1:5], est.means_, est.covariance_, np.log(est.priors_),
                               singular=True)
    assert_allclose(est.predict_joint_log_proba(X[1:5]), oracle, rtol=1e-9)  # complete rows
    holed[0] = X[0]
    holed[0, 3] = np.nan
    with pytest.raises(ValueError, match=f"collinear.*{name}"):
        est.partial_fit(holed[:1], y[:1])


@BOTH
@pytest.mark.parametrize("scale", [2.0**-30, 2.0**-100, 2.0**60])
def test_rank_does_not_depend_on_units(Model, scale):
    """An informative feature in tiny or huge units (its variance 1e-60 of the others', or
    1e36 times) is a direction like any other: the posteriors are those of the model in the
    original units (a power of two rescales exactly), and the joint log-likelihood moves by
    the log of the Jacobian, -log(scale)."""
    X, y = blobs(300, 3, k=3, seed=11, sep=2.0, shared=True)
    Xs = X * np.array([1.0, 1.0, scale])
    assert_same_outputs(Model().fit(Xs, y), Xs, Model().fit(X, y), X,
                        jll_shift=-np.log(scale))


def test_lda_n_components_at_most_the_rank():
    """Two constant features of three, four classes: one discriminant direction."""
    rng = np.random.default_rng(13)
    y = np.arange(200) % 4
    X = np.column_stack([rng.standard_normal(200) + y, np.full(200, 1.0), np.zeros(200)])
    est = LDA().fit(X, y)
    assert est.transform(X).shape == (200, 1)
    assert_allclose(est.explained_variance_ratio_, [1.0])
    assert est.scalings_.shape == (3, 1)


@BOTH
def test_all_features_constant_gives_the_priors(Model):
    """Nothing varies and the classes agree: no feature carries information, the posteriors
    are the priors."""
    y = np.arange(30) % 3
    est = Model(priors=[0.2, 0.3, 0.5]).fit(np.ones((30, 2)), y)
    assert_allclose(est.predict_proba(np.array([[1.0, 1.0], [7.0, np.nan]])),
                    [[0.2, 0.3, 0.5]] * 2, rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(Model=st.sampled_from([LDA, QDA]), seed=st.integers(0, 2**32 - 1),
       d=st.integers(1, 4), k=st.integers(2, 4), where=st.integers(0, 5),
       constant=st.sampled_from([0.0, -3.5, 1e3]),
       combination=st.lists(st.sampled_from([0.0, 1.0, -2.0, 0.5, 3.0]), min_size=4,
                            max_size=4))
def test_property_rank_deficient_is_the_model_on_a_basis(Model, seed, d, k, where, constant,
                                                         combination):
    """A constant feature inserted anywhere and a linear combination c of the features
    appended: the posteriors are those of the fit on the features alone, and the joint
    log-likelihoods differ by the area factor of x -> (x, c.x), -log(1 + |c|^2) / 2."""
    X, y = blobs(30 * k, d, k=k, seed=seed, sep=2.0, shared=Model is LDA)
    c = np.array(combination[:d])
    Xr = np.insert(np.column_stack([X, X @ c]), min(where, d + 1), constant, axis=1)
    est, ref = Model().fit(Xr, y), Model().fit(X, y)
    assert_same_outputs(est, Xr, ref, X, jll_shift=-0.5 * np.log1p(c @ c))


# ---------------------------------------------------------------------------------------
# Found from outside: huge constants, shrinkage, tiny units, data far from the origin


def _three_classes(seed, n=60):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(n, 3)), np.tile([0, 1, 2], n // 3)
    X[y == 1, 0] += 1.0
    return rng, X, y


@BOTH
@pytest.mark.parametrize("value", [1718035200123456789.0, 1e30, 1e100])
def test_em_with_a_huge_constant_feature_is_em_without_it(Model, value):
    """A constant feature's class means are an ulp or two off its value, so its variance is
    rounding noise of its size (262144 at 1.7e18): EM's stopping test is made on the support,
    where that noise does not dominate the largest entry and stop EM at its starting point."""
    rng, X, y = _three_classes(5)
    X[rng.random(X.shape) < 0.2] = np.nan
    Xt = np.column_stack([X, np.full(len(y), value)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the extrapolation's norm overflowed with a warning)
        a, b = Model().fit(Xt, y), Model().fit(X, y)
    assert a.n_iter_ == b.n_iter_ > 1
    assert_allclose(a.predict_proba(Xt), b.predict_proba(X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("params", [{"shrinkage": 0.0}, {"covariance": "diagonal"},
                                    {"covariance": "diagonal", "shrinkage": 0.0},
                                    {"covariance": "spherical"}])
def test_huge_constant_feature_with_shrinkage_or_spherical(params):
    """Constant features are decided on the data's variances, before shrinkage, so
    shrinkage=0.0 is None; the spherical variance is the mean over the features that vary:
    a constant column at 1e30 gives the model without it (its rounding noise, 4e28 as a
    variance, once counted as information)."""
    _, X, y = _three_classes(0)
    Xt = np.column_stack([X, np.full(len(y), 1e30)])
    assert_allclose(LDA(**params).fit(Xt, y).predict_proba(Xt),
                    LDA(**params).fit(X, y).predict_proba(X), rtol=0, atol=1e-12)


@BOTH
def test_informative_feature_below_min_variance_is_an_error_not_dropped(Model):
    """A feature in units of 1e-60 (variance 1e-120, below what whitening can take) whose class
    means differ by more than its own spread is not left out as constant: an error naming the
    feature and what to do (scikit-learn's svd solver standardises it); with a regulariser
    that gives it a variance the whitening can take, a model."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(80, 2)), np.arange(80) % 2
    X[y == 1, 0] += 2
    with pytest.raises(ValueError, match=r"Feature 0 varies.*below 1e-100.*Rescale X"):
        Model().fit(X * np.array([1e-60, 1.0]), y)
    regularised = Model(**({"shrinkage": 0.5} if Model is LDA else {"reg_param": 0.5}))
    assert np.isfinite(regularised.fit(X * np.array([1e-60, 1.0]), y).predict_proba(X)).all()


@pytest.mark.parametrize("offset", [1e8, -1e12])
def test_lda_posteriors_far_from_the_origin(offset):
    """The posteriors' linear form is taken about xbar_: with data at 1e8 the uncentred one
    cancelled the classes' differences away (0.77 off); now it is as exact as the joint
    log-likelihood and scikit-learn's svd solver on the centred data. Two classes: the
    decision function too."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 3, 60)
    ref = LDA().fit(X, y)
    est = LDA().fit(X + offset, y)
    tol = 1e-15 * abs(offset) * 100
    assert_allclose(est.predict_proba(X + offset), ref.predict_proba(X), rtol=0, atol=tol)
    two = y < 2
    est2, ref2 = LDA().fit(X[two] + offset, y[two]), LDA().fit(X[two], y[two])
    assert_allclose(est2.decision_function(X + offset), ref2.decision_function(X), rtol=0,
                    atol=tol * 10)
    # (the data themselves are rounded to ulp(offset): 1.2e-4 at 1e12)
    assert_allclose(est2.coef_, ref2.coef_, rtol=100 * EPS * abs(offset))


@pytest.mark.parametrize("params", [{"shrinkage": 0.5}, {"shrinkage": "auto"},
                                    {"covariance": "diagonal", "shrinkage": 0.5}])
def test_huge_constant_feature_is_an_exact_constant(params):
    """A constant feature's variance is rounding noise of its size (4e28 at 1e30); it is set to
    0, so that it reaches neither the shrinkage target (trace / d, whose d still counts the
    feature) nor covariance_: a column at 1e30 gives the model of a column of zeros."""
    _, X, y = _three_classes(0)
    Xt, X0 = (np.column_stack([X, np.full(len(y), value)]) for value in (1e30, 0.0))
    est, ref = LDA(**params).fit(Xt, y), LDA(**params).fit(X0, y)
    assert_allclose(est.predict_proba(Xt), ref.predict_proba(X0), rtol=0, atol=1e-12)
    assert_allclose(est.covariance_, ref.covariance_, rtol=1e-12, atol=0)
    assert_allclose(QDA(reg_param=0.1).fit(Xt, y).predict_proba(Xt),
                    QDA(reg_param=0.1).fit(X0, y).predict_proba(X0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("Model, params", [(LDA, {"shrinkage": 0.1}),
                                           (LDA, {"covariance": "diagonal", "shrinkage": 0.1}),
                                           (QDA, {"reg_param": 0.01})])
def test_regularised_feature_constant_within_classes_is_kept(Model, params):
    """A feature constant within each class but not across them is an error unregularised
    (degenerate classes), and a feature like any other once shrinkage or reg_param gives it a
    variance: it separates the classes."""
    _, X, y = _three_classes(1)
    Xt = np.column_stack([X, y.astype(float)])
    with pytest.raises(ValueError, match="means differ"):
        Model().fit(Xt, y)
    est = Model(**params).fit(Xt, y)
    assert_array_equal(est.predict(Xt), y)
    assert_normalised(est, Xt)


def test_covariance_beyond_float64_on_its_support_is_a_clear_error():
    """Features 1e50 apart in scale: the covariance is positive definite on its support but not
    in float64 (its basis's rounding along the 1e100 variance swamps the unit one). A
    ValueError naming the fix, not numpy's LinAlgError (a case hypothesis found in
    test_extreme_magnitudes)."""
    X = np.zeros((8, 3))
    X[1], X[6] = [-1e50, 0, 1], [0, 2.5, 0]
    y = np.array([0, 1] * 4)
    for fit in (lambda m: m.fit(X, y), lambda m: m.partial_fit(X, y, classes=[0, 1])):
        with pytest.raises(ValueError, match="too ill-conditioned for float64.*rescale X"):
            fit(fastgen.LinearDiscriminantAnalysis())


@pytest.mark.parametrize("Model, params", [(fastgen.LinearDiscriminantAnalysis, {}),
                                           (fastgen.QuadraticDiscriminantAnalysis, {}),
                                           (fastgen.LinearDiscriminantAnalysis,
                                            {"covariance": "diagonal"})])
def test_a_class_that_never_observes_a_feature_starts_from_its_overall_mean(Model, params):
    """EM started a class that never observed a feature at mean 0 (variance 1), and no row of
    the class moved it: with the data near 1000, P(class 0) was 0 on class 0's own complete
    rows. It starts, as the diagonal models take it, from the feature's overall mean and
    variance."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3)) + 1000
    y = np.repeat([0, 1], 100)
    X[y == 1, 0] += 1
    holes = X.copy()
    holes[y == 0, 2] = np.nan
    model = Model(**params).fit(holes, y)
    assert np.all(np.abs(model.means_[:, 2] - 1000) < 1)
    proba = model.predict_proba(X[y == 0])[:, 0]  # (the classes overlap: 1 sd apart)
    assert proba.min() > 0.01 and proba.mean() > 0.5 and (model.predict(X) == y).mean() > 0.6


def test_subnormal_sample_weights_are_refused():
    """Weights below the smallest normal float64 keep a few bits: the weighted moments lost
    every digit (log-probabilities off by 7e14 for weights of 5e-324)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    y = np.arange(30) % 2
    for Model in (fastgen.LinearDiscriminantAnalysis, fastgen.GaussianNB):
        with pytest.raises(ValueError, match="subnormal"):
            Model().fit(X, y, sample_weight=np.full(30, 5e-324))
        w = np.full(30, 1e-300)  # normal: the model of the unweighted rows
        w[0] = 0.0
        np.testing.assert_allclose(Model().fit(X, y, sample_weight=w).predict_log_proba(X),
                                   Model().fit(X[1:], y[1:]).predict_log_proba(X), rtol=1e-7,
                                   atol=1e-9)


@pytest.mark.parametrize("Model", [LDA, QDA])
@pytest.mark.parametrize("kind", ["proba", "log_proba", "jll"])
def test_a_row_made_nan_during_scoring_is_the_error_that_x_changed(Model, kind):
    """A NaN written by another thread into a row checked as complete reached the product
    (BLAS) and was normalised into a row of zeros, returned silently (an outside attack found
    hundreds). Scoring such a row now raises that X changed: simulated here by scoring, as
    complete (has_nan=False), a row that holds NaN."""
    from fastgen._base import OUT_JLL, OUT_LOG_PROBA, OUT_PROBA
    from fastgen._core._errors import XChangedError

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 4)), np.arange(60) % 3
    model = Model().fit(X, y)
    params = model._params_of(model._fitted)
    code = {"proba": OUT_PROBA, "log_proba": OUT_LOG_PROBA, "jll": OUT_JLL}[kind]
    changed = X[:5].copy()
    changed[2, 1] = np.nan
    out = np.empty((5, 3))
    with pytest.raises(XChangedError):
        model._score(params, changed, code, out, False)
    model._score(params, X[:5], code, out, False)  # (the rows as checked score)
    assert np.isfinite(out).all()
