"""Dense data for the Gaussian-family benchmarks: GaussianNB, LDA and QDA.

:func:`make_gaussian_blobs` draws a reproducible (fixed seed) 5-class problem in 50 dimensions:

* class ``c`` is ``N(mu_c, Sigma_c)`` with its own covariance ``Sigma_c = Q_c diag(s_c) Q_c^T``
  (``Q_c`` a random rotation, ``s_c`` log-uniform in [0.25, 4] times a per-class scale), so QDA is the
  true model, LDA and GaussianNB are misspecified, and no model is trivially exact;
* unequal priors 0.3 / 0.25 / 0.2 / 0.15 / 0.1;
* the means are spread so that the classes overlap: a fair share of rows have non-saturated posterior
  probabilities, so the comparisons of ``predict_proba`` against scikit-learn test something;
* a train and a test set of the same size (drawn independently), float64, C-contiguous, int64 labels
  ``0 .. 4`` in random order, and a copy of the test set (and of the training set) with 10% of the
  entries replaced by NaN completely at random (for fastgen's marginalisation; scikit-learn rejects NaN).

Run ``python bench/_dense.py [small|large]`` to print the shapes and scikit-learn's accuracies.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np

__all__ = ["NAN_FRACTION", "SIZES", "DenseData", "make_gaussian_blobs"]

SEED = 20_240_603
N_FEATURES = 50
N_CLASSES = 5
PRIORS = (0.3, 0.25, 0.2, 0.15, 0.1)
NAN_FRACTION = 0.10

#: number of training rows (and of test rows) for ``--bench-size``
SIZES = {"large": 200_000, "small": 20_000}


class DenseData(NamedTuple):
    name: str  # e.g. "dense-200kx50", used in the benchmark group names
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    X_train_nan: np.ndarray  # X_train with NAN_FRACTION of the entries set to NaN
    X_test_nan: np.ndarray  # X_test with NAN_FRACTION of the entries set to NaN
    classes: np.ndarray


def dataset_name(n_samples: int, n_features: int = N_FEATURES) -> str:
    n = f"{n_samples // 1000}k" if n_samples % 1000 == 0 else str(n_samples)
    return f"dense-{n}x{n_features}"


def _class_params(rng, n_features, n_classes):
    means = rng.normal(0.0, 0.35, size=(n_classes, n_features))
    chols = []
    for c in range(n_classes):
        q, r = np.linalg.qr(rng.standard_normal((n_features, n_features)))
        q *= np.sign(np.diag(r))  # a uniformly random rotation
        scale = 0.6 + 0.2 * c
        s = scale * np.exp(rng.uniform(np.log(0.25), np.log(4.0), size=n_features))
        cov = (q * s) @ q.T
        chols.append(np.linalg.cholesky(cov))
    return means, chols


def _draw(rng, n, means, chols, priors):
    y = rng.choice(len(priors), size=n, p=np.asarray(priors))
    X = np.empty((n, means.shape[1]))
    for c in range(len(priors)):
        idx = np.flatnonzero(y == c)
        X[idx] = rng.standard_normal((idx.size, means.shape[1])) @ chols[c].T + means[c]
    return X, y.astype(np.int64)


def _with_nan(rng, X, fraction):
    X = X.copy()
    X[rng.random(X.shape) < fraction] = np.nan
    return X


def make_gaussian_blobs(n_samples: int, n_features: int = N_FEATURES, n_classes: int = N_CLASSES,
                        priors=PRIORS, nan_fraction: float = NAN_FRACTION, seed: int = SEED) -> DenseData:
    """Train and test sets of ``n_samples`` rows each (see the module docstring)."""
    if len(priors) != n_classes:
        raise ValueError("len(priors) must equal n_classes")
    rng = np.random.default_rng(seed)
    means, chols = _class_params(rng, n_features, n_classes)
    X_train, y_train = _draw(rng, n_samples, means, chols, priors)
    X_test, y_test = _draw(rng, n_samples, means, chols, priors)
    return DenseData(
        name=dataset_name(n_samples, n_features),
        X_train=X_train,
        y_train=y_train,
        X_test=X_test,
        y_test=y_test,
        X_train_nan=_with_nan(rng, X_train, nan_fraction),
        X_test_nan=_with_nan(rng, X_test, nan_fraction),
        classes=np.arange(n_classes, dtype=np.int64),
    )


def _main(argv):
    size = argv[1] if len(argv) > 1 else "small"
    import time

    t0 = time.perf_counter()
    data = make_gaussian_blobs(SIZES[size])
    print(f"{data.name}: generated in {time.perf_counter() - t0:.2f} s; "
          f"train {data.X_train.shape}, test {data.X_test.shape}, "
          f"class counts {np.bincount(data.y_train).tolist()}, "
          f"NaN fraction {np.isnan(data.X_test_nan).mean():.4f}")
    try:
        from sklearn.discriminant_analysis import (
            LinearDiscriminantAnalysis,
            QuadraticDiscriminantAnalysis,
        )
        from sklearn.naive_bayes import GaussianNB
    except ImportError:
        return 0
    for est in (GaussianNB(), LinearDiscriminantAnalysis(solver="lsqr"), QuadraticDiscriminantAnalysis()):
        est.fit(data.X_train, data.y_train)
        proba = est.predict_proba(data.X_test)
        print(f"  {type(est).__name__:32s} accuracy {np.mean(proba.argmax(1) == data.y_test):.3f}; "
              f"rows with max proba < 0.99: {np.mean(proba.max(1) < 0.99):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
