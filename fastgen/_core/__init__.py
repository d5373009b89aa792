"""Compiled kernels of fastgen (private). They trust their input: see fastgen/_validation.py.

The modules whose loops gain from wider vectors, the scoring kernels (``_jll``) and the input
checks (``_checks``), are built twice from one source (``_jll.pxi``, ``_checks.pxi``): for the
baseline instruction set and, on x86-64, with ``-mavx2 -mfma`` (``_jll_avx2``, ``_checks_avx2``).
That is the one way the kernels are fitted to the CPU: ``jll`` and ``checks`` below are the AVX2
builds where the CPU has AVX2 and FMA (unless ``FASTGEN_DISABLE_AVX2=1``), else the baseline
ones. Both builds compute the same sums (only the last bits of a score can differ) and the checks
answer the same; results never depend on the number of threads.
"""
import importlib
import os

try:
    from . import _jll
except ImportError as exc:  # never a silent pure-Python fallback
    raise ImportError(
        "fastgen's compiled kernels are missing: this is a source tree that was not built. "
        "Build it in place (pip install -e . --no-build-isolation, or python setup.py "
        "build_ext --inplace), or run from another directory to use the installed fastgen."
    ) from exc


def builds(name):
    """The builds of the twin module ``name`` ("_jll" or "_checks") that this CPU can run, the
    baseline one first."""
    found = [importlib.import_module(f"{__name__}.{name}")]
    if _jll.cpu_has_avx2_fma():
        try:
            found.append(importlib.import_module(f"{__name__}.{name}_avx2"))
        except ImportError:  # not built: a non-x86 platform or a compiler without -mavx2
            pass
    return found


_AVX2 = os.environ.get("FASTGEN_DISABLE_AVX2", "0") in ("", "0")
jll = builds("_jll")[-1 if _AVX2 else 0]
checks = builds("_checks")[-1 if _AVX2 else 0]
