"""Shared fixtures for the model-level tests.

* ``ALL_TEXT_NB``: the discrete naive Bayes models of issue 2. Any test that takes an
  argument named ``Estimator`` (and does not parametrize it itself) is run once per
  class, with an id such as ``MultinomialNB``; ``sk_Estimator`` is then its
  scikit-learn counterpart (the test is skipped when scikit-learn is missing).
* ``global_random_seed``: in the style of scikit-learn's fixture of the same name. The
  seed is 42 unless ``FASTGEN_TESTS_GLOBAL_RANDOM_SEED`` is set to an integer, a range
  ``"0-9"`` or ``"all"`` (0-99), in which case the test runs once per seed.
* ``shared_data``: the ``../shared/data`` directory beside the checkout, or a skip.
"""

import os
from pathlib import Path

import pytest

from fastgen import BernoulliNB, ComplementNB, MultinomialNB

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
DATA = SHARED / "data"
NO_DATA_REASON = (
    "../shared/data not found: real-data tests need the shared datasets beside the checkout"
)

ALL_TEXT_NB = [MultinomialNB, BernoulliNB, ComplementNB]
# fastgen class -> name of the scikit-learn class with the same model
SKLEARN_COUNTERPART = {cls: cls.__name__ for cls in ALL_TEXT_NB}


def _seeds():
    spec = os.environ.get("FASTGEN_TESTS_GLOBAL_RANDOM_SEED", "").strip()
    if not spec:
        return [42]
    if spec == "all":
        return list(range(100))
    if "-" in spec:
        lo, hi = (int(s) for s in spec.split("-"))
        return list(range(lo, hi + 1))
    return [int(spec)]


def pytest_generate_tests(metafunc):
    # Direct (not fixture) parametrization, so that Hypothesis tests can use it too.
    if "global_random_seed" in metafunc.fixturenames:
        metafunc.parametrize("global_random_seed", _seeds())
    if "Estimator" in metafunc.fixturenames and not _parametrized(metafunc, "Estimator"):
        metafunc.parametrize(
            "Estimator", ALL_TEXT_NB, ids=[c.__name__ for c in ALL_TEXT_NB]
        )


def _parametrized(metafunc, name):
    for mark in metafunc.definition.iter_markers("parametrize"):
        argnames = mark.args[0]
        if isinstance(argnames, str):
            argnames = [a.strip() for a in argnames.split(",")]
        if name in argnames:
            return True
    return False


def sklearn_counterpart(Estimator):
    """The scikit-learn class that implements the same model (skips without sklearn)."""
    naive_bayes = pytest.importorskip("sklearn.naive_bayes")
    return getattr(naive_bayes, SKLEARN_COUNTERPART[Estimator])


@pytest.fixture
def sk_Estimator(Estimator):
    return sklearn_counterpart(Estimator)


def require_shared_data():
    """Return the shared data directory, or skip the calling test."""
    if not DATA.is_dir():
        pytest.skip(NO_DATA_REASON)
    return DATA


@pytest.fixture(scope="session")
def shared_data():
    return require_shared_data()
