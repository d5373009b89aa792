"""What users migrating from scikit-learn rely on beyond the numbers: partial_fit's ``classes``
is accepted or refused as scikit-learn does it.

scikit-learn 1.9's decisions and messages are taken from the installed library itself, for
every case of each table. Its GaussianNB serves as the reference for partial_fit: it applies
all of scikit-learn's checks of ``classes`` and of y against it.
"""

import re

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import fastgen

sk_nb = pytest.importorskip("sklearn.naive_bayes")

# scikit-learn's own check of NaN labels casts them to int first
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast")

ALL_MODELS = [fastgen.MultinomialNB, fastgen.BernoulliNB, fastgen.ComplementNB,
              fastgen.CategoricalNB, fastgen.GaussianNB, fastgen.PoissonNB,
              fastgen.LinearDiscriminantAnalysis, fastgen.QuadraticDiscriminantAnalysis,
              fastgen.MixedNB, fastgen.BaselineClassifier]
MODEL_IDS = [m.__name__ for m in ALL_MODELS]

# small counts (valid for every model: category codes, counts, and well-conditioned
# per-class covariances), six rows of each of the labels 0 and 1
X_SMALL = np.array([[0, 1], [1, 3], [2, 0], [3, 2], [1, 1], [4, 3],
                    [2, 4], [0, 2], [3, 3], [1, 0], [4, 1], [2, 2]], dtype=float)
Y_SMALL = np.array([0, 1] * 6)


def outcome(Model, calls):
    """("ok", classes_) or ("error", the message) of a sequence of partial_fit calls, each
    given as (y, classes)."""
    model = Model()
    try:
        for y, classes in calls:
            model.partial_fit(X_SMALL, y, classes=classes)
    except (ValueError, TypeError) as exc:
        return "error", str(exc)
    return "ok", model.classes_


def assert_same_decision(Model, calls, key):
    """fastgen decides as scikit-learn's GaussianNB; a refusal's message starts with
    scikit-learn's, or both match the regular expression ``key``."""
    want, got = outcome(sk_nb.GaussianNB, calls), outcome(Model, calls)
    assert got[0] == want[0], (got, want)
    if want[0] == "ok":
        assert_array_equal(got[1], want[1])
    elif key is None:
        assert got[1].startswith(want[1]), (got[1], want[1])
    else:
        assert re.search(key, want[1]), want[1]
        assert re.search(key, got[1]), got[1]


Y_OUTSIDE = np.where(np.arange(12) == 5, 2, Y_SMALL)

# (calls, key): key None means fastgen's message starts with scikit-learn's
CLASSES_CASES = {
    "repeated": ([(Y_SMALL, [0, 1, 1])], None),
    "unsorted": ([(Y_SMALL, [1, 0])], None),
    "array": ([(Y_SMALL, np.array([1, 0, 1]))], None),
    "tuple": ([(Y_SMALL, (0, 1))], None),
    "repeated later": ([(Y_SMALL, [0, 1]), (Y_SMALL, [0, 1, 1])], None),
    "unsorted later": ([(Y_SMALL, [0, 1]), (Y_SMALL, [1, 0])], None),
    "omitted later": ([(Y_SMALL, [0, 1]), (Y_SMALL, None)], None),
    "as floats later": ([(Y_SMALL, [0, 1]), (Y_SMALL, [0.0, 1.0])], None),
    "missing first": ([(Y_SMALL, None)], None),
    "more later": ([(Y_SMALL, [0, 1]), (Y_SMALL, [0, 1, 2])], None),
    "fewer later": ([(Y_SMALL, [0, 1, 2]), (Y_SMALL, [0, 1])], None),
    "y outside": ([(Y_OUTSIDE, [0, 1])], None),
    "y outside later": ([(Y_SMALL, [0, 1]), (Y_OUTSIDE, None)], None),
    "strings and numbers": ([(Y_SMALL, ["a", 1])], None),
    "continuous": ([(Y_SMALL, [0, 0.5, 1])], "^Unknown label type"),
    "NaN": ([(Y_SMALL, [0, 1, np.nan])], "contains NaN"),
    "infinity": ([(Y_SMALL, [0, 1, np.inf])], "contains infinity"),
    "a number": ([(Y_SMALL, 1)], None),
    "a string": ([(Y_SMALL, "01")], None),
    "a set": ([(Y_SMALL, {0, 1})], None),
}


@pytest.mark.parametrize("case", list(CLASSES_CASES))
@pytest.mark.parametrize("Model", ALL_MODELS, ids=MODEL_IDS)
def test_partial_fit_classes_decided_as_sklearn(Model, case):
    calls, key = CLASSES_CASES[case]
    assert_same_decision(Model, calls, key)


@pytest.mark.parametrize("Model", ALL_MODELS, ids=MODEL_IDS)
def test_partial_fit_classes_where_fastgen_differs(Model):
    # a 2-D array is refused (scikit-learn reads a 0/1 one as a label indicator matrix)
    kind, message = outcome(Model, [(Y_SMALL, [[0, 1], [1, 0]])])
    assert kind == "error" and message.startswith("classes must be a 1-D array-like")
    kind, message = outcome(Model, [(Y_SMALL, [])])  # (scikit-learn fails later, unclearly)
    assert kind == "error" and message == "classes must name at least one class."
    # object labels are labels, as in fit
    kind, classes = outcome(Model, [(Y_SMALL, np.array([1, 0], dtype=object))])
    assert kind == "ok" and classes.tolist() == [0, 1]
