"""Command line: ``fastgen {train,predict,evaluate,bench,demo,info}`` (also ``python -m fastgen``).

Data files are svmlight/libsvm (sparse counts) or CSV (numbers; an empty field is a missing
value), read in batches so that files larger than memory train and score. Errors are one line:
``fastgen: error: train.svm:17: index 0 is below 1 (one-based indices)``.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import time

import numpy as np

DESCRIPTION = """\
Fast, exact generative classifiers (naive Bayes, LDA, QDA) from the command line.

  fastgen train MultinomialNB train.svm -o spam.fgm     learn a model from a file, save it
  fastgen predict spam.fgm new.svm -o predictions.csv  label new data, batch by batch
  fastgen evaluate spam.fgm test.svm                   accuracy and confusion matrix
  fastgen bench MultinomialNB train.svm test.svm       fastgen against scikit-learn
  fastgen demo                                         spam filtering on bundled data

Data files: svmlight/libsvm ("label index:value ...", one-based indices; .gz read through gzip)
for sparse counts, or CSV of numbers with a header and the label in the last column (empty
field = missing). The format follows the extension (.csv is CSV, anything else svmlight) unless --format says.
"""


class CommandError(Exception):
    """A problem to report in one line (bad file, bad option), exit status 2."""


def _models():
    import fastgen
    from fastgen._base import BaseClassifier

    return {name: getattr(fastgen, name) for name in fastgen.__all__
            if isinstance(getattr(fastgen, name), type)
            and issubclass(getattr(fastgen, name), BaseClassifier)}


def _data_options(parser):
    group = parser.add_argument_group("data file options")
    group.add_argument("--format", choices=("auto", "svmlight", "csv"), default="auto",
                       help="file format (default: from the extension: .csv is CSV, else svmlight)")
    group.add_argument("--zero-based", action="store_true",
                       help="svmlight column indices start at 0 (default: at 1, as libsvm's)")
    group.add_argument("--label-column", default="-1",
                       help="CSV: the label column, a position or a header name (default: last)")
    group.add_argument("--no-header", action="store_true", help="CSV: the first line is data")
    group.add_argument("--delimiter", default=",", help="CSV: field separator (default: ,)")
    group.add_argument("--batch-size", type=int, default=65_536,
                       help="rows read at a time; bounds the memory used (default: 65536)")
    group.add_argument("--quiet", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fastgen", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="<command>")

    train = commands.add_parser("train", help="learn a model from a data file and save it",
                                description="Learn a model from a data file, streamed in batches "
                                "(partial_fit), and save it as a fastgen model file.")
    train.add_argument("model", help="a fastgen classifier, e.g. MultinomialNB, GaussianNB, "
                       "LinearDiscriminantAnalysis (fastgen train --list-models)", nargs="?")
    train.add_argument("data", nargs="?", help="training data file")
    train.add_argument("-o", "--output", help="model file to write (default: <model>.fgm)")
    train.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                       help="a model parameter, e.g. --param alpha=0.5 (repeatable)")
    train.add_argument("--n-features", type=int,
                       help="svmlight: number of columns (default: 1 + the largest index)")
    train.add_argument("--list-models", action="store_true", help="list the models and exit")
    _data_options(train)

    predict = commands.add_parser("predict", help="label a data file with a saved model",
                                  description="Label a data file with a saved model, batch by "
                                  "batch, writing CSV or JSON lines.")
    predict.add_argument("model_file")
    predict.add_argument("data")
    predict.add_argument("-o", "--output", help="predictions file: .jsonl for JSON lines, else "
                         "CSV (default: standard output, CSV)")
    predict.add_argument("--proba", action="store_true", help="also write class probabilities")
    _data_options(predict)

    evaluate = commands.add_parser("evaluate", help="accuracy and confusion matrix of a model",
                                   description="Score a saved model on a labelled data file: "
                                   "accuracy, log-loss and the confusion matrix.")
    evaluate.add_argument("model_file")
    evaluate.add_argument("data")
    _data_options(evaluate)

    bench = commands.add_parser("bench", help="time fastgen against scikit-learn",
                                description="Fit and predict_proba with fastgen and with the "
                                "scikit-learn model that matches it (when installed), in one run; "
                                "prints a table and, with matplotlib installed, writes a plot.")
    bench.add_argument("model")
    bench.add_argument("train")
    bench.add_argument("test", nargs="?", help="test file (default: the training file)")
    bench.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    bench.add_argument("--repeat", type=int, default=3, help="timed rounds; the best counts")
    bench.add_argument("--plot", default="fastgen-bench.png",
                       help="plot file written when matplotlib is installed "
                       "(default: fastgen-bench.png)")
    bench.add_argument("--no-plot", action="store_true")
    bench.add_argument("--n-features", type=int)
    _data_options(bench)

    demo = commands.add_parser("demo", help="spam filtering on the bundled SMS Spam Collection",
                               description="Spam filtering on the bundled SMS Spam Collection with "
                               "MultinomialNB, BernoulliNB and ComplementNB: accuracy, speed and "
                               "(when scikit-learn is installed) a comparison with it.")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--no-sklearn", action="store_true")

    commands.add_parser("info", help="versions of fastgen and its dependencies, OpenMP",
                        description="Print the versions fastgen runs with and whether its "
                        "kernels use OpenMP.")
    return parser


USAGE = build_parser().format_help()


# -- data -------------------------------------------------------------------------------------

def _format(args, path):
    if args.format != "auto":
        return args.format
    return "csv" if os.fspath(path).lower().endswith(".csv") else "svmlight"


def _label_column(args):
    try:
        return int(args.label_column)
    except ValueError:
        return args.label_column


def _check_file(path):
    if not os.path.isfile(path):
        raise CommandError(f"{path}: no such file")


def _scan(args, path):
    """(rows, features, classes) of a data file, in one streaming pass."""
    from fastgen import io

    _check_file(path)
    if _format(args, path) == "csv":
        return io.scan_csv(path, label_column=_label_column(args), header=not args.no_header,
                           delimiter=args.delimiter)
    return io.scan_svmlight(path, zero_based=args.zero_based)


def _batches(args, path, n_features):
    from fastgen import io

    _check_file(path)
    if args.batch_size < 1:
        raise CommandError(f"--batch-size must be positive, got {args.batch_size}")
    if _format(args, path) == "csv":
        return io.iter_csv(path, label_column=_label_column(args), header=not args.no_header,
                           delimiter=args.delimiter, batch_size=args.batch_size)
    return io.iter_svmlight(path, n_features=n_features, batch_size=args.batch_size,
                            zero_based=args.zero_based)


class _Progress:
    """A one-line progress bar on standard error (only on a terminal, and not with --quiet)."""

    def __init__(self, what, total, quiet):
        self.what, self.total, self.done, self.start = what, max(total, 1), 0, time.perf_counter()
        self.shown = not quiet and sys.stderr.isatty()

    def update(self, rows):
        self.done += rows
        if self.shown:
            fraction = min(self.done / self.total, 1.0)
            bar = "#" * int(30 * fraction)
            rate = self.done / max(time.perf_counter() - self.start, 1e-9)
            print(f"\r{self.what} [{bar:<30}] {fraction:6.1%} {rate:,.0f} rows/s", end="",
                  file=sys.stderr, flush=True)

    def close(self):
        if self.shown:
            print(file=sys.stderr)


def _parse_params(pairs, model_class):
    params = {}
    valid = model_class._param_names()
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep:
            raise CommandError(f"--param expects NAME=VALUE, got {pair!r}")
        if name not in valid:
            raise CommandError(f"{model_class.__name__} has no parameter {name!r} "
                               f"(parameters: {', '.join(valid)})")
        try:
            params[name] = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            params[name] = text  # a bare word, e.g. --param shrinkage=auto
    return params


def _model_class(name):
    models = _models()
    if name not in models:
        raise CommandError(f"unknown model {name!r}; choose from {', '.join(sorted(models))}")
    return models[name]


def _load_model(path):
    import fastgen

    _check_file(path)
    try:
        return fastgen.load(path)
    except (ValueError, OSError) as exc:
        raise CommandError(f"{path}: {exc}") from None


# -- commands ---------------------------------------------------------------------------------

def _train(args):
    if args.list_models:
        print("\n".join(sorted(_models())))
        return 0
    if args.model is None or args.data is None:
        raise CommandError("train needs a model and a data file: fastgen train MODEL DATA")
    model_class = _model_class(args.model)
    model = model_class(**_parse_params(args.param, model_class))
    n_rows, n_features, classes = _scan(args, args.data)
    if n_rows == 0:
        raise CommandError(f"{args.data}: no data rows")
    n_features = args.n_features or n_features
    progress = _Progress("train", n_rows, args.quiet)
    start = time.perf_counter()
    for X, y in _batches(args, args.data, n_features):
        model.partial_fit(X, y, classes=classes)
        progress.update(X.shape[0])
    progress.close()
    output = args.output or f"{args.model}.fgm"
    model.save(output)
    print(f"trained {args.model} on {n_rows:,} rows x {n_features:,} features, "
          f"{len(classes)} classes, in {time.perf_counter() - start:.2f} s; saved {output}")
    return 0


def _write_predictions(out, fmt, model, labels, proba, first):
    classes = model.classes_
    if fmt == "jsonl":
        for i, label in enumerate(labels):
            record = {"label": label.item() if hasattr(label, "item") else label}
            if proba is not None:
                record["proba"] = {str(c): float(p) for c, p in zip(classes, proba[i])}
            out.write(json.dumps(record) + "\n")
        return
    if first:
        out.write(",".join(["label"] + ([f"proba_{c}" for c in classes] if proba is not None
                                        else [])) + "\n")
    for i, label in enumerate(labels):
        fields = [str(label)] + ([repr(float(p)) for p in proba[i]] if proba is not None else [])
        out.write(",".join(fields) + "\n")


def _predict(args):
    model = _load_model(args.model_file)
    fmt = "jsonl" if args.output and args.output.endswith((".jsonl", ".json")) else "csv"
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        quiet = args.quiet or not args.output or not sys.stderr.isatty()
        # the bar needs the row count: a scanning pass, only when the bar is shown
        progress = _Progress("predict", 0 if quiet else _scan(args, args.data)[0], quiet)
        first, n_rows = True, 0
        for X, _ in _batches(args, args.data, model.n_features_in_):
            n_rows += X.shape[0]
            proba = model.predict_proba(X) if args.proba else None
            labels = model.classes_[np.argmax(proba, axis=1)] if args.proba else model.predict(X)
            _write_predictions(out, fmt, model, labels, proba, first)
            first = False
            progress.update(X.shape[0])
        progress.close()
    finally:
        if args.output:
            out.close()
    if args.output:
        print(f"wrote {n_rows:,} predictions to {args.output}")
    return 0


def _evaluate(args):
    model = _load_model(args.model_file)
    classes = model.classes_
    n_rows, _, data_classes = _scan(args, args.data)
    if n_rows == 0:
        raise CommandError(f"{args.data}: no data rows")
    labels = np.array(sorted(set(classes.tolist()) | set(data_classes.tolist()), key=str))
    index = {label: k for k, label in enumerate(labels.tolist())}
    confusion = np.zeros((len(labels), len(labels)), dtype=np.int64)
    log_loss, progress = 0.0, _Progress("evaluate", n_rows, args.quiet)
    for X, y in _batches(args, args.data, model.n_features_in_):
        log_proba = model.predict_log_proba(X)
        predicted = classes[np.argmax(log_proba, axis=1)]
        col = np.searchsorted(classes, y)
        known = (col < len(classes)) & (classes[np.minimum(col, len(classes) - 1)] == y)
        log_loss -= float(np.sum(log_proba[np.flatnonzero(known), col[known]]))
        log_loss += np.inf if not known.all() else 0.0
        for truth, guess in zip(y.tolist(), predicted.tolist()):
            confusion[index[truth], index[guess]] += 1
        progress.update(X.shape[0])
    progress.close()
    accuracy = np.trace(confusion) / confusion.sum()
    print(f"{args.data}: {n_rows:,} rows, model {type(model).__name__} ({args.model_file})")
    print(f"accuracy  {accuracy:.4f}")
    print(f"log-loss  {log_loss / n_rows:.4f}")
    width = max(8, *(len(str(label)) for label in labels))
    print("\nconfusion matrix (rows: true label, columns: predicted)")
    print(" " * width + "".join(f"{str(label):>{width + 1}}" for label in labels))
    for label, row in zip(labels, confusion):
        print(f"{str(label):<{width}}" + "".join(f"{count:>{width + 1}}" for count in row))
    return 0


SKLEARN_EQUIVALENT = {
    "MultinomialNB": "sklearn.naive_bayes", "BernoulliNB": "sklearn.naive_bayes",
    "ComplementNB": "sklearn.naive_bayes", "GaussianNB": "sklearn.naive_bayes",
    "CategoricalNB": "sklearn.naive_bayes",
    "LinearDiscriminantAnalysis": "sklearn.discriminant_analysis",
    "QuadraticDiscriminantAnalysis": "sklearn.discriminant_analysis",
}


def _load_all(args, path, n_features):
    import scipy.sparse as sp

    parts = list(_batches(args, path, n_features))
    if not parts:
        raise CommandError(f"{path}: no data rows")
    stack = sp.vstack if sp.issparse(parts[0][0]) else np.vstack
    X = stack([X for X, _ in parts])
    return (X.tocsr() if sp.issparse(X) else X), np.concatenate([y for _, y in parts])


def _best(fn, repeat):
    best = np.inf
    for _ in range(max(repeat, 1)):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _bench(args):
    import importlib

    model_class = _model_class(args.model)
    params = _parse_params(args.param, model_class)
    _, n_features, _ = _scan(args, args.train)
    n_features = args.n_features or n_features
    X_train, y_train = _load_all(args, args.train, n_features)
    X_test, y_test = _load_all(args, args.test or args.train, n_features)
    rows = []
    fitted = model_class(**params).fit(X_train, y_train)
    ours = (_best(lambda: model_class(**params).fit(X_train, y_train), args.repeat),
            _best(lambda: fitted.predict_proba(X_test), args.repeat),
            float(np.mean(fitted.predict(X_test) == y_test)))
    rows.append(("fastgen", *ours))
    module = SKLEARN_EQUIVALENT.get(args.model)
    note = None
    try:
        sk_class = getattr(importlib.import_module(module), args.model) if module else None
    except ImportError:
        sk_class, note = None, "scikit-learn is not installed: no comparison"
    if module is None:
        note = f"scikit-learn has no {args.model}: no comparison"
    if sk_class is not None:
        sk_params = {k: v for k, v in params.items() if k in sk_class().get_params()}
        X_sk = X_train.toarray() if args.model == "GaussianNB" and hasattr(X_train, "toarray") \
            else X_train
        X_sk_test = X_test.toarray() if X_sk is not X_train else X_test
        sk_fitted = sk_class(**sk_params).fit(X_sk, y_train)
        rows.append(("scikit-learn",
                     _best(lambda: sk_class(**sk_params).fit(X_sk, y_train), args.repeat),
                     _best(lambda: sk_fitted.predict_proba(X_sk_test), args.repeat),
                     float(np.mean(sk_fitted.predict(X_sk_test) == y_test))))
    print(f"{args.model} on {X_train.shape[0]:,} x {X_train.shape[1]:,} (train), "
          f"{X_test.shape[0]:,} (test); best of {args.repeat}")
    print(f"{'library':<14}{'fit ms':>10}{'predict_proba ms':>18}{'accuracy':>10}")
    for name, fit_s, proba_s, acc in rows:
        print(f"{name:<14}{fit_s * 1e3:>10.1f}{proba_s * 1e3:>18.1f}{acc:>10.4f}")
    if len(rows) == 2:
        print(f"{'speed-up':<14}{rows[1][1] / rows[0][1]:>9.1f}x{rows[1][2] / rows[0][2]:>17.1f}x")
    if note:
        print(note)
    if not args.no_plot:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no plot")
            return 0
        fig, ax = plt.subplots(figsize=(6, 3.5))
        width = 0.8 / len(rows)
        for k, (name, fit_s, proba_s, _) in enumerate(rows):
            ax.bar(np.arange(2) + k * width, [fit_s * 1e3, proba_s * 1e3], width, label=name)
        ax.set_xticks(np.arange(2) + width * (len(rows) - 1) / 2, ["fit", "predict_proba"])
        ax.set_ylabel("milliseconds (best round)")
        ax.set_title(f"{args.model}: {X_train.shape[0]:,} x {X_train.shape[1]:,}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"plot written to {args.plot}")
    return 0


def _demo(args):
    from fastgen._demo import run

    return run(seed=args.seed, compare_sklearn=not args.no_sklearn)


def _info(args):
    import fastgen

    fastgen.show_config()
    return 0


COMMANDS = {"train": _train, "predict": _predict, "evaluate": _evaluate, "bench": _bench,
            "demo": _demo, "info": _info}


def main(argv=None):
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if not argv or argv[0] == "help":
        print(USAGE, end="")
        return 0
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed by argparse
        return int(exc.code or 0)
    try:
        return COMMANDS[args.command](args)
    except (CommandError, ValueError, TypeError) as exc:
        print(f"fastgen: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"fastgen: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # sizes the data file asks for (a huge index, --n-features)
        print(f"fastgen: error: out of memory{': ' + str(exc) if str(exc) else ''}",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
