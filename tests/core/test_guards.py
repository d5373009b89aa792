"""X rewritten by another thread during a call (fastgen/_core/_guard.pxd).

The models check X where it lies and the kernels then read it without the GIL, so another thread
can change X.data, X.indices or X.indptr after the check. Each kernel is given here the arrays
such a thread leaves: column indices and row pointers far outside the arrays, counts no count
can be. Every one used to read or write far outside an array (SIGSEGV, or a corrupted heap);
now a kernel that meets one raises the ValueError below and never touches memory it does not
own. The last test makes the race itself happen, from Python threads, in a fresh interpreter.
"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from fastgen._core import _counts, builds
from fastgen._core import checks as _checks
from fastgen._validation import NotFittedError

CHANGED = "X changed while it was being read"
JLL_MODULES = builds("_jll")
HUGE = {np.int32: 2**30, np.int64: 2**40}


def _counts_csr(index_dtype, n=40, f=30, density=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, f, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 20, k)).astype(np.float64)
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    return X


def _params(predictive, X):
    y = np.arange(X.shape[0]) % 3
    model = fastgen.MultinomialNB(predictive=predictive).fit(X, y)
    return model._params_of(model._fitted)


def _score_csr(module, params, data, indices, indptr, n_rows):
    out = np.empty((n_rows, 3))
    return module.jll_linear_csr(data, indices, indptr, params.table, params.bias, False, 0.0,
                                 params.nonfinite, 1, out, 1, params.polya_blocks,
                                 params.polya_lengths, params.polya_counts, params.polya_gamma)


def _rewrites(X, index_dtype):
    """(what, data, indices, indptr) as another thread may leave X's arrays."""
    huge = HUGE[index_dtype]
    middle = X.indptr[-1] // 2
    cases = []
    for what, value in [("a column index beyond the features", huge),
                        ("a negative column index", -huge)]:
        indices = X.indices.copy()
        indices[middle:] = value
        cases.append((what, X.data, indices, X.indptr))
    for what, value in [("a row pointer beyond the entries", huge),
                        ("a negative row pointer", -huge)]:
        indptr = X.indptr.copy()
        indptr[len(indptr) // 2:] = value
        cases.append((what, X.data, X.indices, indptr))
    for what, value in [("a negative whole count", -1e9), ("a NaN count", np.nan),
                        ("an infinite count", np.inf), ("a count of -1", -1.0)]:
        data = X.data.copy()
        data[middle:] = value
        cases.append((what, data, X.indices, X.indptr))
    cases.append(("shorter data than indices", X.data[:3].copy(), X.indices, X.indptr))
    return cases


@pytest.mark.parametrize("module", JLL_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("predictive", [False, True], ids=["plug-in", "predictive"])
def test_scoring_kernel_refuses_rewritten_csr(module, index_dtype, predictive):
    """Out-of-range indices are the ValueError; row pointers are clamped to the entries (with
    indices still valid, the numbers are unspecified but the call returns); the predictive's
    counts that no count can be are the ValueError (the gamma table's route included: counts
    up to 19 with blocks of 8)."""
    X = _counts_csr(index_dtype)
    params = _params(predictive, X)
    if predictive:
        assert params.polya_gamma is not None and X.data.max() > params.polya_blocks.shape[0]
    for what, data, indices, indptr in _rewrites(X, index_dtype):
        values_matter = predictive or "count" not in what  # the plug-in multiplies them
        if "column index" in what or ("count" in what and predictive):
            with pytest.raises(ValueError, match=CHANGED):
                _score_csr(module, params, data, indices, indptr, X.shape[0])
        elif values_matter:
            assert _score_csr(module, params, data, indices, indptr, X.shape[0]) == 0, what


@pytest.mark.parametrize("module", JLL_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_scoring_kernel_refuses_a_replaced_indptr(module):
    """An indptr of another length than the output's rows (X.indptr replaced since its check)."""
    X = _counts_csr(np.int32)
    params = _params(False, X)
    with pytest.raises(ValueError, match=CHANGED):
        _score_csr(module, params, X.data, X.indices, np.r_[X.indptr, X.indptr[-1]],
                   X.shape[0])


@pytest.mark.parametrize("module", JLL_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("value", [-1.0, -1e9, np.nan, np.inf])
def test_dense_predictive_refuses_counts_no_count_can_be(module, value):
    X = _counts_csr(np.int32)
    params = _params(True, X)
    dense = X.toarray()
    dense[5, 3] = value
    out = np.empty((X.shape[0], 3))
    with pytest.raises(ValueError, match=CHANGED):
        module.jll_linear_dense(dense, params.table, params.bias, False, 0.0, 1, out, 1,
                                params.polya_blocks, params.polya_lengths, params.polya_counts,
                                params.polya_gamma)


def _grouping(n_rows, n_classes):
    y_idx = np.arange(n_rows, dtype=np.intp) % n_classes
    order = np.argsort(y_idx, kind="stable").astype(np.intp)
    class_ptr = np.r_[0, np.cumsum(np.bincount(y_idx, minlength=n_classes))].astype(np.intp)
    return order, class_ptr


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_counting_kernels_refuse_rewritten_csr(index_dtype, n_threads):
    """count_csr and list_csr (with rooms and without) never write outside their outputs: an
    index beyond the features or counts that are none (here every row from the middle on) are
    the ValueError, row pointers are clamped, and a class that
    reads more entries than its room was counted for (X grew since) lists nothing and is the
    ValueError."""
    X = _counts_csr(index_dtype, n=60, f=200)
    order, class_ptr = _grouping(X.shape[0], 3)
    w = np.ones(len(order))
    for what, data, indices, indptr in _rewrites(X, index_dtype):
        fc, cc = np.zeros((3, 200)), np.zeros(3)
        if "column index" in what or "count" in what:
            with pytest.raises(ValueError, match=CHANGED):
                _counts.count_csr(data, indices, indptr, order, class_ptr, w, False, 0.0, fc, cc,
                                  None, n_threads)
        else:
            _counts.count_csr(data, indices, indptr, order, class_ptr, w, False, 0.0, fc, cc,
                              None, n_threads)
    # rooms counted from the rows' entries (fewer than the features), then the rows grow: every
    # other row spans all entries, and a class could list more nonzeros than its room holds
    X = _counts_csr(index_dtype, n=60, f=3000, density=0.01)
    entries = np.bincount(np.arange(60) % 3, weights=np.diff(X.indptr), minlength=3)
    assert entries.max() < 3000
    room = np.r_[0, np.cumsum(entries.astype(np.intp) + 1)]
    grown = X.indptr.copy()
    grown[1:-1:2] = X.indptr[-1]
    grown[2:-1:2] = 0
    for rooms in (room, None):
        size = room[-1]
        ptr, feature, value = np.empty(4, np.intp), np.empty(size, np.intp), np.empty(size)
        with pytest.raises(ValueError, match=CHANGED):
            _counts.list_csr(X.data, X.indices, grown, order, class_ptr, w, False, 0.0, 3000,
                             rooms, np.empty(3), None, ptr, feature, value, np.empty(3),
                             n_threads)


def test_list_csr_room_is_not_mistaken_for_a_change():
    """A class with more entries than features needs room for the features only."""
    X = sp.csr_matrix(np.ones((50, 4)))
    order, class_ptr = _grouping(50, 2)
    room = np.array([0, 5, 10], dtype=np.intp)  # min(25 * 4 entries, 4 features) + 1 each
    ptr, feature, value = np.empty(3, np.intp), np.empty(10, np.intp), np.empty(10)
    assert _counts.list_csr(X.data, X.indices, X.indptr, order, class_ptr, np.ones(50), False,
                            0.0, 4, room, np.empty(2), None, ptr, feature, value, np.empty(2),
                            2) == 0
    np.testing.assert_array_equal(ptr, [0, 4, 8])
    np.testing.assert_array_equal(value[:8], 25.0)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_duplicate_search_refuses_rewritten_indices(index_dtype):
    X = _counts_csr(index_dtype)
    for what, _, indices, indptr in _rewrites(X, index_dtype):
        if "column index" in what:
            with pytest.raises(ValueError, match=CHANGED):
                _checks.csr_has_duplicates(indices, indptr, X.shape[1])
        elif "row pointer" in what:
            assert _checks.csr_has_duplicates(indices, indptr, X.shape[1]) in (0, 1)


@pytest.mark.parametrize("module", JLL_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_negative_binomial_csr_kernel_refuses_rewritten_csr(module, index_dtype):
    """PoissonNB's CSR predictive kernel: a column index out of range, or a count no count can
    be, is the ValueError (a negative whole count would read another feature's table rows);
    row pointers are clamped to the entries; an indptr of another length is the ValueError."""
    X = _counts_csr(index_dtype)
    X.data[::7] = 100.0
    model = fastgen.PoissonNB(predictive=True).fit(X, np.arange(X.shape[0]) % 3)
    A, S, _, _, bias, _, T = model._params_of(model._fitted).tables
    assert T.shape[0] // X.shape[1] <= X.data.max()  # counts beyond the table too

    def score(data, indices, indptr):
        out = np.empty((X.shape[0], 3))
        return module.jll_negbin_csr(data, indices, indptr, A, S, T, bias, 0, out, 1)

    assert score(X.data, X.indices, X.indptr) == 0
    for what, data, indices, indptr in _rewrites(X, index_dtype):
        if "column index" in what or "count" in what:
            with pytest.raises(ValueError, match=CHANGED):
                score(data, indices, indptr)
        else:
            assert score(data, indices, indptr) == 0, what
    with pytest.raises(ValueError, match=CHANGED):
        score(X.data, X.indices, np.r_[X.indptr, X.indptr[-1]])


@pytest.mark.parametrize("module", JLL_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_negative_binomial_table_never_read_below_a_feature(module):
    """PoissonNB's predictive reads table row j * width + x for a whole count x below width: a
    negative whole count (X changed since its check) takes the computed route instead."""
    rng = np.random.default_rng(3)
    X = rng.poisson(2.0, (30, 4)).astype(np.float64)
    model = fastgen.PoissonNB(predictive=True).fit(X, np.arange(30) % 2)
    params = model._params_of(model._fitted)
    A, S, B, log_prior, bias, kind, T = params.tables[:7]
    assert T.shape[0] > 4  # the table is there
    bad = X.copy()
    bad[:, 0] = -1e9
    out = np.empty((30, 2))
    module.jll_diag_dense(bad, A, S, B, T, log_prior, bias, kind, 1, out, 1)


@pytest.mark.parametrize("module", JLL_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("kind", [1, 2], ids=["log_proba", "proba"])
def test_a_nan_written_into_x_after_its_check_is_never_a_posterior(module, kind):
    """NaN written by another thread into a dense row that was checked (an outside attack):
    a row of NaN joint log-likelihoods became the posterior 0 for every class, a row with one
    a NaN posterior. The kernels that score X itself count a row they normalise holding NaN
    and raise (the joint log-likelihoods are written as they are)."""
    rng = np.random.default_rng(0)
    X = rng.poisson(2.0, (30, 6)).astype(np.float64)
    model = fastgen.MultinomialNB().fit(X, np.arange(30) % 3)
    params = model._params_of(model._fitted)
    for rows, cols in [(3, slice(None)), (5, 2)]:
        bad = X.copy()
        bad[rows, cols] = np.nan
        out = np.empty((30, 3))
        with pytest.raises(ValueError, match=CHANGED):
            module.jll_linear_dense(bad, params.table, params.bias, False, 0.0, kind, out, 1)
        module.jll_linear_dense(bad, params.table, params.bias, False, 0.0, 0, out, 1)
        assert np.isnan(out[rows]).any()


def test_an_unknown_category_the_kernel_met_but_no_longer_there_is_x_changed(monkeypatch):
    """CategoricalNB's kernel reports an unknown code, then names it by scanning X again; when
    another thread had written the code back, the scan found none, and an IndexError escaped."""
    from fastgen._core import jll as _jll

    X = np.arange(12).reshape(6, 2) % 3
    model = fastgen.CategoricalNB().fit(X, np.arange(6) % 2)
    kernel = _jll.jll_categorical
    monkeypatch.setattr(_jll, "jll_categorical", lambda *args: (kernel(*args)[0], 1, 0))
    with pytest.raises(ValueError, match=CHANGED):
        model.predict_proba(X)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_categorical_codes_are_read_once(dtype):
    """A negative integer code is skipped: the code is read once, so it cannot pass as missing
    and then index the table as another value (the old code read it twice)."""
    X = np.array([[0, -(2**30)], [1, 2]], dtype=dtype)
    offsets = np.array([0, 2, 5], dtype=np.intp)
    count = np.zeros((1, 5))
    _counts.count_categorical(X, np.arange(2, dtype=np.intp), np.zeros(2, np.intp), np.ones(2),
                              offsets, count, 1)
    np.testing.assert_array_equal(count, [[1, 1, 0, 0, 1]])


@pytest.mark.parametrize("n_threads", [1, 2])
def test_counting_kernels_refuse_rows_beyond_a_replaced_indptr(n_threads):
    """X.indptr replaced by a shorter one since the check: the row numbers (from y) are checked
    against it before any is read."""
    X = _counts_csr(np.int32, n=60, f=50)
    order, class_ptr = _grouping(60, 3)
    short = X.indptr[:11].copy()
    with pytest.raises(ValueError, match=CHANGED):
        _counts.count_csr(X.data, X.indices, short, order, class_ptr, np.ones(60), False, 0.0,
                          np.zeros((3, 50)), np.zeros(3), None, n_threads)
    ptr, feature, value = np.empty(4, np.intp), np.empty(200, np.intp), np.empty(200)
    with pytest.raises(ValueError, match=CHANGED):
        _counts.list_csr(X.data, X.indices, short, order, class_ptr, np.ones(60), False, 0.0, 50,
                         None, np.empty(3), None, ptr, feature, value, np.empty(3), n_threads)


@pytest.mark.parametrize("value", [-1e9, np.nan, np.inf])
def test_counting_kernels_refuse_values_that_are_no_counts(value):
    """A counted CSR row whose sum is negative or not finite, or (dense) a class whose counts
    are not all counts, is the ValueError (a fit would otherwise leave NaN or negative counts
    behind, and the model score NaN); binarized values may be anything. (A negative value in a
    CSR row whose sum stays positive: the next test.)"""
    X = _counts_csr(np.int32, n=60, f=50)
    X.data[7] = value
    order, class_ptr = _grouping(60, 3)
    w = np.ones(60)
    fc, cc = np.zeros((3, 50)), np.zeros(3)
    with pytest.raises(ValueError, match=CHANGED):
        _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, w, False, 0.0, fc, cc,
                          None, 1)
    _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, w, True, 0.0,
                      np.zeros((3, 50)), np.zeros(3), None, 1)
    ptr, feature, listed = np.empty(4, np.intp), np.empty(200, np.intp), np.empty(200)
    with pytest.raises(ValueError, match=CHANGED):
        _counts.list_csr(X.data, X.indices, X.indptr, order, class_ptr, w, False, 0.0, 50, None,
                         np.empty(3), None, ptr, feature, listed, np.empty(3), 1)
    dense = X.toarray()
    dense[0, :] = value  # the class's sums become no counts
    with pytest.raises(ValueError, match=CHANGED):
        _counts.count_dense(dense, order, class_ptr, w, False, 0.0, np.zeros((3, 50)),
                            np.zeros(3), 1)


def _hidden_negative(X):
    """X with one count made negative in a row whose sum stays positive (each value tested
    would cost the counting kernels 8-20%: bench/README)."""
    X = X.copy()
    row = next(i for i in range(X.shape[0]) if X.indptr[i + 1] - X.indptr[i] >= 2)
    start, stop = X.indptr[row], X.indptr[row + 1]
    X.data[start] = -(X.data[start + 1:stop].sum() - 0.5)
    assert X.data[start] < 0 and X.data[start:stop].sum() > 0
    return X


@pytest.mark.parametrize("n_threads", [1, 2])
def test_a_negative_count_hidden_in_a_positive_row_is_never_listed(n_threads):
    """A negative value whose row sum stays positive passes the counting kernels' row check, so
    it is looked for where the counts are listed: list_csr (a fit) refuses a class whose listed
    sum is not a positive count, and nonzero_counts (the listing of a table that count_csr
    added a batch to, as partial_fit does) reports it, for the model to refuse."""
    from fastgen._core import _tables

    X = _hidden_negative(_counts_csr(np.int32, n=60, f=50))
    order, class_ptr = _grouping(60, 3)
    w = np.ones(60)
    ptr, feature, listed = np.empty(4, np.intp), np.empty(200, np.intp), np.empty(200)
    room = np.arange(0, 4 * 51, 51, dtype=np.intp)
    for rooms in (room, None):
        with pytest.raises(ValueError, match=CHANGED):
            _counts.list_csr(X.data, X.indices, X.indptr, order, class_ptr, w, False, 0.0, 50,
                             rooms, np.empty(3), None, ptr, feature, listed, np.empty(3),
                             n_threads)
    fc = np.zeros((3, 50))
    _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, w, False, 0.0, fc,
                      np.zeros(3), None, n_threads)
    assert (fc < 0).any()
    out = (np.empty(4, np.intp), np.empty(150, np.intp), np.empty(150), np.empty(3))
    assert _tables.nonzero_counts(fc, *out) == (fc < 0).sum()
    fc[fc < 0] = np.nan
    assert _tables.nonzero_counts(fc, *out) == np.isnan(fc).sum()
    assert _tables.nonzero_counts(np.abs(np.nan_to_num(fc)), *out) == 0


@pytest.mark.parametrize("call", ["fit", "partial_fit"])
@pytest.mark.parametrize("name, params", [("MultinomialNB", {}),
                                          ("MultinomialNB", {"predictive": True}),
                                          ("ComplementNB", {})],
                         ids=["MultinomialNB", "MultinomialNB-predictive", "ComplementNB"])
def test_a_negative_count_hidden_in_a_positive_row_never_scores_nan(name, params, call):
    """The same value written by another thread after X's check: a fit then raises, and a
    partial_fit (which counts into the model's table) leaves parameters that are refused when
    they are derived, on the next prediction -- before, the model scored NaN where the feature
    occurs. (BernoulliNB binarizes: a negative value is an absent word.)"""
    from fastgen import _base

    X = _counts_csr(np.int32, n=60, f=50)
    y = np.arange(60) % 3
    model = getattr(fastgen, name)(**params)
    if call == "partial_fit":
        model.partial_fit(X, y, classes=[0, 1, 2])
    batch, hidden = X.copy(), _hidden_negative(X)
    undo = _before_line(_base, "stats = self._add(stats," if call == "partial_fit" else
                        "stats = self._add(self._start(",
                        lambda: batch.data.__setitem__(slice(None), hidden.data))
    try:
        if call == "fit":
            with pytest.raises(ValueError, match=CHANGED):
                model.fit(batch, y)
            return
        model.partial_fit(batch, y)
    finally:
        undo()
    with pytest.raises(ValueError, match="negative or NaN counts"):
        model.predict_proba(X)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "PoissonNB"])
def test_a_partial_fit_that_finds_x_changed_leaves_no_half_counted_model(name, sparse):
    """partial_fit counts a batch into the model's own statistics: one that fails part of the
    way (here counts turned to -1e9 after their check) leaves the model unfitted, with a note saying so,
    never fitted on part of the batch. (PoissonNB adds a new table, and stays as it was.)"""
    from fastgen import _base

    rng = np.random.default_rng(5)
    X = rng.poisson(2.0, (60, 8)).astype(np.float64)
    y = np.arange(60) % 3
    model = getattr(fastgen, name)().fit(sp.csr_matrix(X) if sparse else X, y)
    before = model.predict_proba(X)
    batch = sp.csr_matrix(X) if sparse else X.copy()

    def writer():
        (batch.data if sparse else batch)[:5] = -1e9

    undo = _before_line(_base, "stats = self._add(stats, X_valid, members, has_nan, hyper)",
                        writer)
    try:
        with pytest.raises(ValueError, match=CHANGED) as caught:
            model.partial_fit(batch, y)
    finally:
        undo()
    assert "no longer fitted" in "".join(getattr(caught.value, "__notes__", []))
    with pytest.raises(NotFittedError):
        model.predict_proba(X)
    model.partial_fit(X, y, classes=[0, 1, 2])  # starts again
    np.testing.assert_allclose(model.predict_proba(X), before, rtol=1e-12)


def test_a_first_partial_fit_that_finds_x_changed_is_the_value_error():
    """On an unfitted model the batch counts into statistics of its own: the error is the
    kernel's, not an UnboundLocalError of the code that unfits a model counted in place."""
    from fastgen import _base

    X = sp.csr_matrix(np.random.default_rng(6).poisson(2.0, (60, 8)).astype(np.float64))
    model = fastgen.MultinomialNB()

    def writer():
        X.data[:5] = -1e9

    undo = _before_line(_base, "stats = self._add(stats, X_valid, members, has_nan, hyper)",
                        writer)
    try:
        with pytest.raises(ValueError, match=CHANGED):
            model.partial_fit(X, np.arange(60) % 3, classes=[0, 1, 2])
    finally:
        undo()
    with pytest.raises(NotFittedError):
        model.predict_proba(X)


def test_dense_x_is_pinned_against_reshaping():
    """check_X hands the kernels a view of the caller's array: setting the array's shape in
    place afterwards (another thread) cannot change the shape they see."""
    from fastgen._validation import check_X

    X = np.ones((200, 50))
    checked, _ = check_X(X, estimator_name="test")
    X.shape = (10000, 1)
    assert checked.shape == (200, 50) and np.shares_memory(checked, X)


def test_csr_x_is_pinned_against_replaced_attributes():
    """check_X hands the kernels a CSR object of its own over the arrays it checked: replacing
    the caller's shape or arrays afterwards does not reach it (no copy of the arrays is made)."""
    from fastgen._validation import check_X

    X = _counts_csr(np.int32)
    checked, _ = check_X(X, estimator_name="test", dtype=np.float64)
    data, indices = X.data, X.indices
    X._shape = (X.shape[0], 2)
    X.indices = np.full_like(X.indices, 2**30)
    assert checked.shape == (40, 30) and checked.indices is indices and checked.data is data


def test_a_shape_replaced_during_fit_does_not_reach_the_model():
    """The case that corrupted the heap: ComplementNB's fit listed the counts of 12 features,
    then the caller's CSR shape was set to 2 features before the model recorded its width, and
    the table kernel wrote 12 features' totals into a 2-feature array."""
    from fastgen import _base

    rng = np.random.default_rng(10)
    dense = rng.integers(0, 5, (120, 12)) * (rng.random((120, 12)) < 0.5)
    dense[0] = 1
    X = sp.csr_matrix(dense.astype(np.int32))
    undo = _before_line(_base, "self._check_moments(stats, hyper)",
                        lambda: setattr(X, "_shape", (120, 2)))
    try:
        model = fastgen.ComplementNB().fit(X, np.arange(120) % 3)
    finally:
        undo()
    assert model.n_features_in_ == 12
    assert np.isfinite(model.predict_proba(dense)).all()


def _before_line(module, text, action):
    """Run action once, just before the first line of module's source holding text executes (in
    this thread: a point where another thread could act as well). Returns the tracer's undo."""
    path = module.__file__
    with open(path) as f:
        target = next(n for n, line in enumerate(f, 1) if text in line)
    left = [1]

    def local(frame, event, arg):
        if event == "line" and frame.f_lineno == target and left[0]:
            left[0] = 0
            action()
        return local

    sys.settrace(lambda frame, event, arg: local if frame.f_code.co_filename == path else None)
    return lambda: sys.settrace(None)


def _with_a_repeat(X):
    """X with row 0's first column stored twice (rows no longer strictly increasing)."""
    rows = [X.indices[X.indptr[i]:X.indptr[i + 1]] for i in range(X.shape[0])]
    vals = [X.data[X.indptr[i]:X.indptr[i + 1]] for i in range(X.shape[0])]
    rows[0], vals[0] = np.r_[rows[0], rows[0][:1]], np.r_[vals[0], 1.0]
    indptr = np.r_[0, np.cumsum([len(r) for r in rows])].astype(np.int32)
    return sp.csr_matrix((np.concatenate(vals), np.concatenate(rows).astype(np.int32), indptr),
                         shape=X.shape)


def _scipy_paths():
    """(name, module, line, call): the places where a validated X goes to scipy's C++ routines,
    which trust its index arrays, each with a call that reaches it."""
    from fastgen import _validation, naive_bayes, semi_supervised

    X = _counts_csr(np.int32, n=100, f=20, seed=1)
    y = np.arange(100) % 3
    mnb = fastgen.MultinomialNB().fit(X, y)
    dense = X.toarray()
    dense[:, 0] = 1.0  # a feature every class always has: BernoulliNB(alpha=0) requires it
    X1 = sp.csr_matrix(dense)
    bnb = fastgen.BernoulliNB(alpha=0.0, force_alpha=True).fit(X1, y)
    assert bnb._params_of(bnb._fitted).must is not None
    repeat = _with_a_repeat(X)
    unlabelled = np.where(np.arange(100) < 50, y, -1)
    return [
        ("summed duplicates", _validation, "if X.dtype.kind not in \"iu\":", repeat,
         lambda X: mnb.predict(X)),
        ("BernoulliNB's required features", naive_bayes, "sub = rechecked(X.copy())", X1,
         lambda X: bnb.predict(X)),
        ("SemiSupervised's labelled rows", semi_supervised,
         "X_l = _take_rows(rechecked(X_valid.copy())", X.copy(),
         lambda X: fastgen.SemiSupervised(fastgen.MultinomialNB(), unlabeled_weight=0.0).fit(
             X, unlabelled)),
        ("SemiSupervised's rows of weight", semi_supervised, "part = rechecked(X_valid.copy())",
         X.copy(), lambda X: fastgen.SemiSupervised(fastgen.MultinomialNB()).fit(
             X, unlabelled, sample_weight=np.where(np.arange(100) < 90, 1.0, 0.0))),
    ]


@pytest.mark.parametrize("case", range(4), ids=["duplicates", "required-features",
                                                 "labelled-rows", "weighted-rows"])
def test_scipy_sees_only_a_rechecked_copy(case):
    """A row pointer rewritten just before the copy that scipy will work on: the copy is checked
    again, and the call is the ValueError instead of scipy reading (or writing) far outside
    X.indices (it crashed before)."""
    name, module, line, X, call = _scipy_paths()[case]

    def writer():
        X.indptr[len(X.indptr) // 2] = 2**25  # a row now spans 32M entries

    undo = _before_line(module, line, writer)
    try:
        with pytest.raises(ValueError, match=CHANGED):
            call(X)
    finally:
        undo()


@pytest.mark.parametrize("line", ["fitted = fitted_on(members)", "jll = self._jll(model"])
def test_em_reads_x_only_through_the_guarded_kernels(line):
    """SemiSupervised's EM counts and scores the validated X itself at every iteration, with no
    copy: a column index rewritten before either is the ValueError of the kernels' checks."""
    from fastgen import semi_supervised

    X = _counts_csr(np.int32, n=100, f=20, seed=1)
    unlabelled = np.where(np.arange(100) < 50, np.arange(100) % 3, -1)

    def writer():
        X.indices[len(X.indices) // 2] = 2**30

    undo = _before_line(semi_supervised, line, writer)
    try:
        with pytest.raises(ValueError, match=CHANGED):
            fastgen.SemiSupervised(fastgen.MultinomialNB(), max_iter=3).fit(X, unlabelled)
    finally:
        undo()


def test_poisson_log_factorials_recheck_the_row_pointers():
    """PoissonNB's -log(x!) terms of a CSR X are summed over a copy of its row pointers,
    checked again: a row pointer rewritten after X's check is the ValueError (scipy's sum
    trusted them: NumPy's IndexError from reduceat)."""
    from fastgen import naive_bayes

    X = _counts_csr(np.int32, n=100, f=20, seed=1)
    model = fastgen.PoissonNB().fit(X, np.arange(100) % 3)

    def writer():
        X.indptr[len(X.indptr) // 2] = 2**25

    undo = _before_line(naive_bayes, "ptr = X.indptr.astype(np.intp)", writer)
    try:
        with pytest.raises(ValueError, match=CHANGED):
            model.predict_joint_log_proba(X)
    finally:
        undo()


def test_a_listing_refuses_decreasing_row_pointers():
    """A row pointer rewritten after X's check, before a first sparse batch is listed, is the
    ValueError: the listing kernel clamps row pointers (memory-safe), so it would count the
    wrong rows (before, NumPy's "negative dimensions" error, from the room it sized)."""
    from fastgen import naive_bayes

    X = _counts_csr(np.int32, n=100, f=20, seed=1)

    def writer():
        X.indptr[len(X.indptr) // 2] = 2**25

    undo = _before_line(naive_bayes, "sizes = np.diff(X.indptr)[rows]", writer)
    try:
        with pytest.raises(ValueError, match=CHANGED):
            fastgen.MultinomialNB().fit(X, np.arange(100) % 3)
    finally:
        undo()


RACE = textwrap.dedent("""
    import sys, threading, time, warnings
    import numpy as np, scipy.sparse as sp, fastgen
    warnings.simplefilter("ignore")  # numpy's, on the values being rewritten
    sys.setswitchinterval(1e-5)
    rng = np.random.default_rng(0)
    def counts(n, seed):
        return sp.random(n, 500, density=0.05, format="csr", random_state=seed,
                         data_rvs=lambda k: rng.integers(1, 30, k)).astype(np.float64)
    y = rng.integers(0, 3, 300)
    models = [fastgen.MultinomialNB(predictive=True, n_threads=2).fit(counts(300, 0), y),
              fastgen.MultinomialNB(n_threads=2).fit(counts(300, 0), y),
              fastgen.PoissonNB(predictive=True, n_threads=2).fit(counts(300, 0), y)]
    X = counts(20000, 1)
    keep = X.data.copy(), X.indices.copy(), X.indptr.copy()
    stop = time.monotonic() + float(sys.argv[1])
    outcomes = {}
    def writer():  # valid X for a while (it passes the checks), then a rewrite during the call
        k = 0
        while time.monotonic() < stop:
            k += 1
            X.data[:] = keep[0]; X.indices[:] = keep[1]; X.indptr[:] = keep[2]
            time.sleep(0.001 * rng.random())
            h = len(X.data) // 2
            [lambda: X.data.__setitem__(slice(h, None), -1e9),
             lambda: X.data.__setitem__(slice(h, None), np.nan),
             lambda: X.indices.__setitem__(slice(h, None), 2**30),
             lambda: X.indptr.__setitem__(slice(len(X.indptr) // 2, None), 2**30)][k % 4]()
            time.sleep(0.0002)
    threading.Thread(target=writer, daemon=True).start()
    while time.monotonic() < stop:
        for model in models:
            for fit in (False, True):
                try:
                    if fit:
                        type(model)().fit(X, np.arange(X.shape[0]) % 3)
                    else:
                        model.predict_proba(X)
                    outcome = "returned"
                except (ValueError, IndexError) as error:  # kernels', numpy's bounds checks
                    outcome = type(error).__name__
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(sorted(outcomes.items()))
""")


def test_rewriting_x_from_another_thread_never_crashes(tmp_path):
    """The race itself: a thread rewrites X (huge indices, row pointers, negative and NaN
    counts, then restores it) while the main thread predicts and fits with it, for a few
    seconds. The process must exit normally (it used to die of SIGSEGV within a second); every
    call returns, or raises a ValueError (the check's or a kernel's) or numpy's IndexError
    (Python code that indexes with X's values, bounds-checked)."""
    # in another folder: the source tree, maybe unbuilt, must not shadow the fastgen under test
    result = subprocess.run([sys.executable, "-c", RACE, "4"], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    outcomes = dict(eval(result.stdout.strip()))  # noqa: S307 (our own child's repr)
    assert outcomes.get("ValueError", 0) > 0


def test_label_kernels_refuse_codes_beyond_their_tables():
    """Another thread rewriting y during fit or information_gain made the grouping kernel write
    past its arrays (a segfault): group_rows now refuses a class beyond [0, n_classes) as
    the ValueError that X (here y) changed, writing nothing for it; the labels and weights
    the kernels read are the validation's own copies (outside attack)."""
    from fastgen._core._errors import XChangedError
    from fastgen._validation import check_sample_weight, check_y

    order, class_ptr = np.empty(4, dtype=np.intp), np.empty(3, dtype=np.intp)
    for bad in (5, -1, 2):
        with pytest.raises(XChangedError):
            _counts.group_rows(np.array([0, bad, 1, 0], dtype=np.intp), order, class_ptr)
    _counts.group_rows(np.array([1, 0, 1, 0], dtype=np.intp), order, class_ptr)
    assert order.tolist() == [1, 3, 0, 2] and class_ptr.tolist() == [0, 2, 4]
    y, w = np.array([0, 1, 2, 1]), np.ones(4)
    checked_y, checked_w = check_y(y, 4), check_sample_weight(w, 4)
    assert not np.shares_memory(checked_y, y) and not np.shares_memory(checked_w, w)

    class Legacy:  # an __array__ without NumPy 2's copy argument: copied without a warning
        def __array__(self, dtype=None):
            return y

        def __len__(self):
            return len(y)

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        legacy = check_y(Legacy(), 4)
    assert not np.shares_memory(legacy, y) and legacy.tolist() == y.tolist()
