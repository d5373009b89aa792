"""Dask collections: fit / partial_fit over partitions merged in a tree, lazy predictions; run on
a real dask.distributed LocalCluster with worker processes on loopback."""
import copy
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

import fastgen

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

from test_merge_sample import CASES, IDS, Y

CHUNK = 130  # 600 rows: five partitions of 130 and one of 80


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        yield client


def to_dask(X):
    """A dask array of X's rows in CHUNK-row partitions (CSR chunks for a CSR matrix)."""
    if sp.issparse(X):
        dense = da.from_array(X.toarray(), chunks=(CHUNK, X.shape[1]))
        return dense.map_blocks(sp.csr_matrix, dtype=X.dtype, meta=sp.csr_matrix((0, 0)))
    return da.from_array(X, chunks=(CHUNK, X.shape[1]))


@pytest.mark.parametrize("cls, params, X", CASES, ids=IDS)
def test_fit_on_dask_equals_in_memory_fit(client, cls, params, X):
    dX, dy = to_dask(X), da.from_array(Y, chunks=CHUNK)
    ours, reference = cls(**params).fit(dX, dy), cls(**params).fit(X, Y)
    assert isinstance(ours, cls) and not fastgen._dask.is_dask_collection(ours.classes_)
    assert_array_equal(ours.classes_, reference.classes_)
    assert_allclose(ours.predict_joint_log_proba(X), reference.predict_joint_log_proba(X),
                    rtol=1e-9, atol=1e-9)
    # lazy predictions, partition by partition
    lazy = ours.predict_proba(dX)
    assert isinstance(lazy, da.Array) and lazy.chunks[0] == dX.chunks[0]
    assert_allclose(lazy.compute(), reference.predict_proba(X), rtol=1e-9, atol=1e-12)
    assert_allclose(ours.predict_log_proba(dX).compute(), reference.predict_log_proba(X),
                    rtol=1e-9, atol=1e-9)
    assert_array_equal(ours.predict(dX).compute(), reference.predict(X))
    assert_allclose(ours.decision_function(dX).compute(), reference.decision_function(X),
                    rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls, params, X", CASES[:1] + CASES[4:5], ids=IDS[:1] + IDS[4:5])
def test_partial_fit_and_weights_on_dask(client, cls, params, X):
    w = np.random.default_rng(1).uniform(0.5, 2.0, Y.shape[0])
    half = Y.shape[0] // 2
    model = cls(**params)
    model.partial_fit(to_dask(X[:half]), da.from_array(Y[:half], chunks=CHUNK), classes=[0, 1, 2],
                      sample_weight=da.from_array(w[:half], chunks=CHUNK))
    model.partial_fit(to_dask(X[half:]), Y[half:], sample_weight=w[half:])  # in-memory labels
    reference = cls(**params).fit(X, Y, sample_weight=w)
    assert_allclose(model.predict_joint_log_proba(X), reference.predict_joint_log_proba(X),
                    rtol=1e-9, atol=1e-9)


def test_string_labels_and_mixed_dataframe(client):
    rng = np.random.default_rng(2)
    n = 900
    labels = rng.choice(["ham", "spam", "eggs"], n)
    df = pd.DataFrame({
        "height": rng.normal(size=n) + (labels == "spam"),
        "colour": rng.choice(["red", "green", "blue", "violet"], n),
        "flag": rng.choice([True, False], n),
        "visits": rng.poisson(2, n),
    })
    df.loc[::7, "colour"] = None
    df.loc[3::11, "height"] = np.nan
    df.loc[:200, "colour"] = "red"  # the first partition sees only one label
    ddf, dlabels = dd.from_pandas(df, npartitions=5), dd.from_pandas(pd.Series(labels), npartitions=5)
    ours = fastgen.MixedNB().fit(ddf, dlabels)
    reference = fastgen.MixedNB().fit(df, labels)
    assert ours.feature_types_ == reference.feature_types_
    assert {j: list(c) for j, c in ours.categories_.items()} == \
        {j: list(c) for j, c in reference.categories_.items()}
    assert_allclose(ours.predict_log_proba(df), reference.predict_log_proba(df), rtol=1e-9, atol=1e-9)
    assert_array_equal(ours.predict(ddf).compute(), reference.predict(df))
    assert_allclose(ours.predict_proba(ddf).compute(), reference.predict_proba(df), atol=1e-12)


def test_sparse_text_partitions(client):
    rng = np.random.default_rng(3)
    X = sp.random(2000, 500, density=0.02, format="csr", random_state=4, dtype=np.float64)
    X.data = np.ceil(X.data * 5)
    y = rng.integers(0, 4, 2000)
    dX = da.from_array(X.toarray(), chunks=(300, 500)).map_blocks(sp.csr_matrix,
                                                                  meta=sp.csr_matrix((0, 0)))
    ours = fastgen.MultinomialNB().fit(dX, da.from_array(y, chunks=300))
    reference = fastgen.MultinomialNB().fit(X, y)
    assert_allclose(ours.feature_count_, reference.feature_count_)
    assert_allclose(ours.predict_proba(dX).compute(), reference.predict_proba(X), atol=1e-12)


def test_columns_split_over_blocks_are_joined(client):
    X = np.random.default_rng(5).normal(size=(400, 6))
    y = np.arange(400) % 2
    dX = da.from_array(X, chunks=(100, 2))  # three column blocks
    ours = fastgen.GaussianNB().fit(dX, da.from_array(y, chunks=100))
    assert_allclose(ours.theta_, fastgen.GaussianNB().fit(X, y).theta_, rtol=1e-12)
    assert ours.predict_proba(dX).shape == (400, 2)


def test_bad_dask_input(client):
    X = da.from_array(np.ones((100, 3)), chunks=(25, 3))
    # labels chunked differently are aligned to X's partitions; a different length is an error
    y = np.arange(100) % 2
    aligned = fastgen.GaussianNB().fit(X + np.arange(100)[:, None], da.from_array(y, chunks=(30, 70)))
    assert_allclose(aligned.theta_, fastgen.GaussianNB().fit(np.ones((100, 3)) + np.arange(100)[:, None], y).theta_)
    for bad_y in (np.arange(99) % 2, da.from_array(np.arange(99) % 2, chunks=50)):
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            fastgen.GaussianNB().fit(X, bad_y)
    frame = dd.from_pandas(pd.DataFrame(np.ones((100, 3))), npartitions=4)
    with pytest.raises(ValueError, match="partitioned alike"):
        fastgen.GaussianNB().fit(frame, dd.from_pandas(pd.Series(y), npartitions=2))
    with pytest.raises(ValueError, match="partitioned like X"):
        fastgen.GaussianNB().fit(frame, y)
    with pytest.raises(ValueError, match="2-D"):
        fastgen.GaussianNB().fit(da.ones(10, chunks=5), np.arange(10) % 2)
    with pytest.raises(ValueError, match="do not exist in the initial classes"):
        fastgen.GaussianNB().partial_fit(X, np.arange(100) % 3, classes=[0, 1])
    with pytest.raises(ValueError, match="NaN|infinity"):
        fastgen.GaussianNB().fit(X * np.inf, np.arange(100) % 2)
    model = fastgen.GaussianNB()
    with pytest.raises(fastgen.NotFittedError):
        model.predict(X)



@pytest.mark.parametrize("cls, params, alone", [
    (fastgen.GaussianNB, {}, True),
    (fastgen.GaussianNB, {"priors": [0.2, 0.3, 0.5]}, False),
    (fastgen.MultinomialNB, {}, True),
    (fastgen.MultinomialNB, {"class_prior": [0.2, 0.3, 0.5]}, False),
    (fastgen.CategoricalNB, {}, True),
    (fastgen.LinearDiscriminantAnalysis, {}, False),
    (fastgen.QuadraticDiscriminantAnalysis, {}, False),
    (fastgen.LinearDiscriminantAnalysis, {"predictive": True, "prior_strength": (2.0, 5.0)},
     False),
    (fastgen.QuadraticDiscriminantAnalysis, {"predictive": True}, False),
])
def test_partitions_that_see_different_classes(client, cls, params, alone):
    """Partitions that each see one class still give the model fitted on all of them: fitted with
    the classes they see and merged, or, where a model cannot fit such a partition alone (priors
    per class; LDA and QDA need two classes or more), with all the classes, found first."""
    rng = np.random.default_rng(6)
    y = np.repeat(["a", "b", "c"], 200)  # sorted: most partitions see one class
    X = np.abs(np.round(rng.normal(size=(600, 3)) + (y == "b")[:, None] * 2))
    assert cls(**params)._fits_partitions_alone() is alone
    ours = cls(**params).fit(to_dask(X), da.from_array(y, chunks=CHUNK))
    reference = cls(**params).fit(X, y)
    assert_array_equal(ours.classes_, ["a", "b", "c"])
    assert_allclose(ours.predict_log_proba(X), reference.predict_log_proba(X), rtol=1e-9, atol=1e-9)


def _blocks_from_delayed(calls):
    """X and y of three blocks made by delayed tasks, the features from the labels (as data read
    block by block would be): y's task is shared by X's and y's chunks, through alias tasks."""
    from dask import delayed

    def labels(i):
        calls.append(i)
        return np.arange(50) % 3

    def features(i, y):
        return np.abs(np.random.default_rng(i).normal(size=(50, 4))) + y[:, None]

    ys = [delayed(labels)(i) for i in range(3)]
    dX = da.concatenate([da.from_delayed(delayed(features)(i, y), shape=(50, 4), dtype=float)
                         for i, y in enumerate(ys)])
    dy = da.concatenate([da.from_delayed(y, shape=(50,), dtype=int) for y in ys])
    return dX, dy


def test_fit_graph_with_annotations_is_left_as_it_is():
    """Annotated tasks (here retries; workers and resources alike) keep their layer: the graph
    is not flattened."""
    import dask
    from dask import delayed

    from fastgen._dask import _without_aliases

    with dask.annotate(retries=2):
        dX, dy = _blocks_from_delayed([])
    parts = [b[0] for b in dX.to_delayed(optimize_graph=False)]
    total = delayed(sum)([delayed(lambda X, y: float(X.sum() + y.sum()))(X, y)
                          for X, y in zip(parts, dy.to_delayed(optimize_graph=False))])
    assert _without_aliases(total) is total


def test_fit_graph_bypasses_alias_tasks_and_computes_each_block_once():
    """The partitions' graph without its alias tasks (each a scheduler round trip): the same
    model, and every block's shared label task still computed once."""
    from dask import delayed

    from fastgen._dask import _without_aliases

    Alias = pytest.importorskip("dask._task_spec", reason="dask before its task spec").Alias

    calls = []
    dX, dy = _blocks_from_delayed(calls)
    parts = [b[0] for b in dX.to_delayed(optimize_graph=False)]
    total = delayed(sum)([delayed(lambda X, y: float(X.sum() + y.sum()))(X, y)
                          for X, y in zip(parts, dy.to_delayed(optimize_graph=False))])
    assert any(isinstance(node, Alias) for node in dict(total.__dask_graph__()).values())
    bypassed = _without_aliases(total)
    assert not any(isinstance(node, Alias) for node in dict(bypassed.__dask_graph__()).values())
    expected = total.compute(scheduler="sync")
    del calls[:]
    assert bypassed.compute(scheduler="sync") == expected
    assert sorted(calls) == [0, 1, 2]


@pytest.mark.parametrize("persisted", [False, True])
def test_fit_on_arrays_from_delayed_blocks(client, persisted):
    """Blocks made by tasks, or held by the cluster (persisted: futures in the graph)."""
    dX, dy = _blocks_from_delayed([])
    X, y = dX.compute(), dy.compute()
    if persisted:
        dX, dy = client.persist([dX, dy])
    for cls in (fastgen.GaussianNB, fastgen.MultinomialNB):
        ours, reference = cls().fit(dX, dy), cls().fit(X, y)
        assert_allclose(ours.predict_log_proba(X), reference.predict_log_proba(X), rtol=1e-9,
                        atol=1e-9)


def test_semi_supervised_with_dask(client):
    """SemiSupervised: fit refuses dask collections (EM needs every unlabelled row in each
    iteration); partial_fit adds dask's labelled rows as the model's own partial_fit does and
    refuses a batch with unlabelled rows; predictions of a dask X are lazy."""
    X = np.random.default_rng(3).normal(size=(600, 4)) + (Y == Y[0])[:, None]
    dX, dy = to_dask(X), da.from_array(Y, chunks=CHUNK)
    y_semi = Y.astype(object)
    y_semi[100:] = -1
    em = fastgen.SemiSupervised(fastgen.GaussianNB())
    with pytest.raises(TypeError, match="dask"):
        em.fit(dX, y_semi)
    with pytest.raises(TypeError, match="dask"):
        em.fit(X, da.from_array(y_semi, chunks=CHUNK))
    em.fit(X, y_semi)
    reference = copy.deepcopy(em.estimator_)
    em.partial_fit(dX, dy)
    reference.partial_fit(X, Y)
    assert_allclose(em.predict_joint_log_proba(X), reference.predict_joint_log_proba(X),
                    rtol=1e-9, atol=1e-9)
    lazy = em.predict_proba(dX)
    assert isinstance(lazy, da.Array)
    assert_allclose(lazy.compute(), reference.predict_proba(X), rtol=1e-9, atol=1e-12)
    unlabelled = np.where(np.arange(600) < 300, 0, -1)
    with pytest.raises(ValueError, match="unlabelled"):
        em.partial_fit(dX, da.from_array(unlabelled, chunks=CHUNK))


def test_categorical_nb_on_a_dataframe_whose_partitions_see_other_labels(client):
    """Each partition encoded its labels alone, and the merge refused the partitions' models
    ("different categorical labels"); the labels are gathered first, as for MixedNB."""
    df = pd.DataFrame({"s": list("aabbccdd") * 20})
    y = pd.Series([0, 1] * 80)
    ours = fastgen.CategoricalNB().fit(dd.from_pandas(df, npartitions=4),
                                       dd.from_pandas(y, npartitions=4))
    reference = fastgen.CategoricalNB().fit(df, y)
    assert list(ours.categories_[0]) == list(reference.categories_[0])
    assert_allclose(ours.predict_log_proba(df), reference.predict_log_proba(df), rtol=1e-12)


@pytest.mark.parametrize("cls", [fastgen.MixedNB, fastgen.CategoricalNB])
def test_declared_categories_are_kept_in_their_order(client, cls):
    """A column's declared categories, used or not and in their order, as in memory: the labels
    were gathered from the values and sorted, so an unused category was lost (probabilities off
    by 8e-4, the category refused at predict) and a batch declaring the model's own categories
    could not be added to it."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    labels = pd.CategoricalDtype(["z", "y", "x", "w"])  # "w" declared, never used
    X = pd.DataFrame({"a": pd.Series(rng.choice(["x", "y", "z"], 200)).astype(labels),
                      "b": rng.normal(size=200) + y, "f": rng.random(200) > 0.5})
    if cls is fastgen.CategoricalNB:
        X = X[["a"]]
    dX, dy = dd.from_pandas(X, npartitions=4), dd.from_pandas(pd.Series(y), npartitions=4)
    ours, reference = cls().fit(dX, dy), cls().fit(X, y)
    def categories(model):  # (MixedNB's by column, CategoricalNB's a list)
        found = model.categories_
        return {j: list(c) for j, c in (found.items() if isinstance(found, dict)
                                         else enumerate(found))}

    assert categories(ours) == categories(reference)
    assert categories(ours)[0] == ["z", "y", "x", "w"]
    assert_allclose(ours.predict_log_proba(X), reference.predict_log_proba(X), rtol=1e-12)
    unused = X.assign(a=pd.Series(["w"] * 200).astype(labels))
    assert_allclose(ours.predict_proba(unused), reference.predict_proba(unused), rtol=1e-12)
    # a dask batch added to a model fitted in memory, declaring the same categories
    stream = cls().partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    stream.partial_fit(dd.from_pandas(X[100:], npartitions=2),
                       dd.from_pandas(pd.Series(y[100:]), npartitions=2))
    assert_allclose(stream.predict_log_proba(X), reference.predict_log_proba(X), rtol=1e-9)
    # a batch is read through the model's categories, as in memory: one it declares and does
    # not use is nothing, one it uses and the model lacks is refused by name
    wider = X[100:].assign(a=X.a[100:].astype(pd.CategoricalDtype(["z", "y", "x", "w", "v"])))
    stream = cls().partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    stream.partial_fit(dd.from_pandas(wider, npartitions=2),
                       dd.from_pandas(pd.Series(y[100:]), npartitions=2))
    assert_allclose(stream.predict_log_proba(X), reference.predict_log_proba(X), rtol=1e-9)
    other = wider.assign(a=pd.Series(["v"] * 100, index=wider.index).astype(wider.a.dtype))
    with pytest.raises(ValueError, match=r"Column 'a' has a label not among the categories "
                                         r"learned from the first batch \('v'\)"):
        stream.partial_fit(dd.from_pandas(other, npartitions=2),
                           dd.from_pandas(pd.Series(y[100:]), npartitions=2))


def test_predictions_of_empty_partitions(client):
    """A filtered collection's empty partitions give empty blocks (every predict method raised
    "Found array with 0 sample(s)")."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 100)
    X = pd.DataFrame({"a": rng.choice(["x", "y"], 100), "b": np.arange(100.0)})
    mixed = fastgen.MixedNB().fit(X, y)
    dX = dd.from_pandas(X, npartitions=4)
    kept = X[X.b >= 50]
    assert_array_equal(mixed.predict(dX[dX.b >= 50]).compute(), mixed.predict(kept))
    assert_allclose(mixed.predict_proba(dX[dX.b >= 50]).compute(), mixed.predict_proba(kept),
                    rtol=1e-12)
    gauss = fastgen.GaussianNB().fit(X[["b"]].to_numpy(), y)
    arr = da.from_array(X[["b"]].to_numpy(), chunks=(25, 1))
    assert_allclose(gauss.predict_proba(arr[arr[:, 0] >= 50]).compute(),
                    gauss.predict_proba(kept[["b"]].to_numpy()), rtol=1e-12)


def test_repeated_column_names_are_refused(client):
    X = pd.DataFrame({"a": ["x", "y"] * 30, "b": np.arange(60.0), "c": ["p", "q"] * 30})
    X.columns = ["a", "b", "a"]
    with pytest.raises(ValueError, match=r"repeats the column name\(s\) \['a'\]"):
        fastgen.MixedNB().fit(dd.from_pandas(X, npartitions=3),
                              dd.from_pandas(pd.Series([0, 1] * 30), npartitions=3))


@pytest.mark.parametrize("cls", [fastgen.LinearDiscriminantAnalysis,
                                 fastgen.QuadraticDiscriminantAnalysis])
def test_partitions_too_small_for_a_model_of_their_own(client, cls):
    """Partitions of 8 rows of 10 features: each partition's model derived its parameters, so
    a singular partition (or merge of two) refused the fit; only the merged statistics make a
    model now, the in-memory fit's (the partitions' models go between worker processes)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    X = rng.normal(size=(400, 10)) + y[:, None]
    ours = cls().fit(da.from_array(X, chunks=(8, 10)), da.from_array(y, chunks=8))
    reference = cls().fit(X, y)
    assert_allclose(ours.predict_log_proba(X), reference.predict_log_proba(X), rtol=1e-9,
                    atol=1e-9)
    assert ours._fitted.params is not None  # (derived once, from the merged statistics)


def _outcome(call):
    """(result, warnings' messages, error message) of ``call()``: what a dask call must share
    with the in-memory one. Its warnings and errors are caught at the call, where in-memory
    input gives them; a lazy result is computed afterwards."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
        except ValueError as error:
            return None, [str(w.message) for w in caught], str(error)
    if fastgen._dask.is_dask_collection(result):
        result = result.compute()
    return result, [str(w.message) for w in caught], None


def _named_cases():
    """(model fitted in memory, in-memory X, the same X as a dask collection) for each case of
    scikit-learn's feature-name rule, on the models that read arrays (GaussianNB; LDA, whose
    dask fit adds statistics up instead of merging models) and DataFrames' columns of labels
    (CategoricalNB, MixedNB)."""
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, 240)
    codes = np.minimum(rng.poisson(1.0 + y[:, None], size=(240, 3)), 4).astype(np.float64)
    for cls in (fastgen.GaussianNB, fastgen.LinearDiscriminantAnalysis, fastgen.CategoricalNB,
                fastgen.MixedNB):
        X = codes if cls in (fastgen.CategoricalNB, fastgen.MixedNB) else \
            rng.normal(size=(240, 3)) + y[:, None]
        named = pd.DataFrame(X, columns=["a", "b", "c"])
        renamed = named.rename(columns={"b": "z"})
        yield (cls, "fitted without names, given names"), cls().fit(X, y), named, \
            dd.from_pandas(named, npartitions=3), y
        yield (cls, "fitted with names, given none"), cls().fit(named, y), X, \
            da.from_array(X, chunks=(80, 3)), y
        yield (cls, "fitted with names, given others"), cls().fit(named, y), renamed, \
            dd.from_pandas(renamed, npartitions=3), y
        yield (cls, "fitted with names, given them"), cls().fit(named, y), named, \
            dd.from_pandas(named, npartitions=3), y
        yield (cls, "fitted on integer columns"), cls().fit(pd.DataFrame(X), y), X, \
            dd.from_pandas(pd.DataFrame(X), npartitions=3), y


NAMED_CASES = list(_named_cases())


@pytest.mark.parametrize("model, X, dX, y", [case[1:] for case in NAMED_CASES],
                         ids=[f"{cls.__name__}-{case}" for (cls, case), *_ in NAMED_CASES])
@pytest.mark.parametrize("method", ["predict", "predict_proba", "predict_log_proba",
                                    "predict_joint_log_proba", "decision_function"])
def test_feature_names_of_dask_predictions_as_in_memory(client, model, X, dX, y, method):
    """A dask collection's feature names are checked as in-memory X's are, by the same check,
    once, at the call: each partition checked them on the workers, so a model fitted on an
    array warned once per partition given a dask DataFrame (on a cluster, the warnings were
    lost), one fitted on a DataFrame likewise given a dask array, and other names were refused
    only at compute."""
    ours, reference = (_outcome(lambda: getattr(model, method)(data)) for data in (dX, X))
    assert ours[1:] == reference[1:]
    if reference[2] is None:
        assert_array_equal(ours[0], reference[0])


@pytest.mark.parametrize("model, X, dX, y", [case[1:] for case in NAMED_CASES],
                         ids=[f"{cls.__name__}-{case}" for (cls, case), *_ in NAMED_CASES])
def test_feature_names_of_a_dask_batch_as_in_memory(client, model, X, dX, y):
    """A dask batch added to a fitted model is taken or refused as the in-memory batch is, with
    the same warning or error, and gives the same model: a model fitted on an array refused a
    dask DataFrame ("Cannot merge models fitted on different feature names"), and one fitted on
    a DataFrame refused a dask array (the partitions' models were named apart from it)."""
    dy = da.from_array(y, chunks=80) if isinstance(dX, da.Array) else \
        dd.from_pandas(pd.Series(y), npartitions=dX.npartitions)
    ours, reference = copy.deepcopy(model), copy.deepcopy(model)
    outcome = _outcome(lambda: ours.partial_fit(dX, dy))
    assert outcome[1:] == _outcome(lambda: reference.partial_fit(X, y))[1:]
    assert_array_equal(getattr(ours, "feature_names_in_", ()),
                       getattr(reference, "feature_names_in_", ()))
    assert_allclose(ours.class_count_, reference.class_count_)  # (refused: the model's own)
    if outcome[2] is not None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (X's names, as the model's were when fitted)
        assert_allclose(ours.predict_joint_log_proba(X), reference.predict_joint_log_proba(X),
                        rtol=1e-9)


def test_a_dask_batch_is_read_as_the_model_reads_an_in_memory_one(client):
    """Each partition of a batch added to a fitted model is read through the model's structure,
    as the in-memory batch is: fitted as a first batch of a model of its own, a partition read
    a DataFrame's columns its own way, and the merge refused it (CategoricalNB fitted on an
    array has no categories, its partitions' models had; MixedNB fitted on an array reads a
    column of booleans as numbers, its partitions' models inferred labels)."""
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 240)
    codes = np.minimum(rng.poisson(1.0 + y[:, None], size=(240, 2)), 4).astype(np.float64)
    flags = pd.DataFrame({0: rng.normal(size=240) + y, 1: rng.random(240) < 0.2 * (1 + y)})
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    for model, X in ((fastgen.CategoricalNB().fit(codes, y), pd.DataFrame(codes)),
                     (fastgen.MixedNB().fit(flags.to_numpy(np.float64), y), flags)):
        ours, reference = copy.deepcopy(model), copy.deepcopy(model)
        ours.partial_fit(dd.from_pandas(X, npartitions=3), dy)
        reference.partial_fit(X, y)
        assert_allclose(ours.predict_joint_log_proba(X), reference.predict_joint_log_proba(X),
                        rtol=1e-12)


@pytest.mark.parametrize("model, X, dX, y", [case[1:] for case in NAMED_CASES],
                         ids=[f"{cls.__name__}-{case}" for (cls, case), *_ in NAMED_CASES])
@pytest.mark.parametrize("dask_labels", [False, True])
def test_score_of_a_dask_collection_as_in_memory(client, model, X, dX, y, dask_labels):
    """score takes a dask collection as predict does, its labels and weights in memory or dask
    collections alike: a dask DataFrame's predictions, of unknown length, were compared with
    the labels' ("inconsistent numbers of samples: [nan, 240]")."""
    w = np.random.default_rng(9).uniform(0.5, 2.0, y.shape[0])
    dy, dw = y, w
    if dask_labels:
        dy, dw = (da.from_array(v, chunks=80) if isinstance(dX, da.Array) else
                  dd.from_pandas(pd.Series(v), npartitions=dX.npartitions) for v in (y, w))
    for weights, dask_weights in ((None, None), (w, dw)):
        ours = _outcome(lambda: model.score(dX, dy, sample_weight=dask_weights))
        assert ours == _outcome(lambda: model.score(X, y, sample_weight=weights))


def _nullable_frame(n, rng):
    """Labels, and a DataFrame of pandas' nullable and label dtypes with missing values (pd.NA,
    None, NaN), a column of which is missing in all of the first 300 rows: a whole partition."""
    y = rng.integers(0, 3, n)

    def missing(values, dtype, p=0.15):
        values = pd.array(values, dtype=dtype)
        values[rng.random(n) < p] = pd.NA if dtype != object else None
        return values

    X = pd.DataFrame({
        "count": missing(rng.poisson(1 + y), "Int64"),
        "height": missing(rng.normal(size=n) + y, "Float64"),
        "flag": missing(rng.random(n) < 0.3 * (1 + y), "boolean"),
        "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n),
                                 categories=["red", "green", "blue", "violet"]),
        "word": missing(rng.choice(["ham", "spam", "eggs"], n), object),
        "text": missing(rng.choice(["p", "q"], n), "string"),
    })
    X.loc[rng.random(n) < 0.1, "colour"] = np.nan
    X.loc[:299, "flag"] = pd.NA
    X["word"] = X["word"].astype(object)  # (pandas 3 makes the strings a str column)
    return X, y


@pytest.mark.parametrize("cls", [fastgen.MixedNB, fastgen.CategoricalNB])
@pytest.mark.parametrize("handle_unknown", ["error", "ignore"])
def test_nullable_and_categorical_partitions_predict_as_in_memory(client, cls, handle_unknown):
    """Partitions of pandas' nullable dtypes (Int64, Float64, boolean with pd.NA), categorical,
    object and string columns, read on the workers (dict look-ups: small frames), predict
    exactly what the whole DataFrame does in memory (factorized: a large frame), for a model
    fitted on that DataFrame or on its NumPy equivalent; dask turns the object column into
    strings."""
    rng = np.random.default_rng(10)
    X, y = _nullable_frame(1200, rng)
    if cls is fastgen.CategoricalNB:  # (codes of the numbers: counts only)
        X = X.drop(columns="height")
    fit_on = X.iloc[:900]  # (with "ignore", the last rows hold labels it never saw)
    if handle_unknown == "ignore":
        X.loc[1000:, "word"] = "bacon"
    numbers = X.drop(columns=["colour", "word", "text"])
    models = [(cls(handle_unknown=handle_unknown).fit(fit_on, y[:900]), X)]
    # fitted on the NumPy array of the number columns (NaN missing), given the nullable ones
    types = {"count": "categorical", "height": "gaussian", "flag": "bernoulli"}
    kinds = {"feature_types": [types[c] for c in numbers]} if cls is fastgen.MixedNB else {}
    models.append((cls(handle_unknown=handle_unknown, **kinds).fit(
        numbers.iloc[:900].to_numpy(np.float64, na_value=np.nan), y[:900]), numbers))
    for model, data in models:
        dX = dd.from_pandas(data, npartitions=4)
        for method in ("predict", "predict_proba", "predict_log_proba",
                       "predict_joint_log_proba"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (names given to a model fitted without)
                expected = getattr(model, method)(data)
                assert_array_equal(getattr(model, method)(dX).compute(), expected)


@pytest.mark.parametrize("cls, params, X", CASES[:3], ids=IDS[:3])
def test_dask_labels_of_an_in_memory_X_are_computed(client, cls, params, X):
    """fit and partial_fit of an in-memory X with its labels (and weights) as dask collections
    fit as in memory: they raised AttributeError ("'numpy.ndarray' object has no attribute
    'numblocks'"), the dask path taking X for a dask array."""
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(Y))
    dy, dw = da.from_array(Y, chunks=CHUNK), da.from_array(w, chunks=CHUNK)
    want = cls(**params).fit(X, Y, sample_weight=w).predict_joint_log_proba(X)
    assert_array_equal(cls(**params).fit(X, dy, sample_weight=dw).predict_joint_log_proba(X),
                       want)
    batch = cls(**params).partial_fit(X, dd.from_pandas(pd.Series(Y), npartitions=3),
                                      classes=np.unique(Y), sample_weight=dw)
    assert_array_equal(batch.predict_joint_log_proba(X), want)


def test_a_dask_collection_of_another_width_is_refused_at_the_call(client):
    """A dask array or DataFrame with another number of features than the model's is refused
    when predict (or partial_fit) is called, with the in-memory message: each partition
    refused it only at compute."""
    rng = np.random.default_rng(4)
    X, y = rng.poisson(2.0, (60, 4)).astype(np.float64), np.arange(60) % 2
    model = fastgen.MultinomialNB().fit(X, y)
    wide = np.hstack([X, X[:, :1]])
    with pytest.raises(ValueError) as in_memory:
        model.predict(wide)
    for dX in (da.from_array(wide, chunks=(20, 5)), dd.from_pandas(pd.DataFrame(wide), npartitions=3)):
        for call in (lambda: model.predict_proba(dX), lambda: model.partial_fit(dX, y)):
            with pytest.raises(ValueError, match=re.escape(str(in_memory.value))):
                call()


def _missing_data(n=400, d=6, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + y[:, None]
    X[rng.random(X.shape) < 0.15] = np.nan
    return X, y


@pytest.mark.parametrize("cls, params, chunk, on_cluster", [
    (fastgen.LinearDiscriminantAnalysis, {}, 8, False),
    (fastgen.QuadraticDiscriminantAnalysis, {}, 8, False),
    (fastgen.QuadraticDiscriminantAnalysis, {"reg_param": 0.1}, 30, False),
    (fastgen.LinearDiscriminantAnalysis, {"predictive": True}, 30, False),
    (fastgen.LinearDiscriminantAnalysis, {"shrinkage": "auto"}, 8, False),
    (fastgen.QuadraticDiscriminantAnalysis, {}, 60, True),
])
def test_missing_values_complete_over_all_partitions(client, cls, params, chunk, on_cluster):
    """LDA and QDA complete missing values by EM over all the partitions at once, as in memory:
    each partition ran its own EM under its own model, so the merged model was another one
    (means off by 0.02 with partitions of 50 rows), and a partition too small for a model of
    its own (8 rows of 6 features) refused the fit. Weighted rows, and an empty partition; on
    the cluster's worker processes, or (an EM step a round trip to them) in this process.
    shrinkage="auto" reads higher moments, which the parts' conditional covariances must not
    shift (an outside attack: 0.06 in probability with 20 parts)."""
    X, y = _missing_data(n=200)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    keep = np.ones(len(y), dtype=bool)
    keep[16:24] = False  # (one partition of 8 rows left empty)
    dX = da.from_array(X, chunks=(chunk, X.shape[1]))[keep]
    dy, dw = da.from_array(y, chunks=chunk)[keep], da.from_array(w, chunks=chunk)[keep]
    params = {"tol": 1e-10, "max_iter": 2000, **params}
    with dask.config.set(scheduler=client if on_cluster else "synchronous"):
        ours = cls(**params).fit(dX, dy, sample_weight=dw)
    reference = cls(**params).fit(X[keep], y[keep], sample_weight=w[keep])
    assert ours.n_iter_ > 1
    assert_allclose(ours.means_, reference.means_, rtol=1e-7, atol=1e-7)
    assert_allclose(ours.predict_proba(X[keep]), reference.predict_proba(X[keep]), atol=1e-7)


def test_a_dask_batch_with_missing_values_completes_as_in_memory(client):
    """A dask batch with missing values added to a fitted model is completed by EM under the
    model of the fitted statistics and the whole batch's, as partial_fit completes an
    in-memory batch; partitions read through the model's structure (float32 here)."""
    X, y = _missing_data(seed=2)
    X = X.astype(np.float32)
    first, rest = slice(0, 200), slice(200, None)
    params = {"tol": 1e-10, "max_iter": 2000}
    complete = np.nan_to_num(X[first])
    reference = fastgen.QuadraticDiscriminantAnalysis(**params).fit(complete, y[first])
    ours = copy.deepcopy(reference)
    reference.partial_fit(X[rest], y[rest])
    ours.partial_fit(da.from_array(X[rest], chunks=(10, X.shape[1])),
                     da.from_array(y[rest], chunks=10))
    assert ours.means_.dtype == np.float32
    assert ours.n_iter_ == reference.n_iter_ > 1  # (merge kept the fitted model's: an attack)
    assert_allclose(ours.means_, reference.means_, rtol=1e-5)
    assert_allclose(ours.predict_proba(X), reference.predict_proba(X), atol=1e-5)
    with pytest.raises(ValueError, match="do not exist in the initial classes"):
        ours.partial_fit(da.from_array(X[rest], chunks=(10, X.shape[1])),
                         da.from_array(y[rest] + 5, chunks=10))


@pytest.mark.parametrize("cls", [fastgen.LinearDiscriminantAnalysis,
                                 fastgen.QuadraticDiscriminantAnalysis])
def test_lda_and_qda_on_dask_refuse_what_memory_refuses(cls):
    """LDA's and QDA's dask fit, which adds statistics up instead of merging models, checks
    what a batch's fit checks (an outside attack): a class's total weight beyond 1e200 was
    fitted, statistics beyond float64 were refused with another message, and a collection of
    empty partitions was refused as of no classes."""
    X, y = _missing_data(n=60, d=3)
    X = np.nan_to_num(X)
    with dask.config.set(scheduler="synchronous"):
        for weight, X_w in ((1e199, X), (1e190, X * 1e60)):
            w = np.full(len(y), weight)
            with pytest.raises(ValueError) as in_memory:
                cls().fit(X_w, y, sample_weight=w)
            with pytest.raises(ValueError, match=re.escape(str(in_memory.value)[:60])):
                cls().fit(da.from_array(X_w, chunks=(7, 3)), da.from_array(y, chunks=7),
                          sample_weight=da.from_array(w, chunks=7))
        empty = da.from_array(X, chunks=(20, 3))[:0]
        for call in (lambda: cls().fit(empty, da.from_array(y, chunks=20)[:0]),
                     lambda: cls().partial_fit(empty, da.from_array(y, chunks=20)[:0],
                                               classes=[0, 1, 2])):
            with pytest.raises(ValueError, match="Found array with 0 sample"):
                call()
