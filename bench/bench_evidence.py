"""Choosing MultinomialNB's smoothing on the real 20 Newsgroups training set (11,314 documents,
``CountVectorizer()``, 130,107 words): by the evidence against by cross-validation.

* ``MultinomialNB/choose-alpha/ng20-real``: fastgen's ``MultinomialNB(alpha="evidence").fit``
  (the alpha maximising the log marginal likelihood, one fit) against scikit-learn's usual way,
  ``GridSearchCV(sklearn MultinomialNB(), {"alpha": 10 values log-spaced in [1e-3, 1]}, cv=5)``
  (50 fits and scorings, then a refit).
* ``MultinomialNB/choose-alpha-by-cv/ng20-real``: the same 5-fold grid search over fastgen's own
  MultinomialNB (fastgen only), so that the evidence is also compared with the fastest
  cross-validation there is.

Checks after timing: each chosen model's test accuracy is recorded (``extra_info``), and the
evidence's is within 0.01 of the grid search's. Skipped without ``../shared/data`` or
scikit-learn (which vectorises the corpus and runs the grid search).
"""

from __future__ import annotations

import numpy as np
import pytest

DATASET = "ng20-real"
GRID = {"alpha": np.logspace(-3, 0, 10)}


def _grid_search(estimator):
    from sklearn.model_selection import GridSearchCV

    return GridSearchCV(estimator, GRID, cv=5)


@pytest.mark.benchmark(group=f"MultinomialNB/choose-alpha/{DATASET}")
def test_choose_alpha(benchmark, contender, n_threads, corpora, record_info, first_fastgen_result):
    corpus = corpora(DATASET)
    if contender.name == "fastgen":
        def choose():
            return contender.module.MultinomialNB(alpha="evidence", n_threads=n_threads).fit(
                corpus.X_train, corpus.y_train)
    else:
        def choose():
            return _grid_search(contender.module.MultinomialNB()).fit(corpus.X_train,
                                                                      corpus.y_train)
    model = benchmark.pedantic(choose, rounds=3 if contender.name == "sklearn" else 20,
                               warmup_rounds=1)
    accuracy = float(model.score(corpus.X_test, corpus.y_test))
    alpha = float(model.alpha_ if contender.name == "fastgen" else model.best_params_["alpha"])
    record_info(corpus.X_train, DATASET, accuracy=accuracy, alpha=alpha)
    first_fastgen_result.setdefault(("choose-alpha", contender.name), accuracy)
    other = first_fastgen_result.get(("choose-alpha", "sklearn" if contender.name == "fastgen"
                                      else "fastgen"))
    if other is not None:
        assert abs(accuracy - other) <= 0.01


@pytest.mark.benchmark(group=f"MultinomialNB/choose-alpha-by-cv/{DATASET}")
def test_choose_alpha_by_cv_fastgen(benchmark, contender, n_threads, corpora, record_info):
    if contender.name != "fastgen":
        pytest.skip("the grid search over fastgen's own model")
    corpus = corpora(DATASET)
    search = benchmark.pedantic(
        lambda: _grid_search(contender.module.MultinomialNB(n_threads=n_threads)).fit(
            corpus.X_train, corpus.y_train), rounds=3, warmup_rounds=1)
    record_info(corpus.X_train, DATASET, accuracy=float(search.score(corpus.X_test, corpus.y_test)),
                alpha=float(search.best_params_["alpha"]))
