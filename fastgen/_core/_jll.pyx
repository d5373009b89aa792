# Scoring kernels for the baseline instruction set (the code is in _jll.pxi).
include "_jll.pxi"
include "_jll_gaussian.pxi"

from ._typedefs cimport fastgen_cpu_has_avx2_fma


def cpu_has_avx2_fma():
    """True if this CPU can run the AVX2/FMA builds of the kernels (_jll_avx2, _checks_avx2)."""
    return bool(fastgen_cpu_has_avx2_fma())
