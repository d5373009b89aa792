"""Text benchmarks: MultinomialNB, BernoulliNB and ComplementNB, fastgen vs scikit-learn.

Groups are ``{model}/{operation}/{dataset}``:

* ``fit`` — ``est.fit(X_train, y_train)`` on a fresh estimator: for both libraries, everything needed
  before the first predict (fastgen's ``fit`` derives its scoring table eagerly; scikit-learn's
  computes ``feature_log_prob_``, and its BernoulliNB derives the rest on every predict call).
  Two attributes that fastgen's prediction does not use are built on first access, and the groups
  ``fit+{attribute}`` time ``fit`` followed by reading the attribute, for both libraries:
  ``feature_count_`` (all three models; after a sparse fit fastgen keeps the counts as a list of
  nonzeros until it is read) and BernoulliNB's ``feature_log_prob_``.
* ``fit-paired`` — ``fit`` on one thread again, the two libraries taking turns: each round times a
  scikit-learn fit (in the round's setup) and then a fastgen fit, each right after an untimed fit of
  its own library, as in the ``fit`` groups' loops (a fit straight after the other library's, which
  evicts the training data from the caches, is 2 ms slower for fastgen). The two then see the same
  moment of a shared machine, whose speed drifts by tens of percent over seconds, whereas the
  ``fit`` groups time each library over a second or two of its own, at different moments. Records
  scikit-learn's times and the median of the per-round ratios (``bench/summarize.py`` reports them
  in a table of their own).
* ``predict_log_proba`` — batch throughput on the whole test set (steady state: the estimator is
  fitted and has been called once on one row before timing).
* ``predict_proba-1row`` — latency of ``predict_proba`` on one CSR row (``benchmark.pedantic`` with many
  rounds, cycling over 256 fixed test rows so that document lengths vary as in real traffic).
* ``partial_fit-5chunks`` — a fresh estimator fed the training set in 5 contiguous row chunks
  (``classes`` given on the first call), then ``feature_log_prob_`` is read.  The real 20 Newsgroups
  training file is sorted by label, so there each chunk sees only a few classes.
* ``multinomial/partial_fit-stream/many-lengths`` — a stream of small batches whose documents
  have many distinct (class, length) pairs, the statistics MultinomialNB keeps for ``sample`` and
  the evidence: 200,000 synthetic documents of 1 to 3,000 words over 1,000 words, 100 classes,
  in batches of 1,000 rows, then ``feature_log_prob_``.

After timing, every result is checked against scikit-learn (fitted once per model and dataset, outside
the timings) with rtol = atol = 1e-9, and fastgen's results for every ``n_threads`` are checked to be
bit-identical to its first run.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import bench_single_rows, make_estimator, record_extra_info
from numpy.testing import assert_allclose, assert_array_equal

MODEL_KEYS = ("multinomial", "bernoulli", "complement")
DATASETS = ("ng20-synth", "ng20-real", "sms")
RTOL = ATOL = 1e-9

N_CHUNKS = 5
PAIRED_ROUNDS = 15  #: fit-paired: rounds, each timing a scikit-learn fit then a fastgen fit


def cases(op: str):
    """(model, dataset) parameters, each with its benchmark group ``model/op/dataset``."""
    return [
        pytest.param(m, d, id=f"{m}-{d}", marks=pytest.mark.benchmark(group=f"{m}/{op}/{d}"))
        for m in MODEL_KEYS
        for d in DATASETS
    ]


def _check_same_as_first(store, key, contender, n_threads, value):
    """fastgen promises bit-identical results for any n_threads."""
    if contender.name != "fastgen":
        return
    if key not in store:
        store[key] = (n_threads, np.array(value, copy=True))
        return
    t0, first = store[key]
    assert_array_equal(value, first, err_msg=f"fastgen n_threads={n_threads} differs from n_threads={t0}")


def _check_params(est, ref_est):
    assert_array_equal(est.classes_, ref_est.classes_)
    assert est.feature_log_prob_.dtype == np.float64
    assert_allclose(est.class_log_prior_, ref_est.class_log_prior_, rtol=RTOL, atol=ATOL)
    assert_allclose(est.feature_log_prob_, ref_est.feature_log_prob_, rtol=RTOL, atol=ATOL)


def _max_abs_err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) if np.size(a) else 0.0


# --------------------------------------------------------------------------------------------------
# throughput


@pytest.mark.parametrize(("model", "dataset"), cases("fit"))
def test_fit(benchmark, contender, n_threads, model, dataset, corpora, references, new_estimator,
             record_info, first_fastgen_result):
    corpus = corpora(dataset)
    X, y = corpus.X_train, corpus.y_train

    est = benchmark(lambda: new_estimator(model).fit(X, y))

    ref = references(model, dataset)
    record_info(X, dataset, max_abs_err=_max_abs_err(est.feature_log_prob_, ref.estimator.feature_log_prob_)
                if ref else None)
    if ref is not None:
        _check_params(est, ref.estimator)
    _check_same_as_first(first_fastgen_result, ("fit", model, dataset), contender, n_threads,
                         est.feature_log_prob_)


@pytest.mark.parametrize(("model", "dataset"), cases("fit-paired"))
def test_fit_paired(benchmark, model, dataset, corpora, references, request):
    contenders = {c.name: c for c in request.config._fastgen_contenders}
    if set(contenders) != {"fastgen", "sklearn"}:
        pytest.skip("fit-paired needs both contenders (fastgen and scikit-learn)")
    corpus = corpora(dataset)
    X, y = corpus.X_train, corpus.y_train
    sklearn_times = []

    def fit(name):
        return make_estimator(contenders[name], model, 1).fit(X, y)

    def sklearn_turn():  # the setup of each round, untimed by pytest-benchmark
        fit("sklearn")
        start = time.perf_counter()
        fit("sklearn")
        sklearn_times.append(time.perf_counter() - start)
        fit("fastgen")  # the fastgen fit timed next follows one of its own, as sklearn's did

    est = benchmark.pedantic(fit, args=("fastgen",), setup=sklearn_turn, rounds=PAIRED_ROUNDS,
                             warmup_rounds=1)
    _check_params(est, references(model, dataset).estimator)
    if benchmark.disabled:  # --benchmark-disable: one untimed call
        return
    fastgen_times = np.asarray(benchmark.stats.stats.data)
    # the rounds' own, after the warm-up round's (--benchmark-cprofile runs setup once more after)
    sk = np.asarray(sklearn_times[1:1 + len(fastgen_times)])
    record_extra_info(benchmark, contenders["fastgen"], 1, X, dataset, request,
                      paired_sklearn_min=float(sk.min()), paired_sklearn_median=float(np.median(sk)),
                      paired_sklearn_mean=float(sk.mean()), paired_sklearn_max=float(sk.max()),
                      paired_ratio_median=float(np.median(sk / fastgen_times)))


LAZY_ATTRIBUTES = [(m, "feature_count_") for m in MODEL_KEYS] + [("bernoulli", "feature_log_prob_")]


@pytest.mark.parametrize(("model", "attribute"), LAZY_ATTRIBUTES,
                         ids=[f"{m}-{a}" for m, a in LAZY_ATTRIBUTES])
@pytest.mark.parametrize("dataset", DATASETS)
def test_fit_then_read(benchmark, contender, n_threads, model, attribute, dataset, corpora,
                       new_estimator):
    """Attributes off fastgen's prediction path, built on first access: fit, then read one."""
    corpus = corpora(dataset)
    X, y = corpus.X_train, corpus.y_train
    benchmark.group = f"{model}/fit+{attribute}/{dataset}"
    benchmark(lambda: getattr(new_estimator(model).fit(X, y), attribute))


@pytest.mark.parametrize(("model", "dataset"), cases("predict_log_proba"))
def test_predict_log_proba(benchmark, contender, n_threads, model, dataset, corpora, references,
                           new_estimator, record_info, first_fastgen_result):
    corpus = corpora(dataset)
    est = new_estimator(model).fit(corpus.X_train, corpus.y_train)
    X = corpus.X_test
    est.predict_log_proba(X[:1])  # warm-up (lazy derivations, imports) outside the timing

    out = benchmark(est.predict_log_proba, X)

    ref = references(model, dataset)
    record_info(X, dataset, max_abs_err=_max_abs_err(out, ref.log_proba) if ref else None,
                accuracy=float(np.mean(est.classes_[np.argmax(out, axis=1)] == corpus.y_test)))
    assert out.shape == (X.shape[0], len(corpus.classes))
    assert out.dtype == np.float64
    if ref is not None:
        assert_allclose(out, ref.log_proba, rtol=RTOL, atol=ATOL)
    _check_same_as_first(first_fastgen_result, ("predict_log_proba", model, dataset), contender,
                         n_threads, out)


@pytest.mark.parametrize(("model", "dataset"), cases(f"partial_fit-{N_CHUNKS}chunks"))
def test_partial_fit(benchmark, contender, n_threads, model, dataset, corpora, references,
                     new_estimator, record_info, first_fastgen_result):
    corpus = corpora(dataset)
    X, y = corpus.X_train, corpus.y_train
    bounds = np.linspace(0, X.shape[0], N_CHUNKS + 1).astype(int)
    chunks = [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]  # sliced outside the timing
    classes = np.unique(y)

    def run():
        est = new_estimator(model)
        est.partial_fit(*chunks[0], classes=classes)
        for Xc, yc in chunks[1:]:
            est.partial_fit(Xc, yc)
        _ = est.feature_log_prob_  # parameters are derived lazily: include that, as in test_fit
        return est

    est = benchmark(run)

    ref = references(model, dataset)
    record_info(X, dataset, n_chunks=N_CHUNKS,
                max_abs_err=_max_abs_err(est.feature_log_prob_, ref.estimator.feature_log_prob_)
                if ref else None)
    if ref is not None:  # partial_fit over all chunks == fit on everything
        _check_params(est, ref.estimator)
    _check_same_as_first(first_fastgen_result, ("partial_fit", model, dataset), contender, n_threads,
                         est.feature_log_prob_)


STREAM_ROWS, STREAM_BATCH = 200_000, 1_000


@pytest.fixture(scope="module")
def stream():
    """The documents of the stream group: (X, y), made with a fixed seed."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    length = rng.integers(1, 3_000, STREAM_ROWS)
    words = rng.choice(1_000, (STREAM_ROWS, 2))
    first = rng.integers(0, length + 1)  # the length split over two words
    X = sp.csr_matrix((np.stack([first, length - first], axis=1).ravel().astype(np.float64),
                       words.ravel(), np.arange(0, 2 * STREAM_ROWS + 1, 2)),
                      shape=(STREAM_ROWS, 1_000))
    X.sum_duplicates()
    X.eliminate_zeros()
    return X, rng.integers(0, 100, STREAM_ROWS)


@pytest.mark.benchmark(group="multinomial/partial_fit-stream/many-lengths")
def test_partial_fit_stream(benchmark, contender, n_threads, new_estimator, stream, record_info,
                            first_fastgen_result):
    X, y = stream
    batches = [(X[a:a + STREAM_BATCH], y[a:a + STREAM_BATCH])
               for a in range(0, X.shape[0], STREAM_BATCH)]  # sliced outside the timing
    classes = np.arange(100)

    def run():
        est = new_estimator("multinomial")
        for Xb, yb in batches:
            est.partial_fit(Xb, yb, classes=classes)
        _ = est.feature_log_prob_
        return est

    est = benchmark(run)
    record_info(X, "many-lengths", batch_rows=STREAM_BATCH)
    reference = new_estimator("multinomial").fit(X, y)
    assert_allclose(est.feature_log_prob_, reference.feature_log_prob_, rtol=RTOL, atol=ATOL)
    _check_same_as_first(first_fastgen_result, ("partial_fit-stream",), contender, n_threads,
                         est.feature_log_prob_)


# --------------------------------------------------------------------------------------------------
# latency


@pytest.mark.parametrize(("model", "dataset"), cases("predict_proba-1row"))
def test_predict_proba_one_row(benchmark, contender, n_threads, model, dataset, corpora, references,
                               new_estimator, record_info):
    corpus = corpora(dataset)
    est = new_estimator(model).fit(corpus.X_train, corpus.y_train)
    X = corpus.X_test
    idx, rows, rounds = bench_single_rows(benchmark, est, X)

    ref = references(model, dataset)
    got = np.vstack([est.predict_proba(r) for r in rows])
    record_info(X[idx], dataset, rows_cycled=len(rows), rounds=rounds,
                max_abs_err=_max_abs_err(got, np.exp(ref.log_proba[idx])) if ref else None)
    assert got.shape == (len(rows), len(corpus.classes))
    if ref is not None:
        assert_allclose(got, np.exp(ref.log_proba[idx]), rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------------------------------
# corpus sanity (not benchmarks: skipped under --benchmark-only)


def test_synthetic_corpus_shape(corpora, bench_size):
    import _corpus

    spec = _corpus.SIZES[bench_size]
    c = corpora("ng20-synth")
    assert c.X_train.shape == (spec["n_train"], spec["n_features"])
    assert c.X_test.shape == (spec["n_test"], spec["n_features"])
    for X in (c.X_train, c.X_test):
        assert X.format == "csr" and X.dtype == np.float64
        assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
        assert X.has_canonical_format
        assert np.all(X.data >= 1) and np.all(X.data == np.round(X.data))
    distinct = np.diff(c.X_train.indptr)
    assert abs(distinct.mean() / spec["mean_distinct"] - 1) < 0.05
    assert np.median(distinct) < distinct.mean()  # right-skewed lengths
    assert set(np.unique(c.y_train)) == set(range(spec["n_classes"]))
    # reproducible
    again = _corpus.make_synthetic_corpus(**spec)
    assert (again.X_train != c.X_train).nnz == 0 and np.array_equal(again.y_test, c.y_test)


def test_synthetic_corpus_learnable(corpora):
    sknb = pytest.importorskip("sklearn.naive_bayes")
    c = corpora("ng20-synth")
    acc = sknb.MultinomialNB().fit(c.X_train, c.y_train).score(c.X_test, c.y_test)
    assert acc > 10 / len(c.classes)  # well above chance (0.05)
