"""Dask collections in fit, partial_fit and predict*: training is a map over partitions followed
by a tree of merges; prediction is map_blocks.

Imported only when a dask collection is passed in (dask is an optional extra). Each partition is
fitted by an ordinary in-memory model (``partial_fit``, so the Cython kernels count it), the
per-partition models are combined by ``merge`` pairwise, level by level, on the workers, and one
in-memory fitted model comes back: the statistics are additive, so it equals the in-memory fit up
to the order of floating-point sums. A partition is fitted with the classes it sees, and merge
unites them, unless the model cannot fit a partition alone (priors given per class; LDA and QDA,
which a partition of one class cannot fit): then the classes are found first, in a pass over the
labels. A batch added to a fitted model is taken as an in-memory batch is: its feature names are
checked once, at the call, and each partition is read into the model's structure (its dtype,
column kinds and categories) by the in-memory partial_fit. LDA and QDA (full covariances) add
their partitions' statistics up, pairwise on the workers as merges are, instead of merging
partition models, and complete missing values by EM over all the partitions (the model's
``_dask_fit``): a partition's own EM would complete it under another model.
"""
from __future__ import annotations

import numpy as np

from ._frame import LabelColumns
from ._state import Fitted
from ._validation import check_y, distinct_labels, get_feature_names


def is_dask_collection(obj) -> bool:
    """True for dask arrays, DataFrames and Series (without importing dask)."""
    # (asked of the type: a missing attribute of a pandas DataFrame costs microseconds)
    return hasattr(type(obj), "__dask_graph__") and hasattr(type(obj), "__dask_keys__")


def in_memory(obj):
    """``obj`` computed if it is a dask collection: the labels and weights of an in-memory X
    (or the predictions of a dask X, for score), which are one value a row of it."""
    return obj.compute() if is_dask_collection(obj) else obj


def _is_frame(obj) -> bool:
    """A dask DataFrame (a Series has divisions too, but one dimension)."""
    return hasattr(obj, "divisions") and getattr(obj, "ndim", 0) == 2


def _row_parts(X):
    """The row partitions of a dask array (all columns in each block) or DataFrame, as delayed
    objects, and the number of rows of each when known (None for DataFrames). X's and y's
    partitions are taken with optimize_graph=False: optimised separately, a source they share
    would be computed twice, and workers would hold extra chunks."""
    if _is_frame(X):
        return list(X.to_delayed(optimize_graph=False)), None
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    return [block[0] for block in X.to_delayed(optimize_graph=False)], X.chunks[0]


def check_dask_labels(y, what="y"):
    """A dask collection of labels (or weights) must be one-dimensional: a dask array of one
    dimension or a Series (a ValueError naming ``what`` otherwise)."""
    if _is_frame(y):
        raise ValueError(f"{what} must be one-dimensional: a dask array or Series.")
    if not hasattr(y, "divisions") and y.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got {y.ndim} dimensions.")


def _label_parts(y, n_parts, row_chunks, what):
    """Labels (or weights) split like the rows of X: a dask array or Series with the same
    partitioning, or an in-memory array cut at X's chunk boundaries."""
    if y is None:
        return [None] * n_parts
    if is_dask_collection(y):
        check_dask_labels(y, what)
        if hasattr(y, "divisions"):  # Series
            parts = list(y.to_delayed(optimize_graph=False))
        else:
            if row_chunks is not None and not any(np.isnan(row_chunks)):
                if y.shape[0] != sum(row_chunks):
                    raise ValueError(f"Found input variables with inconsistent numbers of "
                                     f"samples: [{int(sum(row_chunks))}, {y.shape[0]}]")
                y = y.rechunk((row_chunks,))
            parts = list(y.to_delayed(optimize_graph=False))
        if len(parts) != n_parts:
            raise ValueError(f"{what} has {len(parts)} partitions and X has {n_parts}: they must "
                             "be partitioned alike.")
        return parts
    if row_chunks is None or any(np.isnan(row_chunks)):
        raise ValueError(f"{what} must be a dask collection partitioned like X when X's partition "
                         "sizes are unknown.")
    y = np.asarray(y)
    if y.shape[0] != int(sum(row_chunks)):
        raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                         f"[{int(sum(row_chunks))}, {y.shape[0]}]")
    bounds = np.cumsum((0,) + tuple(row_chunks)).astype(int)
    return [y[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _global_categories(X, estimator):
    """For a DataFrame given to a new model of label columns (MixedNB, CategoricalNB): the dtype
    of each column it reads as labels, by position, so that every partition encodes them alike,
    as one in-memory fit does: a column's declared categories (a pandas CategoricalDtype whose
    categories dask knows), used or not and in their order, else the sorted labels of all the
    partitions. (A batch added to a fitted model is read through the model's categories, as in
    memory: see ``_structure``.)"""
    import dask
    import pandas as pd

    meta = X._meta
    if meta.columns.duplicated().any():  # (dask selects columns by name)
        raise ValueError(f"The dask DataFrame repeats the column name(s) "
                         f"{sorted(set(meta.columns[meta.columns.duplicated()]), key=str)}: "
                         "name its columns apart (or compute it and fit the pandas DataFrame).")
    columns = list(estimator._new_shell(meta).extra["categories"])  # the columns read as labels
    labels, counted = {}, []
    for j in columns:
        dtype = meta.dtypes.iloc[j]
        if isinstance(dtype, pd.CategoricalDtype) and X.iloc[:, j].cat.known:
            labels[j] = list(dtype.categories)
        else:
            counted.append(j)
    uniques = dask.compute(*[X.iloc[:, j].dropna().drop_duplicates() for j in counted])
    for j, values in zip(counted, uniques):
        labels[j] = list(pd.Categorical(np.asarray(values)).categories)
    return {j: pd.CategoricalDtype(values) for j, values in labels.items()}


def _named_as(estimator, X, fitted):
    """The snapshot ``fitted`` under the feature names of the dask collection X, once its number
    of features (where dask knows it) and its names have passed the in-memory checks against
    its own (``_check_feature_names``, scikit-learn's rule: a model fitted without names takes
    a DataFrame with a warning, one fitted with names takes an array with a warning and refuses
    other names). X is checked here, once, at the call, as in memory: checked by each partition
    on the workers, a warning was lost (or given once per partition), and other names or
    another width were refused only at compute. Each partition bears X's names, so under them
    it passes the same check silently and is read as in memory."""
    estimator._check_feature_names(X, fitted.feature_names)
    # (a width dask does not know, or X not 2-D: the partitions' own check says it)
    width = X.shape[1] if getattr(X, "ndim", 0) == 2 else np.nan
    if width == width and width != fitted.n_features:
        raise ValueError(f"X has {width} features, but {type(estimator).__name__} is "
                         f"expecting {fitted.n_features} features as input.")
    names = get_feature_names(X)
    if (names is None) == (fitted.feature_names is None):  # (then the same names: checked)
        return fitted
    return fitted.replace(feature_names=names, params=fitted.params)


def _structure(fitted):
    """What the model of a partition of a batch added to the snapshot ``fitted`` takes of it:
    its classes, features, names, dtype, validated hyperparameters and ``extra`` (MixedNB's
    column kinds, the categories of columns of labels), without its statistics (the partition's
    are counted from zero) or its lock (neither goes to the workers)."""
    return {name: getattr(fitted, name)
            for name in ("classes", "n_features", "dtype", "feature_names", "hyper", "extra")}


def _fit_part(X, y, w, kind, params, classes, dtypes, start):
    """One non-empty partition's model. For a new model: with the given classes or, when
    None, the partition's own (merge unites them); its label columns as ``dtypes`` say (by
    position). For a batch added to a fitted model (``start``, its
    ``_structure``): the in-memory partial_fit of the partition into that structure with no
    statistics yet, so that it is checked and read as the model reads an in-memory batch (its
    dtype, its column kinds and categories, its classes); a partition fitted as a model of its
    own was read as a first batch is, and differed (MixedNB's inferred kinds, CategoricalNB's
    categories of a DataFrame where the model had none), so the merge refused it."""
    model = kind(**params)
    model._deferred = True  # (parameters only for the merge of all partitions: BaseClassifier)
    w = None if w is None else np.asarray(w)
    if start is not None:
        empty = np.empty((0, start["n_features"]), dtype=start["dtype"])
        stats = model._start(start["hyper"], len(start["classes"]), empty)
        model._publish(Fitted(**start, stats=stats, lock=model._write_lock()))
        return model.partial_fit(X, y, sample_weight=w)
    if dtypes:
        X = X.copy(deep=False)
        for j, dtype in dtypes.items():
            X.isetitem(j, X.iloc[:, j].astype(dtype))
    y = np.asarray(y)
    if classes is None:
        classes = distinct_labels(check_y(y, X.shape[0]))
    return model.partial_fit(X, y, classes=classes, sample_weight=w)


def _map_reduce(func, combine, parts, ys, ws, *args):
    """``func(X_part, y_part, w_part, *args)`` of each non-empty partition, combined pairwise
    by ``combine``, level by level, on the workers (log2(partitions) rounds): only the root
    comes back (None if every partition is empty)."""
    from dask import delayed

    level = [delayed(_unless_empty)(func, Xp, yp, wp, *args) for Xp, yp, wp in zip(parts, ys, ws)]
    while len(level) > 1:
        level = [delayed(_combined)(combine, level[i], level[i + 1]) if i + 1 < len(level)
                 else level[i] for i in range(0, len(level), 2)]
    return _without_aliases(level[0]).compute() if level else None


def _unless_empty(func, X, y, w, *args):
    return None if X.shape[0] == 0 else func(X, y, w, *args)


def _combined(combine, a, b):
    return b if a is None else a if b is None else combine(a, b)


def _merged(a, b):
    return a.merge(b)


def _without_aliases(final):
    """``final`` (a Delayed) with its alias tasks bypassed: a dask array's chunks taken as
    delayed objects are aliases of aliases of the tasks that make them (from_delayed, then
    concatenate, for example), and the distributed scheduler runs each alias as a task of its
    own, a round trip of about a millisecond; with the partitions taken unoptimised (see
    _row_parts) nothing removes them. The graph is returned as it is where dask's task spec
    (dask 2024.12 and later) is not available, and where a layer carries annotations (workers,
    resources, retries...), which a flattened graph would lose."""
    try:
        from dask._task_spec import Alias, convert_legacy_graph
        from dask.delayed import Delayed
    except ImportError:  # older dask: tuple graphs
        return final
    graph = final.__dask_graph__()
    if any(getattr(layer, "annotations", None) for layer in getattr(graph, "layers", {}).values()):
        return final
    dsk = convert_legacy_graph(dict(graph))  # literals and tuples as nodes
    # an alias's target is a key (a TaskRef in dask 2024.12.0)
    target = {key: getattr(node.target, "key", node.target) for key, node in dsk.items()
              if isinstance(node, Alias)}
    if not target or final.key in target:
        return final

    def resolve(key):
        while key in target:
            key = target[key]
        return key

    subs = {key: resolve(key) for key in target}
    return Delayed(final.key, {key: node.substitute(subs) if subs.keys() & node.dependencies
                               else node
                               for key, node in dsk.items() if key not in target})


def fit(estimator, X, y, sample_weight=None, classes=None, fitted=None):
    """Fit ``estimator``'s kind on dask collections (or, with ``classes`` and the snapshot
    ``fitted`` of a fitted estimator, a batch to add to it); returns the in-memory model fitted
    on all partitions."""
    # a batch added to a fitted model: X checked first, as in memory
    start = None if fitted is None else _structure(_named_as(estimator, X, fitted))
    parts, row_chunks = _row_parts(X)
    ys = _label_parts(y, len(parts), row_chunks, "y")
    ws = _label_parts(sample_weight, len(parts), row_chunks, "sample_weight")
    if classes is None and not estimator._fits_partitions_alone():
        # every partition is fitted with all classes: found first, in a pass over the labels
        if is_dask_collection(y):
            import dask.array as da

            classes = np.unique(np.asarray(y.drop_duplicates().compute() if hasattr(y, "divisions")
                                           else da.unique(y).compute()))
        else:
            classes = np.unique(np.asarray(y))
    def map_reduce(func, combine, *args):
        return _map_reduce(func, combine, parts, ys, ws, *args)

    # (LDA and QDA, whose EM over missing values runs over all the partitions, add their
    # statistics up; the others fit a model of each partition and merge them)
    model = estimator._dask_fit(map_reduce, classes, fitted, start, X)
    if model is None:
        # (a new model of columns of labels: MixedNB, CategoricalNB)
        dtypes = _global_categories(X, estimator) if fitted is None and _is_frame(X) and \
            isinstance(estimator, LabelColumns) else {}
        model = map_reduce(_fit_part, _merged, type(estimator), estimator.get_params(),
                           classes, dtypes, start)
    if model is None:
        raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
    if fitted is not None:  # named as the model it is merged into (X's names passed the check)
        model._publish(model._fitted.replace(feature_names=fitted.feature_names))
    return model


def predict(estimator, method, X, *args, **kwargs):
    """``estimator.<method>(X)`` on each row partition of a dask array or DataFrame: a lazy dask
    array with one row per sample (and one column per class where the method gives one)."""
    import dask.array as da
    from dask import delayed

    frozen = estimator._frozen()  # one snapshot for every block, whatever refits meanwhile
    frozen._fitted = _named_as(estimator, X, frozen._fitted)

    def block(part):
        if part.shape[0] == 0:  # (a filtered collection's empty partitions)
            return np.empty((0,) + tail, dtype=dtype)
        return getattr(frozen, method)(part, *args, **kwargs)

    fitted = frozen._fitted
    n_classes = len(fitted.classes)
    if method == "predict":
        tail, dtype = (), fitted.classes.dtype
    elif method == "decision_function" and n_classes == 2:
        tail, dtype = (), np.dtype(np.float64)
    else:
        tail, dtype = (n_classes,), (np.dtype(np.float64) if method == "decision_function"
                                     else fitted.dtype)
    if _is_frame(X):  # whole partitions: MixedNB reads the DataFrame's columns and dtypes
        return da.concatenate([da.from_delayed(delayed(block)(part), shape=(np.nan,) + tail,
                                               dtype=dtype)
                               for part in X.to_delayed()], axis=0)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    meta = np.empty((0,) + tail, dtype=dtype)
    if tail:
        return X.map_blocks(block, dtype=dtype, chunks=(X.chunks[0], tail), meta=meta)
    return X.map_blocks(block, dtype=dtype, drop_axis=1, meta=meta)
