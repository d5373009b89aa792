"""Out-of-core training on a dask.distributed cluster: throughput per worker and peak memory per worker.

The requirement checked here: *a benchmark on a dataset several times larger than one worker's memory
budget: throughput per worker at least 70% of the single-process kernels, peak memory per worker
bounded by the chunk size.*

Cluster (module-scoped, started outside every timing): ``distributed.LocalCluster`` on loopback with
``N_WORKERS`` = 2 (or, for the ``-1worker`` contenders, 1) worker processes of one thread each and a
memory budget (``memory_limit``) of
``BUDGET`` = 768 MiB per worker; dask's default spill / pause / terminate thresholds (70% / 80% / 95%
of the budget) apply.  Everything else is dask's default configuration (graph optimisation, root-task
queuing with ``worker-saturation`` 1.1, ...), except the worker environment of some contenders (below).

Data: generated lazily, block by block, where it is used.  Block ``i`` is a deterministic function of
``i`` (``numpy.random.default_rng([SEED, i, stream])``): ``ROWS_PER_BLOCK`` = 250,000 rows, int64
labels ``0 .. 4`` (a task of their own, cheap) and features (a task taking the labels, so both, and
the partition's fit, run on the same worker):

* ``gaussian``: 50 float64 features, uniform noise plus a per-class mean vector: 95.4 MiB per block;
* ``multinomial``: CSR counts (int32 indices, float64 values 1..3) over 4,096 columns, 32 distinct
  words per row (one in each band of 128 columns; in the first 8 bands a word of the row's class),
  canonical format: 92.5 MiB per block.

``--bench-size=large`` (default): ``N_BLOCKS["large"]`` = 48 blocks, 12 million rows, 4.5 GiB
(gaussian) / 4.3 GiB (multinomial): about 6x one worker's budget and 3x the whole cluster's.
``small``: 16 blocks (1.5 / 1.4 GiB, 2x one worker's budget).  The dataset never exists in full anywhere.

Groups are ``{model}/fit/dask-{rows}x{features}``.  Every contender does the same work: generate every
block and count it with fastgen's Cython kernels, one thread per process (``n_threads=1``; in the test
process the BLAS/OpenMP pools are pinned to one thread by ``conftest.py``'s autouse fixture, on the
workers by dask's ``OMP_NUM_THREADS=1`` etc.):

* ``single-process``: the reference kernels, in the test process: for each block ``i``, generate
  ``(X_i, y_i)``, then ``est.partial_fit(X_i, y_i, classes=...)``.
* ``dask-fit``: ``fastgen.<Model>(n_threads=1).fit(dX, dy)``, ``dX`` / ``dy`` dask arrays with one chunk
  per block (``da.from_delayed`` per block, ``da.concatenate``; CSR chunks for multinomial).  fastgen
  fits each partition on the workers, with the classes that partition sees, and merges the
  per-partition models in a tree reduction (``fastgen/_dask.py``): one pass.
* ``dask-partial_fit``: ``fastgen.<Model>(n_threads=1).partial_fit(dX, dy, classes=...)``: the classes
  given, as in the single-process loop.
* ``dask-fit-1worker``, ``dask-partial_fit-1worker``: the same on a cluster of one worker.  With two
  workers on this two-core machine, the scheduler and the client (the test process) take their CPU
  time from the workers' cores; with one worker they have a core of their own, as a scheduler does
  on a real cluster, and the per-worker throughput is what a worker of a larger cluster gets.
* ``dask-fit-daskenv``: ``dask-fit`` with dask's default worker environment.  The other dask contenders
  unset ``MALLOC_TRIM_THRESHOLD_`` (``distributed.nanny.pre-spawn-environ``, which dask sets to 65536
  for its workers), so that the workers' allocator behaves as in the test process; setting it
  disables glibc's adaptive mmap threshold, so that every temporary of 128 KiB or more becomes a
  fresh ``mmap`` and is page-faulted in on every call.  This contender measures what that costs.

Timing: ``benchmark.pedantic``, ``ROUNDS`` rounds of one call each, after an untimed warm-up (one block
in the test process; a ``WARMUP_BLOCKS``-block fit on the cluster, which also imports fastgen on the
workers).  Building the dask graph and the cluster start-up are not timed.

``extra_info`` (scalars only; from the median round and, ``*_best``, from the fastest):

* ``n_rows``, ``n_blocks``, ``rows_per_block``, ``chunk_mib``, ``data_gib``, ``budget_mib``,
  ``data_over_budget`` (dataset size / one worker's budget), ``n_workers``, ``worker_env``;
* ``rows_per_s`` and ``mb_per_s`` (MB = 10**6 bytes of the in-memory blocks), and for the dask
  contenders ``rows_per_s_per_worker``;
* ``per_worker_vs_single`` (and ``_best``): dask rows/s per worker / single-process rows/s, when the
  single-process contender ran in the same session; the target is ``TARGET_RATIO`` = 0.7
  (``meets_target``).  Recorded, not asserted: it is a timing, and ``loadavg_1min`` says how busy the
  machine was (for the dask contenders it counts their own two workers).
* single process: ``generation_share`` (the fraction of the time spent generating the data, from an
  untimed generation-only pass over ``N_GEN_PROBE`` blocks) and ``kernel_rows_per_s`` (the kernels'
  throughput alone);
* dask: each worker's peak resident set size over the timed rounds (``VmHWM`` of
  ``/proc/self/status`` in the worker process, reset after the warm-up through
  ``/proc/self/clear_refs``; not ``ru_maxrss``, see ``_worker_memory``): ``peak_rss_mib_w0``,
  ``peak_rss_mib_w1``, ``peak_rss_mib_max``; ``baseline_rss_mib``, the largest worker RSS of the
  freshly started cluster after a tiny fit (interpreter, numpy, scipy, dask, distributed, fastgen);
  ``idle_rss_mib_max``, the largest worker RSS just before the timed rounds (it also holds what the
  earlier benchmarks on the same cluster left in the allocator); ``peak_over_baseline_in_chunks``
  ((peak - baseline) / chunk size) and ``memory_bound_mib``.  Linux only (``peak_rss_measured``);
  elsewhere the memory check is left out.

Checks (untimed):

* every dask-fitted model equals the single-process one (GaussianNB: ``class_count_``, ``theta_``,
  ``var_``, ``epsilon_``; MultinomialNB: ``class_count_``, ``feature_count_``, ``feature_log_prob_``;
  rtol = 1e-9): only the order of the floating-point sums differs.  When the single-process
  contender was deselected, its model is computed for the check;
* each worker's peak RSS stays below its budget and below ``baseline RSS + PEAK_CHUNKS x chunk size``
  (see ``PEAK_CHUNKS``).  This is a property of the design (a worker holds the partitions it is
  working on, never the dataset; only the small per-partition models travel), not a speed assertion.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
import scipy
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

_INSTALL = "pip install 'fastgen[dask]'"
da = pytest.importorskip("dask.array", reason=f"dask[array] is not installed ({_INSTALL})")
distributed = pytest.importorskip("distributed", reason=f"dask.distributed is not installed ({_INSTALL})")
import cloudpickle
import dask

import fastgen

# The block generators run on the workers too, whose sys.path need not contain bench/: ship this
# module's functions by value rather than by reference.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

MiB = 2**20

N_WORKERS = 2
BUDGET = 768 * MiB  #: memory_limit of each worker
SEED = 20_261_123
ROWS_PER_BLOCK = 250_000
N_BLOCKS = {"large": 48, "small": 16}
N_CLASSES = 5
CLASSES = np.arange(N_CLASSES)

ROUNDS = 3  #: pedantic rounds per contender (one call each)
WARMUP_BLOCKS = 4
TARGET_RATIO = 0.7
N_GEN_PROBE = 8  #: blocks generated (untimed) to estimate the single-process generation share
RTOL = 1e-9

#: Bound on a worker's peak RSS above the baseline RSS of a fresh worker, in chunks.  A worker with one
#: thread runs one task at a time, and the fit of a partition only reads the block (C-contiguous
#: float64 and canonical CSR pass validation without a copy) and allocates a few MiB.  What can be
#: alive at once:
#: * the block being generated;
#: * one finished block whose fit has not started: with root-task queuing (worker-saturation 1.1) a
#:   worker is given ceil(1.1 x 1) = 2 root tasks at a time, so it may generate block j before the fit
#:   of block i runs;
#: * one more finished block whose fit waits for a partition held by the other worker: fastgen takes
#:   X's and y's partitions unoptimised (a label task the two share is computed once) and bypasses
#:   the alias tasks between them and the tasks that make them (``fastgen/_dask.py``), so a fit
#:   takes the label and feature tasks' results directly; the scheduler usually runs it where they
#:   are, but may place it (work stealing) on the other worker, which then receives them.
#: * slack: temporaries, and what the allocator keeps (freed blocks are unmapped, but smaller freed
#:   memory stays in the process, also from the benchmarks run earlier on the same cluster).
#: Anything that gathered partitions (a concatenate, a shuffle) would exceed it at once: the data are
#: 4.5 GiB.
PEAK_CHUNKS = 4

#: Worker environments (``distributed.nanny.pre-spawn-environ`` overrides): "glibc" unsets
#: MALLOC_TRIM_THRESHOLD_, so the workers' malloc behaves like the test process's; "dask" keeps dask's
#: defaults (MALLOC_TRIM_THRESHOLD_=65536).
WORKER_ENVS = {
    "glibc": {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None},
    "dask": {},
}


# --------------------------------------------------------------------------------------------------
# deterministic block generators (run in the test process and on the workers)


def _rng(i: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([SEED, i, stream])


def block_labels(i: int) -> np.ndarray:
    """Labels of block ``i``: int64 in ``0 .. N_CLASSES - 1``."""
    return _rng(i, 0).integers(0, N_CLASSES, ROWS_PER_BLOCK)


GAUSSIAN_FEATURES = 50
_SLAB = 8_192  # rows per slab when adding the class means (a 3 MiB temporary)


def gaussian_block(i: int, y: np.ndarray) -> np.ndarray:
    """Features of block ``i`` (labels ``y``) for GaussianNB: float64, C-contiguous, uniform noise
    plus the mean vector of each row's class."""
    means = np.random.default_rng(SEED).normal(0.0, 1.0, (N_CLASSES, GAUSSIAN_FEATURES))
    X = _rng(i, 1).random((ROWS_PER_BLOCK, GAUSSIAN_FEATURES))
    buf = np.empty((_SLAB, GAUSSIAN_FEATURES))  # one temporary, reused for every slab
    for s in range(0, ROWS_PER_BLOCK, _SLAB):
        rows = X[s:s + _SLAB]
        m = buf[:rows.shape[0]]
        np.take(means, y[s:s + _SLAB], axis=0, out=m, mode="wrap")  # "raise" would buffer
        rows += m
    return X


MULTINOMIAL_FEATURES = 4_096
_WORDS_PER_ROW = 32
_BAND = MULTINOMIAL_FEATURES // _WORDS_PER_ROW  # 128 columns per band
_CLASS_BANDS = 8  # the first 8 bands: words of the row's class


def multinomial_block(i: int, y: np.ndarray) -> sp.csr_matrix:
    """Features of block ``i`` (labels ``y``) for MultinomialNB: CSR counts in canonical format
    (sorted, distinct indices), 32 words per row, one in each band of 128 columns; in the first 8
    bands the word is drawn from the 1/N_CLASSES of the band that belongs to the row's class."""
    rng = _rng(i, 1)
    n, k = ROWS_PER_BLOCK, _WORDS_PER_ROW
    offset = rng.integers(0, _BAND, (n, k), dtype=np.int32)
    per_class = _BAND // N_CLASSES
    offset[:, :_CLASS_BANDS] %= per_class
    offset[:, :_CLASS_BANDS] += (y * per_class).astype(np.int32)[:, None]
    offset += np.arange(0, MULTINOMIAL_FEATURES, _BAND, dtype=np.int32)
    data = rng.integers(1, 4, n * k, dtype=np.int8).astype(np.float64)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int32)
    X = sp.csr_matrix((data, offset.reshape(-1), indptr), shape=(n, MULTINOMIAL_FEATURES))
    X.has_sorted_indices = True  # true by construction; spares the checks
    X.has_canonical_format = True
    return X


def _nbytes(X) -> int:
    if sp.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


# --------------------------------------------------------------------------------------------------
# models and contenders


@dataclass(frozen=True)
class Case:
    model: str  # benchmark model key, as in conftest.MODELS
    estimator: Callable[[], object]
    features: Callable[[int, np.ndarray], object]  # (block index, its labels) -> X_i
    n_features: int
    meta: object  # an empty chunk of X's type, for da.from_delayed
    check_attrs: tuple[str, ...]


CASES = {
    "gaussian": Case("gaussian", lambda: fastgen.GaussianNB(n_threads=1), gaussian_block,
                     GAUSSIAN_FEATURES, np.empty((0, 0)),
                     ("class_count_", "theta_", "var_", "epsilon_")),
    "multinomial": Case("multinomial", lambda: fastgen.MultinomialNB(n_threads=1), multinomial_block,
                        MULTINOMIAL_FEATURES, sp.csr_matrix((0, 0)),
                        ("class_count_", "feature_count_", "feature_log_prob_")),
}


@dataclass(frozen=True)
class Contender:
    name: str
    method: str | None  # None: the single-process loop; else the estimator method given dX, dy
    env: str | None  # a WORKER_ENVS key (dask contenders)
    n_workers: int = N_WORKERS


SINGLE = Contender("single-process", None, None, 1)
CONTENDERS = (SINGLE, Contender("dask-fit", "fit", "glibc"),
              Contender("dask-partial_fit", "partial_fit", "glibc"),
              Contender("dask-fit-1worker", "fit", "glibc", 1),
              Contender("dask-partial_fit-1worker", "partial_fit", "glibc", 1),
              Contender("dask-fit-daskenv", "fit", "dask"))

_CHUNK_BYTES: dict[str, int] = {}  #: model -> bytes of one block (block 0)
#: (model, contender name) -> (fitted model, median seconds, best seconds)
_RESULTS: dict[tuple[str, str], tuple[object, float | None, float | None]] = {}


def chunk_bytes(case: Case) -> int:
    if case.model not in _CHUNK_BYTES:
        _CHUNK_BYTES[case.model] = _nbytes(case.features(0, block_labels(0)))
    return _CHUNK_BYTES[case.model]


def dataset_name(case: Case, n_blocks: int) -> str:
    return f"dask-{n_blocks * ROWS_PER_BLOCK // 1_000_000}Mx{case.n_features}"


def pytest_generate_tests(metafunc):
    """(model, contender) parameters with their groups ``{model}/fit/dask-{rows}x{features}``.  Sorted
    by worker environment and cluster size, so that each cluster is started once."""
    if "case_contender" not in metafunc.fixturenames:
        return
    n_blocks = N_BLOCKS[metafunc.config.getoption("--bench-size")]
    params = []
    for env, n_workers in ((None, 1), ("glibc", N_WORKERS), ("glibc", 1), ("dask", N_WORKERS)):
        for model, case in CASES.items():
            group = f"{model}/fit/{dataset_name(case, n_blocks)}"
            params += [pytest.param((case, c), id=f"{c.name}-{model}",
                                    marks=pytest.mark.benchmark(group=group))
                       for c in CONTENDERS if (c.env, c.n_workers) == (env, n_workers)]
    metafunc.parametrize("case_contender", params)


# --------------------------------------------------------------------------------------------------
# the cluster (started outside every timing)


class Clusters:
    """One LocalCluster at a time, for the worker environment and number of workers asked for
    (started on first use, replaced when another is asked for, closed with the module)."""

    def __init__(self):
        self.env = self.cluster = self.client = None
        self.baseline = None  #: the largest worker RSS of the fresh cluster, after a tiny fit

    def client_for(self, env: str, n_workers: int):
        if (env, n_workers) != self.env:
            self.close()
            with dask.config.set(WORKER_ENVS[env]):  # read by the nannies when they start
                self.cluster = distributed.LocalCluster(
                    n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                    dashboard_address=None, memory_limit=BUDGET)
            self.client = distributed.Client(self.cluster)
            self.env = (env, n_workers)
            self.client.wait_for_workers(n_workers, timeout=120)
            self.client.run(_worker_env)  # imports fastgen on the workers
            tiny = da.ones((400, 3), chunks=100)
            fastgen.GaussianNB().fit(tiny, da.arange(400, chunks=100) % 2)  # and everything a fit needs
            rss = [m[1] for m in self.client.run(_worker_memory).values() if m is not None]
            self.baseline = max(rss) if rss else None
        self.client.wait_for_workers(n_workers, timeout=120)
        return self.client

    def close(self):
        if self.client is not None:
            self.client.close()
            self.cluster.close()
        self.env = self.cluster = self.client = self.baseline = None


@pytest.fixture(scope="module")
def clusters():
    pool = Clusters()
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def n_blocks(bench_size) -> int:
    return N_BLOCKS[bench_size]


def _worker_memory():
    """(peak RSS since the last reset, current RSS) of this worker process in bytes, from
    ``/proc/self/status`` (``VmHWM``, ``VmRSS``); None where there is no procfs.

    Not ``getrusage(RUSAGE_SELF).ru_maxrss``: a spawned worker is forked from the process that starts
    it (here the test process) before it execs, and Linux carries the larger of the two peaks over
    the exec, so ru_maxrss reports the spawner's RSS at fork time whenever that is larger."""
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if line.startswith(("VmHWM", "VmRSS")))
    except OSError:
        return None
    return tuple(int(fields[k].split()[0]) * 1024 for k in ("VmHWM", "VmRSS"))


def _worker_reset_peak():
    """Reset this process's peak RSS (``VmHWM``) to its current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def _worker_env():
    import fastgen  # noqa: F401  (imported before the warm-up)

    return os.environ.get("MALLOC_TRIM_THRESHOLD_")


# --------------------------------------------------------------------------------------------------
# what is timed


def fit_single_process(case: Case, n_blocks: int):
    est = case.estimator()
    for i in range(n_blocks):
        y = block_labels(i)
        est.partial_fit(case.features(i, y), y, classes=CLASSES)
    return est


def dask_dataset(case: Case, n_blocks: int):
    """``(dX, dy)``: dask arrays with one chunk per block; nothing is computed.  Block i's feature task
    takes its label task's result, so the two (and the partition's fit) run on the same worker."""
    X_blocks, y_blocks = [], []
    for i in range(n_blocks):
        y = dask.delayed(block_labels, pure=True)(i)
        X_blocks.append(da.from_delayed(dask.delayed(case.features, pure=True)(i, y),
                                        shape=(ROWS_PER_BLOCK, case.n_features), dtype=np.float64,
                                        meta=case.meta))
        y_blocks.append(da.from_delayed(y, shape=(ROWS_PER_BLOCK,), dtype=np.int64))
    return da.concatenate(X_blocks, axis=0), da.concatenate(y_blocks, axis=0)


def fit_dask(case: Case, method: str, dX, dy):
    est = case.estimator()
    if method == "fit":
        return est.fit(dX, dy)
    return est.partial_fit(dX, dy, classes=CLASSES)


# --------------------------------------------------------------------------------------------------
# helpers


def _times(benchmark) -> tuple[float | None, float | None]:
    stats = getattr(getattr(benchmark, "stats", None), "stats", None)  # None under --benchmark-disable
    return (stats.median, stats.min) if stats is not None else (None, None)


def _per_s(amount: float, seconds: float | None) -> float | None:
    return round(amount / seconds, 1) if seconds else None


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _common_info(case: Case, contender: Contender, n_blocks: int, bench_size: str) -> dict:
    cb = chunk_bytes(case)
    return {
        "contender": f"fastgen-{contender.name}",
        "n_threads": 1,
        "n_workers": contender.n_workers,
        "worker_env": contender.env,
        "dataset": dataset_name(case, n_blocks),
        "bench_size": bench_size,
        "sparse": sp.issparse(case.meta),
        "n_rows": n_blocks * ROWS_PER_BLOCK,
        "n_features": case.n_features,
        "n_blocks": n_blocks,
        "rows_per_block": ROWS_PER_BLOCK,
        "chunk_mib": round(cb / MiB, 1),
        "data_gib": round(n_blocks * cb / 2**30, 2),
        "budget_mib": BUDGET // MiB,
        "data_over_budget": round(n_blocks * cb / BUDGET, 1),
        "fastgen_version": fastgen.__version__,
        "dask_version": dask.__version__,
        "distributed_version": distributed.__version__,
        "numpy_version": np.__version__,
        "scipy_version": scipy.__version__,
        "python_version": platform.python_version(),
        "loadavg_1min": _loadavg(),  # other processes distort timings, above all with 2 workers on 2 CPUs
    }


def _record_times(info: dict, n_rows: int, n_bytes: int, median, best, n_workers: int | None):
    for suffix, seconds in (("", median), ("_best", best)):
        info[f"rows_per_s{suffix}"] = _per_s(n_rows, seconds)
        info[f"mb_per_s{suffix}"] = _per_s(n_bytes / 1e6, seconds)
        if n_workers:  # the dask contenders
            info[f"rows_per_s_per_worker{suffix}"] = _per_s(n_rows / n_workers, seconds)


def _record_ratio(info: dict, model: str, contender: Contender):
    """``per_worker_vs_single``: dask rows/s per worker over single-process rows/s."""
    single, ours = _RESULTS.get((model, SINGLE.name)), _RESULTS.get((model, contender.name))
    if single is None or ours is None:
        return
    for suffix, k in (("", 1), ("_best", 2)):
        if single[k] and ours[k]:
            info[f"per_worker_vs_single{suffix}"] = round(
                single[k] / (ours[k] * contender.n_workers), 3)
    if "per_worker_vs_single" in info:
        info["target_ratio"] = TARGET_RATIO
        info["meets_target"] = info["per_worker_vs_single"] >= TARGET_RATIO


def _assert_same_model(got, ref, case: Case, what: str):
    assert type(got) is type(ref)
    assert_array_equal(got.classes_, ref.classes_)
    for name in case.check_attrs:
        assert_allclose(getattr(got, name), getattr(ref, name), rtol=RTOL, atol=0,
                        err_msg=f"{case.model}: {name} of {what} differs from the single-process fit")


def _report(info: dict, name: str):
    """One line per benchmark (visible with ``-s``)."""
    keys = ("rows_per_s", "rows_per_s_per_worker", "per_worker_vs_single", "generation_share",
            "kernel_rows_per_s", "baseline_rss_mib", "idle_rss_mib_max", "peak_rss_mib_w0",
            "peak_rss_mib_w1", "peak_over_baseline_in_chunks", "memory_bound_mib", "loadavg_1min")
    print(f"\n[{name}] {info['n_rows']:,} rows, {info['data_gib']} GiB, chunk {info['chunk_mib']} MiB, "
          f"budget {info['budget_mib']} MiB: "
          + ", ".join(f"{k}={info[k]:,}" for k in keys if info.get(k) is not None))


# --------------------------------------------------------------------------------------------------
# the benchmark


def test_fit(benchmark, request, case_contender, n_blocks, bench_size):
    case, contender = case_contender
    n_rows = n_blocks * ROWS_PER_BLOCK
    n_bytes = n_blocks * chunk_bytes(case)
    info = benchmark.extra_info
    info.update(_common_info(case, contender, n_blocks, bench_size))

    if contender is SINGLE:
        # untimed: a warm-up block, and the generation-only time of N_GEN_PROBE blocks
        case.estimator().partial_fit(case.features(0, block_labels(0)), block_labels(0),
                                     classes=CLASSES)
        t0 = time.perf_counter()
        for i in range(N_GEN_PROBE):
            case.features(i, block_labels(i))
        gen_s = (time.perf_counter() - t0) / N_GEN_PROBE * n_blocks

        est = benchmark.pedantic(fit_single_process, args=(case, n_blocks), rounds=ROUNDS,
                                 iterations=1, warmup_rounds=0)

        median, best = _times(benchmark)
        _RESULTS[(case.model, contender.name)] = (est, median, best)
        _record_times(info, n_rows, n_bytes, median, best, None)
        if best:
            info["generation_s_estimate"] = round(gen_s, 3)
            info["generation_share"] = round(min(gen_s / best, 1.0), 3)
            if best > gen_s:
                info["kernel_rows_per_s"] = _per_s(n_rows, best - gen_s)
        _report(info, request.node.callspec.id)
        return

    # ---- dask (the peak RSS of the workers is reset after the warm-up: it covers the timed rounds)
    clusters = request.getfixturevalue("clusters")
    client = clusters.client_for(contender.env, contender.n_workers)
    envs = client.run(_worker_env)
    assert all((v is None) == (contender.env == "glibc") for v in envs.values()), envs
    dX, dy = dask_dataset(case, n_blocks)
    fit_dask(case, contender.method, dX[:WARMUP_BLOCKS * ROWS_PER_BLOCK],
             dy[:WARMUP_BLOCKS * ROWS_PER_BLOCK])  # untimed warm-up
    client.run(_worker_reset_peak)
    idle = client.run(_worker_memory)
    assert len(idle) == contender.n_workers

    est = benchmark.pedantic(fit_dask, args=(case, contender.method, dX, dy), rounds=ROUNDS,
                             iterations=1, warmup_rounds=0)

    after = client.run(_worker_memory)
    assert set(after) == set(idle), "a worker was restarted during the benchmark (memory limit?)"
    median, best = _times(benchmark)
    _RESULTS[(case.model, contender.name)] = (est, median, best)
    _record_times(info, n_rows, n_bytes, median, best, contender.n_workers)

    # peak memory per worker (over the timed rounds)
    cb = chunk_bytes(case)
    measured = clusters.baseline is not None and all(
        v is not None for v in (*idle.values(), *after.values()))
    if measured:
        base = clusters.baseline
        idle_rss = max(rss for _, rss in idle.values())
        peaks = [after[w][0] for w in sorted(after)]
        bound = min(BUDGET, base + PEAK_CHUNKS * cb)
        for k, peak in enumerate(peaks):
            info[f"peak_rss_mib_w{k}"] = round(peak / MiB, 1)
        info["peak_rss_mib_max"] = round(max(peaks) / MiB, 1)
        info["baseline_rss_mib"] = round(base / MiB, 1)
        info["idle_rss_mib_max"] = round(idle_rss / MiB, 1)
        info["peak_over_baseline_in_chunks"] = round((max(peaks) - base) / cb, 2)
        info["memory_bound_mib"] = round(bound / MiB, 1)
    _record_ratio(info, case.model, contender)
    _report(info, request.node.callspec.id)

    # correctness: the same model as the single-process kernels
    reference = _RESULTS.get((case.model, SINGLE.name))
    ref_est = reference[0] if reference is not None else fit_single_process(case, n_blocks)
    _assert_same_model(est, ref_est, case, contender.name)

    info["peak_rss_measured"] = measured
    if not measured:  # no procfs: nothing to check the bound against
        return
    for k, peak in enumerate(peaks):
        assert peak < BUDGET, (f"worker {k}: peak RSS {peak / MiB:.0f} MiB exceeds its budget "
                               f"{BUDGET / MiB:.0f} MiB")
        assert peak <= bound, (f"worker {k}: peak RSS {peak / MiB:.0f} MiB > baseline {base / MiB:.0f} "
                               f"MiB + {PEAK_CHUNKS} chunks of {cb / MiB:.1f} MiB")
