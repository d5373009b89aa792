"""Tests for ``python -m fastgen`` (demo, info, usage) and the bundled data."""

import re

import numpy as np
import pytest

from fastgen.__main__ import USAGE, main
from fastgen.data import load_horse_colic, load_sms_spam

# --- bundled data -------------------------------------------------------------------------------


def test_load_sms_spam():
    texts, labels = load_sms_spam()
    assert len(texts) == labels.shape[0] == 5574
    assert int((labels == "ham").sum()) == 4827
    assert int((labels == "spam").sum()) == 747
    assert texts[0].startswith("Go until jurong point")
    assert all(isinstance(t, str) and "\t" not in t and "\n" not in t for t in texts)


@pytest.mark.parametrize("subset, n_rows, n_missing, n_incomplete", [
    ("train", 299, 1602, 293), ("test", 67, 309, 66), ("all", 366, 1911, 359),
])
def test_load_horse_colic(subset, n_rows, n_missing, n_incomplete):
    X, y, names = load_horse_colic(subset)
    assert X.shape == (n_rows, 21) and X.dtype == np.float64 and y.shape == (n_rows,)
    assert len(names) == 21 and names[2] == "rectal_temperature" and names[-1].endswith("protein")
    assert int(np.isnan(X).sum()) == n_missing  # every "?" of the kept rows' 21 columns
    assert int(np.isnan(X).any(axis=1).sum()) == n_incomplete
    assert set(y) == {"lived", "died", "euthanized"}
    assert not np.isinf(X).any()
    # the 7 numbers in their units (horse-colic.names), the codes small whole numbers
    numeric = [names.index(n) for n in ("rectal_temperature", "pulse", "packed_cell_volume")]
    assert 35 <= np.nanmin(X[:, numeric[0]]) and np.nanmax(X[:, numeric[0]]) <= 41
    codes = X[:, names.index("pain")]
    assert set(codes[~np.isnan(codes)]) <= {1, 2, 3, 4, 5}


def test_load_horse_colic_targets():
    X, y, _ = load_horse_colic("train")
    assert dict(zip(*np.unique(y, return_counts=True))) == {"lived": 178, "died": 77,
                                                            "euthanized": 44}
    X, y, _ = load_horse_colic("all", target="surgical_lesion")
    assert X.shape == (368, 21)  # no surgical-lesion value is missing
    assert dict(zip(*np.unique(y, return_counts=True))) == {"yes": 232, "no": 136}
    with pytest.raises(ValueError, match="subset"):
        load_horse_colic("validation")
    with pytest.raises(ValueError, match="target"):
        load_horse_colic(target="hospital_number")
    for bad in (["all"], None, b"all", 1):  # unhashable, or not text: the same named error
        with pytest.raises(ValueError, match="subset"):
            load_horse_colic(bad)
        with pytest.raises(ValueError, match="target"):
            load_horse_colic(target=bad)


# --- command line -------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h"]])
def test_usage(argv, capsys):
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out == USAGE
    assert "demo" in out and "info" in out


@pytest.mark.parametrize("argv", [["frobnicate"], ["demo", "--bogus"], ["demo", "--seed", "x"],
                                  ["info", "extra"]])
def test_bad_command_exits_2(argv, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "error" in captured.err
    assert captured.out == ""


def test_unknown_command_subprocess(tmp_path):
    import shutil
    import subprocess
    import sys

    # run outside the source tree: there, "python -m fastgen" would import the unbuilt sources
    commands = [[sys.executable, "-m", "fastgen", "nope"]]
    script = shutil.which("fastgen")
    if script is not None:  # the console script the README's Quickstart uses
        commands.append([script, "nope"])
    for command in commands:
        proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 2, (command, proc.stderr)
        assert "invalid choice: 'nope'" in proc.stderr


def test_info(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "OpenMP" in out


def _accuracies(out):
    """{(model, library): accuracy} parsed from the demo's table."""
    found, model = {}, None
    for line in out.splitlines():
        m = re.match(r"^(\w+NB)?\s+(fastgen|sklearn)\s+([01]\.\d{4})\s", line)
        if m:
            model = m.group(1) or model
            found[model, m.group(2)] = float(m.group(3))
    return found


@pytest.mark.parametrize("no_sklearn", [False, True])
def test_demo_runs(no_sklearn, capsys):
    argv = ["demo", "--no-sklearn"] if no_sklearn else ["demo"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    acc = _accuracies(out)
    for name in ("MultinomialNB", "BernoulliNB", "ComplementNB"):
        assert (name, "fastgen") in acc, out
    assert acc["MultinomialNB", "fastgen"] > 0.95
    assert acc["BernoulliNB", "fastgen"] > 0.9
    assert acc["ComplementNB", "fastgen"] > 0.9
    assert "Most spam-indicative words" in out
    assert "P(spam | message)" in out
    assert "MISMATCH" not in out
    has_sklearn = any(library == "sklearn" for _, library in acc)
    if no_sklearn:
        assert not has_sklearn
        assert "comparison disabled" in out
    else:
        try:
            import sklearn  # noqa: F401
        except ImportError:
            assert "scikit-learn is not installed" in out
        else:
            assert has_sklearn
            for name in ("MultinomialNB", "BernoulliNB", "ComplementNB"):
                assert acc[name, "fastgen"] == acc[name, "sklearn"]
            diffs = [float(d) for d in re.findall(r"difference\| = (\S+),", out)]
            assert len(diffs) == 3 and max(diffs) < 1e-8, out


def test_demo_without_sklearn(monkeypatch, capsys):
    """A fresh ``pip install .`` has no scikit-learn: the demo must say so and still work."""
    import fastgen._demo

    monkeypatch.setattr(fastgen._demo, "_import_sklearn", lambda: (None, None))
    assert main(["demo", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "scikit-learn is not installed" in out
    assert _accuracies(out)["MultinomialNB", "fastgen"] > 0.95


def test_stratified_split():
    from fastgen._demo import stratified_split

    y = np.array(["a"] * 80 + ["b"] * 20)
    train, test = stratified_split(y, seed=3)
    assert np.intersect1d(train, test).size == 0
    assert train.size + test.size == y.size
    assert (y[test] == "a").sum() == 16 and (y[test] == "b").sum() == 4
    np.testing.assert_array_equal(test, stratified_split(y, seed=3)[1])
