"""Learning from unlabelled rows: semi-supervised EM over any fastgen model (``SemiSupervised``).

A generative model can use rows without a label: the missing label is marginalised as a missing
feature is, which gives EM (Dempster, Laird & Rubin 1977; for naive Bayes text classifiers Nigam,
McCallum, Thrun & Mitchell 2000). The E-step scores the unlabelled rows; the M-step counts each of
them for every class, weighted by its posterior probability -- soft class memberships
(``_base.Members``), added to the model's declared statistics like labelled rows, without copying
a row per class -- and derives the parameters as a fit does.
"""
from __future__ import annotations

import copy
import functools
import numbers
import warnings
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from . import _persist
from ._base import (
    OUT_JLL,
    BaseClassifier,
    BaseEstimator,
    MatrixLike,
    Members,
    partial_fit_classes,
)
from ._core import _counts
from ._dask import check_dask_labels, is_dask_collection
from ._persist import _ESTIMATORS
from ._state import readonly
from ._validation import (
    ConvergenceWarning,
    InvalidParameterError,
    check_is_fitted,
    check_n_threads,
    check_sample_weight,
    check_unchanged,
    check_y,
    encode_labels,
    int_in,
    invalid_parameter,
    label_codes,
    real_in,
    rechecked,
    user_stacklevel,
)
from .naive_bayes import ComplementNB

UNLABELLED = -1  # the label of a row without one, as scikit-learn's semi-supervised estimators
# Posteriors below this are left out of the memberships: what they would add to a statistic is
# below its rounding error (float64 resolves 2**-52 of a row's own contribution), while the many
# tiny posteriors of long documents would multiply the cost of the M-step
MIN_MEMBERSHIP = 2.0**-60


class _Result(NamedTuple):
    """A fit's outcome, published by one assignment: a prediction running beside a refit sees
    the old one or the new one, never a mix."""

    estimator: BaseClassifier
    n_iter: int
    objective: np.ndarray
    converged: bool


def _as_labels(y):
    """(y as an array in which -1 stays a number, whether it was a list of strings): a list or
    tuple of labels mixing strings and -1 becomes an object array (NumPy would turn the -1 into
    the string "-1"); anything else is left to ``check_y``."""
    if isinstance(y, (list, tuple)) and all(np.ndim(v) == 0 for v in y):
        natural = np.asarray(y)
        if natural.dtype.kind in "US":
            values = np.empty(len(y), dtype=object)
            values[:] = y
            return values, True
        return natural, False
    return y, False


NUMBER_MARK, TEXT_MARK = 1, 2


def _mark(label):
    """NUMBER_MARK for -1 as a number (of any numeric type but bool), TEXT_MARK for the text
    "-1" (str or bytes, as their own comparisons say), else 0."""
    if isinstance(label, str):
        return TEXT_MARK if str.__eq__(label, "-1") is True else 0
    if isinstance(label, bytes):
        return TEXT_MARK if bytes.__eq__(label, b"-1") is True else 0
    return NUMBER_MARK if isinstance(label, numbers.Number) and not isinstance(
        label, (bool, np.bool_)) and label == UNLABELLED else 0


def unlabelled_rows(y, name="y"):
    """Which entries of a validated 1-D y are ``-1``: in a numeric array, or as a number (of any
    numeric type but bool) in an object array. The text "-1" is refused (a ValueError naming
    ``name``): it reads as the mark, in labels read from a file, but is no number, so it would
    be fitted as a class (scikit-learn's semi-supervised estimators refuse text labels
    altogether)."""
    if y.dtype.kind in "iuf":
        return y == UNLABELLED
    if y.dtype.kind in "US":
        marks = np.where(y == (b"-1" if y.dtype.kind == "S" else "-1"), TEXT_MARK, 0)
    elif y.dtype.kind == "O":  # (one pass: the text -1, and the numbers -1)
        marks = np.fromiter(map(_mark, y), dtype=np.int8, count=len(y))
    else:
        return np.zeros(len(y), dtype=bool)
    found = np.flatnonzero(marks == TEXT_MARK)
    if len(found):
        where = f" (at {int(found[0])})" if name == "y" else ""
        raise ValueError(f"{name} holds the text '-1'{where}: SemiSupervised marks "
                         "an unlabelled row by the number -1 (in an object array beside text "
                         "labels), and a label '-1' that is text would be fitted as a class. "
                         "Replace it by the number -1, or name the class otherwise.")
    return marks == NUMBER_MARK


def _checked_classes(classes):
    """``classes`` as partial_fit validates them, without -1: the mark of an unlabelled row
    cannot name a class."""
    known = partial_fit_classes(classes)
    if unlabelled_rows(known, "classes").any():
        raise ValueError("classes holds -1, which marks an unlabelled row: it cannot be a class "
                         "of SemiSupervised.")
    return known


def _take_rows(X, rows):
    """Rows of an input as the estimator takes it (a DataFrame stays one)."""
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    if sp.issparse(X):
        return X.tocsr()[rows]
    if isinstance(X, np.ndarray) or hasattr(X, "__array__"):
        return np.asarray(X)[rows]
    return [X[i] for i in rows]  # (a list of rows keeps its values' types: MixedNB's columns)


def _rows_of(X_valid, has_nan, rows):
    """Rows of a validated X as the kernels take them (CSR indices and indptr of one dtype),
    and whether they hold NaN. scipy selects sparse rows trusting the indices: from a copy,
    checked again."""
    if sp.issparse(X_valid):
        part = rechecked(X_valid.copy())[rows]
        if part.indices.dtype != part.indptr.dtype:
            part.indices, part.indptr = (a.astype(np.int64) for a in (part.indices, part.indptr))
        return part, has_nan and bool(np.isnan(part.data).any())
    part = np.ascontiguousarray(X_valid[rows])
    return part, has_nan and bool(np.isnan(part).any())


def _delegated(name):
    """A method of the meta-estimator that calls ``estimator_``'s: the models' signature and
    documentation (their outputs are the fitted model's)."""
    @functools.wraps(getattr(BaseClassifier, name))
    def method(self, *args, **kwargs):
        return getattr(self._fitted_result().estimator, name)(*args, **kwargs)
    return method


class SemiSupervised(BaseEstimator):
    """Semi-supervised EM: a fastgen model fitted on labelled and unlabelled rows together.

    Rows labelled ``-1`` are unlabelled. The model is first fitted on the labelled rows alone;
    then each iteration scores the unlabelled rows (E-step: each row's posterior P(c | x)) and
    refits the model on the labelled rows plus every unlabelled row counted for each class with
    weight ``unlabeled_weight * sample_weight * P(c | x)`` (M-step): the missing label is
    marginalised, as a missing feature is. This is EM for the model's likelihood (Dempster, Laird
    & Rubin 1977), and for naive Bayes text classifiers the method of Nigam, McCallum, Thrun &
    Mitchell (2000), with their EM-lambda weighting of the unlabelled rows.

    Parameters
    ----------
    estimator : fastgen classifier
        The model, unfitted or not (it is cloned, never changed): MultinomialNB, BernoulliNB,
        CategoricalNB, PoissonNB, GaussianNB, MixedNB, LinearDiscriminantAnalysis,
        QuadraticDiscriminantAnalysis or BaselineClassifier. Not ComplementNB (no model of
        P(x | c), so no likelihood for EM to ascend), not ``predictive=True`` (EM fits a point
        estimate; set ``predictive`` on ``estimator_`` afterwards, see Notes) and not
        ``alpha="evidence"`` (a prior chosen again at each M-step leaves EM no fixed objective:
        choose alpha on the labelled rows first).
    unlabeled_weight : float in [0, 1], default=1.0
        lambda: the weight of an unlabelled row relative to a labelled one. 0 ignores the
        unlabelled rows (the model of the labelled rows alone, exactly); 1 is plain EM. A value
        below 1 limits the pull of many unlabelled rows when the model is a poor description of
        them; choose it on held-out labelled rows.
    max_iter : int, default=100
        The largest number of EM iterations (M-steps after the start).
    tol : float, default=1e-3
        EM stops when an iteration changes the objective by at most ``tol`` per unit of weight
        (the labelled rows' sample weights plus lambda times the unlabelled rows'), as
        scikit-learn's GaussianMixture measures its lower bound per sample.

    Attributes
    ----------
    estimator_ : fastgen classifier
        The fitted model: the statistics of the labelled rows plus the unlabelled rows' soft
        memberships of the last E-step. It predicts for this meta-estimator.
    classes_ : ndarray of shape (n_classes,)
        The class labels (the labelled rows' and those announced in ``classes``).
    n_features_in_ : int
        The number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Column names, when X was a DataFrame with string column names.
    n_iter_ : int
        The number of EM iterations run (0: the model of the labelled rows alone).
    objective_ : ndarray of shape (``n_iter_`` + 1,)
        The objective at the start and after each iteration (see Notes). EM does not decrease
        it, but for the exceptions the Notes name.
        Empty for a model that only ``partial_fit`` has given rows.
    converged_ : bool
        Whether the last iteration changed the objective by at most ``tol`` per unit of weight.

    Notes
    -----
    The objective is the log posterior of the parameters, up to a constant:
    ``sum_labelled w_i log P(x_i, y_i) + lambda sum_unlabelled w_i log P(x_i) + log p(theta)``,
    with ``log P(x, c)`` as the model's ``predict_joint_log_proba`` gives it and ``p(theta)``
    the prior whose posterior mode the model's estimate is: the Dirichlet (Beta, Gamma) prior of
    alpha pseudo-counts for the discrete models and PoissonNB, none (maximum likelihood) for the
    Gaussian family. Each M-step maximises its expectation, so the objective never decreases. A
    regulariser that is not a prior -- ``var_smoothing``, ``reg_param``, ``shrinkage`` -- makes
    the M-step a slightly different map: the objective may then fall by amounts of that size.

    Missing features (NaN, in the models that take them) and missing labels combine: the E-step
    marginalises the missing features of each row, and LDA's and QDA's M-step runs their own EM
    for the missing values of the rows counted with their class weights. That inner EM completes
    a row once for each class it may belong to (its memory grows with the number of classes),
    starts afresh at each M-step and stops at the model's ``tol``: short of the M-step's maximum,
    the objective may fall (a smaller ``tol`` on the model, or ``reg_param``, helps).

    LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis model the subspace their data
    spans, leaving out the directions without spread. Where the labelled rows alone span less
    than all the rows (a feature constant among them, or fewer labelled rows than features),
    the start is a density on fewer dimensions than the models that follow, and ``objective_[0]``
    is not comparable with the later values: the objective may fall at the first iteration,
    and does not fall after it.

    A class announced in ``classes`` but carried by no labelled row has no weight at the start.
    With a class prior learned from the data (the default), its prior is 0, so no row ever
    gains a membership of it: it stays empty and is never predicted. With a fixed prior
    (``fit_prior=False``, ``class_prior`` or ``priors``), EM may give it unlabelled rows: a
    class learned from unlabelled rows alone (starting from what the model derives for a class
    without data: its smoothing, or the overall mean and spread), named by the announced label.
    ``classes`` may not hold -1.

    A CategoricalNB or MixedNB learns the categories of every row, labelled or not (with
    ``unlabeled_weight`` above 0): the E-step must score them.

    The fitted ``estimator_`` is a plain model: ``set_params(predictive=True)`` on it scores
    with the posterior predictive of the statistics EM ended with. ``partial_fit`` adds labelled
    rows to ``estimator_`` (no EM: ``n_iter_`` and ``objective_`` keep describing the last fit)
    and refuses unlabelled ones; EM needs every unlabelled row in each iteration, so ``fit``
    takes in-memory data only, not dask collections.

    References
    ----------
    Dempster, A. P., Laird, N. M. & Rubin, D. B. (1977). Maximum likelihood from incomplete data
    via the EM algorithm. Journal of the Royal Statistical Society B 39(1), 1-38.

    Nigam, K., McCallum, A. K., Thrun, S. & Mitchell, T. (2000). Text classification from
    labeled and unlabeled documents using EM. Machine Learning 39, 103-134.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import GaussianNB, SemiSupervised
    >>> X = np.array([[0.0], [0.2], [0.1], [5.0], [5.2], [4.9]])
    >>> y = np.array([0, -1, -1, 1, -1, -1])  # two labelled rows, four unlabelled
    >>> em = SemiSupervised(GaussianNB()).fit(X, y)
    >>> em.predict([[0.3], [4.5]])
    array([0, 1])
    """

    def __init__(self, estimator: BaseClassifier, *, unlabeled_weight: float = 1.0,
                 max_iter: int = 100, tol: float = 1e-3):
        self.estimator = estimator
        self.unlabeled_weight = unlabeled_weight
        self.max_iter = max_iter
        self.tol = tol

    # ----------------------------------------------------------------- parameters
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Get the parameters of this estimator (with ``deep``, also the model's, as
        ``estimator__<name>``).

        Parameters
        ----------
        deep : bool, default=True
            Also return the parameters of ``estimator``.

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        params = super().get_params()
        if deep and isinstance(self.estimator, BaseEstimator) and \
                not isinstance(self.estimator, type):
            params.update({f"estimator__{name}": value
                           for name, value in self.estimator.get_params().items()})
        return params

    def set_params(self, **params: Any):
        """Set the parameters of this estimator; ``estimator__<name>`` sets the model's.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator instance
        """
        nested = {name[len("estimator__"):]: value for name, value in params.items()
                  if name.startswith("estimator__")}
        super().set_params(**{name: value for name, value in params.items()
                              if not name.startswith("estimator__")})
        if nested:
            self.estimator.set_params(**nested)
        return self

    def _checked(self, fitting=True, estimator=None):
        """The hyperparameters EM runs with, validated (after the estimator): a dict of
        unlabeled_weight, max_iter and tol, as model files hold them. Without ``fitting`` (a
        model file's estimator, or its ``estimator_``, which may have been set to predict with
        the posterior predictive after the fit), the estimator's parameters are not held to what
        EM can fit with. ``estimator``: the one to check, if not ``self.estimator`` (fit checks
        the copy it fits, which no other thread can change)."""
        estimator = self.estimator if estimator is None else estimator
        if not isinstance(estimator, BaseClassifier):
            raise TypeError("SemiSupervised's estimator must be a fastgen classifier (an "
                            "instance, such as MultinomialNB()); got "
                            f"{estimator!r}.")
        if isinstance(estimator, ComplementNB):
            raise TypeError("SemiSupervised cannot use ComplementNB: it weighs the complement of "
                            "each class and has no model of P(x | c), so EM has no likelihood "
                            "to ascend. Use MultinomialNB.")
        params = estimator.get_params() if fitting else {}
        if params.get("predictive") is True or params.get("predictive") is np.True_:
            raise InvalidParameterError(
                "SemiSupervised fits a point estimate: use an estimator with predictive=False "
                "(set predictive=True on estimator_ after the fit to score with the posterior "
                "predictive).")
        if isinstance(params.get("alpha"), str):
            raise InvalidParameterError(
                f"SemiSupervised cannot use alpha={params['alpha']!r}: a prior chosen again at "
                "each M-step gives EM no fixed objective. Choose alpha on the labelled rows "
                "first (the alpha_ of a model fitted on them) and pass that number.")
        lam, max_iter = real_in(self.unlabeled_weight, 0.0, 1.0), int_in(self.max_iter, 1)
        tol = real_in(self.tol, 0.0, np.inf)
        if lam is None:
            raise invalid_parameter(self, "unlabeled_weight", "a float in the range [0, 1]")
        if max_iter is None:
            raise invalid_parameter(self, "max_iter", "an int in the range [1, inf)")
        if tol is None or tol == np.inf:
            raise invalid_parameter(self, "tol", "a float in the range [0, inf)")
        return {"unlabeled_weight": lam, "max_iter": max_iter, "tol": tol}

    # ----------------------------------------------------------------- fitting
    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
            classes: ArrayLike | None = None):
        """Fit the model on the labelled rows, then run EM over the unlabelled ones.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training vectors, as the model takes them (not a dask collection).
        y : array-like of shape (n_samples,)
            Target labels; the number ``-1`` marks an unlabelled row (also in an object array
            of string labels; the text ``"-1"`` is refused, as it would be fitted as a class).
            At least one row must be labelled.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows, labelled or not.
        classes : array-like, default=None
            Every label the model may predict, in any order: the labelled rows' and any more
            (see Notes for a class no row is labelled with).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        estimator = self.estimator
        model = type(estimator)(**estimator.get_params(deep=False)) if \
            isinstance(estimator, BaseClassifier) else estimator
        params = self._checked(estimator=model)
        lam = params["unlabeled_weight"]
        if is_dask_collection(X) or is_dask_collection(y):
            raise TypeError("SemiSupervised.fit takes in-memory X and y, not dask collections: "
                            "each EM iteration scores and counts every unlabelled row. Compute "
                            "them first, or fit the model itself on dask's labelled rows.")
        check_n_threads(model)
        with self._write_lock(), model._write_lock():
            shell = model._new_shell(X)
            X_valid, has_nan = model._validate_X(X, shell)
            y, listed = _as_labels(y)
            y = check_y(y, X_valid.shape[0], type(self).__name__)
            sample_weight = check_sample_weight(sample_weight, X_valid.shape[0])
            unlabelled = unlabelled_rows(y)
            labelled = np.flatnonzero(~unlabelled)
            if not len(labelled):
                raise ValueError("Every row of y is unlabelled (-1): EM needs labelled rows to "
                                 "start from and to name the classes.")
            w_l = sample_weight[labelled]
            if not w_l.sum() > 0:
                raise ValueError("The labelled rows have no weight (sample_weight is 0 on every "
                                 "one of them): EM needs labelled rows to start from and to "
                                 "name the classes.")
            # (labels listed among -1s are what they would be alone: strings, not objects)
            y_l = np.asarray(y[labelled].tolist()) if listed else y[labelled]
            known, y_idx = self._classes(y_l, classes)
            # rows of no weight count for nothing: EM leaves them out (but, as every row of X,
            # they show the model its categories, as its own fit does)
            rows_u = np.flatnonzero(unlabelled & (sample_weight > 0))
            if lam == 0 or not unlabelled.any():
                X_l = X
                if len(labelled) < len(y):  # (scipy selects them trusting the indices: a copy)
                    X_l = _take_rows(rechecked(X_valid.copy()) if sp.issparse(X_valid) else X,
                                     labelled)
                self._result = self._supervised(model, X_l, y_l, w_l, known)
                return self
            start = Members(labelled, y_idx, w_l, len(known))
            hyper = model._hyper(len(known), X_valid, shell)
            # EM scores X itself when it uses every row, else the rows it uses, selected once
            scored = None if len(labelled) + len(rows_u) == len(y) else \
                np.union1d(labelled, rows_u)
            self._result = self._em(
                model, start, lambda members: model._fitted_on(X, X_valid, has_nan, shell, known,
                                                               members, hyper),
                (X_valid, has_nan) if scored is None else _rows_of(X_valid, has_nan, scored),
                scored, rows_u, lam * sample_weight[rows_u], params,
                lambda: check_unchanged(X_valid, has_nan,
                                        **model._value_constraints(shell, False)))
        return self

    @staticmethod
    def _classes(y, classes):
        """(the sorted classes, each labelled row's index among them)."""
        if classes is None:
            return encode_labels(y)
        known = _checked_classes(classes)
        y_idx, bad = label_codes(y, known)
        if bad.any():
            raise ValueError(f"The target label(s) {np.unique(y[bad])} in y are not among the "
                             f"classes {known}.")
        return known, y_idx

    def _supervised(self, model, X_l, y_l, w_l, known):
        """The model of the labelled rows alone (lambda = 0, or no unlabelled row of weight):
        their rows X_l, labels y_l and weights w_l."""
        model.partial_fit(X_l, y_l, classes=known, sample_weight=w_l)
        fitted = model._fitted
        jll = model.predict_joint_log_proba(X_l).astype(np.float64)
        value = self._objective(model, fitted, jll, np.searchsorted(fitted.classes, y_l), w_l,
                                None, None)
        return _Result(model, 0, np.array([value]), True)

    def _em(self, model, start, fitted_on, batch, scored, rows_u, w_u, params, recheck):
        """EM from the model of the labelled rows ``start`` (Members); ``fitted_on(members)``
        is the model of the labelled rows plus the unlabelled rows' memberships. Each iteration
        scores ``batch`` (X, has_nan) once: the validated X, or its rows ``scored`` (sorted)
        when it has rows EM does not use (unlabelled ones of weight 0); the labelled rows for
        the objective, the unlabelled rows ``rows_u`` (weights ``w_u``) for it and the E-step.
        ``recheck()`` checks the values of the caller's X again (EM reads them at every
        iteration: another thread may have written to them since their check), before the model
        is published and before an objective that is not finite is blamed on the model."""
        max_iter, tol = params["max_iter"], params["tol"]
        total = float(start.weights.sum() + w_u.sum())
        objective, converged = [], False
        members = start
        marginal = np.empty(len(rows_u))
        in_l, in_u = (rows if scored is None else np.searchsorted(scored, rows)
                      for rows in (start.rows, rows_u))
        for iteration in range(max_iter + 1):
            fitted = fitted_on(members)
            jll = self._jll(model, model._params_of(fitted), fitted, batch)
            jll_l = jll[in_l]
            # E-step: the unlabelled rows' log P(x), and their posteriors, weighted, as soft
            # class memberships (scores overwritten; an exp an entry, some ten multiply-adds)
            rows, classes, weights = _counts.soft_members(
                jll, in_u, w_u, MIN_MEMBERSHIP, marginal,
                model._n_threads_for(10 * len(in_u) * jll.shape[1]))
            soft = Members(rows if scored is None else scored[rows], classes, weights,
                           len(fitted.classes))
            try:
                objective.append(self._objective(model, fitted, jll_l, start.classes,
                                                 start.weights, marginal, w_u))
            except ValueError:
                recheck()  # (a value written since the check is the error, if there is one)
                raise
            if not len(rows_u):  # no unlabelled row has weight: the start is the fixed point
                converged = True
                break
            # (the objective of a regularised model may fall: a fall is a change too)
            if iteration and abs(objective[-1] - objective[-2]) <= tol * total:
                converged = True
                break
            if iteration == max_iter:
                break
            members = start.join(soft)
        recheck()
        if not converged:
            change = abs(objective[-1] - objective[-2]) / total
            warnings.warn(f"EM did not converge in max_iter={max_iter} iterations: the last one "
                          f"changed the objective by {change:.3g} per unit of weight, more than "
                          f"tol={tol:g}. Increase max_iter (or tol).", ConvergenceWarning,
                          stacklevel=user_stacklevel())
        model._publish(fitted)
        return _Result(model, len(objective) - 1, np.array(objective), converged)

    @staticmethod
    def _jll(model, params, fitted, part):
        X, has_nan = part
        out = np.empty((X.shape[0], len(fitted.classes)), dtype=fitted.dtype)
        model._score(params, X, OUT_JLL, out, has_nan)
        return out.astype(np.float64, copy=False)

    @staticmethod
    def _objective(model, fitted, jll_l, y_idx, w_l, marginal_u, w_u):
        """The log posterior (see Notes) from the labelled rows' joint log-likelihoods and the
        unlabelled rows' log P(x) (or None); a ValueError if a row's is not finite (a
        probability of 0 under the model, or an infinite density), which leaves EM nothing to
        ascend."""
        weighed = w_l > 0  # (a row of weight 0 counts for nothing, even if impossible)
        own = jll_l[np.flatnonzero(weighed), y_idx[weighed]]
        w_l = w_l[weighed]
        bad = ~np.isfinite(own)
        if bad.any():
            raise ValueError(f"Labelled row {int(np.flatnonzero(weighed)[np.argmax(bad)])} (in "
                             "the order of the labelled rows) has no finite log-likelihood under its class, so EM's "
                             "objective is not finite: use smoothing (alpha > 0, var_smoothing "
                             "> 0).")
        with np.errstate(over="ignore", invalid="ignore"):  # (the sum is checked below)
            value = float(w_l @ own)
        if marginal_u is not None:
            bad = ~np.isfinite(marginal_u)
            if bad.any():
                raise ValueError(f"Unlabelled row {int(np.argmax(bad))} (in the order of the "
                                 "unlabelled rows) has no finite log-likelihood under the model "
                                 "(probability 0 under every class, or an infinite density), so "
                                 "EM's objective is not finite: use smoothing (alpha > 0, "
                                 "var_smoothing > 0).")
            with np.errstate(over="ignore", invalid="ignore"):
                value += float(w_u @ marginal_u)
        value += model._log_prior_density(fitted)
        if not np.isfinite(value):
            raise ValueError("EM's objective overflows float64: the rows' log-likelihoods are "
                             "finite, but their sum weighted by sample_weight is beyond 1e308. "
                             "Rescale sample_weight (or X).")
        return value

    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None):
        """Add labelled rows to ``estimator_`` (the model's own ``partial_fit``; no EM).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask DataFrame} of shape (n_samples, n_features)
            Training vectors.
        y : array-like or dask array/Series of shape (n_samples,)
            Target labels, none of them ``-1``: EM needs every unlabelled row at once (use
            ``fit``).
        classes : array-like of shape (n_classes,), default=None
            As the model's ``partial_fit``: required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._checked()
        if classes is not None:
            _checked_classes(classes)
        if is_dask_collection(y):
            check_dask_labels(y)
            unlabelled = bool((y == UNLABELLED).any().compute())
        else:
            labels = np.asarray(_as_labels(y)[0])
            unlabelled = unlabelled_rows(labels if labels.ndim == 1 else labels.ravel()).any()
        if unlabelled:
            raise ValueError("SemiSupervised.partial_fit adds labelled rows only, and y has "
                             "unlabelled rows (-1): EM needs every unlabelled row in each "
                             "iteration, so fit on all the rows instead.")
        with self._write_lock():  # (a fit or another batch beside it waits)
            result = self.__dict__.get("_result")
            model = type(self.estimator)(**self.estimator.get_params(deep=False)) \
                if result is None else result.estimator
            model.partial_fit(X, y, classes=classes, sample_weight=sample_weight)
            self._result = _Result(model, 0, np.empty(0), True) if result is None \
                else result._replace(estimator=model)
        return self

    def __copy__(self):
        """A shallow copy with a writers' lock of its own, whose ``estimator_`` is a shallow
        copy (which copies the statistics before a ``partial_fit`` changes them): a batch
        added to one is not added to the other."""
        clone = type(self).__new__(type(self))
        with self._write_lock():
            clone.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_lock"})
            result = self.__dict__.get("_result")
            if result is not None:
                clone._result = result._replace(estimator=copy.copy(result.estimator))
        return clone

    # ----------------------------------------------------------------- the fitted model
    def __sklearn_is_fitted__(self):
        return "_result" in self.__dict__

    def _more_input_tags(self):
        estimator = self.estimator
        return estimator._more_input_tags() if isinstance(estimator, BaseClassifier) \
            else super()._more_input_tags()

    def _fitted_result(self):
        check_is_fitted(self)
        return self._result

    def _part(self, name):
        """The fit's outcome, for the fitted attribute ``name`` (AttributeError before fit)."""
        result = self.__dict__.get("_result")
        if result is None:
            raise AttributeError(f"SemiSupervised.{name} is available after fit")
        return result

    estimator_ = property(lambda self: self._part("estimator_").estimator,
                          doc="The fitted model (see the class docstring).")
    n_iter_ = property(lambda self: self._part("n_iter_").n_iter,
                       doc="int: the number of EM iterations run.")
    objective_ = property(lambda self: readonly(self._part("objective_").objective),
                          doc="ndarray of shape (``n_iter_`` + 1,): the objective after each "
                              "iteration.")
    converged_ = property(lambda self: self._part("converged_").converged,
                          doc="bool: whether EM met tol.")
    classes_ = property(lambda self: self._part("classes_").estimator.classes_,
                        doc="ndarray of shape (n_classes,): the class labels.")
    n_features_in_ = property(lambda self: self._part("n_features_in_").estimator.n_features_in_,
                              doc="int: the number of features seen during fit.")
    feature_names_in_ = property(
        lambda self: self._part("feature_names_in_").estimator.feature_names_in_,
        doc="ndarray of shape (n_features,): column names, when X was a DataFrame.")

    predict = _delegated("predict")
    predict_proba = _delegated("predict_proba")
    predict_log_proba = _delegated("predict_log_proba")
    predict_joint_log_proba = _delegated("predict_joint_log_proba")
    decision_function = _delegated("decision_function")
    score = _delegated("score")

    # ----------------------------------------------------------------- model files
    def save(self, path) -> None:
        """Write the fitted meta-estimator to a model file (fastgen's format, no pickle):
        ``fastgen.load(path)`` reads it back, validating every field.

        Parameters
        ----------
        path : str or path-like
            Where to write the model.
        """
        _persist.save(self, path)

    def _file_record(self):
        """(hyperparameters, fitted state): what a model file holds of this meta-estimator."""
        result = self._fitted_result()
        template = self.estimator
        # the hyperparameters as they are now (as a pickle keeps them: a set_params after the
        # fit changed nothing fitted), and estimator_ with its own
        hyper = self._checked(fitting=False)
        if type(template) is not type(result.estimator):
            raise TypeError(f"SemiSupervised cannot save an estimator of another class "
                            f"({type(template).__name__}) than estimator_'s "
                            f"({type(result.estimator).__name__}): a load validates the "
                            "estimator's parameters on estimator_'s statistics. Fit again "
                            "first.")
        params, fitted = result.estimator._file_record()
        return ({"estimator": {"class": type(template).__name__,
                               "params": template.get_params(deep=False)}, **hyper},
                {"estimator": {"class": type(result.estimator).__name__, "params": params,
                               "state": fitted},
                 "n_iter": result.n_iter, "objective": result.objective,
                 "converged": result.converged})

    @classmethod
    def _from_file(cls, params, exported):
        """The meta-estimator a model file describes, every field validated (``load``)."""
        if not isinstance(params, dict) or set(params) != set(cls._param_names()):
            raise ValueError(f"the hyperparameters must be exactly {cls._param_names()}")
        if not isinstance(exported, dict) or set(exported) != {"estimator", "n_iter",
                                                               "objective", "converged"}:
            raise ValueError("the fitted state must have the entries estimator, n_iter, "
                             "objective and converged")
        template, inner = params["estimator"], exported["estimator"]
        if not isinstance(template, dict) or set(template) != {"class", "params"}:
            raise ValueError("the estimator must be given by its class and parameters")
        if not isinstance(inner, dict) or set(inner) != {"class", "params", "state"}:
            raise ValueError("the fitted estimator must be given by its class, parameters and "
                             "state")
        inner_cls = _estimator_class(inner["class"])
        if template["class"] != inner["class"]:
            raise ValueError("the estimator and estimator_ must be of one class")
        model = inner_cls._from_file(inner["params"], inner["state"])
        # the estimator's parameters, validated as a model of them on estimator_'s statistics
        # (a fit would validate them on its data)
        checked = inner_cls._from_file(template["params"], inner["state"])
        meta = cls(type(checked)(**checked.get_params()),
                   **{name: params[name] for name in ("unlabeled_weight", "max_iter", "tol")})
        meta._checked(fitting=False)
        meta._checked(fitting=False, estimator=model)  # (only a fit makes estimator_)
        n_iter, objective, converged = (exported[name] for name in ("n_iter", "objective",
                                                                    "converged"))
        # (n_iter is not bounded by max_iter: a set_params after the fit may have lowered it)
        if isinstance(n_iter, bool) or not isinstance(n_iter, int) or not n_iter >= 0:
            raise ValueError("n_iter must be a nonnegative integer")
        if not (isinstance(objective, np.ndarray) and objective.dtype == np.float64
                and objective.shape in ((n_iter + 1,), (0,) if n_iter == 0 else ())
                and np.isfinite(objective).all()):
            raise ValueError("objective must hold n_iter + 1 finite float64 values (none: a "
                             "model only partial_fit has given rows)")
        if not isinstance(converged, bool):
            raise ValueError("converged must be true or false")
        meta._result = _Result(model, n_iter, objective.copy(), converged)
        return meta


def _estimator_class(name):
    """The fastgen classifier a model file names (a ValueError for any other name)."""
    found = _ESTIMATORS.get(name) if isinstance(name, str) else None
    if found is None or not issubclass(found, BaseClassifier):
        raise ValueError(f"unknown estimator {name!r}")
    return found


_ESTIMATORS["SemiSupervised"] = SemiSupervised
