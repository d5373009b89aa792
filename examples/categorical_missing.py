"""Missing values in categorical and mixed data: marginalise, impute, drop rows or add a category?

fastgen's ``CategoricalNB`` takes integer category codes with a negative code (or NaN) for a missing
value, and ``MixedNB`` takes a pandas DataFrame as it is: string categories, NaN / None / pd.NA for
missing values, numeric columns modelled as Gaussians and the others as categorical. Both skip a
missing value when counting at fit time and leave its feature out of the product at predict time, which
is exact marginalisation under naive Bayes. This script compares that with the usual workarounds, on
real datasets whose missing values are genuine:

  (a) marginalise: missing values left in, at fit and at predict time (fastgen only);
  (b) impute: scikit-learn's ``SimpleImputer``, ``strategy="most_frequent"`` for categorical and
      ``strategy="mean"`` for numeric columns, fitted on the training fold, then the same model;
  (c) drop rows: the model is fitted on the training rows without any missing value. Such a model
      still needs complete input, so the *test* rows with missing values are imputed as in (b), with
      the imputer fitted on the whole training fold. Test rows are never dropped: every strategy is
      scored on the same rows;
  (d) missing category: "missing" becomes a category of its own in every categorical column that has
      missing values. A numeric column with missing values is mean-imputed and gets a boolean
      "<name> missing" column beside it (a categorical feature: ``SimpleImputer(add_indicator=True)``).
      This is a different model rather than a way of handling missing values: it uses the fact that a
      value is missing as evidence, which helps when missingness depends on the class (not at random).

Models (``--models``):

* ``CategoricalNB``: fastgen's, on integer codes (-1 = missing). The codes come from the labels seen
  in the whole dataset, and ``min_categories`` is set to their number per column (plus one for the
  "missing" category in (d)), so a category that occurs only in a test fold cannot make the model fail
  or change shape. The number of categories is metadata, not labels. Categorical datasets only.
* ``MixedNB``: fastgen's, on the DataFrame itself, with nothing encoded: the feature kinds are inferred
  from the dtypes. ``handle_unknown="ignore"``: a category not seen in the training fold is
  marginalised for that row. The categories it knows are those of the training fold, so on categorical
  data it may differ slightly from ``CategoricalNB`` (smoothing over fewer categories).
* ``sklearn CategoricalNB``: scikit-learn's, on the same codes as ``CategoricalNB`` (it cannot take
  missing values, so "n/a" under marginalise). A reference row: where both run, it equals fastgen's
  ``CategoricalNB``.

All models use their defaults otherwise (``alpha=1``, class priors from the training fold) and
``n_threads=1``.

Datasets (``--data``, by default ``../shared/data`` beside the repository; see its README.md):

* ``house-votes``: Congressional Voting Records 1984, 435 rows, 16 votes (y / n), party as the class.
  ``?`` (392 cells in 203 rows) is, in the donors' words, "not yea or nay": an abstention, a paired
  vote or the like, not an unknown value. It is treated as missing here, as is customary for this
  classic naive-Bayes dataset, and (d) shows what keeping it as a third answer is worth.
* ``mushroom``: 8,124 rows, 22 categorical features. Every missing value (2,480) is in stalk-root.
* ``soybean``: Large Soybean, 683 rows, 35 categorical features, 19 classes. The 121 incomplete rows
  belong to 5 classes, 4 of which have no complete row at all: missingness is (almost) the class.
  Dropping rows therefore loses those 4 classes, which get probability 0 (and a log-loss clipped at
  -log(machine epsilon), about 36 per row).
* ``adult``: Census Income, train and test files pooled (48,842 rows), 6 continuous + 8 categorical
  features, ``?`` in workclass, occupation and native-country. A stratified random subsample of
  ``--adult-rows`` rows (fixed seed; 0 = all) keeps the run short. MixedNB only.
* ``hypothyroid``: Thyroid disease, 3,772 rows: age and the log of the lab values TSH, T3, TT4, T4U
  and FTI (numeric), sex, 14 t/f flags and the referral source (categorical). TBG is never measured
  and is dropped, and so are the "... measured" flags, which only say whether the lab value is
  missing ((d) adds that information back). One impossible age (455) is treated as missing. The 2
  ``secondary_hypothyroid`` rows are dropped, which leaves 3 classes. MixedNB only.

Protocol: stratified 5-fold cross-validation repeated five times (``RepeatedStratifiedKFold``,
``random_state=--seed``; ``--folds`` and ``--repeats`` change that). In each fold the numeric
columns are first standardised with the training fold's mean and standard deviation over the
observed values (Gaussian ``var_smoothing`` is relative to the largest variance, and adult's fnlwgt
would otherwise dwarf every other column). The table reports the mean ± standard deviation over the
folds of the accuracy and of the log-loss (lower is better). The best strategy of each row and
metric, over all four columns, is marked with ``*``. When a model fails in some folds, the cell
reports the number of failed folds, the mean is taken over the others, and the notes give the error.

Needs scikit-learn (folds, imputer, metrics, the reference model) and pandas. Run it from the
repository root::

    python examples/categorical_missing.py              # 5 x 5 folds
    python examples/categorical_missing.py --quick      # 1 x 2 folds, adult subsampled more: a smoke test
    python examples/categorical_missing.py --data /path/to/shared/data --datasets house-votes,soybean
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # examples/, from any directory
import _common

DATASETS = ("house-votes", "mushroom", "soybean", "adult", "hypothyroid")
STRATEGIES = ("marginalise", "impute", "drop-rows", "missing-category")
MODELS = ("CategoricalNB", "MixedNB", "sklearn CategoricalNB")
CODE_MODELS = ("CategoricalNB", "sklearn CategoricalNB")  # need an all-categorical dataset
MISSING = "<missing>"  # the label of the extra category in (d)
ADULT_ROWS = 10_000
QUICK_ADULT_ROWS = 3_000
SCRIPT = Path(__file__).name


# --------------------------------------------------------------------------------------------------
# data


@dataclass
class Dataset:
    name: str
    X: object  # pandas DataFrame: categorical columns hold strings (missing: NaN), numeric ones float64
    y: np.ndarray
    note: str = ""
    numeric: list = field(default_factory=list)  # names of the numeric (Gaussian) columns
    _categories: dict = field(default_factory=dict, repr=False)  # cache of categories()

    @property
    def categorical(self) -> list:
        return [c for c in self.X.columns if c not in self.numeric]

    @property
    def all_categorical(self) -> bool:
        return not self.numeric

    def categories(self, with_missing=False) -> dict:
        """Column -> sorted labels seen in the whole dataset (+ ``MISSING`` if asked and it occurs)."""
        key = bool(with_missing)
        if key not in self._categories:
            out = {}
            for c in self.categorical:
                col = self.X[c]
                labels = sorted(col.dropna().unique())
                if with_missing and col.isna().any():
                    labels.append(MISSING)
                out[c] = labels
            self._categories[key] = out
        return self._categories[key]

    def describe(self) -> str:
        miss = self.X.isna().to_numpy()
        classes, counts = np.unique(self.y, return_counts=True)
        kinds = (f"{len(self.categorical)} categorical" if self.all_categorical
                 else f"{len(self.numeric)} numeric + {len(self.categorical)} categorical")
        if len(classes) <= 4:
            cls = f"{len(classes)} classes ({', '.join(f'{c}: {n}' for c, n in zip(classes, counts))})"
        else:
            cls = f"{len(classes)} classes ({counts.min()}-{counts.max()} rows each)"
        return (
            f"{self.name}: {self.X.shape[0]} rows, {kinds} features, {cls}; "
            f"{int(miss.sum())} missing cells ({100 * miss.mean():.1f}%), "
            f"{100 * miss.any(axis=1).mean():.1f}% of rows incomplete"
            + (f"; {self.note}" if self.note else "")
        )


def _read_csv(path, **kwargs):
    """CSV with ``?`` as the only missing-value marker (a letter such as ``n`` stays a category)."""
    import pandas as pd

    return pd.read_csv(_common.require(path), na_values=["?"], keep_default_na=False,
                       skipinitialspace=True, **kwargs)


def _split_label(df, label):
    y = df[label].to_numpy(dtype=object).astype(str)
    return df.drop(columns=label).reset_index(drop=True), y


def load_house_votes(data: Path) -> Dataset:
    df = _read_csv(data / "house_votes_84" / "house-votes-84.data", dtype=str)
    df.columns = [c.strip() for c in df.columns]  # an added header line, with spaces after commas
    X, y = _split_label(df, "Class")
    return Dataset("house-votes", X, y, note="'?' = neither yea nor nay")


MUSHROOM_COLUMNS = [
    "cap-shape", "cap-surface", "cap-color", "bruises", "odor", "gill-attachment", "gill-spacing",
    "gill-size", "gill-color", "stalk-shape", "stalk-root", "stalk-surface-above-ring",
    "stalk-surface-below-ring", "stalk-color-above-ring", "stalk-color-below-ring", "veil-type",
    "veil-color", "ring-number", "ring-type", "spore-print-color", "population", "habitat",
]


def load_mushroom(data: Path) -> Dataset:
    df = _read_csv(data / "mushroom" / "agaricus-lepiota.data", header=None,
                   names=["class"] + MUSHROOM_COLUMNS, dtype=str)
    X, y = _split_label(df, "class")
    return Dataset("mushroom", X, y, note="all missing values in stalk-root")


def load_soybean(data: Path) -> Dataset:
    df = _read_csv(data / "soybean_large" / "soybean-large.csv", dtype=str)
    X, y = _split_label(df, "class")
    return Dataset("soybean", X, y)


ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
]


def load_adult(data: Path, rows: int = ADULT_ROWS, seed: int = 0) -> Dataset:
    import pandas as pd

    dtypes = {c: (np.float64 if c in ADULT_NUMERIC else str) for c in ADULT_COLUMNS}
    parts = [_read_csv(data / "adult" / name, header=None, names=ADULT_COLUMNS, dtype=dtypes)
             for name in ("adult-train.csv", "adult-test.csv")]
    df = pd.concat(parts, ignore_index=True)
    df["income"] = df["income"].str.rstrip(".")  # the test file's labels end in a full stop
    total = len(df)
    if rows and rows < total:
        from sklearn.model_selection import train_test_split

        df, _ = train_test_split(df, train_size=rows, stratify=df["income"], random_state=seed)
        note = f"stratified subsample of {rows} of the {total} rows (train + test, seed {seed})"
    else:
        note = "train + test files pooled"
    X, y = _split_label(df, "income")
    return Dataset("adult", X, y, note=note, numeric=list(ADULT_NUMERIC))


HYPO_NUMERIC = ["age", "TSH", "T3", "TT4", "T4U", "FTI"]


def load_hypothyroid(data: Path) -> Dataset:
    df = _read_csv(data / "hypothyroid" / "hypothyroid.csv", dtype=str)
    df = df[df["Class"] != "secondary_hypothyroid"]  # 2 rows: too few to learn
    df = df.drop(columns=["TBG"] + [c for c in df.columns if c.endswith(" measured")])
    X, y = _split_label(df, "Class")
    X[HYPO_NUMERIC] = X[HYPO_NUMERIC].astype(np.float64)
    X.loc[X["age"] > 120, "age"] = np.nan  # one age of 455
    X[HYPO_NUMERIC[1:]] = np.log(X[HYPO_NUMERIC[1:]])  # skewed positive lab values
    return Dataset("hypothyroid", X, y, numeric=list(HYPO_NUMERIC),
                   note="log lab values; TBG and the 'measured' flags dropped; "
                        "secondary_hypothyroid (2 rows) dropped")


LOADERS = {"house-votes": load_house_votes, "mushroom": load_mushroom, "soybean": load_soybean,
           "adult": load_adult, "hypothyroid": load_hypothyroid}


def load(name: str, data: Path, adult_rows: int = ADULT_ROWS, seed: int = 0) -> Dataset:
    if name == "adult":
        return load_adult(data, rows=adult_rows, seed=seed)
    return LOADERS[name](data)


# --------------------------------------------------------------------------------------------------
# strategies: each maps a training and a test fold (DataFrames) to what the model is fitted on


def standardise(ds: Dataset, X_tr, X_te):
    """Numeric columns centred and scaled with the training fold's observed values."""
    if not ds.numeric:
        return X_tr, X_te
    X_tr, X_te = X_tr.copy(), X_te.copy()
    for c in ds.numeric:
        mean, std = np.nanmean(X_tr[c]), np.nanstd(X_tr[c])
        std = std if std > 0 else 1.0
        X_tr[c] = (X_tr[c] - mean) / std
        X_te[c] = (X_te[c] - mean) / std
    return X_tr, X_te


def fill_values(ds: Dataset, X_tr) -> dict:
    """Column -> the value ``SimpleImputer`` fills in: most frequent (categorical) or mean (numeric)."""
    from sklearn.impute import SimpleImputer

    fill = {}
    for columns, strategy in ((ds.categorical, "most_frequent"), (ds.numeric, "mean")):
        if columns:
            imputer = SimpleImputer(strategy=strategy, keep_empty_features=True).fit(X_tr[columns])
            fill.update(zip(columns, imputer.statistics_))
    return fill


def apply_strategy(strategy: str, ds: Dataset, X_tr, y_tr, X_te):
    """(X_train, y_train, X_test) for ``strategy``; X_test keeps every row."""
    if strategy == "marginalise":
        return X_tr, y_tr, X_te
    fill = fill_values(ds, X_tr)
    if strategy == "impute":
        return X_tr.fillna(fill), y_tr, X_te.fillna(fill)
    if strategy == "drop-rows":
        keep = ~X_tr.isna().any(axis=1).to_numpy()
        return X_tr[keep], y_tr[keep], X_te.fillna(fill)  # test rows: imputed
    if strategy == "missing-category":
        out = []
        for X in (X_tr, X_te):
            X = X.copy()
            for c in ds.categorical:
                X[c] = X[c].fillna(MISSING)
            for c in ds.numeric:
                if X_tr[c].isna().any():  # SimpleImputer(add_indicator=True): training-fold columns
                    pos = X.columns.get_loc(c) + 1
                    X.insert(pos, f"{c} missing", X[c].isna().to_numpy())
                    X[c] = X[c].fillna(fill[c])
            out.append(X)
        return out[0], y_tr, out[1]
    raise ValueError(strategy)


def encode(X, categories: dict) -> np.ndarray:
    """Integer codes (int64, -1 = missing) of an all-categorical DataFrame, by ``categories``."""
    import pandas as pd

    codes = np.empty(X.shape, dtype=np.int64)
    for j, c in enumerate(X.columns):
        codes[:, j] = pd.Index(categories[c], dtype=object).get_indexer(X[c].to_numpy(dtype=object))
    return codes


# --------------------------------------------------------------------------------------------------
# models


def make_model(model: str, n_categories=None):
    if model == "CategoricalNB":
        import fastgen

        return fastgen.CategoricalNB(min_categories=n_categories, n_threads=1)
    if model == "sklearn CategoricalNB":
        from sklearn.naive_bayes import CategoricalNB

        return CategoricalNB(min_categories=n_categories)
    if model == "MixedNB":
        import fastgen

        return fastgen.MixedNB(handle_unknown="ignore", n_threads=1)
    raise ValueError(model)


def fit_predict(model: str, strategy: str, ds: Dataset, X_tr, y_tr, X_te, classes):
    """Fit ``model`` on data already prepared by ``apply_strategy``; return test probabilities."""
    if model in CODE_MODELS:
        categories = ds.categories(with_missing=(strategy == "missing-category"))
        n_categories = np.array([len(categories[c]) for c in X_tr.columns])
        est = make_model(model, n_categories)
        est.fit(encode(X_tr, categories), y_tr)
        return _common.full_proba(est, encode(X_te, categories), classes)
    est = make_model(model).fit(X_tr, y_tr)
    return _common.full_proba(est, X_te, classes)


def applicable(model: str, strategy: str, ds: Dataset) -> bool:
    if model in CODE_MODELS and not ds.all_categorical:
        return False
    return not (model == "sklearn CategoricalNB" and strategy == "marginalise")


@dataclass
class Result:
    cells: dict  # (model, strategy) -> _common.Cell
    models: list
    missing_class_folds: int = 0  # folds where a class had no complete training row (drop-rows)


def evaluate(ds: Dataset, models, folds: int, repeats: int, seed: int) -> Result:
    from sklearn.model_selection import RepeatedStratifiedKFold

    models = [m for m in models if any(applicable(m, s, ds) for s in STRATEGIES)]
    classes = np.unique(ds.y)
    cells = {(m, s): _common.Cell(applicable=applicable(m, s, ds)) for m in models for s in STRATEGIES}
    result = Result(cells, models)
    complete = ~ds.X.isna().any(axis=1).to_numpy()
    cv = RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)
    for train, test in cv.split(np.zeros(len(ds.y)), ds.y):
        X_tr, X_te = standardise(ds, ds.X.iloc[train], ds.X.iloc[test])
        y_tr, y_te = ds.y[train], ds.y[test]
        if len(np.unique(y_tr[complete[train]])) < len(classes):
            result.missing_class_folds += 1
        for s in STRATEGIES:
            # the same data for every model, prepared once (within the first model's fold, so
            # that its warnings and errors are counted there; tried again after an error)
            prepare = functools.cache(lambda: apply_strategy(s, ds, X_tr, y_tr, X_te))
            for m in models:
                cell = result.cells[m, s]
                if cell.applicable:
                    _common.score_fold(cell, lambda: fit_predict(m, s, ds, *prepare(), classes), y_te,
                                       classes, errors=(ValueError, TypeError))
    return result


# --------------------------------------------------------------------------------------------------
# report


def format_notes(results) -> str:
    notes = []
    for ds_name, result in results.items():
        if result.missing_class_folds:
            notes.append(f"- {ds_name} / drop-rows: in {result.missing_class_folds} fold(s) a class had "
                         "no complete training row, so the models fitted without it give it probability 0")
        for (m, s), cell in result.cells.items():
            notes += _common.cell_notes(ds_name, m, s, cell)
    return "\n".join(notes)


def parse_args(argv=None):
    p = _common.make_parser(__doc__, DATASETS, MODELS)
    p.add_argument("--adult-rows", type=int, default=None,
                   help=f"stratified subsample of adult (default {ADULT_ROWS}, "
                        f"{QUICK_ADULT_ROWS} with --quick; 0 = all 48,842 rows)")
    _common.add_protocol_args(
        p, quick_help=f"smoke test: 2 folds, 1 repeat, {QUICK_ADULT_ROWS} adult rows")
    args = p.parse_args(argv)
    if args.quick:
        args.folds, args.repeats = 2, 1
    if args.adult_rows is None:
        args.adult_rows = QUICK_ADULT_ROWS if args.quick else ADULT_ROWS
    args.datasets = [d for d in args.datasets.split(",") if d]
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    _common.check_names(p, "dataset", args.datasets, DATASETS)
    _common.check_names(p, "model", args.models, MODELS)
    if args.adult_rows < 0:
        p.error("--adult-rows must be >= 0")
    return args


def run(argv=None, out=None):
    """Run the comparison; print the report to ``out`` (stdout) and return ``{dataset: Result}``."""
    out = out or sys.stdout
    args = parse_args(argv)
    data = _common.data_dir(args.data, SCRIPT, "house_votes_84, mushroom, soybean_large, adult, hypothyroid")
    _common.require_modules(SCRIPT, [
        ("sklearn", "sklearn", "folds, SimpleImputer, log_loss, the reference CategoricalNB"),
        ("pandas", "pandas", "the DataFrames given to MixedNB"),
    ])
    datasets = _common.load_datasets(
        SCRIPT, data, lambda d: load(d, data, adult_rows=args.adult_rows, seed=args.seed), args.datasets)

    n_folds = args.folds * args.repeats
    print(f"Stratified {args.folds}-fold cross-validation x {args.repeats} repeats (seed {args.seed}); "
          f"mean ± std over {n_folds} folds; * = best of the four strategies.", file=out)
    print("impute: most frequent (categorical) / mean (numeric); drop-rows: fitted on complete training "
          "rows, incomplete test rows imputed; missing-category: 'missing' as a category of its own "
          "(numeric: mean + a missing indicator).\n", file=out)
    return _common.report(
        datasets, lambda ds: evaluate(ds, args.models, args.folds, args.repeats, args.seed),
        lambda results: _common.format_table({name: r.cells for name, r in results.items()},
                                             STRATEGIES, n_folds),
        format_notes, out)


def main(argv=None) -> int:
    run(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
