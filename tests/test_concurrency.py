"""Refitting a model while other threads predict with it (issue: "Refitting while serving
corrupts the heap").

A served model is shared by many threads calling ``predict_proba`` while another thread
refits it: ``fit`` with another number of classes or features used to abort the interpreter
with "double free or corruption" (GaussianNB, PoissonNB, CategoricalNB, QDA) or to raise
kernel IndexErrors on the bounds-checked build. Refitting must never corrupt memory, and a
prediction must see the old model or the new one, never a mix of the two: every result a
reader gets is bit for bit what a model fitted alone on one of the datasets gives, or the
clear "X has f features, but ... is expecting f + 2 features" ValueError of a model fitted
on more features. Anything else (another exception, another array) is a failure.

For every model (LDA both with full and diagonal covariance):

(a) 8 threads predict while a writer refits the model on datasets with 3 classes, 5 other
    classes and 2 more features, in turn;
(b) 8 threads predict while a writer adds batches with ``partial_fit``: every result is the
    prediction of some prefix of the batches (the text models derive their parameters lazily
    on the first prediction after a ``partial_fit``, so the readers also race each other to
    derive them);
(c) two writers at once, ``fit`` and ``partial_fit`` (same classes and features), while 8
    threads predict: nothing crashes, neither writer raises, every prediction is a probability
    table, and afterwards the model is consistent (finite probabilities summing to one, the
    same after a pickle round trip).

Everything runs with n_threads=1 so that results are deterministic (they do not depend on
n_threads anyway), and is bounded by call counts and a deadline, so that a broken model fails
the test instead of hanging it. A short GIL switch interval makes the Python threads swap
often, also in the middle of a fit. Races are probabilistic: a broken model may get through
one run of a test, but a correct one passes every run.
"""

import pickle
import re
import sys
import threading
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from _data import zipf_counts
from threadpoolctl import threadpool_limits

import fastgen

N_READERS = 8
N_QUERY = 500  # rows of the query every reader predicts (~0.1-1 ms per call)
N_TRAIN = 600
N_CODES = 4  # categories of a categorical column (the query uses only these)
MAX_READER_CALLS = 50_000  # per reader; the readers normally stop when the writers are done
DEADLINE = 10.0  # seconds: the writers stop and the readers return by then...
GRACE = 10.0  # ...and a thread still running this long after it is reported as hung
REFIT_CYCLES = 16  # test (a): fits D2, D3, D1 this many times
N_BATCHES = 6  # test (b): partial_fit batches after the first one
ROUNDS = 3  # test (b): the whole partial_fit sequence, each time on a fresh model
D1_LABELS = [0, 1, 2]
D2_LABELS = [10, 11, 12, 13, 14]
D3_LABELS = ["a", "b", "c", "d"]


# ---------------------------------------------------------------------------------------
# models and their data


@dataclass(frozen=True)
class Case:
    """A model (built with ``make(n_features)``: only MixedNB's parameters depend on the number
    of features) and the kind of data it takes."""

    make: Callable[[int], object]
    data: str  # "zipf-csr", "zipf-dense", or the kind of every column: "gaussian",
    # "categorical", "poisson", or "mixed" (those three in turn)
    n_features: int


def _mixed_types(n_features):
    return [("gaussian", "categorical", "poisson")[j % 3] for j in range(n_features)]


CASES = {
    "MultinomialNB": Case(lambda f: fastgen.MultinomialNB(n_threads=1), "zipf-csr", 5000),
    "BernoulliNB": Case(lambda f: fastgen.BernoulliNB(n_threads=1), "zipf-dense", 400),
    "ComplementNB": Case(lambda f: fastgen.ComplementNB(norm=True, n_threads=1), "zipf-csr",
                         5000),
    "PoissonNB": Case(lambda f: fastgen.PoissonNB(n_threads=1), "poisson", 120),
    "GaussianNB": Case(lambda f: fastgen.GaussianNB(n_threads=1), "gaussian", 120),
    "CategoricalNB": Case(lambda f: fastgen.CategoricalNB(n_threads=1), "categorical", 120),
    "LinearDiscriminantAnalysis-full": Case(
        lambda f: fastgen.LinearDiscriminantAnalysis(n_threads=1), "gaussian", 80),
    "LinearDiscriminantAnalysis-diagonal": Case(
        lambda f: fastgen.LinearDiscriminantAnalysis("diagonal", n_threads=1), "gaussian", 160),
    "QuadraticDiscriminantAnalysis": Case(
        lambda f: fastgen.QuadraticDiscriminantAnalysis(reg_param=0.1, n_threads=1),
        "gaussian", 30),
    "MixedNB": Case(lambda f: fastgen.MixedNB(_mixed_types(f), n_threads=1), "mixed", 60),
    "BaselineClassifier": Case(lambda f: fastgen.BaselineClassifier(), "gaussian", 4),
}
by_model = pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))


def make_data(case, n_samples, n_features, labels, seed, level=0):
    """(X, y) for the case's model: every label occurs, classes differ in distribution.
    ``level`` > 0 (a later partial_fit batch) adds categories to categorical columns, so that
    such a batch grows the model's tables."""
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    n_classes = len(labels)
    if case.data.startswith("zipf"):
        X, y_idx = zipf_counts(n_samples, n_features, n_classes=n_classes, mean_len=100,
                               seed=seed)
        return (X if case.data == "zipf-csr" else X.toarray()), labels[y_idx]
    share = 0.5 / n_classes + 0.5 * rng.dirichlet(np.ones(n_classes))  # uneven classes
    y_idx = rng.permutation(np.concatenate([
        np.arange(n_classes), rng.choice(n_classes, n_samples - n_classes, p=share)]))
    kinds = (_mixed_types(n_features) if case.data == "mixed" else [case.data] * n_features)
    X = np.empty((n_samples, n_features))
    n_codes = N_CODES + level // 2
    for j, kind in enumerate(kinds):
        if kind == "gaussian":
            X[:, j] = rng.normal(size=n_samples) + rng.normal(size=n_classes)[y_idx]
        elif kind == "poisson":
            X[:, j] = rng.poisson(rng.uniform(0.5, 4.0, n_classes)[y_idx])
            X[rng.random(n_samples) < 0.02, j] = np.nan  # missing counts are allowed
        else:
            favourite = rng.integers(0, n_codes, n_classes)[y_idx]
            X[:, j] = np.where(rng.random(n_samples) < 0.5, favourite,
                               rng.integers(0, n_codes, n_samples))
            X[:n_codes, j] = np.arange(n_codes)  # every category occurs
    return X, labels[y_idx]


def query(case):
    """The rows every reader predicts: case.n_features columns, valid for every model below."""
    X, _ = make_data(case, N_QUERY, case.n_features, D1_LABELS, seed=99)
    return X


def fitted(case, n_features, X, y):
    return case.make(n_features).fit(X, y)


# ---------------------------------------------------------------------------------------
# the shared harness


@pytest.fixture(autouse=True)
def frequent_thread_switches():
    """Python threads swap every 10 us instead of every 5 ms, also in the middle of a fit; BLAS
    (used by the discriminant models) runs on one thread, as 9 Python threads each waking a pool
    of BLAS threads would only make the test slow."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    with threadpool_limits(1, user_api="blas"):
        yield
    sys.setswitchinterval(before)


def _describe(outcome):
    if isinstance(outcome, BaseException):
        frames = traceback.extract_tb(outcome.__traceback__)[-3:]
        where = " <- ".join(f"{f.name} ({f.filename.rsplit('/', 1)[-1]}:{f.lineno})"
                            for f in reversed(frames))
        return f"{type(outcome).__name__}: {outcome} [at {where}]"
    a = np.asarray(outcome)
    return f"array of shape {a.shape}, first row {a[0] if a.ndim == 2 and len(a) else a}"


def outcome_of(model, X):
    """model.predict_proba(X), or the exception it raised."""
    try:
        return model.predict_proba(X)
    except Exception as exc:  # judged by the caller: only some exceptions are allowed
        return exc


def run_concurrently(model, X, judge, writers, n_readers=N_READERS):
    """Release ``n_readers`` threads calling ``model.predict_proba(X)`` in a loop and the
    ``writers`` together, with one barrier; return (errors, Counter of the outcomes' names).

    ``judge(outcome)`` names an acceptable outcome (the returned array, or the exception
    raised) or returns None for a wrong one. A writer is a callable taking ``pace``: calling
    ``pace()`` between two steps waits until the readers have completed n_readers + 1 more
    calls (so at least one of them started after the step), and returns False once the
    deadline has passed (the writer should stop). The readers stop after one more call each
    once the writers are done, after MAX_READER_CALLS calls or at the deadline. errors lists
    the distinct wrong reader outcomes, writer exceptions and threads still running long after
    the deadline, each with how often it happened."""
    problems, outcomes = Counter(), Counter()
    lock = threading.Lock()
    calls, readers_left = [0], [n_readers]
    writers_done = threading.Event()
    start = threading.Barrier(n_readers + len(writers))
    deadline = time.monotonic() + DEADLINE

    def pace(n_calls=n_readers + 1, timeout=0.2):
        with lock:
            target = calls[0] + n_calls
        until = min(time.monotonic() + timeout, deadline)
        while calls[0] < target and readers_left[0] and time.monotonic() < until:
            time.sleep(1e-4)
        return time.monotonic() < deadline

    def reader():
        start.wait()
        try:
            for _ in range(MAX_READER_CALLS):
                last = writers_done.is_set()
                outcome = outcome_of(model, X)
                try:
                    name = judge(outcome)
                except Exception as exc:
                    name, outcome = None, exc
                with lock:
                    calls[0] += 1
                    outcomes[name] += 1
                    if name is None:
                        problems["reader got " + _describe(outcome)] += 1
                if last or time.monotonic() > deadline:
                    return
        finally:
            with lock:
                readers_left[0] -= 1

    def writer(steps):
        start.wait()
        try:
            steps(pace)
        except Exception as exc:
            with lock:
                problems["writer raised " + _describe(exc)] += 1

    reader_threads = [threading.Thread(target=reader, daemon=True) for _ in range(n_readers)]
    writer_threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in writers]
    for t in reader_threads + writer_threads:
        t.start()
    for t in writer_threads:
        t.join(max(0.0, deadline - time.monotonic()) + GRACE)
    writers_done.set()
    for t in reader_threads:
        t.join(max(0.0, deadline - time.monotonic()) + GRACE)
    with lock:
        hung = sum(t.is_alive() for t in reader_threads + writer_threads)
        if hung:
            problems[f"thread(s) still running {DEADLINE + GRACE:g} s after the start"] += hung
        errors = [f"{n} x {message}" for message, n in problems.most_common(12)]
        return errors, Counter(outcomes)


def same_as(references):
    """A judge accepting arrays bit-identical to one of ``references`` (name -> array)."""
    def judge(outcome):
        if isinstance(outcome, BaseException):
            return None
        for name, expected in references.items():
            if outcome.shape == expected.shape and np.array_equal(outcome, expected):
                return name
        return None
    return judge


def assert_no_errors(errors, outcomes):
    assert not errors, f"{len(errors)} kind(s) of problem; outcomes {dict(outcomes)}:\n" + \
        "\n".join(errors)


# ---------------------------------------------------------------------------------------
# (a) fit with other classes and features while serving


@by_model
def test_refit_while_predicting(case):
    f = case.n_features
    data = {"D1": (make_data(case, N_TRAIN, f, D1_LABELS, seed=1), f),
            "D2": (make_data(case, N_TRAIN, f, D2_LABELS, seed=2), f),
            "D3": (make_data(case, N_TRAIN, f + 2, D3_LABELS, seed=3), f + 2)}
    Xq = query(case)
    expected = {name: fitted(case, n_features, *D).predict_proba(Xq)
                for name, (D, n_features) in data.items() if name != "D3"}
    assert expected["D1"].shape == (N_QUERY, 3) and expected["D2"].shape == (N_QUERY, 5)
    more_features = rf"\b{f + 2}\b.*features|features.*\b{f + 2}\b"
    with pytest.raises(ValueError, match=more_features):
        fitted(case, f + 2, *data["D3"][0]).predict_proba(Xq)
    old_or_new = same_as(expected)

    def judge(outcome):
        # the D3 model refuses the query: a ValueError about the number of features
        if isinstance(outcome, ValueError) and re.search(more_features, str(outcome)):
            return "D3"
        return old_or_new(outcome)

    shared = fitted(case, f, *data["D1"][0])
    last = ["D1"]

    def refit(pace):
        for _ in range(REFIT_CYCLES):
            for name in ("D2", "D3", "D1"):
                (X, y), n_features = data[name]
                # only MixedNB's parameters depend on the number of features; the readers use
                # the fitted model alone
                shared.set_params(**case.make(n_features).get_params()).fit(X, y)
                last[0] = name
                if not pace():
                    return

    errors, outcomes = run_concurrently(shared, Xq, judge, [refit])
    assert_no_errors(errors, outcomes)
    # the readers really overlapped the refits, and the model is what the last fit left
    assert {"D1", "D2", "D3"} <= set(outcomes), dict(outcomes)
    assert judge(outcome_of(shared, Xq)) == last[0]


# ---------------------------------------------------------------------------------------
# (b) partial_fit while serving


def batches(case, labels, seed):
    """Batch 0 has every label; later batches grow categorical columns (see make_data)."""
    return [make_data(case, N_TRAIN // 3, case.n_features, labels, seed=seed + k, level=k)
            for k in range(N_BATCHES + 1)]


@by_model
def test_partial_fit_while_predicting(case):
    parts = batches(case, D1_LABELS, seed=10)
    Xq = query(case)
    reference = case.make(case.n_features)
    prefixes = {}
    for k, (X, y) in enumerate(parts):
        reference.partial_fit(X, y, classes=D1_LABELS)
        prefixes[f"batches 0..{k}"] = reference.predict_proba(Xq)
    judge = same_as(prefixes)
    seen = Counter()
    for _ in range(ROUNDS):
        shared = case.make(case.n_features).partial_fit(*parts[0], classes=D1_LABELS)

        def learn(pace, shared=shared):
            for X, y in parts[1:]:
                pace()  # every batch is added, even after the deadline
                shared.partial_fit(X, y)

        errors, outcomes = run_concurrently(shared, Xq, judge, [learn])
        assert_no_errors(errors, outcomes)
        assert judge(outcome_of(shared, Xq)) == f"batches 0..{N_BATCHES}"
        seen.update(outcomes)
    assert len(seen) >= 2, dict(seen)  # the readers overlapped the partial fits


# ---------------------------------------------------------------------------------------
# (c) fit and partial_fit at once while serving


@by_model
def test_fit_and_partial_fit_at_once_while_predicting(case):
    f = case.n_features
    D1 = make_data(case, N_TRAIN, f, D1_LABELS, seed=20)
    D1b = make_data(case, N_TRAIN, f, D1_LABELS, seed=21)
    parts = batches(case, D1_LABELS, seed=30)
    Xq = query(case)
    shared = fitted(case, f, *D1)

    def refit(pace):
        for i in range(2 * len(parts)):
            shared.fit(*(D1 if i % 2 else D1b))
            if not pace():
                return

    def learn(pace):
        for X, y in parts + parts:
            shared.partial_fit(X, y, classes=D1_LABELS)
            if not pace():
                return

    def judge(outcome):
        if isinstance(outcome, BaseException) or outcome.shape != (N_QUERY, 3):
            return None
        if not np.isfinite(outcome).all() or not np.allclose(outcome.sum(axis=1), 1.0,
                                                             rtol=0, atol=1e-9):
            return None
        return "probabilities"

    errors, outcomes = run_concurrently(shared, Xq, judge, [refit, learn])
    assert_no_errors(errors, outcomes)
    assert outcomes["probabilities"] > 0
    proba = outcome_of(shared, Xq)
    assert judge(proba) == "probabilities", _describe(proba)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(shared)).predict_proba(Xq), proba)


# ---------------------------------------------------------------------------------------
# (d) semi-supervised EM: a refit publishes its whole outcome at once


@pytest.mark.parametrize("name", ["MultinomialNB", "GaussianNB"])
def test_semi_supervised_refit_while_predicting(name):
    """SemiSupervised refitted by EM on datasets with other classes (a third of the rows
    unlabelled) while 8 threads predict: every prediction is bit for bit that of the model EM
    gives on one of the datasets alone."""
    case = CASES[name]
    f = case.n_features
    data = {}
    for key, labels, seed in (("D1", D1_LABELS, 1), ("D2", D2_LABELS, 2)):
        X, y = make_data(case, N_TRAIN, f, labels, seed=seed)
        y = y.astype(object)
        y[::3] = -1
        data[key] = (X, y)

    def em():  # (a few iterations: whether EM converged does not matter here)
        return fastgen.SemiSupervised(case.make(f), max_iter=3, tol=0.0)

    Xq = query(case)
    warnings.simplefilter("ignore", fastgen.ConvergenceWarning)  # (pytest restores filters)
    expected = {key: em().fit(X, y).predict_proba(Xq) for key, (X, y) in data.items()}
    shared = em().fit(*data["D1"])
    last = ["D1"]

    def refit(pace):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
            for _ in range(REFIT_CYCLES):
                for key in ("D2", "D1"):
                    shared.fit(*data[key])
                    last[0] = key
                    if not pace():
                        return

    judge = same_as(expected)
    errors, outcomes = run_concurrently(shared, Xq, judge, [refit])
    assert_no_errors(errors, outcomes)
    assert {"D1", "D2"} <= set(outcomes), dict(outcomes)
    assert judge(outcome_of(shared, Xq)) == last[0]


# ---------------------------------------------------------------------------------------
# DataFrames: the reader of a DataFrame's labels is kept with each snapshot


@pytest.mark.parametrize("name", ["CategoricalNB", "MixedNB"])
def test_refit_with_other_categories_while_predicting_dataframes(name):
    """Refits alternate between two frames whose columns have different labels (so the same
    label has another code): predictions on a DataFrame see one model or the other, never one
    model's codes read with the other's tables."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(7)

    def frame(labels, seed):
        r = np.random.default_rng(seed)
        X = pd.DataFrame({"u": r.choice(labels, 300), "v": r.choice(labels[::-1], 300)})
        if name == "MixedNB":
            X["x"] = r.normal(size=300)
        return X, r.integers(0, 3, 300)

    data = {"A": frame(["b", "c", "d"], 1), "B": frame(["a", "b", "c", "d", "e"], 2)}
    Xq = data["A"][0].iloc[rng.permutation(300)[:40]].reset_index(drop=True)
    make = getattr(fastgen, name)
    expected = {k: make().fit(*D).predict_proba(Xq) for k, D in data.items()}
    assert not np.array_equal(expected["A"], expected["B"])
    shared = make().fit(*data["A"])

    def refit(pace):
        for _ in range(REFIT_CYCLES):
            for k in ("B", "A"):
                shared.fit(*data[k])
                if not pace():
                    return

    errors, outcomes = run_concurrently(shared, Xq, same_as(expected), [refit])
    assert_no_errors(errors, outcomes)
    assert {"A", "B"} <= set(outcomes), dict(outcomes)
