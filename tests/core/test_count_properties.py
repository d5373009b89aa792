"""Property tests of the counting kernels (hypothesis): whatever the shapes, dtypes, weights,
stored zeros, empty classes, rows counted for several classes (soft class memberships), thread
counts and rooms, count_csr adds the batch's sums, list_csr
gives exactly what nonzero_counts lists from the table count_csr writes, and group_rows is a
stable sort by class. The debug build
runs these with bounds checks."""
import numpy as np
import scipy.sparse as sp
from _reference import count_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgen._core import _counts, _tables


@st.composite
def batches(draw):
    n_rows = draw(st.integers(1, 40))
    n_features = draw(st.integers(1, 30))
    n_classes = draw(st.integers(1, 6))
    density = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dense = rng.integers(0, 4, (n_rows, n_features)) * (rng.random((n_rows, n_features)) < density)
    X = sp.csr_matrix(dense.astype(draw(st.sampled_from([np.float64, np.float32, np.int64]))))
    if X.nnz and draw(st.booleans()):
        X.data[rng.random(X.nnz) < 0.3] = 0  # stored zeros: entries that list nothing
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    # the entries (row, class, weight), in row order: one a row (labels), or a row counted for
    # any of the classes (soft memberships); some classes may be empty
    if draw(st.booleans()):
        rows = np.arange(n_rows)
        y_idx = rng.integers(0, n_classes, n_rows)
    else:
        rows, y_idx = np.nonzero(rng.random((n_rows, n_classes)) < 0.5)
    rows, y_idx = rows.astype(np.intp), y_idx.astype(np.intp)
    n = len(rows)
    weight = draw(st.sampled_from(["ones", "uniform", "some zero"]))
    w = {"ones": np.ones(n), "uniform": rng.uniform(0.1, 3.0, n),
         "some zero": rng.uniform(0.0, 2.0, n) * (rng.random(n) < 0.7)}[weight]
    binarize = draw(st.booleans())
    threshold = draw(st.sampled_from([0.0, 1.5])) if binarize else 0.0
    return X, rows, y_idx, n_classes, w, binarize, threshold


def assert_lists_nonzero_counts(fc, cc, ptr, feature, value, sums):
    """The counting kernel's listing (ptr, feature, value, sums) is exactly what nonzero_counts
    lists from the written table fc."""
    n_classes = fc.shape[0]
    ref_ptr, ref_feature = np.empty(n_classes + 1, np.intp), np.empty(fc.size, np.intp)
    ref_value, ref_sums = np.empty(fc.size), np.empty(n_classes)
    _tables.nonzero_counts(fc, ref_ptr, ref_feature, ref_value, ref_sums)
    n = ref_ptr[-1]
    np.testing.assert_array_equal(ptr, ref_ptr)
    np.testing.assert_array_equal(feature[:n], ref_feature[:n])
    np.testing.assert_array_equal(value[:n], ref_value[:n])
    np.testing.assert_array_equal(sums, ref_sums)


def _group(y_idx, n_classes):
    order = np.empty(len(y_idx), np.intp)
    class_ptr = np.empty(n_classes + 1, np.intp)
    _counts.group_rows(y_idx, order, class_ptr)
    return order, class_ptr


@settings(max_examples=200, deadline=None)
@given(batch=batches(), n_threads=st.sampled_from([1, 2]), rooms=st.booleans())
def test_counts_and_listing_match_the_reference_and_nonzero_counts(batch, n_threads, rooms):
    X, rows, y_idx, n_classes, w, binarize, threshold = batch
    n_features = X.shape[1]
    order, class_ptr = _group(y_idx, n_classes)
    np.testing.assert_array_equal(order, np.argsort(y_idx, kind="stable"))
    grouped, w_grouped = rows[order], w[order]
    entries = np.bincount(y_idx, weights=np.diff(X.indptr)[rows], minlength=n_classes)
    room = np.r_[0, np.cumsum(np.minimum(entries, n_features).astype(np.intp) + 1)]
    size = room[-1] if rooms else int(min(entries.sum(), n_classes * n_features)) + n_classes + 1
    fc, cc = np.zeros((n_classes, n_features)), np.zeros(n_classes)
    ptr, feature = np.empty(n_classes + 1, np.intp), np.empty(size, np.intp)
    value, sums, row_sum = np.empty(size), np.empty(n_classes), np.empty(len(rows))
    _counts.count_csr(X.data, X.indices, X.indptr, grouped, class_ptr, w_grouped, binarize,
                      threshold, fc, cc, row_sum, n_threads)
    fc_ref, cc_ref = count_reference(X[rows], y_idx, w, n_classes, binarize, threshold)
    np.testing.assert_allclose(fc, fc_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cc, cc_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(row_sum, np.asarray(X.sum(axis=1, dtype=np.float64)).ravel()[
        grouped], rtol=1e-12)
    # listing only (no dense table): exactly what nonzero_counts lists from the written table,
    # with the same class counts and row sums
    cc2, row_sum2 = np.full(n_classes, np.nan), np.empty(len(rows))
    assert _counts.list_csr(X.data, X.indices, X.indptr, grouped, class_ptr, w_grouped, binarize,
                            threshold, n_features, room if rooms else None, cc2, row_sum2, ptr,
                            feature, value, sums, n_threads) == 0
    assert_lists_nonzero_counts(fc, cc, ptr, feature, value, sums)
    np.testing.assert_array_equal(cc2, cc)
    np.testing.assert_array_equal(row_sum2, row_sum)


@settings(max_examples=150, deadline=None)
@given(batch=batches(), n_threads=st.sampled_from([1, 2]))
def test_accumulating_adds_the_batch_sums(batch, n_threads):
    X, rows, y_idx, n_classes, w, binarize, threshold = batch
    order, class_ptr = _group(y_idx, n_classes)
    old = np.random.default_rng(0).uniform(0, 5, (n_classes, X.shape[1]))
    fc, cc = old.copy(), np.ones(n_classes)
    for _ in range(2):  # twice: whatever went through a scratch row left it zero
        _counts.count_csr(X.data, X.indices, X.indptr, rows[order], class_ptr, w[order],
                          binarize, threshold, fc, cc, None, n_threads)
    fc_ref, cc_ref = count_reference(X[rows], y_idx, w, n_classes, binarize, threshold)
    np.testing.assert_allclose(fc, old + 2 * fc_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cc, 1 + 2 * cc_ref, rtol=1e-12, atol=1e-12)
