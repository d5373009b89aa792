# Design: the one place that knows whether the kernels were built with OpenMP and how many threads
# a public ``n_threads`` parameter means. Policy (None = all cores, negative counts back) is here so
# that every estimator resolves it the same way.
import numbers
import os

import numpy as np

from ._openmp cimport FASTGEN_OPENMP, omp_get_max_threads


def openmp_enabled():
    """Return True if the kernels were compiled with OpenMP support."""
    return bool(FASTGEN_OPENMP)


def max_threads():
    """Threads OpenMP would use by default (honours OMP_NUM_THREADS); 1 without OpenMP."""
    return omp_get_max_threads() if FASTGEN_OPENMP else 1


def effective_n_threads(n_threads):
    """Resolve a public ``n_threads`` value to a positive thread count.

    None means all available threads (``OMP_NUM_THREADS`` if set), a negative value counts back from
    that (-1 is all, -2 all but one), and the result is 1 when built without OpenMP. An explicit
    count is honoured up to four threads per core (or OpenMP's default, if larger) and clamped
    there: asking for 10,000 threads must not make the OpenMP runtime abort the process when it
    cannot create them.
    """
    if n_threads is not None:  # (NumPy's ints too: scikit-learn's grids are made of them)
        if isinstance(n_threads, (bool, np.bool_)) or not isinstance(n_threads, numbers.Integral):
            raise TypeError(f"n_threads must be None or an int, got {n_threads!r}")
        n_threads = int(n_threads)
    if n_threads == 0:
        raise ValueError("n_threads == 0 is invalid; use None for all cores or a positive count")
    if not FASTGEN_OPENMP:
        return 1
    cdef int max_n = omp_get_max_threads()
    if n_threads is None:
        return max_n
    if n_threads < 0:
        return max(1, max_n + 1 + n_threads)
    return min(n_threads, max(max_n, 4 * (os.cpu_count() or 1)))
