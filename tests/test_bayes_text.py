"""Bayesian prediction of the discrete models: predictive=True and sample_posterior.

References: scipy's Dirichlet-multinomial less the multinomial coefficient (MultinomialNB's
predictive of a word sequence), the same in 50-digit mpmath where a or the counts are huge, the
sequential product of one-step predictives (which is log_evidence_), numerical integration of
the Beta posterior and scipy's Dirichlet-multinomial of one draw (BernoulliNB's and
CategoricalNB's predictive, which is their plug-in), and the moments of the Dirichlet and Beta
posteriors (the draws)."""
import itertools
import pickle

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from scipy.integrate import quad
from scipy.special import gammaln, logsumexp
from scipy.stats import beta as beta_dist
from scipy.stats import dirichlet_multinomial

import fastgen
from fastgen import BernoulliNB, CategoricalNB, ComplementNB, MultinomialNB
from fastgen._core import builds

RNG = np.random.default_rng(20261125)
N_CLASSES = 3


def _counts(n=40, n_features=6, rng=RNG, scale=3.0):
    """Word counts with repeats beyond the Polya table's blocks (8) and a class structure."""
    theta = rng.dirichlet(np.full(n_features, 0.6), size=N_CLASSES)
    y = np.arange(n) % N_CLASSES
    X = np.array([rng.multinomial(rng.integers(1, 30), theta[c]) for c in y], dtype=np.float64)
    return X, y


def _dcm_sequence(x, a):
    """log P(word sequence x | Dirichlet(a)) by scipy: its Dirichlet-multinomial of the counts
    less the multinomial coefficient."""
    n = int(x.sum())
    return dirichlet_multinomial.logpmf(x, a, n) - (gammaln(n + 1) - gammaln(x + 1).sum())


def _polya_reference(model, X, alpha):
    """log P(c) + the DCM of each row under Dirichlet(alpha + N_c), rows by scipy when counts
    are whole, by the lgamma formula otherwise."""
    a_all = model.feature_count_ + alpha
    out = np.empty((len(X), N_CLASSES))
    for i, x in enumerate(X):
        for c, a in enumerate(a_all):
            if np.all(x == np.round(x)):
                value = _dcm_sequence(x, a)
            else:
                value = (np.sum(gammaln(a + x) - gammaln(a))
                         - (gammaln(a.sum() + x.sum()) - gammaln(a.sum())))
            out[i, c] = model.class_log_prior_[c] + value
    return out


@pytest.mark.parametrize("alpha", [0.05, 1.0, "per-feature", "evidence"])
@pytest.mark.parametrize("sparse", [False, True])
def test_multinomial_predictive_is_the_dirichlet_multinomial(alpha, sparse):
    X, y = _counts()
    if alpha == "per-feature":
        alpha = RNG.uniform(0.1, 3.0, X.shape[1])
    model = MultinomialNB(alpha=alpha, predictive=True).fit(sp.csr_matrix(X) if sparse else X, y)
    X_test, _ = _counts(12)
    X_test[0, 0] = 40  # beyond the table
    X_test[1] = 0  # an empty document: the prior
    expected = _polya_reference(model, X_test, model.alpha_)
    X_in = sp.csr_matrix(X_test) if sparse else X_test
    assert_allclose(model.predict_joint_log_proba(X_in), expected, rtol=1e-12)
    assert_allclose(model.predict_log_proba(X_in),
                    expected - logsumexp(expected, axis=1, keepdims=True), rtol=1e-11, atol=1e-12)
    assert_allclose(model.predict_proba(X_in).sum(axis=1), 1.0, rtol=1e-13)
    # the posterior mean is the plug-in's estimate
    plug_in = MultinomialNB(alpha=model.alpha_).fit(X, y)
    assert_allclose(model.feature_log_prob_, plug_in.feature_log_prob_, rtol=1e-14)
    assert not np.allclose(plug_in.predict_joint_log_proba(X_test), expected)


def test_multinomial_predictive_fractional_and_integer_counts():
    X, y = _counts()
    model = MultinomialNB(alpha=0.3, predictive=True).fit(X, y)
    X_test = np.array([[0.5, 2.5, 0, 1, 7.25, 0], [1e-3, 0, 0, 3, 0, 9]])
    expected = _polya_reference(model, X_test, 0.3)
    for X_in in (X_test, sp.csr_matrix(X_test)):
        assert_allclose(model.predict_joint_log_proba(X_in), expected, rtol=1e-12)
    counts = np.array([[3, 0, 12, 1, 0, 2]])
    assert_array_equal(model.predict_joint_log_proba(counts),  # integer X scored as is
                       model.predict_joint_log_proba(counts.astype(np.float64)))


@pytest.mark.parametrize("whole", [True, False], ids=["gamma", "cache"])
@pytest.mark.parametrize("module", builds("_jll"), ids=lambda m: m.__name__.split(".")[-1])
def test_polya_kernel_of_every_build(module, whole):
    """The baseline and AVX2 builds of the kernel score the predictive alike (CSR and dense),
    whole counts beyond the blocks from the gamma table, or without it from the cache."""
    X, y = _counts()
    model = MultinomialNB(alpha=0.3, predictive=True).fit(X, y)
    params = model._params_of(model._fitted)
    assert params.polya_counts is not None
    extra = (params.polya_counts, params.polya_gamma) if whole else (None, None)
    X_test = X[:10].copy()
    X_test[0, 1] = 20.5
    X_test[1, 2] = 17
    X_test[2, 0] = 2000
    expected = _polya_reference(model, X_test, 0.3)
    out, out_dense = np.empty((10, N_CLASSES)), np.empty((10, N_CLASSES))
    X_csr = sp.csr_matrix(X_test)
    assert module.jll_linear_csr(X_csr.data, X_csr.indices, X_csr.indptr, params.table,
                                 params.bias, False, 0.0, False, 0, out, 2, params.polya_blocks,
                                 params.polya_lengths, *extra) == 0
    assert module.jll_linear_dense(X_test, params.table, params.bias, False, 0.0, 0, out_dense,
                                   1, params.polya_blocks, params.polya_lengths, *extra) == 0
    assert_allclose(out, expected, rtol=1e-12)
    assert_allclose(out_dense, expected, rtol=1e-12)


@pytest.mark.parametrize("alpha", [1e-8, 0.3, 7.0, 1e6, 1e300])
def test_rising_prefix_differences_keep_every_digit(alpha):
    """R(alpha + m, x) as a difference of the gamma table's entries, where the entries
    themselves are up to ~1e6 times larger than the difference (and, for alpha = 1e300, 4.6e7
    in magnitude), is within a few ulps of the 50-digit value."""
    n = (1 << 16) + 1024
    table = fastgen.naive_bayes.rising_prefix(alpha, n)
    assert table.shape == (n, 2) and table[0].tolist() == [0.0, 0.0]
    for m, x in [(0, 1), (0, 9), (3, 40), (1000, 9), (60000, 13), (65000, 1500), (0, n - 1)]:
        got = (table[m + x, 0] - table[m, 0]) + (table[m + x, 1] - table[m, 1])
        with mpmath.workdps(400):  # loggamma(1e300) has 303 digits before the point
            ref = mpmath.loggamma(mpmath.mpf(alpha) + m + x) - mpmath.loggamma(mpmath.mpf(alpha) + m)
        assert got == pytest.approx(float(ref), rel=4e-15)


def test_multinomial_predictive_gamma_table_edges():
    """Whole training counts and one alpha give the gamma table; a class whose count plus the
    document's reaches beyond it (a count above 2^16 in training, a document count beyond the
    margin) computes its term, and so do fractional counts; fractional training counts or a
    per-feature alpha score without the table. All equal the lgamma formula."""
    X, y = _counts()
    X[0, 0] = 100_000  # capped in the table: class 0 computes feature 0's large counts
    X_test = np.zeros((5, X.shape[1]))
    X_test[0, 0], X_test[0, 1] = 30, 12  # gamma for the other classes
    X_test[1, 0] = 70_000  # beyond the table for every class
    X_test[2, 2] = 1500  # beyond the margin only for classes with large counts
    X_test[3, 3] = 9.5  # fractional: the cache
    X_test[4] = [9, 10, 11, 12, 13, 14]
    for alpha, weight, table in [(0.2, None, True), (0.2, 0.5, False),
                                 (RNG.uniform(0.1, 2, X.shape[1]), None, False)]:
        model = MultinomialNB(alpha=alpha, predictive=True)
        model.fit(X, y, sample_weight=None if weight is None else np.full(len(y), weight))
        params = model._params_of(model._fitted)
        assert (params.polya_counts is not None) == table
        a_all = model.feature_count_ + alpha
        expected = np.array([[model.class_log_prior_[c]
                              + float(sum(_log_rising_mp(a_j, x_j) for a_j, x_j in zip(a, x))
                                      - _log_rising_mp(a.sum(), x.sum()))
                              for c, a in enumerate(a_all)] for x in X_test])
        # a count of 70,000 has terms near 8e5 that cancel to tens: float64 keeps 1e-15 of them
        scale = np.array([[float(_log_rising_mp(a.sum(), x.sum())) for a in a_all]
                          for x in X_test])
        for X_in in (X_test, sp.csr_matrix(X_test)):
            got = model.predict_joint_log_proba(X_in)
            assert np.all(np.abs(got - expected) <= 1e-12 * np.abs(expected) + 1e-15 * scale)


def test_multinomial_predictive_large_counts_recurring():
    """Counts beyond the table recur across rows (the kernel keeps them per thread in a small
    cache, where different counts collide): each row is still its own Polya probability."""
    X, y = _counts()
    model = MultinomialNB(alpha=0.5, predictive=True).fit(X, y)
    rng = np.random.default_rng(5)
    X_test = rng.integers(9, 60, (300, X.shape[1])).astype(np.float64)
    X_test[rng.random(X_test.shape) < 0.3] = 0
    X_test[::7, 0] = 12.5
    expected = _polya_reference(model, X_test, 0.5)
    for X_in in (X_test, sp.csr_matrix(X_test)):
        assert_allclose(model.predict_joint_log_proba(X_in), expected, rtol=1e-12)
    assert_array_equal(model.predict_joint_log_proba(X_test[299:]),
                       model.predict_joint_log_proba(X_test)[299:])


def _log_rising_mp(a, x):
    with mpmath.workdps(50):
        return mpmath.loggamma(mpmath.mpf(a) + mpmath.mpf(x)) - mpmath.loggamma(mpmath.mpf(a))


@pytest.mark.parametrize("a, x", [(0.5, 3.0), (29.9, 1e5), (30.0, 1e-3), (30.0, 1e5),
                                  (1e3, 1e103), (1e16, 2.5), (1e160, 1e160), (1e300, 7.0)])
def test_log_rising_keeps_its_digits(a, x):
    """The evidence's lgamma(a + x) - lgamma(a): Stirling's series from a = 30, as the scoring
    kernels compute it, to a few ulps also for a huge x (where the series' last term was
    once inf / inf, NaN) or a huge a."""
    from fastgen._bayes import log_rising

    with mpmath.workdps(400):  # (1e300 + 7 needs 300 digits)
        expected = float(mpmath.loggamma(mpmath.mpf(a) + mpmath.mpf(x))
                         - mpmath.loggamma(mpmath.mpf(a)))
    assert float(log_rising(a, x)) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("alpha", [1e-8, 1.0, 1e6])
def test_multinomial_predictive_huge_a_and_counts(alpha):
    """Accurate where a difference of lgammas would cancel (a = 1e6 beside small counts,
    a total A of 1e13 beside a document) and for counts of 1e9."""
    X = np.array([[1e9, 3, 0, 5e4], [2, 0, 7, 1], [0, 1, 1e6, 0]], dtype=np.float64)
    y = np.array([0, 1, 1])
    model = MultinomialNB(alpha=alpha, predictive=True).fit(X, y)
    X_test = np.array([[1, 2, 9, 1e9], [3.5, 0, 1, 20], [1, 1, 1, 1]], dtype=np.float64)
    jll = model.predict_joint_log_proba(X_test)
    for c in range(2):
        a = model.feature_count_[c] + alpha
        for i, x in enumerate(X_test):
            expected = (sum(_log_rising_mp(a_j, x_j) for a_j, x_j in zip(a, x))
                        - _log_rising_mp(a.sum(), x.sum()))
            assert jll[i, c] - model.class_log_prior_[c] == pytest.approx(float(expected),
                                                                          rel=1e-12)


def test_predictive_of_counts_beyond_2_to_30_is_refused():
    """A document of more words than 2^30 was scored with an error of about n log(n) 2^-52
    nats (its terms cancel): posteriors of 1.0 / 1e-14 where the exact ones are 0.04 / 0.96
    at n = 3e15. MultinomialNB refuses such rows (their total count), PoissonNB such counts,
    dense or CSR; at the bound they are scored to about 1e-5 nats (outside attack)."""
    X = np.array([[2, 4], [4, 5], [4, 5], [6, 4]], dtype=np.float64)
    y = np.array([0, 0, 1, 1])
    at_bound = np.array([[2.0**30 - 3, 3.0]])
    model = MultinomialNB(predictive=True).fit(X, y)
    with mpmath.workdps(60):
        exact = []
        for c in range(2):
            a = X[y == c].sum(axis=0) + 1.0
            exact.append(sum(_log_rising_mp(a_j, x_j) for a_j, x_j in zip(a, at_bound[0]))
                         - _log_rising_mp(a.sum(), at_bound.sum()))
        exact = np.array([float(v) for v in exact])
    expected = np.exp(exact - logsumexp(exact))
    assert_allclose(model.predict_proba(at_bound)[0], expected, atol=1e-5)
    poisson = fastgen.PoissonNB(predictive=True).fit(X, y)
    mixed = fastgen.MixedNB(["poisson", "poisson"], predictive=True).fit(X, y)
    assert np.isfinite(poisson.predict_proba(np.array([[2.0**30, 3.0]]))).all()
    for beyond in (np.array([[2.0**30, 3.0]]), np.array([[3e15, 3.0]])):
        for rows in (beyond, sp.csr_matrix(beyond)):
            with pytest.raises(ValueError, match="total count beyond 2\\^30"):
                model.predict_proba(rows)
            with pytest.raises(ValueError, match="predictive=True"):
                poisson.predict_proba(rows * 2.0)
            with pytest.raises(ValueError, match="MixedNB's poisson columns: .*2\\^30"):
                mixed.predict_proba(beyond * 2.0)  # (dense only)
            # the plug-in and the training data are not bounded
            MultinomialNB().fit(X, y).predict_proba(rows)
            MultinomialNB(predictive=True).fit(np.vstack([X, beyond]), np.r_[y, 0])


def test_multinomial_predictive_sequence_is_the_evidence():
    """The product of each document's predictive given the documents before it is the
    marginal likelihood of them all."""
    X, y = _counts(n=15)
    alpha = 0.4
    total = 0.0
    for i in range(len(y)):
        if i == 0:  # nothing seen yet: the prior's Polya
            total += _dcm_sequence(X[0], np.full(X.shape[1], alpha))
            continue
        model = MultinomialNB(alpha=alpha, fit_prior=False, predictive=True)
        model.partial_fit(X[:i], y[:i], classes=np.arange(N_CLASSES))
        total += model.predict_joint_log_proba(X[i:i + 1])[0, y[i]] + np.log(N_CLASSES)
    full = MultinomialNB(alpha=alpha).fit(X, y)
    assert total == pytest.approx(full.log_evidence_, rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multinomial_predictive_threads_rows_and_dtypes(dtype):
    X, y = _counts(n=200, n_features=40)
    model = MultinomialNB(alpha=0.2, predictive=True, n_threads=1).fit(X.astype(dtype), y)
    X_test = sp.csr_matrix(X.astype(dtype))
    one = model.predict_proba(X_test)
    assert one.dtype == dtype
    model.set_params(n_threads=2)
    assert_array_equal(model.predict_proba(X_test), one)
    assert_array_equal(np.vstack([model.predict_proba(X_test[i]) for i in range(5)]), one[:5])
    reference = MultinomialNB(alpha=0.2, predictive=True).fit(X, y).predict_joint_log_proba(X)
    assert_allclose(model.predict_joint_log_proba(X_test), reference,
                    rtol=1e-5 if dtype == np.float32 else 1e-13)


def test_predictive_through_partial_fit_merge_files_and_pickle(tmp_path):
    X, y = _counts(n=60, n_features=12)
    X_test = X[:7]
    full = MultinomialNB(alpha="evidence", predictive=True).fit(X, y)
    expected = full.predict_joint_log_proba(X_test)
    streamed = MultinomialNB(alpha="evidence", predictive=True)
    for rows in np.array_split(np.arange(len(y)), 3):
        streamed.partial_fit(sp.csr_matrix(X[rows]), y[rows], classes=np.arange(N_CLASSES))
    merged = MultinomialNB(alpha="evidence", predictive=True).fit(X[:25], y[:25]).merge(
        MultinomialNB(alpha="evidence", predictive=True).fit(X[25:], y[25:]))
    full.save(tmp_path / "model")
    loaded = fastgen.load(tmp_path / "model")
    assert loaded.predictive is True
    for model in (streamed, merged, loaded, pickle.loads(pickle.dumps(full))):
        assert_allclose(model.predict_joint_log_proba(X_test), expected, rtol=1e-11)
    switched = MultinomialNB(alpha="evidence").fit(X, y).set_params(predictive=True)
    assert_allclose(switched.predict_joint_log_proba(X_test), expected, rtol=1e-11)


def test_predictive_on_dask():
    """A dask fit and lazy dask predictions (the local scheduler) equal the in-memory ones."""
    da = pytest.importorskip("dask.array")
    X, y = _counts(n=60, n_features=12)
    expected = MultinomialNB(predictive=True).fit(X, y)
    dX, dy = da.from_array(X, chunks=(20, X.shape[1])), da.from_array(y, chunks=20)
    ours = MultinomialNB(predictive=True).fit(dX, dy)
    assert_allclose(ours.predict_joint_log_proba(X), expected.predict_joint_log_proba(X),
                    rtol=1e-12)
    lazy = expected.predict_proba(dX)
    assert isinstance(lazy, da.Array)
    assert_allclose(lazy.compute(scheduler="synchronous"), expected.predict_proba(X),
                    rtol=1e-12)


@settings(deadline=None, max_examples=40)
@given(arrays(np.float64, (6, 5), elements=st.sampled_from([0.0, 1.0, 2.0, 9.0, 0.5, 1e7,
                                                            2.0**52])),
       st.sampled_from([1e-10, 0.01, 1.0, 1e8]))
def test_multinomial_predictive_posteriors_are_finite(X, alpha):
    y = np.arange(6) % 2
    if not X[:3].sum() or not X[3:].sum():
        X[0, 0] = X[5, 0] = 1.0
    model = MultinomialNB(alpha=alpha, predictive=True).fit(X, y)
    test = np.minimum(X[::-1], 2.0**20)  # (rows beyond 2^30 words are refused)
    proba = model.predict_proba(test)
    assert np.isfinite(proba).all()
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert (model.predict_log_proba(test) <= 0).all()


# ------------------------------------------------------------ BernoulliNB and CategoricalNB


def _binary(n=30, n_features=5, rng=RNG):
    y = np.arange(n) % N_CLASSES
    p = rng.uniform(0.05, 0.95, (N_CLASSES, n_features))
    return (rng.random((n, n_features)) < p[y]).astype(np.float64), y


def test_bernoulli_predictive_is_the_integrated_beta():
    X, y = _binary()
    alpha = 0.7
    model = BernoulliNB(alpha=alpha, predictive=True).fit(X, y)
    plug_in = BernoulliNB(alpha=alpha).fit(X, y)
    X_test = X[:4]
    jll = model.predict_joint_log_proba(X_test)
    assert_array_equal(jll, plug_in.predict_joint_log_proba(X_test))
    present, total = model.feature_count_, model.class_count_
    for i, x in enumerate(X_test):
        for c in range(N_CLASSES):
            log_p = 0.0
            for j, value in enumerate(x):
                posterior = beta_dist(present[c, j] + alpha, total[c] - present[c, j] + alpha)
                integral = quad(lambda p: (p if value else 1 - p) * posterior.pdf(p), 0, 1,
                                epsabs=0, epsrel=1e-12)[0]
                log_p += np.log(integral)
            assert jll[i, c] - model.class_log_prior_[c] == pytest.approx(log_p, rel=1e-9)


def _codes(n=40, rng=RNG):
    y = np.arange(n) % N_CLASSES
    prob = rng.dirichlet(np.full(4, 0.7), size=(N_CLASSES, 3))
    X = np.array([[rng.choice(4, p=prob[c, j]) for j in range(3)] for c in y], dtype=np.float64)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def test_categorical_predictive_is_the_dirichlet_multinomial_of_one_draw():
    X, y = _codes()
    alpha = 0.5
    model = CategoricalNB(alpha=alpha, predictive=True, min_categories=5).fit(X, y)
    X_test = np.array([[0, 4, 2], [3, np.nan, 1]])
    jll = model.predict_joint_log_proba(X_test)
    assert_array_equal(jll, CategoricalNB(alpha=alpha, min_categories=5).fit(X, y)
                       .predict_joint_log_proba(X_test))
    for i, x in enumerate(X_test):
        for c in range(N_CLASSES):
            expected = model.class_log_prior_[c]
            for j, value in enumerate(x):
                if np.isnan(value):
                    continue
                one_hot = np.eye(model.n_categories_[j])[int(value)]
                expected += dirichlet_multinomial.logpmf(
                    one_hot, model.category_count_[j][c] + alpha, 1)
            assert jll[i, c] == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------------ posterior draws


def _models():
    X, y = _counts(n=30, n_features=4)
    B, yb = _binary(n=30, n_features=4)
    C, yc = _codes(n=30)
    return [(MultinomialNB(alpha=0.8, predictive=True), X, y),
            (BernoulliNB(alpha=0.8, predictive=True), B, yb),
            (CategoricalNB(alpha=0.8, predictive=True), C, yc)]


def _posterior_moments(model):
    """Mean and variance of each drawn probability, class by class, under the posterior, in
    the layout of feature_log_prob_ (concatenated over CategoricalNB's features)."""
    alpha = model.alpha_
    if isinstance(model, MultinomialNB):
        a = model.feature_count_ + alpha
        total = a.sum(axis=1, keepdims=True)
    elif isinstance(model, BernoulliNB):
        a = model.feature_count_ + alpha
        total = model.class_count_[:, None] + 2 * alpha
    else:
        counts = [count + alpha for count in model.category_count_]
        a = np.hstack(counts)
        total = np.hstack([np.repeat(count.sum(axis=1, keepdims=True), count.shape[1], axis=1)
                           for count in counts])
    mean = a / total
    return mean, mean * (1 - mean) / (total + 1)


def _drawn_probabilities(drawn):
    log_prob = drawn.feature_log_prob_
    return np.exp(np.hstack(log_prob) if isinstance(log_prob, list) else log_prob)


@pytest.mark.parametrize("index", range(3), ids=["multinomial", "bernoulli", "categorical"])
def test_draws_have_the_posterior_moments(index):
    model, X, y = _models()[index]
    model.fit(X, y)
    n_draws = 3000
    draws = model.sample_posterior(n_draws, random_state=7)
    assert all(type(d) is type(model) and d.predictive is False and d.alpha == 0 for d in draws)
    probabilities = np.array([_drawn_probabilities(d) for d in draws])
    mean, var = _posterior_moments(model)
    standard_error = np.sqrt(var / n_draws)
    assert np.abs(probabilities.mean(axis=0) - mean).max() < 5 * standard_error.max()
    # the variance of the draws: its standard error from the fourth moment, bounded by var
    assert_allclose(probabilities.var(axis=0), var, rtol=0.15)
    assert_array_equal(draws[0].class_log_prior_, model.class_log_prior_)


@pytest.mark.parametrize("index", range(3), ids=["multinomial", "bernoulli", "categorical"])
def test_draws_average_to_the_predictive(index):
    """The mean over draws of P(x | c, h) is the predictive P(x | c, D), class by class (short
    documents: the likelihood of a long one is heavy-tailed over the draws, and its mean over
    a few thousand of them, with its standard error, misleading)."""
    model, X, y = _models()[index]
    model.fit(X, y)
    X_test = np.array([[2.0, 1, 0, 0], [0, 1, 1, 1], [1, 0, 0, 3]]) if index == 0 else X[:3]
    predictive = model.predict_joint_log_proba(X_test) - model.class_log_prior_
    joint = np.array([d.predict_joint_log_proba(X_test) - model.class_log_prior_
                      for d in model.sample_posterior(4000, random_state=3)])
    likelihood = np.exp(joint)
    standard_error = likelihood.std(axis=0) / np.sqrt(len(joint))
    assert (np.abs(likelihood.mean(axis=0) - np.exp(predictive)) < 5 * standard_error).all()
    if index == 0:  # ... where the plug-in's likelihood is refuted: the check can fail
        plug_in = (MultinomialNB(alpha=0.8).fit(X, y).predict_joint_log_proba(X_test)
                   - model.class_log_prior_)
        assert (np.abs(likelihood.mean(axis=0) - np.exp(plug_in)) > 5 * standard_error).any()


def test_draws_with_tiny_alpha_are_valid_models():
    """Dirichlet parameters of 1e-300: the gammas would underflow to 0 (every probability 0);
    drawn in log space, each class keeps a positive probability, the underflowed ones are 0
    (log -inf), and the drawn model scores without NaN."""
    X, y = _counts(n=12, n_features=8)
    X[:, -1] = 0  # a word no class saw: its parameter is alpha only
    for model, data in ((MultinomialNB(alpha=1e-300), X), (BernoulliNB(alpha=1e-300), X),
                        (CategoricalNB(alpha=1e-300), np.minimum(X, 3))):
        model.fit(data, y)
        for drawn in model.sample_posterior(5, random_state=0):
            probabilities = _drawn_probabilities(drawn)
            assert (probabilities.max(axis=1) > 0).all()
            proba = drawn.predict_proba(data)
            assert np.isfinite(proba).all()
            assert_allclose(proba.sum(axis=1), 1.0)


def test_categorical_draws_with_a_feature_never_observed():
    """A feature with no categories (always missing) has nothing to draw; one a class never
    observed is drawn from the prior, held at the class's weight."""
    X = np.array([[0, np.nan, np.nan], [1, np.nan, 2], [1, np.nan, np.nan], [0, np.nan, np.nan]])
    y = np.array([0, 0, 1, 1])
    model = CategoricalNB(alpha=1.0).fit(X, y)
    (drawn,) = model.sample_posterior(random_state=0)
    assert_array_equal(drawn.n_categories_, [2, 0, 3])
    assert_allclose([count.sum(axis=1) for count in drawn.category_count_],
                    [[2, 2], [0, 0], [1, 2]])
    assert np.isfinite(drawn.predict_proba(X)).all()


def test_drawn_models_are_independent_fitted_models(tmp_path):
    model, X, y = _models()[0]
    model.fit(X, y)
    first, second = model.sample_posterior(2, random_state=np.random.default_rng(1))
    assert not np.array_equal(first.feature_log_prob_, second.feature_log_prob_)
    again = model.sample_posterior(2, random_state=np.random.default_rng(1))[0]
    assert_array_equal(again.feature_log_prob_, first.feature_log_prob_)
    first.save(tmp_path / "drawn")
    assert_array_equal(fastgen.load(tmp_path / "drawn").predict_joint_log_proba(X),
                       first.predict_joint_log_proba(X))
    sample, labels = first.sample(5, random_state=0)  # document lengths were kept
    assert sample.shape == (5, X.shape[1]) and len(labels) == 5


# ------------------------------------------------------------ hostile input


@pytest.mark.parametrize("cls", [MultinomialNB, BernoulliNB, CategoricalNB])
def test_predictive_and_draws_are_checked(cls):
    X, y = _codes(n=12)
    X = np.nan_to_num(X)
    with pytest.raises(ValueError, match="predictive"):
        cls(predictive="yes").fit(X, y)
    with pytest.raises(ValueError, match="alpha > 0"):
        cls(alpha=0.0, predictive=True).fit(X, y)
    unsmoothed = cls(alpha=0.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha > 0"):
        unsmoothed.sample_posterior()
    with pytest.raises(ValueError, match="alpha > 0"):  # (set_params keeps the old model)
        unsmoothed.set_params(predictive=True).fit(X, y)
    for n_draws in (0, 1.5, "3"):
        with pytest.raises(ValueError, match="n_draws"):
            cls().fit(X, y).sample_posterior(n_draws)


def test_draw_of_a_class_without_samples_is_refused():
    X, y = _binary(n=9)
    model = BernoulliNB(fit_prior=False).partial_fit(X, y, classes=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="no training samples"):
        model.sample_posterior()
    assert len(BernoulliNB().partial_fit(X, y, classes=[0, 1, 2, 3]).sample_posterior()) == 1


def test_complement_nb_has_no_predictive():
    assert "predictive" not in ComplementNB().get_params()
    with pytest.raises(TypeError):
        ComplementNB(predictive=True)
    assert not hasattr(ComplementNB, "sample_posterior")


def test_unsmoothed_bernoulli_with_a_class_not_seen_yet_is_quiet():
    """A drawn BernoulliNB is unsmoothed, and may have a class announced but without samples:
    its parameters are derived without an invalid-value warning (inf - inf, overwritten)."""
    X = np.eye(4)
    with np.errstate(all="raise"):
        model = BernoulliNB(alpha=0.0).partial_fit(X, [0, 1, 2, 2], classes=[0, 1, 2, 3])
        assert_array_equal(model.predict(X), [0, 1, 2, 2])


@pytest.mark.parametrize("predictive", [False, True])
def test_sample_of_documents_shorter_than_the_vocabulary(predictive):
    """Documents of fewer words than an eighth of the vocabulary are drawn word by word (the
    Polya urn for the predictive): the counts of 2-word documents over 20 words follow the
    multinomial's, or the Dirichlet-multinomial's, exact probabilities (chi-square over the 210
    outcomes), and the predictive's refute the multinomial. Long documents of another class
    (6 words, drawn all at once) come back in the rows asked for."""
    X = np.zeros((5, 20))
    np.add.at(X, ([0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 19]), 1)  # class 0: 2 words a document
    X[[3, 4], :6] = 1
    y = np.array([0, 0, 0, 1, 1])
    model = MultinomialNB(alpha=0.7, predictive=predictive).fit(X, y)
    asked = np.tile([0, 0, 1], 30000)
    docs, labels = model.sample(y=asked, random_state=5)
    docs = docs.toarray().astype(np.int64)
    assert_array_equal(labels, asked)
    assert_array_equal(docs.sum(axis=1), np.where(asked == 0, 2, 6))
    short = docs[asked == 0]
    a = X[y == 0].sum(axis=0) + 0.7
    outcomes = [np.bincount([i, j], minlength=20)
                for i, j in itertools.combinations_with_replacement(range(20), 2)]
    observed = [np.sum((short == o).all(axis=1)) for o in outcomes]
    multinomial = [stats.multinomial.pmf(o, 2, a / a.sum()) for o in outcomes]
    polya = [stats.dirichlet_multinomial.pmf(o, a, 2) for o in outcomes]
    expected = polya if predictive else multinomial
    assert stats.chisquare(observed, np.multiply(expected, len(short))).pvalue > 1e-4
    if predictive:
        assert stats.chisquare(observed, np.multiply(multinomial, len(short))).pvalue < 1e-9


def test_sample_of_a_predictive_multinomial_nb_draws_polya_documents():
    """Documents of one length L from the Polya predictive: a word's count has mean L p and
    variance L p (1 - p) (A + L) / (A + 1), p = a / A (tolerance 5 standard errors); the plug-in
    multinomial's variance L p (1 - p) is refuted by the same draws."""
    X = np.array([[3, 1, 0, 0], [2, 2, 0, 0], [0, 0, 2, 2], [0, 1, 1, 2]], dtype=np.float64)
    y = [0, 0, 1, 1]
    model = MultinomialNB(alpha=0.5, predictive=True).fit(X, y)
    docs = model.sample(20000, y=0, random_state=0)[0].toarray()
    assert (docs.sum(axis=1) == 4).all()  # every training document has 4 words
    a = X[:2].sum(axis=0) + 0.5
    A, L, n = a.sum(), 4, len(docs)
    p = a / A
    mean, var = L * p, L * p * (1 - p) * (A + L) / (A + 1)
    assert np.all(np.abs(docs.mean(axis=0) - mean) < 5 * np.sqrt(var / n))
    kurtosis_bound = 5 * np.sqrt(2.0 / n) * 3 * var  # a generous standard error of a variance
    assert np.all(np.abs(docs.var(axis=0) - var) < kurtosis_bound)
    assert np.all(np.abs(docs.var(axis=0) - L * p * (1 - p)) > kurtosis_bound)


def test_draws_beyond_the_machines_memory_are_refused_up_front(monkeypatch):
    """sample_posterior(1_000_000) of a 20 x 5000 model was accepted and filled the memory
    (about 1.5 TB) draw by draw, holding the model's lock: the first draw's size now bounds
    n_draws by the machine's memory, and the draws no longer hold the lock (a partial_fit
    beside them copies the statistics it would have added to in place) (outside attack)."""
    from fastgen import _bayes

    X, y = _counts(n=40, n_features=50)
    model = MultinomialNB().fit(X, y)
    stats, _ = model._draw(model._fitted, np.random.default_rng(0))
    per_draw = 2 * sum(v.nbytes for v in stats.values() if isinstance(v, np.ndarray))
    monkeypatch.setattr(_bayes, "_physical_memory", lambda: 10 * per_draw)
    assert len(model.sample_posterior(10, random_state=0)) == 10
    with pytest.raises(ValueError, match="n_draws=11 models would take"):
        model.sample_posterior(11, random_state=0)
    monkeypatch.setattr(_bayes, "_physical_memory", lambda: None)  # a system that does not say
    assert len(model.sample_posterior(11, random_state=0)) == 11
    # a batch added by another thread while the draws are made: it does not wait for them
    # (the lock is not held), and the draws after it are of the statistics before it
    import threading

    draw, finished = MultinomialNB._draw, []

    def drawing(self, fitted, rng):
        if not finished:
            adding = threading.Thread(target=lambda: finished.append(model.partial_fit(X, y)))
            adding.start()
            adding.join(timeout=30)
            assert finished, "partial_fit waited for the draws"
        return draw(self, fitted, rng)

    expected = [d.feature_count_ for d in model.sample_posterior(3, random_state=1)]
    counts = model.feature_count_.copy()
    monkeypatch.setattr(MultinomialNB, "_draw", drawing)
    drawn = [d.feature_count_ for d in model.sample_posterior(3, random_state=1)]
    for got, want in zip(drawn, expected):
        assert_array_equal(got, want)
    assert_array_equal(model.feature_count_, 2 * counts)  # the batch was added
