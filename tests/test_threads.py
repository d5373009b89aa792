"""Threads: Python threads sharing one model, the GIL, n_threads, and the OpenMP thread limits.

(a) Several Python threads calling predict_proba on one shared fitted model get exactly the
    serial answer (also when the model's parameters are stale after partial_fit and derived on
    first use, under concurrency).
(b) The kernels release the GIL: calls from several threads overlap in time, and a pure-Python
    thread keeps running while one long single-threaded call is in a kernel.
(c) n_threads=1 and n_threads=2 give bit-identical fitted statistics and outputs for every model
    on work above ``PARALLEL_MIN_WORK`` (so the OpenMP paths run).
(d) ``threadpoolctl.threadpool_limits(1, user_api="openmp")`` and ``OMP_NUM_THREADS=1`` reach
    ``effective_n_threads(None)``.
"""

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from _data import zipf_counts
from numpy.testing import assert_array_equal

import fastgen
from fastgen._base import PARALLEL_MIN_WORK

needs_openmp = pytest.mark.skipif(not fastgen.openmp_enabled(),
                                  reason="fastgen was built without OpenMP")
WORKERS = 4

# ---------------------------------------------------------------------------------------
# large problems: each single-threaded predict_proba call takes ~20-50 ms


def _big_text():
    X, y = zipf_counts(20_000, 50_000, n_classes=60, mean_len=30, seed=0)
    return X, y


def _big_gaussian():
    rng = np.random.default_rng(1)
    y = np.arange(20_000) % 40
    return rng.normal(size=(20_000, 100)) + 0.1 * y[:, None], y


def _big_codes():
    rng = np.random.default_rng(2)
    y = np.arange(20_000) % 40
    return np.minimum(rng.poisson(1.0 + y[:, None] / 20, size=(20_000, 100)), 7).astype(
        np.float64), y


def _big_qda():
    rng = np.random.default_rng(3)
    y = np.arange(20_000) % 10
    return rng.normal(size=(20_000, 60)) + 0.2 * y[:, None], y


BIG = {
    "MultinomialNB": (fastgen.MultinomialNB, _big_text),
    "GaussianNB": (fastgen.GaussianNB, _big_gaussian),
    "CategoricalNB": (fastgen.CategoricalNB, _big_codes),
    "QuadraticDiscriminantAnalysis": (fastgen.QuadraticDiscriminantAnalysis, _big_qda),
}
_CACHE = {}


def big_problem(name):
    if name not in _CACHE:
        _CACHE[name] = BIG[name][1]()
    return _CACHE[name]


by_big_model = pytest.mark.parametrize("name", list(BIG))


# ---------------------------------------------------------------------------------------
# (a) one shared model, many threads: the serial answer


@by_big_model
@pytest.mark.parametrize("n_threads", [1, None], ids=["n_threads=1", "n_threads=None"])
def test_shared_model_predict_proba_from_threads_equals_serial(name, n_threads):
    Estimator, _ = BIG[name]
    X, y = big_problem(name)
    model = Estimator(n_threads=n_threads).fit(X, y)
    expected = model.predict_proba(X)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        results = list(pool.map(lambda _: model.predict_proba(X), range(2 * WORKERS)))
    for r in results:
        assert_array_equal(r, expected)


@by_big_model
def test_stale_parameters_derived_under_concurrency(name):
    """A model whose last step was partial_fit is hit by several threads at once (a lazily
    derived model derives its parameters on first use, from whichever thread comes first)."""
    Estimator, _ = BIG[name]
    X, y = big_problem(name)
    half = X.shape[0] // 2
    classes = np.unique(y)

    def build():
        model = Estimator(n_threads=1)
        model.partial_fit(X[:half], y[:half], classes=classes)
        return model.partial_fit(X[half:], y[half:])

    rows = X[:4000]
    expected = build().predict_proba(rows)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for _ in range(3):
            model = build()
            start = threading.Barrier(WORKERS)

            def call(_, model=model, start=start):
                start.wait()
                return model.predict_proba(rows)

            for r in pool.map(call, range(WORKERS)):
                assert_array_equal(r, expected)


# ---------------------------------------------------------------------------------------
# (b) the kernels release the GIL


@pytest.fixture
def fast_gil_handoff():
    """A short switch interval, so that a thread waiting for the GIL gets it soon after it is
    released (the default 5 ms would blur the timings below)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(before)


@by_big_model
def test_concurrent_calls_overlap_in_time(name, fast_gil_handoff):
    """Each worker records (start, end) of its single-threaded predict_proba call; the calls
    released together by a barrier overlap."""
    Estimator, _ = BIG[name]
    X, y = big_problem(name)
    model = Estimator(n_threads=1).fit(X, y)
    model.predict_proba(X[:10])  # derive anything lazy before timing
    start = threading.Barrier(WORKERS)

    def call(_):
        start.wait()
        t0 = time.perf_counter()
        model.predict_proba(X)
        return t0, time.perf_counter()

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        intervals = list(pool.map(call, range(WORKERS)))
    overlaps = [min(e1, e2) - max(s1, s2)
                for i, (s1, e1) in enumerate(intervals) for (s2, e2) in intervals[i + 1:]]
    durations = [e - s for s, e in intervals]
    assert max(overlaps) > 0, (intervals, durations)


def _longest_stall(call):
    """Run ``call`` on this thread while a pure-Python thread appends timestamps as fast as it
    can; return the longest time without a timestamp during the call, as a fraction of the
    call. A call that held the GIL throughout would stall the other thread for ~all of it."""
    ticks = []
    stop = threading.Event()
    running = threading.Event()

    def ticker():
        running.set()
        while not stop.is_set():
            ticks.append(time.perf_counter())

    thread = threading.Thread(target=ticker)
    thread.start()
    running.wait()
    t0 = time.perf_counter()
    call()
    t1 = time.perf_counter()
    stop.set()
    thread.join()
    inside = [t for t in ticks if t0 <= t <= t1]
    gaps = np.diff(np.concatenate([[t0], inside, [t1]]))
    return gaps.max() / (t1 - t0), t1 - t0


def test_stall_detector_sees_a_call_that_holds_the_gil(fast_gil_handoff):
    """The check below is not vacuous: a C call that keeps the GIL (builtin sum over a range)
    stalls the other thread for nearly all of it."""
    stall, _ = _longest_stall(lambda: sum(range(3_000_000)))
    assert stall > 0.8


@by_big_model
def test_python_threads_run_while_a_kernel_runs(name, fast_gil_handoff):
    Estimator, _ = BIG[name]
    X, y = big_problem(name)
    model = Estimator(n_threads=1).fit(X, y)
    model.predict_proba(X[:10])
    # the machine is shared: a stall can also be the scheduler's; the best of a few tries
    attempts = [_longest_stall(lambda: model.predict_proba(X)) for _ in range(4)]
    best, duration = min(attempts)
    assert best < 0.5, (f"{name}.predict_proba ({duration * 1e3:.0f} ms) stalled another Python "
                        f"thread for {best:.0%} of the call: the GIL is held in the kernel; "
                        f"attempts {attempts}")


# ---------------------------------------------------------------------------------------
# (c) n_threads=1 and n_threads=2: bit-identical


def _parallel_cases():
    """(id, factory(n_threads), X, y): every model, with work above PARALLEL_MIN_WORK for
    fitting and scoring."""
    rng = np.random.default_rng(4)
    n = 6000
    y = np.arange(n) % 4
    text, yt = zipf_counts(8000, 4000, n_classes=4, mean_len=40, seed=5)
    assert text.nnz * 4 >= PARALLEL_MIN_WORK and text.nnz >= PARALLEL_MIN_WORK
    gauss = rng.normal(size=(n, 60)) + 0.3 * y[:, None]
    assert gauss.size >= PARALLEL_MIN_WORK
    gauss_nan = gauss.copy()
    gauss_nan[rng.random(gauss.shape) < 0.05] = np.nan
    codes = np.minimum(rng.poisson(1.0 + y[:, None] / 2, size=(n, 60)), 6).astype(np.float64)
    codes_nan = codes.copy()
    codes_nan[rng.random(codes.shape) < 0.05] = np.nan
    counts = rng.poisson(1.0 + y[:, None] / 3, size=(n, 60)).astype(np.float64)
    mixed_types = (["gaussian"] * 15 + ["categorical"] * 15 + ["bernoulli"] * 10
                   + ["poisson"] * 10 + ["multinomial"] * 10)
    mixed = np.column_stack([gauss_nan[:, :15], codes_nan[:, :15], counts[:, :10] > 1,
                             counts[:, 10:20], counts[:, 20:30]])
    mixed[rng.random(mixed.shape) < 0.03] = np.nan
    M = fastgen
    return [
        ("MultinomialNB", lambda t: M.MultinomialNB(n_threads=t), text, yt),
        ("MultinomialNB-dense", lambda t: M.MultinomialNB(n_threads=t), counts, y),
        ("BernoulliNB", lambda t: M.BernoulliNB(n_threads=t), text, yt),
        ("ComplementNB", lambda t: M.ComplementNB(n_threads=t), text, yt),
        ("ComplementNB-norm", lambda t: M.ComplementNB(norm=True, n_threads=t), text, yt),
        ("GaussianNB", lambda t: M.GaussianNB(n_threads=t), gauss, y),
        ("GaussianNB-nan", lambda t: M.GaussianNB(n_threads=t), gauss_nan, y),
        ("PoissonNB", lambda t: M.PoissonNB(n_threads=t), counts, y),
        ("PoissonNB-csr", lambda t: M.PoissonNB(n_threads=t), text, yt),
        ("CategoricalNB", lambda t: M.CategoricalNB(n_threads=t), codes, y),
        ("CategoricalNB-nan", lambda t: M.CategoricalNB(n_threads=t), codes_nan, y),
        ("MixedNB", lambda t: M.MixedNB(mixed_types, n_threads=t), mixed, y),
        ("LDA", lambda t: M.LinearDiscriminantAnalysis(n_threads=t), gauss, y),
        ("LDA-nan", lambda t: M.LinearDiscriminantAnalysis(n_threads=t, max_iter=5),
         gauss_nan, y),
        ("LDA-diagonal-nan", lambda t: M.LinearDiscriminantAnalysis("diagonal", n_threads=t),
         gauss_nan, y),
        ("LDA-auto", lambda t: M.LinearDiscriminantAnalysis(shrinkage="auto", n_threads=t),
         gauss, y),
        ("QDA", lambda t: M.QuadraticDiscriminantAnalysis(n_threads=t), gauss, y),
        ("QDA-nan", lambda t: M.QuadraticDiscriminantAnalysis(n_threads=t, max_iter=5),
         gauss_nan, y),
    ]


PARALLEL_CASES = _parallel_cases()


def _fitted_arrays(est):
    """Every ndarray the model holds (fitted statistics and derived parameters)."""
    out = {}
    for key, value in vars(est).items():
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            out[key] = value
        elif sp.issparse(value):
            out[key] = value.toarray()
    if isinstance(getattr(est, "parts_", None), dict):  # MixedNB: its parts' arrays
        for kind, (_, part) in est.parts_.items():
            out.update({f"{kind}.{k}": v for k, v in _fitted_arrays(part).items()})
    return out


@pytest.mark.filterwarnings("ignore::fastgen.ConvergenceWarning")  # max_iter=5 on purpose
@pytest.mark.parametrize("case", PARALLEL_CASES, ids=[c[0] for c in PARALLEL_CASES])
def test_one_and_two_threads_are_bit_identical(case):
    _, make, X, y = case
    one = make(1).fit(X, y)
    two = make(2).fit(X, y)
    a, b = _fitted_arrays(one), _fitted_arrays(two)
    assert a.keys() == b.keys()
    for key in a:
        assert_array_equal(a[key], b[key], err_msg=f"fitted {key}")
    for method in ("predict_joint_log_proba", "predict_log_proba", "predict_proba", "predict",
                   "decision_function"):
        assert_array_equal(getattr(one, method)(X), getattr(two, method)(X), err_msg=method)
    # the same model scored with either thread count
    assert_array_equal(one.set_params(n_threads=2).predict_log_proba(X),
                       two.set_params(n_threads=1).predict_log_proba(X))


@pytest.mark.parametrize("case", PARALLEL_CASES[:1] + PARALLEL_CASES[5:6] + PARALLEL_CASES[9:10],
                         ids=["MultinomialNB", "GaussianNB", "CategoricalNB"])
def test_partial_fit_one_and_two_threads_are_bit_identical(case):
    _, make, X, y = case
    half = X.shape[0] // 2
    models = []
    for n_threads in (1, 2):
        model = make(n_threads)
        model.partial_fit(X[:half], y[:half], classes=np.unique(y))
        models.append(model.partial_fit(X[half:], y[half:]))
    assert_array_equal(models[0].predict_log_proba(X), models[1].predict_log_proba(X))


@pytest.mark.parametrize("fmt", ["csr", "dense"])
def test_information_gain_one_and_two_threads_are_bit_identical(fmt):
    X, y = PARALLEL_CASES[0][2], PARALLEL_CASES[0][3]
    X = X if fmt == "csr" else X.toarray()
    w = np.random.default_rng(0).random(X.shape[0])
    for weights in (None, w):
        assert_array_equal(fastgen.information_gain(X, y, sample_weight=weights, n_threads=1),
                           fastgen.information_gain(X, y, sample_weight=weights, n_threads=2))


# ---------------------------------------------------------------------------------------
# (d) OpenMP limits from threadpoolctl and OMP_NUM_THREADS


@needs_openmp
def test_threadpool_limits_reach_effective_n_threads():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = fastgen.effective_n_threads(None)
    apis = {info["user_api"] for info in threadpoolctl.threadpool_info()}
    assert "openmp" in apis, f"threadpoolctl does not see fastgen's OpenMP runtime: {apis}"
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert fastgen.effective_n_threads(None) == 1
        assert fastgen.effective_n_threads(-1) == 1
        assert fastgen.effective_n_threads(3) == 3  # an explicit count is the caller's
        # and the models run under the limit with unchanged results
        X, y = PARALLEL_CASES[0][2], PARALLEL_CASES[0][3]
        limited = fastgen.MultinomialNB().fit(X, y).predict_log_proba(X)
    assert fastgen.effective_n_threads(None) == before
    assert_array_equal(limited, fastgen.MultinomialNB().fit(X, y).predict_log_proba(X))


def _effective_n_threads_in_subprocess(env_value, argument="None"):
    env = dict(os.environ)
    env.pop("OMP_THREAD_LIMIT", None)
    if env_value is None:
        env.pop("OMP_NUM_THREADS", None)
    else:
        env["OMP_NUM_THREADS"] = env_value
    proc = subprocess.run(
        [sys.executable, "-c",
         f"import fastgen; print(fastgen.effective_n_threads({argument}))"],
        check=False, capture_output=True, text=True, env=env, timeout=120,
        cwd=os.path.dirname(os.path.dirname(fastgen.__file__)))
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.strip())


@needs_openmp
def test_omp_num_threads_reaches_effective_n_threads():
    assert _effective_n_threads_in_subprocess("1") == 1
    assert _effective_n_threads_in_subprocess("1", "-1") == 1
    assert _effective_n_threads_in_subprocess("3") == 3
    assert _effective_n_threads_in_subprocess("3", "-2") == 2


def test_without_openmp_everything_is_one_thread():
    if fastgen.openmp_enabled():
        pytest.skip("built with OpenMP")
    assert fastgen.effective_n_threads(None) == 1
    assert fastgen.effective_n_threads(8) == 1


def _script_output(script, **environ):
    """The words a Python script prints, run in an interpreter of its own beside the fastgen
    under test (from the checkout's root an unbuilt source tree would shadow an installed one),
    which must succeed."""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=240, env={**os.environ, **environ},
                          cwd=os.path.dirname(os.path.dirname(fastgen.__file__)))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@needs_openmp
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_forked_child_runs_the_kernels_on_one_thread():
    """GNU libgomp's thread pool does not survive a fork: a child of a process whose kernels
    ran two threads hung forever in its first kernel of two threads (an outside attack; as
    multiprocessing's "fork" Pool). A forked child now resolves every n_threads to 1, and
    finishes with the parent's results; the parent keeps its threads."""
    script = (
        "import os, sys, faulthandler, numpy as np, fastgen\n"
        "X = np.random.default_rng(0).normal(size=(20000, 50)); y = np.arange(20000) % 4\n"
        "expected = fastgen.GaussianNB(n_threads=2).fit(X, y).predict_proba(X)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    faulthandler.dump_traceback_later(60, exit=True)\n"
        "    got = fastgen.GaussianNB(n_threads=2).fit(X, y).predict_proba(X)\n"
        "    os._exit(0 if fastgen.effective_n_threads(2) == 1 and np.array_equal(got, expected)"
        " else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print(os.waitstatus_to_exitcode(status), fastgen.effective_n_threads(2))\n")
    assert _script_output(script, OMP_NUM_THREADS="2") == ["0", "2"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_forked_child_frees_the_locks_another_thread_held():
    """A fork while another thread held a model's write lock (a refit in a background thread)
    left it held forever in the child, whose fit and reads of statistics waited for a thread
    that does not exist there. The child now frees it; a model that was counting a batch into
    its statistics in place holds part of it there, and is unfitted, with a warning."""
    script = (
        "import os, threading, warnings, faulthandler, numpy as np, fastgen\n"
        "from sklearn.exceptions import NotFittedError\n"
        "X = np.random.default_rng(0).poisson(1.0, size=(60, 8)); y = np.arange(60) % 3\n"
        "class Slow(fastgen.MultinomialNB):\n"
        "    def _add(self, *args):\n"
        "        inside.set(); leave.wait()\n"
        "        return super()._add(*args)\n"
        "inside, leave, release, holding = (threading.Event() for _ in range(4))\n"
        "leave.set()  # (the first fit goes through)\n"
        "held, counting = fastgen.MultinomialNB().fit(X, y), Slow().fit(X, y)\n"
        "expected = held.predict_proba(X)\n"
        "inside.clear(); leave.clear()\n"
        "def hold():\n"
        "    with held._write_lock():\n"
        "        holding.set(); release.wait()\n"
        "threads = [threading.Thread(target=hold),\n"
        "           threading.Thread(target=counting.partial_fit, args=(X, y))]\n"
        "for t in threads: t.start()\n"
        "inside.wait(); holding.wait()\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    pid = os.fork()\n"
        "if pid == 0:\n"
        "    faulthandler.dump_traceback_later(60, exit=True)\n"
        "    ok = np.array_equal(held.predict_proba(X), expected)\n"
        "    ok &= held.feature_count_.sum() == X.sum()\n"
        "    ok &= held.partial_fit(X, y).feature_count_.sum() == 2 * X.sum()\n"
        "    try:\n"
        "        counting.predict(X); ok = False\n"
        "    except NotFittedError:\n"
        "        pass\n"
        "    ok &= [str(w.message).split(':')[0] for w in caught] == [\n"
        "        'This process was forked while another thread was adding a batch to Slow\\'s'\n"
        "        ' statistics']\n"
        "    leave.set()\n"
        "    ok &= counting.fit(X, y).feature_count_.sum() == X.sum()\n"
        "    os._exit(0 if ok else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "release.set(); leave.set()\n"
        "for t in threads: t.join()\n"
        "print(os.waitstatus_to_exitcode(status), counting.feature_count_.sum() == 2 * X.sum(),\n"
        "      not caught)\n")
    assert _script_output(script) == ["0", "True", "True"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_fork_unfits_every_counting_model_when_warnings_are_errors():
    """With warnings as errors (-W error, pytest's filterwarnings), the child's first warning
    stopped the fork hook: a second model counting in place stayed fitted there with part of
    its batch (an outside attack). Every such model is unfitted before any warning."""
    script = (
        "import os, threading, warnings, faulthandler, numpy as np, fastgen\n"
        "X = np.random.default_rng(0).poisson(1.0, size=(60, 8)); y = np.arange(60) % 3\n"
        "inside = [threading.Event(), threading.Event()]; leave = threading.Event()\n"
        "class Slow(fastgen.MultinomialNB):\n"
        "    def _add(self, *args):\n"
        "        if hasattr(self, 'which'):\n"
        "            inside[self.which].set(); leave.wait()\n"
        "        return super()._add(*args)\n"
        "models = [Slow().fit(X, y), Slow().fit(X, y)]\n"
        "for which, model in enumerate(models):\n"
        "    model.which = which\n"
        "threads = [threading.Thread(target=m.partial_fit, args=(X, y)) for m in models]\n"
        "for t in threads: t.start()\n"
        "for event in inside: event.wait()\n"
        "warnings.simplefilter('error')\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    faulthandler.dump_traceback_later(60, exit=True)\n"
        "    os._exit(0 if not any(hasattr(m, 'classes_') for m in models) else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "leave.set()\n"
        "for t in threads: t.join()\n"
        "print(os.waitstatus_to_exitcode(status))\n")
    assert _script_output(script) == ["0"]


def test_missing_value_blocks_choose_their_threads_by_their_own_work(monkeypatch):
    """EM and scoring with missing values call the Schur kernel once per block of rows and
    class; each call took the thread count of the whole fit, so a block of a few rows opened a
    parallel region, which on a loaded machine costs a time slice per waiting thread: a QDA
    fit of 20,000 x 50 with 5% missing values took 4.3 s beside two busy processes on two cores,
    0.17 s alone. Each call now takes threads for its own work (0.35 s loaded; bench/README)."""
    from fastgen import _gaussian
    from fastgen._core import _missing

    offered, used = [], []
    choose, schur = _gaussian.threads_for, _missing.schur_terms

    def recording_choice(n_threads, work):
        offered.append(n_threads)
        return choose(n_threads, work)

    def recording_schur(*args):
        used.append(args[-1])
        return schur(*args)

    monkeypatch.setattr(_gaussian, "threads_for", recording_choice)
    monkeypatch.setattr(_missing, "schur_terms", recording_schur)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 20))  # enough for the whole fit to take 2 threads
    X[rng.random(X.shape) < 0.05] = np.nan
    y = rng.integers(0, 2, 20000)
    fastgen.QuadraticDiscriminantAnalysis(n_threads=2).fit(X, y).predict_proba(X[:3000])
    assert used and 2 in offered  # the fit offered 2 threads ...
    assert set(used) == {1}  # ... and every block, of a few thousand rows at most, took one
    assert _gaussian.threads_for(2, 4096 * 20 * 20 * 21) == 2  # a large one is not
