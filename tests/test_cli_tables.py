"""The command line on tables and text as they come: columns with numbers, text and missing-value
tokens, read through the schema stored in the model file, so that a file with other columns is
mapped by name or refused -- never a silently wrong answer -- and one-line errors that name the
file, the line or column and the fix."""
import gzip
import io
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastgen
from fastgen.__main__ import main

pd = pytest.importorskip("pandas")


@pytest.fixture
def table(tmp_path):
    """A mixed table: an ID, two numeric and two text columns, '?' for missing, label 'kind'."""
    rng = np.random.default_rng(0)
    n = 300
    kind = np.where(rng.random(n) < 0.4, "a", "b")
    frame = pd.DataFrame({
        "id": np.arange(n) + 1000,
        "size": np.round(rng.normal(size=n) + (kind == "a"), 3).astype(object),
        "colour": np.where(kind == "a", rng.choice(["red", "green", "blue"], n, p=[.6, .3, .1]),
                           rng.choice(["red", "green", "blue"], n, p=[.2, .3, .5])),
        "weight": np.round(rng.normal(size=n) * 2, 3),
        "shape": rng.choice(["round", "square"], n),
        "kind": kind,
    })
    frame.loc[rng.random(n) < 0.1, "size"] = "?"
    frame.loc[rng.random(n) < 0.1, "colour"] = "?"
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _python_model(frame):
    X = frame.drop(columns=["id", "kind"]).replace("?", np.nan)
    X["size"] = X["size"].astype(float)
    return fastgen.MixedNB().fit(X, frame["kind"]), X


def _run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _error(capsys, *argv):
    status, out, err = _run(capsys, *argv)
    assert status == 2, out
    assert err.startswith("fastgen: error: ") and err.count("\n") == 1, err
    return err


def test_training_on_a_table_equals_the_python_api(table, tmp_path, capsys):
    path, frame = table
    reference, X = _python_model(frame)
    for batch_size in (7, 65_536):  # categories are declared up front, so batches agree
        model_file = tmp_path / f"m{batch_size}.fgm"
        status, out, _ = _run(capsys, "train", "MixedNB", path, "--label", "kind", "--drop",
                              "id", "-o", model_file, "--batch-size", batch_size)
        assert status == 0 and "300 rows x 4 features, 2 classes" in out
        model = fastgen.load(model_file)
        assert model.feature_names_in_.tolist() == ["size", "colour", "weight", "shape"]
        assert_allclose(model.predict_joint_log_proba(X), reference.predict_joint_log_proba(X),
                        rtol=1e-12, atol=1e-12)
    status, out, _ = _run(capsys, "evaluate", model_file, path)
    assert status == 0 and f"accuracy  {reference.score(X, frame['kind']):.4f}" in out


def test_columns_are_found_by_name(table, tmp_path, capsys):
    path, frame = table
    model_file = tmp_path / "m.fgm"
    _run(capsys, "train", "MixedNB", path, "--label", "kind", "--drop", "id", "-o", model_file)
    reference, X = _python_model(frame)
    accuracy = f"accuracy  {reference.score(X, frame['kind']):.4f}"
    moved = tmp_path / "moved.csv"  # label first, features swapped
    frame[["kind", "shape", "weight", "id", "colour", "size"]].to_csv(moved, index=False)
    status, out, _ = _run(capsys, "evaluate", model_file, moved)
    assert status == 0 and accuracy in out
    unlabelled = tmp_path / "unlabelled.csv"  # what predict is for
    frame.drop(columns=["kind", "id"]).to_csv(unlabelled, index=False)
    predictions = tmp_path / "p.csv"
    assert _run(capsys, "predict", model_file, unlabelled, "-o", predictions)[0] == 0
    labels = pd.read_csv(predictions)["label"]
    assert_array_equal(labels, reference.predict(X))
    extra = tmp_path / "extra.csv"
    frame.assign(note="x").to_csv(extra, index=False)
    assert "column 'note' is not one the model was trained on (leave it out with --drop " \
        "'note')" in _error(capsys, "evaluate", model_file, extra)
    assert _run(capsys, "evaluate", model_file, extra, "--drop", "note")[0] == 0
    missing = tmp_path / "missing.csv"
    frame.drop(columns=["weight"]).to_csv(missing, index=False)
    assert "no column 'weight', which the model reads" in _error(capsys, "evaluate",
                                                                   model_file, missing)
    renamed = tmp_path / "renamed.csv"
    frame.rename(columns={"shape": "form"}).to_csv(renamed, index=False)
    assert "no column 'shape'" in _error(capsys, "predict", model_file, renamed)


def test_files_without_a_header(table, tmp_path, capsys):
    path, frame = table
    bare = tmp_path / "bare.csv"
    frame.to_csv(bare, index=False, header=False)
    # line 1 is data: taking it as names would silently lose a row and misname every column
    assert "bare.csv:1: line 1 looks like data, not a header" in _error(
        capsys, "train", "MixedNB", bare, "--label", "6")
    model_file = tmp_path / "m.fgm"
    status, out, _ = _run(capsys, "train", "MixedNB", bare, "--no-header", "--label", "6",
                          "--drop", "1", "-o", model_file)
    assert status == 0 and "300 rows" in out
    status, out, _ = _run(capsys, "evaluate", model_file, bare)
    assert status == 0 and "300 rows" in out
    # a file with a header against a model of a headerless file: line 1 is not numbers
    err = _error(capsys, "evaluate", model_file, path)
    assert "t.csv:1: column '3'" in err or "t.csv:1: column '2'" in err
    assert "pass --header" in err
    # and the other way round: the model's names are not in line 1
    named_file = tmp_path / "named.fgm"
    _run(capsys, "train", "MixedNB", path, "--label", "kind", "-o", named_file)
    assert "no column 'id' (and 4 more), which the model reads; if the file has no header " \
        "line, pass --no-header" in _error(capsys, "evaluate", named_file, bare)
    status, out, _ = _run(capsys, "evaluate", named_file, bare, "--no-header")
    assert status == 0 and "300 rows" in out
    # without the label column: the other columns keep their order
    no_label = tmp_path / "no_label.csv"
    frame.drop(columns=["kind"]).to_csv(no_label, index=False, header=False)
    predictions = tmp_path / "p.csv"
    assert _run(capsys, "predict", model_file, no_label, "-o", predictions)[0] == 0
    reference, X = _python_model(frame)
    assert_array_equal(pd.read_csv(predictions)["label"], reference.predict(X))
    narrow = tmp_path / "narrow.csv"
    frame.iloc[:, :4].to_csv(narrow, index=False, header=False)
    assert "4 columns, but the model was trained on files of 6 columns (5 without the label)" \
        in _error(capsys, "predict", model_file, narrow)


def test_a_numbers_file_with_no_header_is_not_silently_misread(tmp_path, capsys):
    path = tmp_path / "numbers.csv"
    rng = np.random.default_rng(1)
    rows = np.column_stack([rng.normal(size=(50, 3)).round(3), np.arange(50) % 2])
    np.savetxt(path, rows, delimiter=",", fmt="%g")
    assert "line 1 looks like data" in _error(capsys, "train", "GaussianNB", path, "--format",
                                              "csv", "--label", "-1")
    assert _run(capsys, "train", "GaussianNB", path, "--no-header", "--label", "-1", "-o",
                tmp_path / "g.fgm")[0] == 0
    model = fastgen.load(tmp_path / "g.fgm")
    reference = fastgen.GaussianNB().fit(rows[:, :3], rows[:, 3].astype(int))
    assert_allclose(model.theta_, reference.theta_, rtol=1e-12)
    assert model.classes_.tolist() == [0, 1]


def test_the_label_column_is_never_guessed(table, capsys):
    path, _ = table
    err = _error(capsys, "train", "MixedNB", path)
    assert "t.csv: which column is the label? pass --label NAME or position (columns: id, " \
        "size, colour, weight, shape, kind)" in err
    assert "--label 'nope': no such column" in _error(capsys, "train", "MixedNB", path,
                                                      "--label", "nope")
    assert "--drop 'kind': it is the label column" in _error(
        capsys, "train", "MixedNB", path, "--label", "kind", "--drop", "kind")


def test_kinds_of_columns(table, tmp_path, capsys):
    path, frame = table
    assert "column 'colour' holds text (e.g. 'blue'), which GaussianNB cannot read: use " \
        "MixedNB or CategoricalNB, or leave it out with --drop 'colour'" in _error(
            capsys, "train", "GaussianNB", path, "--label", "kind")
    # '?' is not a missing value here: a column of numbers with a word in it is refused
    err = _error(capsys, "train", "MixedNB", path, "--label", "kind", "--na-values", "NA")
    assert "column 'size' holds numbers, and" in err and "values that are not: '?': if" in err
    assert "--categorical 'size'" in err
    status, _, _ = _run(capsys, "train", "GaussianNB", path, "--label", "kind", "--columns",
                        "weight,size", "-o", tmp_path / "g.fgm")
    assert status == 0
    assert fastgen.load(tmp_path / "g.fgm").feature_names_in_.tolist() == ["weight", "size"]
    assert _run(capsys, "train", "MixedNB", path, "--label", "kind", "--categorical", "id",
                "-o", tmp_path / "c.fgm")[0] == 0
    model = fastgen.load(tmp_path / "c.fgm")
    assert model.feature_types_[0] == "categorical"


def test_unknown_categories_and_labels(table, tmp_path, capsys):
    path, frame = table
    model_file = tmp_path / "m.fgm"
    _run(capsys, "train", "MixedNB", path, "--label", "kind", "--drop", "id", "-o", model_file)
    odd = frame.copy()
    odd.loc[5, "colour"] = "purple"
    odd_path = tmp_path / "odd.csv"
    odd.to_csv(odd_path, index=False)
    err = _error(capsys, "evaluate", model_file, odd_path)
    assert "odd.csv:2-301: " in err and "'colour'" in err and "purple" in err
    relabelled = frame.assign(kind=frame["kind"] + ".")
    relabelled.to_csv(odd_path, index=False)
    status, out, _ = _run(capsys, "evaluate", model_file, odd_path)
    assert status == 0 and "accuracy  0.0000" in out
    assert "labels the model never saw ('a.', 'b.')" in out and "--rename-label" in out
    status, out, _ = _run(capsys, "evaluate", model_file, odd_path, "--rename-label", "a.", "a",
                          "--rename-label", "b.", "b")
    reference, X = _python_model(frame)
    assert f"accuracy  {reference.score(X, frame['kind']):.4f}" in out


def test_rows_without_a_label(table, tmp_path, capsys):
    path, frame = table
    holes = frame.copy()
    holes.loc[[3, 7], "kind"] = "?"
    holes_path = tmp_path / "holes.csv"
    holes.to_csv(holes_path, index=False)
    status, out, _ = _run(capsys, "train", "MixedNB", holes_path, "--label", "kind", "--drop",
                          "id", "-o", tmp_path / "m.fgm")
    assert status == 0 and "note: left out 2 rows without a label (the first at " in out
    assert "holes.csv:5)" in out and "298 rows" in out
    mixed = frame.astype({"kind": object})
    mixed.loc[10, "kind"] = 7
    mixed.to_csv(holes_path, index=False)
    assert "holes.csv:12: the labels mix numbers and text (7 among text); check the label " \
        "column" in _error(capsys, "train", "MixedNB", holes_path, "--label", "kind")


def test_other_formats(table, tmp_path, capsys):
    path, frame = table
    reference_file = tmp_path / "ref.fgm"
    _run(capsys, "train", "MixedNB", path, "--label", "kind", "--drop", "id", "-o",
         reference_file)
    reference = fastgen.load(reference_file)
    _, X = _python_model(frame)
    records = tmp_path / "t.jsonl.gz"
    with gzip.open(records, "wt", encoding="utf-8") as f:
        for row in frame.to_dict("records"):
            row = {k: (None if v == "?" else v) for k, v in row.items()}
            if row["size"] is not None:
                row["size"] = float(row["size"])
            f.write(json.dumps(row) + "\n")
    semicolons = tmp_path / "t.txt"
    frame.to_csv(semicolons, index=False, sep=";")
    tabs = tmp_path / "t.tsv"
    frame.to_csv(tabs, index=False, sep="\t")
    spaces = tmp_path / "t.data"
    frame.to_csv(spaces, index=False, sep=" ")
    for data, extra in ((records, []), (semicolons, ["--delimiter", ";"]), (tabs, []),
                        (spaces, ["--delimiter", "whitespace"])):
        model_file = tmp_path / "m.fgm"
        assert _run(capsys, "train", "MixedNB", data, "--label", "kind", "--drop", "id", "-o",
                    model_file, *extra)[0] == 0, data
        assert_allclose(fastgen.load(model_file).predict_joint_log_proba(X),
                        reference.predict_joint_log_proba(X), rtol=1e-12, atol=1e-12)
        assert _run(capsys, "evaluate", model_file, data)[0] == 0  # the file remembers how
    assert "t.txt:1: one column when split at ',', but the line holds ';': pass --delimiter ';'" \
        in _error(capsys, "train", "MixedNB", semicolons, "--label", "kind")


def test_text_models(tmp_path, capsys):
    from sklearn.pipeline import make_pipeline

    from fastgen.text import CountVectorizer

    lines = (fastgen.__path__[0] + "/data/SMSSpamCollection")
    labels, docs = zip(*(line.split("\t", 1) for line in
                         open(lines, encoding="utf-8").read().splitlines()[:1200]))
    train, test = tmp_path / "train.tsv", tmp_path / "test.tsv"
    train.write_text("".join(f"{y}\t{d}\n" for y, d in zip(labels[:900], docs[:900])),
                     encoding="utf-8")
    test.write_text("".join(f"{d}\n" for d in docs[900:]), encoding="utf-8")
    model_file = tmp_path / "sms.fgm"
    status, out, _ = _run(capsys, "train", "BernoulliNB", train, "--no-header", "--label", "1",
                          "--text", "2", "--vectorizer-param", "ngram_range=(1, 2)", "-o",
                          model_file)
    assert status == 0 and "documents in column '2'" in out
    reference = make_pipeline(CountVectorizer(ngram_range=(1, 2)), fastgen.BernoulliNB())
    reference.fit(docs[:900], labels[:900])
    loaded = fastgen.load(model_file)
    assert_array_equal(loaded.predict_proba(docs[900:]), reference.predict_proba(docs[900:]))
    predictions = tmp_path / "p.jsonl"
    assert _run(capsys, "predict", model_file, test, "--proba", "-o", predictions)[0] == 0
    got = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert [r["label"] for r in got] == reference.predict(docs[900:]).tolist()
    assert_allclose([r["proba"]["spam"] for r in got],
                    reference.predict_proba(docs[900:])[:, 1], rtol=1e-12)
    assert "--vectorizer-param needs --text" in _error(
        capsys, "train", "MultinomialNB", train, "--no-header", "--label", "1",
        "--vectorizer-param", "lowercase=False")
    assert "CountVectorizer has no parameter 'nope'" in _error(
        capsys, "train", "MultinomialNB", train, "--no-header", "--label", "1", "--text", "2",
        "--vectorizer-param", "nope=1")
    svm = tmp_path / "x.svm"
    svm.write_text("1 1:1\n")
    assert "x.svm: an svmlight file, but the model was trained on a table" in _error(
        capsys, "predict", model_file, svm)
    # a token pattern of the file's own loads only when the file is trusted
    assert _run(capsys, "train", "MultinomialNB", train, "--no-header", "--label", "1", "--text",
                "2", "--vectorizer-param", r"token_pattern=r'(?u)\b\w+\b'", "-o",
                model_file)[0] == 0
    for command in ("predict", "evaluate"):
        assert "Load it with trusted=True (on the command line, --trusted)" in _error(
            capsys, command, model_file, test if command == "predict" else train)
    status, out, _ = _run(capsys, "predict", model_file, test, "--trusted")
    reference = make_pipeline(CountVectorizer(token_pattern=r"(?u)\b\w+\b"),
                              fastgen.MultinomialNB()).fit(docs[:900], labels[:900])
    assert status == 0 and out.splitlines()[1:] == reference.predict(docs[900:]).tolist()


def test_file_errors(table, tmp_path, capsys):
    path, _ = table
    assert f"{tmp_path}: a directory, not a data file" in _error(
        capsys, "train", "MixedNB", tmp_path, "--label", "kind")
    assert "nothere.csv: no such file" in _error(capsys, "train", "MixedNB",
                                                 tmp_path / "nothere.csv", "--label", "kind")
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"a,b\n1,caf\xe9\n")
    assert "latin.csv: not UTF-8 text" in _error(capsys, "train", "MixedNB", latin, "--label",
                                                 "b")
    model_file = tmp_path / "m.fgm"
    _run(capsys, "train", "MixedNB", path, "--label", "kind", "-o", model_file)
    # a model file that cannot be written is named as asked, never by a temporary name
    err = _error(capsys, "train", "MixedNB", path, "--label", "kind", "-o",
                 tmp_path / "no" / "m.fgm")
    assert f"{tmp_path / 'no' / 'm.fgm'}: cannot write the model file" in err and ".tmp" not in err
    assert f"{tmp_path}: a directory, not a model file" in _error(
        capsys, "train", "MixedNB", path, "--label", "kind", "-o", tmp_path)
    damaged = tmp_path / "damaged.fgm"
    damaged.write_bytes(model_file.read_bytes()[:-5])
    err = _error(capsys, "predict", damaged, path)
    assert err.count("damaged.fgm") == 1


def test_a_closed_pipe_ends_quietly(tmp_path):
    rng = np.random.default_rng(2)
    rows = np.column_stack([rng.normal(size=(20_000, 2)).round(2), np.arange(20_000) % 2])
    path = tmp_path / "big.csv"
    np.savetxt(path, rows, delimiter=",", fmt="%g", header="a,b,y", comments="")
    model_file = tmp_path / "g.fgm"
    assert main(["train", "GaussianNB", str(path), "--label", "y", "-o", str(model_file)]) == 0
    run = subprocess.run(f'"{sys.executable}" -m fastgen predict "{model_file}" "{path}" | head -2',
                         shell=True, capture_output=True, text=True, cwd=tmp_path)
    assert run.stdout.splitlines() == ["label", run.stdout.splitlines()[1]]
    assert run.stderr == ""
    status = subprocess.run(["bash", "-c", f'set -o pipefail; "{sys.executable}" -m fastgen '
                             f'predict "{model_file}" "{path}" | head -1'],
                            capture_output=True, text=True, cwd=tmp_path)
    assert status.returncode == 0 and status.stderr == ""


def test_a_forged_schema_is_refused(table, tmp_path, capsys):
    path, frame = table
    model_file = tmp_path / "m.fgm"
    _run(capsys, "train", "MixedNB", path, "--label", "kind", "--drop", "id", "-o", model_file)
    model = fastgen.load(model_file)
    schema = fastgen.load_metadata(model_file)["input"]
    for change in ({"features": ["size", "nope"]}, {"label": "size"}, {"header": "yes"},
                   {"columns": schema["columns"] + ["size"]}, {"format": "xml"},
                   {"text": ["id"]}, {"delimiter": ""}, {"delimiter": [","]},
                   {"delimiter": "[a-"}, {"delimiter": "\n"}, {"delimiter": "tab"},
                   {"label": ["kind"]}, {"extra": 1}):
        forged = tmp_path / "forged.fgm"
        fastgen.save(model, forged, metadata={"input": {**schema, **change}})
        assert "input schema" in _error(capsys, "evaluate", forged, path)


def test_json_lines_records_may_lack_keys(tmp_path, capsys):
    rows = [{"x": float(i % 7), "colour": ["red", "blue"][i % 2], "y": "a, b" if i % 3 else "c"}
            for i in range(60)]
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    model_file = tmp_path / "m.fgm"
    assert _run(capsys, "train", "MixedNB", train, "--label", "y", "-o", model_file)[0] == 0
    score = tmp_path / "score.jsonl"
    score.write_text(json.dumps({"colour": "red"}) + "\n" + json.dumps({"x": 3.0}) + "\n")
    out = tmp_path / "p.csv"
    assert _run(capsys, "predict", model_file, score, "-o", out, "--proba")[0] == 0
    model = fastgen.load(model_file)
    X = pd.DataFrame({"x": [np.nan, 3.0], "colour": ["red", None]})
    written = pd.read_csv(out)  # a label with a comma is quoted
    assert written["label"].tolist() == model.predict(X).tolist()
    assert set(model.classes_) == {"a, b", "c"}
    assert_allclose(written.iloc[:, 1:].to_numpy(), model.predict_proba(X), rtol=1e-12)
    score.write_text(json.dumps({"x": 1.0, "colour": "red", "size": 2}) + "\n")
    assert "column 'size' is not one the model was trained on" in _error(
        capsys, "predict", model_file, score)


def test_fields_are_stripped_whatever_pandas_string_dtype(tmp_path, capsys):
    """Spaces around a field are not part of it (pandas 3 reads text as its str dtype, not as
    object): 'x ' and 'x' are one class, 'u ' and 'u' one category."""
    path = tmp_path / "spaces.csv"
    path.write_text("a,b,y\n1 ,u ,x \n2,u,x\n3 ,v,z\n4,v ,z \n")
    assert _run(capsys, "train", "MixedNB", path, "--label", "y", "-o", tmp_path / "m.fgm")[0] == 0
    model = fastgen.load(tmp_path / "m.fgm")
    assert model.classes_.tolist() == ["x", "z"]
    expected = fastgen.MixedNB().fit(pd.DataFrame({"a": [1.0, 2, 3, 4], "b": list("uuvv")}),
                                     list("xxzz"))
    X = pd.DataFrame({"a": [1.0, 3], "b": ["u", "v"]})
    assert_allclose(model.predict_log_proba(X), expected.predict_log_proba(X), rtol=0, atol=1e-12)


def test_predictions_are_quoted_as_csv(tmp_path, capsys):
    """Labels holding commas and quotes come back whole from the predictions file."""
    path = tmp_path / "labels.csv"
    path.write_text('x,y\n1,"a,b"\n2,"a,b"\n3,c\n4,c\n5,"q""uote"\n')
    model_file, out = tmp_path / "m.fgm", tmp_path / "p.csv"
    assert _run(capsys, "train", "GaussianNB", path, "--label", "y", "-o", model_file)[0] == 0
    assert _run(capsys, "predict", model_file, path, "--proba", "-o", out)[0] == 0
    written = pd.read_csv(out, dtype={"label": str})
    model = fastgen.load(model_file)
    X = pd.DataFrame({"x": [1.0, 2, 3, 4, 5]})
    assert written.columns.tolist() == ["label"] + [f"proba_{c}" for c in model.classes_]
    assert written["label"].tolist() == model.predict(X).tolist() == ["a,b", "a,b", "c", "c",
                                                                       'q"uote']
    assert_array_equal(written.iloc[:, 1:].to_numpy(), model.predict_proba(X))


def test_labels_are_numbers_only_as_a_file_writes_them(tmp_path, capsys):
    """A label is a number when it is written as one in ASCII digits, and an integer keeps every
    digit: '1_2' is not 12, and two IDs beyond 2**53 stay two classes."""
    for labels, classes in ((["1_2", "3_4"], ["1_2", "3_4"]),
                            (["9007199254740993", "9007199254740992"],
                             [9007199254740992, 9007199254740993]),
                            (["2", "1.0", "1e1"], [1, 2, 10])):
        path = tmp_path / "labels.csv"
        rows = [f"{k},{labels[k % len(labels)]}" for k in range(6)]
        path.write_text("x,y\n" + "\n".join(rows) + "\n")
        model_file = tmp_path / "m.fgm"
        assert _run(capsys, "train", "GaussianNB", path, "--label", "y", "-o", model_file)[0] == 0
        assert fastgen.load(model_file).classes_.tolist() == classes


def test_a_delimiter_is_one_character(table, tmp_path, capsys):
    """pandas reads a longer separator as a regular expression: refused, not a traceback."""
    path, _ = table
    for given in ("[a-", "::", "", "\n"):
        assert "--delimiter" in _error(capsys, "train", "MixedNB", path, "--label", "kind",
                                       "--delimiter", given, "-o", tmp_path / "m.fgm")


def test_a_schema_must_agree_with_its_model(tmp_path, capsys):
    """A text model given a schema of table columns would score a DataFrame, which a vectoriser
    reads as its column names (one prediction for the file); a classifier given a column of
    documents would score raw text."""
    path = tmp_path / "docs.tsv"
    path.write_text("label\ttext\n" + "".join(f"{'ab'[k % 2]}\tword{k % 2} other\n"
                                                for k in range(20)))
    text_file = tmp_path / "text.fgm"
    assert _run(capsys, "train", "MultinomialNB", path, "--label", "label", "--text", "text",
                "-o", text_file)[0] == 0
    schema = fastgen.load_metadata(text_file)["input"]
    forged = tmp_path / "forged.fgm"
    fastgen.save(fastgen.load(text_file), forged, metadata={"input": {**schema, "documents": None}})
    for command in ("predict", "evaluate"):
        assert "does not agree" in _error(capsys, command, forged, path)
    fastgen.save(fastgen.MultinomialNB().fit([[1], [2]], ["a", "b"]), forged,
                 metadata={"input": schema})
    assert "does not agree" in _error(capsys, "predict", forged, path)


def test_a_label_and_a_document_are_not_a_header(tmp_path, capsys):
    """Line 1 of a headerless file of labels and messages: the label recurs further down, the
    message does not; half the fields look like data, so the line is not silently taken as
    column names (and the first message lost)."""
    path = tmp_path / "sms.tsv"
    path.write_text("".join(f"{'ham' if k % 3 else 'spam'}\tmessage number {k}\n"
                            for k in range(12)))
    assert "--no-header" in _error(capsys, "train", "MultinomialNB", path, "--label", "1",
                                   "--text", "2", "-o", tmp_path / "m.fgm")
    status, out, _ = _run(capsys, "train", "MultinomialNB", path, "--no-header", "--label", "1",
                          "--text", "2", "-o", tmp_path / "m.fgm")
    assert status == 0 and "on 12 rows" in out


@pytest.mark.parametrize("name", ["t.csv", "t.jsonl"])
def test_a_damaged_gzip_file_is_one_line(tmp_path, capsys, name):
    """A truncated or corrupted compressed table is an error naming the file, not a traceback."""
    jsonl = name.endswith(".jsonl")
    rows = [json.dumps({"a": k, "y": "xz"[k % 2]}) if jsonl else f"{k},{'xz'[k % 2]}"
            for k in range(20_000)]
    packed = gzip.compress((("" if jsonl else "a,y\n") + "\n".join(rows) + "\n").encode())
    path = tmp_path / name
    for damaged in (packed[:len(packed) // 2], packed[:20] + bytes(200)):
        path.write_bytes(damaged)
        assert "a damaged gzip file" in _error(capsys, "train", "MixedNB", path, "--label", "y",
                                               "-o", tmp_path / "m.fgm")


def test_a_batch_of_one_row(table, tmp_path, capsys):
    """--batch-size 1: the first batch of a file with a header holds only the header line, and
    is no batch of zero rows for the model."""
    frame = table[1].head(20)
    path, model_file = tmp_path / "small.csv", tmp_path / "m.fgm"
    frame.to_csv(path, index=False)
    assert _run(capsys, "train", "MixedNB", path, "--label", "kind", "--drop", "id",
                "--batch-size", "1", "-o", model_file)[0] == 0
    status, out, _ = _run(capsys, "predict", model_file, path, "--batch-size", "1", "--proba")
    assert status == 0
    model, X = _python_model(frame)
    assert_allclose(pd.read_csv(io.StringIO(out)).iloc[:, 1:].to_numpy(),
                    model.predict_proba(X), rtol=1e-9)


def test_the_header_is_judged_whatever_the_batch_size(tmp_path, capsys):
    """A headerless file of numbers is refused without --no-header, and JSON lines get every
    key of their first records, at any --batch-size (a batch of one row was taken as a header)."""
    path = tmp_path / "numbers.csv"
    path.write_text("".join(f"{k},{k % 3},{k % 2}\n" for k in range(10)))
    jsonl = tmp_path / "records.jsonl"
    jsonl.write_text('{"a": 1, "y": "x"}\n{"a": 2, "b": "u", "y": "z"}\n{"a": 3, "y": "x"}\n')
    for size in ("1", "2", "1000"):
        assert "--no-header" in _error(capsys, "train", "GaussianNB", path, "--label", "-1",
                                       "--batch-size", size, "-o", tmp_path / "m.fgm")
        assert _run(capsys, "train", "MixedNB", jsonl, "--label", "y", "--batch-size", size,
                    "-o", tmp_path / "j.fgm")[0] == 0
        assert fastgen.load_metadata(tmp_path / "j.fgm")["input"]["features"] == ["a", "b"]


def test_a_model_fitted_on_an_array_scores_a_table_quietly(tmp_path, capsys):
    """A model trained from Python on an array reads a table's columns in order, without a
    warning about feature names on standard error."""
    X = np.array([[1.0, 2], [2, 3], [3, 1], [4, 5]])
    model = fastgen.GaussianNB().fit(X, [0, 1, 0, 1])
    fastgen.save(model, tmp_path / "m.fgm")
    path = tmp_path / "new.csv"
    path.write_text("w,h\n1,2\n3,4\n5,6\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status, out, err = _run(capsys, "predict", tmp_path / "m.fgm", path, "--proba")
    assert status == 0 and err == ""
    assert_allclose(pd.read_csv(io.StringIO(out)).iloc[:, 1:].to_numpy(),
                    model.predict_proba([[1.0, 2], [3, 4], [5, 6]]), rtol=1e-12)


def test_bench_finds_the_test_columns_by_name(tmp_path, capsys):
    """bench reads the test file through the training file's columns: the same rows with the
    columns in another order score as the training file does."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=200), "b": 5 * rng.normal(size=200)})
    frame["y"] = (frame.a > 0).astype(int)
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    frame.to_csv(train, index=False)
    frame[["b", "y", "a"]].to_csv(test, index=False)
    expected = fastgen.GaussianNB().fit(frame[["a", "b"]], frame.y).score(frame[["a", "b"]],
                                                                          frame.y)
    for path in (train, test):
        status, out, _ = _run(capsys, "bench", "GaussianNB", train, path, "--label", "y",
                              "--no-plot", "--repeat", "1")
        assert status == 0
        accuracy = float(next(line for line in out.splitlines()
                              if line.startswith("fastgen ")).split()[-1])
        assert accuracy == pytest.approx(round(expected, 4), abs=1e-12)


def test_a_file_of_documents_alone(tmp_path, capsys):
    """A text model labels a file holding only documents, whatever punctuation they hold (a
    one-column file is right for it, not a wrong --delimiter)."""
    path = tmp_path / "train.csv"
    path.write_text("".join(f"{'ab'[k % 2]},{'win prize' if k % 2 else 'lunch at noon'}\n"
                            for k in range(20)))
    model_file = tmp_path / "m.fgm"
    assert _run(capsys, "train", "MultinomialNB", path, "--no-header", "--label", "1",
                "--text", "2", "-o", model_file)[0] == 0
    documents = ["lunch: at noon", "win; a prize", "noon | lunch"]
    new = tmp_path / "new.csv"
    new.write_text("\n".join(documents) + "\n")
    status, out, _ = _run(capsys, "predict", model_file, new)
    assert status == 0
    assert out.split() == ["label"] + fastgen.load(model_file).predict(documents).tolist()


def test_a_byte_order_mark_is_skipped(tmp_path, capsys):
    """A UTF-8 byte-order mark before the first record or header is not part of it."""
    rows = [{"a": k, "y": "xz"[k % 2]} for k in range(6)]
    for name, text in (("t.jsonl", "".join(json.dumps(r) + "\n" for r in rows)),
                       ("t.csv", "a,y\n" + "".join(f"{r['a']},{r['y']}\n" for r in rows))):
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
        assert _run(capsys, "train", "GaussianNB", path, "--label", "y", "-o",
                    tmp_path / "m.fgm")[0] == 0
        assert fastgen.load_metadata(tmp_path / "m.fgm")["input"]["columns"] == ["a", "y"]


def test_predictions_never_overwrite_the_data(table, tmp_path, capsys):
    path, _ = table
    model_file = tmp_path / "m.fgm"
    _run(capsys, "train", "MixedNB", path, "--label", "kind", "--drop", "id", "-o", model_file)
    before = path.read_bytes()
    assert "the data file" in _error(capsys, "predict", model_file, path, "-o", path)
    assert path.read_bytes() == before


def test_line_numbers_count_blank_lines_and_params_are_not_data(tmp_path, capsys):
    path = tmp_path / "blank.csv"
    path.write_text("a,b,y\n1,2,p\n\n3,4,q\n\n5,zz,p\n6,7,q\n")
    # 'zz' is one word among numbers: the message names its column; rows skip the blank lines
    assert "column 'b' holds numbers, and 1 values that are not: 'zz'" in _error(
        capsys, "train", "GaussianNB", path, "--label", "y")
    model_file = tmp_path / "m.fgm"
    path.write_text("a,b,y\n1,2,p\n\n3,4,q\n\n5,6,p\n6,7,q\n")
    status, out, _ = _run(capsys, "train", "GaussianNB", path, "--label", "y", "-o", model_file)
    assert status == 0 and "4 rows" in out
    path.write_text("a,b,y\n1,2,p\n\n3,4,q\n\n5,zz,p\n")
    assert f"{path}:6: column 'b' holds 'zz'" in _error(capsys, "evaluate", model_file, path)
    path.write_text("a,b,y\n1,2,p\n3,4,q\n")
    assert "error: --param: The 'var_smoothing' parameter of GaussianNB" in _error(
        capsys, "train", "GaussianNB", path, "--label", "y", "--param", "var_smoothing=-1")


_NINE_ROWS = "a,b,y\n" + "".join(f"{i % 3},{i % 5},{'pq'[i % 2]}\n" for i in range(9))


@pytest.mark.parametrize("model, param, message", [
    ("GaussianNB", "priors=[0.5,0.6]", "The sum of the priors should be 1"),
    ("GaussianNB", "prior_var=[1.0]", "prior_var must have shape (2,)"),
    ("MultinomialNB", "n_threads=0", "n_threads == 0 is invalid"),
    ("MultinomialNB", "alpha=[1,2,3]", "it should contains `n_features`"),
    ("MultinomialNB", "class_prior=[1,2,3]", "Number of priors must match number of classes"),
    ("PoissonNB", "alpha='evidence' beta=0", "needs beta > 0"),
    ("CategoricalNB", "min_categories=[3]", "'min_categories' should have shape (2,)"),
    ("LinearDiscriminantAnalysis", "n_components=2", "n_components cannot be larger"),
    ("LinearDiscriminantAnalysis", "prior_covariance=[1.0]", "prior_covariance must have shape"),
    ("QuadraticDiscriminantAnalysis", "prior_strength=(1,0.5)", "needs nu0 > n_features - 1"),
    ("MixedNB", "feature_types=['gaussian']", "feature_types must give one of"),
])
def test_a_bad_param_is_not_blamed_on_the_first_batch(tmp_path, capsys, model, param, message):
    """A hyperparameter that does not fit the data's shape (checked when the first batch is
    learned: a ValueError, not an InvalidParameterError) was reported at that batch's lines,
    as if they were wrong; it is an error of --param."""
    path = tmp_path / "t.csv"
    path.write_text(_NINE_ROWS)
    params = [arg for one in param.split() for arg in ("--param", one)]
    err = _error(capsys, "train", model, path, "--label", "y", "--batch-size", 4, *params,
                 "-o", tmp_path / "m.fgm")
    assert err.startswith("fastgen: error: --param: ") and message in err, err


def test_parameter_and_data_errors_of_svmlight_and_text_training(tmp_path, capsys):
    """svmlight and text training (an outside attack): a parameter's error came out without
    the --param prefix, and the data's without the file; text training's vectoriser
    parameters are --vectorizer-param's."""
    svm = tmp_path / "t.svm"
    svm.write_text("".join(f"{i % 2} 1:{i % 3 + 1} 2:{i % 5 + 1}\n" for i in range(9)))
    out = ["-o", tmp_path / "m.fgm"]
    err = _error(capsys, "train", "MultinomialNB", svm, "--param", "class_prior=[0.5]", *out)
    assert err.startswith("fastgen: error: --param: Number of priors must match"), err
    negative = tmp_path / "n.svm"
    negative.write_text("0 1:-1\n1 1:2\n")
    err = _error(capsys, "train", "MultinomialNB", negative, *out)
    assert err.startswith(f"fastgen: error: {negative}: ") and "Negative values" in err, err
    text = tmp_path / "t.csv"
    text.write_text("".join(f"{'ab'[i % 2]},word{i % 3} other\n" for i in range(12)))
    common = ["--no-header", "--label", "1", "--text", "2", *out]
    err = _error(capsys, "train", "MultinomialNB", text, *common, "--param", "class_prior=[1]")
    assert err.startswith("fastgen: error: --param: Number of priors must match"), err
    for param in ("ngram_range=(2,1)", "vocabulary=[]", "vocabulary={'a':5}",
                  "vocabulary={1:0}"):
        err = _error(capsys, "train", "MultinomialNB", text, *common, "--vectorizer-param",
                     param)
        assert err.startswith("fastgen: error: --vectorizer-param: "), err


def test_a_data_error_in_the_first_batch_names_its_lines(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(_NINE_ROWS.replace("\n1,", "\n-1,", 1))  # line 3
    err = _error(capsys, "train", "MultinomialNB", path, "--label", "y", "--batch-size", 4)
    assert err.startswith(f"fastgen: error: {path}:2-") and "Negative values" in err, err


def test_a_python_model_reads_a_table_by_its_feature_names(tmp_path, capsys):
    frame = pd.DataFrame({"h": [1.0, 2, 3, 4], "w": [0.5, 0.1, 0.9, 0.2], "y": [0, 1, 0, 1]})
    model_file = tmp_path / "m.fgm"
    fastgen.GaussianNB().fit(frame[["w", "h"]], frame["y"]).save(model_file)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    status, out, _ = _run(capsys, "evaluate", model_file, path, "--label", "y")
    assert status == 0 and "accuracy" in out
    frame.to_csv(path, index=False, header=False)
    assert "no column 'w', which the model reads (it was fitted on a DataFrame with that " \
        "column); this file has no header line" in _error(capsys, "evaluate", model_file, path,
                                                          "--no-header", "--label", "3")


def test_scanning_keeps_few_distinct_numbers(tmp_path, capsys, monkeypatch):
    from fastgen import _input

    monkeypatch.setattr(_input, "DISTINCT_NUMBERS", 10)
    path = tmp_path / "many.csv"
    path.write_text("x,y\n" + "".join(f"{i},{i % 2}\n" for i in range(50)) + "oops,1\n")
    assert "column 'x' holds over 10 distinct numbers, then 1 values that are not" in _error(
        capsys, "train", "MixedNB", path, "--label", "y", "--batch-size", "5")
    path.write_text("x,y\n" + "".join(f"{i},{i % 2}\n" for i in range(50)))
    assert _run(capsys, "train", "MixedNB", path, "--label", "y", "-o", tmp_path / "m.fgm")[0] \
        == 0


def test_a_json_key_given_twice_is_an_error(tmp_path, capsys):
    path = tmp_path / "twice.jsonl"
    path.write_text('{"x": 1, "y": "a"}\n{"x": 2, "y": "b", "x": 3}\n')
    assert "twice.jsonl:2: not a JSON object (the key 'x' appears twice)" in _error(
        capsys, "train", "GaussianNB", path, "--label", "y")


# ---------------------------------------------------------------------------------------
# Found by an outside attack on the command line (2026-11-28)


def _trained(capsys, tmp_path, name, content):
    """A GaussianNB model file trained on a file ``name`` of ``content`` (labels in 'label')."""
    train = tmp_path / name
    train.write_text(content)
    model_file = tmp_path / (name + ".fgm")
    _run(capsys, "train", "GaussianNB", train, "--label", "label", "-o", model_file)
    return train, model_file


def test_training_never_overwrites_the_data(table, tmp_path, capsys):
    path, _ = table
    before = path.read_bytes()
    assert "the data file" in _error(capsys, "train", "MixedNB", path, "--label", "kind",
                                     "-o", path)
    assert path.read_bytes() == before


def test_json_lines_errors_name_their_line_after_blank_lines(tmp_path, capsys):
    """Records were counted, not lines: a bad value on line 6 was reported at line 3."""
    _, model_file = _trained(capsys, tmp_path, "t.jsonl",
                             '{"a": 1, "label": "x"}\n{"a": 2, "label": "y"}\n')
    data = tmp_path / "blanks.jsonl"
    data.write_text('{"a": 1, "label": "x"}\n\n\n\n{"a": 2, "label": "y"}\n'
                    '{"a": "foo", "label": "y"}\n')
    assert f"{data}:6: column 'a' holds 'foo'" in _error(capsys, "predict", model_file, data)
    data.write_text('{"a": 1, "label": "x"}\n\n{"a": 5, "label": 7}\n')
    assert f"{data}:3: the labels mix" in _error(capsys, "train", "GaussianNB", data, "--label",
                                                 "label")
    data.write_text('{"a": 1, "label": "x"}\n{"a": ' + "[" * 5000 + "]" * 5000 +
                    ', "label": "y"}\n')
    assert f"{data}:2: a value nested too deeply" in _error(capsys, "train", "GaussianNB", data,
                                                            "--label", "label")


def test_integer_labels_beyond_float64_stay_distinct(tmp_path, capsys):
    """Labels of 1e19 and 1e19 + 1 were read as float64 and merged into one class."""
    path = tmp_path / "big.csv"
    path.write_text("a,label\n1,10000000000000000001\n2,10000000000000000000\n"
                    "3,10000000000000000001\n4,10000000000000000000\n5,7\n")
    model_file = tmp_path / "m.fgm"
    status, out, _ = _run(capsys, "train", "GaussianNB", path, "--label", "label", "-o",
                          model_file)
    assert status == 0 and "3 classes" in out
    assert fastgen.load(model_file).classes_.tolist() == [7, 10**19, 10**19 + 1]
    out_file = tmp_path / "p.csv"
    _run(capsys, "predict", model_file, path, "-o", out_file)
    assert set(out_file.read_text().split()[1:]) <= {"7", "10000000000000000000",
                                                     "10000000000000000001"}


def test_a_python_model_with_text_labels_is_evaluated_on_text(tmp_path, capsys):
    """A model fitted from Python on the labels '0' and '1' (text) was compared with the file's
    labels read as numbers: accuracy 0, every row 'a label the model never saw'."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    X = rng.normal(size=(200, 2)) + 2 * y[:, None]
    model = fastgen.GaussianNB().fit(X, y.astype(str))
    model_file = tmp_path / "m.fgm"
    model.save(model_file)
    path = tmp_path / "d.csv"
    path.write_text("".join(f"{a},{b},{c}\n" for (a, b), c in zip(X, y)))
    status, out, _ = _run(capsys, "evaluate", model_file, path, "--no-header", "--label", "3")
    assert status == 0
    assert f"accuracy  {model.score(X, y.astype(str)):.4f}" in out


def test_a_text_pipeline_saved_from_python_reads_one_document_a_row(tmp_path, capsys):
    """The command line gave the pipeline a DataFrame, whose vectoriser read its column names
    as the documents: one prediction for a file of 50 rows, or a traceback in evaluate. The
    documents are the column --text names, or the one column besides the label."""
    pytest.importorskip("sklearn")
    from sklearn.pipeline import make_pipeline

    docs = ["cheap pills now 100", "lunch at noon 12", "win cheap prizes 500",
            "meeting at noon 13"] * 5
    labels = ["spam", "ham", "spam", "ham"] * 5
    pipe = make_pipeline(fastgen.text.CountVectorizer(), fastgen.MultinomialNB()).fit(docs,
                                                                                        labels)
    model_file = tmp_path / "pipe.fgm"
    fastgen.save(pipe, model_file)
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"label": lab, "text": doc}) + "\n"
                            for doc, lab in zip(docs, labels)))
    out_file = tmp_path / "p.csv"
    status, out, _ = _run(capsys, "predict", model_file, path, "--label", "label", "-o",
                          out_file)
    assert status == 0
    assert out_file.read_text().split()[1:] == pipe.predict(docs).tolist()
    status, out, _ = _run(capsys, "evaluate", model_file, path, "--label", "label")
    assert status == 0 and f"accuracy  {pipe.score(docs, labels):.4f}" in out
    wide = tmp_path / "w.jsonl"
    wide.write_text("".join(json.dumps({"label": lab, "id": i, "text": doc}) + "\n"
                            for i, (doc, lab) in enumerate(zip(docs, labels))))
    assert "pass --text COLUMN" in _error(capsys, "predict", model_file, wide, "--label",
                                          "label")
    status, _, _ = _run(capsys, "predict", model_file, wide, "--label", "label", "--text",
                        "text", "-o", out_file)
    assert status == 0 and out_file.read_text().split()[1:] == pipe.predict(docs).tolist()


def test_the_data_files_format_is_its_own(tmp_path, capsys):
    """A model trained on CSV read a JSON lines file as CSV (whatever --format said), and the
    reverse: the data file's own format is read."""
    train, model_file = _trained(capsys, tmp_path, "t.csv", "a,b,label\n1,2,x\n3,4,y\n5,6,x\n")
    data, jsonl_model = _trained(capsys, tmp_path, "d.jsonl", '{"a": 1, "b": 2, "label": "x"}\n'
                                 '{"a": 3, "b": 4, "label": "y"}\n')
    out_file = tmp_path / "p.csv"
    status, _, _ = _run(capsys, "predict", model_file, data, "-o", out_file)
    assert status == 0 and len(out_file.read_text().split()) == 3
    status, _, _ = _run(capsys, "predict", jsonl_model, train, "--format", "csv", "-o", out_file)
    assert status == 0 and len(out_file.read_text().split()) == 4


def test_a_tsv_model_reads_a_csv_file_given_format_csv(tmp_path, capsys):
    _, model_file = _trained(capsys, tmp_path, "t.tsv",
                             "a\tb\tlabel\n1\t2\tx\n3\t4\ty\n5\t6\tx\n")
    data = tmp_path / "d.csv"
    data.write_text("a,b,label\n1,2,x\n3,4,y\n")
    out_file = tmp_path / "p.csv"
    status, _, _ = _run(capsys, "predict", model_file, data, "--format", "csv", "-o", out_file)
    assert status == 0 and len(out_file.read_text().split()) == 3


def test_text_is_refused_where_it_means_nothing(table, tmp_path, capsys):
    path, _ = table
    model_file = tmp_path / "m.fgm"
    _run(capsys, "train", "MixedNB", path, "--label", "kind", "--drop", "id", "-o", model_file)
    assert "--text 'shape': only for a text pipeline" in _error(capsys, "predict", model_file,
                                                                path, "--text", "shape")


@pytest.mark.skipif(sys.platform == "win32", reason="needs /dev/fd")
def test_training_on_svmlight_from_a_pipe_is_a_clear_error(tmp_path, capsys):
    """Training reads an svmlight file twice (its classes, then its rows): from a pipe the
    second read found nothing ("not fitted yet"), and from a FIFO it waited for ever."""
    import os
    import threading

    read, write = os.pipe()
    threading.Thread(target=lambda: os.fdopen(write, "wb").write(b"1 1:2\n0 2:3\n"),
                     daemon=True).start()
    try:
        assert "not a regular file" in _error(capsys, "train", "MultinomialNB",
                                              f"/dev/fd/{read}", "--format", "svmlight")
    finally:
        os.close(read)


def test_a_file_changed_between_the_two_passes_of_training_is_an_error(tmp_path, monkeypatch,
                                                                       capsys):
    """train reads a table twice (the scan for categories and classes, then the rows): a file
    replaced between the passes turned every category the scan had not seen into a missing
    value, and trained on that, exit 0 (outside attack). Such a value is now the error."""
    from fastgen import _input

    path = tmp_path / "swap.csv"
    path.write_text("a,c,y\n" + "".join(f"{i % 7},{'xy'[i % 2]},{'pq'[i % 2]}\n"
                                         for i in range(100)))
    scan = _input.scan

    def scan_then_swap(*args, **kwargs):
        result = scan(*args, **kwargs)
        path.write_text("a,c,y\n" + "".join(f"{i % 7},{'ZW'[i % 2]},{'pq'[i % 2]}\n"
                                             for i in range(100)))
        return result

    monkeypatch.setattr(_input, "scan", scan_then_swap)
    model = tmp_path / "m.fgm"
    assert main(["train", "MixedNB", str(path), "--label", "y", "-o", str(model),
                 "--quiet"]) == 2
    assert "column 'c' holds 'Z', which the first pass over the file did not find" in \
        capsys.readouterr().err
    assert not model.exists()


def test_predictions_are_not_written_over_the_data_or_the_model_file(tmp_path, capsys):
    """predict -o DATA was refused, but predict -o MODEL overwrote the model file with the
    predictions (outside attack)."""
    path = tmp_path / "t.csv"
    path.write_text("a,b,y\n" + "".join(f"{i % 3},{i % 5},{'pq'[i % 2]}\n" for i in range(20)))
    model = tmp_path / "m.fgm"
    assert main(["train", "GaussianNB", str(path), "--label", "y", "-o", str(model),
                 "--quiet"]) == 0
    before = model.read_bytes()
    for output, name in ((model, "the model file"), (path, "the data file")):
        assert main(["predict", str(model), str(path), "-o", str(output)]) == 2
        assert f"that is {name}" in capsys.readouterr().err
    assert model.read_bytes() == before
    assert main(["predict", str(model), str(path), "-o", str(tmp_path / "p.csv")]) == 0


def test_the_confusion_matrix_shows_labels_that_are_not_printable_as_their_repr(tmp_path,
                                                                                 capsys):
    """evaluate printed labels as they are: a line break in one broke the table, and a
    terminal's escape sequence reached the terminal (outside attack)."""
    path = tmp_path / "t.csv"
    labels = ['"a\nb"', '"red\x1b[31m"']
    path.write_text("x,y\n" + "".join(f"{i % 5},{labels[i % 2]}\n" for i in range(40)))
    model = tmp_path / "m.fgm"
    assert main(["train", "GaussianNB", str(path), "--label", "y", "-o", str(model),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model), str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "'a\\nb'" in out and "'red\\x1b[31m'" in out
    table = out[out.index("confusion matrix"):].splitlines()
    assert len(table) == 4  # the title, the header and a line for each label


def test_a_vectorizer_thread_count_is_a_parameter_error_and_json_lines_have_no_header(
        tmp_path, capsys):
    """--vectorizer-param n_threads=0 was blamed on the data file; a JSON lines file's bad
    value suggested --header, which JSON lines do not have (outside attack)."""
    docs = tmp_path / "sms.tsv"
    docs.write_text("label\ttext\nham\thello there\nspam\twin money\nham\tsee you\n")
    assert main(["train", "MultinomialNB", str(docs), "--label", "label", "--text", "text",
                 "--vectorizer-param", "n_threads=0", "-o", str(tmp_path / "v.fgm"),
                 "--quiet"]) == 2
    assert "--vectorizer-param: n_threads == 0 is invalid" in capsys.readouterr().err
    lines = tmp_path / "big.jsonl"
    lines.write_text('{"a": "inf", "y": "p"}\n{"a": 1, "y": "q"}\n')
    assert main(["train", "GaussianNB", str(lines), "--label", "y", "-o",
                 str(tmp_path / "j.fgm"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "holds 'inf', not a finite number" in err and "--header" not in err


def test_evaluate_on_rows_that_all_lack_a_label_says_so(tmp_path, capsys):
    """It said "no data rows" (outside attack)."""
    path = tmp_path / "t.csv"
    path.write_text("a,y\n" + "".join(f"{i},{'pq'[i % 2]}\n" for i in range(10)))
    model = tmp_path / "m.fgm"
    assert main(["train", "GaussianNB", str(path), "--label", "y", "-o", str(model),
                 "--quiet"]) == 0
    unlabelled = tmp_path / "u.csv"
    unlabelled.write_text("a,y\n1,\n2,\n")
    capsys.readouterr()
    assert main(["evaluate", str(model), str(unlabelled)]) == 2
    assert "no labelled rows (all 2 lack a label)" in capsys.readouterr().err
