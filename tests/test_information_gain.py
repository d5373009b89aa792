"""fastgen.information_gain: mutual information of feature presence and class (issue 4).

The reference is scikit-learn's ``mutual_info_classif(X > 0, y, discrete_features=True)``, which
computes ``mutual_info_score`` on each column's contingency table.
"""
import doctest
import time

import numpy as np
import pytest
import scipy.sparse as sp
from _data import (
    ALL_FORMATS,
    dense,
    newsgroups_counts,
    readonly,
    to_format,
    zipf_counts,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal

import fastgen
import fastgen._information_gain
from fastgen import information_gain

RTOL, ATOL = 1e-9, 1e-12


def sklearn_mi(X, y):
    """scikit-learn's estimate, from the dense presence matrix (independent of X's format)."""
    feature_selection = pytest.importorskip("sklearn.feature_selection")
    return feature_selection.mutual_info_classif(dense(X) > 0, y, discrete_features=True)


def with_negatives(X, seed=0):
    """X (CSR, float) with some stored entries made negative: stored but not "present"."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    rng = np.random.default_rng(seed)
    flip = rng.random(X.nnz) < 0.2
    X.data[flip] = -X.data[flip]
    return X


@pytest.fixture(scope="module")
def counts():
    X, y = zipf_counts(300, 150, n_classes=4, mean_len=20, seed=1)
    return X, y


# --------------------------------------------------------------------------------------------------
# parity with scikit-learn


@pytest.mark.parametrize("fmt", ALL_FORMATS + ["csc", "coo"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_parity_sklearn(counts, fmt, dtype):
    X, y = counts
    Xf = to_format(X, fmt, dtype)
    mi = information_gain(Xf, y)
    assert mi.shape == (X.shape[1],) and mi.dtype == np.float64
    assert_allclose(mi, sklearn_mi(X, y), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_negative_values_are_absent(counts, fmt):
    X, y = counts
    Xn = with_negatives(X)
    mi = information_gain(to_format(Xn, fmt), y)
    assert_allclose(mi, sklearn_mi(Xn, y), rtol=RTOL, atol=ATOL)
    assert not np.allclose(mi, information_gain(X, y))


def test_string_labels(counts):
    X, y = counts
    names = np.array(["comp.graphics", "rec.autos", "sci.med", "talk.politics"])[y]
    mi = information_gain(X, names)
    assert_allclose(mi, sklearn_mi(X, names), rtol=RTOL, atol=ATOL)
    assert_array_equal(mi, information_gain(X, y))
    assert_array_equal(mi, information_gain(X, list(names)))  # a list works too


def test_two_classes_and_bool_and_pandas(counts):
    X, y = counts
    y2 = (y == 1).astype(int)
    Xd = dense(X)
    ref = sklearn_mi(X, y2)
    assert_allclose(information_gain(Xd > 0, y2), ref, rtol=RTOL, atol=ATOL)  # bool input
    pd = pytest.importorskip("pandas")
    assert_allclose(information_gain(pd.DataFrame(Xd), pd.Series(y2)), ref, rtol=RTOL, atol=ATOL)


@settings(deadline=None, max_examples=60)
@given(
    X=arrays(np.int64, st.tuples(st.integers(1, 30), st.integers(1, 6)),
             elements={"min_value": -2, "max_value": 3}),
    data=st.data(),
)
def test_parity_sklearn_property(X, data):
    y = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=X.shape[0], max_size=X.shape[0])))
    ref = sklearn_mi(X, y)
    assert_allclose(information_gain(X, y), ref, rtol=RTOL, atol=ATOL)
    assert_allclose(information_gain(sp.csr_matrix(X), y), ref, rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------------------------------
# edge cases


def test_constant_features_give_zero(counts):
    X, y = counts
    Xd = dense(X)
    Xd[:, 0] = 0        # never present
    Xd[:, 1] = 5        # always present
    Xd[:, 2] = -1       # stored everywhere, never present
    for Xf in (Xd, sp.csr_matrix(Xd)):
        mi = information_gain(Xf, y)
        assert_array_equal(mi[:3], 0.0)
        assert (mi[3:] >= 0).all() and mi[3:].max() > 0
        assert_allclose(mi, sklearn_mi(Xd, y), rtol=RTOL, atol=ATOL)


def test_single_class_gives_zero(counts):
    X, _ = counts
    y = np.full(X.shape[0], "only")
    assert_array_equal(information_gain(X, y), 0.0)
    assert_array_equal(sklearn_mi(X, y), 0.0)
    y2 = np.arange(X.shape[0]) % 3
    assert_array_equal(information_gain(X, y2, sample_weight=(y2 == 1) * 0.3), 0.0)


def test_perfect_predictor_has_class_entropy():
    y = np.array([0, 0, 1, 1, 2, 2])
    X = np.array([[1, 0], [1, 0], [0, 0], [0, 0], [0, 3], [0, 3]])
    # feature 0 isolates class 0: I = H(1/3, 2/3); feature 1 the same for class 2
    h = -(1 / 3 * np.log(1 / 3) + 2 / 3 * np.log(2 / 3))
    assert_allclose(information_gain(X, y), [h, h], rtol=1e-14)


def test_duplicate_csr_entries_add_up_before_thresholding():
    # row 0 stores column 0 twice (2 + -3 = -1: absent), row 1 stores column 1 twice (1 + 1)
    data = np.array([2.0, -3.0, 1.0, 1.0, 4.0])
    indices = np.array([0, 0, 1, 1, 0])
    indptr = np.array([0, 2, 4, 5])
    X = sp.csr_matrix((data, indices, indptr), shape=(3, 2))
    assert not X.has_canonical_format
    y = np.array([0, 1, 1])
    expected = information_gain(X.toarray(), y)
    assert_allclose(information_gain(X, y), expected, rtol=0, atol=0)
    assert_allclose(expected, sklearn_mi(X.toarray(), y), rtol=RTOL, atol=ATOL)
    assert X.data.shape == (5,) and X.data[1] == -3.0  # the caller's matrix is left alone


def test_readonly_input(counts):
    X, y = counts
    expected = information_gain(X, y)
    assert_array_equal(information_gain(readonly(X), y), expected)
    assert_array_equal(information_gain(readonly(dense(X)), y), expected)


def test_n_threads_bit_identical():
    X, y = zipf_counts(3000, 400, n_classes=5, mean_len=80, seed=3)  # above the parallel cut-off
    Xd = dense(X)
    for Xf in (X, Xd):
        one = information_gain(Xf, y, n_threads=1)
        assert_array_equal(information_gain(Xf, y, n_threads=2), one)
        assert_array_equal(information_gain(Xf, y, n_threads=-1), one)
    assert_array_equal(information_gain(Xd, y, n_threads=1), information_gain(X, y, n_threads=1))


# --------------------------------------------------------------------------------------------------
# sample_weight


def test_sample_weight_integer_equals_repeated_rows(counts):
    X, y = counts
    w = np.random.default_rng(0).integers(0, 4, X.shape[0])
    w[:4] = 1  # every class keeps some weight
    rows = np.repeat(np.arange(X.shape[0]), w)
    expected = sklearn_mi(X[rows], y[rows])
    for Xf in (X, dense(X)):
        assert_allclose(information_gain(Xf, y, sample_weight=w), expected, rtol=RTOL, atol=ATOL)


def test_sample_weight_ones_and_scale(counts):
    X, y = counts
    expected = information_gain(X, y)
    assert_array_equal(information_gain(X, y, sample_weight=np.ones(X.shape[0])), expected)
    assert_allclose(information_gain(X, y, sample_weight=0.25), expected, rtol=1e-12, atol=ATOL)
    w = np.random.default_rng(1).random(X.shape[0])
    assert_allclose(information_gain(X, y, sample_weight=7 * w),
                    information_gain(X, y, sample_weight=w), rtol=1e-12, atol=ATOL)


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e150, 1e300])
def test_sample_weight_extreme_scales(counts, scale):
    X, y = counts
    w = np.random.default_rng(2).random(X.shape[0]) + 0.5
    w_scaled = w * scale
    w_copy = w_scaled.copy()
    mi = information_gain(X, y, sample_weight=w_scaled)
    assert_array_equal(w_scaled, w_copy)  # the caller's weights are not modified
    assert np.isfinite(mi).all()
    assert_allclose(mi, information_gain(X, y, sample_weight=w), rtol=1e-12, atol=ATOL)


def test_sample_weight_zero_class_is_dropped(counts):
    X, y = counts
    w = (y != 2).astype(float)
    keep = y != 2
    assert_allclose(information_gain(X, y, sample_weight=w), sklearn_mi(X[keep], y[keep]),
                    rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------------------------------
# scikit-learn integration


def test_select_k_best(counts):
    feature_selection = pytest.importorskip("sklearn.feature_selection")
    X, y = counts
    mi = information_gain(X, y)
    selector = feature_selection.SelectKBest(information_gain, k=10).fit(X, y)
    assert_array_equal(selector.scores_, mi)
    assert selector.pvalues_ is None
    kept = np.flatnonzero(selector.get_support())
    assert len(kept) == 10
    assert mi[kept].min() >= np.delete(mi, kept).max()
    Xt = selector.transform(X)
    assert sp.issparse(Xt) and Xt.shape == (X.shape[0], 10)


def test_select_k_best_in_pipeline(counts):
    pipeline = pytest.importorskip("sklearn.pipeline")
    feature_selection = pytest.importorskip("sklearn.feature_selection")
    X, y = counts
    pipe = pipeline.make_pipeline(feature_selection.SelectKBest(information_gain, k=40),
                                  fastgen.BernoulliNB()).fit(X, y)
    assert pipe.score(X, y) > 0.5


# --------------------------------------------------------------------------------------------------
# errors


def test_nan_and_inf_rejected(counts):
    X, y = counts
    Xd = dense(X).astype(np.float64)
    Xd[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        information_gain(Xd, y)
    with pytest.raises(ValueError, match="NaN"):
        information_gain(sp.csr_matrix(Xd), y)
    Xd[3, 4] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        information_gain(Xd, y)


@pytest.mark.parametrize(
    ("X", "y", "error", "match"),
    [
        (np.ones(5), [0, 1, 0, 1, 0], ValueError, "Expected 2D array"),
        (np.ones((5, 2)), [0, 1, 0], ValueError, "inconsistent numbers of samples"),
        (np.ones((5, 2)), None, ValueError, "requires y"),
        (np.ones((5, 2)), [0.5, 1, 0, 1, 0], ValueError, "continuous"),
        (np.ones((5, 2)), [0, 1, np.nan, 1, 0], ValueError, "NaN"),
        (np.ones((5, 2)), np.zeros((5, 2)), ValueError, "1d array"),
        (np.full((2, 2), "a"), [0, 1], ValueError, "numeric"),
        (np.ones((0, 2)), [], ValueError, "0 sample"),
        (np.ones((2, 0)), [0, 1], ValueError, "0 feature"),
        (np.ones((2, 2), dtype=complex), [0, 1], ValueError, "Complex"),
    ],
)
def test_bad_input(X, y, error, match):
    with pytest.raises(error, match=match):
        information_gain(X, y)


def test_bad_csr_structure():
    X = sp.csr_matrix(np.eye(3))
    X.indices = X.indices.copy()
    X.indices[1] = 7  # out of range: rejected before the kernel reads it
    with pytest.raises(ValueError, match="column indices"):
        information_gain(X, [0, 1, 1])


@pytest.mark.parametrize(
    ("sample_weight", "error", "match"),
    [
        (np.ones(3), ValueError, "sample_weight.shape"),
        (-np.ones(4), ValueError, "Negative"),
        (np.zeros(4), ValueError, "non-zero"),
        ([1, 1, np.nan, 1], ValueError, "NaN"),
        (["a", "b", "c", "d"], TypeError, "numeric"),
    ],
)
def test_bad_sample_weight(sample_weight, error, match):
    with pytest.raises(error, match=match):
        information_gain(np.eye(4), [0, 1, 0, 1], sample_weight=sample_weight)


@pytest.mark.parametrize(("n_threads", "error"), [(0, ValueError), (1.5, TypeError),
                                                  (True, TypeError)])
def test_bad_n_threads(n_threads, error):
    with pytest.raises(error, match="n_threads"):
        information_gain(np.eye(4), [0, 1, 0, 1], n_threads=n_threads)


def test_keyword_only_options():
    with pytest.raises(TypeError):
        information_gain(np.eye(4), [0, 1, 0, 1], None)


# --------------------------------------------------------------------------------------------------
# docs and real data


def test_public_and_docstring_examples():
    pytest.importorskip("sklearn")
    assert "information_gain" in fastgen.__all__ and fastgen.information_gain is information_gain
    result = doctest.testmod(fastgen._information_gain,
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_newsgroups20_full_train(shared_data):
    """The whole 20 Newsgroups training set (11,314 x ~130k counts): scikit-learn needs minutes,
    so it is compared on 200 random columns (plus the extremes of fastgen's ranking)."""
    pytest.importorskip("sklearn")
    X, _, y, _ = newsgroups_counts(shared_data, None, None)
    information_gain(X[:10], y[:10])  # warm-up (first OpenMP use) outside the timing
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        mi = information_gain(X, y)
        times.append(time.perf_counter() - t0)
    assert mi.shape == (X.shape[1],) and (mi >= 0).all()
    rng = np.random.default_rng(0)
    order = np.argsort(mi)
    cols = np.unique(np.concatenate([rng.choice(X.shape[1], 200, replace=False),
                                     order[:5], order[-20:]]))
    t0 = time.perf_counter()
    ref = sklearn_mi(X[:, cols], y)
    t_sk = time.perf_counter() - t0
    assert_allclose(mi[cols], ref, rtol=RTOL, atol=ATOL)
    print(f"\n20 Newsgroups train {X.shape}, nnz={X.nnz}: fastgen.information_gain "
          f"{min(times) * 1e3:.0f} ms (best of 3); sklearn mutual_info_classif "
          f"{t_sk:.2f} s on {len(cols)} columns, ~{t_sk * X.shape[1] / len(cols):.0f} s "
          "extrapolated to all columns")
