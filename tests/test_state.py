"""The declared model state (fastgen/_state.py, fastgen/_base.py): what is shared between
snapshots, and who may change it.

The text models' partial_fit adds a batch's counts to the tables in place (copying them for every
batch would cost as much as counting), so everything that reads a snapshot's statistics --
pickles, model files, merges, sampling, fitted attributes computed from them -- must see a whole
model while another thread keeps calling partial_fit; a shallow copy must not see the original's
later batches; and the arrays a caller hands in stay the caller's.
"""
import copy
import pickle
import threading
import time
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from _data import zipf_counts

import fastgen
from fastgen._state import Field, validate

TEXT_MODELS = [fastgen.MultinomialNB, fastgen.ComplementNB, fastgen.BernoulliNB]


@pytest.fixture(scope="module")
def corpus():
    X, y = zipf_counts(600, 3_000, n_classes=4, mean_len=40, seed=3)
    return sp.csr_matrix(X), np.asarray(y)


def _beside_partial_fit(model, X, y, read, seconds=1.0):
    """Call ``read(model)`` in a loop while another thread feeds partial_fit; returns the errors
    of either thread."""
    errors, stop = [], threading.Event()
    batches = np.array_split(np.arange(X.shape[0]), 6)

    def writer():
        try:
            while not stop.is_set():
                for rows in batches:
                    model.partial_fit(X[rows], y[rows])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(f"writer: {exc!r}")

    thread = threading.Thread(target=writer)
    thread.start()
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            read(model)
    except Exception as exc:  # noqa: BLE001 - reported below
        errors.append(f"reader: {exc!r}")
    finally:
        stop.set()
        thread.join(30)
    return errors


@pytest.mark.parametrize("Model", TEXT_MODELS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("read", ["sample", "pickle", "save", "merge", "attributes"])
def test_statistics_are_read_whole_beside_partial_fit(Model, read, corpus, tmp_path):
    X, y = corpus
    model = Model().partial_fit(X, y, classes=np.unique(y))
    other = Model().fit(X, y)

    def sound(m):
        proba = m.predict_proba(X[:20])
        assert np.allclose(proba.sum(axis=1), 1.0) and np.isfinite(proba).all()

    readers = {
        "sample": lambda m: m.sample(5, random_state=0),
        "pickle": lambda m: sound(pickle.loads(pickle.dumps(m))),
        "save": lambda m: (m.save(tmp_path / "m.fgm"), sound(fastgen.load(tmp_path / "m.fgm"))),
        "merge": lambda m: sound(copy.deepcopy(other).merge(m)),
        "attributes": lambda m: (m.feature_count_.sum(), m.feature_log_prob_.sum(),
                                 m.class_count_.sum()),
    }
    assert _beside_partial_fit(model, X, y, readers[read]) == []


@pytest.mark.parametrize("Model", TEXT_MODELS, ids=lambda m: m.__name__)
def test_a_shallow_copy_does_not_see_later_batches(Model, corpus):
    X, y = corpus
    model = Model().partial_fit(X[:300], y[:300], classes=np.unique(y))
    clone = copy.copy(model)
    expected = clone.predict_proba(X[:50])
    counts = clone.class_count_.copy()
    model.partial_fit(X[300:], y[300:])  # the original learns on
    np.testing.assert_array_equal(clone.class_count_, counts)
    np.testing.assert_array_equal(clone.predict_proba(X[:50]), expected)
    clone.partial_fit(X[300:], y[300:])  # and so does the copy, on its own statistics
    np.testing.assert_array_equal(clone.predict_proba(X[:50]), model.predict_proba(X[:50]))


def test_the_callers_arrays_stay_the_callers():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), np.arange(60) % 3
    for make in (lambda p: fastgen.LinearDiscriminantAnalysis(priors=p),
                 lambda p: fastgen.GaussianNB(priors=p),
                 lambda p: fastgen.BaselineClassifier(priors=p),
                 lambda p: fastgen.MultinomialNB(class_prior=p)):
        priors = np.array([0.2, 0.3, 0.5])
        model = make(priors).fit(np.abs(X), y)
        priors[0] = 0.25  # still writeable: the model copied it
        assert priors.flags.writeable
        for name in ("priors_", "class_prior_", "class_log_prior_"):
            if hasattr(model, name):
                with pytest.raises(ValueError, match="read-only"):
                    getattr(model, name)[0] = 0.0


def test_merge_labels_of_one_kind_whatever_the_array():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    as_int = fastgen.GaussianNB().fit(X, np.arange(40) % 2)
    as_object = fastgen.GaussianNB().fit(X, (np.arange(40) % 2 + 1).astype(object))
    assert list(as_int.merge(as_object).classes_) == [0, 1, 2]
    with pytest.raises(ValueError, match="different kinds"):
        fastgen.GaussianNB().fit(X, np.arange(40) % 2).merge(
            fastgen.GaussianNB().fit(X, np.array(["a", "b"] * 20)))


def test_an_earlier_fastgens_pickle_is_a_clear_error():
    model = fastgen.GaussianNB()
    with pytest.raises(ValueError, match="earlier fastgen"):
        model.__setstate__({**model.get_params(), "class_count_": np.ones(2), "_tables": ()})


def test_a_file_allocates_what_it_holds(tmp_path):
    """CategoricalNB with many classes and features but no categories: its file is small, and
    loading it allocates no classes x features table it does not hold."""
    model = fastgen.CategoricalNB().fit(np.zeros((2, 1)), [0, 1])
    n_classes, n_features = 2000, 2000
    model._fitted = model._fitted.replace(
        classes=np.arange(n_classes), n_features=n_features,
        stats={"class_count_": np.ones(n_classes),
               "n_categories_": np.zeros(n_features, dtype=np.intp),
               "category_count": np.zeros((n_classes, 0))})
    model.save(tmp_path / "wide.fgm")
    tracemalloc.start()
    try:
        fastgen.load(tmp_path / "wide.fgm")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (tmp_path / "wide.fgm").stat().st_size < 200_000
    assert peak < 8 * n_classes * n_features / 4  # far below one float64 table


@pytest.mark.parametrize("value, match", [
    (np.array([2.0**63]), "above"), (np.array([-1e300]), "negative"),
    (np.array([np.nan]), "whole"), (np.array([0.5]), "whole"),
])
def test_integer_fields_are_checked_before_the_cast(value, match):
    with pytest.raises(ValueError, match=match):
        validate((Field("n", (None,), integer=True, upper=np.inf),), {"n": value}, {})


@pytest.mark.parametrize("make, change", [
    (fastgen.GaussianNB, {"var_smoothing": -1.0}),
    (fastgen.LinearDiscriminantAnalysis, {"covariance": "diagonal"}),
    (fastgen.MultinomialNB, {"alpha": np.ones(7)}),
], ids=["invalid", "other-statistics", "wrong-shape"])
def test_a_set_params_the_snapshot_cannot_follow_keeps_files_and_pickles_whole(make, change,
                                                                               tmp_path):
    """set_params that the fitted statistics cannot serve leaves the model predicting as before;
    its model file and pickle record the parameters the snapshot was derived with, so both load
    back to the same predictions (the pickle keeps the estimator's own parameters too)."""
    rng = np.random.default_rng(4)
    X, y = np.abs(rng.normal(size=(60, 3))), np.arange(60) % 3
    model = make().fit(X, y)
    expected = model.predict_proba(X)
    model.set_params(**change)
    np.testing.assert_array_equal(model.predict_proba(X), expected)
    unpickled = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(unpickled.predict_proba(X), expected)
    assert unpickled.get_params().keys() == model.get_params().keys()
    model.save(tmp_path / "m.fgm")
    loaded = fastgen.load(tmp_path / "m.fgm")
    np.testing.assert_array_equal(loaded.predict_proba(X), expected)
    with pytest.raises(ValueError):
        model.partial_fit(X, y)  # adding to these statistics reports the parameters


def test_pickles_of_models_with_series_priors_or_attributes_of_their_own():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    X, y = np.abs(rng.normal(size=(40, 3))), np.arange(40) % 2
    for model in (fastgen.MultinomialNB(class_prior=pd.Series([0.4, 0.6])),
                  fastgen.GaussianNB(priors=pd.Series([0.4, 0.6]))):
        model.fit(X, y)
        model.note = "mine"  # an attribute a user set
        for copied in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
            np.testing.assert_array_equal(copied.predict_proba(X), model.predict_proba(X))
            assert copied.note == "mine"


def test_a_part_of_mixed_nb_is_a_model_of_its_own(tmp_path):
    rng = np.random.default_rng(6)
    X = np.column_stack([rng.normal(size=60), rng.poisson(2, size=(60, 2))]).astype(float)
    y = np.arange(60) % 2
    model = fastgen.MixedNB(["gaussian", "multinomial", "multinomial"]).fit(X[:30], y[:30])
    part = model.parts_["multinomial"][1]
    expected = part.predict_proba(X[:, 1:])
    model.partial_fit(X[30:], y[30:])  # adds to MixedNB's statistics, not to the part's
    np.testing.assert_array_equal(part.predict_proba(X[:, 1:]), expected)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(part)).predict_proba(X[:, 1:]),
                                  expected)
    part.save(tmp_path / "part.fgm")
    np.testing.assert_array_equal(fastgen.load(tmp_path / "part.fgm").predict_proba(X[:, 1:]),
                                  expected)


def test_bytes_and_text_labels_do_not_merge():
    X = np.random.default_rng(7).normal(size=(20, 2))
    with pytest.raises(ValueError, match="different kinds"):
        fastgen.GaussianNB().fit(X, np.array([b"a", b"b"] * 10)).merge(
            fastgen.GaussianNB().fit(X, np.array(["c", "d"] * 10)))


def test_a_model_file_records_the_current_n_threads(tmp_path):
    X, y = np.abs(np.random.default_rng(8).normal(size=(20, 2))), np.arange(20) % 2
    model = fastgen.MultinomialNB(n_threads=2).fit(X, y).set_params(n_threads=1)
    model.save(tmp_path / "m.fgm")
    assert fastgen.load(tmp_path / "m.fgm").n_threads == 1


# ---------------------------------------------------------------------------------------
# Found by an outside attack on the declared state (2026-11-28)


def _fitted_models():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, (60, 4)).astype(np.float64)
    y = np.arange(60) % 3
    return [(fastgen.MultinomialNB().fit(X, y), ["classes_", "class_count_", "feature_count_",
                                                 "feature_log_prob_", "class_log_prior_"]),
            (fastgen.GaussianNB().fit(X, y), ["classes_", "theta_", "var_", "class_prior_"]),
            (fastgen.LinearDiscriminantAnalysis().fit(X, y), ["coef_", "means_", "classes_"])]


def test_fitted_attributes_cannot_be_made_writeable():
    """A plain read-only view's WRITEABLE flag can be set back while the array it views is
    writeable: writing through feature_log_prob_ then changed predict_proba, and through
    classes_ what predict returns. The attributes are views of read-only buffers now."""
    for model, names in _fitted_models():
        for name in names:
            value = getattr(model, name)
            with pytest.raises(ValueError, match="WRITEABLE"):
                value.setflags(write=True)


def test_statistics_attributes_are_one_snapshots_values():
    """feature_count_ and class_count_ of a text model are views taken under the snapshot's
    lock (never half a batch), and the next partial_fit, which adds to the tables in place,
    copies them first once they have been shown: what a caller holds does not change (it did).
    Without a read in between, batches are still counted in place."""
    X = np.random.default_rng(1).poisson(1.0, (40, 6)).astype(np.float64)
    y = np.arange(40) % 2
    model = fastgen.MultinomialNB().partial_fit(X, y, classes=[0, 1])
    counts, classes = model.feature_count_, model.class_count_
    kept = counts.copy(), classes.copy()
    model.partial_fit(X, y)
    np.testing.assert_array_equal(counts, kept[0])
    np.testing.assert_array_equal(classes, kept[1])
    np.testing.assert_array_equal(model.feature_count_, 2 * kept[0])
    table = model._fitted.stats["feature_count_"]
    model.partial_fit(X, y)  # shown above: copied
    assert model._fitted.stats["feature_count_"] is not table
    table = model._fitted.stats["feature_count_"]
    model.partial_fit(X, y)  # not shown since: in place
    assert model._fitted.stats["feature_count_"] is table
    np.testing.assert_array_equal(model.feature_count_, 4 * kept[0])


def test_a_held_snapshot_never_mixes_the_old_evidence_alpha_with_new_counts():
    """A prediction holds the snapshot it started from; a partial_fit counts the next batch into
    its statistics in place. The alpha chosen by the evidence (memoised in the snapshot from the
    old counts) used to meet the new counts in the held snapshot's derivation, a model the object
    never was; partial_fit now clears the memo with the counts it changes."""
    rng = np.random.default_rng(0)
    first = rng.poisson(0.3, (50, 20)).astype(np.float64), rng.integers(0, 3, 50)
    second = (rng.poisson(2.0, (50, 20)) * (np.arange(20) < 5)).astype(np.float64), \
        rng.integers(0, 3, 50)
    Xq = rng.poisson(0.5, (30, 20)).astype(np.float64)
    model = fastgen.MultinomialNB(alpha="evidence").partial_fit(*first, classes=[0, 1, 2])
    held = model._fitted  # as predict holds it
    model.alpha_  # memoised in that snapshot
    model.partial_fit(*second)
    out = np.empty((len(Xq), 3))
    model._score(model._params_of(held), Xq, 1, out, False)
    np.testing.assert_array_equal(out, model.predict_log_proba(Xq))


def test_a_refused_mixed_nb_batch_leaves_the_model_as_it_was():
    """MixedNB's multinomial part counted a batch in place before the derivation refused it (a
    new class whose Gaussian column is constant, var_smoothing=0): the model kept its old
    parameters over counts that held the refused batch (its pickle predicted otherwise, and a
    retry counted the batch twice)."""
    X = np.array([[0.0, 1, 2], [1.0, 0, 3], [0.5, 2, 0], [0.2, 1, 1]])
    model = fastgen.MixedNB(feature_types=["gaussian", "multinomial", "multinomial"],
                            var_smoothing=0.0).partial_fit(X, [0, 0, 1, 1], classes=[0, 1, 2])
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="variance 0"):
        model.partial_fit(np.array([[0.3, 90, 0], [3.0, 50, 50], [3.0, 50, 50]]), [0, 2, 2])
    assert pickle.dumps(model) == before
    np.testing.assert_array_equal(pickle.loads(before).predict_proba(X), model.predict_proba(X))


def _blocks_while_the_lock_is_held(lock, call):
    """Whether call(), in another thread, waits while this thread holds lock; it must then run
    to its end, without an error."""
    errors = []

    def run():
        try:
            call()
        except BaseException as error:  # (reported in this thread)
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    with lock:
        thread.start()
        thread.join(0.3)
        waited = thread.is_alive()
    thread.join(30)
    assert not thread.is_alive(), "the call did not finish once the lock was released"
    assert not errors, errors
    return waited


def test_semi_supervised_writers_take_turns():
    """SemiSupervised's partial_fit read its result, trained and stored a new one without a
    lock: of two concurrent batches one could be lost. It and fit now hold the meta-estimator's
    writers' lock; a shallow copy has its own, and its own estimator_."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, (40, 5)).astype(np.float64)
    y = rng.integers(0, 2, 40)
    ss = fastgen.SemiSupervised(fastgen.MultinomialNB()).fit(X, y)
    assert _blocks_while_the_lock_is_held(ss._write_lock(), lambda: ss.partial_fit(X, y))
    assert _blocks_while_the_lock_is_held(ss._write_lock(), lambda: ss.fit(X, y))
    clone = copy.copy(ss)
    clone.partial_fit(X, y)
    np.testing.assert_array_equal(ss.estimator_.class_count_, np.bincount(y))
    np.testing.assert_array_equal(clone.estimator_.class_count_, 2 * np.bincount(y))
    pickle.loads(pickle.dumps(ss))  # (the lock is not pickled)


def test_setstate_is_a_writer_and_an_unfitted_state_unfits():
    """Unpickling into a model in use waits for its writers (a partial_fit beside it could
    overwrite the state set), and the state of an unfitted model leaves it unfitted (it kept the
    old snapshot under the new hyperparameters: alpha=3 with alpha_=1)."""
    X = np.random.default_rng(2).poisson(1.0, (30, 4)).astype(np.float64)
    y = np.arange(30) % 2
    model = fastgen.MultinomialNB().fit(X, y)
    state = fastgen.MultinomialNB(alpha=2.0).fit(X, y).__getstate__()
    assert _blocks_while_the_lock_is_held(model._write_lock(),
                                          lambda: model.__setstate__(state))
    assert model.alpha_ == 2.0
    model.__setstate__(fastgen.MultinomialNB(alpha=3.0).__getstate__())
    assert model.alpha == 3.0 and not hasattr(model, "classes_")


def test_bernoulli_binarize_changed_after_fit_is_held_back():
    """The counts were taken at the old threshold: set_params(binarize=...) keeps the fitted
    model (as covariance= on LDA), the next partial_fit says why, and fit starts again."""
    rng = np.random.default_rng(1)
    X = rng.poisson(1.5, (90, 6)).astype(np.float64)
    y = np.arange(90) % 3
    model = fastgen.BernoulliNB(binarize=0.0).fit(X, y)
    expected = model.predict_joint_log_proba(X)
    model.set_params(binarize=1.5)
    np.testing.assert_array_equal(model.predict_joint_log_proba(X), expected)
    with pytest.raises(ValueError, match="binarize was changed"):
        model.partial_fit(X, y)
    model.fit(X, y)
    np.testing.assert_array_equal(model.predict_joint_log_proba(X),
                                  fastgen.BernoulliNB(binarize=1.5).fit(X, y)
                                  .predict_joint_log_proba(X))


def test_statistics_of_a_model_that_never_counts_in_place_are_read_without_the_lock():
    """Only the text models add to their statistics in place; reading another model's
    statistics does not wait for a fit of it that is running."""
    X = np.random.default_rng(3).normal(size=(40, 3))
    model = fastgen.GaussianNB().fit(X, np.arange(40) % 2)
    got = []
    with model._write_lock():
        thread = threading.Thread(target=lambda: got.append(model.class_count_), daemon=True)
        thread.start()
        thread.join(10)
    assert got and not thread.is_alive()
