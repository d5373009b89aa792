"""What ``missing_values.py`` and ``categorical_missing.py`` share (not an example).

Both scripts compare ways of handling missing values by repeated stratified
cross-validation on the shared real datasets, and report a markdown table of accuracy
and log-loss per (dataset, model) and strategy. This module holds the pieces that are
the same in both: the command-line plumbing (``--data`` and the other common options,
the checks that end the run with a message rather than a traceback), the scoring of one
fold into a :class:`Cell`, and the table and notes of the report. What differs
(datasets, models, strategies) stays in the scripts, which put this directory on
``sys.path`` to import it.
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"


# --------------------------------------------------------------------------------------
# command line


def make_parser(doc: str, datasets, models) -> argparse.ArgumentParser:
    """A parser with ``--data``, ``--datasets`` and ``--models`` (choices: ``datasets``,
    ``models``); the description is ``doc``'s first line."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA,
                   help=f"the shared data directory (default: {DEFAULT_DATA})")
    p.add_argument("--datasets", default=",".join(datasets),
                   help=f"comma-separated subset of {', '.join(datasets)}")
    p.add_argument("--models", default=",".join(models),
                   help=f"comma-separated subset of {', '.join(models)}")
    return p


def add_protocol_args(p: argparse.ArgumentParser, quick_help: str) -> None:
    """``--folds``, ``--repeats``, ``--seed`` and ``--quick`` (help: ``quick_help``)."""
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help=quick_help)


def check_names(p: argparse.ArgumentParser, kind: str, names, allowed) -> None:
    """Exit through ``p.error`` on the first of ``names`` that is not in ``allowed``."""
    for name in names:
        if name not in allowed:
            p.error(f"unknown {kind} {name!r} (choose from {', '.join(allowed)})")


def data_dir(path: Path, script: str, needs: str) -> Path:
    """``path`` resolved; a ``SystemExit`` naming ``needs`` if it is not a directory."""
    data = path.expanduser().resolve()
    if not data.is_dir():
        raise SystemExit(
            f"{script}: data directory {data} not found.\n"
            f"This example needs the shared real datasets ({needs}).\n"
            "Put them in ../shared/data beside the repository, or pass --data DIR."
        )
    return data


def require_modules(script: str, needs) -> None:
    """``needs``: (module, name, what for) triples; a ``SystemExit`` for the first one
    that cannot be imported."""
    for module, name, why in needs:
        try:
            __import__(module)
        except ImportError:
            raise SystemExit(f"{script} needs {name} ({why})") from None


class DataMissing(Exception):
    """A data file the example needs is not in the data directory."""


def require(path: Path) -> Path:
    """``path``, or :class:`DataMissing` if it does not exist."""
    if not path.exists():
        raise DataMissing(f"{path} not found")
    return path


def load_datasets(script: str, data: Path, load, names) -> list:
    """``[load(name) for name in names]``; a missing file ends the run (a message)."""
    try:
        return [load(name) for name in names]
    except DataMissing as exc:
        raise SystemExit(f"{script}: {exc} "
                         f"(is --data {data} the shared data directory?)") from None


# --------------------------------------------------------------------------------------
# one fold


def full_proba(est, X, classes):
    """predict_proba with a column for every class (0 for a class the model never
    saw)."""
    proba = est.predict_proba(X)
    if len(est.classes_) == len(classes):
        return proba
    out = np.zeros((proba.shape[0], len(classes)))
    out[:, np.searchsorted(classes, est.classes_)] = proba
    return out


@dataclass
class Cell:
    """The scores of one (model, strategy) over the folds."""

    accuracy: list = field(default_factory=list)
    log_loss: list = field(default_factory=list)
    failures: list = field(default_factory=list)  # one message per failed fold
    warnings: dict = field(default_factory=dict)  # "Category: message" -> count
    applicable: bool = True  # False: the model cannot run this strategy ("n/a")


def score_fold(cell: Cell, predict, y_true, classes, errors) -> None:
    """Add one fold to ``cell``: ``predict()`` gives the test probabilities (a column
    per class of ``classes``). An exception of a type in ``errors``, or a non-finite
    probability, is a failed fold; every warning raised is counted by its first line."""
    from sklearn.metrics import log_loss

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            proba = predict()
        except errors as exc:
            msg = (str(exc).splitlines() or [""])[0]
            cell.failures.append(f"{type(exc).__name__}: {msg[:200]}")
            proba = None
    for w in caught:
        key = f"{w.category.__name__}: {str(w.message).splitlines()[0][:100]}"
        cell.warnings[key] = cell.warnings.get(key, 0) + 1
    if proba is None:
        return
    if not np.all(np.isfinite(proba)):
        cell.failures.append("non-finite predict_proba")
        return
    cell.accuracy.append(float(np.mean(classes[np.argmax(proba, axis=1)] == y_true)))
    cell.log_loss.append(float(log_loss(y_true, proba, labels=classes)))


# --------------------------------------------------------------------------------------
# report


def _fmt(cell: Cell, values, n_folds, best):
    if not cell.applicable:
        return "n/a"
    if not values:
        return "failed"
    text = f"{np.mean(values):.3f} ± {np.std(values):.3f}"
    if len(values) < n_folds:
        text += f" ({n_folds - len(values)} fail)"
    return ("*" if best else " ") + text


def format_table(results, strategies, n_folds) -> str:
    """One markdown table: a row per (dataset, model), accuracy and log-loss per
    strategy.

    ``results``: dataset name -> {(model, strategy): Cell}, the models in table order.
    The best mean of each row and metric is marked with ``*``."""
    head = (["dataset", "model"] + [f"accuracy: {s}" for s in strategies]
            + [f"log-loss: {s}" for s in strategies])
    lines = ["| " + " | ".join(head) + " |",
             "|---|---|" + "---:|" * (2 * len(strategies))]
    for ds_name, cells in results.items():
        for m in dict.fromkeys(m for m, _ in cells):
            row = [ds_name, m]
            for metric, better in (("accuracy", max), ("log_loss", min)):
                values = {s: getattr(cells[m, s], metric) for s in strategies}
                means = {s: np.mean(v) for s, v in values.items() if v}
                best = better(means, key=means.get) if means else None
                row += [_fmt(cells[m, s], values[s], n_folds, s == best)
                        for s in strategies]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def cell_notes(ds_name, model, strategy, cell: Cell, extra=()) -> list:
    """The notes on one cell: its failures, then ``extra``, then its warnings."""
    where = f"- {ds_name} / {model} / {strategy}"
    notes = []
    if cell.failures:
        notes.append(f"{where}: {len(cell.failures)} fold(s) failed, "
                     f"e.g. {cell.failures[0]}")
    notes += extra
    notes += [f"{where}: warning x{n}: {key}" for key, n in cell.warnings.items()]
    return notes


def report(datasets, evaluate, table, notes, out) -> dict:
    """Print each dataset's description and evaluate it, then print
    ``table(results)``, ``notes(results)`` if any and the time taken; return
    ``{dataset name: evaluate(ds)}``."""
    t0 = time.perf_counter()
    results = {}
    for ds in datasets:
        print(ds.describe(), file=out)
        results[ds.name] = evaluate(ds)
    print(file=out)
    print(table(results), file=out)
    text = notes(results)
    if text:
        print("\nNotes:\n" + text, file=out)
    print(f"\n({time.perf_counter() - t0:.1f} s)", file=out)
    return results
