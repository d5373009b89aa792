"""docs/command_line.md runs as written on the real files, and each accuracy it shows is both what
the command line prints and what the Python API gives on the same split."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastgen

DOC = Path(__file__).resolve().parents[1] / "docs" / "command_line.md"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TEXT = DOC.read_text(encoding="utf-8")
# each ```bash block, with the accuracy shown in the ```text block after it
EXAMPLES = re.findall(r"```bash\n(.*?)```\s*\n```text\naccuracy  (\S+)\n```", TEXT, re.S)

pd = pytest.importorskip("pandas")
pytest.importorskip("sklearn")
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"the datasets are not in {DATA} "
                                "(they sit beside the checkout in CI, not in a user's clone)")


def _adult():
    read = {"header": None, "skipinitialspace": True, "na_values": "?"}
    train = pd.read_csv(DATA / "adult" / "adult-train.csv", **read)
    test = pd.read_csv(DATA / "adult" / "adult-test.csv", **read)
    model = fastgen.MixedNB().fit(train.iloc[:, :14], train[14])
    return model.score(test.iloc[:, :14], test[14].str.rstrip("."))


def _mushroom():
    rows = pd.read_csv(DATA / "mushroom" / "agaricus-lepiota.data", header=None, dtype=str,
                       na_values="?", keep_default_na=False)
    train, test = rows.iloc[:6000], rows.iloc[6000:]
    model = fastgen.CategoricalNB(handle_unknown="ignore")
    return model.fit(train.iloc[:, 1:], train[0]).score(test.iloc[:, 1:], test[0])


def _colic():
    read = {"sep": r"\s+", "na_values": "?"}
    train = pd.read_csv(DATA / "horse_colic" / "horse-colic.data", **read)
    test = pd.read_csv(DATA / "horse_colic" / "horse-colic-test.data", **read)
    train, test = train.dropna(subset=["Outcome"]), test.dropna(subset=["Outcome"])
    drop = ["Outcome", "Hosp_num", "Surgical_lesion", "Type_of_lesion", "T_of_l", "T_of_l.1",
            "Cp_data"]
    model = fastgen.GaussianNB().fit(train.drop(columns=drop), train.Outcome)
    return model.score(test.drop(columns=drop), test.Outcome)


def _pipeline(train_docs, train_labels, test_docs, test_labels, **params):
    from sklearn.pipeline import make_pipeline

    from fastgen.text import CountVectorizer

    model = make_pipeline(CountVectorizer(), fastgen.MultinomialNB(**params))
    return model.fit(train_docs, train_labels).score(test_docs, test_labels)


def _sms():
    lines = (DATA / "sms_spam" / "SMSSpamCollection").read_text(encoding="utf-8").splitlines()
    labels, docs = zip(*(line.split("\t", 1) for line in lines))
    return _pipeline(docs[:4500], labels[:4500], docs[4500:], labels[4500:])


def _news():
    train = pd.read_json(DATA / "newsgroups20" / "20news-bydate-train.jsonl.gz", lines=True)
    test = pd.read_json(DATA / "newsgroups20" / "20news-bydate-test.jsonl.gz", lines=True)
    return _pipeline(train.text.tolist(), train.label, test.text.tolist(), test.label,
                     alpha=0.01)


PYTHON = {"adult.fgm": _adult, "mushroom.fgm": _mushroom, "colic.fgm": _colic,
          "sms.fgm": _sms, "news.fgm": _news}


def test_every_example_is_checked():
    written = [re.search(r"-o (\S+\.fgm)", commands).group(1) for commands, _ in EXAMPLES]
    assert written == list(PYTHON)


@pytest.mark.parametrize("commands, shown", EXAMPLES, ids=list(PYTHON))
def test_documented_commands(commands, shown, tmp_path):
    script = f'fastgen() {{ "{sys.executable}" -m fastgen "$@"; }}\nset -e\n{commands}'
    env = {**os.environ, "DATA": str(DATA)}
    run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    printed = re.findall(r"^accuracy  (\S+)$", run.stdout, re.M)
    assert printed == [shown], run.stdout
    model_file = re.search(r"-o (\S+\.fgm)", commands).group(1)
    assert f"{PYTHON[model_file]():.4f}" == shown
    assert run.stderr == ""


def test_saved_text_model_scores_raw_strings(tmp_path, monkeypatch):
    """The Python block of the page: a text model file is one object scoring raw text."""
    block = re.search(r"```python\n(.*?)```", TEXT, re.S).group(1)
    lines = (DATA / "sms_spam" / "SMSSpamCollection").read_text(encoding="utf-8").splitlines()
    labels, docs = zip(*(line.split("\t", 1) for line in lines[:800]))
    from sklearn.pipeline import make_pipeline

    from fastgen.text import CountVectorizer

    pipeline = make_pipeline(CountVectorizer(), fastgen.MultinomialNB())
    fastgen.save(pipeline.fit(docs, labels), tmp_path / "news.fgm")
    namespace = {}
    monkeypatch.chdir(tmp_path)
    exec(compile(block, str(DOC), "exec"), namespace)
    news = namespace["news"]
    assert np.array_equal(news.predict_proba(docs[:50]), pipeline.predict_proba(docs[:50]))
