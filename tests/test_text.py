"""fastgen.text: the same matrices as scikit-learn's vectorisers, from the Cython tokeniser and from
the exact Python path, on real corpora and on random Unicode text; streaming; bad input."""
import gzip
import json
import os
import pickle
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastgen
from fastgen import text as ft
from fastgen._core import _text

skt = pytest.importorskip("sklearn.feature_extraction.text")
from conftest import require_shared_data
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils import murmurhash3_32


def assert_same_matrix(ours, theirs):
    """Identical CSR: shape, dtypes, indptr, indices (in order) and values."""
    theirs = sp.csr_matrix(theirs)
    assert isinstance(ours, sp.csr_matrix)
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype
    assert ours.indices.dtype == theirs.indices.dtype
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.data, theirs.data)


def _newsgroups(name):
    path = require_shared_data() / "newsgroups20" / f"20news-bydate-{name}.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


@pytest.fixture(scope="module")
def news_train():
    return _newsgroups("train")


@pytest.fixture(scope="module")
def news_test():
    return _newsgroups("test")


@pytest.fixture(scope="module")
def sms():
    path = require_shared_data() / "sms_spam" / "SMSSpamCollection"
    return [line.split("\t", 1)[1] for line in path.read_text(encoding="utf-8").splitlines()]


# -- real corpora ---------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [
    {},
    {"ngram_range": (1, 2), "alternate_sign": False, "norm": None},
    {"binary": True, "norm": "l1", "dtype": np.float32, "stop_words": ["the", "of", "and"]},
], ids=["default", "bigrams-unsigned", "binary-l1-f32-stop"])
def test_hashing_equals_sklearn_on_newsgroups(news_test, params):
    assert_same_matrix(ft.HashingVectorizer(**params).transform(news_test),
                       skt.HashingVectorizer(**params).transform(news_test))


@pytest.mark.parametrize("params", [
    {},
    {"ngram_range": (1, 2), "min_df": 2},
    {"min_df": 3, "max_df": 0.5, "max_features": 20000, "binary": True},
], ids=["default", "bigrams-min_df", "df-limits-max_features-binary"])
def test_count_equals_sklearn_on_newsgroups(news_train, news_test, params):
    ours, theirs = ft.CountVectorizer(**params), skt.CountVectorizer(**params)
    assert_same_matrix(ours.fit_transform(news_train), theirs.fit_transform(news_train))
    assert ours.vocabulary_ == theirs.vocabulary_
    assert_same_matrix(ours.transform(news_test), theirs.transform(news_test))


@pytest.mark.parametrize("params", [{}, {"ngram_range": (1, 3), "lowercase": False}, {"max_features": 500}])
def test_count_and_hashing_equal_sklearn_on_sms(sms, params):
    ours, theirs = ft.CountVectorizer(**params), skt.CountVectorizer(**params)
    assert_same_matrix(ours.fit_transform(sms), theirs.fit_transform(sms))
    assert ours.vocabulary_ == theirs.vocabulary_
    hashing = {k: v for k, v in params.items() if k != "max_features"}
    assert_same_matrix(ft.HashingVectorizer(**hashing).transform(sms),
                       skt.HashingVectorizer(**hashing).transform(sms))


def test_fit_then_transform_sorts_rows_like_sklearn(sms):
    """fit_transform keeps first-appearance entry order within rows (as scikit-learn does);
    transform sorts them, also as scikit-learn does."""
    ours, theirs = ft.CountVectorizer().fit(sms), skt.CountVectorizer().fit(sms)
    Xo, Xt = ours.transform(sms), theirs.transform(sms)
    assert_same_matrix(Xo, Xt)
    assert Xo.has_sorted_indices


# -- the tokeniser against Python's re, on hostile Unicode ----------------------------------------

# Letters of many scripts, digits and numerics, underscores, punctuation and spaces, combining
# marks, emoji (with modifiers), astral letters, and characters whose lowercase changes length or
# depends on context (İ, final sigma); plus arbitrary code points.
FRAGMENTS = st.sampled_from(
    list("abcXYZ_09 \t\n.,;!?-'\"") + list("éÉßẞİıΣσςΟΔ") + list("дЖ中文日本語한국") + list("٣٤²³¼")
    + ["\u0301", "\u0308", "\u200d", "\u00a0", "\u2028", "😀", "👍🏽", "𝔘𝔫𝔦", "\U00010400", "\ufb01",
       "ǅ", "ΣΑΣ ", "İi"]
)
DOC = st.one_of(st.lists(FRAGMENTS, max_size=30).map("".join), st.text(max_size=30))
DOCS = st.lists(DOC, min_size=1, max_size=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=DOCS, lowercase=st.booleans(), ngram=st.sampled_from([(1, 1), (1, 2), (2, 3)]),
       alternate_sign=st.booleans())
def test_hashing_equals_sklearn_on_random_unicode(docs, lowercase, ngram, alternate_sign):
    params = {"lowercase": lowercase, "ngram_range": ngram, "alternate_sign": alternate_sign,
                  "n_features": 2 ** 10, "norm": None}
    assert_same_matrix(ft.HashingVectorizer(**params).transform(docs),
                       skt.HashingVectorizer(**params).transform(docs))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=DOCS, lowercase=st.booleans(), ngram=st.sampled_from([(1, 1), (1, 2)]),
       stop=st.lists(st.sampled_from(["ab", "σς", "中文", "x_"]), max_size=2))
def test_count_equals_sklearn_on_random_unicode(docs, lowercase, ngram, stop):
    params = {"lowercase": lowercase, "ngram_range": ngram, "stop_words": stop or None}
    theirs = skt.CountVectorizer(**params)
    try:
        expected = theirs.fit_transform(docs)
    except ValueError as exc:  # no tokens at all: the same error
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            ft.CountVectorizer(**params).fit_transform(docs)
        return
    ours = ft.CountVectorizer(**params)
    assert_same_matrix(ours.fit_transform(docs), expected)
    assert ours.vocabulary_ == theirs.vocabulary_


@pytest.mark.parametrize("doc", [
    "İstanbul İİ",             # lowercases to 'i' + U+0307 (a combining mark, not \w): length changes
    "ΟΔΟΣ ΟΔΟΣ. ΣΑΣ",          # final sigma: str.lower gives ς at the end of a word
    "naïve nai\u0308ve",       # precomposed vs combining diaeresis (the mark splits the token)
    "x² ½½ ٣٤ ᾼᾼ ﬁﬁ",         # digits and numerics, titlecase, ligature
    "snake_case __ _a a_ 😀😀 a😀b",
    "\U0001D518\U0001D52B\U0001D526 \U00010400\U00010428",  # astral letters
    "",
])
def test_tokeniser_edge_cases(doc):
    for lowercase in (True, False):
        cv = ft.CountVectorizer(lowercase=lowercase, token_pattern=ft.DEFAULT_TOKEN_PATTERN)
        expected = re.findall(r"(?u)\b\w\w+\b", doc.lower() if lowercase else doc)
        if not expected:
            with pytest.raises(ValueError, match="empty vocabulary"):
                cv.fit([doc])
            continue
        X = cv.fit_transform([doc])
        counted = {t: X[0, j] for t, j in cv.vocabulary_.items()}
        assert counted == {t: expected.count(t) for t in expected}
        assert_same_matrix(ft.HashingVectorizer(lowercase=lowercase).transform([doc]),
                           skt.HashingVectorizer(lowercase=lowercase).transform([doc]))


@given(st.binary(max_size=40), st.integers(0, 2 ** 32 - 1))
def test_murmurhash_equals_sklearn(key, seed):
    assert _text.murmurhash3_32(key, seed) == murmurhash3_32(key, seed=seed)


def test_hash_of_int32_min_column():
    """The one hash whose absolute value overflows int32 gets scikit-learn's column."""
    # find a short token hashing to -2**31 is impractical; check the formula path through n_features
    for n_features in (1, 3, 2 ** 20, 2 ** 31 - 1):
        X = ft.HashingVectorizer(n_features=n_features, norm=None).transform(["ab cd ef"])
        Y = skt.HashingVectorizer(n_features=n_features, norm=None).transform(["ab cd ef"])
        assert_same_matrix(X, Y)


# -- the exact Python path ------------------------------------------------------------------------

@pytest.mark.parametrize("params", [
    {"token_pattern": r"(?u)\b\w+\b"},
    {"token_pattern": r"(\w)\w*"},
    {"tokenizer": str.split, "token_pattern": None},
    {"preprocessor": lambda s: s.upper()},
    {"strip_accents": "unicode"},
    {"strip_accents": "ascii", "ngram_range": (1, 2)},
    {"analyzer": "char", "ngram_range": (2, 3)},
    {"analyzer": "char_wb", "ngram_range": (1, 4)},
    {"analyzer": lambda doc: doc.split(",")},
], ids=["pattern", "group", "tokenizer", "preprocessor", "unicode", "ascii-bigrams", "char",
        "char_wb", "callable"])
def test_python_analyzers_equal_sklearn(params):
    docs = ["Héllo wörld, a b c", "Ærøskøbing  naïve\tcafé,x", "", "ΟΔΟΣ, İstanbul 42 a_b"]
    ours, theirs = ft.CountVectorizer(**params), skt.CountVectorizer(**params)
    assert_same_matrix(ours.fit_transform(docs), theirs.fit_transform(docs))
    assert ours.vocabulary_ == theirs.vocabulary_
    assert_same_matrix(ft.HashingVectorizer(**params).transform(docs),
                       skt.HashingVectorizer(**params).transform(docs))
    assert ours.build_analyzer()(docs[1]) == theirs.build_analyzer()(docs[1])


# -- vocabulary, limits, dtypes -------------------------------------------------------------------

@pytest.mark.parametrize("vocabulary", [["world", "hello", "absent"],
                                        {"hello": 1, "world": 0, "zzz": 2}])
def test_fixed_vocabulary(vocabulary):
    docs = ["hello world hello", "world of worlds", ""]
    ours, theirs = ft.CountVectorizer(vocabulary=vocabulary), skt.CountVectorizer(vocabulary=vocabulary)
    assert_same_matrix(ours.transform(docs), theirs.transform(docs))  # no fit needed
    assert_same_matrix(ours.fit_transform(docs), theirs.fit_transform(docs))
    assert ours.fixed_vocabulary_ and ours.vocabulary_ == theirs.vocabulary_
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())


@pytest.mark.parametrize("params", [{"min_df": 2}, {"max_df": 2}, {"min_df": 0.3, "max_df": 0.9},
                                    {"max_features": 3}, {"max_features": 1, "min_df": 2},
                                    {"dtype": np.float32}, {"dtype": np.int32, "binary": True}])
def test_count_limits_and_dtypes(params):
    docs = ["a1 b1 c1 a1", "b1 c1 d1", "c1 d1 e1 e1 e1", "a1 c1", "f1"]
    ours, theirs = ft.CountVectorizer(**params), skt.CountVectorizer(**params)
    assert_same_matrix(ours.fit_transform(docs), theirs.fit_transform(docs))
    assert ours.vocabulary_ == theirs.vocabulary_
    assert_same_matrix(ours.transform(docs[::-1]), theirs.transform(docs[::-1]))
    assert [list(r) for r in ours.inverse_transform(ours.transform(docs))] == \
        [list(r) for r in theirs.inverse_transform(theirs.transform(docs))]


def test_hashing_norms_and_integer_dtype():
    docs = ["aa bb aa", "", "cc cc cc dd"]
    for params in ({"norm": "l2", "dtype": np.float32}, {"norm": "l1"}, {"norm": None, "dtype": np.int64},
                   {"norm": "l2", "dtype": np.int64}):
        assert_same_matrix(ft.HashingVectorizer(**params).transform(docs),
                           skt.HashingVectorizer(**params).transform(docs))


# -- threads, streaming, big documents ------------------------------------------------------------

def test_result_independent_of_threads_and_batches(sms, monkeypatch):
    reference = ft.CountVectorizer(ngram_range=(1, 2), n_threads=1).fit_transform(sms)
    ref_hash = ft.HashingVectorizer(n_threads=1).transform(sms)
    monkeypatch.setattr(ft, "BATCH_CHARS", 10_000)  # many batches, and a generator as input
    for n_threads in (1, 2, 4):
        cv = ft.CountVectorizer(ngram_range=(1, 2), n_threads=n_threads)
        assert_same_matrix(cv.fit_transform(doc for doc in sms), reference)
        assert_same_matrix(ft.HashingVectorizer(n_threads=n_threads).transform(iter(sms)), ref_hash)


def test_huge_document_and_long_token():
    rng = np.random.default_rng(0)
    words = np.array(["alpha", "beta", "gamma", "Delta", "ε_ψ"])
    big = " ".join(words[rng.integers(0, 5, 2_000_000)])  # ~12 MB, 2 million tokens
    long_token = "x" * 5_000_000
    docs = [big, long_token, "short doc"]
    ours, theirs = ft.CountVectorizer(), skt.CountVectorizer()
    assert_same_matrix(ours.fit_transform(docs), theirs.fit_transform(docs))
    assert_same_matrix(ft.HashingVectorizer().transform(docs), skt.HashingVectorizer().transform(docs))


def test_hundred_thousand_word_document_scores_finitely():
    words = [f"w{i % 5000}" for i in range(100_000)]
    docs = [" ".join(words), "w1 w2", "w3"]
    cv = ft.CountVectorizer()
    X = cv.fit_transform(docs)
    proba = fastgen.MultinomialNB().fit(X, [0, 1, 1]).predict_proba(cv.transform(docs))
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


# -- scikit-learn integration ---------------------------------------------------------------------

def test_pipeline_partial_fit_and_grid_search(sms):
    labels = np.arange(len(sms)) % 2
    hv = ft.HashingVectorizer(alternate_sign=False, norm=None)
    pipe = make_pipeline(hv, fastgen.MultinomialNB()).fit(sms, labels)
    sk_pipe = make_pipeline(skt.HashingVectorizer(alternate_sign=False, norm=None),
                            __import__("sklearn.naive_bayes").naive_bayes.MultinomialNB()).fit(sms, labels)
    np.testing.assert_array_equal(pipe.predict(sms), sk_pipe.predict(sms))
    # streaming training: the stateless vectoriser feeds partial_fit batch by batch
    model = fastgen.MultinomialNB()
    for start in range(0, len(sms), 1000):
        model.partial_fit(hv.transform(sms[start:start + 1000]), labels[start:start + 1000], classes=[0, 1])
    np.testing.assert_allclose(model.feature_count_, pipe[-1].feature_count_)
    search = GridSearchCV(make_pipeline(ft.CountVectorizer(), fastgen.MultinomialNB()),
                          {"countvectorizer__ngram_range": [(1, 1), (1, 2)]}, cv=2).fit(sms[:600], labels[:600])
    assert search.best_params_["countvectorizer__ngram_range"] in [(1, 1), (1, 2)]


def test_clone_and_pickle(sms):
    cv = ft.CountVectorizer(ngram_range=(1, 2), min_df=2)
    assert clone(cv).get_params() == cv.get_params()
    X = cv.fit_transform(sms)
    restored = pickle.loads(pickle.dumps(cv))
    assert_same_matrix(restored.transform(sms), cv.transform(sms))
    assert_same_matrix(restored.transform(sms), X.sorted_indices())
    hv = pickle.loads(pickle.dumps(ft.HashingVectorizer(n_features=100)))
    assert hv.transform(["a b"]).shape == (1, 100)


# -- bad input --------------------------------------------------------------------------------------

@pytest.mark.parametrize("Vectorizer", [ft.CountVectorizer, ft.HashingVectorizer])
def test_bad_documents(Vectorizer):
    with pytest.raises(ValueError, match="string object received"):
        Vectorizer().fit_transform("a single string")
    with pytest.raises(TypeError, match="document 1 is NoneType"):
        Vectorizer().fit_transform(["ok doc", None])
    with pytest.raises(TypeError, match="document 0 is int"):
        Vectorizer().fit_transform([3])
    with pytest.raises(ValueError, match="np.nan is an invalid document"):
        Vectorizer().fit_transform(["ok doc", np.nan])
    with pytest.raises(TypeError, match="iterable"):
        Vectorizer().fit_transform(42)
    with pytest.raises(ValueError, match="document 1 cannot be decoded"):
        Vectorizer().fit_transform([b"fine", b"\xff\xfe bad"])
    ok = Vectorizer(decode_error="ignore").fit_transform([b"fine words", b"\xff\xfe bad words"])
    ref = getattr(skt, Vectorizer.__name__)(decode_error="ignore").fit_transform(
        [b"fine words", b"\xff\xfe bad words"])
    assert_same_matrix(ok, ref)
    latin = ["café olé".encode("latin-1")]
    assert_same_matrix(Vectorizer(encoding="latin-1").fit_transform(latin),
                       getattr(skt, Vectorizer.__name__)(encoding="latin-1").fit_transform(latin))


@pytest.mark.parametrize("params, error, match", [
    ({"ngram_range": (2, 1)}, ValueError, "lower boundary larger"),
    ({"ngram_range": (0, 1)}, ValueError, "at least 1"),
    ({"ngram_range": [1, 2]}, TypeError, "tuple"),
    ({"analyzer": "words"}, ValueError, "analyzer"),
    ({"token_pattern": r"(a)(b)"}, ValueError, "More than 1 capturing group"),
    ({"stop_words": "french"}, ValueError, "not a built-in stop list"),
    ({"decode_error": "loud"}, ValueError, "decode_error"),
    ({"input": "url"}, ValueError, "input"),
    ({"dtype": "U5"}, TypeError, "dtype"),
    ({"lowercase": "yes"}, TypeError, "lowercase"),
    ({"n_threads": 1.5}, TypeError, "n_threads"),
])
def test_bad_parameters(params, error, match):
    for Vectorizer in (ft.CountVectorizer, ft.HashingVectorizer):
        with pytest.raises(error, match=match):
            Vectorizer(**params).fit_transform(["some text here"])


@pytest.mark.parametrize("params, match", [
    ({"min_df": 3, "max_df": 1}, "max_df corresponds to < documents than min_df"),
    ({"min_df": 1.5}, r"\[0.0, 1.0\]"),
    ({"max_features": 0}, "max_features"),
    ({"vocabulary": ["a", "a"]}, "Duplicate term"),
    ({"vocabulary": {"a": 0, "b": 0}}, "repeated indices"),
    ({"vocabulary": {"a": 0, "b": 2}}, "doesn't contain index 1"),
    ({"vocabulary": []}, "empty vocabulary"),
    ({"stop_words": ["only", "stop", "words"]}, "empty vocabulary"),
    ({"min_df": 0, "max_df": 0}, "no terms remain"),
])
def test_bad_count_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        ft.CountVectorizer(**params).fit_transform(["only stop words", "stop words"])


def test_hashing_bad_n_features_and_norm():
    for n_features in (0, -1, 2 ** 31, 1.5, True):
        with pytest.raises(ValueError, match="n_features"):
            ft.HashingVectorizer(n_features=n_features).transform(["a b"])
    with pytest.raises(ValueError, match="norm"):
        ft.HashingVectorizer(norm="max").transform(["a b"])


def test_not_fitted_and_uppercase_vocabulary_warning():
    with pytest.raises(fastgen.NotFittedError):
        ft.CountVectorizer().transform(["a b"])
    with pytest.warns(UserWarning, match="Upper case characters found in vocabulary"):
        ft.CountVectorizer(vocabulary=["Hello"]).fit(["hello"])
    with pytest.raises(TypeError, match="vocabulary terms must be str"):
        ft.CountVectorizer(vocabulary=[b"bytes"]).fit(["x"])


@pytest.mark.parametrize("Vectorizer", [ft.CountVectorizer, ft.HashingVectorizer])
def test_check_estimator(Vectorizer):
    """scikit-learn's checks need 2-D input, so for string input it runs only the generic ones
    (cloning); those must pass."""
    from sklearn.exceptions import SkipTestWarning
    from sklearn.utils.estimator_checks import check_estimator

    with pytest.warns(SkipTestWarning, match="requires input"):
        results = check_estimator(Vectorizer(), on_fail=None)
    assert results and all(r["status"] == "passed" for r in results)


def test_bad_analyzer_output_stop_words_and_vocabulary_size(monkeypatch):
    with pytest.raises(TypeError, match="feature of type int"):
        ft.CountVectorizer(analyzer=lambda doc: [1, 2]).fit(["x"])
    with pytest.raises(TypeError, match="feature of type NoneType"):
        ft.HashingVectorizer(analyzer=lambda doc: [None]).transform(["x"])
    with pytest.raises(TypeError, match="stop_words must be"):
        ft.CountVectorizer(stop_words=5).fit(["x y"])
    # (no token equals a stop word that is not a str: such a list was kept, and could not be
    # saved)
    with pytest.raises(TypeError, match="stop_words must be .* holding a float"):
        ft.CountVectorizer(stop_words=["the", 2.5]).fit(["x y"])
    # lone surrogates are not word characters: they split tokens, as in Python's re
    docs = ["ab\ud800cd \udfffef"]
    assert_same_matrix(ft.CountVectorizer().fit_transform(docs), skt.CountVectorizer().fit_transform(docs))
    # column ids must stay below 2**31: a vocabulary that grows past the bound is an error
    monkeypatch.setattr(_text, "MAX_TERMS", 5)
    monkeypatch.setattr(ft, "BATCH_CHARS", 10)
    with pytest.raises(ValueError, match="more than 5 terms"):
        ft.CountVectorizer().fit([f"w{i} v{i}" for i in range(20)])


def test_clustered_vocabulary_ids_are_sorted():
    """Columns are bucket-sorted on the assumption that they spread over the vocabulary; a
    document using only a narrow band of a large fixed vocabulary (every key in one bucket, many
    out-of-order keys) must still come out exactly sorted."""
    rng = np.random.default_rng(1)
    vocabulary = [f"w{i:07d}" for i in range(200_000)]
    docs = [" ".join(f"w{i:07d}" for i in rng.integers(0, 3000, 5000)),
            " ".join(f"w{i:07d}" for i in rng.permutation(2000)[::-1]), "w0000001 w0199999"]
    assert_same_matrix(ft.CountVectorizer(vocabulary=vocabulary).transform(docs),
                       skt.CountVectorizer(vocabulary=vocabulary).transform(docs))


def test_stop_word_cache_follows_the_parameter():
    """The tokeniser's copy of the stop words is cached, keyed by their content: a list changed
    in place is still honoured, and a vectoriser with the cache pickles."""
    stop = ["the", "dog"]
    cv = ft.CountVectorizer(stop_words=stop).fit(["the dog fox cat"])
    assert cv.transform(["the dog fox"]).sum() == 1
    stop.append("fox")
    assert cv.transform(["the dog fox"]).sum() == 0
    hv = ft.HashingVectorizer(stop_words=stop, norm=None)
    X = hv.transform(["the dog fox cat"])
    assert_same_matrix(pickle.loads(pickle.dumps(hv)).transform(["the dog fox cat"]), X)


def test_inverse_transform_leaves_the_callers_matrix():
    """inverse_transform dropped the explicit zeros of the caller's own CSR (scipy's
    constructor shares its arrays): X.nnz went from 3 to 2."""
    vec = fastgen.text.CountVectorizer().fit(["apple banana", "banana cherry"])
    X = sp.csr_matrix((np.array([1.0, 0.0, 2.0]), np.array([0, 1, 2]), np.array([0, 2, 3])),
                      shape=(2, 3))
    data, indices, indptr = X.data.copy(), X.indices.copy(), X.indptr.copy()
    terms = vec.inverse_transform(X)
    assert [list(t) for t in terms] == [["apple"], ["cherry"]]
    assert X.nnz == 3
    np.testing.assert_array_equal(X.data, data)
    np.testing.assert_array_equal(X.indices, indices)
    np.testing.assert_array_equal(X.indptr, indptr)
    bad = sp.csr_matrix((np.ones(1), np.array([7]), np.array([0, 1, 1])), shape=(2, 3))
    with pytest.raises(ValueError):
        vec.inverse_transform(bad)


def test_stop_words_given_as_an_iterator_are_refused():
    """An iterator is used up by its first read: fit removed the stop words and transform did
    not. A collection is needed (scikit-learn refuses an iterator too)."""
    with pytest.raises(TypeError, match="collection"):
        fastgen.text.CountVectorizer(stop_words=iter(["the"])).fit(["cat the hat"])
    vec = fastgen.text.CountVectorizer(stop_words=("the",), ngram_range=(1, 2))
    np.testing.assert_array_equal(vec.fit_transform(["cat the hat"]).toarray(),
                                  vec.transform(["cat the hat"]).toarray())


def test_a_str_subclass_is_lowercased_by_its_own_lower_only():
    """The compiled path called a subclass's lower() (as scikit-learn does) and then lowercased
    its result again: a lower() that keeps case gave another vocabulary than scikit-learn's
    (and than fastgen's Python path). Such a document is counted on its own, in its order."""
    text = pytest.importorskip("sklearn.feature_extraction.text")

    class Doc(str):
        def lower(self):
            return str(self)

    docs = ["alpha Beta", Doc("NASA and IBM"), "gamma ALPHA", Doc("lower only"), "Zeta"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (upper case in the vocabulary: both warn)
        ours = fastgen.text.CountVectorizer().fit(docs)
        theirs = text.CountVectorizer().fit(docs)
    assert dict(ours.vocabulary_) == theirs.vocabulary_
    np.testing.assert_array_equal(ours.transform(docs).toarray(),
                                  theirs.transform(docs).toarray())


@pytest.mark.parametrize("name, value", [("lowercase", False), ("binary", True),
                                         ("input", "filename"), ("decode_error", "strict"),
                                         ("ngram_range", (2, 2))])
@pytest.mark.parametrize("analyzer", ["word", "char"])
def test_one_transform_uses_the_parameters_it_started_with(monkeypatch, name, value, analyzer):
    """A set_params while transform reads its documents (another thread's, made here by the
    documents' iterator) mixed two settings in one matrix: the kernel read lowercase again for
    each batch, binary, input and the decoding were read live, and the Python analyzers read
    ngram_range for each document (outside attacks)."""
    monkeypatch.setattr(ft, "BATCH_DOCS", 8)
    docs = [b"Hello World hello \xff"] * 40
    for Vectorizer in (ft.CountVectorizer, ft.HashingVectorizer):
        vectoriser = Vectorizer(decode_error="ignore", analyzer=analyzer).fit(docs)
        expected = vectoriser.transform(docs)

        def changing():
            for i, doc in enumerate(docs):
                if i == 20:
                    vectoriser.set_params(**{name: value})
                yield doc

        got = vectoriser.transform(changing())
        assert (got != expected).nnz == 0, (Vectorizer, name)


@pytest.mark.parametrize("Vectorizer", [ft.CountVectorizer, ft.HashingVectorizer])
def test_filename_and_file_documents_must_be_paths_and_files(Vectorizer, tmp_path):
    """input='filename' opened an int document as a file descriptor of the process, read it
    and closed it (True closed stdout); input='file' met a str with an AttributeError. Both are
    TypeErrors naming what they take (outside attack)."""
    r, w = os.pipe()
    try:
        for doc in (r, True, 3.5, None):
            with pytest.raises(TypeError, match="input='filename' takes documents that are "
                                                "paths"):
                Vectorizer(input="filename").fit_transform([doc])
        os.fstat(r)  # still open
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(TypeError, match="input='file' takes documents that are file objects"):
        Vectorizer(input="file").fit_transform(["a string"])
    path = tmp_path / "doc.txt"
    path.write_text("alpha beta alpha")
    expected = Vectorizer().fit_transform(["alpha beta alpha"]).toarray()
    for doc in (str(path), path, bytes(str(path), "utf-8")):
        np.testing.assert_array_equal(Vectorizer(input="filename").fit_transform([doc]).toarray(), expected)
    with open(path, "rb") as fh:
        np.testing.assert_array_equal(Vectorizer(input="file").fit_transform([fh]).toarray(), expected)
