"""Parity with scikit-learn's MultinomialNB, BernoulliNB, ComplementNB and
QuadraticDiscriminantAnalysis (GaussianNB, CategoricalNB and LDA are compared in their own
test files).

Where the models coincide, fastgen must give the same statistics, parameters and
posteriors as scikit-learn, to rounding: float64 rtol 1e-9 (with an absolute tolerance
of 1e-12 times the magnitude of the terms summed in a row's joint log-likelihood, as the
two libraries sum in different orders), float32 rtol 1e-5 (fastgen keeps float32
parameters; scikit-learn upcasts to float64). Predictions are identical in float64; in
float32 they may differ only where scikit-learn's top two classes are within rounding.
scikit-learn's QDA estimates each class covariance by maximum likelihood since 1.9, as
fastgen always has, and regularises it the same way, ``(1 - reg_param) S + reg_param I``.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _data import (
    ALL_FORMATS,
    jll_scale,
    newsgroups_counts,
    sms_counts,
    to_format,
    zipf_counts,
)
from _gaussian_data import blobs, mvn_scale
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

import fastgen

sk_nb = pytest.importorskip("sklearn.naive_bayes")

DTYPES = [np.float64, np.float32, np.int64]
DTYPE_IDS = ["float64", "float32", "int64"]


# ---------------------------------------------------------------------------------------
# helpers


def _is32(X):
    return X.dtype == np.float32


def assert_same_model(fg, sk, float32=False):
    assert_array_equal(fg.classes_, sk.classes_)
    assert fg.n_features_in_ == sk.n_features_in_
    names = ["class_count_", "feature_count_"]
    if hasattr(sk, "feature_all_"):
        names.append("feature_all_")
    for name in names:
        a = getattr(fg, name)
        assert a.dtype == np.float64, (name, a.dtype)
        assert a.shape == getattr(sk, name).shape, name
        assert_allclose(a, getattr(sk, name), rtol=1e-12, err_msg=name)
    dtype = np.float32 if float32 else np.float64
    assert fg.class_log_prior_.dtype == dtype
    assert_allclose(
        fg.class_log_prior_, sk.class_log_prior_, rtol=1e-6 if float32 else 1e-12, atol=1e-15,
        err_msg="class_log_prior_",
    )
    flp = fg.feature_log_prob_
    assert flp.dtype == dtype
    assert flp.shape == sk.feature_log_prob_.shape
    if float32:
        assert_allclose(flp, sk.feature_log_prob_, rtol=1e-5, atol=1e-6)
    else:
        assert_allclose(flp, sk.feature_log_prob_, rtol=1e-9, atol=1e-13)


def assert_same_predictions(fg, sk, X, float32=False):
    scale = jll_scale(sk, X)
    if float32:
        rtol, atol, out_dtype = 1e-5, 2e-6 * scale, np.float32
    else:
        rtol, atol, out_dtype = 1e-9, 1e-12 * scale, np.float64
    sk_jll = sk.predict_joint_log_proba(X)
    for method in ("predict_joint_log_proba", "predict_log_proba", "predict_proba"):
        got = getattr(fg, method)(X)
        want = sk_jll if method == "predict_joint_log_proba" else getattr(sk, method)(X)
        assert got.shape == want.shape, method
        assert got.dtype == out_dtype, (method, got.dtype)
        assert np.isfinite(got).all() or not np.isfinite(want).all(), method
        assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=method)
    got, want = fg.predict(X), sk.predict(X)
    # scikit-learn turns object string labels into a str array; fastgen keeps y's dtype
    assert got.dtype == want.dtype or got.dtype == object
    if float32 and sk_jll.shape[1] > 1:
        # only near-ties may be decided differently
        top2 = np.sort(sk_jll, axis=1)[:, -2:]
        near_tie = (top2[:, 1] - top2[:, 0]) <= 4 * atol
        assert_array_equal(got[~near_tie], want[~near_tie])
    else:
        assert_array_equal(got, want)


def fit_both(Estimator, X, y, sample_weight=None, **params):
    SK = getattr(sk_nb, Estimator.__name__)
    fg = Estimator(**params).fit(X, y, sample_weight=sample_weight)
    sk = SK(**params).fit(X, y, sample_weight=sample_weight)
    return fg, sk


def check_parity(Estimator, X_train, y_train, X_test, sample_weight=None, **params):
    f32 = _is32(X_train)
    fg, sk = fit_both(Estimator, X_train, y_train, sample_weight=sample_weight, **params)
    assert_same_model(fg, sk, float32=f32)
    assert_same_predictions(fg, sk, X_test, float32=f32)
    assert_same_predictions(fg, sk, X_train, float32=f32)
    return fg, sk


class BernoulliReference:
    """BernoulliNB evaluated from scikit-learn's statistics with the exact formulas
    log p = log(N_cj + a_j) - log(N_c + 2 a_j), log(1 - p) = log(N_c - N_cj + a_j) -
    log(N_c + 2 a_j). scikit-learn evaluates log(1 - exp(log p)) instead, which loses
    about -log10(1 - p) digits when p is close to 1 (tiny alpha), and it fails outright
    on an alpha array (``class_count_ + alpha * 2`` does not broadcast)."""

    def __init__(self, sk, alpha, binarize=0.0):
        self.classes_ = sk.classes_
        self.binarize = binarize
        self.class_log_prior_ = sk.class_log_prior_
        fc, cc = sk.feature_count_, sk.class_count_[:, None]
        alpha = np.asarray(alpha, dtype=np.float64)
        total = np.log(cc + 2 * alpha)
        self.feature_log_prob_ = np.log(fc + alpha) - total
        self._log_q = np.log(cc - fc + alpha) - total

    def predict_joint_log_proba(self, X):
        if self.binarize is not None:
            X = (X > self.binarize) if sp.issparse(X) else (np.asarray(X) > self.binarize)
        X = sp.csr_matrix(X, dtype=np.float64)
        jll = np.asarray(X @ (self.feature_log_prob_ - self._log_q).T)
        return jll + self._log_q.sum(axis=1) + self.class_log_prior_

    def predict_log_proba(self, X):
        jll = self.predict_joint_log_proba(X)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict_proba(self, X):
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_joint_log_proba(X), axis=1)]


@pytest.fixture(scope="module")
def zipf():
    X, y = zipf_counts(400, 150, n_classes=4, mean_len=30, seed=3)
    return X[:300], y[:300], X[300:], y[300:]


def _binary(X):
    X = X.copy()
    X.data[:] = 1
    return X


# ---------------------------------------------------------------------------------------
# synthetic Zipfian counts: every input format and dtype


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_parity_formats_dtypes(Estimator, fmt, dtype, zipf):
    X, y, Xt, _ = zipf
    check_parity(Estimator, to_format(X, fmt, dtype), y, to_format(Xt, fmt, dtype))


@pytest.mark.parametrize("fmt", ["csc", "coo"])
def test_parity_other_sparse_formats(Estimator, fmt, zipf):
    X, y, Xt, _ = zipf
    check_parity(Estimator, to_format(X, fmt), y, to_format(Xt, fmt))


@pytest.mark.parametrize(
    "params",
    [
        {"alpha": 0.5},
        {"alpha": 1e-3},
        {"alpha": 7.0},
        {"fit_prior": False},
        {"alpha": 0.2, "fit_prior": False},
        {"class_prior": [0.1, 0.2, 0.3, 0.4]},
        {"class_prior": np.array([0.4, 0.3, 0.2, 0.1]), "fit_prior": False},
    ],
    ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()),
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_parity_hyperparameters(Estimator, params, dtype, zipf):
    X, y, Xt, _ = zipf
    check_parity(Estimator, X.astype(dtype), y, Xt.astype(dtype), **params)


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix"])
def test_parity_alpha_array(Estimator, fmt, zipf):
    X, y, Xt, _ = zipf
    X, Xt = to_format(X, fmt), to_format(Xt, fmt)
    alpha = np.random.default_rng(0).uniform(0.01, 3.0, X.shape[1])
    if Estimator is fastgen.BernoulliNB:
        # scikit-learn's BernoulliNB cannot fit an alpha array: compare with its
        # statistics and the exact formulas instead
        fg = Estimator(alpha=alpha).fit(X, y)
        sk = sk_nb.BernoulliNB(alpha=1.0).fit(X, y)
        with pytest.raises(ValueError):
            sk_nb.BernoulliNB(alpha=alpha).fit(X, y)
        ref = BernoulliReference(sk, alpha)
        assert_allclose(fg.feature_count_, sk.feature_count_, rtol=1e-12)
        assert_allclose(fg.feature_log_prob_, ref.feature_log_prob_, rtol=1e-9, atol=1e-13)
        assert_same_predictions(fg, ref, Xt)
    else:
        fg, _ = check_parity(Estimator, X, y, Xt, alpha=alpha)
    # the estimator keeps the parameter it was given
    assert fg.get_params()["alpha"] is alpha


@pytest.mark.parametrize(
    "alpha",
    [0.0, 1e-12, "array"],
    ids=["zero", "1e-12", "array-with-zeros"],
)
def test_parity_force_alpha_false_warns_and_clips(Estimator, alpha, zipf):
    X, y, Xt, _ = zipf
    is_array = isinstance(alpha, str)
    if is_array:
        alpha = np.full(X.shape[1], 0.5)
        alpha[::3] = 0.0
    SK = getattr(sk_nb, Estimator.__name__)
    with pytest.warns(UserWarning, match="alpha"):
        fg = Estimator(alpha=alpha, force_alpha=False).fit(X, y)
    assert np.isfinite(fg.feature_log_prob_).all()
    if Estimator is fastgen.BernoulliNB:
        sk = sk_nb.BernoulliNB(alpha=1.0).fit(X, y)
        clipped = np.maximum(alpha, 1e-10)
        ref = BernoulliReference(sk, clipped)
        assert_allclose(fg.feature_log_prob_, ref.feature_log_prob_, rtol=1e-9, atol=1e-13)
        assert_same_predictions(fg, ref, Xt)
        if not is_array:
            with pytest.warns(UserWarning, match="alpha"):
                sk = SK(alpha=alpha, force_alpha=False).fit(X, y)
            assert_same_model(fg, sk)
            # scikit-learn's log(1 - exp(log p)) is off by ~1e-6 relative here (p ~ 1 -
            # 1e-10/N_c); only that much agreement can be asked of it
            assert_allclose(fg.predict_joint_log_proba(Xt), sk.predict_joint_log_proba(Xt),
                            rtol=1e-5, atol=1e-3)
        return
    with pytest.warns(UserWarning, match="alpha"):
        sk = SK(alpha=alpha, force_alpha=False).fit(X, y)
    assert_same_model(fg, sk)
    assert_same_predictions(fg, sk, Xt)


def test_no_warning_for_ordinary_alpha(Estimator, zipf):
    X, y, _, _ = zipf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Estimator(alpha=1e-3, force_alpha=False).fit(X, y)
        Estimator(alpha=1e-12, force_alpha=True).fit(X, y)


@pytest.mark.parametrize("binarize", [0.0, 0.5, 1.0, 2.5])
@pytest.mark.parametrize("fmt", ["dense", "csr_matrix", "csr_int64"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_parity_bernoulli_binarize(binarize, fmt, dtype, zipf):
    X, y, Xt, _ = zipf
    check_parity(
        fastgen.BernoulliNB, to_format(X, fmt, dtype), y, to_format(Xt, fmt, dtype),
        binarize=binarize,
    )


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix"])
def test_parity_bernoulli_binarize_none(fmt, zipf):
    X, y, Xt, _ = zipf
    # binarize=None uses X as given: binary data, and fractional data in [0, 1]
    check_parity(fastgen.BernoulliNB, to_format(_binary(X), fmt), y,
                 to_format(_binary(Xt), fmt), binarize=None)
    Xf = X.copy()
    Xf.data = np.random.default_rng(1).uniform(0.05, 1.0, Xf.nnz)
    check_parity(fastgen.BernoulliNB, to_format(Xf, fmt), y, to_format(_binary(Xt), fmt),
                 binarize=None)


def test_parity_bernoulli_negative_values():
    # BernoulliNB accepts any real values; binarize maps x <= threshold to 0.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 12))
    y = rng.integers(0, 3, 120)
    for threshold in (0.0, 0.7):
        check_parity(fastgen.BernoulliNB, X, y, X[::-1], binarize=threshold)
        check_parity(fastgen.BernoulliNB, sp.csr_matrix(X), y, sp.csr_matrix(X[::-1]),
                     binarize=threshold)


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("fmt", ["dense", "csr_matrix", "csr_array", "csr_int64"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_parity_complement_norm(norm, fmt, dtype, zipf):
    X, y, Xt, _ = zipf
    check_parity(fastgen.ComplementNB, to_format(X, fmt, dtype), y,
                 to_format(Xt, fmt, dtype), norm=norm)
    check_parity(fastgen.ComplementNB, to_format(X, fmt, dtype), y,
                 to_format(Xt, fmt, dtype), norm=norm, alpha=0.3, fit_prior=False)


def test_parity_string_labels(Estimator, zipf):
    X, y, Xt, _ = zipf
    names = np.array(["sport", "arts", "zoology", "Business"])  # not in sorted order
    fg, sk = check_parity(Estimator, X, names[y], Xt)
    assert_array_equal(fg.classes_, ["Business", "arts", "sport", "zoology"])
    assert fg.predict(Xt).dtype == names.dtype
    assert fg.score(Xt, names[zipf[3]]) == sk.score(Xt, names[zipf[3]])


def test_parity_object_labels(Estimator, zipf):
    X, y, Xt, _ = zipf
    names = np.array(["b", "a", "d", "c"], dtype=object)
    fg, sk = check_parity(Estimator, X, names[y], Xt)
    assert list(fg.classes_) == ["a", "b", "c", "d"]


def test_parity_two_classes_and_one_class(Estimator, zipf):
    X, y, Xt, _ = zipf
    check_parity(Estimator, X, (y == 1).astype(int), Xt)
    # a single class: every posterior is 1
    fg, _ = check_parity(Estimator, X, np.full(X.shape[0], 7), Xt)
    assert_array_equal(fg.predict_proba(Xt), 1.0)


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix"])
def test_parity_sample_weight(Estimator, fmt, zipf):
    X, y, Xt, _ = zipf
    w = np.random.default_rng(5).uniform(0.0, 3.0, X.shape[0])
    w[::7] = 0.0
    check_parity(Estimator, to_format(X, fmt), y, to_format(Xt, fmt), sample_weight=w)
    w32 = w.astype(np.float32)
    check_parity(Estimator, to_format(X, fmt, np.float32), y, to_format(Xt, fmt, np.float32),
                 sample_weight=w32, alpha=0.5)


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix", "csr_int64"])
@pytest.mark.parametrize("weighted", [False, True])
def test_parity_partial_fit_chunks(Estimator, fmt, weighted, zipf):
    X, y, Xt, _ = zipf
    X = to_format(X, fmt)
    w = np.random.default_rng(2).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    SK = getattr(sk_nb, Estimator.__name__)
    fg, sk = Estimator(alpha=0.7), SK(alpha=0.7)
    bounds = [0, 17, 90, 91, 300]
    classes = np.unique(y)
    for a, b in zip(bounds[:-1], bounds[1:]):
        kw = {} if w is None else {"sample_weight": w[a:b]}
        fg.partial_fit(X[a:b], y[a:b], classes=classes if a == 0 else None, **kw)
        sk.partial_fit(X[a:b], y[a:b], classes=classes if a == 0 else None, **kw)
        assert_same_model(fg, sk)
    assert_same_predictions(fg, sk, to_format(Xt, fmt))


# ---------------------------------------------------------------------------------------
# real corpora


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_parity_sms_spam(Estimator, dtype):
    X, Xt, y, yt = sms_counts()
    X, Xt = X.astype(dtype), Xt.astype(dtype)
    fg, sk = check_parity(Estimator, X, y, Xt)
    assert fg.score(Xt, yt) == sk.score(Xt, yt)
    assert fg.score(Xt, yt) > 0.93


def test_parity_sms_spam_int_counts_csr_array(Estimator):
    X, Xt, y, _ = sms_counts()
    assert X.dtype.kind == "i"
    check_parity(Estimator, to_format(X, "csr_int64"), y, to_format(Xt, "csr_int64"))
    check_parity(Estimator, to_format(X, "csr_array"), y, to_format(Xt, "csr_array"),
                 alpha=0.1, fit_prior=False)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_parity_newsgroups_slice(Estimator, dtype, shared_data):
    X, Xt, y, yt = newsgroups_counts(shared_data, 2000, 1000)
    X, Xt = X.astype(dtype), Xt.astype(dtype)
    params = {"alpha": 0.05}
    fg, sk = check_parity(Estimator, X, y, Xt, **params)
    assert len(fg.classes_) == 20
    # 20 classes: the slice is still learnable
    assert fg.score(Xt, yt) > 0.5


def test_parity_newsgroups_slice_partial_fit(Estimator, shared_data):
    X, Xt, y, _ = newsgroups_counts(shared_data, 2000, 1000)
    SK = getattr(sk_nb, Estimator.__name__)
    fg, sk = Estimator(alpha=0.1), SK(alpha=0.1)
    classes = np.unique(y)
    for start in range(0, X.shape[0], 700):
        fg.partial_fit(X[start:start + 700], y[start:start + 700], classes=classes)
        sk.partial_fit(X[start:start + 700], y[start:start + 700], classes=classes)
    assert_same_model(fg, sk)
    assert_same_predictions(fg, sk, Xt)


def test_parity_newsgroups_full(shared_data):
    """The whole 20 newsgroups bydate split (11,314 + 7,532 documents, ~130k words)."""
    X, Xt, y, yt = newsgroups_counts(shared_data, None, None)
    assert X.shape[0] == 11314 and Xt.shape[0] == 7532
    for Estimator in (fastgen.MultinomialNB, fastgen.BernoulliNB, fastgen.ComplementNB):
        fg, sk = fit_both(Estimator, X, y, alpha=0.01)
        assert_same_model(fg, sk)
        assert_same_predictions(fg, sk, Xt)
        acc = fg.score(Xt, yt)
        assert acc == sk.score(Xt, yt)
        assert acc > 0.5


# ---------------------------------------------------------------------------------------
# QuadraticDiscriminantAnalysis


@pytest.mark.parametrize("priors", [None, "given"])
@pytest.mark.parametrize("reg_param", [0.0, 0.05, 0.5])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_parity_qda(n_classes, reg_param, priors, global_random_seed):
    sk_da = pytest.importorskip("sklearn.discriminant_analysis")
    X, y = blobs(400, 5, k=n_classes, seed=global_random_seed, sep=1.2, scale=2.0, shift=3.0)
    Xtr, ytr, Xte = X[:300], y[:300], X[300:]
    if priors == "given":
        priors = np.linspace(1.0, 2.0, n_classes) / np.linspace(1.0, 2.0, n_classes).sum()
    fg = fastgen.QuadraticDiscriminantAnalysis(reg_param=reg_param, priors=priors).fit(Xtr, ytr)
    sk = sk_da.QuadraticDiscriminantAnalysis(reg_param=reg_param, priors=priors,
                                             store_covariance=True).fit(Xtr, ytr)
    assert_array_equal(fg.classes_, sk.classes_)
    assert_allclose(fg.priors_, sk.priors_, rtol=1e-15)
    assert_allclose(fg.means_, sk.means_, rtol=1e-12)
    covs = np.asarray(sk.covariance_)
    assert_allclose(fg.covariance_, covs, rtol=1e-9, atol=1e-12 * np.abs(covs).max())
    for Xe in (Xte, Xtr):
        atol = 1e-12 * mvn_scale(Xe, sk.means_, covs, np.log(sk.priors_))
        for method in ("predict_log_proba", "predict_proba"):
            assert_allclose(getattr(fg, method)(Xe), getattr(sk, method)(Xe), rtol=1e-9,
                            atol=atol, err_msg=method)
        if n_classes == 2:  # the log-odds in both
            assert_allclose(fg.decision_function(Xe), sk.decision_function(Xe), rtol=1e-9,
                            atol=atol)
        else:  # scikit-learn's scores are the jll without its constant -d log(2 pi) / 2
            assert_allclose(fg.predict_joint_log_proba(Xe),
                            sk.decision_function(Xe) - 0.5 * X.shape[1] * np.log(2 * np.pi),
                            rtol=1e-9, atol=atol)
        assert_array_equal(fg.predict(Xe), sk.predict(Xe))
