"""Few-line NumPy/SciPy oracles for the kernels (tests only; never shipped)."""
import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def values(X, binarize, threshold):
    X = dense(X).astype(np.float64)
    return (X > threshold).astype(np.float64) if binarize else X


def count_reference(X, y_idx, sample_weight, n_classes, binarize=False, threshold=0.0):
    """(feature_count, class_count) as weighted sums per class."""
    V = values(X, binarize, threshold)
    Y = np.zeros((len(y_idx), n_classes))
    Y[np.arange(len(y_idx)), y_idx] = sample_weight
    return Y.T @ V, Y.sum(axis=0)


def jll_linear_reference(X, table, bias, binarize=False, threshold=0.0, kind=0):
    """bias + sum_j v(x_j) table[j] (zeros skipped), then jll / log-posterior / posterior."""
    V = values(X, binarize, threshold)
    jll = np.tile(np.asarray(bias, dtype=np.float64), (V.shape[0], 1))
    for i, j in zip(*np.nonzero(V)):
        jll[i] += V[i, j] * np.asarray(table[j], dtype=np.float64)
    if kind == 0:
        return jll
    log_proba = jll - logsumexp(jll, axis=1, keepdims=True)
    return log_proba if kind == 1 else np.exp(log_proba)
