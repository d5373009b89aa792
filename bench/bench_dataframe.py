"""Scoring pandas DataFrames: fastgen vs scikit-learn on UCI adult.

Data (read once per module, never timed): ``../shared/data/adult`` as pandas reads it
(``header=None, skipinitialspace=True, na_values="?"``: 6 integer columns, 8 text columns of
pandas' ``str`` dtype). The models are fitted on the complete rows of adult-train (30,162) and
score complete rows of adult-test whose labels training saw (10,000 of them), so that
scikit-learn, which takes no missing values and no unknown categories, computes the same model.
Skipped, with the reason, when ``../shared/data`` is absent. Models:

* ``mixed``: MixedNB on all 14 columns (kinds inferred from the dtypes). fastgen only:
  scikit-learn has no naive Bayes over columns of different kinds.
* ``categorical``: CategoricalNB on the 8 text columns, against scikit-learn's
  ``Pipeline(OrdinalEncoder(), CategoricalNB())``: the encoder's categories are fastgen's (the
  sorted labels seen in training), so the two compute the same model from the same DataFrame.
* ``gaussian``: GaussianNB on the 6 integer columns, against scikit-learn's GaussianNB on the
  same DataFrame.

Groups: ``dataframe/predict_proba/1row-{model}`` (one row at a time, a one-row DataFrame,
``bench_single_rows``) and ``dataframe/predict_proba/10k-{model}`` (the 10,000 rows in one
DataFrame). After timing, fastgen's ``predict_proba`` equals scikit-learn's within 1e-9 and one
row at a time equals the batch.
"""
from __future__ import annotations

import functools

import _corpus
import numpy as np
import pytest
from conftest import bench_single_rows
from numpy.testing import assert_allclose

N_TEST = 10_000
MODELS = ("mixed", "categorical", "gaussian")


@functools.lru_cache(maxsize=None)
def _adult():
    import pandas as pd

    def read(subset):
        path = _corpus.shared_data_dir() / "adult" / f"adult-{subset}.csv"
        df = pd.read_csv(path, header=None, skipinitialspace=True, na_values="?").dropna()
        X = df.iloc[:, :14].copy()
        X.columns = [f"c{j}" for j in range(14)]
        return X.reset_index(drop=True), df.iloc[:, 14].str.rstrip(".").to_numpy()

    X, y = read("train")
    X_test, _ = read("test")
    text = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    seen = np.all([X_test[c].isin(X[c]) for c in text], axis=0)
    return X, y, X_test[seen].iloc[:N_TEST].reset_index(drop=True), text


@pytest.fixture(scope="module")
def adult():
    pytest.importorskip("pandas")
    if not (_corpus.shared_data_dir() / "adult").is_dir():
        pytest.skip("UCI adult not found (../shared/data is absent)")
    return _adult()


def _columns(model, X, text):
    if model == "categorical":
        return X[text]
    if model == "gaussian":
        return X.drop(columns=text)
    return X


def _estimator(contender, model, n_threads):
    if contender.name == "fastgen":
        name = {"mixed": "MixedNB", "categorical": "CategoricalNB", "gaussian": "GaussianNB"}
        return getattr(contender.module, name[model])(n_threads=n_threads)
    if model == "mixed":
        pytest.skip("scikit-learn has no naive Bayes over columns of different kinds")
    from sklearn.naive_bayes import CategoricalNB, GaussianNB

    if model == "gaussian":
        return GaussianNB()
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    return make_pipeline(OrdinalEncoder(), CategoricalNB())


@functools.lru_cache(maxsize=None)
def _reference(model):
    """scikit-learn's predict_proba on the test rows (None for MixedNB)."""
    if model == "mixed":
        return None
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder
    from sklearn.naive_bayes import CategoricalNB

    X, y, X_test, text = _adult()
    ref = GaussianNB() if model == "gaussian" else make_pipeline(OrdinalEncoder(), CategoricalNB())
    return ref.fit(_columns(model, X, text), y).predict_proba(_columns(model, X_test, text))


def _fitted(contender, model, n_threads, adult):
    """(the contender's model fitted on adult-train's columns for ``model``, those of the test
    rows)."""
    X, y, X_test, text = adult
    est = _estimator(contender, model, n_threads).fit(_columns(model, X, text), y)
    return est, _columns(model, X_test, text)


def _check(contender, model, proba, rows=slice(None)):
    if contender.name == "fastgen" and _reference(model) is not None:
        assert_allclose(proba, _reference(model)[rows], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("model", [
    pytest.param(m, marks=pytest.mark.benchmark(group=f"dataframe/predict_proba/1row-{m}"))
    for m in MODELS])
def test_predict_proba_one_row(benchmark, contender, n_threads, model, adult, record_info):
    est, X_test = _fitted(contender, model, n_threads, adult)
    idx, rows, rounds = bench_single_rows(benchmark, est, X_test)
    got = np.vstack([est.predict_proba(r) for r in rows])
    assert_allclose(got, est.predict_proba(X_test.iloc[idx]), rtol=1e-12, atol=1e-15)
    _check(contender, model, got, idx)
    record_info(X_test.iloc[idx], f"adult-1row-{model}", rows_cycled=len(rows), rounds=rounds)


@pytest.mark.parametrize("model", [
    pytest.param(m, marks=pytest.mark.benchmark(group=f"dataframe/predict_proba/10k-{m}"))
    for m in MODELS])
def test_predict_proba_batch(benchmark, contender, n_threads, model, adult, record_info):
    est, X_test = _fitted(contender, model, n_threads, adult)
    est.predict_proba(X_test)  # warm-up
    proba = benchmark(est.predict_proba, X_test)
    _check(contender, model, proba)
    record_info(X_test, f"adult-10k-{model}")
