# Scoring kernels built with -mavx2 -mfma (the code is in _jll.pxi); imported only on CPUs that
# _jll.cpu_has_avx2_fma() approves.
include "_jll.pxi"
include "_jll_gaussian.pxi"
