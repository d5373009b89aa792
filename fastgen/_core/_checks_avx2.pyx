# distutils: language = c++
# The input checks built with -mavx2 -mfma (the code is in _checks.pxi); imported only on CPUs
# that _jll.cpu_has_avx2_fma() approves.
include "_checks.pxi"
