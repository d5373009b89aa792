"""Decisions shared by every classifier (issue 4): predict(X, loss) minimises the conditional
risk sum_c P(c | x) L[c, k] (seed 001), decision_function gives posterior log-odds (two
classes) or log-posteriors, and BaselineClassifier predicts from the class prior alone."""

import warnings

import numpy as np
import pytest
from _gaussian_data import blobs, poisson_counts
from numpy.testing import assert_allclose, assert_array_equal

import fastgen

# ---------------------------------------------------------------------------------------
# every classifier, fitted on suitable small data


def _counts(k, seed):
    X, y = poisson_counts(240, 8, k=k, seed=seed, low=0.3, high=4.0)
    return X, y


def _codes(k, seed):
    X, y = poisson_counts(240, 6, k=k, seed=seed, low=0.3, high=4.0)
    return np.minimum(X, 4).astype(np.int64), y


def _gauss(k, seed):
    return blobs(240, 4, k=k, seed=seed, sep=1.2)


def _mixed(k, seed):
    X, y = blobs(240, 3, k=k, seed=seed, sep=1.2)
    C, _ = _codes(k, seed + 1)
    Xm = np.column_stack([X, C[:, :2].astype(float)])
    Xm[:, 1] = np.where(np.random.default_rng(seed).random(240) < 0.1, np.nan, Xm[:, 1])
    return Xm, y


# name -> (factory, data)
MODELS = {
    "MultinomialNB": (lambda: fastgen.MultinomialNB(), _counts),
    "BernoulliNB": (lambda: fastgen.BernoulliNB(), _counts),
    "ComplementNB": (lambda: fastgen.ComplementNB(), _counts),
    "GaussianNB": (lambda: fastgen.GaussianNB(), _gauss),
    "PoissonNB": (lambda: fastgen.PoissonNB(), _counts),
    "CategoricalNB": (lambda: fastgen.CategoricalNB(handle_unknown="ignore"), _codes),
    "LinearDiscriminantAnalysis": (lambda: fastgen.LinearDiscriminantAnalysis(), _gauss),
    "QuadraticDiscriminantAnalysis": (
        lambda: fastgen.QuadraticDiscriminantAnalysis(reg_param=0.1), _gauss),
    "MixedNB": (lambda: fastgen.MixedNB(
        ["gaussian", "gaussian", "gaussian", "categorical", "categorical"]), _mixed),
    "BaselineClassifier": (lambda: fastgen.BaselineClassifier(), _gauss),
}
NAMES = list(MODELS)
LABELS = np.array(["apple", "banana", "cherry", "date"])


def fitted(name, n_classes, seed=0, string_labels=False):
    """(fitted model, test X): trained on the first 160 rows, tested on the other 80."""
    make, data = MODELS[name]
    X, y = data(n_classes, seed)
    y = LABELS[y] if string_labels else y
    return make().fit(X[:160], y[:160]), X[160:]


def random_loss(n_classes, seed):
    """An asymmetric, non-negative loss with zero diagonal."""
    rng = np.random.default_rng(seed)
    L = rng.uniform(0.2, 5.0, (n_classes, n_classes))
    np.fill_diagonal(L, 0.0)
    return L


def risk_decisions(est, X, L):
    """argmin_k sum_c P(c | x) L[c, k], and the rows whose best and second-best risks differ
    clearly (elsewhere rounding decides)."""
    risk = est.predict_proba(X).astype(np.float64) @ np.asarray(L, dtype=np.float64)
    order = np.sort(risk, axis=1)
    clear = order[:, 1] - order[:, 0] > 1e-9 * max(1.0, float(np.abs(risk).max()))
    return est.classes_[np.argmin(risk, axis=1)], clear


def clear_rows(est, X):
    """Rows whose two largest posteriors differ clearly."""
    p = np.sort(est.predict_proba(X).astype(np.float64), axis=1)
    return p[:, -1] - p[:, -2] > 1e-9


# ---------------------------------------------------------------------------------------
# predict(X, loss)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", NAMES)
def test_predict_loss_is_minimum_risk(name, n_classes):
    est, X = fitted(name, n_classes)
    changed = 0
    for seed in range(4):
        L = random_loss(n_classes, seed)
        want, clear = risk_decisions(est, X, L)
        assert clear.mean() > 0.9
        got = est.predict(X, loss=L)
        assert got.shape == (len(X),)
        assert_array_equal(got[clear], want[clear])
        changed += (got != est.predict(X)).sum()
        # a list of lists is accepted
        assert_array_equal(est.predict(X, loss=L.tolist())[clear], want[clear])
    if name != "BaselineClassifier":
        assert changed > 0  # the losses do move some decisions


@pytest.mark.parametrize("name", NAMES)
def test_predict_loss_string_labels(name):
    est, X = fitted(name, 3, string_labels=True)
    L = random_loss(3, 7)
    want, clear = risk_decisions(est, X, L)
    got = est.predict(X, loss=L)
    assert set(got) <= set(LABELS[:3])
    assert_array_equal(got[clear], want[clear])


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", NAMES)
def test_loss_none_and_zero_one_equal_plain_predict(name, n_classes):
    est, X = fitted(name, n_classes)
    plain = est.predict(X)
    assert_array_equal(est.predict(X, loss=None), plain)
    assert_array_equal(est.predict(X, None), plain)
    clear = clear_rows(est, X)
    assert clear.mean() > 0.9
    zero_one = 1.0 - np.eye(n_classes)
    for L in (zero_one, 3.5 * zero_one, zero_one.astype(int)):
        assert_array_equal(est.predict(X, loss=L)[clear], plain[clear])
    # plain predict is the most probable class
    assert_array_equal(plain[clear], est.classes_[np.argmax(est.predict_proba(X), axis=1)][clear])


@pytest.mark.parametrize("name", NAMES)
def test_costly_class_gains_decisions(name):
    """Raising the cost of missing class c (row c of L) only turns decisions into c: the rows
    predicted c under the 0-1 loss stay c, and some others join."""
    est, X = fitted(name, 3)
    base = est.predict(X, loss=1.0 - np.eye(3))
    for c in range(3):
        previous = base == est.classes_[c]
        for w in (1.5, 4.0, 20.0, 1e3):
            L = 1.0 - np.eye(3)
            L[c] *= w
            now = est.predict(X, loss=L) == est.classes_[c]
            assert (now | ~previous).all(), (c, w)  # superset
            previous = now
        if name != "BaselineClassifier":
            assert previous.sum() > (base == est.classes_[c]).sum()
    # a prohibitive cost of missing class 0: class 0 wherever it is not (nearly) impossible
    L = 1.0 - np.eye(3)
    L[0] *= 1e12
    possible = est.predict_proba(X)[:, 0] * 1e12 > 2.0
    assert possible.mean() > 0.5
    assert (est.predict(X, loss=L)[possible] == est.classes_[0]).all()


def test_seed001_diabetes_missed_diagnosis_is_costly():
    """Seed 001's diabetes example: one measurement x, prior P(C=0) = 0.8, Gaussian class
    conditionals. At x = 48 the posterior of diabetes is about 0.24, so the 0-1 loss says 'no
    diabetes'; when missing a diabetic costs 10 times a false alarm (L[1, 0] = 10, L[0, 1] = 1)
    the minimum-risk decision is 'diabetes' (10 * P1 > P0), and the decision threshold moves to
    lower x."""
    rng = np.random.default_rng(1)
    x0 = rng.normal(40.0, 6.0, 400)  # no diabetes
    x1 = rng.normal(55.0, 6.0, 100)  # diabetes
    X = np.concatenate([x0, x1])[:, None]
    y = np.repeat([0, 1], [400, 100])
    est = fastgen.GaussianNB(priors=[0.8, 0.2]).fit(X, y)
    p1 = est.predict_proba([[48.0]])[0, 1]
    assert 0.1 < p1 < 0.45
    assert est.predict([[48.0]])[0] == 0
    missed_costly = np.array([[0.0, 1.0], [10.0, 0.0]])
    assert est.predict([[48.0]], loss=missed_costly)[0] == 1
    assert 10 * p1 > 1 - p1
    alarm_costly = np.array([[0.0, 10.0], [1.0, 0.0]])
    assert est.predict([[48.0]], loss=alarm_costly)[0] == 0
    # the threshold: the smallest x decided 'diabetes' on a grid
    grid = np.linspace(30.0, 70.0, 801)[:, None]
    plain = est.predict(grid)
    costly = est.predict(grid, loss=missed_costly)
    alarm = est.predict(grid, loss=alarm_costly)
    for d in (plain, costly, alarm):  # one threshold on this range: 0 ... 0 1 ... 1
        assert (np.diff(d) >= 0).all()
    t_plain, t_costly, t_alarm = (grid[np.argmax(d == 1), 0] for d in (plain, costly, alarm))
    assert t_costly < t_plain < t_alarm
    # at the threshold the risks swap: P1 L[1, 0] versus P0 L[0, 1]
    P = est.predict_proba(grid)
    assert_array_equal(costly, (10 * P[:, 1] > P[:, 0]).astype(int))
    assert_array_equal(alarm, (P[:, 1] > 10 * P[:, 0]).astype(int))


BAD_LOSSES = {
    "shape-small": lambda n: np.ones((n - 1, n - 1)),
    "shape-rect": lambda n: np.ones((n, n + 1)),
    "shape-1d": lambda n: np.ones(n),
    "shape-3d": lambda n: np.ones((n, n, 1)),
    "scalar": lambda n: 1.0,
    "nan": lambda n: np.where(np.eye(n) > 0, 0.0, np.nan),
    "inf": lambda n: np.where(np.eye(n) > 0, 0.0, np.inf),
    "-inf": lambda n: np.where(np.eye(n) > 0, 0.0, -np.inf),
    "negative": lambda n: 1.0 - np.eye(n) - 0.5 * np.eye(n),
}


@pytest.mark.parametrize("bad", list(BAD_LOSSES))
@pytest.mark.parametrize("name", NAMES)
def test_bad_loss_raises(name, bad):
    est, X = fitted(name, 3)
    with pytest.raises(ValueError, match="loss"):
        est.predict(X, loss=BAD_LOSSES[bad](3))


@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB", "MixedNB",
                                  "BaselineClassifier"])
def test_non_numeric_loss_raises(name):
    est, X = fitted(name, 2)
    for L in ([["a", "b"], ["c", "d"]], [[0, {}], [1, 0]], [[0, "1"], [None, 0]]):
        with pytest.raises((TypeError, ValueError), match="loss"):
            est.predict(X, loss=L)


@pytest.mark.parametrize("name", ["GaussianNB", "BaselineClassifier"])
def test_complex_loss_raises(name):
    """A complex loss is not a matrix of real costs; its imaginary part must not be dropped
    silently (outside pytest numpy only emits a ComplexWarning)."""
    est, X = fitted(name, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        with pytest.raises((TypeError, ValueError), match="loss"):
            est.predict(X, loss=np.array([[0, 1j], [1 + 5j, 0]]))


@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB", "BaselineClassifier"])
def test_loss_before_fit_raises(name):
    make, _ = MODELS[name]
    with pytest.raises(fastgen.NotFittedError):
        make().predict([[0.0] * 4], loss=1.0 - np.eye(2))


# ---------------------------------------------------------------------------------------
# decision_function


@pytest.mark.parametrize("name", NAMES)
def test_decision_function_two_classes_is_log_odds(name):
    est, X = fitted(name, 2)
    scores = est.decision_function(X)
    assert scores.shape == (len(X),)
    lp = est.predict_log_proba(X)
    if name == "LinearDiscriminantAnalysis":
        # scikit-learn's linear decision function, which is the log-odds for LDA
        assert_allclose(scores, (X @ est.coef_.T + est.intercept_).ravel(), rtol=1e-12,
                        atol=1e-12)
        assert_allclose(scores, lp[:, 1] - lp[:, 0], rtol=1e-7, atol=1e-9)
    else:
        assert_allclose(scores, lp[:, 1] - lp[:, 0], rtol=1e-12, atol=1e-12)
    # sign agrees with predict: positive means classes_[1]
    pred = est.predict(X)
    nonzero = np.abs(scores) > 1e-9
    assert_array_equal(pred[nonzero], est.classes_[(scores[nonzero] > 0).astype(int)])
    if name != "BaselineClassifier":
        assert (scores > 0).any() and (scores < 0).any()


@pytest.mark.parametrize("name", NAMES)
def test_decision_function_more_classes(name):
    for n_classes in (3, 4):
        est, X = fitted(name, n_classes)
        scores = est.decision_function(X)
        assert scores.shape == (len(X), n_classes)
        if name == "LinearDiscriminantAnalysis":
            assert_allclose(scores, X @ est.coef_.T + est.intercept_, rtol=1e-12, atol=1e-12)
        else:
            assert_allclose(scores, est.predict_log_proba(X), rtol=1e-12, atol=1e-12)
        clear = clear_rows(est, X)
        assert_array_equal(est.classes_[np.argmax(scores, axis=1)][clear],
                           est.predict(X)[clear])


def test_lda_decision_function_with_missing_values():
    """A row with NaN has no linear score: LDA gives the log-odds of the marginal model."""
    est, X = fitted("LinearDiscriminantAnalysis", 2)
    Xn = X.copy()
    Xn[::3, 1] = np.nan
    lp = est.predict_log_proba(Xn)
    assert_allclose(est.decision_function(Xn), lp[:, 1] - lp[:, 0], rtol=1e-12, atol=1e-12)
    full = ~np.isnan(Xn).any(axis=1)
    assert_allclose(est.decision_function(Xn)[full], est.decision_function(X)[full],
                    rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB", "MixedNB"])
def test_decision_function_string_labels(name):
    est, X = fitted(name, 2, string_labels=True)
    scores = est.decision_function(X)
    lp = est.predict_log_proba(X)
    assert_allclose(scores, lp[:, 1] - lp[:, 0], rtol=1e-12, atol=1e-12)
    assert_array_equal(est.classes_, ["apple", "banana"])


# ---------------------------------------------------------------------------------------
# BaselineClassifier


def test_baseline_proba_is_class_prior():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = np.array(["a"] * 10 + ["b"] * 25 + ["c"] * 15)
    est = fastgen.BaselineClassifier().fit(X, y)
    assert_array_equal(est.classes_, ["a", "b", "c"])
    assert_allclose(est.class_count_, [10, 25, 15])
    assert_allclose(est.class_prior_, [0.2, 0.5, 0.3], rtol=1e-15)
    Xt = rng.normal(size=(7, 3)) * 100
    Xt[2] = np.nan  # the features are never used: missing values are fine
    assert_allclose(est.predict_proba(Xt), np.tile([0.2, 0.5, 0.3], (7, 1)), rtol=1e-15)
    assert_allclose(est.predict_log_proba(Xt), np.log(np.tile([0.2, 0.5, 0.3], (7, 1))),
                    rtol=1e-14)
    assert_allclose(est.predict_joint_log_proba(Xt), np.log(np.tile([0.2, 0.5, 0.3], (7, 1))),
                    rtol=1e-14)
    assert_array_equal(est.predict(Xt), ["b"] * 7)
    assert est.score(X, y) == 0.5
    with pytest.raises(ValueError):
        est.predict(np.ones((3, 4)))  # n_features is still checked


def test_baseline_weighted_most_frequent():
    X = np.zeros((6, 1))
    y = np.array([0, 0, 0, 1, 1, 2])
    w = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 0.5])
    est = fastgen.BaselineClassifier().fit(X, y, sample_weight=w)
    assert_allclose(est.class_count_, [3.0, 4.0, 0.5])
    assert_allclose(est.class_prior_, np.array([3.0, 4.0, 0.5]) / 7.5, rtol=1e-15)
    assert_array_equal(est.predict(X), [1] * 6)
    assert_array_equal(fastgen.BaselineClassifier().fit(X, y).predict(X), [0] * 6)
    # partial_fit accumulates the counts
    inc = fastgen.BaselineClassifier()
    inc.partial_fit(X[:3], y[:3], classes=[0, 1, 2], sample_weight=w[:3])
    assert_array_equal(inc.predict(X[:1]), [0])
    inc.partial_fit(X[3:], y[3:], sample_weight=w[3:])
    assert_allclose(inc.class_prior_, est.class_prior_, rtol=1e-15)
    assert_array_equal(inc.predict(X[:1]), [1])


def test_baseline_priors_parameter():
    X = np.zeros((6, 2))
    y = np.array([0, 0, 0, 0, 1, 2])
    est = fastgen.BaselineClassifier(priors=[0.1, 0.3, 0.6]).fit(X, y)
    assert_allclose(est.class_prior_, [0.1, 0.3, 0.6], rtol=1e-15)
    assert_allclose(est.class_count_, [4, 1, 1])
    assert_allclose(est.predict_proba(X[:2]), [[0.1, 0.3, 0.6]] * 2, rtol=1e-15)
    assert_array_equal(est.predict(X[:2]), [2, 2])
    # a loss can still overrule the prior: missing class 0 costs 10
    L = 1.0 - np.eye(3)
    L[0] *= 10
    assert_array_equal(est.predict(X[:2], loss=L), [0, 0])
    for bad in ([0.5, 0.5], [0.5, 0.6, -0.1], [0.2, 0.2, 0.2], [np.nan, 0.5, 0.5]):
        with pytest.raises(ValueError):
            fastgen.BaselineClassifier(priors=bad).fit(X, y)


def test_baseline_decision_function_two_classes():
    X = np.zeros((5, 1))
    y = np.array([0, 1, 1, 1, 0])
    est = fastgen.BaselineClassifier().fit(X, y)
    assert_allclose(est.decision_function(X), np.full(5, np.log(0.6 / 0.4)), rtol=1e-12)
    assert_array_equal(est.predict(X), [1] * 5)


def test_costs_far_below_the_largest_keep_their_order():
    """predict divided the loss by its largest cost, which turned costs 1e-326 times smaller
    into 0 (ties): it is scaled only where the expected losses could overflow."""
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    model = fastgen.GaussianNB().fit(X, [0, 0, 1, 1, 2, 2])
    loss = np.array([[0.0, 2e-20, 1e-20], [1e306, 0.0, 0.0], [1e306, 0.0, 0.0]])
    risk = model.predict_proba(X) @ loss
    assert np.isfinite(risk).all()
    np.testing.assert_array_equal(model.predict(X, loss=loss),
                                  model.classes_[np.argmin(risk, axis=1)])
    huge = np.full((3, 3), 1e308) - np.diag([1e308] * 3)  # scaled: a finite decision still
    assert np.isin(model.predict(X, loss=huge), model.classes_).all()
