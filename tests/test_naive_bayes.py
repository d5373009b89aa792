"""Model-level behaviour of MultinomialNB, BernoulliNB and ComplementNB (issue 2).

Comparisons with scikit-learn live in test_parity_sklearn.py, bad input in
test_validation.py and randomised properties in test_properties.py.
"""

import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _data import (
    ALL_FORMATS,
    CSR_FORMATS,
    fitted_attrs,
    readonly,
    sms_counts,
    to_format,
    zipf_counts,
)
from numpy.testing import assert_allclose, assert_array_equal

import fastgen

PREDICT_METHODS = ("predict_joint_log_proba", "predict_log_proba", "predict_proba")


def outputs(est, X):
    out = {m: getattr(est, m)(X) for m in PREDICT_METHODS}
    out["predict"] = est.predict(X)
    return out


def assert_models_close(a, b, rtol=1e-12, atol=0.0):
    assert_array_equal(a.classes_, b.classes_)
    for name, value in fitted_attrs(a).items():
        other = getattr(b, name)
        assert value.shape == other.shape, name
        assert_allclose(value, other, rtol=rtol, atol=atol, err_msg=name)


def assert_outputs_close(a, b, rtol=1e-12, atol=1e-12):
    for name in a:
        if name == "predict":
            assert_array_equal(a[name], b[name])
        else:
            assert a[name].dtype == b[name].dtype, name
            assert_allclose(a[name], b[name], rtol=rtol, atol=atol, err_msg=name)


def assert_outputs_equal(a, b):
    for name in a:
        assert a[name].dtype == b[name].dtype, name
        assert np.array_equal(a[name], b[name]), name


def assert_normalised(est, X):
    """Posteriors are finite, normalised probabilities; predict is their argmax."""
    jll = est.predict_joint_log_proba(X)
    log_proba = est.predict_log_proba(X)
    proba = est.predict_proba(X)
    assert not np.isnan(jll).any()
    assert not np.isnan(log_proba).any()
    assert not np.isnan(proba).any()
    assert (log_proba <= 0).all()
    assert ((proba >= 0) & (proba <= 1)).all()
    tol = 1e-5 if proba.dtype == np.float32 else 1e-12
    assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=tol)
    pred = est.predict(X)
    assert_array_equal(pred, est.classes_[np.argmax(jll, axis=1)])
    assert_array_equal(pred, est.classes_[np.argmax(log_proba, axis=1)])
    return proba


@pytest.fixture(scope="module")
def zipf():
    X, y = zipf_counts(500, 120, n_classes=3, mean_len=25, seed=11)
    return X[:400], y[:400], X[400:], y[400:]


# ---------------------------------------------------------------------------------------
# fit / partial_fit / formats


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_partial_fit_in_chunks_equals_fit(Estimator, fmt, zipf):
    X, y, Xt, _ = zipf
    X, Xt = to_format(X, fmt), to_format(Xt, fmt)
    full = Estimator(alpha=0.3).fit(X, y)
    inc = Estimator(alpha=0.3)
    for a, b in [(0, 1), (1, 50), (50, 51), (51, 333), (333, 400)]:
        ret = inc.partial_fit(X[a:b], y[a:b], classes=[0, 1, 2])
        assert ret is inc
    assert_models_close(inc, full)
    assert_outputs_close(outputs(inc, Xt), outputs(full, Xt))


@pytest.mark.parametrize("fmt", CSR_FORMATS + ["csc", "coo"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_sparse_equals_dense(Estimator, fmt, dtype, zipf):
    X, y, Xt, _ = zipf
    d = Estimator().fit(to_format(X, "dense", dtype), y)
    s = Estimator().fit(to_format(X, fmt, dtype), y)
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    assert_models_close(s, d, rtol=rtol)
    assert_outputs_close(
        outputs(s, to_format(Xt, fmt, dtype)), outputs(d, to_format(Xt, "dense", dtype)),
        rtol=rtol, atol=rtol,
    )


def test_non_canonical_csr_equals_dense(Estimator, zipf):
    """Unsorted indices, duplicate entries (summed) and explicit zeros are valid CSR."""
    X, y, Xt, _ = zipf
    rng = np.random.default_rng(0)

    def scramble(M):
        M = M.tocsr()
        data, idx, ptr = [], [], [0]
        for i in range(M.shape[0]):
            d = M.data[M.indptr[i]:M.indptr[i + 1]]
            j = M.indices[M.indptr[i]:M.indptr[i + 1]]
            if d.size:  # split each count in two entries for the same word
                half = np.floor(d / 2)
                d = np.concatenate([half, d - half, [0.0]])
                j = np.concatenate([j, j, [j[0]]])
                p = rng.permutation(d.size)
                d, j = d[p], j[p]
            data.append(d)
            idx.append(j)
            ptr.append(ptr[-1] + d.size)
        out = sp.csr_matrix(
            (np.concatenate(data), np.concatenate(idx).astype(np.int32), np.array(ptr)),
            shape=M.shape,
        )
        assert not out.has_canonical_format
        return out

    Xs, Xts = scramble(X), scramble(Xt)
    assert_allclose(Xs.toarray(), X.toarray())
    a = Estimator().fit(Xs, y)
    b = Estimator().fit(X.toarray(), y)
    assert_models_close(a, b)
    assert_outputs_close(outputs(a, Xts), outputs(b, Xt.toarray()))


@pytest.mark.parametrize("make", [
    lambda: fastgen.MultinomialNB(predictive=True),
    lambda: fastgen.MultinomialNB(alpha="evidence"),
    lambda: fastgen.PoissonNB(),
    lambda: fastgen.PoissonNB(predictive=True),
    lambda: fastgen.BernoulliNB(binarize=2.0),
], ids=["multinomial-predictive", "multinomial-evidence", "poisson", "poisson-predictive",
        "bernoulli-binarize"])
def test_duplicate_csr_entries_are_summed_where_the_model_is_not_linear(make, zipf):
    """A CSR row that stores a column twice means the sum (scipy's matrix): the models whose
    scores or statistics are not linear in the values (the Polya predictive's lgamma of a count,
    PoissonNB's log x!, a threshold) must see 12, not 6 twice. (Scrambled: each count split in
    two entries of its column, in a shuffled order.)"""
    X, y, Xt, _ = zipf
    rng = np.random.default_rng(3)

    def split(M):
        M = M.tocoo()
        half = np.floor(M.data / 2)
        order = rng.permutation(2 * M.nnz)
        rows = np.concatenate([M.row, M.row])[order]
        cols = np.concatenate([M.col, M.col])[order]
        data = np.concatenate([half, M.data - half])[order]
        by_row = np.argsort(rows, kind="stable")
        out = sp.csr_matrix((data[by_row], cols[by_row].astype(np.int32),
                             np.searchsorted(rows[by_row], np.arange(M.shape[0] + 1))),
                            shape=M.shape)
        assert not out.has_canonical_format
        return out

    a, b = make().fit(split(X), y), make().fit(X.toarray(), y)
    for method in PREDICT_METHODS:
        want = getattr(b, method)(Xt.toarray())
        for model, X_in in ((a, Xt.toarray()), (b, split(Xt))):  # the fit, the scoring
            assert_allclose(getattr(model, method)(X_in), want, rtol=1e-12, atol=1e-12,
                            err_msg=method)
    if hasattr(b, "log_evidence_"):
        assert a.log_evidence_ == pytest.approx(b.log_evidence_, rel=1e-12)


def _twice(values, dtype, n_features=3):
    """One CSR row storing column 0 once per value (in that order), then column 1 once."""
    values = list(values)
    return sp.csr_matrix((np.array(values + [1], dtype=dtype),
                          np.array([0] * len(values) + [1], dtype=np.int32),
                          np.array([0, len(values) + 1], dtype=np.int32)), shape=(1, n_features))


def test_duplicate_csr_entries_are_checked_as_their_sums():
    """The values checked are the matrix's, the sums: int32 sums do not wrap around (a negative
    count once reached the Polya kernel and crashed it), sums beyond a model's bound or the
    float range are refused, and entries that sum into the domain are accepted -- each as the
    dense matrix is."""
    X = np.array([[20, 3, 0], [1, 9, 4], [30, 0, 2]])
    y = [0, 1, 1]
    big = 2**31 - 1
    model = fastgen.MultinomialNB(predictive=True).fit(X, y)
    dense = np.array([[big + 5, 1, 0]], dtype=np.int64)
    plug_in = fastgen.MultinomialNB().fit(X, y)
    assert_array_equal(plug_in.predict_proba(_twice([big, 5], np.int32)),
                       plug_in.predict_proba(dense))
    for rows in (_twice([big, 5], np.int32), dense):  # (beyond the predictive's 2^30 words)
        with pytest.raises(ValueError, match="beyond 2\\^30"):
            model.predict_proba(rows)
    fitted = fastgen.MultinomialNB().fit(sp.vstack([_twice([big, 5], np.int32)] * 2), [0, 1])
    assert fitted.feature_count_[0, 0] == big + 5
    refused = [
        (fastgen.MultinomialNB(), _twice([2**53, 2**53], np.int64), "beyond"),
        (fastgen.MultinomialNB(), _twice([2**62] * 4, np.int64), "beyond"),  # int64 wraps to 0
        (fastgen.PoissonNB(), _twice([2**53, 2**53], np.float64), "beyond"),
        (fastgen.BernoulliNB(binarize=None), _twice([1, 1], np.float64), r"\[0, 1\]"),
    ]
    for estimator, X_bad, match in refused:
        with pytest.raises(ValueError, match=match):
            estimator.fit(sp.vstack([X_bad, X_bad]), [0, 1])
        with pytest.raises(ValueError, match=match):
            estimator.fit(np.array([[1, 0, 0], [0, 1, 0]]), [0, 1]).predict_proba(X_bad)
    # float32 sums beyond float32's range, for a model of float32 data
    with pytest.raises(ValueError, match="infinity"):
        fastgen.BernoulliNB(binarize=0.0).fit(sp.vstack([_twice([3e38, 3e38], np.float32)] * 2),
                                              [0, 1])
    # -1 + 1 is 0, which a count model takes
    assert_array_equal(model.predict_proba(_twice([-1, 1], np.float64)),
                       model.predict_proba(np.array([[0.0, 1, 0]])))


def test_non_contiguous_dense_input(Estimator, zipf):
    X, y, Xt, _ = zipf
    Xd = X.toarray()
    ref = Estimator().fit(Xd, y)
    Xf = np.asfortranarray(Xd)
    wide = np.zeros((Xd.shape[0], 2 * Xd.shape[1]))
    wide[:, ::2] = Xd
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    for variant in (Xf, strided, Xd.tolist()):
        est = Estimator().fit(variant, y)
        assert_models_close(est, ref)
        assert_outputs_close(outputs(est, variant), outputs(ref, Xd))


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix"])
def test_integer_sample_weight_equals_repeated_rows(Estimator, fmt, zipf):
    X, y, Xt, _ = zipf
    w = np.random.default_rng(3).integers(0, 4, X.shape[0])
    w[:3] = 1  # keep every class
    rep = np.repeat(np.arange(X.shape[0]), w)
    a = Estimator().fit(to_format(X, fmt), y, sample_weight=w)
    b = Estimator().fit(to_format(X[rep], fmt), y[rep])
    assert_models_close(a, b)
    assert_outputs_close(outputs(a, to_format(Xt, fmt)), outputs(b, to_format(Xt, fmt)))
    c = Estimator().partial_fit(to_format(X, fmt), y, classes=[0, 1, 2], sample_weight=w)
    assert_models_close(c, b)


def test_unit_sample_weight_equals_none(Estimator, zipf):
    X, y, Xt, _ = zipf
    a = Estimator().fit(X, y, sample_weight=np.ones(X.shape[0]))
    b = Estimator().fit(X, y)
    assert_models_close(a, b, rtol=1e-15)
    assert_array_equal(a.class_count_, np.bincount(y).astype(float))


def test_string_labels(Estimator, zipf):
    X, y, Xt, yt = zipf
    names = np.array(["spam", "eggs", "ham"])
    est = Estimator().fit(X, names[y])
    assert_array_equal(est.classes_, ["eggs", "ham", "spam"])
    pred = est.predict(Xt)
    assert pred.dtype.kind == "U"
    assert set(pred) <= set(names)
    ref = Estimator().fit(X, y)
    assert_array_equal(pred, names[ref.predict(Xt)])
    # the same model with columns renamed (log-sum-exp sums classes in another order)
    assert_allclose(est.predict_proba(Xt)[:, [2, 0, 1]], ref.predict_proba(Xt),
                    rtol=1e-12, atol=1e-15)
    assert est.score(Xt, names[yt]) == ref.score(Xt, yt)
    # partial_fit with string classes
    inc = Estimator()
    inc.partial_fit(X[:100], names[y[:100]], classes=["ham", "spam", "eggs"])
    inc.partial_fit(X[100:], names[y[100:]])
    assert_models_close(inc, est)


def test_python_list_labels_and_input(Estimator):
    X = [[2, 0, 1], [0, 3, 0], [1, 1, 1], [0, 0, 4]]
    y = ["a", "b", "a", "c"]
    est = Estimator().fit(X, y)
    assert list(est.classes_) == ["a", "b", "c"]
    assert est.n_features_in_ == 3
    assert_normalised(est, np.asarray(X, dtype=float))


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix", "csr_int64"])
def test_dtypes_preserved(Estimator, fmt, zipf):
    X, y, Xt, _ = zipf
    e32 = Estimator().fit(to_format(X, fmt, np.float32), y)
    e64 = Estimator().fit(to_format(X, fmt, np.float64), y)
    ei = Estimator().fit(to_format(X, fmt, np.int64), y)
    assert e32.feature_log_prob_.dtype == np.float32
    assert e64.feature_log_prob_.dtype == np.float64
    assert ei.feature_log_prob_.dtype == np.float64
    for est in (e32, e64, ei):
        assert est.class_count_.dtype == np.float64
        assert est.feature_count_.dtype == np.float64
    o32 = outputs(e32, to_format(Xt, fmt, np.float32))
    o64 = outputs(e64, to_format(Xt, fmt, np.float64))
    oi = outputs(ei, to_format(Xt, fmt, np.int32))
    for m in PREDICT_METHODS:
        assert o32[m].dtype == np.float32, m
        assert o64[m].dtype == np.float64, m
        assert oi[m].dtype == np.float64, m
    assert_outputs_close(oi, o64)
    # float32 stays close to float64
    assert_allclose(e32.feature_log_prob_, e64.feature_log_prob_, rtol=1e-6, atol=1e-6)
    scale = np.abs(o64["predict_joint_log_proba"]).max()
    assert_allclose(o32["predict_joint_log_proba"], o64["predict_joint_log_proba"],
                    rtol=1e-5, atol=1e-6 * scale)
    assert_allclose(o32["predict_proba"], o64["predict_proba"], atol=1e-5 * scale)
    assert_normalised(e32, to_format(Xt, fmt, np.float32))


def test_float32_predict_is_argmax_of_predict_proba():
    """Near-tie found by Hypothesis: the float64 accumulators rank class 1 first and
    predict_proba says so, but the float32-rounded joint log-likelihoods tie; predict
    must still agree with predict_proba (and with the float64 model)."""
    X = np.array([[0.0, 2.0, 2.0], [2.0, 2.0, 2.0]])
    y = np.array([1, 0])
    e32 = fastgen.ComplementNB(norm=True, fit_prior=False).fit(X.astype(np.float32), y)
    e64 = fastgen.ComplementNB(norm=True, fit_prior=False).fit(X, y)
    X32 = X.astype(np.float32)
    proba = e32.predict_proba(X32)
    assert_array_equal(e32.predict(X32), e32.classes_[np.argmax(proba, axis=1)])
    assert_array_equal(e32.predict(X32), e64.predict(X))


# ---------------------------------------------------------------------------------------
# numerical robustness


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_long_documents_and_huge_counts(Estimator, fmt, dtype):
    rng = np.random.default_rng(0)
    n_features = 300
    X, y = zipf_counts(200, n_features, n_classes=4, mean_len=50, seed=1)
    X = X.toarray()
    X[:20] *= 1e5  # counts in the millions in training
    est = Estimator(alpha=0.5).fit(to_format(sp.csr_matrix(X), fmt, dtype), y)
    long_doc = rng.multinomial(100_000, np.full(n_features, 1.0 / n_features))
    huge = np.zeros(n_features)
    huge[rng.choice(n_features, 20, replace=False)] = 5e6
    test = np.vstack([long_doc, huge, X[:5], np.zeros(n_features)])
    Xt = to_format(sp.csr_matrix(test), fmt, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        proba = assert_normalised(est, Xt)
    assert np.isfinite(est.predict_joint_log_proba(Xt)).all()
    assert np.isfinite(est.predict_log_proba(Xt)).all()
    if Estimator is fastgen.MultinomialNB:
        # such documents are decided with certainty; that must not turn into 0/0
        assert proba[:2].max(axis=1).min() > 0.99


def test_empty_document_gets_prior_for_multinomial():
    X, y = zipf_counts(100, 40, n_classes=3, seed=2)
    est = fastgen.MultinomialNB().fit(X, y)
    empty = np.zeros((1, 40))
    assert_allclose(est.predict_log_proba(empty)[0], est.class_log_prior_, rtol=1e-12)
    assert_allclose(est.predict_joint_log_proba(empty)[0], est.class_log_prior_, rtol=1e-12)


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix"])
def test_single_row_equals_batch_row(Estimator, fmt, zipf):
    X, y, Xt, _ = zipf
    est = Estimator().fit(X, y)
    Xt = to_format(Xt, fmt)
    batch = outputs(est, Xt)
    for i in (0, 7, Xt.shape[0] - 1):
        row = outputs(est, Xt[i:i + 1])
        for name, value in row.items():
            assert value.shape[0] == 1
            assert np.array_equal(value[0], batch[name][i]), name


# ---------------------------------------------------------------------------------------
# threads


@pytest.fixture(scope="module")
def big_batch():
    X, y = zipf_counts(20_000, 2_000, n_classes=5, mean_len=30, seed=4)
    return X, y


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix", "csr_int64"])
def test_n_threads_bit_identical(Estimator, fmt, big_batch):
    X, y = big_batch
    if fmt == "dense":
        X = X[:, :200]
    X = to_format(X, fmt)
    ref = Estimator(n_threads=1).fit(X, y)
    ref_out = outputs(ref, X)
    for n_threads in (2, -1, None, 64):
        est = Estimator(n_threads=n_threads).fit(X, y)
        for name, value in fitted_attrs(ref).items():
            assert np.array_equal(getattr(est, name), value), (n_threads, name)
        assert_outputs_equal(outputs(est, X), ref_out)
        # a model fitted with one thread, predicting with another count
        ref.set_params(n_threads=n_threads)
        assert_outputs_equal(outputs(ref, X), ref_out)
        ref.set_params(n_threads=1)


def test_n_threads_float32(Estimator, big_batch):
    X, y = big_batch
    X = X.astype(np.float32)
    a = Estimator(n_threads=1).fit(X, y)
    b = Estimator(n_threads=2).fit(X, y)
    assert_outputs_equal(outputs(a, X), outputs(b, X))


# ---------------------------------------------------------------------------------------
# sklearn API


def test_pickle_round_trip(Estimator, zipf):
    X, y, Xt, _ = zipf
    est = Estimator(alpha=0.4, n_threads=1).fit(X, np.array(["x", "y", "z"])[y])
    clone_ = pickle.loads(pickle.dumps(est))
    assert type(clone_) is Estimator
    assert clone_.get_params() == est.get_params()
    assert_models_close(clone_, est, rtol=0)
    assert_outputs_equal(outputs(clone_, Xt), outputs(est, Xt))
    # an unfitted model pickles too
    fresh = pickle.loads(pickle.dumps(Estimator(alpha=2.0)))
    assert fresh.alpha == 2.0
    fresh.fit(X, y)


def test_clone_and_params(Estimator, zipf):
    base = pytest.importorskip("sklearn.base")
    X, y, _, _ = zipf
    est = Estimator(alpha=0.25, fit_prior=False, n_threads=1)
    params = est.get_params()
    for key in ("alpha", "force_alpha", "fit_prior", "class_prior", "n_threads"):
        assert key in params
    assert params["alpha"] == 0.25 and params["fit_prior"] is False
    est.fit(X, y)
    c = base.clone(est)
    assert c.get_params() == est.get_params()
    assert not hasattr(c, "classes_")
    assert est.set_params(alpha=3.0) is est
    assert est.alpha == 3.0
    refit = est.fit(X, y)
    assert refit is est
    assert_allclose(est.feature_log_prob_, Estimator(alpha=3.0, fit_prior=False).fit(X, y).feature_log_prob_)
    with pytest.raises(ValueError):
        est.set_params(not_a_parameter=1)


def test_extra_params_by_model():
    assert fastgen.BernoulliNB().get_params()["binarize"] == 0.0
    assert fastgen.ComplementNB().get_params()["norm"] is False
    assert "binarize" not in fastgen.MultinomialNB().get_params()
    assert "norm" not in fastgen.MultinomialNB().get_params()


def test_sparse_fit_builds_feature_count_when_read(Estimator, zipf, tmp_path, monkeypatch):
    """A sparse first batch keeps its counts listed: predicting does not build feature_count_,
    reading it (or pickling, saving, merging, the next batch) does, equal to a dense fit's."""
    X, y, Xt, _ = zipf
    dense = Estimator(alpha=0.5).fit(X.toarray(), y)
    expected = outputs(dense, Xt)

    from fastgen.naive_bayes import _Listing

    def listed():
        est = Estimator(alpha=0.5).fit(X, y)
        assert isinstance(est._fitted.stats["feature_count_"], _Listing)
        assert_outputs_equal(outputs(est, Xt), expected)
        assert isinstance(est._fitted.stats["feature_count_"], _Listing)  # scoring reads it
        return est

    est = listed()
    assert_array_equal(est.feature_count_, dense.feature_count_)
    assert isinstance(est._fitted.stats["feature_count_"], np.ndarray)  # built, kept
    assert_outputs_equal(outputs(est, Xt), expected)
    # pickles and model files hold feature_count_, as before
    state = listed().__getstate__()
    assert_array_equal(state["_fitted"]["statistics"]["feature_count_"], dense.feature_count_)
    assert_array_equal(pickle.loads(pickle.dumps(listed())).feature_count_, dense.feature_count_)
    listed().save(tmp_path / "m.fgm")
    assert_array_equal(fastgen.load(tmp_path / "m.fgm").feature_count_, dense.feature_count_)
    # the next batch and merge add to the built table
    est = listed().partial_fit(X, y)
    assert_allclose(est.feature_count_, 2 * dense.feature_count_, rtol=1e-15)
    assert_allclose(listed().merge(listed()).feature_count_, 2 * dense.feature_count_, rtol=1e-15)
    # the list is the model's own: nothing writes into it
    assert not any(a.flags.writeable for a in listed()._fitted.stats["feature_count_"][1:])
    # and holds no more memory than it lists: the room the counting kernel had is given back,
    # on one thread and on two (rooms per class: the small X gets two threads)
    monkeypatch.setattr(fastgen._base, "PARALLEL_MIN_WORK", 0)
    rooms = []
    list_csr = fastgen._core._counts.list_csr
    monkeypatch.setattr(fastgen._core._counts, "list_csr",
                        lambda *a: rooms.append(a[9]) or list_csr(*a))  # room
    for n_threads in (1, 2):
        class_ptr, feature, count, _ = \
            Estimator(n_threads=n_threads).fit(X, y)._fitted.stats["feature_count_"]
        for array in (feature, count):
            assert array.base is None and array.nbytes == class_ptr[-1] * array.itemsize
    assert rooms[0] is None and rooms[1] is not None
    # unfitted: no attribute, and properties keep their own message
    assert not hasattr(Estimator(), "feature_count_")
    with pytest.raises(AttributeError, match="available after fit"):
        Estimator().feature_log_prob_


def test_alpha_vectors_are_read_only(Estimator, zipf):
    """The per-feature alpha handed to the derivations is the model's own (or a stride-0 view
    of a scalar): an in-place write there would change the model, so none is allowed."""
    from fastgen.naive_bayes import alpha_per_feature

    X, y, _, _ = zipf
    for alpha in (0.5, np.linspace(0.1, 2.0, X.shape[1])):
        est = Estimator(alpha=alpha).fit(X, y)
        vectors = alpha_per_feature(est._fitted.hyper["alpha"], X.shape[1])
        assert all(v.shape == (X.shape[1],) and not v.flags.writeable for v in vectors)
        with pytest.raises(ValueError, match="read-only"):
            vectors[0][0] = 0.0
    assert_array_equal(alpha, np.linspace(0.1, 2.0, X.shape[1]))


def test_refit_resets_state(Estimator, zipf):
    X, y, Xt, _ = zipf
    est = Estimator().fit(X, y)
    X2 = X[:, :50]
    y2 = np.where(y == 0, "a", "b")
    est.fit(X2, y2)
    fresh = Estimator().fit(X2, y2)
    assert est.n_features_in_ == 50
    assert_models_close(est, fresh, rtol=0)
    # partial_fit after fit continues from the fitted statistics
    est.partial_fit(X2, y2)
    assert_allclose(est.class_count_, 2 * fresh.class_count_)


def test_grid_search_over_alpha_matches_sklearn(Estimator, zipf):
    pytest.importorskip("sklearn")
    from sklearn.model_selection import GridSearchCV
    from sklearn.naive_bayes import BernoulliNB, ComplementNB, MultinomialNB  # noqa
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer

    SK = {"MultinomialNB": MultinomialNB, "BernoulliNB": BernoulliNB,
          "ComplementNB": ComplementNB}[Estimator.__name__]
    X, y, _, _ = zipf
    grid = {"nb__alpha": [0.01, 0.1, 1.0, 10.0]}
    results = []
    for est in (Estimator(), SK()):
        pipe = Pipeline([("id", FunctionTransformer(accept_sparse=True)), ("nb", est)])
        gs = GridSearchCV(pipe, grid, cv=3).fit(X, y)
        results.append(gs)
    ours, theirs = results
    assert_array_equal(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"])
    assert ours.best_params_ == theirs.best_params_
    assert isinstance(ours.best_estimator_.named_steps["nb"], Estimator)
    assert ours.best_score_ > 1.0 / 3 + 0.1


def test_text_pipeline_sms(Estimator):
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    from fastgen.data import load_sms_spam

    texts, labels = load_sms_spam()
    pipe = make_pipeline(CountVectorizer(), Estimator(alpha=0.5)).fit(texts[:4000], labels[:4000])
    acc = pipe.score(texts[4000:], labels[4000:])
    assert acc > 0.93
    assert set(pipe.predict(["WINNER!! claim your free prize now, call 0800"])) <= {"ham", "spam"}
    if Estimator is not fastgen.BernoulliNB:
        assert pipe.predict(["URGENT! You have won a FREE prize. Call 09061701461 to claim"])[0] == "spam"


def test_sms_counts_csr_int64_data(Estimator):
    X, Xt, y, yt = sms_counts()
    est = Estimator().fit(X, y)
    assert est.feature_log_prob_.dtype == np.float64
    assert_normalised(est, Xt)
    assert est.score(Xt, yt) > 0.93


# ---------------------------------------------------------------------------------------
# read-only input


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix", "csr_int64"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_read_only_input(Estimator, fmt, dtype, zipf):
    X, y, Xt, _ = zipf
    X, Xt = to_format(X, fmt, dtype), to_format(Xt, fmt, dtype)
    ref = Estimator().fit(X, y)
    y_ro = y.copy()
    y_ro.setflags(write=False)
    est = Estimator().fit(readonly(X), y_ro)
    assert_models_close(est, ref, rtol=0)
    assert_outputs_equal(outputs(est, readonly(Xt)), outputs(ref, Xt))
    inc = Estimator().partial_fit(readonly(X), y_ro, classes=readonly(np.array([0, 1, 2])))
    assert_models_close(inc, ref)
    w = np.ones(X.shape[0])
    w.setflags(write=False)
    assert_models_close(Estimator().fit(readonly(X), y_ro, sample_weight=w), ref)


def test_memory_mapped_input(Estimator, zipf, tmp_path):
    X, y, Xt, _ = zipf
    Xd = X.toarray()
    path = tmp_path / "X.npy"
    np.save(path, Xd)
    Xm = np.load(path, mmap_mode="r")
    assert isinstance(Xm, np.memmap) and not Xm.flags.writeable
    est = Estimator().fit(Xm, y)
    ref = Estimator().fit(Xd, y)
    assert_models_close(est, ref, rtol=0)
    assert_outputs_equal(outputs(est, Xm), outputs(ref, Xd))
    # a memory-mapped CSR matrix
    for name, a in (("data", X.data), ("indices", X.indices), ("indptr", X.indptr)):
        np.save(tmp_path / f"{name}.npy", a)
    Xs = sp.csr_matrix(
        tuple(np.load(tmp_path / f"{n}.npy", mmap_mode="r") for n in ("data", "indices", "indptr")),
        shape=X.shape,
    )
    assert_outputs_equal(outputs(est, Xs), outputs(ref, X))
    assert_models_close(Estimator().fit(Xs, y), ref)


# ---------------------------------------------------------------------------------------
# classes missing from batches (cuML #8316, sklearn #13232)


@pytest.mark.parametrize("fmt", ["dense", "csr_matrix"])
def test_partial_fit_later_batches_missing_classes(Estimator, fmt, zipf):
    X, y, Xt, _ = zipf
    X = to_format(X, fmt)
    order = np.argsort(y, kind="stable")  # batches of one or two classes
    X, y = X[order], y[order]
    inc = Estimator()
    for a, b in [(0, 10), (10, 120), (120, 121), (121, 260), (260, 400)]:
        inc.partial_fit(X[a:b], y[a:b], classes=np.array([0, 1, 2]))
    full = Estimator().fit(X, y)
    assert_models_close(inc, full)
    assert_outputs_close(outputs(inc, to_format(Xt, fmt)), outputs(full, to_format(Xt, fmt)))


@pytest.mark.parametrize("fit_prior", [True, False])
def test_class_announced_but_never_seen(Estimator, fit_prior, zipf):
    X, y, Xt, _ = zipf
    keep = y != 1
    est = Estimator(fit_prior=fit_prior)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est.partial_fit(X[keep], y[keep], classes=[0, 1, 2])
        assert_array_equal(est.classes_, [0, 1, 2])
        assert est.class_count_[1] == 0
        assert_array_equal(est.feature_count_[1], 0)
        assert not np.isnan(est.feature_log_prob_).any()
        assert not np.isnan(est.class_log_prior_).any()
        for X_ in (Xt, Xt.toarray(), np.zeros((2, Xt.shape[1]))):
            proba = assert_normalised(est, X_)
            assert proba.shape == (X_.shape[0], 3)
    # the class arrives later: the model is then the one fitted on everything
    est.partial_fit(X[~keep], y[~keep])
    full = Estimator(fit_prior=fit_prior).fit(np.vstack([X[keep].toarray(), X[~keep].toarray()]),
                                              np.concatenate([y[keep], y[~keep]]))
    assert_models_close(est, full)


# ---------------------------------------------------------------------------------------
# BernoulliNB specifics


@pytest.mark.parametrize("binarize", [0.0, 1.5])
def test_bernoulli_negative_values_and_threshold(binarize):
    rng = np.random.default_rng(0)
    X = rng.normal(0, 2, size=(80, 10))
    y = rng.integers(0, 2, 80)
    Xt = rng.normal(0, 2, size=(20, 10))
    a = fastgen.BernoulliNB(binarize=binarize).fit(X, y)
    b = fastgen.BernoulliNB(binarize=None).fit((X > binarize).astype(float), y)
    assert_models_close(a, b)
    assert_outputs_close(outputs(a, Xt), outputs(b, (Xt > binarize).astype(float)))
    assert_array_equal(a.feature_count_, [(X[y == c] > binarize).sum(axis=0) for c in (0, 1)])


def test_explicit_zeros_equal_eliminated(Estimator):
    X, y = zipf_counts(200, 50, seed=5)
    Xb = X.copy()
    Xb.data[:] = 1.0  # binary, so that BernoulliNB(binarize=None) sees valid input
    for M in (X, Xb):
        Mz = M.copy()
        Mz.data[::4] = 0.0  # explicit zeros stored in the structure
        Me = Mz.copy()
        Me.eliminate_zeros()
        assert Mz.nnz > Me.nnz
        params = ([{}, {"binarize": None}] if Estimator is fastgen.BernoulliNB and M is Xb
                  else [{}])
        for p in params:
            a = Estimator(**p).fit(Mz, y)
            b = Estimator(**p).fit(Me.toarray(), y)
            assert_models_close(a, b)
            assert_outputs_close(outputs(a, Mz), outputs(b, Me.toarray()))


def test_complement_feature_all(zipf):
    X, y, _, _ = zipf
    est = fastgen.ComplementNB().fit(X, y)
    assert_allclose(est.feature_all_, np.asarray(X.sum(axis=0)).ravel(), rtol=1e-12)
    assert_allclose(est.feature_all_, est.feature_count_.sum(axis=0), rtol=1e-12)


# ---------------------------------------------------------------------------------------
# pandas and imports


def test_dataframe_sets_feature_names(Estimator, zipf):
    pd = pytest.importorskip("pandas")
    X, y, Xt, _ = zipf
    cols = [f"w{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X.toarray(), columns=cols)
    est = Estimator().fit(df, pd.Series(y))
    assert_array_equal(est.feature_names_in_, cols)
    assert est.feature_names_in_.dtype == object
    ref = Estimator().fit(X, y)
    assert_models_close(est, ref)
    assert_outputs_close(outputs(est, pd.DataFrame(Xt.toarray(), columns=cols)), outputs(ref, Xt))
    # refitting on a plain array forgets the names
    est.fit(X.toarray(), y)
    assert not hasattr(est, "feature_names_in_")
    # integer column names are not feature names
    est.fit(pd.DataFrame(X.toarray()), y)
    assert not hasattr(est, "feature_names_in_")


def test_import_does_not_import_optional_dependencies():
    optional = "('sklearn', 'pandas', 'dask', 'distributed', 'matplotlib')"
    code = (
        "import sys, fastgen; "
        f"bad = [m for m in {optional} if m in sys.modules]; "
        "assert not bad, bad; "
        "fastgen.MultinomialNB().fit([[1, 0], [0, 1]], [0, 1]).predict([[1, 1]]); "
        f"bad = [m for m in {optional} if m in sys.modules]; "
        "assert not bad, bad"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd="/", timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_concurrent_predict_from_threads(Estimator):
    """Services call predict from many Python threads: the kernels run without the GIL and a
    model whose parameters are stale after partial_fit derives them safely under concurrency.
    (Regression: parameters published field by field let a thread score with a table whose bias
    was not set yet, a NULL read in the kernel.)"""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(0)
    X = sp.random(3000, 400, density=0.05, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 4, k).astype(float))
    y = rng.integers(0, 5, 3000)
    expected = Estimator(n_threads=1).fit(X, y).predict_log_proba(X)
    with ThreadPoolExecutor(max_workers=6) as pool:
        for _ in range(8):  # each round races the threads on freshly stale parameters
            model = Estimator(n_threads=2)
            model.partial_fit(X[:1500], y[:1500], classes=np.arange(5))
            model.partial_fit(X[1500:], y[1500:])  # parameters now stale: derived on first use
            results = list(pool.map(lambda _: model.predict_log_proba(X), range(12)))
            for r in results:
                np.testing.assert_allclose(r, expected, rtol=1e-12, atol=1e-12)
                np.testing.assert_array_equal(r, results[0])
