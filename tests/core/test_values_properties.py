"""Property test of the value scan (hypothesis): whatever the length (vector steps and tail),
the dtype, the bound and where the problems sit (lanes of any vector, or the tail), values_status
answers as its definition (tests/_reference.py) does; and every placement of a problem beside an
allowed NaN. Each with the baseline build of the checks and with the AVX2 one where this CPU and
build have it (CHECK_BUILDS). The debug build runs these too."""
import numpy as np
import pytest
from _reference import values_status_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgen._core import builds

# the builds of the checks this CPU runs: the baseline one, and the AVX2 one where it can
CHECK_BUILDS = builds("_checks")
check_builds = pytest.mark.parametrize("checks", CHECK_BUILDS,
                                       ids=lambda m: m.__name__.rsplit(".", 1)[-1])


SPECIALS = [np.nan, np.inf, -np.inf, -1.0, -0.0, 0.0, 1e200, -1e200, 3e38, 1e30]


@check_builds
@settings(max_examples=400, deadline=None)
@given(n=st.integers(0, 80), dtype=st.sampled_from([np.float32, np.float64]),
       places=st.lists(st.tuples(st.integers(0, 79), st.sampled_from(SPECIALS)), max_size=8),
       allow_nan=st.booleans(), allow_negative=st.booleans(),
       max_abs=st.sampled_from([np.inf, 1e150, 5.0, 0.0]), seed=st.integers(0, 2**32 - 1))
def test_values_status_matches_its_definition(checks, n, dtype, places, allow_nan, allow_negative,
                                             max_abs, seed):
    values = np.random.default_rng(seed).uniform(0.0, 4.0, n)
    for position, special in places:
        if position < n:
            values[position] = special
    with np.errstate(over="ignore"):
        values = values.astype(dtype)  # 1e200 becomes inf in float32, as a user's cast would
    expected = values_status_reference(values, allow_nan, allow_negative, max_abs)
    assert checks.values_status(values, allow_nan, allow_negative, max_abs) == expected


@check_builds
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_status_sees_a_problem_beside_an_allowed_nan_everywhere(dtype, checks):
    """Every placement of a problem and an allowed NaN (same lane, same vector, before or after
    each other, in the tail): a NaN must not hide what the running extremes saw."""
    n = 37  # four-vector steps of either dtype and either ISA, and a tail
    for problem in (-1.0, np.inf, -np.inf, 6.0):
        for p in range(n):
            for q in range(n):
                values = np.ones(n, dtype=dtype)
                values[q] = np.nan
                values[p] = problem
                expected = values_status_reference(values, True, False, 5.0)
                assert checks.values_status(values, True, False, 5.0) == expected, \
                    (problem, p, q)
