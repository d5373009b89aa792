"""Model files of text models: ``fastgen.save``/``fastgen.load`` of the vectorisers and of
scikit-learn Pipelines of a vectoriser and a classifier, which then score raw SMS messages
exactly as the originals did; what cannot be stored without pickle is refused at save; the
caller's JSON metadata round trips. Forged files are in ``test_forged_files.py``."""
import io
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.pipeline import Pipeline, make_pipeline

import fastgen
from fastgen.data import load_sms_spam
from fastgen.text import CountVectorizer, HashingVectorizer

TEXTS, LABELS = load_sms_spam()
TRAIN, Y = TEXTS[:1000], LABELS[:1000]
TEST = TEXTS[1000:1400]

# every setting that changes what CountVectorizer learns or how it transforms
COUNT_SETTINGS = [
    {},
    {"ngram_range": (1, 3)},
    {"analyzer": "char", "ngram_range": (2, 4)},
    {"analyzer": "char_wb", "ngram_range": (1, 3)},
    {"stop_words": ["the", "to", "you", "a"]},
    {"stop_words": "english"},
    {"min_df": 3, "max_df": 0.4},
    {"min_df": 0.01, "max_df": 50},
    {"max_features": 300},
    {"binary": True},
    {"lowercase": False},
    {"vocabulary": ["free", "call", "txt", "win", "now", "ok", "lol"]},
    {"vocabulary": {"free": 2, "call": 0, "win": 1}},
    {"dtype": np.float32},
    {"strip_accents": "unicode", "token_pattern": r"(?u)\b\w+\b"},
]
HASHING_SETTINGS = [
    {"alternate_sign": False, "norm": None},
    {"n_features": 2**10, "ngram_range": (1, 2), "binary": True, "norm": "l1",
     "alternate_sign": False, "dtype": np.float32},
    {"analyzer": "char_wb", "ngram_range": (2, 3), "n_features": 2**12, "norm": None,
     "alternate_sign": False},
]


def _same_csr(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def _round_trip(obj, tmp_path, **kwargs):
    path = tmp_path / "model.fastgen"
    fastgen.save(obj, path, **kwargs)
    return fastgen.load(path, trusted=True)


@pytest.mark.parametrize("settings", COUNT_SETTINGS, ids=repr)
def test_count_vectorizer_round_trip(settings, tmp_path):
    vec = CountVectorizer(**settings).fit(TRAIN)
    loaded = _round_trip(vec, tmp_path)
    assert type(loaded) is CountVectorizer
    assert loaded.vocabulary_ == vec.vocabulary_
    assert loaded.fixed_vocabulary_ == vec.fixed_vocabulary_
    _same_csr(vec.transform(TEST), loaded.transform(TEST))
    # the loaded vectoriser refits as the original does
    _same_csr(vec.fit_transform(TEST), loaded.fit_transform(TEST))
    assert loaded.vocabulary_ == vec.vocabulary_


@pytest.mark.parametrize("settings", HASHING_SETTINGS, ids=repr)
def test_hashing_vectorizer_round_trip(settings, tmp_path):
    vec = HashingVectorizer(**settings)
    loaded = _round_trip(vec, tmp_path)
    assert type(loaded) is HashingVectorizer
    assert loaded.get_params() == vec.get_params()
    _same_csr(vec.transform(TEST), loaded.transform(TEST))


@pytest.mark.parametrize("make, settings", [
    (fastgen.MultinomialNB, {}),
    (fastgen.MultinomialNB, {"ngram_range": (1, 2), "stop_words": "english"}),
    (fastgen.ComplementNB, {"analyzer": "char_wb", "ngram_range": (2, 3)}),
    (lambda: fastgen.BernoulliNB(alpha=0.5), {"binary": True, "min_df": 2}),
], ids=["MultinomialNB", "MultinomialNB-bigrams", "ComplementNB-char_wb", "BernoulliNB"])
def test_pipeline_scores_raw_text_exactly(make, settings, tmp_path):
    pipe = Pipeline([("words", CountVectorizer(**settings)), ("nothing", "passthrough"),
                     ("model", make())]).fit(TRAIN, Y)
    loaded = _round_trip(pipe, tmp_path)
    assert type(loaded) is Pipeline
    assert [name for name, _ in loaded.steps] == ["words", "nothing", "model"]
    assert loaded.steps[1][1] == "passthrough"
    for method in ("predict_proba", "predict_log_proba", "predict"):
        np.testing.assert_array_equal(getattr(loaded, method)(TEST), getattr(pipe, method)(TEST),
                                      err_msg=method)
    np.testing.assert_array_equal(loaded[-1].feature_count_, pipe[-1].feature_count_)


def test_input_file_round_trips(tmp_path):
    """``input="file"`` is a string parameter like any other: the loaded vectoriser reads files."""
    vec = CountVectorizer(input="file").fit([io.StringIO(t) for t in TRAIN])
    loaded = _round_trip(vec, tmp_path)
    assert loaded.input == "file"
    _same_csr(vec.transform([io.StringIO(t) for t in TEST]),
              loaded.transform([io.StringIO(t) for t in TEST]))


@pytest.mark.parametrize("make, needs", [
    (lambda: CountVectorizer(token_pattern=r"(?u)\b\w+\b").fit(TRAIN), "token_pattern="),
    (lambda: make_pipeline(CountVectorizer(token_pattern=r"(a+)+$"), fastgen.MultinomialNB())
     .fit(TRAIN, Y), "token_pattern='(a+)+$'"),
    (lambda: HashingVectorizer(input="filename"), "input='filename'"),
    (lambda: CountVectorizer(input="file").fit([io.StringIO(t) for t in TRAIN]),
     "input='file'"),
], ids=["pattern", "pipeline-catastrophic-pattern", "filename", "file"])
def test_untrusted_files_may_not_give_a_pattern_or_files(make, needs, tmp_path):
    """A token pattern of the file's own (a regular expression such as (a+)+$ takes time
    exponential in a run of a's) and an input that reads files load only when trusted."""
    obj = make()
    path = tmp_path / "model.fastgen"
    fastgen.save(obj, path)
    with pytest.raises(ValueError, match=f"gives its .*{re.escape(needs)}.*Load it with trusted=True"):
        fastgen.load(path)
    assert type(fastgen.load(path, trusted=True)) is type(obj)
    with pytest.raises(TypeError, match="trusted must be a bool"):
        fastgen.load(path, trusted="yes")


def test_settings_that_need_no_trust(tmp_path):
    """The default pattern, and a pattern the character analyzers never run, load untrusted."""
    for vec in (CountVectorizer(stop_words="english").fit(TRAIN),
                CountVectorizer(analyzer="char", token_pattern=r"(a+)+$").fit(TRAIN)):
        path = tmp_path / "model.fastgen"
        fastgen.save(vec, path)
        _same_csr(fastgen.load(path).transform(TEST), vec.transform(TEST))


def test_hashing_pipeline_and_semi_supervised(tmp_path):
    y = Y.astype(object)
    y[300:] = -1  # unlabelled
    for pipe in (make_pipeline(HashingVectorizer(alternate_sign=False, norm=None),
                               None, fastgen.MultinomialNB()),
                 make_pipeline(CountVectorizer(),
                               fastgen.SemiSupervised(fastgen.MultinomialNB(), tol=0.1))):
        pipe.fit(TRAIN, y if isinstance(pipe[-1], fastgen.SemiSupervised) else Y)
        loaded = _round_trip(pipe, tmp_path)
        assert type(loaded[-1]) is type(pipe[-1])
        assert [s for _, s in loaded.steps[1:-1]] == [s for _, s in pipe.steps[1:-1]]
        np.testing.assert_array_equal(loaded.predict_proba(TEST), pipe.predict_proba(TEST))


def test_method_save_is_fastgen_save(tmp_path):
    """``model.save(path)`` writes the very file ``fastgen.save(model, path)`` writes."""
    X = CountVectorizer().fit_transform(TRAIN)
    y = Y.astype(object)
    y[300:] = -1
    for model in (fastgen.MultinomialNB().fit(X, Y),
                  fastgen.SemiSupervised(fastgen.MultinomialNB(), tol=0.1).fit(X, y)):
        model.save(tmp_path / "a")
        fastgen.save(model, tmp_path / "b")
        assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


@pytest.mark.parametrize("name, value", [
    ("analyzer", lambda doc: doc.split()),
    ("tokenizer", str.split),
    ("preprocessor", str.upper),
    ("strip_accents", lambda s: s),
])
def test_callables_are_refused(name, value, tmp_path):
    vec = CountVectorizer(**{name: value}).fit(TRAIN[:50])
    with pytest.raises(TypeError, match=name):
        fastgen.save(vec, tmp_path / "v")
    with pytest.raises(TypeError, match=name):
        fastgen.save(make_pipeline(vec, fastgen.MultinomialNB()).fit(TRAIN[:50], Y[:50]),
                     tmp_path / "p")
    assert not (tmp_path / "v").exists() and not (tmp_path / "p").exists()


def test_unplain_dtype_and_stop_words_are_refused(tmp_path):
    with pytest.raises(TypeError, match="dtype"):
        fastgen.save(HashingVectorizer(dtype=">f8"), tmp_path / "v")
    with pytest.raises(TypeError, match="stop_words"):
        fastgen.save(HashingVectorizer(stop_words=["the", 3]), tmp_path / "v")


def test_unfitted_is_not_fitted_error(tmp_path):
    with pytest.raises(fastgen.NotFittedError):
        fastgen.save(CountVectorizer(), tmp_path / "v")
    with pytest.raises(fastgen.NotFittedError):
        fastgen.save(make_pipeline(HashingVectorizer(), fastgen.MultinomialNB()), tmp_path / "p")


class _MyNB(fastgen.MultinomialNB):
    pass


@pytest.mark.parametrize("steps, match", [
    ([("words", CountVectorizer()), ("tfidf", TfidfTransformer()), ("nb", fastgen.MultinomialNB())],
     r"step 'tfidf' is a sklearn\..*TfidfTransformer"),
    ([("words", CountVectorizer()), ("nb", _MyNB())], r"step 'nb' is a .*_MyNB"),
    ([("a", CountVectorizer()), ("b", CountVectorizer()), ("nb", fastgen.MultinomialNB())],
     r"step 'b' is a CountVectorizer: .* at most one"),
    ([("nb", fastgen.MultinomialNB()), ("words", CountVectorizer())],
     r"step 'nb' is a MultinomialNB: .* classifier as its last step"),
    ([("words", CountVectorizer()), ("last", "passthrough")],
     r"step 'last' is a builtins.str: the last step of a Pipeline file is a fastgen classifier"),
])
def test_foreign_and_misplaced_steps_are_refused(steps, match, tmp_path):
    pipe = Pipeline(steps)
    for _, step in steps:  # each step fitted on its own, so that only the arrangement is wrong
        if hasattr(step, "vocabulary"):
            step.fit(TRAIN[:50])
        elif step is not None and hasattr(step, "partial_fit"):
            step.fit(np.ones((4, 3)), [0, 1, 0, 1])
    with pytest.raises(TypeError, match=match):
        fastgen.save(pipe, tmp_path / "p")


def test_other_objects_and_pipeline_parameters_are_refused(tmp_path):
    with pytest.raises(TypeError, match="obj is a builtins.dict"):
        fastgen.save({"a": 1}, tmp_path / "p")
    pipe = make_pipeline(HashingVectorizer(norm=None, alternate_sign=False),
                         fastgen.MultinomialNB(), memory=str(tmp_path))
    with pytest.raises(TypeError, match="memory"):
        fastgen.save(pipe, tmp_path / "p")


def test_width_disagreement_is_refused_at_save(tmp_path):
    nb = fastgen.MultinomialNB().fit(CountVectorizer().fit_transform(TRAIN), Y)
    pipe = Pipeline([("vec", CountVectorizer().fit(TEST)), ("nb", nb)])
    with pytest.raises(ValueError, match=r"'vec' gives \d+ columns but step 'nb' was fitted"):
        fastgen.save(pipe, tmp_path / "p")


def test_metadata_round_trip(tmp_path):
    metadata = {"delimiter": "\t", "label_column": 0, "missing": ["", "NA", None],
                "columns": [1, 2], "weights": {"ham": 1.0, "spam": 2.5, "nested": {"x": True}}}
    path = tmp_path / "p"
    fastgen.save(make_pipeline(CountVectorizer(), fastgen.MultinomialNB()).fit(TRAIN, Y), path,
                 metadata=metadata)
    assert fastgen.load_metadata(path) == metadata
    assert type(fastgen.load(path)) is Pipeline
    fastgen.save(fastgen.load(path), path)
    assert fastgen.load_metadata(path) == {}


@pytest.mark.parametrize("metadata, error, match", [
    ([1, 2], TypeError, "metadata must be a dict"),
    ({"columns": (1, 2)}, TypeError, r"metadata\['columns'\] is of type tuple"),
    ({"n": np.int64(3)}, TypeError, "int64"),
    ({1: "a"}, TypeError, "keys must be str"),
    ({"a": {"b": [{2.5: 1}]}}, TypeError, "keys must be str"),
    ({"x": float("nan")}, ValueError, "NaN"),
    ({"x": [float("inf")]}, ValueError, "infinity"),
    ({"f": print}, TypeError, "builtin_function"),
])
def test_bad_metadata_is_refused(metadata, error, match, tmp_path):
    with pytest.raises(error, match=match):
        fastgen.save(HashingVectorizer(), tmp_path / "v", metadata=metadata)
    assert not (tmp_path / "v").exists()


def test_pipeline_file_without_sklearn_is_import_error(tmp_path, monkeypatch):
    path = tmp_path / "p"
    fastgen.save(make_pipeline(HashingVectorizer(alternate_sign=False, norm=None),
                               fastgen.MultinomialNB()).fit(TRAIN[:50], Y[:50]), path)
    monkeypatch.setitem(sys.modules, "sklearn.pipeline", None)  # import now fails
    with pytest.raises(ImportError, match="install scikit-learn"):
        fastgen.load(path)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=10)


@settings(max_examples=40, deadline=None)
@given(metadata=st.dictionaries(st.text(max_size=5), _JSON, max_size=4))
def test_any_json_metadata_round_trips(metadata, tmp_path_factory):
    path = tmp_path_factory.mktemp("metadata") / "v"
    fastgen.save(HashingVectorizer(), path, metadata=metadata)
    assert fastgen.load_metadata(path) == metadata


def test_vectoriser_files_need_no_sklearn(tmp_path):
    """A service without scikit-learn saves and loads vectorisers and classifiers (only a
    Pipeline needs it): nothing on that path imports it."""
    code = f"""
import sys
import fastgen
from fastgen.text import CountVectorizer
vec = CountVectorizer().fit(["a cat sat", "a dog ran"])
fastgen.save(vec, {str(tmp_path / "v")!r})
fastgen.save(fastgen.MultinomialNB().fit(vec.transform(["a cat"]), [1]), {str(tmp_path / "m")!r})
assert fastgen.load({str(tmp_path / "v")!r}).vocabulary_ == vec.vocabulary_
fastgen.load({str(tmp_path / "m")!r})
assert "sklearn" not in sys.modules, "scikit-learn was imported"
"""
    subprocess.run([sys.executable, "-c", code], check=True,
                   cwd=Path(fastgen.__file__).parents[1])  # this checkout's fastgen
