"""Missing values in Gaussian generative classifiers: marginalise, impute or drop?

fastgen's ``GaussianNB``, ``LinearDiscriminantAnalysis`` and ``QuadraticDiscriminantAnalysis`` accept
NaN in ``X``. At fit time they estimate the Gaussians from the observed values: per feature for
GaussianNB, and by EM (assuming values are missing at random) for the full covariances of LDA and QDA.
At predict time they integrate the missing features out: the posterior is computed from the marginal
density of the observed features. This script compares that with the two usual workarounds, on real
datasets whose missing values are genuine:

  (a) marginalise: NaN left in X, at fit and at predict time (fastgen only);
  (b) mean-impute: scikit-learn's ``SimpleImputer(strategy="mean")`` fitted on the training fold, then
      the same fastgen model on the completed data;
  (c) drop rows: the model is fitted on the training rows that have no missing value. A model fitted
      this way still needs complete input, so the *test* rows with missing values are mean-imputed, with
      the imputer fitted on the whole training fold. Test rows are never dropped: every strategy is scored
      on the same rows.

Datasets (``--data``, by default ``../shared/data`` beside the repository; see its README.md):

* ``pima``: Pima Indians Diabetes, 768 rows, 8 features. Zeros in glucose, blood pressure, skin
  thickness, insulin and BMI are physiologically impossible and stand for missing values. They become NaN.
  Insulin is missing in 49% of the rows.
* ``breast-cancer``: Breast Cancer Wisconsin (original), 699 rows, 9 features. 16 ``?`` in bare nuclei.
  The sample ID column is dropped.
* ``horse-colic``: Horse Colic (train and test files pooled), the 7 numeric ("linear") features: rectal
  temperature, pulse, respiratory rate, nasogastric reflux pH, packed cell volume, total protein and
  abdominocentesis total protein. The target is outcome (lived / died / euthanized). The one row without
  an outcome is dropped. Few rows are complete.
* ``hypothyroid``: Thyroid disease, age and the 5 lab values TSH, T3, TT4, T4U and FTI. TBG is dropped
  because it is never measured. The lab values are log-transformed because they are strongly skewed.
  One impossible age (455) is treated as missing. The 2 ``secondary_hypothyroid`` rows are dropped,
  which leaves 3 classes.
* ``pima+MCARxx%`` (``--mcar``, by default 20% and 40%): Pima with, in addition, each observed value
  removed independently with probability xx% (completely at random, fixed seed). The MCAR mask is drawn
  once, and every strategy and fold sees the same data. This shows what happens as missingness grows.

Protocol: stratified 5-fold cross-validation repeated five times (``RepeatedStratifiedKFold``,
``random_state=--seed``; ``--folds`` and ``--repeats`` change that). In each fold, the features are
first standardised with the training fold's mean and standard deviation, computed on the observed
values. This matters only for QDA's ``reg_param``, which shrinks towards the identity matrix. Then the
strategy is applied. The table reports
the mean ± standard deviation over the folds of the accuracy and of the log-loss (lower is better). The
best strategy for each metric is marked with ``*``. When a model cannot be fitted in some folds, for
example because too few complete rows remain for a non-singular covariance, the cell reports the number
of failed folds, and the mean is taken over the other folds.

Needs scikit-learn, for the folds, the imputer and the metrics. Run it from the repository root::

    python examples/missing_values.py                # 5 x 5 folds, about 20 seconds
    python examples/missing_values.py --quick        # 1 x 2 folds, 20% MCAR only: a smoke test

Most of the time goes into the EM fits of LDA and QDA with NaN (the "marginalise" column), on the
Pima sets with extra missing values and on Horse Colic, where EM needs 50-300 iterations.
    python examples/missing_values.py --data /path/to/shared/data --datasets pima,hypothyroid
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # examples/, from any directory
import _common

DATASETS = ("pima", "breast-cancer", "horse-colic", "hypothyroid")
STRATEGIES = ("marginalise", "mean-impute", "drop-rows")
MODELS = ("GaussianNB", "LDA", "QDA")
QDA_REG_PARAM = 0.1
SCRIPT = Path(__file__).name


# --------------------------------------------------------------------------------------------------
# data


@dataclass
class Dataset:
    name: str
    X: np.ndarray  # float64, NaN = missing
    y: np.ndarray
    feature_names: list
    note: str = ""

    def describe(self) -> str:
        miss = np.isnan(self.X)
        classes, counts = np.unique(self.y, return_counts=True)
        return (
            f"{self.name}: {self.X.shape[0]} rows, {self.X.shape[1]} features, {len(classes)} classes "
            f"({', '.join(f'{c}: {n}' for c, n in zip(classes, counts))}); "
            f"{100 * miss.mean():.1f}% of values missing, {100 * miss.any(axis=1).mean():.1f}% of rows "
            f"incomplete ({int((~miss.any(axis=1)).sum())} complete rows)"
            + (f"; {self.note}" if self.note else "")
        )


def _to_float(tokens) -> np.ndarray:
    return np.array([[np.nan if t == "?" else float(t) for t in row] for row in tokens])


def load_pima(data: Path) -> Dataset:
    path = _common.require(data / "pima_diabetes" / "pima-indians-diabetes.csv")
    raw = np.loadtxt(path, delimiter=",")
    X, y = raw[:, :8].copy(), raw[:, 8].astype(int)
    names = ["pregnancies", "glucose", "blood_pressure", "skin_thickness", "insulin", "bmi",
             "pedigree", "age"]
    for j in (1, 2, 3, 4, 5):  # a zero here is physiologically impossible: missing
        X[X[:, j] == 0, j] = np.nan
    return Dataset("pima", X, y, names, note="zeros in glucose, BP, skin, insulin, BMI -> NaN")


def load_breast_cancer(data: Path) -> Dataset:
    path = _common.require(data / "breast_cancer_wisconsin" / "breast-cancer-wisconsin.data")
    with open(path, encoding="ascii") as f:
        rows = [line.strip().split(",") for line in f if line.strip()]
    X = _to_float([r[1:10] for r in rows])
    y = np.array([{"2": "benign", "4": "malignant"}[r[10]] for r in rows])
    names = ["clump", "size_unif", "shape_unif", "adhesion", "epith_size", "bare_nuclei",
             "chromatin", "nucleoli", "mitoses"]
    return Dataset("breast-cancer", X, y, names)


HORSE_NUMERIC = {  # 0-based column -> name (the "linear" attributes of horse-colic.names)
    3: "rectal_temp", 4: "pulse", 5: "respiratory_rate", 15: "nasogastric_reflux_ph",
    18: "packed_cell_volume", 19: "total_protein", 21: "abdominocentesis_protein",
}
HORSE_OUTCOME = 22


def load_horse_colic(data: Path) -> Dataset:
    rows = []
    for name in ("horse-colic.data", "horse-colic-test.data"):
        with open(_common.require(data / "horse_colic" / name), encoding="ascii") as f:
            lines = f.read().splitlines()[1:]  # an added header line
        rows += [line.split() for line in lines if line.strip()]
    rows = [r for r in rows if r[HORSE_OUTCOME] != "?"]
    X = _to_float([[r[j] for j in HORSE_NUMERIC] for r in rows])
    y = np.array([{"1": "lived", "2": "died", "3": "euthanized"}[r[HORSE_OUTCOME]] for r in rows])
    return Dataset("horse-colic", X, y, list(HORSE_NUMERIC.values()),
                   note="train + test files, the 7 numeric features")


HYPO_FEATURES = ("age", "TSH", "T3", "TT4", "T4U", "FTI")


def load_hypothyroid(data: Path) -> Dataset:
    path = _common.require(data / "hypothyroid" / "hypothyroid.csv")
    with open(path, encoding="ascii", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [r for r in reader if r]
    cols = [header.index(n) for n in HYPO_FEATURES]
    label = header.index("Class")
    rows = [r for r in rows if r[label] != "secondary_hypothyroid"]  # 2 rows: too few to learn
    X = _to_float([[r[j] for j in cols] for r in rows])
    X[X[:, 0] > 120, 0] = np.nan  # one age of 455
    X[:, 1:] = np.log(X[:, 1:])  # skewed positive lab values
    y = np.array([r[label] for r in rows])
    return Dataset("hypothyroid", X, y, list(HYPO_FEATURES),
                   note="log lab values; secondary_hypothyroid (2 rows) dropped")


LOADERS = {"pima": load_pima, "breast-cancer": load_breast_cancer,
           "horse-colic": load_horse_colic, "hypothyroid": load_hypothyroid}


def with_mcar(ds: Dataset, fraction: float, seed: int) -> Dataset:
    """``ds`` with every observed value removed independently with probability ``fraction``."""
    rng = np.random.default_rng(seed)
    X = ds.X.copy()
    X[rng.random(X.shape) < fraction] = np.nan
    return Dataset(f"{ds.name}+MCAR{round(100 * fraction)}%", X, ds.y, ds.feature_names,
                   note=f"+{round(100 * fraction)}% of the observed values removed at random")


# --------------------------------------------------------------------------------------------------
# models and strategies


def make_model(name: str):
    import fastgen

    if name == "GaussianNB":
        return fastgen.GaussianNB(n_threads=1)
    if name == "LDA":
        return fastgen.LinearDiscriminantAnalysis(covariance="full", n_threads=1)
    if name == "QDA":
        return fastgen.QuadraticDiscriminantAnalysis(reg_param=QDA_REG_PARAM, n_threads=1)
    raise ValueError(name)


def _standardise(X_train, X_test):
    mean = np.nanmean(X_train, axis=0)
    std = np.nanstd(X_train, axis=0)
    std[~(std > 0)] = 1.0
    return (X_train - mean) / std, (X_test - mean) / std


def run_strategy(strategy, model, X_tr, y_tr, X_te, classes):
    """Fit ``model`` on the training fold with ``strategy``; return test probabilities."""
    from sklearn.impute import SimpleImputer

    est = make_model(model)
    if strategy == "marginalise":
        return _common.full_proba(est.fit(X_tr, y_tr), X_te, classes)
    imputer = SimpleImputer(strategy="mean").fit(X_tr)
    X_te = imputer.transform(X_te)
    if strategy == "mean-impute":
        est.fit(imputer.transform(X_tr), y_tr)
    elif strategy == "drop-rows":
        keep = ~np.isnan(X_tr).any(axis=1)
        est.fit(X_tr[keep], y_tr[keep])  # test rows: mean-imputed above
    else:
        raise ValueError(strategy)
    return _common.full_proba(est, X_te, classes)


@dataclass
class Cell(_common.Cell):
    """The scores of one (model, strategy), with the drop-rows folds that lacked a class."""

    missing_class_folds: int = 0  # folds where a class had no complete training row (drop-rows)


def evaluate(ds: Dataset, models, folds: int, repeats: int, seed: int) -> dict:
    from sklearn.model_selection import RepeatedStratifiedKFold

    classes = np.unique(ds.y)
    cells = {(m, s): Cell() for m in models for s in STRATEGIES}
    cv = RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)
    for train, test in cv.split(ds.X, ds.y):
        X_tr, X_te = _standardise(ds.X[train], ds.X[test])
        y_tr, y_te = ds.y[train], ds.y[test]
        complete_classes = np.unique(y_tr[~np.isnan(X_tr).any(axis=1)])
        for (m, s), cell in cells.items():
            if s == "drop-rows" and len(complete_classes) < len(classes):
                cell.missing_class_folds += 1
            _common.score_fold(cell, lambda: run_strategy(s, m, X_tr, y_tr, X_te, classes), y_te,
                               classes, errors=(ValueError, np.linalg.LinAlgError))
    return cells


# --------------------------------------------------------------------------------------------------
# report


def format_notes(results) -> str:
    notes = []
    for ds_name, cells in results.items():
        for (m, s), cell in cells.items():
            extra = []
            if s == "drop-rows" and cell.missing_class_folds and m == MODELS[0]:
                extra.append(f"- {ds_name} / drop-rows: in {cell.missing_class_folds} fold(s) a class "
                             "had no complete training row, so those models give it probability 0")
            notes += _common.cell_notes(ds_name, m, s, cell, extra)
    return "\n".join(notes)


def parse_args(argv=None):
    p = _common.make_parser(__doc__, DATASETS, MODELS)
    p.add_argument("--mcar", default="0.2,0.4",
                   help="extra MCAR fractions for Pima, comma-separated; '' for none (default: 0.2,0.4)")
    _common.add_protocol_args(p, quick_help="smoke test: 2 folds, 1 repeat, MCAR 20%% only")
    args = p.parse_args(argv)
    if args.quick:
        args.folds, args.repeats, args.mcar = 2, 1, "0.2"
    args.datasets = [d for d in args.datasets.split(",") if d]
    args.models = [m for m in args.models.split(",") if m]
    args.mcar = [float(f) for f in args.mcar.split(",") if f]
    _common.check_names(p, "dataset", args.datasets, DATASETS)
    _common.check_names(p, "model", args.models, MODELS)
    if args.mcar and "pima" not in args.datasets:
        args.mcar = []
    return args


def run(argv=None, out=None):
    """Run the comparison; print the report to ``out`` (stdout) and return ``{dataset: cells}``."""
    out = out or sys.stdout
    args = parse_args(argv)
    data = _common.data_dir(args.data, SCRIPT, "pima_diabetes, breast_cancer_wisconsin, horse_colic, "
                                               "hypothyroid")
    _common.require_modules(SCRIPT, [("sklearn", "scikit-learn", "folds, SimpleImputer, log_loss")])
    datasets = _common.load_datasets(SCRIPT, data, lambda d: LOADERS[d](data), args.datasets)
    if args.mcar:
        pima = next(d for d in datasets if d.name == "pima")
        datasets += [with_mcar(pima, f, seed=args.seed + i) for i, f in enumerate(args.mcar)]

    n_folds = args.folds * args.repeats
    print(f"Stratified {args.folds}-fold cross-validation x {args.repeats} repeats (seed {args.seed}); "
          f"QDA reg_param={QDA_REG_PARAM}; mean ± std over {n_folds} folds; * = best strategy.", file=out)
    print("drop-rows: fitted on complete training rows; incomplete test rows are mean-imputed.\n", file=out)
    return _common.report(
        datasets, lambda ds: evaluate(ds, args.models, args.folds, args.repeats, args.seed),
        lambda results: _common.format_table(results, STRATEGIES, n_folds), format_notes, out)


def main(argv=None) -> int:
    run(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
