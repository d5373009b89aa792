"""Each kernel against its NumPy oracle (tests/_reference.py), over the STYLE matrix:
dtype x dense/CSR (int32/int64 indices) x read-only input x n_threads."""
import os

import numpy as np
import pytest
import scipy.sparse as sp
from _reference import count_reference, jll_linear_reference
from hypothesis import given, settings
from hypothesis import strategies as st
from test_count_properties import assert_lists_nonzero_counts
from test_values_properties import check_builds

from fastgen._core import _counts, _jll, _openmp, _tables, builds
from fastgen._core import checks as _checks
from fastgen._core import jll as selected_jll

JLL_MODULES = builds("_jll")  # the baseline build, and the AVX2 one where this CPU runs it

RTOL = {np.float32: 1e-5, np.float64: 1e-12}


def _sparse_counts(rng, n, f, dtype, index_dtype, density=0.2):
    X = sp.random(n, f, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 5, k)).astype(dtype)
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    return X


def _readonly(*arrays):
    for a in arrays:
        a.setflags(write=False)
    return arrays


@pytest.mark.parametrize("disable", ["1", "0"])
def test_avx2_choice_at_import(disable, tmp_path):
    """fastgen._core takes the AVX2 builds of the scoring kernels and of the checks together:
    where the CPU has AVX2 and FMA, unless FASTGEN_DISABLE_AVX2=1 (a fresh interpreter each)."""
    import subprocess
    import sys

    code = ("from fastgen._core import checks, jll; "
            "print(jll.__name__.endswith('_avx2'), checks.__name__.endswith('_avx2'))")
    env = {**os.environ, "FASTGEN_DISABLE_AVX2": disable}
    # in another folder: the source tree, maybe unbuilt, must not shadow the fastgen under test
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout.split()
    expected = disable == "0" and _jll.cpu_has_avx2_fma() and len(JLL_MODULES) == 2
    assert out == [str(expected), str(expected)]


def _listing(count):
    """The listing of a dense (n_classes, n_features) count table, as nonzero_counts makes it:
    class_ptr, and the class, feature and count of each nonzero, class by class in feature
    order."""
    class_ptr = np.r_[0, np.cumsum((count != 0).sum(axis=1))].astype(np.intp)
    nz_class, feature = np.nonzero(count)
    return class_ptr, nz_class, feature.astype(np.intp), count[nz_class, feature]


def _grouping(y_idx, n_classes):
    order = np.argsort(y_idx, kind="stable").astype(np.intp)
    class_ptr = np.zeros(n_classes + 1, dtype=np.intp)
    np.cumsum(np.bincount(y_idx, minlength=n_classes), out=class_ptr[1:])
    return order, class_ptr


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("binarize", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_count_csr_and_dense_match_reference(dtype, index_dtype, binarize, n_threads):
    rng = np.random.default_rng(0)
    X = _sparse_counts(rng, 60, 25, dtype, index_dtype)
    y_idx = rng.integers(0, 4, 60)
    w = rng.uniform(0.5, 2.0, 60)
    order, class_ptr = _grouping(y_idx, 4)
    data, indices, indptr = _readonly(X.data, X.indices, X.indptr)
    fc_ref, cc_ref = count_reference(X, y_idx, w, 4, binarize, 1.5)
    fc, cc = np.zeros((4, 25)), np.zeros(4)
    row_sum = np.empty(60)
    _counts.count_csr(data, indices, indptr, order, class_ptr, w[order],
                      binarize, 1.5, fc, cc, row_sum, n_threads)
    np.testing.assert_allclose(fc, fc_ref, rtol=1e-12)
    row_sums = np.asarray(X.sum(axis=1, dtype=np.float64)).ravel()
    np.testing.assert_allclose(row_sum, row_sums[order], rtol=1e-12)  # one for each entry
    np.testing.assert_allclose(cc, cc_ref, rtol=1e-12)
    fc_dense, cc_dense = np.zeros((4, 25)), np.zeros(4)
    Xd = _readonly(X.toarray())[0]
    _counts.count_dense(Xd, order, class_ptr, w[order],
                        binarize, 1.5, fc_dense, cc_dense, n_threads)
    np.testing.assert_array_equal(fc_dense, fc)
    np.testing.assert_array_equal(cc_dense, cc)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_count_csr_large_and_small_classes_add_batch_sums(n_threads):
    """Classes with as many entries as half the features go through the scratch row, the others
    are counted in place; either way the totals are the old ones plus the batch's sums."""
    rng = np.random.default_rng(5)
    X = _sparse_counts(rng, 80, 40, np.float64, np.int32, density=0.3)
    y_idx = np.zeros(80, dtype=np.intp)
    y_idx[0] = 1    # one row each: below the threshold of 20 entries
    y_idx[1] = 2
    y_idx[40:] = 3  # large
    w = rng.uniform(0.1, 3.0, 80)
    order, class_ptr = _grouping(y_idx, 5)  # class 4 has no rows
    entries = np.diff(X.indptr)
    assert entries[y_idx == 0].sum() >= 20 and entries[y_idx == 1].sum() < 20 > entries[1]
    old = rng.uniform(0, 5, (5, 40))
    fc, cc = old.copy(), np.zeros(5)
    _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, w[order],
                      False, 0.0, fc, cc, None, n_threads)
    batch, cc_ref = count_reference(X, y_idx, w, 5)
    np.testing.assert_allclose(fc, old + batch, rtol=1e-13)
    np.testing.assert_allclose(cc, cc_ref, rtol=1e-13)
    np.testing.assert_array_equal(fc[4], old[4])
    # a second batch into the same totals: the scratch row was left zero
    _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, w[order],
                      False, 0.0, fc, cc, None, n_threads)
    np.testing.assert_allclose(fc, old + 2 * batch, rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fill_table_reports_sums_of_terms_that_overflow(dtype):
    """Finite terms whose sum overflows the table's type make entries infinite: reported."""
    big = float(np.finfo(dtype).max) * 0.75
    empty = np.zeros(3, dtype=np.intp)
    table = np.empty((4, 2), dtype=dtype)
    args = (empty, np.empty(0, np.intp), np.empty(0), np.zeros(2), table, 1)
    assert _tables.fill_table(np.full(4, big), np.array([0.0, big * 0.1]), *args) == 0
    assert _tables.fill_table(np.full(4, big), np.array([0.0, big]), *args) > 0
    assert np.isinf(table[:, 1]).all()
    assert _tables.fill_table(np.r_[0.0, np.nan, 0.0, 0.0], np.zeros(2), *args) > 0


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("binarize", [False, True])
@pytest.mark.parametrize("rooms", [True, False])
def test_list_csr_lists_the_nonzeros(n_threads, binarize, rooms):
    """list_csr gives exactly what nonzero_counts lists from the table count_csr writes (small
    and large classes, a class without rows, stored zeros), with rooms of the documented minimum
    size (plus one) or without rooms; it writes the class counts over anything."""
    rng = np.random.default_rng(6)
    X = _sparse_counts(rng, 80, 40, np.float64, np.int32, density=0.3)
    X.data[::7] = 0.0  # stored zeros: entries that list nothing
    y_idx = np.zeros(80, dtype=np.intp)
    y_idx[0], y_idx[1], y_idx[40:] = 1, 2, 3  # 2 small classes, 2 large, class 4 empty
    order, class_ptr = _grouping(y_idx, 5)
    w = rng.uniform(0.1, 3.0, 80)
    fc, cc = np.zeros((5, 40)), np.zeros(5)
    entries = np.bincount(y_idx, weights=np.diff(X.indptr), minlength=5)
    room = np.r_[0, np.cumsum(np.minimum(entries, 40).astype(np.intp) + 1)]
    ptr, feature = np.empty(6, np.intp), np.full(room[-1], -1, np.intp)
    value, sums = np.full(room[-1], np.nan), np.empty(5)
    _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, w[order],
                      binarize, 1.5, fc, cc, None, n_threads)
    fc_ref, cc_ref = count_reference(X, y_idx, w, 5, binarize, 1.5)
    np.testing.assert_allclose(fc, fc_ref, rtol=1e-13)
    np.testing.assert_allclose(cc, cc_ref, rtol=1e-13)
    cc2 = np.full(5, np.nan)
    assert _counts.list_csr(X.data, X.indices, X.indptr, order, class_ptr, w[order],
                            binarize, 1.5, 40,
                            room if rooms else None, cc2, None, ptr, feature, value, sums,
                            n_threads) == 0
    np.testing.assert_array_equal(cc2, cc)
    assert_lists_nonzero_counts(fc, cc, ptr, feature, value, sums)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize(("f", "density"), [(100_000, 0.0012), (400_000, 0.0003)],
                         ids=["dense classes", "sparse classes"])
def test_count_and_list_csr_of_a_large_x(index_dtype, f, density):
    """An X of 4 MiB, classes of more or fewer entries than features: the same sums, written and
    listed, on 1 and 2 threads, as scipy's one-hot product."""
    rng = np.random.default_rng(9)
    n = 3000  # 360,000 entries
    X = _sparse_counts(rng, n, f, np.float64, index_dtype, density=density)
    assert X.nnz * (8 + X.indices.itemsize) >= 4 << 20
    y_idx = rng.integers(0, 6, n).astype(np.intp)
    order, class_ptr = _grouping(y_idx, 6)
    w = rng.uniform(0.5, 2.0, n)
    onehot = sp.csr_matrix((w, (np.arange(n), y_idx)), shape=(n, 6))
    expected = (onehot.T @ X).toarray()
    for n_threads in (1, 2):
        fc, cc = np.zeros((6, f)), np.zeros(6)
        _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, w[order],
                          False, 0.0, fc, cc, None, n_threads)
        np.testing.assert_allclose(fc, expected, rtol=1e-13)
        entries = np.bincount(y_idx, weights=np.diff(X.indptr), minlength=6)
        room = np.r_[0, np.cumsum(np.minimum(entries, f).astype(np.intp))]
        ptr, feature, value, sums = (np.empty(7, np.intp), np.empty(room[-1], np.intp),
                                     np.empty(room[-1]), np.empty(6))
        assert _counts.list_csr(X.data, X.indices, X.indptr, order, class_ptr, w[order],
                                False, 0.0, f, room, np.empty(6), None, ptr, feature, value, sums,
                                n_threads) == 0
        assert_lists_nonzero_counts(fc, cc, ptr, feature, value, sums)


@pytest.mark.parametrize("n, n_classes", [(0, 3), (1, 1), (1000, 7), (50, 200)])
def test_group_rows_is_a_stable_sort_by_class(n, n_classes):
    y_idx = np.random.default_rng(n).integers(0, n_classes, n).astype(np.intp)
    order, class_ptr = np.empty(n, np.intp), np.full(n_classes + 1, -5, np.intp)
    _counts.group_rows(y_idx, order, class_ptr)
    np.testing.assert_array_equal(order, np.argsort(y_idx, kind="stable"))
    np.testing.assert_array_equal(class_ptr, np.r_[0, np.cumsum(np.bincount(y_idx,
                                                                             minlength=n_classes))])


def _soft_members_reference(jll, rows, weights, floor):
    """EM's E-step by NumPy: (log P(x), entries (row, class, weight) in row order)."""
    part = jll[rows]
    top = part.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        scaled = np.exp(part - top)
    total = scaled.sum(axis=1, keepdims=True)
    posterior = scaled / total
    with np.errstate(invalid="ignore"):
        member = np.where(posterior >= floor, posterior * weights[:, None], 0.0)
    i, c = np.nonzero(member > 0)
    return (top + np.log(total))[:, 0], (rows[i], c, member[i, c])


@pytest.mark.parametrize("n_threads", [1, 2])
@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), n_classes=st.integers(1, 9), scale=st.sampled_from([1.0, 30, 1e4]),
       seed=st.integers(0, 2**32 - 1))
def test_soft_members_match_numpy(n_threads, n, n_classes, scale, seed):
    """soft_members (EM's E-step) equals NumPy's log-sum-exp and thresholded, weighted
    posteriors, in row order, whatever the spread of the scores, the weights (a product that
    underflows is no entry) and the threads."""
    rng = np.random.default_rng(seed)
    jll = rng.normal(size=(n + 3, n_classes)) * scale
    rows = np.sort(rng.choice(n + 3, size=rng.integers(0, n + 1), replace=False)).astype(np.intp)
    weights = rng.choice([1.0, 0.3, 1e-300, 5e-324], size=len(rows))
    floor = 2.0**-60
    marginal = np.empty(len(rows))
    expected_marginal, expected = _soft_members_reference(jll, rows, weights, floor)
    got = _counts.soft_members(jll.copy(), rows, weights, floor, marginal, n_threads)
    np.testing.assert_allclose(marginal, expected_marginal, rtol=1e-14, atol=1e-14 * scale)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-13)


def test_soft_members_of_rows_without_a_finite_marginal():
    """A row with NaN, only -inf or some +inf scores has NaN for log P(x) (EM's objective then
    refuses it) and no membership; its neighbours are unaffected."""
    inf = np.inf
    jll = np.array([[0.0, np.log(3.0)], [np.nan, 0.0], [-inf, -inf], [inf, 0.0], [-inf, 0.0]])
    rows = np.arange(5, dtype=np.intp)
    marginal = np.empty(5)
    got = _counts.soft_members(jll, rows, np.full(5, 2.0), 2.0**-60, marginal, 1)
    np.testing.assert_allclose(marginal[[0, 4]], [np.log(4.0), 0.0], rtol=1e-15)
    assert np.isnan(marginal[1:4]).all()
    np.testing.assert_array_equal(got[0], [0, 0, 4])
    np.testing.assert_array_equal(got[1], [0, 1, 1])
    np.testing.assert_allclose(got[2], [0.5, 1.5, 2.0], rtol=1e-15)


@pytest.mark.parametrize("rows", [[0, 0], [1, 0], [-1], [5]])
def test_soft_members_refuses_rows_it_cannot_own(rows):
    """Rows must be increasing row numbers of the scores: two threads never write one row."""
    with pytest.raises(ValueError, match="increasing row numbers"):
        _counts.soft_members(np.zeros((5, 2)), np.array(rows, dtype=np.intp),
                             np.ones(len(rows)), 0.0, np.empty(len(rows)), 2)


def test_count_adds_to_existing_totals():
    rng = np.random.default_rng(1)
    X = _sparse_counts(rng, 30, 10, np.float64, np.int32)
    y_idx = rng.integers(0, 3, 30)
    order, class_ptr = _grouping(y_idx, 3)
    fc, cc = np.ones((3, 10)), np.ones(3)
    _counts.count_csr(X.data, X.indices, X.indptr, order, class_ptr, np.ones(30), False, 0.0,
                      fc, cc, None, 1)
    fc_ref, cc_ref = count_reference(X, y_idx, np.ones(30), 3)
    np.testing.assert_allclose(fc, fc_ref + 1)
    np.testing.assert_allclose(cc, cc_ref + 1)


@pytest.mark.parametrize("n_classes", [1, 2, 7, 8, 13])  # quads of classes and the rest
@pytest.mark.parametrize("n_features", [1, 6, 129, 1030])  # quads and a tail; one and more blocks
@pytest.mark.parametrize("broadcast", [False, True], ids=["per-feature", "broadcast"])
def test_fill_table_layouts_and_judging(n_classes, n_features, broadcast):
    """Every entry, for any number of classes and features, a per-feature or broadcast (stride 0)
    feature term, on 1 or 2 threads; a non-finite term anywhere is reported."""
    rng = np.random.default_rng(n_classes * 10_000 + n_features)
    count = rng.integers(0, 3, (n_classes, n_features)) * (rng.random((n_classes, n_features)) < 0.2)
    class_ptr, nz_class, nz_feature, _ = _listing(count)
    value, value_term = rng.normal(size=len(nz_class)), rng.normal(size=n_classes)
    feature_term = (np.broadcast_to(rng.normal(), (n_features,)) if broadcast
                    else rng.normal(size=n_features))
    class_term = rng.normal(size=n_classes)
    expected = feature_term[:, None] + class_term[None, :]
    expected[nz_feature, nz_class] = value + value_term[nz_class]
    for n_threads in (1, 2):
        table = np.full((n_features, n_classes), np.nan)
        assert _tables.fill_table(feature_term, class_term, class_ptr, nz_feature,
                                  value, value_term, table, n_threads) == 0
        np.testing.assert_array_equal(table, expected)
    for bad in (np.nan, np.inf):
        if broadcast:
            term = np.broadcast_to(bad, (n_features,))
        else:
            term = feature_term.copy()
            term[rng.integers(n_features)] = bad  # in a quad or in the tail
        assert _tables.fill_table(term, class_term, class_ptr, nz_feature, value,
                                  value_term, np.empty((n_features, n_classes)), 1) > 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_classes", [3, 14])  # fewer than a quad of classes, and quads and the rest
@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("broadcast", [False, True], ids=["per-feature", "broadcast"])
def test_fill_table_streams_a_large_table_exactly(dtype, n_classes, aligned, broadcast):
    """A table of 4 MiB or more goes through a block buffer and non-temporal stores (design note
    d of _tables): every entry as written in place, on 1 and 2 threads, whether the table starts
    on a 16-byte boundary or not (a scalar head first), from a per-feature term or from a
    broadcast one (rows copied from a pattern block)."""
    rng = np.random.default_rng(n_classes)
    n_features = (4 << 20) // (np.dtype(dtype).itemsize * n_classes) + 777  # past the threshold
    count = rng.random((n_classes, n_features)) < 0.05
    class_ptr, nz_class, nz_feature, _ = _listing(count)
    value, value_term = rng.normal(size=len(nz_class)), rng.normal(size=n_classes)
    feature_term = (np.broadcast_to(rng.normal(), (n_features,)) if broadcast
                    else rng.normal(size=n_features))
    class_term = rng.normal(size=n_classes)
    expected = (feature_term[:, None] + class_term[None, :]).astype(dtype)
    expected[nz_feature, nz_class] = (value + value_term[nz_class]).astype(dtype)
    for n_threads in (1, 2):
        memory = np.full(n_features * n_classes + 1, np.nan, dtype=dtype)
        table = memory[1 - aligned:][:n_features * n_classes].reshape(n_features, n_classes)
        assert (table.ctypes.data % 16 == 0) == aligned
        assert _tables.fill_table(feature_term, class_term, class_ptr, nz_feature,
                                  value, value_term, table, n_threads) == 0
        np.testing.assert_array_equal(table, expected)


@pytest.mark.parametrize("module", JLL_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("kind", [0, 1, 2])
@pytest.mark.parametrize("binarize", [False, True])
@pytest.mark.parametrize("data_dtype", [None, np.int32, np.int64], ids=["float", "int32", "int64"])
def test_jll_linear_matches_reference(module, dtype, index_dtype, kind, binarize, data_dtype):
    rng = np.random.default_rng(2)
    n_classes = 7  # not a multiple of the vector width
    X = _sparse_counts(rng, 40, 33, data_dtype or dtype, index_dtype, density=0.3)
    table = rng.normal(size=(33, n_classes)).astype(dtype)
    bias = rng.normal(size=n_classes)
    expected = jll_linear_reference(X, table, bias, binarize, 1.5, kind)
    data, indices, indptr = _readonly(X.data.copy(), X.indices.copy(), X.indptr.copy())
    out = np.empty((40, n_classes), dtype=dtype)
    for skip_zeros in (False, True):
        assert module.jll_linear_csr(data, indices, indptr, table, bias, binarize, 1.5,
                                     skip_zeros, kind, out, 1) == 0
        np.testing.assert_allclose(out, expected, rtol=RTOL[dtype], atol=RTOL[dtype])
    np.testing.assert_allclose(out, expected, rtol=RTOL[dtype], atol=RTOL[dtype])
    out_dense = np.empty_like(out)
    module.jll_linear_dense(X.toarray(), table, bias, binarize, 1.5, kind, out_dense, 1)
    np.testing.assert_allclose(out_dense, out, rtol=RTOL[dtype], atol=RTOL[dtype])


@pytest.mark.parametrize("module", JLL_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_jll_results_do_not_depend_on_threads(module):
    rng = np.random.default_rng(3)
    X = _sparse_counts(rng, 3000, 200, np.float64, np.int32, density=0.05)
    table, bias = rng.normal(size=(200, 5)), rng.normal(size=5)
    outs = []
    for n_threads in (1, 2, 3):
        out = np.empty((3000, 5))
        module.jll_linear_csr(X.data, X.indices, X.indptr, table, bias, False, 0.0, False, 1,
                              out, n_threads)
        outs.append(out)
    assert all(np.array_equal(outs[0], o) for o in outs[1:])


def test_zero_values_never_multiply_infinite_table_entries():
    # an explicit zero against a -inf table entry must contribute nothing, not NaN
    X = sp.csr_matrix((np.array([0.0, 2.0]), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))
    table = np.array([[-np.inf, 0.0], [np.log(0.5), np.log(0.25)]])
    out = np.empty((1, 2))
    selected_jll.jll_linear_csr(X.data, X.indices, X.indptr, table, np.zeros(2), False, 0.0,
                                True, 0, out, 1)
    np.testing.assert_allclose(out, [[2 * np.log(0.5), 2 * np.log(0.25)]])


def test_normalize_rows_edge_cases():
    jll = np.array([
        [-np.inf, -np.inf, -np.inf],   # no class can produce the row: uniform
        [np.inf, 0.0, np.inf],         # two certain classes share the mass
        [-1e6, -1e6 - 1.0, -2e6],      # huge negative jll: no underflow to NaN
        [0.0, np.log(3.0), -np.inf],   # an impossible class keeps posterior 0
    ])
    log_proba = jll.copy()
    assert _jll.normalize_rows_inplace(log_proba, 1, 1) == 0
    np.testing.assert_allclose(log_proba[0], np.full(3, -np.log(3)))
    np.testing.assert_allclose(log_proba[1], [-np.log(2), -np.inf, -np.log(2)])
    np.testing.assert_allclose(np.exp(log_proba[2]).sum(), 1.0)
    np.testing.assert_allclose(log_proba[2, :2], [-np.log1p(np.exp(-1)), -1 - np.log1p(np.exp(-1))])
    np.testing.assert_allclose(np.exp(log_proba[3]), [0.25, 0.75, 0.0])
    proba = jll.copy()
    _jll.normalize_rows_inplace(proba, 2, 2)
    np.testing.assert_allclose(proba, np.exp(log_proba))
    raw = jll.copy()
    _jll.normalize_rows_inplace(raw, 0, 1)
    np.testing.assert_array_equal(raw, jll)


@check_builds
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csr_structure_status(index_dtype, checks):
    def status(indices, indptr, n_features=4, check_order=True):
        return checks.csr_structure_status(np.asarray(indices, dtype=index_dtype),
                                           np.asarray(indptr, dtype=index_dtype), n_features,
                                           check_order)

    S = checks.CsrStatus
    assert status([0, 3, 1], [0, 2, 3]) == S.CSR_OK
    assert status([0, 3, 1], [1, 2, 3]) == S.CSR_BAD_START
    assert status([0, 3, 1], [0, 3, 2]) == S.CSR_NOT_MONOTONE
    assert status([0, 3, 1], [0, 2, 4]) == S.CSR_BAD_END
    assert status([0, 4, 1], [0, 2, 3]) == S.CSR_BAD_INDEX
    assert status([0, -1, 1], [0, 2, 3]) == S.CSR_BAD_INDEX
    assert status([0, 3, 9], [0, 2, 2]) == S.CSR_OK  # entries past indptr[-1] are never read
    assert status([], [0]) == S.CSR_OK
    # valid, but a row's columns do not strictly increase (the duplicate check's question)
    assert status([3, 0, 1], [0, 2, 3]) == S.CSR_OK_UNSORTED
    assert status([1, 1], [0, 2]) == S.CSR_OK_UNSORTED
    assert status([3, 3, 1], [0, 1, 2, 3]) == S.CSR_OK  # rows may start anywhere
    assert status([2, 1, 1], [0, 1, 1, 1, 3]) == S.CSR_OK_UNSORTED  # after empty rows too
    assert status([3, 9], [0, 1]) == S.CSR_OK
    # an index out of range is reported whatever the order
    assert status([3, 0, 7], [0, 2, 3]) == S.CSR_BAD_INDEX
    # the order is only looked at when asked
    assert status([3, 0, 1], [0, 2, 3], check_order=False) == S.CSR_OK
    assert status([0, 5], [0, 2], check_order=False) == S.CSR_BAD_INDEX
    # the limit is n_features, compared in the index type: the largest index int32 holds is
    # fine when n_features is beyond int32, and a negative index never is
    big = int(np.iinfo(index_dtype).max)
    if index_dtype is np.int32:
        assert status([0, big], [0, 2], n_features=2**40) == S.CSR_OK
    assert status([0, -1], [0, 2], n_features=2**63 - 1) == S.CSR_BAD_INDEX
    assert status([big - 1, 0], [0, 1, 2], n_features=big) == S.CSR_OK
    assert status([big], [0, 1], n_features=big) == S.CSR_BAD_INDEX


@check_builds
@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 100), index_dtype=st.sampled_from([np.int32, np.int64]),
       n_features=st.integers(1, 50), sorted_rows=st.booleans(),
       places=st.lists(st.tuples(st.integers(0, 99),
                                 st.sampled_from(["negative", "at limit", "huge", "repeat"])),
                       max_size=3),
       seed=st.integers(0, 2**32 - 1))
def test_csr_structure_status_matches_its_definition(checks, n, index_dtype, n_features,
                                                     sorted_rows, places, seed):
    """Any length (the vectorised loop's steps and tail), with bad or repeated indices in any
    lane: an index outside [0, n_features) anywhere is CSR_BAD_INDEX, else CSR_OK_UNSORTED
    exactly when some row's columns do not strictly increase (CSR_OK without check_order)."""
    rng = np.random.default_rng(seed)
    indptr = np.unique(np.r_[0, rng.integers(0, n + 1, rng.integers(0, 6)), n])
    indices = rng.integers(0, n_features, n)
    if sorted_rows:
        for a, b in zip(indptr[:-1], indptr[1:]):
            indices[a:b] = np.sort(indices[a:b])
    info = np.iinfo(index_dtype)
    for position, kind in places:
        if position < n:
            indices[position] = {"negative": -1 - position, "at limit": n_features,
                                 "huge": info.max, "repeat": indices[max(position - 1, 0)]}[kind]
    S = checks.CsrStatus
    if ((indices < 0) | (indices >= n_features)).any():
        expected = S.CSR_BAD_INDEX
    else:
        increasing = all((np.diff(indices[a:b]) > 0).all() for a, b in zip(indptr[:-1], indptr[1:]))
        expected = S.CSR_OK if increasing else S.CSR_OK_UNSORTED
    indices, indptr = indices.astype(index_dtype), indptr.astype(index_dtype)
    assert checks.csr_structure_status(indices, indptr, n_features, True) == expected
    assert checks.csr_structure_status(indices, indptr, n_features, False) == (
        S.CSR_BAD_INDEX if expected == S.CSR_BAD_INDEX else S.CSR_OK)


@check_builds
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_status(dtype, checks):
    V = checks.ValuesStatus

    def status(values, allow_nan=False, allow_negative=False):
        return checks.values_status(np.asarray(values, dtype=dtype), allow_nan, allow_negative)

    assert status([0.0, 1.0, 2.5]) == V.VALUES_OK
    assert status([0.0, -0.0]) == V.VALUES_OK
    assert status([1.0, np.nan]) == V.VALUES_NAN
    assert status([1.0, np.nan], allow_nan=True) == V.VALUES_OK_WITH_NAN
    assert status([1.0, -np.inf]) == V.VALUES_INF
    assert status([np.inf], allow_nan=True) == V.VALUES_INF
    assert status([1.0, -2.0]) == V.VALUES_NEGATIVE
    assert status([1.0, -2.0], allow_negative=True) == V.VALUES_OK
    assert status([-1.0, np.nan]) == V.VALUES_NEGATIVE  # the first problem is reported
    assert status([]) == V.VALUES_OK


@pytest.mark.parametrize("broadcast", [False, True], ids=["per-feature", "broadcast"])
def test_complement_and_rest_counts_from_a_listing(broadcast):
    """complement_counts and rest_counts (with a shift or not) give, bit for bit, what NumPy
    computes from the listing (bincount adds in listing order, as the kernel does); a class
    without counts and a feature no class has are included, and rest is clamped at 0. A
    complement is smoothed after the count is taken away: a feature only one class has, with a
    count of 2e7, keeps a complement of exactly alpha (1e-10), where (2e7 + 1e-10) - 2e7 is 0."""
    rng = np.random.default_rng(8)
    count = rng.uniform(0.1, 3.0, (4, 30)) * (rng.random((4, 30)) < 0.3)
    count[2], count[:, 7] = 0.0, 0.0
    count[:, 9], count[1, 9] = 0.0, 2e7
    class_ptr, nz_class, feature, value = _listing(count)
    alpha = (np.broadcast_to(1e-10, (30,)) if broadcast
             else np.where(np.arange(30) == 9, 1e-10, rng.uniform(0.0, 2.0, 30)))
    total, complement = np.full(30, np.nan), np.full(len(value), np.nan)
    _tables.complement_counts(feature, value, alpha, total, complement)
    summed = np.bincount(feature, weights=value, minlength=30)
    np.testing.assert_array_equal(total, summed + alpha)
    np.testing.assert_array_equal(complement,
                                  np.maximum(summed[feature] - value, 0.0) + alpha[feature])
    assert complement[feature == 9] == 1e-10
    class_total = count.sum(axis=1)
    class_total[1] = count[1].max() * (1 - 1e-12)  # a total that rounded below a count
    rest = np.full(len(value), np.nan)
    _tables.rest_counts(class_ptr, value, class_total, 0.0, rest)
    np.testing.assert_array_equal(rest, np.maximum(class_total[nz_class] - value, 0.0))
    assert (rest[class_ptr[1]:class_ptr[2]] == 0.0).any()
    _tables.rest_counts(class_ptr, value, class_total, 0.25, rest)  # plus a shift, once
    np.testing.assert_array_equal(rest, np.maximum(class_total[nz_class] - value, 0.0) + 0.25)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tables_from_nonzero_counts(dtype):
    rng = np.random.default_rng(4)
    # 130 features: two whole words of 64 and a tail for the vectorised test
    count = rng.integers(0, 3, (4, 130)).astype(np.float64) * (rng.random((4, 130)) < 0.3)
    count[2] = 0  # a class without counts
    total = count.sum(axis=1) + 5.0
    cap = count.size
    class_ptr = np.empty(5, dtype=np.intp)
    feature, value = np.empty(cap, np.intp), np.empty(cap)
    class_sum = np.empty(4)
    _tables.nonzero_counts(count, class_ptr, feature, value, class_sum)
    n = class_ptr[-1]
    rest = np.empty(n)
    _tables.rest_counts(class_ptr, value[:n], total, 0.0, rest)
    np.testing.assert_allclose(class_sum, count.sum(axis=1), rtol=1e-15)
    nz_class, nz_feature = np.nonzero(count)
    np.testing.assert_array_equal(class_ptr, np.r_[0, np.cumsum((count != 0).sum(axis=1))])
    np.testing.assert_array_equal(feature[:n], nz_feature)
    np.testing.assert_array_equal(value[:n], count[nz_class, nz_feature])
    np.testing.assert_array_equal(rest, total[nz_class] - count[nz_class, nz_feature])

    feature_term, class_term = rng.normal(size=130), rng.normal(size=4)
    value_term = rng.normal(size=4)
    table = np.empty((130, 4), dtype=dtype)
    assert _tables.fill_table(feature_term, class_term, class_ptr, feature[:n], value[:n],
                              value_term, table, 2) == 0
    value_inf = value[:n].copy()
    value_inf[0] = -np.inf
    assert _tables.fill_table(feature_term, class_term, class_ptr, feature[:n], value_inf,
                              value_term, np.empty_like(table), 1) == 1
    expected = feature_term[:, None] + class_term[None, :]
    expected[nz_feature, nz_class] = value[:n] + value_term[nz_class]
    np.testing.assert_allclose(table, expected, rtol=RTOL[dtype])

    sums = np.empty(4)
    shift = rng.normal(size=4)
    _tables.segment_sums(value[:n], class_ptr, shift, sums)
    expected_sums = [np.sum(count[c][count[c] != 0] - shift[c]) for c in range(4)]
    np.testing.assert_allclose(sums, expected_sums, rtol=1e-12)
    # with subtract_from: the same sums, bit for bit, and the values subtracted in the same pass
    minuend = rng.normal(size=n)
    expected_difference = minuend - value[:n]
    sums_too = np.empty(4)
    _tables.segment_sums(value[:n], class_ptr, shift, sums_too, minuend)
    np.testing.assert_array_equal(sums_too, sums)
    np.testing.assert_array_equal(minuend, expected_difference)


def test_effective_n_threads():
    max_n = _openmp.max_threads()
    assert _openmp.effective_n_threads(1) == 1
    if _openmp.openmp_enabled():
        assert _openmp.effective_n_threads(None) == max_n
        assert _openmp.effective_n_threads(-1) == max_n
        assert _openmp.effective_n_threads(-max_n - 5) == 1
        assert _openmp.effective_n_threads(3) == 3
        # explicit counts are clamped at four threads per core (10,000 would abort the OpenMP
        # runtime where it cannot create them; 2**31 overflowed the C int)
        ceiling = max(max_n, 4 * (os.cpu_count() or 1))
        assert _openmp.effective_n_threads(10_000) == ceiling
        assert _openmp.effective_n_threads(2**40) == ceiling
    else:
        assert _openmp.effective_n_threads(None) == 1
    with pytest.raises(ValueError, match="n_threads"):
        _openmp.effective_n_threads(0)
    with pytest.raises(TypeError, match="n_threads"):
        _openmp.effective_n_threads(1.5)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csr_has_duplicates(index_dtype):
    def dup(indices, indptr, n_features=5):
        return _checks.csr_has_duplicates(np.asarray(indices, dtype=index_dtype),
                                          np.asarray(indptr, dtype=index_dtype), n_features)

    assert dup([3, 0, 4, 0, 3], [0, 3, 5]) == 0   # unsorted rows, a column reused across rows
    assert dup([3, 0, 3, 1], [0, 3, 4]) == 1      # row 0 stores column 3 twice, not adjacent
    assert dup([1, 1], [0, 0, 2]) == 1
    assert dup([], [0, 0]) == 0
    assert dup([0, 2, 4, 1, 3], [0, 3, 5]) == 0   # sorted rows
    assert dup([0, 2, 2, 1, 3], [0, 3, 5]) == 1   # sorted but repeated: not strictly increasing
    # a row start after empty rows is one start: the repeat in the last row is still seen
    assert dup([4, 1, 1], [0, 1, 1, 1, 3]) == 1
    assert dup([4, 1, 2], [0, 1, 1, 1, 3]) == 0
    assert dup([4, 1, 2], [0, 0, 1, 3, 3]) == 0   # empty first and last rows


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 6),
                               st.sampled_from(["sorted", "shuffled", "repeat"])), max_size=12),
       seed=st.integers(0, 2**32 - 1))
def test_csr_has_duplicates_matches_its_definition(rows, seed):
    """Any rows (empty, sorted, shuffled, with a repeated column, starting above or below where
    the row before ended): whether some row stores a column twice, and whether the structure
    check finds every row's columns strictly increasing."""
    rng = np.random.default_rng(seed)
    indices, indptr, expected = [], [0], 0
    for length, kind in rows:
        row = rng.choice(8, size=length, replace=False)
        if kind == "sorted":
            row = np.sort(row)
        elif kind == "repeat" and length >= 2:
            row[rng.integers(1, length)] = row[0]
            row = np.sort(row) if rng.random() < 0.5 else row
            expected = 1
        indices.extend(row.tolist())
        indptr.append(len(indices))
    indices, indptr = np.asarray(indices, dtype=np.int32), np.asarray(indptr, dtype=np.int32)
    assert _checks.csr_has_duplicates(indices, indptr, 8) == expected
    # the structure check finds every row strictly increasing exactly when it is so
    increasing = all((np.diff(indices[a:b]) > 0).all() for a, b in zip(indptr[:-1], indptr[1:]))
    S = _checks.CsrStatus
    assert _checks.csr_structure_status(indices, indptr, 8, True) == (
        S.CSR_OK if increasing else S.CSR_OK_UNSORTED)


# ------------------------------------------------------------------ _missing.schur_terms
@pytest.mark.parametrize("m", [0, 1, 3, 6])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_schur_terms_match_numpy(m, n_threads):
    """Against the definitions: the Mahalanobis distance of the observed part, log det P_mm, and
    the conditional mean shift P_mm^-1 u_m and covariance P_mm^-1."""
    from fastgen._core import _missing

    rng = np.random.default_rng(m)
    d, n = 6, 40
    A = rng.normal(size=(d, d))
    P = A @ A.T + d * np.eye(d)
    missing = np.array([np.sort(rng.choice(d, m, replace=False)) for _ in range(n)],
                       dtype=np.intp).reshape(n, m)
    D = rng.normal(size=(n, d))
    for r in range(n):
        D[r, missing[r]] = 0.0
    U = D @ P
    q = np.einsum("ij,ij->i", D, U)
    logdet, shift, cov = np.empty(n), np.empty((n, m)), np.empty((n, m, m))
    assert _missing.schur_terms(U, missing, P, q, logdet, shift, cov, True, n_threads) == 0
    S = np.linalg.inv(P)
    for r in range(n):
        obs = np.setdiff1d(np.arange(d), missing[r])
        d_o = D[r, obs]
        np.testing.assert_allclose(q[r], d_o @ np.linalg.solve(S[np.ix_(obs, obs)], d_o),
                                   rtol=1e-10)
        Pmm = P[np.ix_(missing[r], missing[r])]
        if m:
            np.testing.assert_allclose(logdet[r], np.linalg.slogdet(Pmm)[1], rtol=1e-10)
            np.testing.assert_allclose(shift[r], np.linalg.solve(Pmm, U[r, missing[r]]),
                                       rtol=1e-10)
            np.testing.assert_allclose(cov[r], np.linalg.inv(Pmm), rtol=1e-10, atol=1e-14)


def test_schur_terms_reports_a_block_that_is_not_positive_definite():
    from fastgen._core import _missing

    P = np.array([[1.0, 2.0], [2.0, 1.0]])  # indefinite: its 2 x 2 block fails
    missing = np.array([[0, 1]], dtype=np.intp)
    q, logdet = np.zeros(1), np.empty(1)
    status = _missing.schur_terms(np.zeros((1, 2)), missing, P, q, logdet, np.empty((0, 0)),
                                  np.empty((0, 0, 0)), False, 1)
    assert status == 1
