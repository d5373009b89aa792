"""Property test of the value scan (hypothesis): whatever the length (vector steps and tail),
the dtype, the bound and where the problems sit (lanes of any vector, or the tail), values_status
answers as its definition (tests/_reference.py) does; and every placement of a problem beside an
allowed NaN. Each with the baseline scans and with their AVX2 twins where this CPU and build
have them (checks_isa). The debug build runs these too."""
from contextlib import contextmanager

import numpy as np
import pytest
from _reference import values_status_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgen._core import _checks

# the scans of _checks: the baseline ones, or their AVX2 twins
CHECK_ISAS = ["baseline", "avx2"]


@contextmanager
def checks_isa(isa):
    """Run the block with the checks' scans of isa (skipping where this CPU or build lacks it),
    then restore the choice fastgen._core made at import."""
    before = _checks.use_avx2(isa == "avx2")
    try:
        if _checks.use_avx2(isa == "avx2") != (isa == "avx2"):  # the second call tells the state
            pytest.skip("this CPU or build has no AVX2 scans")
        yield
    finally:
        _checks.use_avx2(before)


SPECIALS = [np.nan, np.inf, -np.inf, -1.0, -0.0, 0.0, 1e200, -1e200, 3e38, 1e30]


@pytest.mark.parametrize("isa", CHECK_ISAS)
@settings(max_examples=400, deadline=None)
@given(n=st.integers(0, 80), dtype=st.sampled_from([np.float32, np.float64]),
       places=st.lists(st.tuples(st.integers(0, 79), st.sampled_from(SPECIALS)), max_size=8),
       allow_nan=st.booleans(), allow_negative=st.booleans(),
       max_abs=st.sampled_from([np.inf, 1e150, 5.0, 0.0]), seed=st.integers(0, 2**32 - 1))
def test_values_status_matches_its_definition(isa, n, dtype, places, allow_nan, allow_negative,
                                             max_abs, seed):
    values = np.random.default_rng(seed).uniform(0.0, 4.0, n)
    for position, special in places:
        if position < n:
            values[position] = special
    with np.errstate(over="ignore"):
        values = values.astype(dtype)  # 1e200 becomes inf in float32, as a user's cast would
    expected = values_status_reference(values, allow_nan, allow_negative, max_abs)
    with checks_isa(isa):
        assert _checks.values_status(values, allow_nan, allow_negative, max_abs) == expected


@pytest.mark.parametrize("isa", CHECK_ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_status_sees_a_problem_beside_an_allowed_nan_everywhere(dtype, isa):
    """Every placement of a problem and an allowed NaN (same lane, same vector, before or after
    each other, in the tail): a NaN must not hide what the running extremes saw."""
    n = 37  # four-vector steps of either dtype and either ISA, and a tail
    with checks_isa(isa):
        for problem in (-1.0, np.inf, -np.inf, 6.0):
            for p in range(n):
                for q in range(n):
                    values = np.ones(n, dtype=dtype)
                    values[q] = np.nan
                    values[p] = problem
                    expected = values_status_reference(values, True, False, 5.0)
                    assert _checks.values_status(values, True, False, 5.0) == expected, \
                        (problem, p, q)
