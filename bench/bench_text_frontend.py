"""Text front-end benchmarks: ``fastgen.text`` vectorisers vs scikit-learn, from raw documents.

Data: the real 20 Newsgroups "bydate" split as raw text (``../shared/data/newsgroups20``, 11,314 train +
7,532 test documents; ``--bench-size=small``: the same seeded 2,000 + 1,000 subset as ``ng20-real``).
Every test skips with a reason when ``../shared/data`` is absent.  The documents are read once per
module, never timed.

Groups are ``{model}/{operation}/ng20-raw``, each with ``fastgen-1t``, ``fastgen-2t`` and ``sklearn-1t``
(scikit-learn's vectorisers are single-threaded; its BLAS/OpenMP pools are pinned to one thread by the
autouse ``_pin_threads`` fixture of ``conftest.py``):

* ``hashing_vectorizer/transform`` — ``HashingVectorizer().transform(test_texts)``, default parameters.
* ``count_vectorizer/transform`` — ``CountVectorizer().transform(test_texts)``; both vectorisers are
  fitted on the training texts outside the timing.
* ``count_vectorizer/fit_transform`` — ``CountVectorizer().fit_transform(train_texts)`` on a fresh
  vectoriser.
* ``count_vectorizer+multinomial/predict`` — raw test documents to predicted labels:
  ``make_pipeline(CountVectorizer(), MultinomialNB()).predict(test_texts)`` (fastgen:
  ``fastgen.text.CountVectorizer(n_threads=k)`` and ``fastgen.MultinomialNB(n_threads=k)``), the
  pipeline fitted on the training set outside the timing.

Timing uses ``benchmark.pedantic`` with a fixed number of rounds (``ROUNDS``: few for the slow
scikit-learn calls), one iteration each.

Before timing, each benchmark checks that the answer is right: scikit-learn's result is computed once
per operation (outside every timing, and reused as the scikit-learn contender's warm-up), and
fastgen's result for the test's ``n_threads`` (its warm-up call) must have the same shape, the same
dtypes and bit-identical ``indptr``, ``indices`` and ``data`` arrays (for ``predict``: identical
labels; for the fitted ``CountVectorizer``: the same ``vocabulary_``).  The timed result is checked
again after timing.

``extra_info`` records the text size so that throughput can be computed for any statistic:
``n_docs``, ``text_bytes`` (total **UTF-8 bytes** of the documents processed; ``text_chars``, the
number of characters, is recorded too), and, from the timings, ``mb_per_s`` / ``docs_per_s`` (median
time; MB = 10**6 bytes) and ``mb_per_s_best`` / ``docs_per_s_best`` (fastest round).
``bench/summarize.py`` prints times and ratios only; throughput is in the JSON.
"""

from __future__ import annotations

import _corpus
import numpy as np
import pytest
from numpy.testing import assert_array_equal

DATASET = "ng20-raw"

#: pedantic rounds per contender (one iteration each; the checked untimed call is the warm-up)
ROUNDS = {"fastgen": 7, "sklearn": 3}


def group(model: str, op: str):
    return pytest.mark.benchmark(group=f"{model}/{op}/{DATASET}")


# --------------------------------------------------------------------------------------------------
# data and scikit-learn references (built once, never timed)


class Texts:
    """Raw 20 Newsgroups documents and labels, with their sizes."""

    def __init__(self, train, y_train, test, y_test):
        self.train, self.y_train, self.test, self.y_test = train, y_train, test, y_test
        self.size = {name: (len(docs), sum(len(d.encode("utf-8")) for d in docs), sum(map(len, docs)))
                     for name, docs in (("train", train), ("test", test))}


@pytest.fixture(scope="module")
def ng20_texts(bench_size) -> Texts:
    """The raw documents; skips (every test of the module) when ``../shared/data`` is absent."""
    d = _corpus.shared_data_dir() / "newsgroups20"
    paths = [d / "20news-bydate-train.jsonl.gz", d / "20news-bydate-test.jsonl.gz"]
    if not all(p.exists() for p in paths):
        pytest.skip(f"20 Newsgroups data not found at {d} (../shared/data is absent)")
    (t_train, l_train), (t_test, l_test) = (_corpus._read_jsonl_gz(p) for p in paths)
    if bench_size == "small":  # the same seeded subset as conftest's ng20-real at small size
        rng = np.random.default_rng(_corpus.SEED)
        n_train, n_test = _corpus.NG20_SMALL
        i_tr = np.sort(rng.choice(len(t_train), size=min(n_train, len(t_train)), replace=False))
        i_te = np.sort(rng.choice(len(t_test), size=min(n_test, len(t_test)), replace=False))
        t_train, l_train = [t_train[i] for i in i_tr], l_train[i_tr]
        t_test, l_test = [t_test[i] for i in i_te], l_test[i_te]
    return Texts(t_train, l_train, t_test, l_test)


@pytest.fixture(scope="module")
def sk_reference(ng20_texts):
    """``sk_reference(key)``: scikit-learn's result for one operation, computed once (one thread);
    None without scikit-learn.

    * ``"hashing"``: ``HashingVectorizer().transform(test)``
    * ``"count"``: ``(vectoriser fitted on train, its fit_transform(train), its transform(test))``
    * ``"pipeline"``: ``(make_pipeline(CountVectorizer(), MultinomialNB()) fitted on train,
      its predict(test))``
    """
    cache = {}

    def get(key):
        if key not in cache:
            try:
                from sklearn.feature_extraction import text as sk_text
                from sklearn.naive_bayes import MultinomialNB
                from sklearn.pipeline import make_pipeline
            except ImportError:
                return None
            from threadpoolctl import threadpool_limits

            t = ng20_texts
            with threadpool_limits(limits=1):
                if key == "hashing":
                    cache[key] = sk_text.HashingVectorizer().transform(t.test)
                elif key == "count":
                    vec = sk_text.CountVectorizer()
                    X_train = vec.fit_transform(t.train)
                    cache[key] = (vec, X_train, vec.transform(t.test))
                elif key == "pipeline":
                    pipe = make_pipeline(sk_text.CountVectorizer(), MultinomialNB()).fit(t.train, t.y_train)
                    cache[key] = (pipe, pipe.predict(t.test))
                else:
                    raise KeyError(key)
        return cache[key]

    return get


# --------------------------------------------------------------------------------------------------
# helpers


def _fastgen_text():
    import fastgen.text

    return fastgen.text


def _vectorizer(contender, kind: str, n_threads: int):
    """A fresh, unfitted ``HashingVectorizer`` / ``CountVectorizer`` (default parameters)."""
    if contender.name == "fastgen":
        return getattr(_fastgen_text(), kind)(n_threads=n_threads)
    from sklearn.feature_extraction import text as sk_text

    return getattr(sk_text, kind)()


def assert_same_csr(got, ref, what: str):
    """Same shape, dtypes and bit-identical CSR arrays (entry order within rows included)."""
    assert got.format == "csr" and ref.format == "csr", what
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}"
    for name in ("indptr", "indices", "data"):
        a, b = getattr(got, name), getattr(ref, name)
        assert a.dtype == b.dtype, f"{what}: {name} dtype {a.dtype} != {b.dtype}"
        assert_array_equal(a, b, err_msg=f"{what}: {name} differs from scikit-learn's")


def _run(benchmark, contender, fn):
    return benchmark.pedantic(fn, rounds=ROUNDS[contender.name], iterations=1, warmup_rounds=0)


def _throughput(benchmark, n_docs: int, text_bytes: int, text_chars: int) -> dict:
    info = {"n_docs": n_docs, "text_bytes": text_bytes, "text_chars": text_chars,
            "text_size_unit": "UTF-8 bytes; MB = 10**6 bytes"}
    stats = getattr(getattr(benchmark, "stats", None), "stats", None)  # None under --benchmark-disable
    if stats is not None:
        for suffix, seconds in (("", stats.median), ("_best", stats.min)):
            if seconds > 0:
                info[f"mb_per_s{suffix}"] = round(text_bytes / 1e6 / seconds, 3)
                info[f"docs_per_s{suffix}"] = round(n_docs / seconds, 1)
    return info


# --------------------------------------------------------------------------------------------------
# benchmarks


@group("hashing_vectorizer", "transform")
def test_hashing_transform(benchmark, contender, n_threads, ng20_texts, sk_reference, record_info):
    docs = ng20_texts.test
    vec = _vectorizer(contender, "HashingVectorizer", n_threads)
    ref = sk_reference("hashing")  # scikit-learn: also its warm-up
    if contender.name == "fastgen" and ref is not None:
        assert_same_csr(vec.transform(docs), ref, f"HashingVectorizer n_threads={n_threads}")

    X = _run(benchmark, contender, lambda: vec.transform(docs))

    if ref is not None:
        assert_same_csr(X, ref, "HashingVectorizer (timed result)")
    record_info(X, DATASET, **_throughput(benchmark, *ng20_texts.size["test"]))


@group("count_vectorizer", "transform")
def test_count_transform(benchmark, contender, n_threads, ng20_texts, sk_reference, record_info):
    docs = ng20_texts.test
    ref = sk_reference("count")
    if contender.name == "fastgen":
        vec = _vectorizer(contender, "CountVectorizer", n_threads).fit(ng20_texts.train)
        if ref is not None:
            assert vec.vocabulary_ == ref[0].vocabulary_
            assert_same_csr(vec.transform(docs), ref[2], f"CountVectorizer.transform n_threads={n_threads}")
    else:
        vec = ref[0]  # fitted on train once, outside every timing

    X = _run(benchmark, contender, lambda: vec.transform(docs))

    if ref is not None:
        assert_same_csr(X, ref[2], "CountVectorizer.transform (timed result)")
    record_info(X, DATASET, n_features_fitted=len(vec.vocabulary_),
                **_throughput(benchmark, *ng20_texts.size["test"]))


@group("count_vectorizer", "fit_transform")
def test_count_fit_transform(benchmark, contender, n_threads, ng20_texts, sk_reference, record_info):
    docs = ng20_texts.train
    ref = sk_reference("count")
    if contender.name == "fastgen" and ref is not None:
        vec = _vectorizer(contender, "CountVectorizer", n_threads)
        assert_same_csr(vec.fit_transform(docs), ref[1],
                        f"CountVectorizer.fit_transform n_threads={n_threads}")
        assert vec.vocabulary_ == ref[0].vocabulary_

    def fit_transform():
        return _vectorizer(contender, "CountVectorizer", n_threads).fit_transform(docs)

    X = _run(benchmark, contender, fit_transform)

    if ref is not None:
        assert_same_csr(X, ref[1], "CountVectorizer.fit_transform (timed result)")
    record_info(X, DATASET, **_throughput(benchmark, *ng20_texts.size["train"]))


@group("count_vectorizer+multinomial", "predict")
def test_pipeline_predict(benchmark, contender, n_threads, ng20_texts, sk_reference, record_info):
    pytest.importorskip("sklearn.pipeline")
    from sklearn.pipeline import make_pipeline

    docs = ng20_texts.test
    ref = sk_reference("pipeline")
    if contender.name == "fastgen":
        import fastgen

        pipe = make_pipeline(_fastgen_text().CountVectorizer(n_threads=n_threads),
                             fastgen.MultinomialNB(n_threads=n_threads))
        pipe.fit(ng20_texts.train, ng20_texts.y_train)
        assert_array_equal(pipe.predict(docs), ref[1], err_msg=f"predict n_threads={n_threads}")
    else:
        pipe = ref[0]  # fitted on train once, outside every timing

    y_pred = _run(benchmark, contender, lambda: pipe.predict(docs))

    assert_array_equal(y_pred, ref[1], err_msg="predict (timed result)")
    X_test = pipe[0].transform(docs)  # for record_info's shape/nnz (untimed)
    record_info(X_test, DATASET, accuracy=float(np.mean(y_pred == ng20_texts.y_test)),
                **_throughput(benchmark, *ng20_texts.size["test"]))
