"""Compiled kernels of fastgen (private). They trust their input: see fastgen/_validation.py."""
