"""Command line: ``fastgen {train,predict,evaluate,bench,demo,info}`` (also ``python -m fastgen``).

Data files are read in their natural form: svmlight/libsvm (sparse counts, streamed in batches),
CSV/TSV/whitespace-separated tables with numbers, text and missing-value tokens, and JSON lines;
tables and JSON lines may hold documents for a text model (a vectoriser and a classifier saved as
one file). Training stores how it read the file -- the columns, the label, the features and their
kinds -- in the model file, so predict and evaluate read other files the same way, by column name.
Errors are one line naming the file and the line or column:
``fastgen: error: train.svm:17: index 0 is below 1 (one-based indices)``.
"""
from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import re
import sys
import time

import numpy as np

import fastgen
from fastgen import _input, io
from fastgen._validation import MAX_FEATURES
from fastgen.text import CountVectorizer, HashingVectorizer

DESCRIPTION = """\
Fast, exact generative classifiers (naive Bayes, LDA, QDA) from the command line.

  fastgen train MixedNB adult.csv --no-header --label 15 -o adult.fgm    learn a model, save it
  fastgen predict adult.fgm new.csv -o predictions.csv   label new data (with or without labels)
  fastgen evaluate adult.fgm test.csv                    accuracy, log-loss, confusion matrix
  fastgen train MultinomialNB news.jsonl.gz --label label --text text   a text model
  fastgen bench MultinomialNB train.svm test.svm         fastgen against scikit-learn
  fastgen demo                                           spam filtering on bundled data

Data files: svmlight/libsvm ("label index:value ...", one-based indices) for sparse counts;
CSV (also TSV, ';'- or whitespace-separated) with numbers and text, a header line or
--no-header, missing values written as nothing, ?, NA, ... (--na-values); JSON lines (one
object per line). gzip-compressed files are read as they are. The format follows the file
name (.csv .data .txt: CSV, .tsv: TSV, .jsonl .json: JSON lines, else svmlight) unless
--format says. Columns are named by their header name or their position from 1.
Reading tables needs pandas: pip install "fastgen[cli]".
"""


class CommandError(Exception):
    """A problem to report in one line (bad file, bad option), exit status 2."""


def _models():
    from fastgen._base import BaseClassifier

    return {name: getattr(fastgen, name) for name in fastgen.__all__
            if isinstance(getattr(fastgen, name), type)
            and issubclass(getattr(fastgen, name), BaseClassifier)}


def _feature_count(text):
    """--n-features: a whole number of columns a model can have."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_FEATURES:
        raise argparse.ArgumentTypeError(f"{value} is not in [1, {MAX_FEATURES}]")
    return value


def _columns(text):
    """--drop a,b --drop c: column names or positions, comma-separated, repeatable."""
    return [part.strip() for part in text.split(",") if part.strip()]


def _trusted_option(parser):
    parser.add_argument("--trusted", action="store_true",
                        help="the model file comes from a source you trust: it may give its "
                        "vectoriser a token pattern of its own (a regular expression) or "
                        "input='filename' (see fastgen.load)")


def _data_options(parser, training=False, labelled=True):
    group = parser.add_argument_group("data file options")
    group.add_argument("--format", choices=("auto", "svmlight", "csv", "tsv", "jsonl"),
                       default="auto", help="file format (default: from the file name; see "
                       "fastgen --help)")
    group.add_argument("--delimiter", help="CSV: the field separator: a character, 'tab' or "
                       "'whitespace' (default: ',', tab for .tsv; a model file remembers it)")
    header = group.add_mutually_exclusive_group()
    header.add_argument("--header", action="store_true", default=None,
                        help="CSV: line 1 names the columns (the default; checked unless given)")
    header.add_argument("--no-header", dest="header", action="store_false",
                        help="CSV: line 1 is data; columns are named by position: 1, 2, ...")
    group.add_argument("--label", "--label-column", dest="label", metavar="COLUMN",
                       help="tables: the column of labels, by name or position (from 1; -1 is "
                       "the last)" + ("" if training else "; only for a model file that does "
                                      "not say (trained from Python or svmlight)"))
    if training:
        group.add_argument("--drop", type=_columns, action="append", default=[],
                           metavar="COLUMNS", help="tables: columns to leave out, e.g. an ID "
                           "(comma-separated, repeatable)")
        group.add_argument("--columns", type=_columns, metavar="COLUMNS",
                           help="tables: the feature columns to use, in this order "
                           "(default: all but the label and --drop)")
        group.add_argument("--categorical", type=_columns, action="append", default=[],
                           metavar="COLUMNS", help="tables: columns of numbers to read as "
                           "categories (codes) rather than as numbers")
        group.add_argument("--na-values", type=lambda text: text.split(","), metavar="TOKENS",
                           help="tables: comma-separated tokens that mean a missing value, besides "
                           "an empty field (default: ?,NA,N/A,NaN,nan,null,None)")
        group.add_argument("--text", metavar="COLUMN", help="tables, JSON lines: the column of "
                           "documents; trains a text model (a vectoriser and the classifier)")
        group.add_argument("--vectorizer-param", action="append", default=[],
                           metavar="NAME=VALUE", help="with --text: a parameter of "
                           "fastgen.text.CountVectorizer, e.g. ngram_range=(1,2) (repeatable)")
    else:
        group.add_argument("--drop", type=_columns, action="append", default=[],
                           metavar="COLUMNS", help="tables: columns of this file to leave out "
                           "(comma-separated, repeatable)")
        group.add_argument("--text", dest="documents", metavar="COLUMN",
                           help="tables, JSON lines: the column of documents, for a text "
                           "pipeline whose model file does not say (saved from Python); "
                           "default: the one column besides the label")
    if labelled and not training:
        group.add_argument("--rename-label", nargs=2, action="append", default=[],
                           metavar=("FROM", "TO"), help="read the true label FROM as TO, e.g. "
                           "'>50K.' '>50K' (repeatable)")
    group.add_argument("--zero-based", action="store_true",
                       help="svmlight: column indices start at 0 (default: at 1, as libsvm's; "
                       "predict and evaluate read as the model was trained)")
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
    train.add_argument("--n-features", type=_feature_count,
                       help="svmlight: number of columns (default: 1 + the largest index)")
    train.add_argument("--list-models", action="store_true", help="list the models and exit")
    _data_options(train, training=True)

    predict = commands.add_parser("predict", help="label a data file with a saved model",
                                  description="Label a data file with a saved model, batch by "
                                  "batch, writing CSV or JSON lines.")
    predict.add_argument("model_file")
    predict.add_argument("data")
    _trusted_option(predict)
    predict.add_argument("-o", "--output", help="predictions file: .jsonl for JSON lines, else "
                         "CSV (default: standard output, CSV)")
    predict.add_argument("--proba", action="store_true", help="also write class probabilities")
    _data_options(predict, labelled=False)

    evaluate = commands.add_parser("evaluate", help="accuracy and confusion matrix of a model",
                                   description="Score a saved model on a labelled data file: "
                                   "accuracy, log-loss and the confusion matrix.")
    evaluate.add_argument("model_file")
    evaluate.add_argument("data")
    _trusted_option(evaluate)
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
    bench.add_argument("--n-features", type=_feature_count)
    _data_options(bench, training=True)

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

# The models that read columns of text (categories) as well as numbers.
READS_TEXT_COLUMNS = frozenset({"CategoricalNB", "MixedNB"})


def _format(args, path):
    return _input.guess_format(path) if args.format == "auto" else args.format


def _flat(lists):
    return tuple(ref for refs in lists for ref in refs)


def _options(args, fmt):
    training = hasattr(args, "text")
    return _input.Options(
        fmt, args.delimiter, args.header, args.label,
        args.text if training else None,
        tuple(args.columns) if training and args.columns is not None else None,
        _flat(args.drop), _flat(args.categorical) if training else (),
        tuple(args.na_values) if training and args.na_values is not None else None)


def _check_batch_size(args):
    if args.batch_size < 1:
        raise CommandError(f"--batch-size must be positive, got {args.batch_size}")


def _svmlight_scan(args, path):
    """(rows, features, classes) of an svmlight file, in one streaming pass, before the pass
    that reads its rows: the file must be one that can be read again."""
    _input.check_file(path)
    _input.check_rereadable(path, "it is read twice (a scan for its classes and features, then "
                                  "the rows)")
    n_rows, n_features, classes = io.scan_svmlight(path, zero_based=args.zero_based)
    if n_features > MAX_FEATURES:
        raise CommandError(f"{path}: feature index {n_features - bool(args.zero_based)} is "
                           f"beyond the {MAX_FEATURES:,} features a model can have")
    return n_rows, n_features, classes


def _svmlight_batches(args, path, n_features, model):
    """(X, y) batches of an svmlight file: CSR, or dense arrays for a model that takes no
    sparse input (GaussianNB, LDA, ...)."""
    _input.check_file(path)
    _check_batch_size(args)
    batches = io.iter_svmlight(path, n_features=n_features, batch_size=args.batch_size,
                               zero_based=args.zero_based)
    tags = getattr(model, "_more_input_tags", None)  # (a Pipeline: its own error follows)
    if tags is None or tags().get("sparse", True):
        return batches
    return ((X.toarray(), y) for X, y in batches)


def _table_scan(args, path, fmt):
    _input.check_file(path)
    _check_batch_size(args)
    return _input.scan(path, _options(args, fmt), args.batch_size)


def _model_schema(args, path, model, schema, fmt):
    """The schema a table file is scored through: the model file's, with the delimiter, header
    and missing-value tokens the command line gives; a model trained elsewhere (from Python,
    from svmlight) reads numbers, its features by name when it has names."""
    if fmt == "svmlight":
        raise CommandError(f"{path}: an svmlight file, but the model was trained on a table: "
                           "give it a table file (or --format)")
    if schema is None and _reads_documents(model):
        return _documents_schema(args, path, fmt)
    if getattr(args, "documents", None) is not None:
        raise CommandError(f"--text {args.documents!r}: only for a text pipeline whose model "
                           "file does not say which column holds the documents (this one "
                           + ("says" if schema is not None else "reads no documents") + ")")
    if schema is None:
        names = getattr(model, "feature_names_in_", None)
        return _input.plain_schema(path, _options(args, fmt), args.batch_size,
                                   None if names is None else names.tolist())
    if args.label is not None and _input.resolve(args.label, schema.columns, "--label") != \
            schema.label:
        raise CommandError(f"--label {args.label!r}: the model was trained with the labels in "
                           f"column {schema.label!r}")
    changes = {}
    # the file's own format (its name's, or --format), not the training file's: a model
    # trained on CSV scores JSON lines with the same columns, and the reverse
    table = "jsonl" if fmt == "jsonl" else "csv"
    if table != schema.format:
        changes.update(format=table, delimiter="," if table == "csv" else schema.delimiter)
    if fmt == "tsv":
        changes["delimiter"] = "\t"
    elif args.format == "csv" and schema.delimiter == "\t":  # (a model trained on TSV)
        changes["delimiter"] = ","
    if args.delimiter is not None:
        changes["delimiter"] = _input.delimiter(args.delimiter)
    if args.header is not None:
        changes["header"] = args.header
    return schema._replace(**changes)


def _reads_documents(model):
    """Whether a model reads documents: a pipeline that starts with a fastgen vectoriser."""
    steps = getattr(model, "steps", None)
    return bool(steps) and isinstance(steps[0][1], (CountVectorizer, HashingVectorizer))


def _documents_schema(args, path, fmt):
    """The schema of a file of documents for a text pipeline saved without one (from Python):
    the column ``--text`` names, or the one column besides the label."""
    schema = _input.plain_schema(path, _options(args, fmt), args.batch_size)
    others = [c for c in schema.columns if c != schema.label]
    if getattr(args, "documents", None) is not None:
        documents = _input.resolve(args.documents, schema.columns, "--text")
    elif len(others) == 1:
        documents = others[0]
    else:
        raise CommandError(f"{path}: the model reads documents and its file does not say which "
                           f"column holds them (it was saved from Python): pass --text COLUMN "
                           f"(columns: {', '.join(map(str, schema.columns[:12]))})")
    return schema._replace(features=(documents,), text=(documents,), documents=documents,
                           ignored=tuple(c for c in others if c != documents))


class _Progress:
    """A one-line progress bar on standard error (only on a terminal, and not with --quiet);
    without a known total, a count of rows."""

    def __init__(self, what, total, quiet):
        self.what, self.total, self.done, self.start = what, total, 0, time.perf_counter()
        self.shown = not quiet and sys.stderr.isatty()

    def update(self, rows):
        self.done += rows
        if self.shown:
            rate = self.done / max(time.perf_counter() - self.start, 1e-9)
            if self.total:
                fraction = min(self.done / self.total, 1.0)
                shown = f"[{'#' * int(30 * fraction):<30}] {fraction:6.1%}"
            else:
                shown = f"{self.done:,} rows"
            print(f"\r{self.what} {shown} {rate:,.0f} rows/s", end="", file=sys.stderr,
                  flush=True)

    def close(self):
        if self.shown:
            print(file=sys.stderr)


def _parse_params(pairs, owner, names):
    params = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep:
            raise CommandError(f"--param expects NAME=VALUE, got {pair!r}")
        if name not in names:
            raise CommandError(f"{owner} has no parameter {name!r} "
                               f"(parameters: {', '.join(names)})")
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


def _load_model(args):
    """(model or text pipeline, the schema of the table it was trained on or None), from the
    model file args.model_file; args.zero_based becomes the svmlight numbering the model was
    trained with (--zero-based contradicting it is an error)."""
    path = args.model_file
    _input.check_file(path)
    try:
        model = fastgen.load(path, trusted=args.trusted)
        metadata = fastgen.load_metadata(path)
        record = metadata.get("input")
        schema = None if record is None else _input.Schema.from_json(record)
        numbering = metadata.get("svmlight")
        if numbering is not None:
            if not isinstance(numbering, dict) or set(numbering) != {"zero_based"} or \
                    not isinstance(numbering["zero_based"], bool):
                raise ValueError("the svmlight metadata must be exactly {'zero_based': a bool}")
            if args.zero_based and not numbering["zero_based"]:
                raise ValueError("the model was trained on svmlight numbered from 1; "
                                 "--zero-based would shift every feature")
            args.zero_based = numbering["zero_based"]
    except (ValueError, OSError) as exc:
        message = str(exc)
        raise CommandError(message if message.startswith(os.fspath(path)) else
                           f"{path}: {message}") from None
    if schema is not None and (schema.documents is not None) != hasattr(model, "steps"):
        # a text model scores a list of documents; a DataFrame would be read as its column names
        raise CommandError(f"{path}: the input schema does not agree with the model (a column "
                           "of documents goes with a text model, and only with one)")
    return model, schema


def _one_line(message):
    """A (possibly multi-line) message from a model as one line."""
    parts = (re.sub(r"^\s*- ", "", part).strip() for part in str(message).splitlines())
    return "; ".join(part for part in parts if part)


# -- commands ---------------------------------------------------------------------------------

def _not_the_data_file(output, data, what, model_file=None):
    """A CommandError if the output file is the data file (writing it would replace the data,
    or truncate it while it is read) or the ``model_file`` read."""
    for path, name in ((data, "the data file"), (model_file, "the model file")):
        if path is not None and os.path.exists(output) and os.path.exists(path) and \
                os.path.samefile(output, path):
            raise CommandError(f"-o {output}: that is {name}; write {what} to another file")


def _train(args):
    if args.list_models:
        print("\n".join(sorted(_models())))
        return 0
    if args.model is None or args.data is None:
        raise CommandError("train needs a model and a data file: fastgen train MODEL DATA")
    model_class = _model_class(args.model)
    model = model_class(**_parse_params(args.param, args.model, model_class._param_names()))
    output = args.output or f"{args.model}.fgm"
    _not_the_data_file(output, args.data, "the model")
    fmt = _format(args, args.data)
    start = time.perf_counter()
    if fmt == "svmlight":
        if args.text is not None:
            raise CommandError("--text reads documents from a table or JSON lines file, not "
                               "from svmlight")
        saved, n_rows, n_features, classes, schema = _train_svmlight(args, model)
    else:
        saved, n_rows, n_features, classes, schema = _train_table(args, model, fmt)
    # (how the rows were read, for predict and evaluate: a table's schema, or svmlight's
    # feature numbering, which read otherwise would shift every column)
    metadata = {"svmlight": {"zero_based": bool(args.zero_based)}} if fmt == "svmlight" else \
        None if schema is None else {"input": schema.to_json()}
    fastgen.save(saved, output, metadata=metadata)
    what = f"{n_features:,} features" if schema is None or schema.documents is None else \
        f"documents in column {schema.documents!r} ({n_features:,} terms)"
    print(f"trained {args.model} on {n_rows:,} rows x {what}, {len(classes)} classes, in "
          f"{time.perf_counter() - start:.2f} s; saved {output}")
    return 0


def _learning(call, where, option="--param"):
    """call() of a model learning the data at ``where`` (a file, or lines of it): an error of
    its parameters (InvalidParameterError) said as one of ``option``, and an error of the data
    as one of ``where``."""
    from fastgen._validation import InvalidParameterError

    try:
        return call()
    except InvalidParameterError as exc:  # a --param, not the data
        raise CommandError(f"{option}: {_one_line(exc)}") from None
    except ValueError as exc:
        raise CommandError(f"{where}: {_one_line(exc)}") from None


def _train_svmlight(args, model):
    n_rows, n_features, classes = _svmlight_scan(args, args.data)
    if n_rows == 0:
        raise CommandError(f"{args.data}: no data rows")
    n_features = args.n_features if args.n_features is not None else n_features
    progress = _Progress("train", n_rows, args.quiet)
    for X, y in _svmlight_batches(args, args.data, n_features, model):
        _learning(lambda: model.partial_fit(X, y, classes=classes), args.data)
        progress.update(X.shape[0])
    progress.close()
    return model, n_rows, n_features, classes, None


def _train_table(args, model, fmt):
    scan = _table_scan(args, args.data, fmt)
    schema = scan.schema
    name = type(model).__name__
    if schema.documents is not None:
        return _train_text(args, model, scan)
    if args.vectorizer_param:
        raise CommandError("--vectorizer-param needs --text (the column of documents)")
    if schema.text and name not in READS_TEXT_COLUMNS:
        column = schema.text[0]
        example = scan.categories[column][0] if len(scan.categories[column]) else ""
        raise CommandError(f"{args.data}: column {column!r} holds text (e.g. {example!r}), "
                           f"which {name} cannot read: use MixedNB or CategoricalNB, or leave "
                           f"it out with --drop {column!r}")
    _note_unlabelled(args.data, scan.unlabelled)
    progress = _Progress("train", scan.n_rows, args.quiet)
    for X, y, line in _input.batches(args.data, schema, args.batch_size,
                                     categories=scan.categories):
        _learning(lambda: model.partial_fit(X, y, classes=scan.classes),
                  f"{args.data}:{line}-{line + len(y) - 1}")
        progress.update(len(y))
    progress.close()
    return model, scan.n_rows, len(schema.features), scan.classes, schema


def _train_text(args, model, scan):
    """A vectoriser and the classifier, fitted on every document at once (the vocabulary is
    learned from all of them), saved together as one scikit-learn Pipeline."""
    from fastgen.text import CountVectorizer

    try:
        from sklearn.pipeline import Pipeline
    except ImportError:
        raise CommandError("a text model is saved as a scikit-learn Pipeline (a vectoriser and "
                           "the classifier): pip install scikit-learn") from None
    vectorizer = CountVectorizer(**_parse_params(
        args.vectorizer_param, "CountVectorizer", sorted(CountVectorizer().get_params())))
    _note_unlabelled(args.data, scan.unlabelled)
    documents, labels = [], []
    for docs, y, _ in _input.batches(args.data, scan.schema, args.batch_size):
        documents.extend(docs)
        labels.append(y)
    # (fitted one after the other, as Pipeline.fit would, so that a parameter's error names
    # the option that set it)
    X = _learning(lambda: vectorizer.fit_transform(documents), args.data, "--vectorizer-param")
    _learning(lambda: model.fit(X, np.concatenate(labels)), args.data)
    pipeline = Pipeline([("vectorizer", vectorizer), ("classifier", model)])
    return (pipeline, scan.n_rows, len(vectorizer.vocabulary_), scan.classes, scan.schema)


def _scored_batches(args, path, model, schema, unlabelled=None, text_labels=False):
    """(X, true labels or None, line of the first row) batches of a file, read as the model
    was trained; with ``unlabelled`` (evaluate) the true labels too, rows without one counted
    there and left out (with ``text_labels``, as the text the file holds)."""
    _input.check_file(path)
    _check_batch_size(args)
    fmt = _format(args, path)
    if schema is None and fmt == "svmlight":
        for X, y in _svmlight_batches(args, path, _n_features(model), model):
            yield X, y, None
        return
    schema = _model_schema(args, path, model, schema, fmt)
    if unlabelled is not None and schema.label is None:
        raise CommandError(f"{path}: which column holds the true labels? pass --label")
    named = hasattr(model, "steps") or hasattr(model, "feature_names_in_")
    for X, y, line in _input.batches(path, schema, args.batch_size,
                                     labels=unlabelled is not None,
                                     extra_ignored=_flat(args.drop), unlabelled=unlabelled,
                                     text_labels=text_labels):
        # a model fitted on an array warns when given named columns
        yield (X if named else X.to_numpy()), y, line


def _n_features(model):
    steps = getattr(model, "steps", None)
    if steps is not None:
        raise CommandError("a text model reads documents from a table or JSON lines file, not "
                           "svmlight")
    return model.n_features_in_


def _scored(path, line, n_rows, method, X):
    """A model's output on a batch; a model's complaint about the data names the rows."""
    where = f"{path}:{line}-{line + n_rows - 1}" if line is not None else f"{path}"
    try:
        out = method(X)
    except ValueError as exc:
        raise CommandError(f"{where}: {_one_line(exc)}") from None
    if len(out) != n_rows:  # (a model that does not read a row as one sample)
        raise CommandError(f"{where}: the model gave {len(out)} outputs for {n_rows} rows")
    return out


def _write_predictions(out, fmt, classes, labels, proba, first):
    if fmt == "jsonl":
        for i, label in enumerate(labels):
            record = {"label": label.item() if hasattr(label, "item") else label}
            if proba is not None:
                record["proba"] = {str(c): float(p) for c, p in zip(classes, proba[i])}
            out.write(json.dumps(record) + "\n")
        return
    # quoted as CSV needs: a label may hold a comma, a quote or a line break
    writer = csv.writer(out, lineterminator="\n")
    if first:
        writer.writerow(["label"] + ([f"proba_{c}" for c in classes] if proba is not None
                                     else []))
    for i, label in enumerate(labels):
        writer.writerow([str(label)] + ([repr(float(p)) for p in proba[i]] if proba is not None
                                        else []))


def _predict(args):
    model, schema = _load_model(args)
    if args.output:
        _not_the_data_file(args.output, args.data, "the predictions", args.model_file)
    fmt = "jsonl" if args.output and args.output.endswith((".jsonl", ".json")) else "csv"
    rows = _scored_batches(args, args.data, model, schema)
    first = next(rows, None)  # the data is checked before an output file is created
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    n_rows, progress = 0, _Progress("predict", 0, args.quiet or not args.output)
    try:
        batch = first
        while batch is not None:
            X, _, line = batch
            size = X.shape[0] if hasattr(X, "shape") else len(X)
            proba = _scored(args.data, line, size, model.predict_proba, X) if args.proba \
                else None
            labels = model.classes_[np.argmax(proba, axis=1)] if args.proba else \
                _scored(args.data, line, size, model.predict, X)
            _write_predictions(out, fmt, model.classes_, labels, proba, n_rows == 0)
            n_rows += size
            progress.update(size)
            batch = next(rows, None)
    finally:
        if args.output:
            out.close()
    progress.close()
    if args.output:
        print(f"wrote {n_rows:,} predictions to {args.output}")
    return 0


def _evaluate(args):
    model, schema = _load_model(args)
    classes = model.classes_
    # a model whose classes are text (fitted from Python on labels such as '0' and '1') is
    # compared with the file's labels as text, not as the numbers they read as
    text = len(classes) > 0 and all(isinstance(c, str) for c in classes.tolist())
    read = str.strip if text else _input.as_label
    renamed = {read(old): read(new) for old, new in args.rename_label}
    known = {label: k for k, label in enumerate(classes.tolist())}
    counts, log_loss, n_rows = {}, 0.0, 0
    progress, unlabelled = _Progress("evaluate", 0, args.quiet), _input.Unlabelled()
    for X, y, line in _scored_batches(args, args.data, model, schema, unlabelled, text):
        size = len(y)
        log_proba = _scored(args.data, line, size, model.predict_log_proba, X)
        predicted = classes[np.argmax(log_proba, axis=1)]
        truth = [renamed.get(label, label) for label in y.tolist()]
        col = np.array([known.get(label, -1) for label in truth])
        seen = col >= 0
        log_loss -= float(np.sum(log_proba[np.flatnonzero(seen), col[seen]]))
        log_loss += np.inf if not seen.all() else 0.0
        for pair in zip(truth, predicted.tolist()):
            counts[pair] = counts.get(pair, 0) + 1
        n_rows += size
        progress.update(size)
    progress.close()
    if n_rows == 0:
        raise CommandError(f"{args.data}: no labelled rows (all {unlabelled.rows:,} lack a "
                           "label)" if unlabelled else f"{args.data}: no data rows")
    unknown = sorted({t for t, _ in counts if t not in known}, key=str)
    labels = sorted(set(classes.tolist()) | set(unknown), key=str)
    index = {label: k for k, label in enumerate(labels)}
    confusion = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for (truth, guess), count in counts.items():
        confusion[index[truth], index[guess]] += count
    accuracy = np.trace(confusion) / n_rows
    print(f"{args.data}: {n_rows:,} rows, model {_describe(model)} ({args.model_file})")
    print(f"accuracy  {accuracy:.4f}")
    print(f"log-loss  {log_loss / n_rows:.4f}")
    _note_unlabelled(args.data, unlabelled)
    if unknown:
        print(f"note: {sum(c for (t, _), c in counts.items() if t not in known):,} rows have "
              f"labels the model never saw ({', '.join(map(repr, unknown[:5]))}); if they "
              "mean known ones, map them with --rename-label FROM TO")
    _print_confusion(labels, confusion)
    return 0


def _print_confusion(labels, confusion):
    """The confusion matrix, its columns headed by the labels, or by the rows' numbers when the
    labels would make it wider than a terminal. A label with characters that are not printable
    (a line break, a terminal's escape sequence) is shown as its repr."""
    names = [text if text.isprintable() else repr(text)
             for text in (str(label) for label in labels)]
    cell = max(len(str(confusion.max())), 4) + 1
    named = max(cell, max(map(len, names)) + 1)
    print("\nconfusion matrix (rows: true label, columns: predicted)")
    if max(map(len, names)) + named * len(names) <= 100:
        width = max(map(len, names))
        print(" " * width + "".join(f"{name:>{named}}" for name in names))
        for name, row in zip(names, confusion):
            print(f"{name:<{width}}" + "".join(f"{count:>{named}}" for count in row))
        return
    width = max(map(len, names)) + len(str(len(names))) + 1
    print(" " * width + "".join(f"{k:>{cell}}" for k in range(len(names))))
    for k, (name, row) in enumerate(zip(names, confusion)):
        print(f"{k:>{len(str(len(names)))}} {name:<{width - len(str(len(names))) - 1}}"
              + "".join(f"{count:>{cell}}" for count in row))


def _note_unlabelled(path, unlabelled):
    if unlabelled:
        print(f"note: left out {unlabelled.rows:,} rows without a label (the first at "
              f"{path}:{unlabelled.first})")


def _describe(model):
    steps = getattr(model, "steps", None)
    if steps is None:
        return type(model).__name__
    return " + ".join(type(step).__name__ for _, step in steps)


SKLEARN_EQUIVALENT = {
    "MultinomialNB": "sklearn.naive_bayes", "BernoulliNB": "sklearn.naive_bayes",
    "ComplementNB": "sklearn.naive_bayes", "GaussianNB": "sklearn.naive_bayes",
    "CategoricalNB": "sklearn.naive_bayes",
    "LinearDiscriminantAnalysis": "sklearn.discriminant_analysis",
    "QuadraticDiscriminantAnalysis": "sklearn.discriminant_analysis",
}


def _load_all(args, path, n_features, model, schema=None):
    """A whole file as (X, y, its schema or None): svmlight as CSR (dense for a ``model`` that
    takes no sparse input), a table of numbers as an array, read through ``schema`` when given
    (a test file's columns found by name, as the training file's)."""
    import scipy.sparse as sp

    fmt = _format(args, path)
    if fmt == "svmlight":
        parts = list(_svmlight_batches(args, path, n_features, model))
    else:
        if schema is None:
            schema = _table_scan(args, path, fmt).schema
            if schema.documents is not None:
                raise CommandError("bench times models on tables of numbers or svmlight; a "
                                   "text model (--text) is timed with fastgen train")
            if schema.text:
                raise CommandError(f"{path}: bench times tables of numbers; column "
                                   f"{schema.text[0]!r} holds text")
        parts = [(X.to_numpy(), y) for X, y, _ in
                 _input.batches(path, schema, args.batch_size)]
    if not parts:
        raise CommandError(f"{path}: no data rows")
    stack = sp.vstack if sp.issparse(parts[0][0]) else np.vstack
    X = stack([X for X, _ in parts])
    return (X.tocsr() if sp.issparse(X) else X), np.concatenate([y for _, y in parts]), schema


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
    params = _parse_params(args.param, args.model, model_class._param_names())
    n_features = args.n_features
    if _format(args, args.train) == "svmlight" and n_features is None:
        n_features = _svmlight_scan(args, args.train)[1]
    model = model_class(**params)
    X_train, y_train, schema = _load_all(args, args.train, n_features, model)
    X_test, y_test, _ = _load_all(args, args.test or args.train, n_features, model, schema)
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
        if sk_params.get("shrinkage") is not None:  # (its default solver, svd, has none)
            sk_params["solver"] = "lsqr"
        X_sk = X_train.toarray() if args.model == "GaussianNB" and hasattr(X_train, "toarray") \
            else X_train
        X_sk_test = X_test.toarray() if X_sk is not X_train else X_test
        try:
            sk_fitted = sk_class(**sk_params).fit(X_sk, y_train)
        except Exception as error:  # noqa: BLE001 -- the contender's refusal, reported as such
            sk_class = None
            note = (f"scikit-learn's {args.model} refused these parameters or data "
                    f"({type(error).__name__}: {error}): no comparison")
    if sk_class is not None:
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
        print(f"fastgen: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # whoever read the output has stopped (``fastgen predict ... | head``): end quietly,
        # and keep the interpreter's final flush of standard output from failing again
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"fastgen: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # sizes the data file asks for (a huge index, --n-features)
        print(f"fastgen: error: out of memory{': ' + str(exc) if str(exc) else ''}",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
