"""What users migrating from scikit-learn rely on beyond the numbers: partial_fit's ``classes``
is accepted or refused as scikit-learn does it, and the fitted attributes have the dtypes of
one documented rule (``fastgen/_state.py``), which agrees with scikit-learn's where its
models keep their parameters in X's dtype.

scikit-learn 1.9's decisions, messages and dtypes are taken from the installed library
itself, for every case of each table. Its GaussianNB serves as the reference for
partial_fit: it applies all of scikit-learn's checks of ``classes`` and of y against it.
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


# ---------------------------------------------------------------------------------------
# dtypes of the fitted attributes: parameters in the model's dtype (that of X: float32 or
# float64, integer X counting as float64; MixedNB is always float64), statistics float64

STATISTICS = {"class_count_", "feature_count_", "feature_all_", "observed_count_",
              "category_count_", "n_categories_"}
# float64 in every model (fastgen/_state.py: the exceptions to the rule)
FLOAT64_PARAMETERS = {"alpha_", "prior_strength_", "log_evidence_"}
TEXT_PARAMETERS = {"class_log_prior_", "feature_log_prob_"}
EVIDENCE = {"alpha_", "log_evidence_"}
GAUSSIAN_EVIDENCE = {"prior_strength_", "log_evidence_"}
PARAMETERS = {
    fastgen.MultinomialNB: TEXT_PARAMETERS | EVIDENCE,
    fastgen.BernoulliNB: TEXT_PARAMETERS | EVIDENCE, fastgen.ComplementNB: TEXT_PARAMETERS,
    fastgen.CategoricalNB: TEXT_PARAMETERS | EVIDENCE,
    fastgen.GaussianNB: {"class_prior_", "theta_", "var_", "epsilon_", "prior_strength_",
                         "log_evidence_"},
    fastgen.PoissonNB: {"class_log_prior_", "lambda_"} | EVIDENCE,
    fastgen.LinearDiscriminantAnalysis: {"means_", "priors_", "covariance_", "coef_",
                                         "intercept_", "scalings_", "xbar_",
                                         "explained_variance_ratio_"} | GAUSSIAN_EVIDENCE,
    fastgen.QuadraticDiscriminantAnalysis: {"means_", "priors_", "covariance_"}
    | GAUSSIAN_EVIDENCE,
    fastgen.MixedNB: {"class_prior_", "log_evidence_"},
    fastgen.BaselineClassifier: {"class_prior_"},
}


def counts_data(n_per_class=30, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n_per_class)
    X = rng.poisson(1.0 + np.arange(n_features) + 2 * y[:, None]).astype(float)
    return X, y


def numeric_attributes(model):
    """The fitted attributes holding float arrays (or lists of them) or floats, by name."""
    found = {}
    for name in dir(model):
        if name.endswith("_") and not name.startswith("_") and name != "classes_":
            value = getattr(model, name, None)
            if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
                found[name] = value
            elif isinstance(value, (np.ndarray, float, np.floating)):
                found[name] = value
    return found


def assert_dtype_rule(model, dtype):
    """Parameters in ``dtype`` (but FLOAT64_PARAMETERS), statistics float64 (n_categories_
    intp), nothing else."""
    attributes = numeric_attributes(model)
    assert set(attributes) == PARAMETERS[type(model)] | (STATISTICS & set(attributes))
    for name, value in attributes.items():
        want = np.intp if name == "n_categories_" else (
            np.float64 if name in STATISTICS | FLOAT64_PARAMETERS else dtype)
        for part in value if isinstance(value, list) else [value]:
            assert np.asarray(part).dtype == want, (name, np.asarray(part).dtype, want)


def model_dtype(Model, X_dtype):
    if Model is fastgen.MixedNB or X_dtype != np.float32:
        return np.float64
    return np.float32


@pytest.mark.parametrize("X_dtype", [np.float32, np.float64, np.int64],
                         ids=["float32", "float64", "int64"])
@pytest.mark.parametrize("Model", ALL_MODELS, ids=MODEL_IDS)
def test_fitted_attribute_dtypes(Model, X_dtype, tmp_path):
    X, y = counts_data()
    want = model_dtype(Model, X_dtype)
    model = Model().fit(X.astype(X_dtype), y)
    assert_dtype_rule(model, want)
    assert model.predict_proba(X[:3]).dtype == want
    # the first batch decides; a later batch of another dtype is cast to it
    streamed = Model().partial_fit(X[::2].astype(X_dtype), y[::2], classes=[0, 1, 2])
    streamed.partial_fit(X[1::2], y[1::2])
    assert_dtype_rule(streamed, want)
    model.save(tmp_path / "model.fg")
    assert_dtype_rule(fastgen.load(tmp_path / "model.fg"), want)


@pytest.mark.parametrize("Model", [m for m in ALL_MODELS if m is not fastgen.MixedNB],
                         ids=[m.__name__ for m in ALL_MODELS if m is not fastgen.MixedNB])
def test_float32_attributes_are_the_float64_ones_rounded(Model):
    """A float32 model derives from the same float64 statistics as a float64 model fitted on
    the same values: its parameters are those rounded, and only they are."""
    X, y = counts_data()
    X32 = X.astype(np.float32)
    m32, m64 = Model().fit(X32, y), Model().fit(X32.astype(np.float64), y)
    for name, value in numeric_attributes(m64).items():
        for got, full in zip(*(v if isinstance(v, list) else [v]
                               for v in (getattr(m32, name), value))):
            want = full if name in STATISTICS | FLOAT64_PARAMETERS else \
                np.asarray(full).astype(np.float32)
            assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("X_dtype", [np.float32, np.float64, np.int64],
                         ids=["float32", "float64", "int64"])
@pytest.mark.parametrize("name", ["GaussianNB", "LinearDiscriminantAnalysis"])
def test_parameter_dtypes_as_sklearn(name, X_dtype):
    """Where scikit-learn 1.9 keeps a model's parameters in X's dtype, so does fastgen."""
    sk_da = pytest.importorskip("sklearn.discriminant_analysis")
    X, y = counts_data()
    X = X.astype(X_dtype)
    sk = getattr(sk_nb, name, None) or getattr(sk_da, name)
    fg, sk = getattr(fastgen, name)().fit(X, y), sk().fit(X, y)
    shared = PARAMETERS[type(fg)] & set(numeric_attributes(sk))
    assert len(shared) >= 4
    for attribute in shared:
        assert getattr(fg, attribute).dtype == getattr(sk, attribute).dtype, attribute


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("X_dtype", [np.float32, np.float64, np.int64],
                         ids=["float32", "float64", "int64"])
def test_lda_outputs_in_the_model_dtype(X_dtype, n_classes):
    """decision_function and transform give the model's dtype, as scikit-learn's LDA does
    (and as fastgen's own predict methods do), with or without missing values."""
    sk_da = pytest.importorskip("sklearn.discriminant_analysis")
    X, y = counts_data()
    X, y = X[y < n_classes].astype(X_dtype), y[y < n_classes]
    fg = fastgen.LinearDiscriminantAnalysis().fit(X, y)
    sk = sk_da.LinearDiscriminantAnalysis().fit(X, y)
    holes = X.astype(np.float32 if X_dtype == np.float32 else np.float64)
    holes[0, 1] = np.nan
    for method in ("decision_function", "transform"):
        want = getattr(sk, method)(X).dtype
        assert getattr(fg, method)(X).dtype == want, method
        assert getattr(fg, method)(holes).dtype == want, method


# ---------------------------------------------------------------------------------------
# error messages: where fastgen refuses for the same reason as scikit-learn, its message
# starts with scikit-learn's (then fastgen's details), or both match the key phrase where
# fastgen states another range or scikit-learn's message goes on differently; the exception
# is of every built-in class scikit-learn's is (``pytest.raises(TypeError)`` still holds)

X4 = np.array([[1, 2, 0, 1], [2, 1, 1, 0], [0, 3, 1, 1], [3, 0, 0, 2],
               [2, 2, 1, 3], [1, 0, 3, 2], [0, 1, 2, 3], [3, 1, 2, 0]], dtype=float)
Y4 = np.array([0, 1] * 4)


def with_value(row, col, value):
    X = X4.copy()
    X[row, col] = value
    return X


ACTIONS = {
    "fit": lambda m: m.fit(X4, Y4),
    "fit -X": lambda m: m.fit(-X4, Y4),
    "fit NaN": lambda m: m.fit(with_value(0, 0, np.nan), Y4),
    "fit inf": lambda m: m.fit(with_value(0, 0, np.inf), Y4),
    "fit 0 samples": lambda m: m.fit(X4[:0], Y4[:0]),
    "fit 0 features": lambda m: m.fit(X4[:, :0], Y4),
    "fit 1-D": lambda m: m.fit(X4[0], Y4[:1]),
    "fit 3-D": lambda m: m.fit(X4[:, :, None], Y4),
    "fit strings": lambda m: m.fit(X4.astype(str), Y4),
    "fit complex": lambda m: m.fit(X4 + 1j, Y4),
    "fit sparse": lambda m: m.fit(__import__("scipy.sparse").sparse.csr_matrix(X4), Y4),
    "fit one class": lambda m: m.fit(X4, np.zeros(8, int)),
    "fit singular": lambda m: m.fit(np.c_[X4, X4[:, :1]][:6], Y4[:6]),
    "y short": lambda m: m.fit(X4, Y4[:7]),
    "y continuous": lambda m: m.fit(X4, Y4 + 0.5),
    "y NaN": lambda m: m.fit(X4, np.where(Y4 == 0, np.nan, 1.0)),
    "y 2-D": lambda m: m.fit(X4, np.c_[Y4, Y4]),
    "y None": lambda m: m.fit(X4, None),
    "weights short": lambda m: m.fit(X4, Y4, sample_weight=np.ones(7)),
    "weights 2-D": lambda m: m.fit(X4, Y4, sample_weight=np.ones((1, 8))),
    "weights zero": lambda m: m.fit(X4, Y4, sample_weight=np.zeros(8)),
    "weights NaN": lambda m: m.fit(X4, Y4, sample_weight=np.r_[np.nan, np.ones(7)]),
    "predict 3 features": lambda m: m.fit(X4, Y4).predict(X4[:, :3]),
    "predict unfitted": lambda m: m.predict(X4),
}


def _range_of(model, parameter):
    return rf"^The '{parameter}' parameter of {model} must be a float in the range \[0\.0, "


# (model, parameters, action, key): key None means fastgen's message starts with
# scikit-learn's; otherwise both match the regular expression key
MESSAGE_CASES = [
    ("MultinomialNB", {"alpha": -1}, "fit", _range_of("MultinomialNB", "alpha")),
    ("BernoulliNB", {"alpha": "x"}, "fit", _range_of("BernoulliNB", "alpha")),
    ("ComplementNB", {"alpha": np.nan}, "fit", _range_of("ComplementNB", "alpha")),
    ("CategoricalNB", {"alpha": [1, 1, 1, 1]}, "fit", _range_of("CategoricalNB", "alpha")),
    ("MultinomialNB", {"alpha": [1, -1, 1, 1]}, "fit", None),
    ("BernoulliNB", {"alpha": [1, 1, 1]}, "fit", None),
    ("MultinomialNB", {"fit_prior": "no"}, "fit", None),
    ("CategoricalNB", {"fit_prior": 1}, "fit", None),
    ("BernoulliNB", {"force_alpha": "yes"}, "fit", None),
    ("ComplementNB", {"norm": "x"}, "fit", None),
    ("MultinomialNB", {"class_prior": [0.5, 0.3, 0.2]}, "fit", None),
    ("CategoricalNB", {"class_prior": 5},
     "fit", r"^The 'class_prior' parameter of CategoricalNB must be an array-like"),
    ("GaussianNB", {"priors": [0.5, 0.3, 0.2]}, "fit", None),
    ("GaussianNB", {"priors": [-0.5, 1.5]}, "fit", None),
    ("GaussianNB", {"priors": [0.5, 0.6]}, "fit", None),
    ("GaussianNB", {"priors": [np.nan, 0.5]}, "fit", None),
    ("GaussianNB", {"priors": 5}, "fit", r"^The 'priors' parameter of GaussianNB must be an "
                                         "array-like"),
    ("LinearDiscriminantAnalysis", {"priors": [-0.5, 1.5]}, "fit",
     "(?i)^priors must be non-negative"),
    ("GaussianNB", {"var_smoothing": -1}, "fit", _range_of("GaussianNB", "var_smoothing")),
    ("GaussianNB", {"var_smoothing": "x"}, "fit", _range_of("GaussianNB", "var_smoothing")),
    ("QuadraticDiscriminantAnalysis", {"reg_param": 2}, "fit", None),
    ("QuadraticDiscriminantAnalysis", {"reg_param": "x"}, "fit", None),
    ("LinearDiscriminantAnalysis", {"shrinkage": 2}, "fit", None),
    ("LinearDiscriminantAnalysis", {"shrinkage": "x"}, "fit", None),
    ("LinearDiscriminantAnalysis", {"n_components": 0}, "fit", None),
    ("LinearDiscriminantAnalysis", {"n_components": 1.5}, "fit", None),
    ("LinearDiscriminantAnalysis", {"n_components": 5}, "fit", None),
    ("CategoricalNB", {"min_categories": -1}, "fit",
     r"^The 'min_categories' parameter of CategoricalNB must be None, an array-like or an int"),
    ("CategoricalNB", {"min_categories": 2.5}, "fit",
     r"^The 'min_categories' parameter of CategoricalNB must be None, an array-like or an int"),
    ("CategoricalNB", {"min_categories": [2.0, 2, 2, 2]}, "fit", None),
    ("BernoulliNB", {"binarize": "x"}, "fit",
     r"^The 'binarize' parameter of BernoulliNB must be None or a float"),
    ("BernoulliNB", {"binarize": np.nan}, "fit",
     r"^The 'binarize' parameter of BernoulliNB must be None or a float"),
    ("MultinomialNB", {}, "fit -X", None),
    ("ComplementNB", {}, "fit -X", None),
    ("MultinomialNB", {}, "fit NaN",
     r"^Input X contains NaN\.\nMultinomialNB does not accept missing values encoded as NaN "
     r"natively\."),
    ("MultinomialNB", {}, "fit inf", None),
    ("GaussianNB", {}, "fit inf", None),
    ("QuadraticDiscriminantAnalysis", {}, "fit inf", None),
    ("BernoulliNB", {}, "fit 0 samples", None),
    ("GaussianNB", {}, "fit 0 features", None),
    ("MultinomialNB", {}, "fit 1-D", None),
    ("CategoricalNB", {}, "fit 3-D", None),
    ("MultinomialNB", {}, "fit strings", "^dtype='numeric' is not compatible with arrays of "
                                         "bytes/strings"),
    ("GaussianNB", {}, "fit complex", "^Complex data not supported"),
    ("GaussianNB", {}, "fit sparse", None),
    ("CategoricalNB", {}, "fit sparse", None),
    ("LinearDiscriminantAnalysis", {}, "fit sparse", None),
    ("QuadraticDiscriminantAnalysis", {}, "fit sparse", None),
    ("QuadraticDiscriminantAnalysis", {}, "fit one class", None),
    ("QuadraticDiscriminantAnalysis", {}, "fit singular",
     r"^The covariance matrix of class 0 is not full rank\."),
    ("MultinomialNB", {}, "y short", None),
    ("GaussianNB", {}, "y continuous", "^Unknown label type"),
    ("BernoulliNB", {}, "y NaN", None),
    ("ComplementNB", {}, "y 2-D", None),
    ("LinearDiscriminantAnalysis", {}, "y None", None),
    ("MultinomialNB", {}, "weights short", None),
    ("GaussianNB", {}, "weights 2-D", None),
    ("CategoricalNB", {}, "weights zero", None),
    ("BernoulliNB", {}, "weights NaN", None),
    ("MultinomialNB", {}, "predict 3 features", None),
    ("GaussianNB", {}, "predict 3 features", None),
    ("LinearDiscriminantAnalysis", {}, "predict 3 features", None),
    ("ComplementNB", {}, "predict unfitted", None),
    ("QuadraticDiscriminantAnalysis", {}, "predict unfitted", None),
]
BUILTIN_ERRORS = (ValueError, TypeError, AttributeError, np.linalg.LinAlgError)


def raised(Model, params, action):
    with pytest.raises(Exception) as info:
        ACTIONS[action](Model(**params))
    return info.value


@pytest.mark.parametrize("name, params, action, key", MESSAGE_CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[1]}" for c in MESSAGE_CASES])
def test_error_message_as_sklearn(name, params, action, key):
    sk_da = pytest.importorskip("sklearn.discriminant_analysis")
    want = raised(getattr(sk_nb, name, None) or getattr(sk_da, name), params, action)
    got = raised(getattr(fastgen, name), params, action)
    for kind in BUILTIN_ERRORS:
        assert isinstance(got, kind) or not isinstance(want, kind), (kind, got, want)
    if key is None:
        assert str(got).startswith(str(want)), (str(got), str(want))
    else:
        assert re.search(key, str(want)), str(want)
        assert re.search(key, str(got)), str(got)


def test_score_checks_labels_as_scikit_learn_does():
    """score compared y as given: labels as text against numeric classes scored 0.0, a NaN
    label 0.75, and a column of labels was an error about the numbers of samples. As
    scikit-learn: text against numbers and NaN are errors, a column is raveled with a warning
    (outside attack)."""
    X = np.array([[1.0, 0], [0, 1], [1, 1], [2, 0]])
    y = np.array([0, 1, 1, 0])
    model = fastgen.MultinomialNB().fit(X, y)
    for other in (y.astype(str), np.array([0, "1", 1, 0], dtype=object),
                  np.array(["2020-01-01"] * 4, dtype="datetime64[D]")):
        with pytest.raises(ValueError, match="Mix of label input types"):
            model.score(X, other)
    with pytest.raises(ValueError, match="NaN"):
        model.score(X, np.array([0, 1, 1, np.nan]))
    with pytest.warns(UserWarning, match="column-vector y"):
        assert model.score(X, y[:, None]) == 1.0
    text = fastgen.MultinomialNB().fit(X, np.array(["a", "b", "b", "a"]))
    assert text.score(X, np.array(["a", "b", "b", "a"], dtype=object)) == 1.0
    with pytest.raises(ValueError, match="Mix of label input types"):
        text.score(X, y)
