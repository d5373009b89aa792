"""The command line: train / predict / evaluate / bench on svmlight and CSV files, and its
one-line errors naming the file and line."""
import json

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

import fastgen
from fastgen.__main__ import USAGE, build_parser, main

datasets = pytest.importorskip("sklearn.datasets")


@pytest.fixture
def text_files(tmp_path):
    rng = np.random.default_rng(0)
    y = np.arange(900) % 3
    X = sp.csr_matrix(rng.poisson(0.3 + (np.arange(30) % 3 == y[:, None]), size=(900, 30))
                      .astype(np.float64))
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    datasets.dump_svmlight_file(X[:600], y[:600], str(train), zero_based=False)
    datasets.dump_svmlight_file(X[600:], y[600:], str(test), zero_based=False)
    return train, test, X, y


@pytest.fixture
def csv_files(tmp_path):
    rng = np.random.default_rng(1)
    y = np.where(np.arange(400) % 2, "yes", "no")
    X = rng.normal(size=(400, 3)) + (y == "yes")[:, None]
    path = tmp_path / "d.csv"
    lines = ["a,b,c,answer"] + [",".join(["" if (i + j) % 17 == 0 else f"{v:.6f}"
                                          for j, v in enumerate(row)] + [label])
                                for i, (row, label) in enumerate(zip(X, y))]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_train_predict_evaluate_svmlight(text_files, tmp_path, capsys):
    train, test, X, y = text_files
    model_file = tmp_path / "m.fgm"
    assert main(["train", "MultinomialNB", str(train), "-o", str(model_file), "--batch-size", "128",
                 "--param", "alpha=0.5"]) == 0
    assert "trained MultinomialNB on 600 rows x 30 features, 3 classes" in capsys.readouterr().out
    model = fastgen.load(model_file)
    reference = fastgen.MultinomialNB(alpha=0.5).fit(X[:600], y[:600])
    assert_allclose(model.feature_log_prob_, reference.feature_log_prob_)

    out = tmp_path / "p.csv"
    assert main(["predict", str(model_file), str(test), "-o", str(out), "--proba"]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "label,proba_0,proba_1,proba_2" and len(lines) == 301
    assert_array_equal([int(line.split(",")[0]) for line in lines[1:]], reference.predict(X[600:]))
    assert_allclose([[float(v) for v in line.split(",")[1:]] for line in lines[1:]],
                    reference.predict_proba(X[600:]), rtol=1e-12)

    jsonl = tmp_path / "p.jsonl"
    assert main(["predict", str(model_file), str(test), "-o", str(jsonl)]) == 0
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [r["label"] for r in records] == reference.predict(X[600:]).tolist()

    capsys.readouterr()
    assert main(["evaluate", str(model_file), str(test)]) == 0
    report = capsys.readouterr().out
    accuracy = np.mean(reference.predict(X[600:]) == y[600:])
    assert f"accuracy  {accuracy:.4f}" in report and "confusion matrix" in report


def test_train_and_evaluate_csv_with_missing_values(csv_files, tmp_path, capsys):
    model_file = tmp_path / "g.fgm"
    assert main(["train", "GaussianNB", str(csv_files), "-o", str(model_file),
                 "--batch-size", "50", "--quiet", "--label", "answer"]) == 0
    model = fastgen.load(model_file)
    assert model.classes_.tolist() == ["no", "yes"]
    X, y = next(fastgen.io.iter_csv(csv_files, batch_size=1000))
    assert np.isnan(X).any()
    assert_allclose(model.theta_, fastgen.GaussianNB().fit(X, y).theta_, rtol=1e-12)
    assert main(["evaluate", str(model_file), str(csv_files), "--label-column", "answer"]) == 0
    assert "accuracy" in capsys.readouterr().out


def test_bench_prints_a_table(text_files, capsys):
    train, test, _, _ = text_files
    assert main(["bench", "MultinomialNB", str(train), str(test), "--repeat", "1",
                 "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "fastgen" in out and "scikit-learn" in out and "speed-up" in out
    assert main(["bench", "PoissonNB", str(train), "--repeat", "1", "--no-plot"]) == 0
    assert "scikit-learn has no PoissonNB" in capsys.readouterr().out


def test_bench_plot(text_files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    train, test, _, _ = text_files
    plot = tmp_path / "b.png"
    assert main(["bench", "BernoulliNB", str(train), str(test), "--repeat", "1",
                 "--plot", str(plot)]) == 0
    assert plot.stat().st_size > 0


@pytest.mark.parametrize("argv, message", [
    (["train", "NoSuchNB", "x.svm"], "unknown model 'NoSuchNB'"),
    (["train", "MultinomialNB", "missing.svm"], "missing.svm: no such file"),
    (["train", "MultinomialNB", "{bad}", "--param", "alpha"], "--param expects NAME=VALUE"),
    (["train", "MultinomialNB", "{bad}", "--param", "beta=1"], "has no parameter 'beta'"),
    (["train", "MultinomialNB", "{bad}"], "bad.svm:3: index 0 is below 1"),
    (["train", "MultinomialNB", "{good}", "--param", "alpha=-1"], "alpha"),
    (["train", "MultinomialNB"], "train needs a model and a data file"),
    (["predict", "{good}", "{good}"], "good.svm: "),
    (["train", "MultinomialNB", "{good}", "--batch-size", "0"], "--batch-size must be positive"),
])
def test_errors_are_one_line(tmp_path, capsys, argv, message):
    good, bad = tmp_path / "good.svm", tmp_path / "bad.svm"
    good.write_text("0 1:1\n1 2:3\n")
    bad.write_text("0 1:1\n1 2:3\n1 0:2\n")
    argv = [a.format(good=good, bad=bad) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fastgen: error:") and message in err and "\n" not in err


@pytest.mark.parametrize("name", ["GaussianNB", "LinearDiscriminantAnalysis"])
def test_dense_models_read_svmlight(text_files, tmp_path, capsys, name):
    """A model that takes no sparse input trains, predicts and is benchmarked on an svmlight
    file, as the Python API on its dense rows (it was told to call .toarray())."""
    train, test, X, y = text_files
    model_file = tmp_path / "m.fgm"
    assert main(["train", name, str(train), "-o", str(model_file), "--batch-size", "128"]) == 0
    reference = getattr(fastgen, name)().fit(X[:600].toarray(), y[:600])
    out = tmp_path / "p.csv"
    assert main(["predict", str(model_file), str(test), "-o", str(out), "--proba"]) == 0
    lines = out.read_text().splitlines()[1:]
    assert_allclose([[float(v) for v in line.split(",")[1:]] for line in lines],
                    reference.predict_proba(X[600:].toarray()), rtol=1e-9, atol=1e-12)
    capsys.readouterr()
    assert main(["bench", name, str(train), str(test), "--repeat", "1", "--no-plot"]) == 0


def test_feature_counts_a_model_cannot_have(tmp_path, capsys):
    """An svmlight index beyond MAX_FEATURES is named (training reported only "out of memory"),
    and --n-features must be a count in [1, MAX_FEATURES] (0 was read as not given)."""
    huge = tmp_path / "huge.svm"
    huge.write_text("1 1:1\n0 4294967297:1\n")
    assert main(["train", "MultinomialNB", str(huge), "-o", str(tmp_path / "m.fgm")]) == 2
    assert "huge.svm: feature index 4294967297 is beyond the 2,147,483,647 features a model " \
        "can have" in capsys.readouterr().err
    small = tmp_path / "small.svm"
    small.write_text("1 1:1\n0 3:1\n")
    for value, message in (("0", "0 is not in [1, 2147483647]"), ("abc", "not a whole number")):
        assert main(["train", "MultinomialNB", str(small), "--n-features", value]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "MultinomialNB.fgm").exists()


def test_predict_rejects_wider_data_than_the_model(text_files, tmp_path, capsys):
    train, _, _, _ = text_files
    model_file = tmp_path / "m.fgm"
    assert main(["train", "BernoulliNB", str(train), "-o", str(model_file)]) == 0
    wide = tmp_path / "wide.svm"
    wide.write_text("0 1:1 31:1\n")
    assert main(["predict", str(model_file), str(wide)]) == 2
    assert "wide.svm:1: index 31 is beyond n_features=30" in capsys.readouterr().err


def test_help_for_every_command(capsys):
    assert main(["--help"]) == 0 and capsys.readouterr().out == USAGE
    for command in ("train", "predict", "evaluate", "bench", "demo", "info"):
        assert main([command, "--help"]) == 0
        assert "usage: fastgen " + command in capsys.readouterr().out
    assert main(["train", "--list-models"]) == 0
    assert "LinearDiscriminantAnalysis" in capsys.readouterr().out.split()
    assert build_parser().prog == "fastgen"


def test_bench_gives_scikit_learn_the_equivalent_solver_or_reports_its_refusal(tmp_path,
                                                                               capsys):
    """LDA's shrinkage reached scikit-learn's default solver, which has none, and its
    NotImplementedError ended bench in a traceback; scikit-learn now gets solver='lsqr' with
    shrinkage, and a parameter it refuses (alpha="evidence") is reported as its refusal, with
    fastgen's row timed (outside attack)."""
    rng = np.random.default_rng(0)
    path = tmp_path / "g.csv"
    path.write_text("a,b,y\n" + "".join(f"{rng.normal():.4f},{rng.normal():.4f},{i % 2}\n"
                                         for i in range(100)))
    assert main(["bench", "LinearDiscriminantAnalysis", str(path), "--label", "y", "--param",
                 "shrinkage=0.5", "--repeat", "1", "--no-plot"]) == 0
    assert "speed-up" in capsys.readouterr().out
    counts = tmp_path / "c.csv"
    counts.write_text("a,b,y\n" + "".join(f"{i % 3},{i % 5},{i % 2}\n" for i in range(40)))
    assert main(["bench", "MultinomialNB", str(counts), "--label", "y", "--param",
                 "alpha=evidence", "--repeat", "1", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "fastgen" in out and "scikit-learn's MultinomialNB refused" in out


def test_repeated_header_names_never_collide_with_a_given_name(tmp_path, capsys):
    """A header "a.1,a,a,y" named two columns a.1 (the repeat's suffix collided with the first
    column's name): training blamed --columns, which was not given, and predicting with a
    model trained on "a,a,y" ended in a traceback. The repeat is now a.2 (outside attack)."""
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    train.write_text("a,a,y\n1,2,p\n2,3,q\n3,1,p\n4,4,q\n")
    test.write_text("a.1,a,a,y\n1,2,3,p\n2,3,4,q\n")
    model = tmp_path / "m.fgm"
    assert main(["train", "GaussianNB", str(train), "--label", "y", "-o", str(model),
                 "--quiet"]) == 0
    assert main(["predict", str(model), str(test)]) == 2
    assert "column 'a.2' is not one the model was trained on" in capsys.readouterr().err
    assert main(["predict", str(model), str(test), "--drop", "a.2"]) == 0
    assert main(["train", "GaussianNB", str(test), "--label", "y", "-o",
                 str(tmp_path / "m2.fgm"), "--quiet"]) == 0
    assert fastgen.load(tmp_path / "m2.fgm").feature_names_in_.tolist() == ["a.1", "a", "a.2"]


def test_svmlight_numbering_is_kept_in_the_model_file(tmp_path, capsys):
    """A model trained with --zero-based was evaluated one-based unless the flag was given
    again, every feature shifted by one: accuracy 0.5 became 0.0, silently (outside attack).
    The numbering is saved with the model; a flag that contradicts it is an error."""
    zero = tmp_path / "z.svm"
    zero.write_text("0 0:5 1:1\n1 1:5 2:1\n0 0:6\n1 1:6\n")
    model = tmp_path / "z.fgm"
    assert main(["train", "MultinomialNB", str(zero), "--zero-based", "-o", str(model),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model), str(zero)]) == 0
    assert "accuracy  1.0000" in capsys.readouterr().out
    one = tmp_path / "o.svm"
    one.write_text("0 1:5 2:1\n1 2:5 3:1\n0 1:6\n1 2:6\n")
    assert main(["train", "MultinomialNB", str(one), "-o", str(tmp_path / "o.fgm"),
                 "--quiet"]) == 0
    assert main(["evaluate", str(tmp_path / "o.fgm"), str(one), "--zero-based"]) == 2
    assert "trained on svmlight numbered from 1" in capsys.readouterr().err
