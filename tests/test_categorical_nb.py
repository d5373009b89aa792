"""CategoricalNB (issue 4).

Compared with scikit-learn's CategoricalNB on complete data (fitted attributes and scores to
1e-9), and with the brute-force oracle of ``_reference.py`` where scikit-learn has no
counterpart: missing values (NaN in float input, negative codes in integer input) are
skipped when counting and marginalised when predicting, and unknown categories are an error
or (handle_unknown="ignore") marginalised.
"""

import pickle
import warnings

import numpy as np
import pytest
from _gaussian_data import METHODS, assert_normalised
from _reference import categorical_counts, categorical_nb_jll, log_posterior
from numpy.testing import assert_allclose, assert_array_equal

import fastgen

RTOL, ATOL = 1e-9, 1e-10

# ---------------------------------------------------------------------------------------
# helpers


def sk_categorical_nb():
    return pytest.importorskip("sklearn.naive_bayes").CategoricalNB


def cat_codes(n, n_categories=(3, 5, 2, 4), k=3, seed=0, concentration=0.7):
    """Category codes (int64 (n, d)) drawn per class from random category probabilities
    (Dirichlet), labels cycling through 0..k-1 before shuffling. Every category of every
    feature occurs at least once, so the largest code of feature j is n_categories[j] - 1."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rng.shuffle(y)
    X = np.empty((n, len(n_categories)), dtype=np.int64)
    for j, K in enumerate(n_categories):
        P = rng.dirichlet(np.full(K, concentration), size=k)
        u = rng.random(n)[:, None]
        X[:, j] = np.minimum((u > np.cumsum(P[y], axis=1)).sum(axis=1), K - 1)
        X[:K, j] = np.arange(K)  # every category occurs
    return X, y


def with_missing(X, frac, seed=0, all_missing_row=None):
    """(float copy with NaN, int64 copy with -1) at the same random positions."""
    rng = np.random.default_rng(seed)
    miss = rng.random(X.shape) < frac
    if all_missing_row is not None:
        miss[all_missing_row] = True
    Xf = np.asarray(X, dtype=np.float64).copy()
    Xf[miss] = np.nan
    Xi = np.asarray(X, dtype=np.int64).copy()
    Xi[miss] = -1
    return Xf, Xi


def log_prior_of(est):
    return np.asarray(est.class_log_prior_, dtype=np.float64)


def assert_matches_oracle(est, X, skip_unknown=False, rtol=RTOL, atol=ATOL):
    """All scoring methods and predict equal the brute-force oracle built from the model's
    own feature_log_prob_ and class_log_prior_."""
    jll = categorical_nb_jll(X, est.feature_log_prob_, log_prior_of(est), skip_unknown)
    assert_allclose(est.predict_joint_log_proba(X), jll, rtol=rtol, atol=atol)
    lp = log_posterior(jll)
    assert_allclose(est.predict_log_proba(X), lp, rtol=rtol, atol=atol)
    assert_allclose(est.predict_proba(X), np.exp(lp), rtol=rtol, atol=atol)
    assert_array_equal(est.predict(X), est.classes_[np.argmax(jll, axis=1)])


def assert_same_model(a, b, rtol=RTOL, atol=0.0):
    """Equal classes, counts, priors and per-feature tables."""
    assert_array_equal(a.classes_, b.classes_)
    assert_array_equal(a.n_categories_, b.n_categories_)
    assert_allclose(a.class_count_, b.class_count_, rtol=rtol, atol=atol)
    assert_allclose(a.class_log_prior_, b.class_log_prior_, rtol=rtol, atol=atol)
    assert len(a.category_count_) == len(b.category_count_)
    for j, (ca, cb) in enumerate(zip(a.category_count_, b.category_count_)):
        assert_allclose(ca, cb, rtol=rtol, atol=atol, err_msg=f"category_count_[{j}]")
    for j, (fa, fb) in enumerate(zip(a.feature_log_prob_, b.feature_log_prob_)):
        assert_allclose(fa, fb, rtol=rtol, atol=atol, err_msg=f"feature_log_prob_[{j}]")


def assert_same_scores(a, Xa, b, Xb, rtol=RTOL, atol=ATOL):
    for m in METHODS:
        assert_allclose(getattr(a, m)(Xa), getattr(b, m)(Xb), rtol=rtol, atol=atol, err_msg=m)
    assert_array_equal(a.predict(Xa), b.predict(Xb))


@pytest.fixture(scope="module")
def data():
    X, y = cat_codes(400, seed=11)
    return X[:300], y[:300], X[300:], y[300:]


# ---------------------------------------------------------------------------------------
# parity with scikit-learn on complete data

PARAMS = [
    {},
    {"alpha": 0.5},
    {"alpha": 2.5},
    {"alpha": 1e-12, "force_alpha": False},
    {"alpha": 1e-12, "force_alpha": True},
    {"fit_prior": False},
    {"class_prior": [0.2, 0.5, 0.3]},
    {"min_categories": 7},
    {"min_categories": np.array([5, 1, 6, 4])},
]
PARAM_IDS = ["default", "alpha0.5", "alpha2.5", "tiny-alpha-raised", "tiny-alpha-forced",
             "uniform-prior", "class_prior", "min_categories-int", "min_categories-array"]


def fit_both(params, X, y, **fit_kw):
    """fastgen and scikit-learn CategoricalNB with the same parameters and data; the
    'alpha too small' warning (when force_alpha=False) must come from both."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fg = fastgen.CategoricalNB(**params).fit(X, y, **fit_kw)
    fg_warned = any("alpha too small" in str(w.message) for w in rec)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        sk = sk_categorical_nb()(**params).fit(X, y, **fit_kw)
    sk_warned = any("alpha too small" in str(w.message) for w in rec)
    assert fg_warned == sk_warned
    return fg, sk


def assert_parity(fg, sk, X_eval, rtol=RTOL, atol=ATOL):
    assert_array_equal(fg.classes_, sk.classes_)
    assert fg.n_features_in_ == sk.n_features_in_
    assert_array_equal(fg.n_categories_, sk.n_categories_)
    assert_allclose(fg.class_count_, sk.class_count_, rtol=1e-12)
    assert_allclose(fg.class_log_prior_, sk.class_log_prior_, rtol=rtol, atol=atol)
    assert len(fg.feature_log_prob_) == len(sk.feature_log_prob_)
    for j in range(len(sk.feature_log_prob_)):
        assert_allclose(fg.category_count_[j], sk.category_count_[j], rtol=1e-12,
                        err_msg=f"category_count_[{j}]")
        assert_allclose(fg.feature_log_prob_[j], sk.feature_log_prob_[j], rtol=rtol,
                        atol=atol, err_msg=f"feature_log_prob_[{j}]")
    for Xe in X_eval:
        for m in METHODS:
            assert_allclose(getattr(fg, m)(Xe), getattr(sk, m)(Xe), rtol=rtol, atol=atol,
                            err_msg=m)
        assert_array_equal(fg.predict(Xe), sk.predict(Xe))


@pytest.mark.parametrize("params", PARAMS, ids=PARAM_IDS)
def test_parity_sklearn(data, params):
    X, y, Xt, _ = data
    fg, sk = fit_both(params, X, y)
    assert_parity(fg, sk, [X, Xt])
    if "min_categories" in params:
        assert_array_equal(fg.n_categories_,
                           np.maximum(X.max(axis=0) + 1, params["min_categories"]))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.float32],
                         ids=["int32", "int64", "float64", "float32"])
def test_parity_sklearn_code_dtypes(data, dtype, global_random_seed):
    X, y = cat_codes(300, n_categories=(4, 2, 6, 3, 5), seed=global_random_seed)
    X = X.astype(dtype)
    fg = fastgen.CategoricalNB(alpha=0.8).fit(X[:200], y[:200])
    sk = sk_categorical_nb()(alpha=0.8).fit(X[:200].astype(np.int64), y[:200])
    f32 = dtype == np.float32
    rtol, atol = (1e-5, 1e-5) if f32 else (RTOL, ATOL)
    assert_array_equal(fg.n_categories_, sk.n_categories_)
    for j in range(X.shape[1]):
        assert_allclose(fg.category_count_[j], sk.category_count_[j], rtol=1e-12)
        assert_allclose(fg.feature_log_prob_[j], sk.feature_log_prob_[j], rtol=rtol, atol=atol)
    Xt = X[200:]
    for m in METHODS:
        got = getattr(fg, m)(Xt)
        if f32:
            assert got.dtype == np.float32, (m, got.dtype)
        assert_allclose(got, getattr(sk, m)(Xt.astype(np.int64)), rtol=rtol, atol=atol,
                        err_msg=m)
    if not f32:
        assert_array_equal(fg.predict(Xt), sk.predict(Xt.astype(np.int64)))


def test_parity_sklearn_sample_weight(data):
    X, y, Xt, _ = data
    w = np.random.default_rng(3).uniform(0.1, 3.0, len(y))
    fg, sk = fit_both({"alpha": 0.7}, X, y, sample_weight=w)
    assert_parity(fg, sk, [Xt])
    # integer weights equal repeated rows
    reps = np.random.default_rng(4).integers(0, 4, len(y))
    wfit = fastgen.CategoricalNB().fit(X, y, sample_weight=reps.astype(float))
    rfit = fastgen.CategoricalNB().fit(np.repeat(X, reps, axis=0), np.repeat(y, reps))
    assert_same_model(wfit, rfit, rtol=1e-12)
    assert_same_scores(wfit, Xt, rfit, Xt)


def test_parity_sklearn_string_labels(data):
    X, y, Xt, _ = data
    names = np.array(["spam", "ham", "eggs"])
    labels = names[y]
    fg, sk = fit_both({}, X, labels)
    assert_array_equal(fg.classes_, ["eggs", "ham", "spam"])
    assert_parity(fg, sk, [Xt])
    assert fg.predict(Xt).dtype == labels.dtype
    # the same model as integer labels, up to the order of the classes
    fi = fastgen.CategoricalNB().fit(X, y)
    order = np.searchsorted(names[np.argsort(names)], names)  # int label -> string column
    assert_allclose(fg.predict_proba(Xt)[:, order], fi.predict_proba(Xt), rtol=1e-12)


def test_alpha_zero_matches_sklearn_tables(data):
    """force_alpha=True keeps alpha=0: unseen (class, category) pairs get log 0 = -inf."""
    X, y, _, _ = data
    X = X.copy()
    X[y == 0, 1] = 0  # class 0 never has categories 1.. of feature 1
    fg, sk = fit_both({"alpha": 0.0, "force_alpha": True}, X, y)
    assert np.isneginf(fg.feature_log_prob_[1][0, 1:]).all()
    for j in range(X.shape[1]):
        assert_allclose(fg.feature_log_prob_[j], sk.feature_log_prob_[j], rtol=RTOL)
    rows = X[y != 0][:20]  # not class 0: class 0 scores -inf
    assert np.isneginf(fg.predict_joint_log_proba(rows)[:, 0]).any()
    assert_allclose(fg.predict_joint_log_proba(rows), sk.predict_joint_log_proba(rows),
                    rtol=RTOL)


def test_alpha_zero_feature_a_class_never_observed_tells_nothing():
    """alpha=0 and no observed value of a feature in a class whose other features were
    observed (all its values missing) is 0/0: the feature is marginalised for that class, with
    no NaN and no warning (hypothesis found the RuntimeWarning). A class announced to
    partial_fit but not seen yet has no distribution at all: it produces nothing (P(x, c) = 0,
    as in MultinomialNB), even under a fixed prior, where P(x | c) = 1 would win every row."""
    X = np.array([[2.0, 0.0, 2.0], [0.0, 1.0, 1.0], [1.0, 1.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fit_prior in (True, False):
            est = fastgen.CategoricalNB(alpha=0.0, fit_prior=fit_prior).partial_fit(
                X[:2], [0, 1], classes=[0, 1, 2])
            assert_array_equal(est.feature_log_prob_[0][2], -np.inf)  # class 2: no samples
            assert_array_equal(est.predict_proba(X[:2])[:, 2], 0.0)  # (X[2]: 0 in every class)
            assert_array_equal(est.predict(X[:2]), [0, 1])
            with pytest.raises(ValueError, match="no distribution"):
                est.sample(1, y=[2])
        # with smoothing the class has one: its prior's, uniform over the categories
        est = fastgen.CategoricalNB(alpha=1.0, fit_prior=False).partial_fit(
            X[:2], [0, 1], classes=[0, 1, 2])
        assert_allclose(est.feature_log_prob_[0][2], np.log([1 / 3, 1 / 3, 1 / 3]))
        est.partial_fit(X[2:], [2])
        assert_array_equal(est.predict(X), [0, 1, 2])
        # class 0 never observed feature 1: only feature 0 speaks for it
        est = fastgen.CategoricalNB(alpha=0.0).fit(np.array([[0.0, np.nan], [1.0, 1.0]]), [0, 1])
        assert_array_equal(est.feature_log_prob_[1][0], 0.0)
        assert_allclose(est.predict_proba([[0, 1], [0, 0]]), [[1.0, 0.0], [1.0, 0.0]])


# ---------------------------------------------------------------------------------------
# missing values


@pytest.mark.parametrize("kind", ["nan", "negative"])
def test_missing_predict_equals_oracle(data, kind):
    X, y, Xt, _ = data
    est = fastgen.CategoricalNB(alpha=0.6).fit(X, y)
    Xf, Xi = with_missing(Xt, 0.3, seed=2, all_missing_row=0)
    Xm = Xf if kind == "nan" else Xi
    assert_matches_oracle(est, Xm)
    assert_normalised(est, Xm)
    # float NaN and integer -1 are the same missing value
    assert_same_scores(est, Xf, est, Xi, rtol=0, atol=0)


def test_missing_codes_other_negative_values(data):
    X, y, Xt, _ = data
    est = fastgen.CategoricalNB().fit(X, y)
    _, Xi = with_missing(Xt, 0.3, seed=3)
    Xo = Xi.copy()
    Xo[Xi < 0] = np.random.default_rng(0).choice([-1, -2, -1000], (Xi < 0).sum())
    assert_same_scores(est, Xo, est, Xi, rtol=0, atol=0)
    assert_same_scores(est, Xo.astype(np.int32), est, Xi, rtol=0, atol=0)


@pytest.mark.parametrize("column", [0, 2])
def test_missing_column_equals_column_dropped(data, column):
    X, y, Xt, _ = data
    keep = [j for j in range(X.shape[1]) if j != column]
    full = fastgen.CategoricalNB(alpha=0.5).fit(X, y)
    dropped = fastgen.CategoricalNB(alpha=0.5).fit(X[:, keep], y)
    Xn = Xt.astype(np.float64)
    Xn[:, column] = np.nan
    assert_same_scores(full, Xn, dropped, Xt[:, keep])
    Xi = Xt.copy()
    Xi[:, column] = -1
    assert_same_scores(full, Xi, dropped, Xt[:, keep])
    # and the same row by row when only some rows miss the feature
    half = Xt.astype(np.float64)
    half[::2, column] = np.nan
    jll = full.predict_joint_log_proba(half)
    assert_allclose(jll[::2], dropped.predict_joint_log_proba(Xt[::2][:, keep]), rtol=RTOL,
                    atol=ATOL)
    assert_allclose(jll[1::2], full.predict_joint_log_proba(Xt[1::2]), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("kind", ["nan", "negative"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_fit_skips_missing(data, kind, weighted):
    X, y, Xt, _ = data
    Xf, Xi = with_missing(X, 0.25, seed=5)
    Xm = Xf if kind == "nan" else Xi
    w = np.random.default_rng(6).uniform(0.2, 2.0, len(y)) if weighted else None
    alpha = 0.4
    est = fastgen.CategoricalNB(alpha=alpha).fit(Xm, y, sample_weight=w)
    ww = np.ones(len(y)) if w is None else w
    assert_allclose(est.class_count_, np.bincount(y, weights=ww), rtol=1e-12)
    assert_allclose(est.class_log_prior_, np.log(np.bincount(y, weights=ww) / ww.sum()),
                    rtol=1e-12)
    # the largest observed code defines K_j
    obs_max = np.array([Xi[:, j][Xi[:, j] >= 0].max() for j in range(X.shape[1])]) + 1
    assert_array_equal(est.n_categories_, obs_max)
    counts = categorical_counts(Xm, y, 3, est.n_categories_, w)
    for j, count in enumerate(counts):
        assert_allclose(est.category_count_[j], count, rtol=1e-12, atol=1e-12)
        # (N_cjk + alpha) / (N_cj + alpha K_j), N_cj the observed weight of class c
        want = np.log((count + alpha) / (count.sum(axis=1, keepdims=True)
                                         + alpha * count.shape[1]))
        assert_allclose(est.feature_log_prob_[j], want, rtol=1e-12, atol=1e-12)
    # each feature's table equals scikit-learn's fitted on the rows where it is observed
    sk = sk_categorical_nb()
    for j in range(X.shape[1]):
        seen = Xi[:, j] >= 0
        one = sk(alpha=alpha, min_categories=int(est.n_categories_[j])).fit(
            Xi[seen, j:j + 1], y[seen], sample_weight=None if w is None else w[seen])
        assert_allclose(est.feature_log_prob_[j], one.feature_log_prob_[0], rtol=RTOL,
                        atol=ATOL)
    Xth, _ = with_missing(Xt, 0.2, seed=7, all_missing_row=1)
    assert_matches_oracle(est, Xth)


@pytest.mark.parametrize("params", [{}, {"class_prior": [0.5, 0.3, 0.2]}, {"fit_prior": False}],
                         ids=["fitted", "given", "uniform"])
def test_all_missing_row_gets_prior(data, params):
    X, y, _, _ = data
    est = fastgen.CategoricalNB(**params).fit(X, y)
    rows = np.full((2, X.shape[1]), np.nan)
    want = np.broadcast_to(est.class_log_prior_, (2, 3))
    if "class_prior" in params:
        assert_allclose(est.class_log_prior_, np.log(params["class_prior"]), rtol=1e-12)
    if "fit_prior" in params:
        assert_allclose(est.class_log_prior_, -np.log(3), rtol=1e-12)
    for R in (rows, np.full((2, X.shape[1]), -1, dtype=np.int64)):
        assert_allclose(est.predict_joint_log_proba(R), want, rtol=1e-12)
        assert_allclose(est.predict_log_proba(R), want, rtol=1e-12, atol=1e-15)
        assert_allclose(est.predict_proba(R), np.exp(want), rtol=1e-12)


def test_all_missing_column_at_fit(data):
    """A feature never observed in training has no category; every row marginalises it."""
    X, y, Xt, _ = data
    Xn = X.astype(np.float64)
    Xn[:, 1] = np.nan
    est = fastgen.CategoricalNB(min_categories=np.array([0, 3, 0, 0])).fit(Xn, y)
    assert est.n_categories_[1] == 3
    assert_allclose(est.category_count_[1], 0.0)
    assert_allclose(est.feature_log_prob_[1], -np.log(3), rtol=1e-12)
    keep = [0, 2, 3]
    ref = fastgen.CategoricalNB().fit(X[:, keep], y)
    Xtn = Xt.astype(np.float64)
    Xtn[:, 1] = np.nan
    assert_same_scores(est, Xtn, ref, Xt[:, keep])


# ---------------------------------------------------------------------------------------
# unknown categories and bad codes


def unknown_rows(Xt, n_categories, seed=0):
    """A float copy of Xt with codes beyond the training categories in some cells, and the
    mask of those cells."""
    rng = np.random.default_rng(seed)
    Xu = Xt.astype(np.float64)
    mask = rng.random(Xt.shape) < 0.15
    mask[0, 2] = True
    extra = rng.integers(0, 4, Xt.shape)
    Xu[mask] = (np.asarray(n_categories)[None, :] + extra)[mask]
    return Xu, mask


def test_unknown_error_names_feature(data):
    X, y, Xt, _ = data
    est = fastgen.CategoricalNB().fit(X, y)
    bad = Xt[:5].copy()
    bad[3, 2] = est.n_categories_[2]  # first code beyond feature 2's categories
    for B in (bad, bad.astype(np.float64), bad.astype(np.int32)):
        for m in METHODS + ("predict",):
            with pytest.raises(ValueError, match=r"[Ff]eature 2\b"):
                getattr(est, m)(B)
    # min_categories reserves codes: no error for them
    wide = fastgen.CategoricalNB(min_categories=10).fit(X, y)
    wide.predict(bad)
    bad[1, 0] = 99
    with pytest.raises(ValueError, match=r"[Ff]eature 0\b"):
        est.predict(bad)
    with pytest.raises(ValueError, match=r"[Ff]eature 0\b"):
        wide.predict(bad)


def test_unknown_ignore_equals_marginalised(data):
    X, y, Xt, _ = data
    est = fastgen.CategoricalNB(handle_unknown="ignore").fit(X, y)
    Xu, mask = unknown_rows(Xt, est.n_categories_, seed=1)
    Xnan = Xu.copy()
    Xnan[mask] = np.nan
    assert_same_scores(est, Xu, est, Xnan, rtol=0, atol=0)
    assert_matches_oracle(est, Xu, skip_unknown=True)
    assert_same_scores(est, Xu.astype(np.int64), est, Xnan)
    # the same model with handle_unknown="error" gives the same scores on known codes
    err = fastgen.CategoricalNB().fit(X, y)
    assert_same_scores(est, Xt, err, Xt, rtol=0, atol=0)
    with pytest.raises(ValueError):
        err.predict(Xu)


@pytest.mark.parametrize("where", ["fit", "predict", "partial_fit"])
def test_fractional_codes_raise(data, where):
    X, y, Xt, _ = data
    bad = X.astype(np.float64)
    bad[7, 1] = 1.5
    if where == "fit":
        with pytest.raises(ValueError, match="fractional"):
            fastgen.CategoricalNB().fit(bad, y)
        return
    est = fastgen.CategoricalNB().fit(X, y)
    before = [c.copy() for c in est.category_count_]
    if where == "predict":
        for m in METHODS + ("predict",):
            with pytest.raises(ValueError, match="fractional"):
                getattr(est, m)(bad)
        with pytest.raises(ValueError, match="fractional"):
            fastgen.CategoricalNB(handle_unknown="ignore").fit(X, y).predict(bad)
    else:
        with pytest.raises(ValueError, match="fractional"):
            est.partial_fit(bad, y)
        for a, b in zip(est.category_count_, before):  # a rejected batch changes nothing
            assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, 0.5, -0.5])
def test_non_integer_values_raise_at_fit(data, bad):
    X, y, _, _ = data
    Xb = X.astype(np.float64)
    Xb[0, 0] = bad
    with pytest.raises(ValueError):
        fastgen.CategoricalNB().fit(Xb, y)


@pytest.mark.parametrize(
    "params",
    [{"alpha": -1.0}, {"alpha": np.inf}, {"alpha": "1"}, {"handle_unknown": "skip"},
     {"min_categories": -1}, {"min_categories": 2.5}, {"min_categories": [3, 3]},
     {"class_prior": [0.5, 0.5]}, {"class_prior": [0.6, 0.6, -0.2]}],
    ids=["alpha-neg", "alpha-inf", "alpha-str", "handle_unknown", "min_cat-neg",
         "min_cat-float", "min_cat-length", "prior-length", "prior-negative"],
)
def test_bad_parameters_raise(data, params):
    X, y, _, _ = data
    with pytest.raises(ValueError):
        fastgen.CategoricalNB(**params).fit(X, y)


def test_sparse_input_rejected(data):
    sp = pytest.importorskip("scipy.sparse")
    X, y, _, _ = data
    with pytest.raises((TypeError, ValueError)):
        fastgen.CategoricalNB().fit(sp.csr_matrix(X), y)


# ---------------------------------------------------------------------------------------
# incremental fitting


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_partial_fit_new_categories_equals_fit(weighted):
    """A later batch with higher codes than seen so far grows the tables; the counts of the
    earlier batches are kept: the result equals one fit on everything."""
    X, y = cat_codes(300, n_categories=(6, 4, 5), seed=21)
    rng = np.random.default_rng(22)
    w = rng.uniform(0.2, 2.0, len(y)) if weighted else None
    # batch 1: only small codes; batch 2 brings feature 0's codes 3..5 and feature 2's 4
    small = (X[:, 0] < 3) & (X[:, 2] < 4)
    order = np.concatenate([np.flatnonzero(small), np.flatnonzero(~small)])
    X, y = X[order], y[order]
    w = None if w is None else w[order]
    cut = small.sum()
    batches = [slice(0, cut // 2), slice(cut // 2, cut), slice(cut, len(y))]
    inc = fastgen.CategoricalNB(alpha=0.3)
    seen_k = []
    for s in batches:
        inc.partial_fit(X[s], y[s], classes=[0, 1, 2],
                        sample_weight=None if w is None else w[s])
        seen_k.append(inc.n_categories_.copy())
    assert seen_k[0][0] <= 3 and seen_k[0][2] <= 4
    assert_array_equal(seen_k[-1], [6, 4, 5])
    full = fastgen.CategoricalNB(alpha=0.3).fit(X, y, sample_weight=w)
    assert_same_model(inc, full, rtol=1e-12, atol=1e-12)
    Xt, _ = cat_codes(60, n_categories=(6, 4, 5), seed=23)
    assert_same_scores(inc, Xt, full, Xt)
    sk = sk_categorical_nb()(alpha=0.3).fit(X, y, sample_weight=w)
    assert_parity(inc, sk, [Xt])


def test_partial_fit_lower_codes_keep_categories(data):
    """A batch with fewer categories never shrinks the tables."""
    X, y, Xt, _ = data
    inc = fastgen.CategoricalNB().partial_fit(X[:150], y[:150], classes=[0, 1, 2])
    k = inc.n_categories_.copy()
    low = np.minimum(X[150:], 1)
    inc.partial_fit(low, y[150:])
    assert_array_equal(inc.n_categories_, k)
    full = fastgen.CategoricalNB().fit(np.vstack([X[:150], low]), y)
    assert_same_model(inc, full, rtol=1e-12, atol=1e-12)


def test_partial_fit_with_missing_equals_fit(data):
    X, y, Xt, _ = data
    Xf, _ = with_missing(X, 0.2, seed=8)
    full = fastgen.CategoricalNB(min_categories=[4, 6, 2, 5]).fit(Xf, y)
    inc = fastgen.CategoricalNB(min_categories=[4, 6, 2, 5])
    for s in np.array_split(np.arange(len(y)), 4):
        inc.partial_fit(Xf[s], y[s], classes=np.unique(y))
    assert_same_model(inc, full, rtol=1e-12, atol=1e-12)
    assert_array_equal(inc.n_categories_, [4, 6, 2, 5])
    assert_same_scores(inc, Xt, full, Xt)


# ---------------------------------------------------------------------------------------
# persistence, threads, parameters


def test_pickle_roundtrip(data):
    X, y, Xt, _ = data
    Xf, _ = with_missing(X, 0.1, seed=9)
    est = fastgen.CategoricalNB(alpha=0.5, min_categories=6, handle_unknown="ignore").fit(Xf, y)
    clone = pickle.loads(pickle.dumps(est))
    assert_same_model(clone, est, rtol=0)
    Xu, _ = unknown_rows(Xt, est.n_categories_)
    Xu[::3, 0] = np.nan
    assert_same_scores(clone, Xu, est, Xu, rtol=0, atol=0)
    assert clone.get_params() == est.get_params()
    # the clone keeps learning like the original
    est.partial_fit(Xt, np.arange(len(Xt)) % 3)
    clone.partial_fit(Xt, np.arange(len(Xt)) % 3)
    assert_same_model(clone, est, rtol=0)


def test_n_threads_identical():
    """Counting and scoring split rows among threads with a fixed summation order: 1 and 2
    threads give identical results (data above the parallel threshold)."""
    X, y = cat_codes(40_000, n_categories=(5, 3, 8, 4, 6, 2), seed=31)
    Xf, _ = with_missing(X, 0.1, seed=32)
    Xf[5, 0] = 40  # an unknown code (ignored)
    w = np.random.default_rng(33).uniform(0.5, 1.5, len(y))
    fits = [fastgen.CategoricalNB(n_threads=t, handle_unknown="ignore", min_categories=3).fit(
        np.where(np.isnan(Xf) | (Xf >= 40), np.nan, Xf), y, sample_weight=w) for t in (1, 2)]
    assert_same_model(fits[0], fits[1], rtol=0)
    for _ in range(5):  # a data race shows only now and then
        for m in METHODS + ("predict",):
            assert_array_equal(getattr(fits[0], m)(Xf), getattr(fits[1], m)(Xf), err_msg=m)
    assert_matches_oracle(fits[1], Xf[:300], skip_unknown=True)


def test_params_and_repr():
    est = fastgen.CategoricalNB(alpha=0.5, min_categories=3)
    params = est.get_params()
    assert params["alpha"] == 0.5 and params["min_categories"] == 3
    assert params["handle_unknown"] == "error" and params["force_alpha"] is True
    assert "alpha=0.5" in repr(est)
    assert est.set_params(handle_unknown="ignore").handle_unknown == "ignore"


def test_not_fitted_raises():
    with pytest.raises(fastgen.NotFittedError):
        fastgen.CategoricalNB().predict([[0, 1]])


def test_n_features_mismatch_raises(data):
    X, y, Xt, _ = data
    est = fastgen.CategoricalNB().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(Xt[:, :3])


# ---------------------------------------------------------------------------------------
# DataFrames with columns of labels

TEXT_COLUMNS = ["workclass", "education", "marital_status", "occupation", "relationship",
                "race", "sex", "native_country"]


@pytest.fixture(scope="module")
def adult_text(shared_data):
    """adult's 8 text columns on complete rows, one of them a CategoricalDtype with a category
    that never occurs; a training and a test slice."""
    pd = pytest.importorskip("pandas")
    from _data import adult_frame

    X, y = adult_frame(shared_data, 3000)
    X = X[TEXT_COLUMNS]
    keep = X.notna().all(axis=1).to_numpy()
    X, y = X[keep].reset_index(drop=True), y[keep]
    X["race"] = X["race"].astype(pd.CategoricalDtype(sorted(X["race"].unique()) + ["Unused"]))
    train, test = X.iloc[:2000], X.iloc[2000:]
    seen = np.all([test[c].isin(train[c]) for c in TEXT_COLUMNS], axis=0)
    return train, y[:2000], test[seen], y[2000:][seen]


def test_dataframe_parity_sklearn_ordinal_codes(adult_text):
    """On a DataFrame of text columns CategoricalNB equals scikit-learn's CategoricalNB on the
    OrdinalEncoder codes of the same frame (a CategoricalDtype's categories, the unused one
    too, are its encoder's categories)."""
    from sklearn.preprocessing import OrdinalEncoder

    X, y, Xt, _ = adult_text
    est = fastgen.CategoricalNB(alpha=0.5).fit(X, y)
    categories = [np.asarray(X[c].cat.categories) if hasattr(X[c], "cat")
                  else np.sort(X[c].unique()) for c in TEXT_COLUMNS]
    encoder = OrdinalEncoder(categories=categories).fit(X)
    ref = sk_categorical_nb()(alpha=0.5, min_categories=[len(c) for c in categories]).fit(
        encoder.transform(X), y)
    assert_array_equal(est.n_categories_, ref.n_categories_)
    for j, labels in est.categories_.items():
        assert_array_equal(labels, categories[j])
    for a, b in zip(est.feature_log_prob_, ref.feature_log_prob_):
        assert_allclose(a, b, rtol=RTOL, atol=ATOL)
    for rows in (Xt, Xt.iloc[[0]], Xt.iloc[:7]):
        assert_allclose(est.predict_log_proba(rows),
                        ref.predict_log_proba(encoder.transform(rows)), rtol=RTOL, atol=ATOL)
        assert_array_equal(est.predict(rows), ref.predict(encoder.transform(rows)))


def test_dataframe_missing_and_unknown_labels(adult_text):
    """NaN, None, pd.NA in a column of labels are marginalised, as NaN codes are; an unknown
    label is an error naming the column, or (handle_unknown="ignore") missing."""
    pd = pytest.importorskip("pandas")
    X, y, Xt, _ = adult_text
    est = fastgen.CategoricalNB(handle_unknown="ignore").fit(X, y)
    codes = fastgen.CategoricalNB(handle_unknown="ignore", min_categories=est.n_categories_)
    codes.fit(np.column_stack([pd.Index(est.categories_[j]).get_indexer(X.iloc[:, j])
                               for j in range(X.shape[1])]), y)
    holed = Xt.iloc[:40].astype(object)
    holed.iloc[0, 1], holed.iloc[1, 3], holed.iloc[2, 7] = None, pd.NA, np.nan
    holed.iloc[3, 0] = "Astronaut"
    expected = np.column_stack([pd.Index(est.categories_[j]).get_indexer(holed.iloc[:, j])
                                for j in range(X.shape[1])]).astype(float)
    expected[expected < 0] = np.nan
    assert np.isnan(expected[:4]).sum() == 4
    for rows in (slice(None), [0], [1], [2], [3]):
        assert_allclose(est.predict_joint_log_proba(holed.iloc[rows]),
                        codes.predict_joint_log_proba(expected[rows]), rtol=1e-13)
    with pytest.raises(ValueError, match="'workclass'.*Astronaut"):
        fastgen.CategoricalNB().fit(X, y).predict(holed.iloc[[3]])


def test_dataframe_categories_in_files_and_pickles(adult_text, tmp_path):
    X, y, Xt, _ = adult_text
    est = fastgen.CategoricalNB().fit(X, y)
    path = tmp_path / "cnb.fg"
    est.save(path)
    for back in (fastgen.load(path), pickle.loads(pickle.dumps(est))):
        assert back.categories_.keys() == est.categories_.keys()
        for j in est.categories_:
            assert_array_equal(back.categories_[j], est.categories_[j])
        assert_array_equal(back.predict_log_proba(Xt), est.predict_log_proba(Xt))
    sample, _ = est.sample(5, random_state=0)
    assert list(sample.columns) == TEXT_COLUMNS
    assert sample["race"].isin(est.categories_[5]).all()
    other = fastgen.CategoricalNB().fit(X.assign(sex=X["sex"] == "Male"), y)
    with pytest.raises(ValueError, match="categorical labels"):
        est.merge(other)


def test_numeric_codes_have_no_categories(data):
    """Fitted on an array of codes: no categories, and a DataFrame of the same codes is read as
    the array (with scikit-learn's warning about feature names)."""
    pd = pytest.importorskip("pandas")
    X, y, Xt, _ = data
    est = fastgen.CategoricalNB().fit(X, y)
    assert est.categories_ == {}
    with pytest.warns(UserWarning, match="feature names"):
        got = est.predict_log_proba(pd.DataFrame(Xt[:5], columns=[f"f{j}" for j in
                                                                   range(Xt.shape[1])]))
    assert_array_equal(got, est.predict_log_proba(Xt[:5]))


def test_samples_of_a_dataframe_model_are_read_back_by_it():
    """sample() of a model fitted on a DataFrame: the fitted columns (by position where their
    names are not strings; repeated names kept), label columns as Categoricals of the model's
    labels whatever their kind, and a feature that never had a value drawn as missing. Each of
    these failed: a column lost to a repeated name, raw codes for int names, numbers where the
    model reads labels, an IndexError."""
    pd = pytest.importorskip("pandas")
    y = [0, 0, 1, 1]
    frames = [pd.DataFrame([[1.0, "a"], [2.0, "b"], [3.0, "a"], [4.0, "c"]], columns=["x", "x"]),
              pd.DataFrame({0: ["x", "y", "x", "z"], 1: [1.0, 2, 3, 4]}),
              pd.DataFrame({"s": pd.Categorical([1, 2, 1, 3]), "t": ["p", "q", "p", "q"]}),
              pd.DataFrame({"a": list("abab"), "s": [None] * 4})]
    for frame in frames:
        models = [fastgen.MixedNB()]
        if not (frame.dtypes == float).any():
            models.append(fastgen.CategoricalNB())
        for model in models:
            model.fit(frame, y)
            X, labels = model.sample(50, random_state=0)
            assert list(X.columns) == list(frame.columns)
            assert np.isfinite(model.predict_proba(X)).all()
            if "s" in frame and frame["s"].isna().all():
                assert X["s"].isna().all()
    with pytest.raises(ValueError, match="n_samples"):
        fastgen.CategoricalNB().fit(np.array([[0], [1], [0], [1]]), y).sample(True)
    with pytest.raises(ValueError, match="y must be labels"):
        fastgen.CategoricalNB().fit(np.array([[0], [1], [0], [1]]), y).sample(2, y=[None, 0])


@pytest.mark.parametrize("values", [[np.int64(1), np.int64(2), np.int64(7)],
                                    [np.bool_(True), np.bool_(False), np.bool_(True)],
                                    [np.int64(1), "a", np.float64(2.5)]])
def test_numpy_scalars_in_an_object_column_are_labels(values, tmp_path):
    """NumPy's scalars in an object column are the numbers and booleans they hold (they were
    refused as labels "other than strings, numbers and booleans"): the model equals the one
    of Python's values, and its file holds them."""
    pd = pytest.importorskip("pandas")
    y = np.array([0, 1, 1, 0, 1, 0])
    numpy_kind = pd.DataFrame({"c": pd.Series(values * 2, dtype=object)})
    python_kind = pd.DataFrame({"c": pd.Series([v.item() if isinstance(v, np.generic) else v
                                                for v in values] * 2, dtype=object)})
    for cls in (fastgen.CategoricalNB, fastgen.MixedNB):
        ours, reference = cls().fit(numpy_kind, y), cls().fit(python_kind, y)
        np.testing.assert_array_equal(ours.predict_proba(numpy_kind),
                                      reference.predict_proba(python_kind))
        ours.save(tmp_path / "m.fastgen")
        np.testing.assert_array_equal(fastgen.load(tmp_path / "m.fastgen").predict_proba(
            numpy_kind), ours.predict_proba(numpy_kind))
