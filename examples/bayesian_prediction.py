"""Bayesian prediction with few training rows: learning curves of plug-in against predictive.

A plug-in model scores with one estimate of its parameters (maximum likelihood, or a smoothed
estimate). ``predictive=True`` scores with the posterior predictive instead: the parameters are
integrated out under their posterior given the training data (Student-t densities for the
Gaussian family; for CategoricalNB the smoothed estimate *is* the predictive, so its comparison is
between smoothing choices). The difference matters when the training set is small, which is what
this script measures.

Datasets (``--data``, by default ``../shared/data`` beside the repository; see its README.md):

* ``pima``: Pima Indians Diabetes, 8 numeric features; impossible zeros are missing (NaN).
* ``breast-cancer``: Breast Cancer Wisconsin (original), 9 features; 16 ``?`` are missing.
* ``spambase``: 4,601 e-mails, 57 numeric features, no missing values.
* ``soybean``: Soybean (large), 35 categorical features, 19 classes, ``?`` missing.
* ``house-votes``: 1984 congressional votes, 16 y/n features, ``?`` missing.

Models: GaussianNB, LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis on the numeric
sets, each as the plug-in (its defaults) and with ``predictive=True`` (the default weak prior:
one pseudo-observation at the overall mean with the overall variances); CategoricalNB on the
categorical sets as the maximum-likelihood plug-in (``alpha=1e-10``), with ``alpha=1`` (the
predictive under a uniform Dirichlet prior) and with ``alpha="evidence"``.

Protocol: for each training size n (rows per class: 10, 20, 50, 100, 200; a class with fewer than
2n rows gives half of them), ``--splits`` random splits (default 20, seeded): the training rows
are drawn per class without replacement, every other row is a test row. The table reports the mean
over the splits of the test accuracy and of the log-loss (natural log; probabilities clipped at
1e-15, as scikit-learn's ``log_loss``). A model that cannot be fitted on a split (a singular
covariance) is counted in the "failed" column and left out of the means.

Run it from the repository root::

    python examples/bayesian_prediction.py              # 20 splits, about a minute
    python examples/bayesian_prediction.py --quick      # 3 splits, sizes 10 and 50
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # examples/, from any directory
import _common  # noqa: E402

SIZES = (10, 20, 50, 100, 200)
NUMERIC = ("pima", "breast-cancer", "spambase")
CATEGORICAL = ("soybean", "house-votes")
DATASETS = NUMERIC + CATEGORICAL
GAUSSIAN_MODELS = ("GaussianNB", "LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis")


def load(name, data):
    """(X, y, kind): X float64 with NaN missing (numeric), or int codes with -1 missing."""
    if name in ("pima", "breast-cancer"):
        import missing_values

        loader = missing_values.load_pima if name == "pima" else missing_values.load_breast_cancer
        ds = loader(data)
        return ds.X, ds.y, "numeric"
    if name == "spambase":
        raw = np.loadtxt(_common.require(data / "spambase" / "spambase.data"), delimiter=",")
        return raw[:, :-1], raw[:, -1].astype(int), "numeric"
    import categorical_missing

    ds = (categorical_missing.load_soybean if name == "soybean"
          else categorical_missing.load_house_votes)(data)
    return categorical_missing.encode(ds.X, ds.categories()), ds.y, "categorical"


def variants(kind, X):
    """(label, make) pairs: the models compared on a dataset of this kind."""
    import fastgen

    if kind == "categorical":
        n_categories = X.max(axis=0) + 1
        return [(f"CategoricalNB {label}", lambda a=alpha, p=predictive: fastgen.CategoricalNB(
                    alpha=a, min_categories=n_categories, predictive=p))
                for label, alpha, predictive in (("ML plug-in (alpha=1e-10)", 1e-10, False),
                                                 ("predictive (alpha=1)", 1.0, True),
                                                 ("predictive (alpha='evidence')", "evidence",
                                                  True))]
    return [(f"{name} {label}", lambda n=name, p=predictive: getattr(fastgen, n)(predictive=p))
            for name in GAUSSIAN_MODELS
            for label, predictive in (("plug-in", False), ("predictive", True))]


def split(y, n, rng):
    """Training row indices: n per class (at most half of a class), drawn without replacement."""
    rows = []
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        rows.append(rng.choice(members, size=min(n, len(members) // 2), replace=False))
    return np.concatenate(rows)


def evaluate(make, X, y, train):
    test = np.setdiff1d(np.arange(len(y)), train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(X[train], y[train])
        proba = model.predict_proba(X[test])
    column = np.searchsorted(model.classes_, y[test])
    known = (column < len(model.classes_))
    known[known] = model.classes_[column[known]] == y[test][known]
    p_true = np.zeros(len(test))
    p_true[known] = proba[np.flatnonzero(known), column[known]]
    accuracy = float(np.mean(model.classes_[proba.argmax(axis=1)] == y[test]))
    log_loss = float(-np.mean(np.log(np.clip(p_true, 1e-15, 1.0))))
    return accuracy, log_loss


def learning_curves(names, models, data, sizes, n_splits, seed):
    """{(dataset, variant, n): (mean accuracy, mean log-loss, failed splits)}."""
    results = {}
    for name in names:
        X, y, kind = load(name, data)
        for n in sizes:
            rng = np.random.default_rng([seed, n])
            splits = [split(y, n, rng) for _ in range(n_splits)]
            for label, make in variants(kind, X):
                if label.split()[0] not in models:
                    continue
                scores, failed = [], 0
                for train in splits:
                    try:
                        scores.append(evaluate(make, X, y, train))
                    except (ValueError, np.linalg.LinAlgError):
                        failed += 1
                mean = np.mean(scores, axis=0) if scores else (np.nan, np.nan)
                results[name, label, n] = (float(mean[0]), float(mean[1]), failed)
    return results


def table(results, sizes):
    lines = ["| data | model | " + " | ".join(f"n={n}: accuracy / log-loss" for n in sizes)
             + " |", "|---|---|" + "---:|" * len(sizes)]
    rows = dict.fromkeys((name, label) for name, label, _ in results)
    for name, label in rows:
        cells = []
        for n in sizes:
            accuracy, log_loss, failed = results[name, label, n]
            cell = "fails" if np.isnan(accuracy) else f"{accuracy:.3f} / {log_loss:.3f}"
            cells.append(cell + (f" ({failed} failed)" if failed and not np.isnan(accuracy)
                                 else ""))
        lines.append(f"| {name} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


MODELS = GAUSSIAN_MODELS + ("CategoricalNB",)


def main(argv=None):
    parser = _common.make_parser(__doc__, DATASETS, MODELS)
    parser.add_argument("--splits", type=int, default=20, help="random splits per size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="3 splits, sizes 10 and 50")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    models = [n.strip() for n in args.models.split(",") if n.strip()]
    _common.check_names(parser, "dataset", names, DATASETS)
    _common.check_names(parser, "model", models, MODELS)
    if any(name in CATEGORICAL for name in names):
        _common.require_modules(Path(__file__).name, [("pandas", "pandas", "reading the "
                                                       "categorical data sets")])
    data = _common.data_dir(args.data, Path(__file__).name, "the real datasets")
    sizes, n_splits = ((10, 50), 3) if args.quick else (SIZES, args.splits)
    results = learning_curves(names, models, data, sizes, n_splits, args.seed)
    print(table(results, sizes))
    return results


if __name__ == "__main__":
    try:
        main()
    except _common.DataMissing as exc:
        sys.exit(f"{Path(__file__).name}: {exc}")
