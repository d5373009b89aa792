"""Learning from unlabelled data: semi-supervised EM against the labelled rows alone.

``fastgen.SemiSupervised`` fits a generative model to labelled and unlabelled rows together by
expectation-maximisation (Nigam, McCallum, Thrun & Mitchell 2000): start from the model fitted on
the labelled rows, then repeatedly give every unlabelled row to every class in proportion to its
posterior (E-step) and refit on those soft counts plus the labelled rows (M-step).
``unlabeled_weight`` (lambda) scales the unlabelled rows' weight; lambda = 0 is the labelled rows
alone. This script measures what the unlabelled rows are worth, on real data, with few labels.

Datasets (``--data``, by default ``../shared/data`` beside the repository; see its README.md):

* ``newsgroups``: 20 Newsgroups "bydate": the 11,314 training posts are the pool (a few labelled,
  the rest unlabelled), the 7,532 test posts the test set; 20 classes.
* ``sms``: SMS Spam Collection, a random 80/20 split (fixed seed): 4,459 messages in the pool,
  1,115 for testing; 2 classes (13% spam).
* ``spambase``: 4,601 e-mails, 57 numeric features, a random 2/3 - 1/3 split (fixed seed): 3,067
  in the pool, 1,534 for testing; 2 classes (39% spam).

Text is vectorised with ``fastgen.text.CountVectorizer(stop_words="english", min_df=3)``, fitted
on the pool (the unlabelled posts' words are known without their labels): 38,563 words for 20
Newsgroups, 2,225 for SMS. The text models are ``MultinomialNB(alpha=0.1)``: with alpha = 1 the
38,563 pseudo-counts of a class outweigh the few thousand words of its handful of labelled posts.
Spambase's features are heavy-tailed frequencies and counts: they are taken as log(1 + x), then
standardised with the pool's means and standard deviations, for ``GaussianNB()`` and
``QuadraticDiscriminantAnalysis(reg_param=0.5)`` (a class has fewer labelled rows than features).

Protocol: for each amount of labels (text: 1, 2, 5 and 10% of the pool; spambase: 10, 25 and 100
rows per class), ``--draws`` random draws (default 5, seeded): the labelled rows are drawn per
class without replacement (stratified: round(fraction x class size) rows, at least one, so every
class has a label), every other pool row is unlabelled. Each draw fits:

* ``labelled only``: the model fitted on the labelled rows;
* ``EM, lambda=1``: ``SemiSupervised(model)``, every unlabelled row weighing as much as a labelled one;
* ``EM, lambda chosen``: a stratified third of the labelled rows is held out (at least one row per
  class stays in), ``SemiSupervised(model, unlabeled_weight=lambda)`` is fitted on the rest plus the
  unlabelled rows for each lambda in 0, 0.01, 0.03, 0.1, 0.3 and 1 (0: the labelled rows alone), the
  lambda with the best held-out accuracy is kept (ties: the higher mean log-probability of the true
  labels), and the model is refitted with it on all the labelled rows;
* ``self-training``: scikit-learn's ``SelfTrainingClassifier`` (its defaults: threshold 0.75, at most
  10 rounds) over scikit-learn's ``MultinomialNB(alpha=0.1)`` or ``GaussianNB()``, which compute
  the same models as fastgen's, and over fastgen's QDA (scikit-learn's refuses a class covariance of
  rank below the number of features, ``reg_param`` or not).

The table gives the mean ± standard deviation over the draws of the test accuracy, and in
parentheses the mean wall time of the fit (for ``lambda chosen``: the whole search and the refit),
with ``--n-threads`` threads for fastgen (default 1; scikit-learn's naive Bayes has one thread).

Needs scikit-learn (self-training). Run it from the repository root::

    python examples/semi_supervised.py              # 5 draws, about a minute
    python examples/semi_supervised.py --quick      # 2 draws, one amount of labels per dataset
"""

from __future__ import annotations

import gzip
import json
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # examples/, from any directory
import _common  # noqa: E402

DATASETS = ("newsgroups", "sms", "spambase")
MODELS = ("MultinomialNB", "GaussianNB", "QuadraticDiscriminantAnalysis")
METHODS = ("labelled only", "EM, lambda=1", "EM, lambda chosen", "self-training")
LAMBDAS = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0)
#: labels kept: fractions of each class (text), rows per class (spambase); and with --quick
AMOUNTS = {"newsgroups": (0.01, 0.02, 0.05, 0.10), "sms": (0.01, 0.02, 0.05, 0.10),
           "spambase": (10, 25, 100)}
QUICK_AMOUNTS = {"newsgroups": (0.02,), "sms": (0.01,), "spambase": (10,)}
ALPHA = 0.1
REG_PARAM = 0.5


@dataclass
class Task:
    """One dataset: the pool (labels of every row, most of them to be hidden) and the test set;
    labels are codes 0 .. n_classes - 1."""

    name: str
    X_pool: object
    y_pool: np.ndarray
    X_test: object
    y_test: np.ndarray
    classes: np.ndarray
    models: tuple  # model names

    def describe(self) -> str:
        return (f"{self.name}: pool {self.X_pool.shape[0]:,} x {self.X_pool.shape[1]:,}, "
                f"test {self.X_test.shape[0]:,}, {len(self.classes)} classes")


def _vectorise(name, texts_pool, labels_pool, texts_test, labels_test):
    from fastgen.text import CountVectorizer

    vectoriser = CountVectorizer(stop_words="english", min_df=3)
    X_pool = vectoriser.fit_transform(texts_pool)
    classes, y = np.unique(np.concatenate([labels_pool, labels_test]), return_inverse=True)
    return Task(name, X_pool, y[:len(labels_pool)], vectoriser.transform(texts_test),
                y[len(labels_pool):], classes, ("MultinomialNB",))


def _read_jsonl_gz(path):
    texts, labels = [], []
    with gzip.open(_common.require(path), "rt", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            texts.append(record["text"])
            labels.append(record["label"])
    return texts, np.array(labels)


def _split(n, test_fraction, seed):
    """(pool rows, test rows): a random split of range(n), both sorted."""
    perm = np.random.default_rng(seed).permutation(n)
    n_test = int(round(test_fraction * n))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def load(name, data, seed=0) -> Task:
    if name == "newsgroups":
        folder = data / "newsgroups20"
        pool = _read_jsonl_gz(folder / "20news-bydate-train.jsonl.gz")
        test = _read_jsonl_gz(folder / "20news-bydate-test.jsonl.gz")
        return _vectorise(name, *pool, *test)
    if name == "sms":
        text = _common.require(data / "sms_spam" / "SMSSpamCollection").read_text(encoding="utf-8")
        labels, texts = zip(*(line.split("\t", 1) for line in text.split("\n") if line))
        labels = np.array(labels)
        pool, test = _split(len(texts), 0.2, seed)
        return _vectorise(name, [texts[i] for i in pool], labels[pool],
                          [texts[i] for i in test], labels[test])
    raw = np.loadtxt(_common.require(data / "spambase" / "spambase.data"), delimiter=",")
    X, y = np.log1p(raw[:, :-1]), raw[:, -1].astype(np.intp)
    pool, test = _split(len(y), 1 / 3, seed)
    mean, std = X[pool].mean(axis=0), X[pool].std(axis=0)
    X = (X - mean) / std
    return Task(name, X[pool], y[pool], X[test], y[test], np.array(["ham", "spam"]),
                ("GaussianNB", "QuadraticDiscriminantAnalysis"))


def make_model(name, n_threads):
    """fastgen's model of this name, with the settings of the module docstring."""
    import fastgen

    if name == "MultinomialNB":
        return fastgen.MultinomialNB(alpha=ALPHA, n_threads=n_threads)
    if name == "GaussianNB":
        return fastgen.GaussianNB(n_threads=n_threads)
    return fastgen.QuadraticDiscriminantAnalysis(reg_param=REG_PARAM, n_threads=n_threads)


def self_training(name, n_threads):
    """scikit-learn's SelfTrainingClassifier (defaults) over the same model."""
    from sklearn import naive_bayes
    from sklearn.semi_supervised import SelfTrainingClassifier

    inner = {"MultinomialNB": lambda: naive_bayes.MultinomialNB(alpha=ALPHA),
             "GaussianNB": naive_bayes.GaussianNB}.get(name, lambda: make_model(name, n_threads))
    return SelfTrainingClassifier(inner())


def draw_labelled(y, amount, rng):
    """Stratified labelled rows: per class ``amount`` rows (an int) or round(amount x class size),
    at least one, drawn without replacement."""
    rows = []
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        k = amount if isinstance(amount, int) else max(1, int(round(amount * len(members))))
        rows.append(rng.choice(members, size=min(k, len(members)), replace=False))
    return np.sort(np.concatenate(rows))


def hold_out(y, rows, rng):
    """(fit rows, held-out rows): a stratified third of ``rows`` held out, at least one row of
    each class left to fit."""
    held = []
    for c in np.unique(y[rows]):
        members = rows[y[rows] == c]
        held.append(rng.choice(members, size=min(len(members) // 3, len(members) - 1),
                               replace=False))
    held = np.sort(np.concatenate(held))
    return np.setdiff1d(rows, held), held


def semi_labels(y, labelled):
    """y with -1 for every row not in ``labelled``."""
    out = np.full(len(y), -1)
    out[labelled] = y[labelled]
    return out


def choose_lambda(make, X, y, labelled, rng):
    """(the lambda of LAMBDAS with the best held-out accuracy, ties broken by the mean
    log-probability of the true labels; its model refitted on every labelled row)."""
    import fastgen

    fit_rows, held = hold_out(y, labelled, rng)
    rest = np.setdiff1d(np.arange(len(y)), held)  # the held-out rows are left out, not unlabelled
    y_fit = semi_labels(y, fit_rows)[rest]
    scores = []
    for lam in LAMBDAS:
        model = fastgen.SemiSupervised(make(), unlabeled_weight=lam).fit(X[rest], y_fit)
        log_proba = model.predict_log_proba(X[held])
        column = np.searchsorted(model.classes_, y[held])
        scores.append((float(np.mean(model.classes_[log_proba.argmax(axis=1)] == y[held])),
                       float(np.mean(log_proba[np.arange(len(held)), column]))))
    lam = LAMBDAS[max(range(len(LAMBDAS)), key=scores.__getitem__)]
    model = fastgen.SemiSupervised(make(), unlabeled_weight=lam).fit(X, semi_labels(y, labelled))
    return lam, model


@dataclass
class Result:
    """One (method) over the draws."""

    accuracy: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    n_labelled: list = field(default_factory=list)
    lambdas: list = field(default_factory=list)  # "EM, lambda chosen" only
    n_iter: list = field(default_factory=list)  # the EM methods (of the final fit)
    warnings: dict = field(default_factory=dict)  # "Category: message" -> count


def run_method(method, task, model_name, labelled, rng, n_threads, result):
    """Fit ``method`` on the pool with only ``labelled`` rows' labels; add its test accuracy, wall
    time and warnings to ``result``."""
    import fastgen

    X, y = task.X_pool, task.y_pool
    make = lambda: make_model(model_name, n_threads)  # noqa: E731
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        if method == "labelled only":
            model = make().fit(X[labelled], y[labelled])
        elif method == "EM, lambda=1":
            model = fastgen.SemiSupervised(make()).fit(X, semi_labels(y, labelled))
        elif method == "EM, lambda chosen":
            lam, model = choose_lambda(make, X, y, labelled, rng)
            result.lambdas.append(lam)
        else:
            model = self_training(model_name, n_threads).fit(X, semi_labels(y, labelled))
        result.seconds.append(time.perf_counter() - start)
    for w in caught:
        key = f"{w.category.__name__}: {str(w.message).splitlines()[0][:100]}"
        result.warnings[key] = result.warnings.get(key, 0) + 1
    if method.startswith("EM"):
        result.n_iter.append(model.n_iter_)
    result.accuracy.append(float(np.mean(model.predict(task.X_test) == task.y_test)))
    result.n_labelled.append(len(labelled))


def evaluate(task, models, amounts, n_draws, seed, n_threads):
    """{(model, amount): {method: Result}} for one dataset."""
    results = {}
    for model_name in (m for m in task.models if m in models):
        # untimed: the first fit of a model pays for imports and first touches of its code
        warm_up = draw_labelled(task.y_pool, amounts[0], np.random.default_rng(seed))
        make_model(model_name, n_threads).fit(task.X_pool[warm_up], task.y_pool[warm_up])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self_training(model_name, n_threads).fit(task.X_pool,
                                                     semi_labels(task.y_pool, warm_up))
        for k, amount in enumerate(amounts):
            cells = results[model_name, amount] = {m: Result() for m in METHODS}
            for draw in range(n_draws):
                rng = np.random.default_rng([seed, k, draw])
                labelled = draw_labelled(task.y_pool, amount, rng)
                for method in METHODS:
                    run_method(method, task, model_name, labelled, rng, n_threads,
                               cells[method])
    return results


def _seconds(s):
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.1f} s"


def _amount(amount, result):
    n = int(np.mean(result.n_labelled))
    return f"{amount:.0%} ({n:,})" if isinstance(amount, float) else f"{amount}/class ({n:,})"


def table(results) -> str:
    """One markdown row per (dataset, model, amount of labels): accuracy ± std (mean fit time)
    for every method; the best mean accuracy of a row is marked with ``*``; then the median
    lambda chosen (its range over the draws)."""
    lines = ["| data | model | labelled | " + " | ".join(METHODS) + " | lambda chosen |",
             "|---|---|---|" + "---:|" * (len(METHODS) + 1)]
    for name, by_model in results.items():
        for (model, amount), cells in by_model.items():
            best = max(METHODS, key=lambda m: np.mean(cells[m].accuracy))
            row = [name, model, _amount(amount, cells[METHODS[0]])]
            for m in METHODS:
                c = cells[m]
                row.append(f"{'*' if m == best else ''}{np.mean(c.accuracy):.3f} ± "
                           f"{np.std(c.accuracy):.3f} ({_seconds(np.mean(c.seconds))})")
            lams = cells["EM, lambda chosen"].lambdas
            row.append(f"{np.median(lams):g} ({min(lams):g}-{max(lams):g})")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def notes(results) -> str:
    """EM's iterations and every warning, by (dataset, model, amount, method)."""
    lines = []
    for name, by_model in results.items():
        for (model, amount), cells in by_model.items():
            for method, c in cells.items():
                where = f"- {name} / {model} / {_amount(amount, c)} / {method}"
                if c.n_iter:
                    lines.append(f"{where}: EM iterations {min(c.n_iter)}-{max(c.n_iter)}")
                lines += [f"{where}: warning x{n}: {key}" for key, n in c.warnings.items()]
    return "\n".join(lines)


def main(argv=None):
    parser = _common.make_parser(__doc__, DATASETS, MODELS)
    parser.add_argument("--draws", type=int, default=5, help="random draws of the labels")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-threads", type=int, default=1, help="fastgen's n_threads")
    parser.add_argument("--quick", action="store_true",
                        help="2 draws, one amount of labels per dataset")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    models = [n.strip() for n in args.models.split(",") if n.strip()]
    _common.check_names(parser, "dataset", names, DATASETS)
    _common.check_names(parser, "model", models, MODELS)
    _common.require_modules(Path(__file__).name, [("sklearn", "scikit-learn", "self-training")])
    data = _common.data_dir(args.data, Path(__file__).name, "20 Newsgroups, SMS spam, spambase")
    amounts, n_draws = (QUICK_AMOUNTS, 2) if args.quick else (AMOUNTS, args.draws)
    tasks = _common.load_datasets(Path(__file__).name, data, lambda n: load(n, data, args.seed),
                                  names)
    return _common.report(
        tasks, lambda task: evaluate(task, models, amounts[task.name], n_draws, args.seed,
                                     args.n_threads),
        table, notes, sys.stdout)


if __name__ == "__main__":
    main()
