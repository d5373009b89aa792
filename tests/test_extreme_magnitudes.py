"""Valid but extreme magnitudes, for every model (Hypothesis).

Smoothing and regularisation from 1e-300 (and subnormal) to 1e100, priors down to the smallest
subnormal, sample weights up to the largest float, feature values from subnormal to the largest
each model accepts, through fit, partial_fit, merge, pickles and model files. The contract: a
call either raises a ValueError/TypeError whose message names the parameter or input that is out
of range, or gives finite, normalised posteriors. With every prior and every smoothing parameter
positive, no posterior is exactly 0 in exact arithmetic, so a log-posterior may be -inf only
where it is below the float64 range (check_posteriors). No RuntimeWarning may leak (warnings are
errors here). Plain regression tests against references computed another way (50-digit
arithmetic, a model without the column) follow the property test.
"""

import os
import pickle
import re
import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

import fastgen

MAX_EXAMPLES = int(os.environ.get("FASTGEN_HYPOTHESIS_EXAMPLES", "50"))
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TINY = [5e-324, 1e-310, 1e-300, 1e-150]
MAX_COUNT = 2.0**53  # the largest count the count models accept
MAX_REAL = 1e150  # the largest magnitude the continuous models accept
WEIGHTS = TINY + [1e-10, 1.0, 3.0, 1e100, 1e200, 1e250, 1e300, 1e308,
                  np.finfo(np.float64).max]
SMOOTHING = TINY + [1e-200, 1e-100, 1e-20, 1e-10, 1e-3, 1.0, 1e10, 1e50, 1e100]
MIXED_TYPES = ["gaussian", "categorical", "bernoulli", "poisson", "multinomial", "multinomial"]

COUNT_VALUES = [0.0, 0.0, 1.0, 2.0, 7.0] + TINY + [1e10, 1e15, MAX_COUNT]
REAL_VALUES = [0.0, 1.0, -1.0, 2.5, -3.0] + TINY + [-1e-300, 1e10, -1e50, 1e100, -1e149,
                                                      MAX_REAL, -MAX_REAL]
ANY_VALUES = REAL_VALUES + [1e300, -1e308, np.finfo(np.float64).max]
CODE_VALUES = [0.0, 1.0, 2.0, 3.0, 40.0]


def smoothing():
    return st.one_of(st.sampled_from(SMOOTHING),
                     st.floats(-300, 100).map(lambda e: float(10.0 ** e)))


@st.composite
def positive_prior(draw, n_classes, normalised=True):
    kind = draw(st.sampled_from(["subnormal", "tiny", "random"]))
    if kind == "subnormal":
        prior = np.full(n_classes, 5e-324)
    elif kind == "tiny":
        prior = np.array([draw(st.sampled_from(TINY + [1e-100, 1e-20]))
                          for _ in range(n_classes)])
    else:
        prior = np.array([draw(st.floats(0.01, 1.0)) for _ in range(n_classes)])
        prior *= 0.5 / prior.sum()
    big = draw(st.integers(0, n_classes - 1))
    prior[big] = 0.0
    prior[big] = 1.0 - prior.sum() if normalised else draw(st.sampled_from([1.0, 1e300]))
    return prior


VALUES = {"count": COUNT_VALUES, "real": REAL_VALUES, "any": ANY_VALUES, "code": CODE_VALUES}


MODELS = {
    "MultinomialNB": ("count", fastgen.MultinomialNB),
    "ComplementNB": ("count", fastgen.ComplementNB),
    "BernoulliNB": ("any", fastgen.BernoulliNB),
    "CategoricalNB": ("code", fastgen.CategoricalNB),
    "GaussianNB": ("real", fastgen.GaussianNB),
    "PoissonNB": ("count", fastgen.PoissonNB),
    # (MixedNB takes magnitudes up to 1e150 in every column)
    "MixedNB": (("real", "code", "real", "count", "count", "count"), fastgen.MixedNB),
    "LinearDiscriminantAnalysis": ("real", fastgen.LinearDiscriminantAnalysis),
    "QuadraticDiscriminantAnalysis": ("real", fastgen.QuadraticDiscriminantAnalysis),
    "BaselineClassifier": ("any", fastgen.BaselineClassifier),
}


@st.composite
def params(draw, name, n_classes):
    """Hyperparameters at extreme magnitudes (all positive, where a parameter allows it)."""
    out = {}
    if name in ("MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB", "PoissonNB",
                "MixedNB"):
        out["alpha"] = draw(smoothing())
    if name == "PoissonNB":
        out["beta"] = draw(smoothing())
    if name == "ComplementNB":
        out["norm"] = draw(st.booleans())
    if name == "BernoulliNB":
        out["binarize"] = draw(st.sampled_from([0.0, 0.0, 1e-300, 1.0, 1e100, -1e300, None]))
    if name in ("GaussianNB", "MixedNB"):
        out["var_smoothing"] = draw(smoothing())
    if name == "QuadraticDiscriminantAnalysis":
        out["reg_param"] = draw(st.sampled_from([5e-324, 1e-300, 1e-100, 1e-10, 0.5, 1.0]))
    if name == "LinearDiscriminantAnalysis":
        out["covariance"] = draw(st.sampled_from(["full", "diagonal", "spherical", "identity"]))
        out["shrinkage"] = draw(st.sampled_from([None, 5e-324, 1e-300, 1e-10, 0.5, 1.0,
                                                 "auto"]))
    if name == "MixedNB":
        out["feature_types"] = MIXED_TYPES
    if draw(st.booleans()):  # given priors: class_prior need not sum to one, priors must
        if name in ("MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB",
                    "PoissonNB"):
            out["class_prior"] = draw(positive_prior(n_classes, normalised=False))
        else:
            out["priors"] = draw(positive_prior(n_classes))
    return out


@st.composite
def problems(draw, name):
    """(X, y, sample_weight, n_classes, rows per class in each half): every class in both
    halves of the rows, cells drawn from their column's extreme values, float64 or float32."""
    kinds, _ = MODELS[name]
    n_features = 6 if name == "MixedNB" else draw(st.integers(1, 3))
    if isinstance(kinds, str):
        kinds = (kinds,) * n_features
    n_classes = draw(st.integers(2, 3))
    per_class = 4 if name in ("LinearDiscriminantAnalysis",
                              "QuadraticDiscriminantAnalysis") else 1
    n_rows = draw(st.integers(2 * n_classes * per_class, 2 * n_classes * per_class + 4))
    y = np.arange(n_rows) % n_classes
    X = np.empty((n_rows, n_features))
    for j, kind in enumerate(kinds):
        X[:, j] = [draw(st.sampled_from(VALUES[kind])) for _ in range(n_rows)]
    weight = None
    if draw(st.booleans()):  # one weight for every row, or one each
        weight = (np.full(n_rows, draw(st.sampled_from(WEIGHTS))) if draw(st.booleans())
                  else np.array([draw(st.sampled_from(WEIGHTS)) for _ in range(n_rows)]))
    if draw(st.booleans()) and name != "CategoricalNB":  # float32 models (codes stay exact)
        X = np.clip(X, -3e38, 3e38).astype(np.float32)
    return X, y, weight, n_classes, per_class


NAMES = re.compile(r"\b(X|sample_weight|alpha|beta|var_smoothing|reg_param|shrinkage|priors?"
                   r"|class_prior|binarize|covariance|handle_unknown)\b")
# models whose joint log-likelihood is a bounded sum (logs of smoothed frequencies times counts
# of at most 2**53): with positive priors and smoothing it is always finite
BOUNDED = {"MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB", "BaselineClassifier"}
PROBES = {"count": (0.0, MAX_COUNT, 1.0), "real": (MAX_REAL, -MAX_REAL, 5e-324),
          "any": (1e308, -1e308, 0.0), "code": (0.0, 0.0, 0.0)}


def probes(name, n_features):
    """Rows at the far ends of what the model accepts."""
    kinds = MODELS[name][0]
    kinds = (kinds,) * n_features if isinstance(kinds, str) else kinds
    return np.array([[PROBES[kind][i] for kind in kinds] for i in range(3)])


def check_posteriors(name, model, X, what):
    """The contract on X, for a model whose priors and smoothing are all positive: no posterior
    is 0 in exact arithmetic, so a log-posterior is -inf only where it is below the float64
    range (its joint log-likelihood overflowed, or is that far below the best class's); the
    models whose joint log-likelihood is a bounded sum keep it finite. (A row so far from every
    Gaussian class that all their joint log-likelihoods overflow gets the kernels' uniform
    posterior: finite and normalised, though in exact arithmetic the nearest class in
    Mahalanobis distance would take it all.)"""
    n, k = X.shape[0], len(model.classes_)
    proba = model.predict_proba(X)
    log_proba = model.predict_log_proba(X)
    jll = model.predict_joint_log_proba(X)
    assert proba.shape == log_proba.shape == jll.shape == (n, k), what
    tol = 1e-5 if proba.dtype == np.float32 else 1e-9
    assert np.isfinite(proba).all() and (proba >= 0).all() and (proba <= 1).all(), \
        f"{what}: posteriors {proba}"
    assert np.abs(proba.sum(axis=1) - 1).max() <= tol, f"{what}: rows do not sum to 1 {proba}"
    assert not np.isnan(log_proba).any() and (log_proba <= 0).all(), f"{what}: {log_proba}"
    assert np.abs(logsumexp(log_proba.astype(np.float64), axis=1)).max() <= tol, \
        f"{what}: {log_proba}"
    assert not np.isnan(jll).any() and not (jll == np.inf).any(), f"{what}: jll {jll}"
    with np.errstate(over="ignore", invalid="ignore"):
        gap = jll.astype(np.float64) - jll.max(axis=1, keepdims=True)
        beyond = (jll == -np.inf) | (gap < -np.finfo(jll.dtype).max)
    assert np.isfinite(log_proba[~beyond]).all(), f"{what}: log-posteriors {log_proba}, jll {jll}"
    if name in BOUNDED:
        assert np.isfinite(jll).all(), f"{what}: jll {jll}"
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(log_proba, axis=1)])


def attempt(call, what):
    """(None, result) or (the clean exception, None); fails on anything else."""
    try:
        return None, call()
    except (ValueError, TypeError) as exc:
        assert names_its_cause(exc), f"{what}: the error does not name its cause: {exc!r}"
        return exc, None


def names_its_cause(exc):
    return NAMES.search(str(exc)) is not None


def round_trips(model, X, what):
    """A pickle and a model file give back the same model."""
    expected = model.predict_log_proba(X)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict_log_proba(X), expected, err_msg=what)
    handle, path = tempfile.mkstemp(suffix=".fastgen")
    os.close(handle)
    try:
        model.save(path)
        np.testing.assert_array_equal(fastgen.load(path).predict_log_proba(X), expected,
                                      err_msg=what)
    finally:
        os.unlink(path)


@pytest.mark.parametrize("name", sorted(MODELS))
@SETTINGS
@given(data=st.data())
def test_extreme_magnitudes(name, data):
    """fit, partial_fit in two batches, merge of two halves, pickle and model file, then every
    predict method on the training rows and on rows at the far ends of the accepted values."""
    X, y, weight, n_classes, per_class = data.draw(problems(name), label="problem")
    hyper = data.draw(params(name, n_classes), label="params")
    Model = MODELS[name][1]
    far = probes(name, X.shape[1])
    X_test = np.vstack([X, np.clip(far, -3e38, 3e38).astype(X.dtype) if X.dtype == np.float32
                        else far])
    if name == "BernoulliNB" and hyper["binarize"] is None:
        X_test = np.clip(X_test, 0.0, 1.0)  # X binary already: values in [0, 1]
    half = n_classes * per_class  # every class in both halves
    halves = [(X[:half], y[:half], None if weight is None else weight[:half]),
              (X[half:], y[half:], None if weight is None else weight[half:])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a leaked RuntimeWarning fails
        _, model = attempt(lambda: Model(**hyper).fit(X, y, sample_weight=weight), "fit")
        if model is not None:
            check_posteriors(name, model, X_test, "fit")
            round_trips(model, X_test, "fit")

        def partial_fit():
            m = Model(**hyper)
            for (Xb, yb, wb), classes in zip(halves, (np.arange(n_classes), None)):
                m.partial_fit(Xb, yb, classes=classes, sample_weight=wb)
            return m

        _, model = attempt(partial_fit, "partial_fit")
        if model is not None:
            check_posteriors(name, model, X_test, "partial_fit")
            round_trips(model, X_test, "partial_fit")

        def merge():
            a, b = (Model(**hyper).fit(Xb, yb, sample_weight=wb) for Xb, yb, wb in halves)
            return a.merge(b)

        _, model = attempt(merge, "merge")
        if model is not None:
            check_posteriors(name, model, X_test, "merge")


# ---------------------------------------------------------------------------------------
# regressions, each against a reference computed another way


def complement_nb_reference(X, y, alpha, norm, X_test):
    """ComplementNB's log-posteriors (Rennie et al. 2003) in 50-digit arithmetic (mpmath)."""
    mpmath = pytest.importorskip("mpmath")
    mp = mpmath.mp.clone()
    mp.dps = 50
    X, X_test = np.asarray(X, dtype=float), np.asarray(X_test, dtype=float)
    classes = np.unique(y)
    counts = [[mp.fsum(mp.mpf(v) for v in X[np.asarray(y) == c, j])
               for j in range(X.shape[1])] for c in classes]
    weights = []
    for c in range(len(classes)):
        complement = [mp.fsum(counts[k][j] for k in range(len(classes)) if k != c)
                      + mp.mpf(alpha) for j in range(X.shape[1])]
        total = mp.fsum(complement)
        logged = [mp.log(v / total) for v in complement]
        weights.append([v / mp.fsum(logged) for v in logged] if norm else [-v for v in logged])
    out = []
    for row in X_test:
        jll = [mp.fsum(mp.mpf(x) * w for x, w in zip(row, ws)) for ws in weights]
        top = max(jll)
        norm_row = top + mp.log(mp.fsum(mp.exp(v - top) for v in jll))
        out.append([float(v - norm_row) for v in jll])
    return np.array(out)


@pytest.mark.parametrize("X, alpha", [([[2e7, 0, 1], [0, 2e7, 1]], 1e-10),
                                      ([[1, 0, 1], [0, 1, 1]], 1e-20),
                                      ([[3, 0, 0], [0, 5, 0]], 5e-324)],
                         ids=["2e7-counts", "alpha-1e-20", "subnormal-alpha"])
@pytest.mark.parametrize("norm", [True, False], ids=["norm", "no-norm"])
def test_complement_nb_tiny_alpha_beside_large_counts(X, alpha, norm):
    """A feature only one class has gets the complement count alpha in the other classes,
    however small beside the count: (2e7 + 1e-10) - 2e7 rounded it to 0, its log to -inf, and
    the normalised weights to inf/inf (NaN posteriors). Log-posteriors equal a 50-digit
    reference, finite (none is 0 in exact arithmetic)."""
    X_test = [[1, 0, 0], [1, 1, 0], [0, 0, 1], [4, 0, 3]]
    model = fastgen.ComplementNB(alpha=alpha, norm=norm).fit(X, [0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_proba = model.predict_log_proba(X_test)
        proba = model.predict_proba(X_test)
    expected = complement_nb_reference(X, [0, 1], alpha, norm, X_test)
    assert np.isfinite(log_proba).all()
    np.testing.assert_allclose(log_proba, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(proba, np.exp(expected), rtol=1e-9, atol=1e-300)
    assert np.isfinite(model.feature_log_prob_).all()


ALL_MODELS = sorted(MODELS)


def _make(name, **params):
    return MODELS[name][1](**({"feature_types": MIXED_TYPES} if name == "MixedNB" else {}),
                           **params)


def _small_problem(name):
    """Four rows per class of two classes, valid for every model (QDA needs spread)."""
    rng = np.random.default_rng(3)
    y = np.arange(16) % 2
    n_features = 6 if name == "MixedNB" else 2
    X = rng.integers(0, 3, (16, n_features)).astype(np.float64)
    if name in ("GaussianNB", "LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"):
        X = rng.normal(size=(16, n_features)) + y[:, None]
    return X, y


@pytest.mark.parametrize("name", ALL_MODELS)
@pytest.mark.parametrize("weight", [1e300, 1e308, np.finfo(np.float64).max],
                         ids=["1e300", "1e308", "max"])
def test_class_weight_beyond_bound_is_refused(name, weight):
    """A class's total sample weight beyond MAX_CLASS_WEIGHT (1e200) is a ValueError naming
    sample_weight, before anything is counted: weights of 1e308 overflowed the class totals
    (rows of zero posteriors, class 0 predicted, a RuntimeWarning), and weights of 1e300 made a
    model that its own pickle refused."""
    X, y = _small_problem(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="sample_weight"):
            _make(name).fit(X, y, sample_weight=np.full(len(y), weight))


@pytest.mark.parametrize("name", ALL_MODELS)
def test_class_weight_bound_across_partial_fit_and_merge(name):
    """Totals that grow across calls: a partial_fit or a merge that would take a class beyond
    1e200 is refused and leaves the model as it was; up to the bound, the model predicts
    cleanly and its pickle and model file hold it."""
    X, y = _small_problem(name)
    w = np.full(len(y), 0.6e200 / (len(y) // 2))  # each class: 0.6e200 per batch
    model = _make(name).partial_fit(X, y, classes=[0, 1], sample_weight=w)
    before = model.predict_log_proba(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="sample_weight"):
            model.partial_fit(X, y, sample_weight=w)
        np.testing.assert_array_equal(model.predict_log_proba(X), before)
        other = _make(name).fit(X, y, sample_weight=w)
        with pytest.raises(ValueError, match="sample_weight"):
            model.merge(other)
        np.testing.assert_array_equal(model.predict_log_proba(X), before)
        check_posteriors(name, model, X, "at the bound")
        round_trips(model, X, "at the bound")


@pytest.mark.parametrize("name", ["BaselineClassifier", "GaussianNB", "MixedNB",
                                  "LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"])
def test_log_prior_of_a_light_class_is_finite(name):
    """Class weights of 1e-300 and 1e100: the light class's frequency, 1e-400, underflows to 0,
    but its log prior is log(1e-300) - log(1e100 + 1e-300), finite, and so is its
    log-posterior."""
    X, y = _small_problem(name)
    w = np.where(y == 0, 1e-300, 1e100)
    model = _make(name).fit(X, y, sample_weight=w)
    expected = np.log(1e-300 * 8) - np.log(1e100 * 8)
    if name == "BaselineClassifier":
        np.testing.assert_allclose(model.predict_log_proba(X[:1])[0], [expected, 0.0],
                                   rtol=1e-12)
    log_proba = model.predict_log_proba(X)
    assert np.isfinite(log_proba).all()
    assert (log_proba[:, 0] < -800).all()


@pytest.mark.parametrize("name", ["GaussianNB", "LinearDiscriminantAnalysis", "MixedNB"])
def test_missing_value_beside_far_apart_class_means(name):
    """A missing feature whose class means are 1e10 apart (unit variances): marginalising it
    equals dropping the column. Filling it in and subtracting its term afterwards cancelled a
    term of 1e19 against the other features' (posteriors 0.5, 0.5)."""
    rng = np.random.default_rng(0)
    y = np.arange(200) % 2
    X = np.column_stack([rng.normal(y, 1.0), rng.normal(y * 1e10, 1.0)])
    params = {"covariance": "diagonal"} if name == "LinearDiscriminantAnalysis" else (
        {"var_smoothing": 0.0} if name in ("GaussianNB", "MixedNB") else {})
    if name == "MixedNB":
        params["feature_types"] = ["gaussian", "gaussian"]
    Model = getattr(fastgen, name)
    X_test = np.array([[0.0, np.nan], [1.0, np.nan], [0.5, np.nan], [2.0, np.nan]])
    both = Model(**params).fit(X, y)
    if name == "MixedNB":
        params["feature_types"] = ["gaussian"]
    alone = Model(**params).fit(X[:, :1], y)
    np.testing.assert_allclose(both.predict_log_proba(X_test),
                               alone.predict_log_proba(X_test[:, :1]), rtol=1e-12)
    assert np.ptp(both.predict_proba(X_test)[:, 0]) > 0.2


def test_poisson_missing_value_beside_huge_rates():
    """PoissonNB: a missing count whose rates are near 2**52 drops out exactly (it was
    subtracted from a bias that held -2**52, wiping out the other features' terms)."""
    rng = np.random.default_rng(1)
    y = np.arange(400) % 2
    X = np.column_stack([rng.poisson(1.0 + 2.0 * y), np.full(400, 2.0**52) + y * 2.0**51])
    X_test = np.array([[0.0, np.nan], [1.0, np.nan], [2.0, np.nan], [4.0, np.nan]])
    both = fastgen.PoissonNB().fit(X, y)
    alone = fastgen.PoissonNB().fit(X[:, :1], y)
    np.testing.assert_allclose(both.predict_log_proba(X_test),
                               alone.predict_log_proba(X_test[:, :1]), rtol=1e-12)


@pytest.mark.parametrize("alpha, beta, weight", [(1e10, 5e-324, 2.3e-308), (1e100, 6e-209, 1e-300)],
                         ids=["a-rate-beyond-float64", "rates-summing-beyond-float64"])
def test_poisson_rates_beyond_float64_name_beta(alpha, beta, weight):
    """Rates (count + alpha) / (weight + beta) beyond float64, or whose sum over the features
    (the per-class term -sum_j lambda) is, are a ValueError naming beta and sample_weight (the
    sum overflowed to a bias of -inf with a RuntimeWarning)."""
    X, y = np.zeros((4, 2)), [0, 1, 0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"beta.*sample_weight"):
            fastgen.PoissonNB(alpha=alpha, beta=beta).fit(X, y, sample_weight=np.full(4, weight))


GAUSSIAN_FAMILY = [("GaussianNB", {}), ("LinearDiscriminantAnalysis", {}),
                   ("LinearDiscriminantAnalysis", {"covariance": "identity"}),
                   ("LinearDiscriminantAnalysis", {"shrinkage": 1.0}),
                   ("LinearDiscriminantAnalysis", {"covariance": "diagonal", "shrinkage": 1.0}),
                   ("QuadraticDiscriminantAnalysis", {"reg_param": 1.0}),
                   ("MixedNB", {"feature_types": ["gaussian", "gaussian"]})]


@pytest.mark.parametrize("name, params", GAUSSIAN_FAMILY,
                         ids=[f"{n}{p}" for n, p in GAUSSIAN_FAMILY])
def test_squared_deviations_beyond_float64(name, params):
    """Weights of 1e100 on values of 1e149: the sums of squared deviations overflow float64.
    fit refuses them, naming X and sample_weight (LDA with the identity kept them, and its
    pickle failed; reg_param=1 and shrinkage=1 multiplied them by 0 with a RuntimeWarning);
    so does a merge whose sums overflow (a model file's message, naming neither)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)) * 1e149, np.arange(40) % 2
    Model = MODELS[name][1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"X or sample_weight"):
            Model(**params).fit(X, y, sample_weight=np.full(40, 1e100))
        # two models of data around +1e149 and -1e149: each fits, their merge overflows
        near = 1e149 * (1.0 + 0.01 * rng.normal(size=(20, 2)))
        a, b = (Model(**params).fit(sign * near, y[:20], sample_weight=np.full(20, 1e9))
                for sign in (1.0, -1.0))
        with pytest.raises(ValueError, match=r"X or sample_weight"):
            a.merge(b)


@pytest.mark.parametrize("value", [2.0, -1.0, 1e308])
def test_bernoulli_without_binarize_takes_values_in_0_1(value):
    """binarize=None: X is binary already, a value beyond [0, 1] is a ValueError naming
    binarize, at fit and at predict (a count of 2 took feature_count_ beyond class_count_: log
    of a negative probability, and a model its own pickle refused)."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 1.0], [0.0, 0.0]])
    bad = X.copy()
    bad[0, 0] = value
    with pytest.raises(ValueError, match="binarize"):
        fastgen.BernoulliNB(binarize=None).fit(bad, [0, 1, 0, 1])
    model = fastgen.BernoulliNB(binarize=None).fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="binarize"):
        model.predict_proba(bad)


def test_float32_model_refuses_values_beyond_float32():
    """A model fitted on float32 data casts X to float32: a value beyond its range is a
    ValueError naming X (the cast leaked a RuntimeWarning)."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]], dtype=np.float32)
    model = fastgen.GaussianNB().fit(X, [0, 0, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="float32"):
            model.predict_proba(np.array([[1e100]]))


def test_mixed_nb_refused_batch_leaves_the_statistics():
    """A partial_fit whose gaussian moments overflow is refused before the multinomial part
    counts the batch into the model's statistics in place (its counts kept the refused batch,
    so the model's pickle disagreed with its predictions)."""
    X = np.array([[1.0, 0, 2], [2.0, 1, 3], [1.5, 0, 1], [2.5, 1, 0]])
    model = fastgen.MixedNB(["gaussian", "categorical", "multinomial"]).fit(X, [0, 1, 0, 1])
    before = pickle.loads(pickle.dumps(model)).parts_["multinomial"][1]
    with pytest.raises(ValueError, match="sample_weight"):
        model.partial_fit([[1e149, 0, 5], [-1e149, 1, 5]], [0, 0], sample_weight=[1e100] * 2)
    after = pickle.loads(pickle.dumps(model)).parts_["multinomial"][1]
    np.testing.assert_array_equal(after.feature_count_, before.feature_count_)
    np.testing.assert_array_equal(after.class_count_, before.class_count_)


def _two_gaussian_classes(scale):
    rng = np.random.default_rng(0)
    y = np.arange(200) % 2
    return (rng.normal(size=(200, 3)) + 2.0 * y[:, None]) * scale, y


@pytest.mark.parametrize("scale", [1e-60, 1e-120, 1e-140, 1e100])
def test_gaussian_nb_in_tiny_or_huge_units_is_scikit_learns(scale):
    """GaussianNB is free of the features' units, as scikit-learn's: features whose variance is
    below 1e-100 (units of 1e-55 and less) are modelled. They were taken as constant, so that
    epsilon_ was var_smoothing itself (1e-9, far above their spread) and every posterior 1/2."""
    naive_bayes = pytest.importorskip("sklearn.naive_bayes")
    X, y = _two_gaussian_classes(scale)
    ours, theirs = fastgen.GaussianNB().fit(X, y), naive_bayes.GaussianNB().fit(X, y)
    assert ours.epsilon_ == pytest.approx(theirs.epsilon_, rel=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), theirs.predict_log_proba(X),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("predictive", [False, True], ids=["plug-in", "predictive"])
@pytest.mark.parametrize("model", [fastgen.LinearDiscriminantAnalysis,
                                   fastgen.QuadraticDiscriminantAnalysis])
def test_discriminant_analysis_refuses_features_in_tiny_units(model, predictive):
    """LDA and QDA whiten the features and model no variance below 1e-100 (whitening by
    1 / sqrt of less would overflow): features in units of 1e-60, which vary beyond their
    rounding, are refused by a message that says so. The plug-in called the classes
    degenerate; the predictive dropped every feature and gave the prior, 1/2, silently."""
    X, y = _two_gaussian_classes(1e-60)
    with pytest.raises(ValueError, match=r"variance 1\.\d+e-120\), but below 1e-100.*Rescale X"):
        model(predictive=predictive).fit(X, y)
