"""Semi-supervised EM (``fastgen.SemiSupervised``) on 20 Newsgroups: the cost of one EM iteration,
and the whole fit against scikit-learn's self-training.

Data (built once per module, never timed): the 20 Newsgroups training posts vectorised by
``fastgen.text.CountVectorizer(stop_words="english", min_df=3)`` fitted on them (38,563 words),
20 labelled posts per class (400, drawn per class with a fixed seed) and 10,000 unlabelled posts
drawn at random from the rest; the 7,532 test posts for accuracy. The model is
``MultinomialNB(alpha=0.1)`` (``examples/semi_supervised.py`` says why not alpha = 1).
Skipped without ``../shared/data`` or scikit-learn.

Groups:

* ``MultinomialNB/semi-supervised-fit-2-iterations/ng20-10k-unlabelled`` (fastgen only): the cost
  of one EM iteration. ``SemiSupervised`` runs its iterations inside ``fit`` and exposes no single
  step, so an iteration is measured as the difference of two whole fits, ``max_iter=2`` minus
  ``max_iter=1`` (both with ``tol=0``, so that neither stops early): what is left is exactly one
  E-step (the unlabelled rows' posteriors), one M-step (the labelled rows' counts plus the
  unlabelled rows' soft ones, and the model derived from them) and the scoring of every row for
  the objective. pytest-benchmark times the ``max_iter=2`` fit; the setup of each round times,
  just before it, ``MultinomialNB().fit`` on the 10,400 rows (their true labels) plus
  ``predict_proba`` of the 10,000 unlabelled ones (the supervised work an iteration is made of),
  then the ``max_iter=1`` fit. ``extra_info`` holds the medians over the rounds of the iteration
  and of that reference, and ``iteration_over_fit_predict_proba_median``, the median of the
  per-round ratios (the three taking turns, so that the host's drift cancels); ``-s`` prints them.
* ``MultinomialNB/semi-supervised-fit/ng20-10k-unlabelled``: the whole fit, fastgen's
  ``SemiSupervised(MultinomialNB(alpha=0.1))`` (EM to convergence, its defaults) against
  scikit-learn's ``SelfTrainingClassifier(MultinomialNB(alpha=0.1))`` (its defaults: threshold
  0.75, at most 10 rounds): everything before the first prediction. ``bench/summarize.py`` gives
  the ratio. ``extra_info`` records each one's test accuracy, the labelled rows' alone, and
  fastgen's EM iterations.
* ``MultinomialNB/semi-supervised-fit-equal-accuracy/ng20-10k-unlabelled``: the same, with EM
  stopped after ``max_iter=1`` iteration (it warns that it did not converge), the fewest that
  can be asked for: on this split it is already as accurate as self-training (checked after
  timing), so the two are compared at equal accuracy.

Checks after timing: one iteration's model equals one M-step computed by NumPy (the labelled
rows' counts plus ``X_u.T @ P(c | x)`` under the model of the labelled rows) to 1e-9; every
``n_threads`` gives the objective of the first run (rtol 1e-12); EM converges without a
``ConvergenceWarning`` (the stopped EM warns, and its accuracy is at least self-training's);
both semi-supervised fits beat the labelled rows alone on the test set.
"""

from __future__ import annotations

import time
import warnings
from typing import NamedTuple

import numpy as np
import pytest
import scipy.sparse as sp

import _corpus

DATASET = "ng20-10k-unlabelled"
PER_CLASS = 20
N_UNLABELLED = 10_000
ALPHA = 0.1
ITERATION_ROUNDS = 30
# EM stopped after this many iterations (the fewest) is already as accurate as self-training on
# this split
EQUAL_ACCURACY_MAX_ITER = 1


class Split(NamedTuple):
    X: sp.csr_matrix  # the labelled rows, then the unlabelled ones
    y: np.ndarray  # class codes; -1 for the unlabelled rows
    y_true: np.ndarray  # every row's class
    X_test: sp.csr_matrix
    y_test: np.ndarray

    @property
    def labelled(self):
        return self.y >= 0


@pytest.fixture(scope="module")
def split() -> Split:
    pytest.importorskip("sklearn", reason="scikit-learn is the self-training contender")
    folder = _corpus.shared_data_dir() / "newsgroups20"
    if not (folder / "20news-bydate-train.jsonl.gz").exists():
        pytest.skip(f"20 Newsgroups data not found at {folder} (../shared/data is absent)")
    from fastgen.text import CountVectorizer

    texts, labels = _corpus._read_jsonl_gz(folder / "20news-bydate-train.jsonl.gz")
    texts_test, labels_test = _corpus._read_jsonl_gz(folder / "20news-bydate-test.jsonl.gz")
    vectoriser = CountVectorizer(stop_words="english", min_df=3)
    X_pool = vectoriser.fit_transform(texts).astype(np.float64)
    classes, y_pool = np.unique(labels, return_inverse=True)
    rng = np.random.default_rng(0)
    labelled = np.concatenate([rng.choice(np.flatnonzero(y_pool == c), PER_CLASS, replace=False)
                               for c in range(len(classes))])
    rest = np.setdiff1d(np.arange(len(y_pool)), labelled)
    unlabelled = np.sort(rng.choice(rest, N_UNLABELLED, replace=False))
    rows = np.concatenate([np.sort(labelled), unlabelled])
    y = np.where(np.arange(len(rows)) < len(labelled), y_pool[rows], -1)
    return Split(X_pool[rows], y, y_pool[rows],
                 vectoriser.transform(texts_test).astype(np.float64),
                 np.searchsorted(classes, labels_test))


def _accuracy(model, split):
    return float(np.mean(model.predict(split.X_test) == split.y_test))


def _one_m_step(split, start):
    """MultinomialNB(alpha=ALPHA)'s log-probabilities after one M-step from the model ``start``
    of the labelled rows, by NumPy: the labelled rows' counts plus the unlabelled rows' weighted
    by their posteriors under ``start``."""
    lab = split.labelled
    members = np.zeros((split.X.shape[0], len(start.classes_)))
    members[np.flatnonzero(lab), split.y[lab]] = 1.0
    members[~lab] = start.predict_proba(split.X[~lab])
    counts = np.asarray(split.X.T @ members).T + ALPHA
    class_weight = members.sum(axis=0)
    return (np.log(counts) - np.log(counts.sum(axis=1, keepdims=True)),
            np.log(class_weight) - np.log(class_weight.sum()))


@pytest.mark.benchmark(group=f"MultinomialNB/semi-supervised-fit-2-iterations/{DATASET}")
def test_em_iteration(benchmark, contender, n_threads, split, record_info, first_fastgen_result):
    if contender.name != "fastgen":
        pytest.skip("fastgen's EM iteration against its own fit and predict_proba")
    fastgen = contender.module
    lab = split.labelled
    one_iteration, reference = [], []

    def em(max_iter):
        # tol=0: stop only when an iteration does not raise the objective (never this early)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
            return fastgen.SemiSupervised(
                fastgen.MultinomialNB(alpha=ALPHA, n_threads=n_threads), max_iter=max_iter,
                tol=0.0).fit(split.X, split.y)

    def fit_predict_proba():
        model = fastgen.MultinomialNB(alpha=ALPHA, n_threads=n_threads).fit(split.X, split.y_true)
        return model.predict_proba(split.X[~lab])

    def timed(function, *args):
        start = time.perf_counter()
        function(*args)
        return time.perf_counter() - start

    def setup():  # each round, untimed by pytest-benchmark: the reference, then one iteration
        reference.append(timed(fit_predict_proba))
        one_iteration.append(timed(em, 1))
        return (2,), {}

    model = benchmark.pedantic(em, setup=setup, rounds=ITERATION_ROUNDS, warmup_rounds=1)
    assert model.n_iter_ == 2
    one = em(1)
    start = fastgen.MultinomialNB(alpha=ALPHA).fit(split.X[lab], split.y[lab])
    feature_log_prob, class_log_prior = _one_m_step(split, start)
    np.testing.assert_allclose(one.estimator_.feature_log_prob_, feature_log_prob, rtol=0,
                               atol=1e-9)
    np.testing.assert_allclose(one.estimator_.class_log_prior_, class_log_prior, rtol=0,
                               atol=1e-12)
    first = first_fastgen_result.setdefault(("em-iteration",), model.objective_)
    np.testing.assert_allclose(model.objective_, first, rtol=1e-12)
    if benchmark.disabled:  # --benchmark-disable: one untimed call
        return
    # the rounds' own, after the warm-up round's
    two = np.asarray(benchmark.stats.stats.data)
    one_iteration = np.asarray(one_iteration[1:1 + len(two)])
    reference = np.asarray(reference[1:1 + len(two)])
    iteration = two - one_iteration
    ratio = float(np.median(iteration / reference))
    print(f"\n{n_threads} thread(s): one EM iteration {np.median(iteration) * 1e3:.2f} ms, fit + "
          f"predict_proba {np.median(reference) * 1e3:.2f} ms, per-round ratio {ratio:.2f} "
          "(medians)")
    record_info(split.X, DATASET, iteration_median=float(np.median(iteration)),
                iteration_min=float(iteration.min()),
                fit_predict_proba_median=float(np.median(reference)),
                fit_predict_proba_min=float(reference.min()),
                iteration_over_fit_predict_proba_median=ratio)


@pytest.fixture(scope="module")
def self_training_accuracy(split):
    """The test accuracy of scikit-learn's self-training on the split (untimed)."""
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.semi_supervised import SelfTrainingClassifier

    return _accuracy(SelfTrainingClassifier(MultinomialNB(alpha=ALPHA)).fit(split.X, split.y),
                     split)


@pytest.mark.benchmark(group=f"MultinomialNB/semi-supervised-fit/{DATASET}")
def test_semi_supervised_fit(benchmark, contender, n_threads, split, record_info,
                             first_fastgen_result):
    _whole_fit(benchmark, contender, n_threads, split, record_info, first_fastgen_result, None,
               None)


@pytest.mark.benchmark(group=f"MultinomialNB/semi-supervised-fit-equal-accuracy/{DATASET}")
def test_semi_supervised_fit_at_equal_accuracy(benchmark, contender, n_threads, split,
                                               record_info, first_fastgen_result,
                                               self_training_accuracy):
    _whole_fit(benchmark, contender, n_threads, split, record_info, first_fastgen_result,
               EQUAL_ACCURACY_MAX_ITER, self_training_accuracy)


def _whole_fit(benchmark, contender, n_threads, split, record_info, first_fastgen_result,
               max_iter, self_training_accuracy):
    """Time the whole fit, fastgen's EM (to convergence, or stopped after max_iter iterations,
    then at least as accurate as self-training: self_training_accuracy) or scikit-learn's
    self-training, and check it (module docstring)."""
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.semi_supervised import SelfTrainingClassifier

    if contender.name == "fastgen":
        fastgen = contender.module
        em = {} if max_iter is None else {"max_iter": max_iter}

        def fit():
            return fastgen.SemiSupervised(
                fastgen.MultinomialNB(alpha=ALPHA, n_threads=n_threads), **em).fit(split.X,
                                                                                   split.y)
    else:
        def fit():
            return SelfTrainingClassifier(MultinomialNB(alpha=ALPHA)).fit(split.X, split.y)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = benchmark.pedantic(fit, rounds=5, warmup_rounds=1)
    accuracy = _accuracy(model, split)
    lab = split.labelled
    labelled_only = _accuracy(MultinomialNB(alpha=ALPHA).fit(split.X[lab], split.y[lab]), split)
    more = {"accuracy": accuracy, "accuracy_labelled_only": labelled_only}
    if contender.name == "fastgen":
        warned = [w for w in caught if issubclass(w.category, contender.module.ConvergenceWarning)]
        if max_iter is None:
            assert not warned
        else:  # stopped early on purpose: it warns, and must be as accurate as self-training
            assert warned and model.n_iter_ == max_iter
            assert accuracy >= self_training_accuracy
        more.update(n_iter=int(model.n_iter_))
        first = first_fastgen_result.setdefault(("semi-supervised-fit", max_iter),
                                                model.objective_)
        np.testing.assert_allclose(model.objective_, first, rtol=1e-12)
    assert accuracy > labelled_only
    record_info(split.X, DATASET, **more)
