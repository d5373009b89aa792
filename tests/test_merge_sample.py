"""merge (additive statistics) and sample (seed 004) on every model."""
import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

import fastgen

RNG = np.random.default_rng(0)
N = 600
Y = RNG.integers(0, 3, N)
DENSE = RNG.normal(size=(N, 4)) + Y[:, None]
COUNTS = sp.csr_matrix(RNG.poisson(1.0 + Y[:, None] * np.arange(1, 7) / 3, size=(N, 6))
                       .astype(np.float64))
CODES = np.minimum(RNG.poisson(1.0 + Y[:, None], size=(N, 3)), 4).astype(np.float64)

CASES = [
    (fastgen.MultinomialNB, {}, COUNTS),
    (fastgen.ComplementNB, {}, COUNTS),
    (fastgen.BernoulliNB, {}, COUNTS),
    (fastgen.PoissonNB, {}, COUNTS.toarray()),
    (fastgen.GaussianNB, {}, DENSE),
    (fastgen.CategoricalNB, {}, CODES),
    (fastgen.LinearDiscriminantAnalysis, {}, DENSE),
    (fastgen.LinearDiscriminantAnalysis, {"covariance": "spherical"}, DENSE),
    (fastgen.LinearDiscriminantAnalysis, {"shrinkage": "auto"}, DENSE),
    (fastgen.QuadraticDiscriminantAnalysis, {}, DENSE),
    (fastgen.MixedNB, {"feature_types": ["gaussian"] * 4}, DENSE),
    (fastgen.BaselineClassifier, {}, DENSE),
]
IDS = [f"{cls.__name__}{params}" for cls, params, _ in CASES]


@pytest.mark.parametrize("cls, params, X", CASES, ids=IDS)
def test_merge_equals_fit_on_both(cls, params, X):
    """Two halves merged equal one fit on everything; a class only one half saw is kept."""
    first = Y[: N // 2] != 2  # class 2 only in the second half
    a = cls(**params).fit(X[: N // 2][first], Y[: N // 2][first])
    b = cls(**params).fit(X[N // 2:], Y[N // 2:])
    stack = sp.vstack if sp.issparse(X) else np.vstack
    whole = cls(**params).fit(stack([X[: N // 2][first], X[N // 2:]]),
                              np.concatenate([Y[: N // 2][first], Y[N // 2:]]))
    assert a.merge(b) is a
    np.testing.assert_array_equal(a.classes_, whole.classes_)
    assert_allclose(a.class_count_, whole.class_count_)
    assert_allclose(a.predict_log_proba(X), whole.predict_log_proba(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls, params, X", CASES, ids=IDS)
def test_merge_refuses_mismatched_models(cls, params, X):
    model = cls(**params).fit(X, Y)
    with pytest.raises(ValueError, match="same kind"):
        model.merge(fastgen.BaselineClassifier().fit(DENSE, Y) if cls is not
                    fastgen.BaselineClassifier else fastgen.GaussianNB().fit(DENSE, Y))
    narrower = X[:, :-1] if not sp.issparse(X) else X[:, :-1]
    other_params = dict(params)
    if "feature_types" in other_params:
        other_params["feature_types"] = other_params["feature_types"][:-1]
    with pytest.raises(ValueError, match="features|parameters"):
        model.merge(cls(**other_params).fit(narrower, Y))
    with pytest.raises(fastgen.NotFittedError):
        model.merge(cls(**params))


@pytest.mark.parametrize("cls, params, X",
                         [c for c in CASES if c[0] is not fastgen.BaselineClassifier],
                         ids=[i for i, c in zip(IDS, CASES)
                              if c[0] is not fastgen.BaselineClassifier])
def test_sample_follows_the_model(cls, params, X):
    """Samples have the training shape, the requested labels, and class means close to the
    training data's (4,000 draws); refitting on them recovers similar predictions."""
    model = cls(**params).fit(X, Y)
    Xs, ys = model.sample(4000, random_state=0)
    assert Xs.shape == (4000, X.shape[1])
    assert set(np.unique(ys)) <= set(model.classes_)
    dense, dense_s = (X.toarray() if sp.issparse(X) else X), (
        Xs.toarray() if sp.issparse(Xs) else np.asarray(Xs))
    if cls is fastgen.BernoulliNB:
        dense = (dense > 0).astype(float)
    for c in model.classes_:
        assert_allclose(dense_s[ys == c].mean(axis=0), dense[Y == c].mean(axis=0), atol=0.35,
                        err_msg=str(c))
    refit = cls(**params).fit(Xs, ys)
    agree = np.mean(refit.predict(X) == model.predict(X))
    assert agree > 0.85
    X1, y1 = model.sample(5, y=model.classes_[1], random_state=1)
    assert (y1 == model.classes_[1]).all() and X1.shape[0] == 5
    X2, y2 = model.sample(y=model.classes_[[0, 2, 2]], random_state=1)
    np.testing.assert_array_equal(y2, model.classes_[[0, 2, 2]])
    assert X2.shape[0] == 3
    a, _ = model.sample(7, random_state=3)
    b, _ = model.sample(7, random_state=3)
    assert_allclose(a.toarray() if sp.issparse(a) else a, b.toarray() if sp.issparse(b) else b)


def test_sample_bad_input():
    model = fastgen.GaussianNB().fit(DENSE, Y)
    with pytest.raises(ValueError, match="labels from classes_"):
        model.sample(3, y=7)
    with pytest.raises(ValueError, match="n_samples must be"):
        model.sample(0)
    with pytest.raises(TypeError, match="no model of X"):
        fastgen.BaselineClassifier().fit(DENSE, Y).sample(2)
    with pytest.raises(fastgen.NotFittedError):
        fastgen.GaussianNB().sample(2)


def test_sample_mixed_dataframe_gives_labels():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": DENSE[:, 0], "colour": np.array(["red", "green", "blue"])[
        CODES[:, 0].astype(int) % 3]})
    model = fastgen.MixedNB().fit(frame, Y)
    Xs, ys = model.sample(50, random_state=0)
    assert list(Xs.columns) == ["x", "colour"]
    assert set(Xs["colour"]) <= {"red", "green", "blue"}
    assert_allclose(model.predict_proba(Xs).sum(axis=1), 1.0)


@pytest.mark.parametrize("cls", [fastgen.MultinomialNB, fastgen.ComplementNB])
def test_document_lengths_are_the_same_however_the_data_came(cls, tmp_path):
    """The length statistics that sample draws from: fit, 150 partial_fit batches (more than
    are kept as separate entries), a merge of two halves, a pickle and a model file all give
    fit's."""
    import pickle

    from fastgen.naive_bayes import MAX_LENGTH_ENTRIES, length_counts

    def lengths(model):
        return length_counts(model._fitted.stats, len(model.classes_))

    weight = RNG.uniform(0.5, 2.0, N)
    whole = cls().fit(COUNTS, Y, sample_weight=weight)
    expected = lengths(whole).toarray()
    assert expected.sum() == pytest.approx(weight.sum())
    stream = cls()
    for rows in np.array_split(np.arange(N), 150):
        stream.partial_fit(COUNTS[rows], Y[rows], classes=[0, 1, 2], sample_weight=weight[rows])
    # added up into one entry per (class, length) on the way
    assert len(stream._fitted.stats["length"]) <= MAX_LENGTH_ENTRIES + N // 150 + 1
    half_a = cls().fit(COUNTS[: N // 2], Y[: N // 2], sample_weight=weight[: N // 2])
    half_b = cls().fit(COUNTS[N // 2:], Y[N // 2:], sample_weight=weight[N // 2:])
    path = tmp_path / "model.fastgen"
    whole.save(path)
    for model in (stream, half_a.merge(half_b), pickle.loads(pickle.dumps(stream)),
                  fastgen.load(path)):
        got = lengths(model).toarray()
        assert_allclose(got, expected[:, : got.shape[1]], rtol=1e-12)
        assert not expected[:, got.shape[1]:].any()
    # the weights were copied: changing the caller's array afterwards changes nothing
    weight[:] = 100.0
    assert_allclose(lengths(stream).toarray(), expected, rtol=1e-12)


def test_many_distinct_lengths_are_not_sorted_at_every_batch(monkeypatch):
    """With more distinct (class, length) pairs than MAX_LENGTH_ENTRIES, partial_fit compacts
    its length entries only when they have doubled since the last compaction (it did so at
    every batch: 80% of the stream's time), and still keeps fit's statistics."""
    from fastgen import naive_bayes
    from fastgen.naive_bayes import length_counts

    MAX_LENGTH_ENTRIES = 2**16  # (the bound, lowered: a stream of its size takes a second)
    monkeypatch.setattr(naive_bayes, "MAX_LENGTH_ENTRIES", MAX_LENGTH_ENTRIES)
    n, n_classes, batch = 4 * MAX_LENGTH_ENTRIES, 40, 2_000
    rng = np.random.default_rng(1)
    length = rng.integers(1, 5_000, n).astype(np.float64)  # ~100,000 distinct pairs
    X = sp.csr_matrix((length, np.zeros(n, dtype=np.int32), np.arange(n + 1)), shape=(n, 1))
    y = rng.integers(0, n_classes, n)
    calls = []
    compact = naive_bayes._compact_lengths
    monkeypatch.setattr(naive_bayes, "_compact_lengths",
                        lambda stats, k: calls.append(len(stats["length"])) or compact(stats, k))
    stream, most = fastgen.MultinomialNB(), 0
    for start in range(0, n, batch):
        stream.partial_fit(X[start:start + batch], y[start:start + batch],
                           classes=np.arange(n_classes))
        most = max(most, len(stream._fitted.stats["length"]))
    distinct = length_counts(stream._fitted.stats, n_classes).nnz
    assert distinct > MAX_LENGTH_ENTRIES
    assert len(calls) <= 4, calls  # (of 132 batches)
    assert most <= 2 * distinct + batch
    whole = fastgen.MultinomialNB().fit(X, y)
    assert_allclose(length_counts(stream._fitted.stats, n_classes).toarray(),
                    length_counts(whole._fitted.stats, n_classes).toarray(), rtol=1e-12)


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (1.5, TypeError), ("abc", TypeError),
                                         (True, TypeError), ([1, 2], TypeError)])
def test_random_state_is_named(seed, error):
    """sample and sample_posterior refuse a bad random_state by name (NumPy's SeedSequence
    spoke of "entropy", and True was taken as the seed 1)."""
    model = fastgen.MultinomialNB().fit(COUNTS, Y)
    for call in (lambda: model.sample(2, random_state=seed),
                 lambda: model.sample_posterior(1, random_state=seed)):
        with pytest.raises(error, match="random_state must be"):
            call()


@pytest.mark.parametrize("params", [{"alpha": 1e20}, {"alpha": 1e20, "predictive": True}])
def test_poisson_draws_of_huge_rates(params):
    """Rates beyond NumPy's Poisson (about 9.2e18; its "lam value too large" escaped) are drawn
    as whole counts with the Poisson's mean and variance."""
    X = np.array([[2.0, 1.0], [3.0, 0.0], [0.0, 4.0], [1.0, 2.0]])
    model = fastgen.PoissonNB(**params).fit(X, [0, 0, 1, 1])
    draws, _ = model.sample(4_000, random_state=0)
    rate = model.lambda_[0, 0]
    assert rate > 2.0**60 and (draws == np.rint(draws)).all()
    if not params.get("predictive"):  # (the predictive's rates vary by their Gamma)
        z = (draws.mean() - rate) / np.sqrt(rate / draws.size)
        assert abs(z) < 5 and draws.var() / rate == pytest.approx(1.0, rel=0.15)
    mixed = fastgen.PoissonNB(alpha=1.0).fit(X, [0, 0, 1, 1])  # small rates: Poisson's own
    small, _ = mixed.sample(2_000, random_state=0)
    assert small.max() < 30 and (small == np.rint(small)).all()
