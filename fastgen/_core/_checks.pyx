# distutils: language = c++
# The input checks for the baseline instruction set (the code is in _checks.pxi).
include "_checks.pxi"
