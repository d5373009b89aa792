"""Information gain (mutual information) of word presence and class, for feature selection.

One pass of the counting kernel (``count_csr`` / ``count_dense`` with ``binarize=True``) gives
the per-class document frequencies; the mutual information of each column's 2 x n_classes
contingency table follows in a few vectorised NumPy lines.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._base import MatrixLike, Members, threads_for
from ._core import _counts
from ._core._openmp import effective_n_threads
from ._validation import check_sample_weight, check_X, check_y, encode_labels

__all__ = ["information_gain"]


def information_gain(X: MatrixLike, y: ArrayLike, *, sample_weight: ArrayLike | None = None,
                     n_threads: int | None = None) -> NDArray[np.float64]:
    """Mutual information between the presence of each feature (``x > 0``) and the class.

    The information gain of feature j is ``I(1[x_j > 0]; y)`` in nats: how much knowing whether
    a word occurs in a document reduces the uncertainty about its class. It is the score used to
    select the vocabulary of a Bernoulli or multinomial naive Bayes model, and equals
    scikit-learn's ``mutual_info_classif(X > 0, y, discrete_features=True)``, computed from one
    pass over X instead of one contingency table per column.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Feature values; only whether each value is positive matters (zero, negative and
        unstored sparse entries are "absent"). NaN and infinity are rejected. CSR is read as is
        (duplicate entries of a column add up first, as in the dense matrix); other sparse
        formats are converted once.
    y : array-like of shape (n_samples,)
        Class labels (any hashable values).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples in the contingency tables (``None``: every sample counts once,
        which is scikit-learn's estimate).
    n_threads : int, default=None
        Threads for the counting pass: ``None`` means all cores, negative values count back
        from that. The result does not depend on it.

    Returns
    -------
    mi : ndarray of shape (n_features,)
        Mutual information in nats, non-negative; 0 for a feature that is present in every
        sample or in none, and for all features when y has a single class.

    See Also
    --------
    BernoulliNB : Naive Bayes on word presence, whose vocabulary this score selects.

    Notes
    -----
    With ``N_cv`` the (weighted) number of samples of class c in which the feature is present
    (v = 1) or absent (v = 0), ``N_c`` the class totals, ``N_v`` the presence totals and ``N``
    the grand total,

    .. math::

        I_j = \\sum_{c} \\sum_{v \\in \\{0, 1\\}} \\frac{N_{cv}}{N}
              \\log \\frac{N N_{cv}}{N_c N_v}, \\qquad 0 \\log 0 = 0,

    the information gain of feature selection for text (Yang & Pedersen 1997). Like scikit-learn, a result that
    rounding makes slightly negative is clipped to 0.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgen import information_gain
    >>> X = np.array([[1, 0, 3], [2, 0, 0], [0, 1, 1], [0, 1, 0]])
    >>> y = np.array(["spam", "spam", "ham", "ham"])
    >>> information_gain(X, y).round(4)
    array([0.6931, 0.6931, 0.    ])

    As the score function of scikit-learn's ``SelectKBest``:

    >>> from sklearn.feature_selection import SelectKBest
    >>> SelectKBest(information_gain, k=2).fit(X, y).get_support()
    array([ True,  True, False])
    """
    n_threads = effective_n_threads(n_threads)
    # a column stored twice in a row is present iff the sum is > 0: check_X sums duplicates
    X, _ = check_X(X, estimator_name="information_gain", allow_nan=False, allow_negative=True)
    n_samples, n_features = X.shape
    y = check_y(y, n_samples)
    if sample_weight is not None:  # MI is scale-free; max weight 1 keeps the counts in range
        sample_weight = check_sample_weight(sample_weight, n_samples)
        sample_weight = sample_weight / sample_weight.max()  # never the caller's array in place
    else:
        sample_weight = np.ones(n_samples, dtype=np.float64)

    classes, y_idx = encode_labels(y)
    n_classes = len(classes)
    rows, class_ptr, weights = Members.hard(y_idx, sample_weight, n_classes).by_class()
    present = np.zeros((n_classes, n_features), dtype=np.float64)  # N_c1
    class_count = np.zeros(n_classes, dtype=np.float64)            # N_c
    if sp.issparse(X):
        n_threads = threads_for(n_threads, X.indptr[-1])
        _counts.count_csr(X.data, X.indices, X.indptr, rows, class_ptr, weights, True, 0.0,
                          present, class_count, None, n_threads)
    else:
        n_threads = threads_for(n_threads, X.size)
        _counts.count_dense(X, rows, class_ptr, weights, True, 0.0, present, class_count,
                            n_threads)
    return _mutual_information(present, class_count)


def _mutual_information(present, class_count):
    """I(presence; class) per column from the (n_classes, n_features) presence counts N_c1 and
    the class totals N_c. Written as sum of N_cv/N log(N N_cv / (N_c N_v)), without the large
    cancelling terms of the entropy form, so that rare words keep their relative precision."""
    total = class_count.sum()
    if np.count_nonzero(class_count) <= 1:  # one class (of positive weight): no information
        return np.zeros(present.shape[1], dtype=np.float64)
    absent = class_count[:, None] - present  # N_c0; exactly 0 where every sample has the word
    mi = _cell_terms(present, class_count, present.sum(axis=0), total)
    mi += _cell_terms(absent, class_count, absent.sum(axis=0), total)
    mi /= total
    # a feature that is constant (over the weighted samples) carries no information; say so
    # exactly rather than with rounding noise (scikit-learn's single-cluster rule)
    constant = ~(present > 0).any(axis=0) | ~(absent > 0).any(axis=0)
    mi[constant] = 0.0
    return np.maximum(mi, 0.0, out=mi)


def _cell_terms(counts, class_count, value_count, total):
    """Sum over classes of N_cv log(N N_cv / (N_c N_v)), with 0 log 0 = 0."""
    nonzero = counts > 0
    ratio = np.ones_like(counts)
    # (N_cv / N_c) (N / N_v): two factors, so that extreme weights neither overflow nor underflow
    np.divide(counts, class_count[:, None], out=ratio, where=nonzero)
    spread = np.ones_like(value_count)
    np.divide(total, value_count, out=spread, where=value_count > 0)
    ratio *= spread
    np.log(ratio, out=ratio)
    ratio *= counts
    return ratio.sum(axis=0)
