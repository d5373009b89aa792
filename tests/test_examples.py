"""The examples in ``examples/`` run and give sensible results.

``examples/missing_values.py`` needs the real datasets in ``../shared/data`` (skipped when absent) and
scikit-learn; it is run in-process with ``--quick`` (2 folds, 1 repeat) so that its results can be
checked, and as a script without data to check its error message.
"""

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = REPO_ROOT / "examples" / "missing_values.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("fastgen_example_missing_values", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_missing_values_quick(shared_data, capsys):
    pytest.importorskip("sklearn")
    example = _load_example()
    results = example.run(["--quick", "--data", str(shared_data)])
    out = capsys.readouterr().out

    expected = list(example.DATASETS) + ["pima+MCAR20%"]
    assert list(results) == expected
    assert "| dataset | model | accuracy: marginalise" in out
    for name in expected:
        assert f"| {name} | GaussianNB |" in out
        for model in example.MODELS:
            cell = results[name][model, "marginalise"]
            # fastgen takes NaN at fit and predict: marginalisation never fails
            assert not cell.failures, (name, model, cell.failures)
            assert len(cell.accuracy) == 2
            assert all(math.isfinite(v) for v in cell.log_loss)
            assert not [w for w in cell.warnings if w.startswith("RuntimeWarning")], cell.warnings
            for strategy in example.STRATEGIES:
                acc = results[name][model, strategy].accuracy
                assert all(0.0 <= a <= 1.0 for a in acc)

    def mean_acc(name, model, strategy="marginalise"):
        acc = results[name][model, strategy].accuracy
        return sum(acc) / len(acc)

    # well above the majority class (pima 0.65, breast-cancer 0.66, hypothyroid 0.92)
    for model in example.MODELS:
        assert mean_acc("breast-cancer", model) > 0.9
        assert mean_acc("pima", model) > 0.68
        assert mean_acc("hypothyroid", model) > 0.93
    # 16 missing cells in 699 rows: marginalising and imputing must agree closely
    for model in example.MODELS:
        assert abs(mean_acc("breast-cancer", model) - mean_acc("breast-cancer", model, "mean-impute")) < 0.02


def test_missing_values_without_data(tmp_path):
    absent = tmp_path / "no-such-dir"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--quick", "--data", str(absent)],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    assert "not found" in proc.stderr and str(absent) in proc.stderr and "--data" in proc.stderr
    assert "Traceback" not in proc.stderr
