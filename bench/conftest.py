"""pytest configuration for the fastgen benchmarks (pytest-benchmark; fastgen and scikit-learn in one run).

Run from the repository root::

    pytest bench --benchmark-only --benchmark-group-by=group --benchmark-json=bench.json
    python bench/summarize.py bench.json

``pytest`` without arguments never runs these (``testpaths = ["tests"]`` in pyproject.toml).

Contenders follow python-rapidjson's benchmark ``Contender`` registry: fastgen always, scikit-learn when
importable.  ``pytest_generate_tests`` parametrizes every test that asks for ``contender`` (and
``n_threads``) with ``fastgen-1t``, ``fastgen-2t`` and ``sklearn-1t``: scikit-learn's naive Bayes is
single-threaded, so it is only run (and labelled) with one thread, its BLAS/OpenMP pools pinned to one
thread with threadpoolctl.

Tests marked ``@pytest.mark.threaded_blas`` (the Gaussian-family benchmarks, whose scikit-learn
implementations spend their time in BLAS) instead run every contender with every ``--bench-threads``
value (``sklearn-2t`` too), and pin the BLAS pools of both libraries to that thread count.
"""

from __future__ import annotations

import importlib
import itertools
import os
import platform
import sys
import time
from collections import namedtuple
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pytest
import scipy

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpus  # noqa: E402
import _dense  # noqa: E402

Contender = namedtuple("Contender", "name module")

#: How a benchmark model key maps to the two libraries: the fastgen class name (an attribute of
#: ``fastgen``), the scikit-learn class as ``module:Class``, and the keyword arguments that make the
#: scikit-learn estimator compute the same model.
ModelSpec = namedtuple("ModelSpec", "fastgen sklearn sklearn_params", defaults=(None,))

#: model key (used in benchmark group names) -> :class:`ModelSpec`
MODELS = {
    "multinomial": ModelSpec("MultinomialNB", "sklearn.naive_bayes:MultinomialNB"),
    "bernoulli": ModelSpec("BernoulliNB", "sklearn.naive_bayes:BernoulliNB"),
    "complement": ModelSpec("ComplementNB", "sklearn.naive_bayes:ComplementNB"),
    "gaussian": ModelSpec("GaussianNB", "sklearn.naive_bayes:GaussianNB"),
    # sklearn's default "svd" solver never forms the covariance; "lsqr" computes the same model as
    # fastgen's covariance="full" (pooled ML covariance, posteriors equal to ~1e-6)
    "lda": ModelSpec("LinearDiscriminantAnalysis",
                     "sklearn.discriminant_analysis:LinearDiscriminantAnalysis", {"solver": "lsqr"}),
    # the same model when scikit-learn divides the class scatter by n (1.9 does; older releases: n - 1)
    "qda": ModelSpec("QuadraticDiscriminantAnalysis",
                     "sklearn.discriminant_analysis:QuadraticDiscriminantAnalysis"),
    "categorical": ModelSpec("CategoricalNB", "sklearn.naive_bayes:CategoricalNB"),
}
DATASETS = ("ng20-synth", "ng20-real", "sms")

Reference = namedtuple("Reference", "estimator log_proba")


# --------------------------------------------------------------------------------------------------
# options and the contender registry


def pytest_addoption(parser):
    group = parser.getgroup("fastgen benchmarks")
    group.addoption(
        "--bench-size",
        choices=("small", "large"),
        default="large",
        help="corpus size: 'large' = 20 Newsgroups shape (11,314 + 7,532 docs, 130k words), "
        "'small' = 2,000 + 1,000 docs, 20k words (default: large)",
    )
    group.addoption(
        "--bench-contenders",
        default="fastgen,sklearn",
        help="comma-separated contenders to run (default: fastgen,sklearn; sklearn is skipped "
        "silently when it is not importable)",
    )
    group.addoption(
        "--bench-threads",
        default="1,2",
        help="comma-separated n_threads values for fastgen (default: 1,2)",
    )


def _build_registry(config) -> list[Contender]:
    wanted = [s.strip() for s in config.getoption("--bench-contenders").split(",") if s.strip()]
    unknown = set(wanted) - {"fastgen", "sklearn"}
    if unknown:
        raise pytest.UsageError(f"--bench-contenders: unknown contender(s) {sorted(unknown)}")
    contenders = []
    if "fastgen" in wanted:
        try:
            import fastgen
        except ImportError as exc:
            raise pytest.UsageError(
                f"cannot import fastgen ({exc}); build it first (pip install -e . "
                "--no-build-isolation) or run with --bench-contenders=sklearn"
            ) from exc
        contenders.append(Contender("fastgen", fastgen))
    if "sklearn" in wanted:
        try:
            import sklearn.naive_bayes
        except ImportError:
            pass
        else:
            contenders.append(Contender("sklearn", sklearn.naive_bayes))
    if not contenders:
        raise pytest.UsageError("no benchmark contender available")
    return contenders


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "threaded_blas: run scikit-learn with every --bench-threads value too, and pin the BLAS pools "
        "of every contender to that thread count (threadpoolctl)",
    )
    config._fastgen_contenders = _build_registry(config)
    try:
        threads = tuple(int(t) for t in config.getoption("--bench-threads").split(","))
    except ValueError as exc:
        raise pytest.UsageError(f"--bench-threads: {exc}") from exc
    config._fastgen_threads = threads


def pytest_generate_tests(metafunc):
    if "contender" not in metafunc.fixturenames:
        return
    config = metafunc.config
    if "n_threads" in metafunc.fixturenames:
        threaded_blas = metafunc.definition.get_closest_marker("threaded_blas") is not None
        params = []
        for c in config._fastgen_contenders:
            # scikit-learn's naive Bayes is single-threaded: one combination, labelled 1t.  Under
            # threaded_blas its BLAS pools follow n_threads, so it gets every thread count.
            for t in config._fastgen_threads if c.name == "fastgen" or threaded_blas else (1,):
                params.append(pytest.param(c, t, id=f"{c.name}-{t}t"))
        metafunc.parametrize(("contender", "n_threads"), params)
    else:
        metafunc.parametrize(
            "contender", config._fastgen_contenders, ids=[c.name for c in config._fastgen_contenders]
        )


def pytest_report_header(config):
    names = ", ".join(f"{c.name} {_version(c.name)}" for c in config._fastgen_contenders)
    return (
        f"fastgen bench: size={config.getoption('--bench-size')}, contenders: {names}, "
        f"fastgen threads: {config._fastgen_threads}, openmp_enabled={_openmp_enabled()}"
    )


# --------------------------------------------------------------------------------------------------
# helpers shared by the benchmark modules


def _version(name: str) -> str | None:
    try:
        return importlib.import_module(name).__version__
    except Exception:  # not installed / no __version__
        return None


def _openmp_enabled() -> bool | None:
    try:
        from fastgen._core._openmp import openmp_enabled
    except Exception:
        return None
    return bool(openmp_enabled())


def sklearn_class(model: str):
    """scikit-learn's class for ``model`` (ImportError without scikit-learn)."""
    module, name = MODELS[model].sklearn.split(":")
    return getattr(importlib.import_module(module), name)


def make_estimator(contender: Contender, model: str, n_threads: int, **params):
    """A fresh, unfitted estimator of ``contender`` for ``model`` (for scikit-learn, with the
    ``sklearn_params`` of its :class:`ModelSpec` unless overridden)."""
    spec = MODELS[model]
    if contender.name == "fastgen":
        cls = getattr(contender.module, spec.fastgen)
        params["n_threads"] = n_threads
    else:
        cls = sklearn_class(model)
        params = {**(spec.sklearn_params or {}), **params}
    return cls(**params)


def blas_threads(request, n_threads: int) -> int:
    """The BLAS thread limit ``_pin_threads`` sets for this test."""
    return int(n_threads) if request.node.get_closest_marker("threaded_blas") else 1


def record_extra_info(benchmark, contender, n_threads, X, dataset, request, **more):
    """Fill ``benchmark.extra_info`` with scalars only (the JSON hook strips anything else)."""
    info = benchmark.extra_info
    frame = hasattr(X, "columns")  # a pandas DataFrame: its columns' dtypes
    info.update(
        contender=contender.name,
        n_threads=int(n_threads),
        dataset=dataset,
        bench_size=request.config.getoption("--bench-size"),
        dtype=",".join(sorted({str(d) for d in X.dtypes})) if frame else str(X.dtype),
        index_dtype=str(X.indices.dtype) if hasattr(X, "indices") else None,
        n_samples=int(X.shape[0]),
        n_features=int(X.shape[1]),
        nnz=int(X.nnz) if hasattr(X, "nnz") else None if frame else int(np.count_nonzero(X)),
        n_missing=None if hasattr(X, "nnz") else int(X.isna().to_numpy().sum()) if frame
        else int(np.count_nonzero(np.isnan(X))),
        openmp_enabled=_openmp_enabled() if contender.name == "fastgen" else None,
        blas_threads=blas_threads(request, n_threads),
        fastgen_version=_version("fastgen"),
        sklearn_version=_version("sklearn"),
        numpy_version=np.__version__,
        scipy_version=scipy.__version__,
        python_version=platform.python_version(),
        # other processes on the machine distort timings, above all with 2 threads
        loadavg_1min=_loadavg(),
    )
    info.update(more)


# Single-row latency: rows cycled through, and the rounds chosen for about a second per benchmark.
N_LATENCY_ROWS = 256
LATENCY_BUDGET_S = 1.0
LATENCY_ROUNDS = (200, 5_000)  # min, max rounds


def bench_single_rows(benchmark, est, X):
    """Time ``est.predict_proba`` on one row at a time (rows of X cycled through, after a
    warm-up; the number of rounds from a quick estimate of one call). Returns the row numbers
    used, the rows, and the number of rounds."""
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(X.shape[0], size=min(N_LATENCY_ROWS, X.shape[0]), replace=False))
    rows = [X[i:i + 1] for i in idx]
    for r in rows[:5]:
        est.predict_proba(r)
    t0 = time.perf_counter()
    for r in rows[:10]:
        est.predict_proba(r)
    per_call = (time.perf_counter() - t0) / 10
    rounds = int(np.clip(LATENCY_BUDGET_S / max(per_call, 1e-9), *LATENCY_ROUNDS))
    cycle = itertools.cycle(rows)

    def setup():
        return (next(cycle),), {}

    benchmark.pedantic(est.predict_proba, setup=setup, rounds=rounds, warmup_rounds=10)
    return idx, rows, rounds


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # not available on Windows
        return None


# --------------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture
def new_estimator(contender, n_threads):
    """``new_estimator(model, **params)``: a fresh estimator of this test's contender/n_threads."""

    def new(model: str, **params):
        return make_estimator(contender, model, n_threads, **params)

    return new


@pytest.fixture
def record_info(benchmark, contender, n_threads, request):
    """``record_info(X, dataset, **more)``: fill ``benchmark.extra_info`` for this test."""

    def record(X, dataset: str, **more):
        record_extra_info(benchmark, contender, n_threads, X, dataset, request, **more)

    return record


@pytest.fixture(scope="session")
def bench_size(request) -> str:
    return request.config.getoption("--bench-size")


@pytest.fixture(scope="session")
def corpora(bench_size):
    """``corpora(name) -> _corpus.TextCorpus``, built once per session (never timed).

    The real corpora skip with a reason when ``../shared/data`` is absent.
    """
    cache: dict[str, object] = {}

    def load(name: str):
        if name not in cache:
            try:
                cache[name] = _load(name, bench_size)
            except _Missing as exc:
                cache[name] = exc
        value = cache[name]
        if isinstance(value, _Missing):
            pytest.skip(str(value))
        return value

    return load


class _Missing(Exception):
    pass


def _load(name: str, size: str):
    if name == "ng20-synth":
        return _corpus.make_synthetic_corpus(**_corpus.SIZES[size], name=name)
    data = _corpus.shared_data_dir()
    if name == "ng20-real":
        path = data / "newsgroups20" / "20news-bydate-train.jsonl.gz"
        if not path.exists():
            raise _Missing(f"20 Newsgroups data not found at {path.parent} (../shared/data is absent)")
        _require_sklearn("ng20-real is vectorised with sklearn's CountVectorizer")
        return _corpus.load_newsgroups20(data, subset=None if size == "large" else _corpus.NG20_SMALL)
    if name == "sms":  # shipped with fastgen: no ../shared needed
        _require_sklearn("sms is vectorised with sklearn's CountVectorizer")
        return _corpus.load_sms_spam()
    raise ValueError(f"unknown dataset {name!r}")


def _require_sklearn(why: str):
    try:
        import sklearn.feature_extraction.text  # noqa: F401
    except ImportError:
        raise _Missing(f"scikit-learn is not installed ({why})") from None


@pytest.fixture(scope="session")
def references(corpora):
    """``references(model, dataset) -> Reference | None``: scikit-learn's fitted estimator and its
    ``predict_log_proba`` on the test set, computed once per (model, dataset); None without sklearn."""
    cache: dict[tuple[str, str], Reference | None] = {}

    def get(model: str, dataset: str):
        key = (model, dataset)
        if key not in cache:
            try:
                cls = sklearn_class(model)
            except ImportError:
                cache[key] = None
            else:
                from threadpoolctl import threadpool_limits

                corpus = corpora(dataset)
                with threadpool_limits(limits=1):
                    est = cls(**(MODELS[model].sklearn_params or {})).fit(corpus.X_train, corpus.y_train)
                    cache[key] = Reference(est, est.predict_log_proba(corpus.X_test))
        return cache[key]

    return get


@pytest.fixture(scope="session")
def dense_data(bench_size) -> _dense.DenseData:
    """The dense Gaussian blobs of the Gaussian-family benchmarks (``bench/_dense.py``): train and
    test sets of 200,000 x 50 (``--bench-size=small``: 20,000 x 50), 5 classes, built once."""
    return _dense.make_gaussian_blobs(_dense.SIZES[bench_size])


@pytest.fixture(scope="session")
def dense_references(dense_data):
    """``dense_references(model) -> Reference | None``: scikit-learn's estimator fitted on
    ``dense_data.X_train`` (with the model's ``sklearn_params``) and its ``predict_log_proba`` on
    ``dense_data.X_test``, computed once per model (one BLAS thread); None without scikit-learn."""
    cache: dict[str, Reference | None] = {}

    def get(model: str):
        if model not in cache:
            try:
                cls = sklearn_class(model)
            except ImportError:
                cache[model] = None
            else:
                from threadpoolctl import threadpool_limits

                with threadpool_limits(limits=1):
                    est = cls(**(MODELS[model].sklearn_params or {}))
                    est.fit(dense_data.X_train, dense_data.y_train)
                    cache[model] = Reference(est, est.predict_log_proba(dense_data.X_test))
        return cache[model]

    return get


@pytest.fixture(scope="session")
def first_fastgen_result():
    """Results of the first fastgen run per key, to check that other n_threads are bit-identical."""
    return {}


@pytest.fixture(autouse=True)
def _pin_threads(request):
    """Pin BLAS pools to one thread for every benchmark (threadpoolctl); for scikit-learn also its
    OpenMP pools.  fastgen's own OpenMP threads are set by its ``n_threads`` argument.

    Under ``@pytest.mark.threaded_blas`` the limit is the test's ``n_threads`` instead of one, for
    both contenders (fastgen's OpenMP pool is still left to its ``n_threads`` argument)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    callspec = getattr(request.node, "callspec", None)
    contender = callspec.params.get("contender") if callspec else None
    n_threads = callspec.params.get("n_threads", 1) if callspec else 1
    limit = blas_threads(request, n_threads)
    with ExitStack() as stack:
        if contender is not None and contender.name == "fastgen":
            stack.enter_context(threadpool_limits(limits=limit, user_api="blas"))
        else:
            stack.enter_context(threadpool_limits(limits=limit))
        yield


# --------------------------------------------------------------------------------------------------
# JSON output


def _is_scalar(v) -> bool:
    return v is None or isinstance(v, (str, bool, int, float))


def pytest_benchmark_update_json(config, benchmarks, output_json):
    """Keep the JSON small: drop the raw timings (``stats.data``; the latency groups run thousands of
    rounds) and anything that is not a scalar from params and extra_info (arrays, estimators); the
    ``contender`` parameter is replaced by its name."""
    for bench in output_json["benchmarks"]:
        bench.get("stats", {}).pop("data", None)
        params = bench.get("params") or {}
        for key, value in list(params.items()):
            if isinstance(value, Contender):
                params[key] = value.name
            elif isinstance(value, np.generic):
                params[key] = value.item()
            elif not _is_scalar(value):
                params.pop(key)
        extra = bench.get("extra_info") or {}
        for key, value in list(extra.items()):
            if isinstance(value, np.generic):
                extra[key] = value.item()
            elif not _is_scalar(value):
                extra.pop(key)
    output_json["fastgen_bench"] = {
        "bench_size": config.getoption("--bench-size"),
        "contenders": [c.name for c in config._fastgen_contenders],
        "fastgen_threads": list(config._fastgen_threads),
        "openmp_enabled": _openmp_enabled(),
        "cpu_count": os.cpu_count(),
        "loadavg_1min_at_end": _loadavg(),
        "versions": {
            "fastgen": _version("fastgen"),
            "sklearn": _version("sklearn"),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
        },
    }
