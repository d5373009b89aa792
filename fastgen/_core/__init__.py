"""Compiled kernels of fastgen (private). They trust their input: see fastgen/_validation.py.

``jll`` is the scoring-kernel module for this CPU: the AVX2/FMA build where the CPU has both
(unless ``FASTGEN_DISABLE_AVX2=1``), else the baseline build. Both compute the same sums; only the
last bits can differ, and results never depend on the number of threads. The input checks
(``_checks``) take their AVX2 scans under the same condition; they answer the same either way.
"""
import os

try:
    from . import _jll
except ImportError as exc:  # never a silent pure-Python fallback
    raise ImportError(
        "fastgen's compiled kernels are missing: this is a source tree that was not built. "
        "Build it in place (pip install -e . --no-build-isolation, or python setup.py "
        "build_ext --inplace), or run from another directory to use the installed fastgen."
    ) from exc

from . import _checks  # noqa: E402 (after the check that the kernels were built)

jll = _jll
if _jll.cpu_has_avx2_fma() and os.environ.get("FASTGEN_DISABLE_AVX2", "0") in ("", "0"):
    try:
        from . import _jll_avx2 as jll  # noqa: F401 (re-exported as fastgen._core.jll)
    except ImportError:  # not built: a non-x86 platform or a compiler without -mavx2
        pass
_checks.use_avx2(jll is not _jll)
