"""Predictive scoring of the text models: ``predictive=True`` against the plug-in, same model.

Groups are ``{model}/predict_proba-predictive/{dataset}`` (batch ``predict_proba`` on the whole
test set) and ``{model}/predict_proba-predictive-1row/{dataset}`` (one CSR row at a time, as in
``bench_text.py``); each holds the plug-in (``mode=plug-in``) and the predictive
(``mode=predictive``) of one model, fitted with the default alpha=1. fastgen only: scikit-learn
has no predictive. The ratio predictive / plug-in is the number to read (``bench/summarize.py``
prints both rows). MultinomialNB's predictive is the Polya (Dirichlet-compound-multinomial)
probability of each document; BernoulliNB's is its plug-in, so its two rows should match.

After timing, the predictive's posteriors are checked to be finite and to sum to one, and for
BernoulliNB to equal the plug-in's.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import bench_single_rows, record_extra_info
from numpy.testing import assert_allclose, assert_array_equal

import fastgen

MODELS = {"multinomial": "MultinomialNB", "bernoulli": "BernoulliNB"}
DATASETS = ("ng20-real", "ng20-synth")
MODES = ("plug-in", "predictive")


class _Fastgen:  # the contender record that record_extra_info reads
    name = "fastgen"


def cases(op: str):
    return [
        pytest.param(m, d, mode, id=f"{m}-{d}-{mode}",
                     marks=pytest.mark.benchmark(group=f"{m}/{op}/{d}"))
        for m in MODELS for d in DATASETS for mode in MODES
    ]


def _fitted(corpus, model, mode, n_threads):
    est = getattr(fastgen, MODELS[model])(predictive=mode == "predictive", n_threads=n_threads)
    est.fit(corpus.X_train, corpus.y_train)
    est.predict_proba(corpus.X_test[:1])  # warm-up (lazy derivations) outside the timing
    return est


def _check(est, proba, X, corpus, model, n_threads):
    assert np.isfinite(proba).all()
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    if model == "bernoulli" and est.predictive:
        assert_array_equal(proba, _fitted(corpus, model, "plug-in", n_threads).predict_proba(X))


@pytest.mark.parametrize("n_threads", [1, 2], ids=["1t", "2t"])
@pytest.mark.parametrize(("model", "dataset", "mode"), cases("predict_proba-predictive"))
def test_predict_proba(benchmark, model, dataset, mode, n_threads, corpora, request):
    corpus = corpora(dataset)
    est = _fitted(corpus, model, mode, n_threads)
    X = corpus.X_test
    proba = benchmark(est.predict_proba, X)
    record_extra_info(benchmark, _Fastgen, n_threads, X, dataset, request, mode=mode,
                      accuracy=float(np.mean(np.argmax(proba, axis=1) == corpus.y_test)))
    _check(est, proba, X, corpus, model, n_threads)


@pytest.mark.parametrize(("model", "dataset", "mode"), cases("predict_proba-predictive-1row"))
def test_predict_proba_one_row(benchmark, model, dataset, mode, corpora, request):
    corpus = corpora(dataset)
    est = _fitted(corpus, model, mode, 1)
    idx, rows, rounds = bench_single_rows(benchmark, est, corpus.X_test)
    record_extra_info(benchmark, _Fastgen, 1, rows[0], dataset, request, mode=mode,
                      rounds=rounds)
    _check(est, np.vstack([est.predict_proba(r) for r in rows[:8]]),
           corpus.X_test[idx[:8]], corpus, model, 1)
