# Design: the one place that knows whether the kernels were built with OpenMP and how many threads
# a public ``n_threads`` parameter means. Policy (None = all cores, negative counts back) is here so
# that every estimator resolves it the same way.
import numbers
import operator
import os

import numpy as np

from ._openmp cimport FASTGEN_OPENMP, omp_get_max_threads


# A forked process runs the kernels on one thread: GNU libgomp's thread pool does not survive a
# fork, and a child of a process whose kernels ran threads waits forever for the threads of a
# team of two (multiprocessing's "fork" start method; "spawn" and "forkserver" start clean
# processes, which use every thread again).
_forked = False

# The machine's CPUs, read once: os.cpu_count() costs about 5 us here, as much as scoring a row.
_CPU_COUNT = os.cpu_count() or 1


def _after_fork_in_child():
    global _forked
    _forked = True


if FASTGEN_OPENMP and hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def openmp_enabled():
    """Return True if the kernels were compiled with OpenMP support."""
    return bool(FASTGEN_OPENMP)


def max_threads():
    """Threads OpenMP would use by default (honours OMP_NUM_THREADS); 1 without OpenMP."""
    return omp_get_max_threads() if FASTGEN_OPENMP else 1


def effective_n_threads(n_threads):
    """Resolve a public ``n_threads`` value to a positive thread count.

    None means all available threads (``OMP_NUM_THREADS`` if set), a negative value counts back from
    that (-1 is all, -2 all but one), and the result is 1 when built without OpenMP or in a forked
    process (``_forked``). An explicit count is honoured up to four threads per core (or
    OpenMP's default, if larger) and clamped there: asking for 10,000 threads must not make the
    OpenMP runtime abort the process when it cannot create them.
    """
    if n_threads is not None:  # (NumPy's ints too: scikit-learn's grids are made of them)
        if isinstance(n_threads, (bool, np.bool_)) or not isinstance(n_threads, numbers.Integral):
            raise TypeError(f"n_threads must be None or an int, got {n_threads!r}")
        n_threads = int.__int__(operator.index(n_threads))  # (not a subclass's own __int__)
    if n_threads == 0:
        raise ValueError("n_threads == 0 is invalid; use None for all cores or a positive count")
    if not FASTGEN_OPENMP or _forked:
        return 1
    cdef int max_n = omp_get_max_threads()
    if n_threads is None:
        return max_n
    if n_threads < 0:
        return max(1, max_n + 1 + n_threads)
    return min(n_threads, max(max_n, 4 * _CPU_COUNT))
