"""Property test of the value scan (hypothesis): whatever the length (vector steps and tail),
the dtype, the bound and where the problems sit (lanes of any vector, or the tail), values_status
answers as its definition (tests/_reference.py) does; and every placement of a problem beside an
allowed NaN. The debug build runs these too."""
import numpy as np
import pytest
from _reference import values_status_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgen._core import _checks

SPECIALS = [np.nan, np.inf, -np.inf, -1.0, -0.0, 0.0, 1e200, -1e200, 3e38, 1e30]


@settings(max_examples=400, deadline=None)
@given(n=st.integers(0, 40), dtype=st.sampled_from([np.float32, np.float64]),
       places=st.lists(st.tuples(st.integers(0, 39), st.sampled_from(SPECIALS)), max_size=8),
       allow_nan=st.booleans(), allow_negative=st.booleans(),
       max_abs=st.sampled_from([np.inf, 1e150, 5.0, 0.0]), seed=st.integers(0, 2**32 - 1))
def test_values_status_matches_its_definition(n, dtype, places, allow_nan, allow_negative,
                                             max_abs, seed):
    values = np.random.default_rng(seed).uniform(0.0, 4.0, n)
    for position, special in places:
        if position < n:
            values[position] = special
    with np.errstate(over="ignore"):
        values = values.astype(dtype)  # 1e200 becomes inf in float32, as a user's cast would
    expected = values_status_reference(values, allow_nan, allow_negative, max_abs)
    assert _checks.values_status(values, allow_nan, allow_negative, max_abs) == expected


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_status_sees_a_problem_beside_an_allowed_nan_everywhere(dtype):
    """Every placement of a problem and an allowed NaN (same lane, same vector, before or after
    each other, in the tail): a NaN must not hide what the running extremes saw."""
    n = 37  # four-vector steps of either dtype, and a tail
    for problem in (-1.0, np.inf, -np.inf, 6.0):
        for p in range(n):
            for q in range(n):
                values = np.ones(n, dtype=dtype)
                values[q] = np.nan
                values[p] = problem
                expected = values_status_reference(values, True, False, 5.0)
                assert _checks.values_status(values, True, False, 5.0) == expected, (problem, p, q)
