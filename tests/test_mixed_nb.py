"""MixedNB (issue 4): one naive Bayes over gaussian, categorical, bernoulli, poisson and
multinomial columns.

The joint log-likelihood is ``log P(c) + sum over kinds of the kind's per-feature
log-likelihoods``. It is checked against (a) scikit-learn's GaussianNB, CategoricalNB,
BernoulliNB and MultinomialNB and a scipy.stats Poisson oracle on complete data, each part
with its own log prior taken out, and (b) fastgen's single-kind models fitted on the column
subsets, which also covers missing values. A missing value in any kind is marginalised: a
NaN cell scores like a model fitted without that column.
"""

import pickle
import warnings

import numpy as np
import pytest
from _gaussian_data import METHODS, assert_normalised
from _reference import categorical_nb_jll, gaussian_nb_jll, log_posterior, poisson_jll
from numpy.testing import assert_allclose, assert_array_equal

import fastgen
from fastgen._frame import SMALL_FRAME

RTOL, ATOL = 1e-9, 1e-9

# column kinds of the synthetic data, interleaved so that column bookkeeping matters
TYPES = ["gaussian", "categorical", "multinomial", "bernoulli", "gaussian", "poisson",
         "categorical", "multinomial", "poisson", "bernoulli", "gaussian", "multinomial"]
N_CATEGORIES = {1: 3, 6: 4}


def columns_of(kind, types=TYPES):
    return [j for j, t in enumerate(types) if t == kind]


def mixed_data(n, k=3, seed=0, types=TYPES):
    """(X float64 (n, d), y int): class-dependent values of each kind, classes unbalanced. Gaussian columns have
    different scales (column 0 the largest variance), categorical columns codes 0..K-1 (every
    code occurs), bernoulli columns 0/1 with some 2.0 (present), poisson and multinomial columns
    counts."""
    rng = np.random.default_rng(seed)
    # unbalanced classes (k : k-1 : ... : 1), so that a prior counted twice shows
    y = rng.choice(k, n, p=np.arange(k, 0, -1) / (k * (k + 1) / 2))
    y[:k] = np.arange(k)
    X = np.empty((n, len(types)))
    for j, kind in enumerate(types):
        if kind == "gaussian":
            scale = 10.0 if j == 0 else 1.0 + j / 10
            X[:, j] = rng.normal(rng.uniform(-2, 2, k)[y] * scale, scale)
        elif kind == "categorical":
            K = N_CATEGORIES.get(j, 3)
            P = rng.dirichlet(np.ones(K), size=k)
            X[:, j] = (rng.random(n)[:, None] > np.cumsum(P[y], axis=1)).sum(axis=1)
            X[:, j] = np.minimum(X[:, j], K - 1)
            X[:K, j] = np.arange(K)
        elif kind == "bernoulli":
            p = rng.uniform(0.1, 0.9, k)
            X[:, j] = (rng.random(n) < p[y]) * rng.choice([1.0, 2.0], n, p=[0.8, 0.2])
        elif kind == "poisson":
            X[:, j] = rng.poisson(rng.uniform(0.5, 6.0, k)[y])
        else:
            X[:, j] = rng.poisson(rng.uniform(0.2, 5.0, k)[y])
    return X, y


def holes(X, frac, seed=0, all_nan_row=None):
    rng = np.random.default_rng(seed)
    X = np.array(X, dtype=np.float64)
    X[rng.random(X.shape) < frac] = np.nan
    if all_nan_row is not None:
        X[all_nan_row] = np.nan
    return X


def part_models(types, X, y, alpha=1.0, var_smoothing=1e-9, sample_weight=None):
    """fastgen's single-kind models fitted on the column subsets, with the inputs MixedNB
    documents: bernoulli columns as categorical 0/1 (x > 0, NaN kept); a multinomial block
    with missing counts as 0. Returns kind -> (columns, model, transform)."""
    X = np.asarray(X, dtype=np.float64)

    def bern(Z):
        return np.where(np.isnan(Z), np.nan, (Z > 0).astype(np.float64))

    def multi(Z):
        return np.where(np.isnan(Z), 0.0, Z)

    def same(Z):
        return Z

    makers = {
        "gaussian": (lambda: fastgen.GaussianNB(var_smoothing=var_smoothing), same),
        "categorical": (lambda: fastgen.CategoricalNB(alpha=alpha), same),
        "bernoulli": (lambda: fastgen.CategoricalNB(alpha=alpha, min_categories=2), bern),
        "poisson": (lambda: fastgen.PoissonNB(alpha=alpha), same),
        "multinomial": (lambda: fastgen.MultinomialNB(alpha=alpha), multi),
    }
    parts = {}
    for kind, (make, tf) in makers.items():
        cols = columns_of(kind, types)
        if cols:
            parts[kind] = (cols, make().fit(tf(X[:, cols]), y, sample_weight=sample_weight), tf)
    return parts


def part_log_prior(model):
    if hasattr(model, "class_log_prior_"):
        return np.asarray(model.class_log_prior_)
    return np.log(model.class_prior_)


def jll_from_parts(parts, X, log_prior):
    """log prior + sum over parts of (part jll - part log prior)."""
    X = np.asarray(X, dtype=np.float64)
    jll = np.tile(np.asarray(log_prior, dtype=np.float64), (X.shape[0], 1))
    for cols, model, tf in parts.values():
        jll += model.predict_joint_log_proba(tf(X[:, cols])) - part_log_prior(model)
    return jll


def assert_scores(est, X, jll, rtol=RTOL, atol=ATOL):
    assert_allclose(est.predict_joint_log_proba(X), jll, rtol=rtol, atol=atol)
    lp = log_posterior(jll)
    assert_allclose(est.predict_log_proba(X), lp, rtol=rtol, atol=atol)
    assert_allclose(est.predict_proba(X), np.exp(lp), rtol=rtol, atol=atol)
    top = np.sort(jll, axis=1)
    clear = top[:, -1] - top[:, -2] > 1e-9  # exact ties (e.g. equal priors) go either way
    assert_array_equal(est.predict(X)[clear], est.classes_[np.argmax(jll, axis=1)][clear])


def assert_same_scores(a, Xa, b, Xb, rtol=RTOL, atol=ATOL):
    for m in METHODS:
        assert_allclose(getattr(a, m)(Xa), getattr(b, m)(Xb), rtol=rtol, atol=atol, err_msg=m)
    assert_array_equal(a.predict(Xa), b.predict(Xb))


@pytest.fixture(scope="module")
def data():
    X, y = mixed_data(400, seed=7)
    return X[:300], y[:300], X[300:], y[300:]


# ---------------------------------------------------------------------------------------
# the joint log-likelihood


def test_parity_sklearn_parts_complete_data(data):
    """Complete data: MixedNB equals scikit-learn's models of each kind combined (each part's
    log prior taken out) plus a scipy.stats Poisson oracle, to 1e-9."""
    nb = pytest.importorskip("sklearn.naive_bayes")
    X, y, Xt, _ = data
    alpha, vs = 0.7, 1e-6
    est = fastgen.MixedNB(TYPES, alpha=alpha, var_smoothing=vs).fit(X, y)
    assert est.feature_types_ == TYPES
    assert_array_equal(est.classes_, [0, 1, 2])
    counts = np.bincount(y).astype(float)
    assert_allclose(est.class_count_, counts, rtol=1e-15)
    assert_allclose(est.class_prior_, counts / counts.sum(), rtol=1e-15)
    g, c, b, p, m = (columns_of(k) for k in
                     ("gaussian", "categorical", "bernoulli", "poisson", "multinomial"))
    sk_parts = [
        (g, nb.GaussianNB(var_smoothing=vs).fit(X[:, g], y)),
        (c, nb.CategoricalNB(alpha=alpha).fit(X[:, c].astype(int), y)),
        (b, nb.BernoulliNB(alpha=alpha, binarize=0.0).fit(X[:, b], y)),
        (m, nb.MultinomialNB(alpha=alpha).fit(X[:, m], y)),
    ]
    # Poisson: lambda = (sum of x + alpha) / (count + 1), as PoissonNB defines it
    lam = np.array([(X[y == k][:, p].sum(axis=0) + alpha) / ((y == k).sum() + 1.0)
                    for k in range(3)])
    log_prior = np.log(est.class_prior_)
    for Xe in (X[:100], Xt):
        jll = poisson_jll(Xe[:, p], lam, log_prior)
        for cols, model in sk_parts:
            part = model.predict_joint_log_proba(Xe[:, cols])
            jll += part - (np.log(model.class_prior_) if hasattr(model, "class_prior_")
                           and not hasattr(model, "class_log_prior_") else
                           model.class_log_prior_)
        assert_scores(est, Xe, jll)


def test_gaussian_part_equals_scipy_oracle():
    """Gaussian columns alone: theta and ML variance + epsilon (var_smoothing times the
    largest variance of the gaussian columns) through scipy.stats.norm."""
    types = ["gaussian", "categorical", "gaussian", "gaussian"]
    X, y = mixed_data(200, seed=3, types=types)
    vs = 1e-3
    est = fastgen.MixedNB(types, var_smoothing=vs).fit(X, y)
    g = columns_of("gaussian", types)
    theta = np.array([X[y == k][:, g].mean(axis=0) for k in range(3)])
    var = np.array([X[y == k][:, g].var(axis=0) for k in range(3)])
    var = var + vs * X[:, g].var(axis=0).max()
    cat = fastgen.CategoricalNB().fit(X[:, [1]], y)
    log_prior = np.log(np.bincount(y) / len(y))
    Xt = holes(mixed_data(60, seed=4, types=types)[0], 0.2, seed=1, all_nan_row=0)
    jll = gaussian_nb_jll(Xt[:, g], theta, var, log_prior)
    jll += categorical_nb_jll(Xt[:, [1]], cat.feature_log_prob_, np.zeros(3))
    assert_scores(est, Xt, jll)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("priors", [None, [0.2, 0.3, 0.5]], ids=["fitted", "given"])
@pytest.mark.parametrize("missing", [False, True], ids=["complete", "nan"])
def test_jll_equals_sum_of_part_models(data, weighted, priors, missing):
    X, y, Xt, _ = data
    if missing:
        X = holes(X, 0.15, seed=2)
        Xt = holes(Xt, 0.2, seed=3, all_nan_row=0)
    w = np.random.default_rng(1).uniform(0.2, 2.5, len(y)) if weighted else None
    est = fastgen.MixedNB(TYPES, alpha=0.5, var_smoothing=1e-4, priors=priors).fit(
        X, y, sample_weight=w)
    counts = np.bincount(y, weights=w)
    assert_allclose(est.class_count_, counts, rtol=1e-12)
    want_prior = counts / counts.sum() if priors is None else np.asarray(priors)
    assert_allclose(est.class_prior_, want_prior, rtol=1e-12)
    parts = part_models(TYPES, X, y, alpha=0.5, var_smoothing=1e-4, sample_weight=w)
    for Xe in (X, Xt):
        assert_scores(est, Xe, jll_from_parts(parts, Xe, np.log(want_prior)))
    assert_normalised(est, Xt)


def test_all_nan_row_gets_prior(data):
    X, y, _, _ = data
    for priors in (None, [0.5, 0.25, 0.25]):
        est = fastgen.MixedNB(TYPES, priors=priors).fit(X, y)
        row = np.full((2, X.shape[1]), np.nan)
        want = np.log(np.broadcast_to(est.class_prior_, (2, 3)))
        assert_allclose(est.predict_joint_log_proba(row), want, rtol=1e-12, atol=1e-12)
        assert_allclose(est.predict_log_proba(row), want, rtol=1e-12, atol=1e-12)


def test_ndarray_default_is_all_gaussian(data):
    X, y, Xt, _ = data
    g = columns_of("gaussian")
    est = fastgen.MixedNB().fit(X[:, g], y)
    assert est.feature_types_ == ["gaussian"] * len(g)
    ref = fastgen.GaussianNB().fit(X[:, g], y)
    assert_same_scores(est, Xt[:, g], ref, Xt[:, g])
    sk = pytest.importorskip("sklearn.naive_bayes").GaussianNB().fit(X[:, g], y)
    for m in METHODS:
        assert_allclose(getattr(est, m)(Xt[:, g]), getattr(sk, m)(Xt[:, g]), rtol=RTOL,
                        atol=ATOL)


# ---------------------------------------------------------------------------------------
# each kind on its own


def test_bernoulli_column_with_nan():
    """A bernoulli column is present (x > 0) / absent with P estimated from the observed
    values: (N_c1 + alpha) / (N_c,observed + 2 alpha); NaN is marginalised."""
    rng = np.random.default_rng(5)
    n = 200
    y = np.arange(n) % 2
    X = (rng.random((n, 3)) < np.where(y[:, None] == 1, 0.7, 0.3)).astype(float)
    X[rng.random(X.shape) < 0.2] = np.nan
    X[::7, 0] = np.where(np.isnan(X[::7, 0]), np.nan, 3.5 * X[::7, 0])  # > 0 is present
    alpha = 0.5
    est = fastgen.MixedNB(["bernoulli"] * 3, alpha=alpha).fit(X, y)
    obs = ~np.isnan(X)
    present = np.where(obs, X > 0, False)
    p1 = np.array([(present[y == k].sum(axis=0) + alpha) / (obs[y == k].sum(axis=0) + 2 * alpha)
                   for k in range(2)])
    log_prior = np.log(np.bincount(y) / n)
    Xt = np.array([[1.0, 0.0, np.nan], [np.nan, np.nan, np.nan], [0.0, 2.0, 1.0],
                   [np.nan, 0.0, 0.0], [5.0, np.nan, 0.0]])
    jll = np.tile(log_prior, (len(Xt), 1))
    for i, row in enumerate(Xt):
        for j, v in enumerate(row):
            if not np.isnan(v):
                jll[i] += np.log(p1[:, j]) if v > 0 else np.log1p(-p1[:, j])
    assert_scores(est, Xt, jll)
    # on complete data the same as scikit-learn's BernoulliNB
    sk = pytest.importorskip("sklearn.naive_bayes").BernoulliNB(alpha=alpha)
    Xc = np.nan_to_num(X)
    est = fastgen.MixedNB(["bernoulli"] * 3, alpha=alpha).fit(Xc, y)
    sk.fit(Xc, y)
    Xtc = np.nan_to_num(Xt)
    for m in METHODS:
        assert_allclose(getattr(est, m)(Xtc), getattr(sk, m)(Xtc), rtol=RTOL, atol=ATOL)


def test_poisson_columns_equal_oracle(data):
    X, y, Xt, _ = data
    p = columns_of("poisson")
    Xp = holes(X[:, p], 0.1, seed=4)
    alpha = 0.8
    est = fastgen.MixedNB(["poisson"] * len(p), alpha=alpha).fit(Xp, y)
    obs = ~np.isnan(Xp)
    lam = np.array([(np.nansum(Xp[y == k], axis=0) + alpha) / (obs[y == k].sum(axis=0) + 1.0)
                    for k in range(3)])
    Xtp = holes(Xt[:, p], 0.2, seed=5, all_nan_row=2)
    jll = poisson_jll(Xtp, lam, np.log(np.bincount(y) / len(y)))
    assert_scores(est, Xtp, jll)
    ref = fastgen.PoissonNB(alpha=alpha).fit(Xp, y)
    assert_same_scores(est, Xtp, ref, Xtp)


def test_multinomial_block(data):
    """The multinomial columns form one block: sum_j x_j log theta_cj with theta normalised
    over the block (scikit-learn's MultinomialNB); a missing count is dropped (as 0)."""
    X, y, Xt, _ = data
    m = columns_of("multinomial")
    g = columns_of("gaussian")
    types = ["multinomial"] * len(m) + ["gaussian"] * len(g)
    Xmg = np.hstack([X[:, m], X[:, g]])
    alpha = 0.3
    est = fastgen.MixedNB(types, alpha=alpha).fit(Xmg, y)
    nb = pytest.importorskip("sklearn.naive_bayes")
    mnb = nb.MultinomialNB(alpha=alpha).fit(X[:, m], y)
    gnb = nb.GaussianNB().fit(X[:, g], y)
    Xte = np.hstack([Xt[:, m], Xt[:, g]])
    jll = (np.log(est.class_prior_) + mnb.predict_joint_log_proba(Xt[:, m]) - mnb.class_log_prior_
           + gnb.predict_joint_log_proba(Xt[:, g]) - np.log(gnb.class_prior_))
    assert_scores(est, Xte, jll)
    # a missing count is dropped from the sum: the same as a zero count
    Xn = Xte.copy()
    Xn[::3, 0] = np.nan
    Xn[1::4, 2] = np.nan
    Xz = np.where(np.isnan(Xn), 0.0, Xn)
    assert_same_scores(est, Xn, est, Xz)


# ---------------------------------------------------------------------------------------
# missing values: a NaN column equals a model fitted without it


@pytest.mark.parametrize("kind", ["gaussian", "categorical", "poisson", "bernoulli"])
def test_nan_column_equals_column_dropped(data, kind):
    X, y, Xt, _ = data
    # column 0 (gaussian) has the largest variance: dropping another gaussian column keeps
    # epsilon_
    column = [j for j in columns_of(kind) if j != 0][0]
    keep = [j for j in range(X.shape[1]) if j != column]
    full = fastgen.MixedNB(TYPES, alpha=0.6).fit(X, y)
    dropped = fastgen.MixedNB([TYPES[j] for j in keep], alpha=0.6).fit(X[:, keep], y)
    Xn = Xt.copy()
    Xn[:, column] = np.nan
    assert_same_scores(full, Xn, dropped, Xt[:, keep])
    # only some rows missing: those rows as the dropped model, the others unchanged
    half = Xt.copy()
    half[::2, column] = np.nan
    jll = full.predict_joint_log_proba(half)
    assert_allclose(jll[::2], dropped.predict_joint_log_proba(Xt[::2][:, keep]), rtol=RTOL,
                    atol=ATOL)
    assert_allclose(jll[1::2], full.predict_joint_log_proba(Xt[1::2]), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("kind", ["gaussian", "categorical", "poisson", "bernoulli"])
def test_fit_with_nan_equals_fit_on_observed(kind):
    """With one kind's single column missing in some rows, that part's parameters come from
    the observed rows only, the other parts from all rows."""
    types = ["gaussian", kind] if kind != "gaussian" else ["gaussian", "gaussian"]
    X, y = mixed_data(300, seed=9, types=["gaussian", kind])
    X = X.copy()
    X[np.random.default_rng(0).random(len(y)) < 0.3, 1] = np.nan
    est = fastgen.MixedNB(types).fit(X, y)
    parts = part_models(types, X, y)
    Xt, _ = mixed_data(50, seed=10, types=["gaussian", kind])
    assert_scores(est, Xt, jll_from_parts(parts, Xt, np.log(est.class_prior_)))


# ---------------------------------------------------------------------------------------
# DataFrames


@pytest.fixture(scope="module")
def frame():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(12)
    n = 240
    y = np.arange(n) % 2
    rng.shuffle(y)
    colors = np.array(["blue", "green", "red"])
    sizes = np.array(["L", "M", "S", "XL"])
    df = pd.DataFrame({
        "height": rng.normal(170 + 10 * y, 8.0),
        "age": rng.integers(20, 60, n) + 10 * y,
        "smoker": rng.random(n) < np.where(y == 1, 0.6, 0.2),
        "color": pd.Categorical(colors[(rng.random(n) * 3 + y).astype(int) % 3],
                                categories=colors),
        "size": sizes[rng.integers(0, 4, n)].astype(object),
    })
    X = df.copy()
    X["height"] = X["height"].where(rng.random(n) > 0.1)             # NaN
    X["age"] = X["age"].astype("Int64").where(rng.random(n) > 0.1)    # pd.NA
    X["color"] = X["color"].where(rng.random(n) > 0.1)                # NaN category
    size = X["size"].astype(object)
    size[rng.random(n) < 0.1] = None                                 # None
    X["size"] = size
    # the same data as codes (label order: sorted; False < True), NaN for missing
    codes = np.column_stack([
        X["height"].to_numpy(float),
        X["age"].to_numpy(float, na_value=np.nan),
        X["smoker"].to_numpy(float),
        np.where(X["color"].isna(), np.nan, X["color"].cat.codes).astype(float),
        np.array([np.nan if v is None else float(np.searchsorted(sizes, v)) for v in X["size"]]),
    ])
    return X, y, codes, {"colors": colors, "sizes": sizes}


FRAME_TYPES = ["gaussian", "gaussian", "categorical", "categorical", "categorical"]


def test_dataframe_inferred_types_and_categories(frame):
    X, y, codes, labels = frame
    est = fastgen.MixedNB().fit(X, y)
    assert est.feature_types_ == FRAME_TYPES
    assert_array_equal(est.feature_names_in_, ["height", "age", "smoker", "color", "size"])
    assert est.n_features_in_ == 5
    assert_array_equal(est.categories_[2], [False, True])
    assert_array_equal(est.categories_[3], labels["colors"])
    assert_array_equal(est.categories_[4], labels["sizes"])
    assert set(est.categories_) == {2, 3, 4}
    # the same model as the codes with the kinds given
    ref = fastgen.MixedNB(FRAME_TYPES).fit(codes, y)
    assert_same_scores(est, X, ref, codes)
    # and as the sum of the single-kind models on the codes
    parts = part_models(FRAME_TYPES, codes, y)
    assert_scores(est, X, jll_from_parts(parts, codes, np.log(est.class_prior_)))


def test_dataframe_string_dtype_and_nullable_boolean():
    """pandas' string dtype and nullable boolean are categorical; pd.NA is missing."""
    pd = pytest.importorskip("pandas")
    y = np.array([0, 1] * 6)
    df = pd.DataFrame({
        "s": pd.array(["u", "v", pd.NA, "u", "v", "u", "w", "v", "u", pd.NA, "w", "v"],
                      dtype="string"),
        "b": pd.array([True, False, None, True, False, True, None, False, True, False, True,
                       True], dtype="boolean"),
        "x": np.linspace(0, 1, 12),
    })
    est = fastgen.MixedNB().fit(df, y)
    assert est.feature_types_ == ["categorical", "categorical", "gaussian"]
    assert_array_equal(est.categories_[0], ["u", "v", "w"])
    s = df["s"].to_numpy(object)
    codes = np.column_stack([
        np.array([np.nan if v is pd.NA else "uvw".index(v) for v in s]),
        df["b"].to_numpy(float, na_value=np.nan),
        df["x"].to_numpy(),
    ])
    ref = fastgen.MixedNB(["categorical", "categorical", "gaussian"]).fit(codes, y)
    assert_same_scores(est, df, ref, codes)


def test_dataframe_nullable_boolean_categories(frame):
    """A nullable boolean column is categorical like a bool one: its labels are recorded in
    categories_ like every other categorical DataFrame column's."""
    pd = pytest.importorskip("pandas")
    X, y, _, _ = frame
    Xb = X[["smoker", "height"]].copy()
    Xb["smoker"] = Xb["smoker"].astype("boolean")
    Xb.loc[Xb.index[::9], "smoker"] = pd.NA
    est = fastgen.MixedNB().fit(Xb, y)
    assert est.feature_types_ == ["categorical", "gaussian"]
    assert 0 in est.categories_
    assert_array_equal(est.categories_[0], [False, True])


def test_dataframe_unseen_label(frame):
    X, y, codes, _ = frame
    Xt = X.iloc[:20].copy()
    size = Xt["size"].astype(object)
    size.iloc[3] = "XXL"
    Xt["size"] = size
    est = fastgen.MixedNB().fit(X, y)
    with pytest.raises(ValueError, match="size"):
        est.predict(Xt)
    for m in METHODS:
        with pytest.raises(ValueError):
            getattr(est, m)(Xt)
    ign = fastgen.MixedNB(handle_unknown="ignore").fit(X, y)
    Xm = Xt.copy()
    size = Xm["size"].astype(object)
    size.iloc[3] = None
    Xm["size"] = size
    assert_same_scores(ign, Xt, ign, Xm, rtol=0, atol=0)
    # a label outside a categorical dtype's categories
    pd = pytest.importorskip("pandas")
    Xc = X.iloc[:20].copy()
    Xc["color"] = pd.Categorical(["purple"] + list(Xc["color"].iloc[1:].astype(object)))
    with pytest.raises(ValueError, match="color"):
        est.predict(Xc)
    Xc0 = Xc.copy()
    Xc0["color"] = X["color"].iloc[:20].where(np.arange(20) != 0)
    assert_same_scores(ign, Xc, ign, Xc0, rtol=0, atol=0)


def reference_codes(X, categories):
    """A DataFrame as MixedNB reads it, written column by column with pandas: a column of
    labels as its codes among ``categories[j]``, NaN for a missing value or an unknown label."""
    columns = []
    for j in range(X.shape[1]):
        column = X.iloc[:, j]
        if j in categories:
            codes = pd_index(categories[j]).get_indexer(column).astype(np.float64)
            codes[codes < 0] = np.nan
        else:
            codes = column.to_numpy(dtype=np.float64, na_value=np.nan)
        columns.append(codes)
    return np.column_stack(columns)


def pd_index(values):
    return pytest.importorskip("pandas").Index(values)


def spiced_adult(X):
    """adult with every kind of column and of hole: a CategoricalDtype column, a bool column,
    an object column with None and pd.NA, a nullable integer column with pd.NA, and labels
    that training never saw."""
    pd = pytest.importorskip("pandas")
    X = X.copy()
    n = len(X)
    X["workclass"] = X["workclass"].astype(pd.CategoricalDtype(
        sorted(X["workclass"].dropna().unique()) + ["Unused"]))
    X["sex"] = X["sex"] == "Male"
    race = X["race"].astype(object)
    race.iloc[1::7] = None
    race.iloc[2::11] = pd.NA
    X["race"] = race
    X["age"] = X["age"].astype("Int64").where(np.arange(n) % 5 != 0)
    country = X["native_country"].astype(object)
    country.iloc[3::13] = "Atlantis"  # unknown once the model is fitted
    X["native_country"] = country
    return X


def test_dataframe_encoding_equals_column_by_column(shared_data):
    """adult with every kind of hole, read in one pass, row by row and in a large batch, gives
    bit for bit the scores of its codes built column by column with pandas."""
    from _data import adult_frame

    X, y = adult_frame(shared_data, 1000 + 2 * SMALL_FRAME)
    X = spiced_adult(X)
    train = X.iloc[:1000].copy()
    train["native_country"] = train["native_country"].replace("Atlantis", np.nan)
    est = fastgen.MixedNB(handle_unknown="ignore").fit(train, y[:1000])
    test = X.iloc[1000:]  # (large enough to be factorized, its single rows looked up)
    pd = pytest.importorskip("pandas")
    holes = [next(i for i, v in enumerate(test["race"]) if v is None),
             next(i for i, v in enumerate(test["race"]) if v is pd.NA),
             int(np.argmax(test["age"].isna())), int(np.argmax(test["occupation"].isna())),
             int(np.argmax(test["native_country"].eq("Atlantis")))]
    for rows in [test, test.iloc[:10]] + [test.iloc[[i]] for i in holes]:
        with warnings.catch_warnings():  # (the codes have no feature names)
            warnings.simplefilter("ignore", UserWarning)
            expected = est.predict_joint_log_proba(reference_codes(rows, est.categories_))
        assert_array_equal(est.predict_joint_log_proba(rows), expected)
    with pytest.raises(ValueError, match="native_country"):
        fastgen.MixedNB().fit(train, y[:1000]).predict_proba(test)
    # a DataFrame without pandas' internal blocks is read column by column, the same
    from fastgen._frame import FrameReader

    class Unblocked:
        def __init__(self, frame):
            self.frame, self.shape, self.columns = frame, frame.shape, frame.columns
            self.iloc = frame.iloc

    reader = FrameReader(est._fitted.extra["categories"], est._positions(est._fitted))
    for rows in (test, test.iloc[[holes[0]]]):
        assert_array_equal(reader.read(Unblocked(rows), "ignore"), reader.read(rows, "ignore"))


def stream_batches(pd, declared):
    """Two batches of a column of labels; the second has a label the first has not."""
    dtype = pd.CategoricalDtype(["a", "b", "c"]) if declared else object
    first = pd.DataFrame({"v": pd.Series(["a", "b", "a", "b"], dtype=dtype),
                          "x": [0.1, 0.5, 0.3, 0.9]})
    second = pd.DataFrame({"v": pd.Series(["c", "a", "c", "b"], dtype=dtype),
                           "x": [1.1, 0.2, 0.7, 0.4]})
    return first, second, np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0])


@pytest.mark.parametrize("model", ["MixedNB", "CategoricalNB"])
def test_partial_fit_takes_the_declared_categories(model):
    """A CategoricalDtype declares every category up front: batches streamed through
    partial_fit then equal one fit; undeclared, a later batch's new label is an error that says
    how to declare it, whatever handle_unknown."""
    pd = pytest.importorskip("pandas")
    make = getattr(fastgen, model)
    first, second, y1, y2 = stream_batches(pd, declared=True)
    if model == "CategoricalNB":
        first, second = first[["v"]], second[["v"]]
    streamed = make().partial_fit(first, y1, classes=[0, 1]).partial_fit(second, y2)
    whole = make().fit(pd.concat([first, second]), np.concatenate([y1, y2]))
    assert_array_equal(streamed.categories_[0], ["a", "b", "c"])
    assert_allclose(streamed.predict_joint_log_proba(second),
                    whole.predict_joint_log_proba(second), rtol=1e-12)
    first, second, y1, y2 = stream_batches(pd, declared=False)
    if model == "CategoricalNB":
        first, second = first[["v"]], second[["v"]]
    for handle_unknown in ("error", "ignore"):
        est = make(handle_unknown=handle_unknown).partial_fit(first, y1, classes=[0, 1])
        with pytest.raises(ValueError, match="'v'.*CategoricalDtype"):
            est.partial_fit(second, y2)
        assert_array_equal(est.categories_[0], ["a", "b"])


@pytest.mark.parametrize("model", ["MixedNB", "CategoricalNB"])
def test_column_of_another_kind_is_an_error(model):
    """A column of labels given as numbers, or one of numbers given as labels (even labels
    that look like numbers), is an error naming the column, never codes read silently. A column
    of labels that is all missing (pandas makes it float) is missing."""
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"v": ["a", "b", "a", "c", "b", "a"], "n": [1.0, 2.0, 1.5, 2.5, 0.5, 3.0]})
    y = np.array([0, 1, 0, 1, 1, 0])
    est = getattr(fastgen, model)().fit(X, y) if model == "MixedNB" else \
        fastgen.CategoricalNB().fit(X.assign(n=[0, 1, 0, 2, 1, 0]), y)
    numbers = X.iloc[:2].assign(v=[0, 1])
    with pytest.raises(ValueError, match="'v'"):
        est.predict(numbers)
    texts = X.iloc[:2].assign(n=["1", "0"])
    with pytest.raises(ValueError, match="'n'"):
        est.predict(texts)
    missing = X.iloc[:2].assign(v=[np.nan, np.nan], n=[1, 0])
    assert missing["v"].dtype.kind == "f"
    assert_array_equal(est.predict_joint_log_proba(missing),
                       est.predict_joint_log_proba(missing.assign(v=[None, None])))


@pytest.mark.parametrize("model", ["MixedNB", "CategoricalNB"])
@pytest.mark.parametrize("change, message", [
    (lambda X: X[["v"]], "seen at fit time, yet now missing"),
    (lambda X: X.assign(w=X["v"]), "unseen at fit time"),
    (lambda X: X.rename(columns={"n": "m"}), "unseen at fit time"),
    (lambda X: X[["n", "v"]], "same order"),
], ids=["missing", "extra", "renamed", "reordered"])
def test_changed_columns_are_refused_with_sklearns_message(model, change, message):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"v": ["a", "b", "a", "c"], "n": [0, 1, 1, 0]})
    est = getattr(fastgen, model)().fit(X, [0, 1, 0, 1])
    for method in METHODS:
        with pytest.raises(ValueError, match="The feature names should match.*\n.*" + message):
            getattr(est, method)(change(X))


def test_ndarray_unknown_code(data):
    X, y, Xt, _ = data
    c = columns_of("categorical")[0]
    bad = Xt[:10].copy()
    bad[4, c] = 10
    with pytest.raises(ValueError):
        fastgen.MixedNB(TYPES).fit(X, y).predict(bad)
    ign = fastgen.MixedNB(TYPES, handle_unknown="ignore").fit(X, y)
    nan = bad.copy()
    nan[4, c] = np.nan
    assert_same_scores(ign, bad, ign, nan, rtol=0, atol=0)


def test_dataframe_feature_names_warnings(data):
    pd = pytest.importorskip("pandas")
    X, y, Xt, _ = data
    g = columns_of("gaussian")
    names = [f"g{j}" for j in g]
    df, dft = pd.DataFrame(X[:, g], columns=names), pd.DataFrame(Xt[:, g], columns=names)
    est = fastgen.MixedNB().fit(df, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.predict(dft)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        est.predict(Xt[:, g])
    plain = fastgen.MixedNB().fit(X[:, g], y)
    with pytest.warns(UserWarning, match="X has feature names"):
        plain.predict(dft)
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(dft.rename(columns={names[0]: "other"}))
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(dft[names[::-1]])
    # the same results whatever the container
    with pytest.warns(UserWarning):
        assert_allclose(est.predict_proba(Xt[:, g]), est.predict_proba(dft), rtol=0)


# ---------------------------------------------------------------------------------------
# validation


@pytest.mark.parametrize(
    "feature_types",
    [TYPES[:-1], TYPES + ["gaussian"], ["gaussain"] + TYPES[1:], [None] + TYPES[1:]],
    ids=["too-short", "too-long", "misspelt", "none-entry"],
)
def test_feature_types_validation(data, feature_types):
    X, y, _, _ = data
    with pytest.raises(ValueError, match="feature_types"):
        fastgen.MixedNB(feature_types).fit(X, y)


def test_non_numeric_column_declared_numeric_raises(frame):
    X, y, _, _ = frame
    with pytest.raises(ValueError):
        fastgen.MixedNB(["gaussian"] * 5).fit(X, y)


@pytest.mark.parametrize(
    "params",
    [{"alpha": -1.0}, {"var_smoothing": -1e-9}, {"alpha": np.nan},
     {"handle_unknown": "drop"}, {"priors": [0.5, 0.5]}, {"priors": [0.5, 0.6, -0.1]}],
    ids=["alpha", "var_smoothing", "alpha-nan", "handle_unknown", "priors-length",
         "priors-negative"],
)
def test_bad_parameters_raise(data, params):
    X, y, _, _ = data
    with pytest.raises(ValueError):
        fastgen.MixedNB(TYPES, **params).fit(X, y)


@pytest.mark.parametrize("kind", ["categorical", "bernoulli"])
def test_kind_specific_bad_values_raise(data, kind):
    X, y, _, _ = data
    bad = X.copy()
    if kind == "categorical":
        bad[5, columns_of("categorical")[0]] = 1.5
    else:
        bad[5, columns_of("poisson")[0]] = -2.0
    with pytest.raises(ValueError):
        fastgen.MixedNB(TYPES).fit(bad, y)
    est = fastgen.MixedNB(TYPES).fit(X, y)
    with pytest.raises(ValueError):
        est.predict(bad)


def test_inf_raises(data):
    X, y, _, _ = data
    bad = X.copy()
    bad[2, 0] = np.inf
    with pytest.raises(ValueError):
        fastgen.MixedNB(TYPES).fit(bad, y)


# ---------------------------------------------------------------------------------------
# incremental fitting, persistence, threads


def test_partial_fit_equals_fit(data):
    X, y, Xt, _ = data
    Xh = holes(X, 0.1, seed=6)
    w = np.random.default_rng(7).uniform(0.5, 2.0, len(y))
    full = fastgen.MixedNB(TYPES, alpha=0.4).fit(Xh, y, sample_weight=w)
    inc = fastgen.MixedNB(TYPES, alpha=0.4)
    for s in np.array_split(np.arange(len(y)), 3):
        inc.partial_fit(Xh[s], y[s], classes=[0, 1, 2], sample_weight=w[s])
    assert_allclose(inc.class_count_, full.class_count_, rtol=1e-12)
    assert_same_scores(inc, Xt, full, Xt, rtol=1e-9, atol=1e-9)


def test_pickle(frame):
    X, y, _, _ = frame
    est = fastgen.MixedNB(handle_unknown="ignore").fit(X, y)
    clone = pickle.loads(pickle.dumps(est))
    assert clone.feature_types_ == est.feature_types_
    for j in est.categories_:
        assert_array_equal(clone.categories_[j], est.categories_[j])
    assert_same_scores(clone, X, est, X, rtol=0, atol=0)


def test_n_threads_identical():
    X, y = mixed_data(40_000, seed=13)  # every part above the parallel threshold
    X = holes(X, 0.05, seed=14)
    a = fastgen.MixedNB(TYPES, n_threads=1).fit(X, y)
    b = fastgen.MixedNB(TYPES, n_threads=2).fit(X, y)
    for _ in range(5):  # a data race shows only now and then
        for m in METHODS + ("predict",):
            assert_array_equal(getattr(a, m)(X), getattr(b, m)(X), err_msg=m)
