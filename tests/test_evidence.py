"""The evidence of the discrete models (log_evidence_) and alpha="evidence".

References: the evidence as a product of sequential predictive probabilities, each the
Lidstone-smoothed estimate from the rows before (so it cannot depend on the order), and for the
multinomial scipy's Dirichlet-multinomial of each document given the counts before it."""
import numpy as np
import pytest
from numpy.testing import assert_array_equal
import scipy.sparse as sp
from scipy.special import gammaln
from scipy.stats import dirichlet_multinomial

import fastgen
from fastgen import BernoulliNB, CategoricalNB, ComplementNB, MultinomialNB
from fastgen.naive_bayes import _merged

RNG = np.random.default_rng(20261124)


def _categorical_data(n=40, rng=RNG):
    y = rng.integers(0, 3, n)
    # skewed category probabilities per class and feature: the evidence peaks at a moderate alpha
    prob = rng.dirichlet(np.full(4, 0.5), size=(3, 3))
    X = np.array([[rng.choice(4, p=prob[c, j]) for j in range(3)] for c in y], dtype=np.float64)
    X[rng.random(X.shape) < 0.1] = np.nan  # missing values are left out of the evidence
    return X, y


def _counts_data(n=30, n_features=6, rng=RNG):
    theta = rng.dirichlet(np.full(n_features, 0.7), size=3)
    y = rng.integers(0, 3, n)
    X = np.array([rng.multinomial(rng.integers(1, 8), theta[c]) for c in y], dtype=np.float64)
    return X, y


def sequential_categorical(X, y, alpha, n_categories):
    """sum_i log P(x_i | y_i, earlier rows), feature by feature (a missing value skipped)."""
    counts = {}
    total = 0.0
    for row, c in zip(X, y):
        for j, value in enumerate(row):
            if np.isnan(value):
                continue
            seen = counts.setdefault((c, j), np.zeros(n_categories[j]))
            total += np.log((seen[int(value)] + alpha) / (seen.sum() + alpha * n_categories[j]))
            seen[int(value)] += 1
    return total


def sequential_bernoulli(X, y, alpha):
    present = {}
    total = 0.0
    for row, c in zip(X, y):
        n, ones = present.get(c, (0, np.zeros(X.shape[1])))
        p = (ones + alpha) / (n + 2 * alpha)
        total += np.sum(np.where(row > 0, np.log(p), np.log1p(-p)))
        present[c] = (n + 1, ones + (row > 0))
    return total


def dirichlet_multinomial_sequence(X, y, alpha):
    """Each document's Dirichlet-multinomial given its class's earlier counts (scipy), less its
    multinomial coefficient: the evidence of the word sequences."""
    alpha = np.broadcast_to(alpha, X.shape[1])
    counts = {}
    total = 0.0
    for row, c in zip(X, y):
        seen = counts.get(c, np.zeros(X.shape[1]))
        n = int(row.sum())
        coefficient = gammaln(n + 1) - gammaln(row + 1).sum()
        total += dirichlet_multinomial.logpmf(row, alpha + seen, n) - coefficient
        counts[c] = seen + row
    return total


@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0])
def test_categorical_evidence_is_the_sequential_product(alpha):
    X, y = _categorical_data()
    model = CategoricalNB(alpha=alpha, min_categories=5).fit(X, y)
    expected = sequential_categorical(X, y, alpha, model.n_categories_)
    assert model.log_evidence_ == pytest.approx(expected, rel=1e-12)
    order = RNG.permutation(len(y))
    assert sequential_categorical(X[order], y[order], alpha,
                                  model.n_categories_) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_bernoulli_evidence_is_the_sequential_product(alpha, sparse):
    X = (RNG.random((30, 7)) < 0.3).astype(np.float64)
    X[:, 3] = 0  # a feature that no class has
    y = RNG.integers(0, 3, 30)
    model = BernoulliNB(alpha=alpha).fit(sp.csr_matrix(X) if sparse else X, y)
    assert model.log_evidence_ == pytest.approx(sequential_bernoulli(X, y, alpha), rel=1e-12)
    per_feature = BernoulliNB(alpha=np.full(7, alpha)).fit(X, y)
    assert per_feature.log_evidence_ == pytest.approx(model.log_evidence_, rel=1e-12)


@pytest.mark.parametrize("alpha", [0.3, 1.0, np.linspace(0.2, 2.0, 6)])
@pytest.mark.parametrize("sparse", [False, True])
def test_multinomial_evidence_is_the_word_sequences(alpha, sparse):
    X, y = _counts_data()
    model = MultinomialNB(alpha=alpha).fit(sp.csr_matrix(X) if sparse else X, y)
    expected = dirichlet_multinomial_sequence(X, y, alpha)
    assert model.log_evidence_ == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("alpha", [1e15, 1e20])
def test_evidence_of_a_strong_prior_is_the_uniform_likelihood(alpha):
    """Dirichlet(alpha) pins the probabilities at uniform as alpha grows: the evidence tends to
    -(number of words) log(n_features) for the multinomial and -(n n_features) log 2 for the
    Bernoulli, within O(n / alpha). Differences of lgammas of alpha lose every digit there."""
    X, y = _counts_data()
    multinomial = MultinomialNB(alpha=alpha).fit(X, y)
    assert multinomial.log_evidence_ == pytest.approx(-X.sum() * np.log(X.shape[1]), rel=1e-10)
    bernoulli = BernoulliNB(alpha=alpha).fit(X, y)
    assert bernoulli.log_evidence_ == pytest.approx(-X.size * np.log(2.0), rel=1e-10)


@pytest.mark.parametrize("cls", [MultinomialNB, BernoulliNB])
def test_integer_weights_are_repeated_rows(cls):
    X, y = _counts_data()
    weight = RNG.integers(1, 4, len(y))
    weighted = cls(alpha=0.5).fit(X, y, sample_weight=weight)
    repeated = cls(alpha=0.5).fit(np.repeat(X, weight, axis=0), np.repeat(y, weight))
    assert weighted.log_evidence_ == pytest.approx(repeated.log_evidence_, rel=1e-12)


def _models_and_data():
    X, y = _counts_data(n=60)
    Xc, yc = _categorical_data(n=60)
    return [(MultinomialNB, X, y), (BernoulliNB, (X > 0).astype(float), y),
            (CategoricalNB, Xc, yc)]


@pytest.mark.parametrize("cls, X, y", _models_and_data())
def test_evidence_alpha_is_the_maximiser(cls, X, y):
    model = cls(alpha="evidence").fit(X, y)
    grid = np.geomspace(1e-4, 1e2, 601)
    evidence = np.array([cls(alpha=a).fit(X, y).log_evidence_ for a in grid])
    assert 1e-3 < model.alpha_ < 10  # an interior maximum, where a grid can bracket it
    assert model.log_evidence_ >= evidence.max() - 1e-9
    best = np.argmax(evidence)
    assert grid[best - 1] <= model.alpha_ <= grid[best + 1]
    # everything derived uses the chosen alpha
    plain = cls(alpha=model.alpha_).fit(X, y)
    np.testing.assert_allclose(model.predict_log_proba(X), plain.predict_log_proba(X),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("cls, X, y", _models_and_data())
def test_evidence_alpha_through_partial_fit_merge_and_files(cls, X, y, tmp_path):
    model = cls(alpha="evidence").fit(X, y)
    classes = np.unique(y)
    streamed = cls(alpha="evidence")
    for rows in np.array_split(np.arange(len(y)), 3):
        streamed.partial_fit(X[rows], y[rows], classes=classes)
    merged = cls(alpha="evidence").fit(X[:25], y[:25]).merge(
        cls(alpha="evidence").fit(X[25:], y[25:]))
    model.save(tmp_path / "model.fastgen")
    loaded = fastgen.load(tmp_path / "model.fastgen")
    assert loaded.alpha == "evidence"
    for other in (streamed, merged, loaded):
        assert other.alpha_ == pytest.approx(model.alpha_, rel=1e-9)
        assert other.log_evidence_ == pytest.approx(model.log_evidence_, rel=1e-12)
        np.testing.assert_allclose(other.predict_log_proba(X), model.predict_log_proba(X),
                                   rtol=0, atol=1e-8)
    # re-chosen from the accumulated statistics, not kept from the first batch
    first = cls(alpha="evidence").partial_fit(X[:20], y[:20], classes=classes)
    assert first.alpha_ != model.alpha_


def test_alpha_is_checked():
    X, y = _counts_data()
    with pytest.raises(ValueError, match="'alpha' parameter of ComplementNB"):
        ComplementNB(alpha="evidence").fit(X, y)
    with pytest.raises(ValueError, match='"evidence"'):
        MultinomialNB(alpha="max").fit(X, y)
    with pytest.raises(AttributeError, match="alpha > 0"):
        MultinomialNB(alpha=0.0).fit(X, y).log_evidence_
    assert MultinomialNB(alpha=0.5).fit(X, y).alpha_ == 0.5


@pytest.mark.parametrize("values", [
    [3.0, 1.0, 3.0, 7.0, 1.0, 3.0],          # whole numbers: merged by a histogram
    [2.5, 1.0, 2.5, 7.0],                    # a fraction: by a sort
    [1.0, 2.0**20 + 1, 1.0, 2.0**40],        # beyond the histogram's range: by a sort
])
@pytest.mark.parametrize("weighted", [False, True])
def test_equal_counts_merge_the_same_either_way(values, weighted):
    values = np.array(values)
    weight = np.arange(1.0, len(values) + 1) if weighted else None
    distinct, merged = _merged(values, weight)
    expected = np.unique(values)
    assert_array_equal(distinct, expected)
    w = np.ones(len(values)) if weight is None else weight
    assert_array_equal(merged, [w[values == v].sum() for v in expected])


@pytest.mark.parametrize("make, chosen", [
    (lambda: fastgen.MultinomialNB(alpha=1e50), "alpha_"),
    (lambda: fastgen.PoissonNB(alpha=1e50), "alpha_"),
    (lambda: fastgen.CategoricalNB(alpha=1e50), "alpha_"),
    (lambda: fastgen.GaussianNB(prior_strength=1e50, predictive=True), "prior_strength_"),
    (lambda: fastgen.LinearDiscriminantAnalysis(prior_strength=1e50, predictive=True),
     "prior_strength_"),
    (lambda: fastgen.QuadraticDiscriminantAnalysis(prior_strength="evidence", predictive=True),
     "prior_strength_"),
    (lambda: fastgen.MultinomialNB(alpha="evidence"), "alpha_"),
], ids=["multinomial", "poisson", "categorical", "gaussian", "lda", "qda-evidence",
        "multinomial-evidence"])
def test_chosen_prior_and_evidence_are_float64_in_a_float32_model(make, chosen):
    """A float32 model shows its parameters in float32, but not its prior's strength (1e50
    became inf) nor its evidence (rounded by 1e-3 at -2e4, inf beyond 3e38): both are the
    float64 model's."""
    X, y = _counts_data(n=60, n_features=4)
    X = X * 1000 + np.arange(4)  # evidences of -1e4 to -1e51
    wide, narrow = make().fit(X, y), make().fit(X.astype(np.float32), y)
    for name in (chosen, "log_evidence_"):
        value = getattr(narrow, name)
        assert np.asarray(value).dtype == np.float64, name
        assert np.isfinite(value), name
        np.testing.assert_allclose(value, getattr(wide, name), rtol=1e-12, err_msg=name)
    assert narrow.predict_proba(X[:3].astype(np.float32)).dtype == np.float32  # the rule stays
