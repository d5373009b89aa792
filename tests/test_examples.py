"""The examples in ``examples/`` run and give sensible results.

``examples/missing_values.py`` and ``examples/categorical_missing.py`` need the real datasets in
``../shared/data`` (skipped when absent) and scikit-learn (the latter pandas too); they are run
in-process with ``--quick`` (2 folds, 1 repeat) so that their results can be checked, and as scripts
without data to check their error message.

The sphinx-gallery scripts in ``examples/gallery/`` need only fastgen's own data and matplotlib;
each is run as a script with the Agg backend (about 10 s for all of them), so that a broken gallery
fails the test suite before it fails the documentation build.
"""

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = REPO_ROOT / "examples" / "missing_values.py"
CATEGORICAL_EXAMPLE = REPO_ROOT / "examples" / "categorical_missing.py"
BAYES_EXAMPLE = REPO_ROOT / "examples" / "bayesian_prediction.py"
SEMI_EXAMPLE = REPO_ROOT / "examples" / "semi_supervised.py"


def _load_example(path=EXAMPLE):
    spec = importlib.util.spec_from_file_location(f"fastgen_example_{path.stem}", path)
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


@pytest.mark.parametrize("example", [EXAMPLE, CATEGORICAL_EXAMPLE, BAYES_EXAMPLE, SEMI_EXAMPLE],
                         ids=lambda path: path.stem)
def test_example_without_data(tmp_path, example):
    """Run as a script (from another directory) without the data: a message, no traceback."""
    absent = tmp_path / "no-such-dir"
    proc = subprocess.run(
        [sys.executable, str(example), "--quick", "--data", str(absent)],
        check=False, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert "not found" in proc.stderr and str(absent) in proc.stderr and "--data" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------------------------------
# examples/categorical_missing.py


@pytest.fixture(scope="module")
def categorical_example():
    pytest.importorskip("sklearn")
    pytest.importorskip("pandas")
    return _load_example(CATEGORICAL_EXAMPLE)


def test_categorical_missing_quick(shared_data, categorical_example, capsys):
    example = categorical_example
    results = example.run(["--quick", "--data", str(shared_data)])
    out = capsys.readouterr().out

    assert list(results) == list(example.DATASETS)
    assert "| dataset | model | accuracy: marginalise" in out
    categorical = ("house-votes", "mushroom", "soybean")
    for name, result in results.items():
        expected_models = list(example.MODELS) if name in categorical else ["MixedNB"]
        assert result.models == expected_models, name
        for model in expected_models:
            assert f"| {name} | {model} |" in out
            for strategy in example.STRATEGIES:
                cell = result.cells[model, strategy]
                if model == "sklearn CategoricalNB" and strategy == "marginalise":
                    assert not cell.applicable and not cell.accuracy
                    continue
                # codes cover every category of the dataset; MixedNB ignores unseen ones: no failures
                assert not cell.failures, (name, model, strategy, cell.failures)
                assert len(cell.accuracy) == len(cell.log_loss) == 2
                assert all(0.0 <= a <= 1.0 for a in cell.accuracy)
                assert all(math.isfinite(v) and v >= 0 for v in cell.log_loss)
                # numerical trouble, or deprecated pandas use (an unseen category in MixedNB)
                bad = ("RuntimeWarning", "FutureWarning", "DeprecationWarning", "Pandas")
                assert not [w for w in cell.warnings if w.startswith(bad)], (name, model, strategy,
                                                                              cell.warnings)
    # soybean: 4 classes have no complete row, so drop-rows always loses a class
    assert results["soybean"].missing_class_folds == 2
    assert "soybean / drop-rows: in 2 fold(s) a class had no complete training row" in out

    def mean(name, model, strategy="marginalise", metric="accuracy"):
        values = getattr(results[name].cells[model, strategy], metric)
        return sum(values) / len(values)

    # well above the majority class (house-votes 0.61, mushroom 0.52, soybean 0.13, adult 0.76,
    # hypothyroid 0.92; naive Bayes gets 0.96 there)
    for model in ("CategoricalNB", "MixedNB"):
        for strategy in ("marginalise", "impute"):
            assert mean("house-votes", model, strategy) > 0.85
            assert mean("mushroom", model, strategy) > 0.9
            assert mean("soybean", model, strategy) > 0.85
    for strategy in example.STRATEGIES:
        assert mean("adult", "MixedNB", strategy) > 0.78
        assert mean("hypothyroid", "MixedNB", strategy) > 0.95

    # the same codes give scikit-learn's CategoricalNB, fold by fold
    for name in categorical:
        for strategy in example.STRATEGIES[1:]:
            ours = results[name].cells["CategoricalNB", strategy]
            ref = results[name].cells["sklearn CategoricalNB", strategy]
            assert ours.accuracy == ref.accuracy, (name, strategy)
            assert ours.log_loss == pytest.approx(ref.log_loss, rel=1e-9, abs=1e-12), (name, strategy)
    # house-votes: every training fold sees both answers of every vote, so MixedNB on the strings
    # and CategoricalNB on the codes are the same model (with and without missing values)
    for strategy in ("marginalise", "impute"):
        ours = results["house-votes"].cells["MixedNB", strategy]
        ref = results["house-votes"].cells["CategoricalNB", strategy]
        assert ours.log_loss == pytest.approx(ref.log_loss, rel=1e-9, abs=1e-12), strategy


@pytest.mark.parametrize("name", ["mushroom", "soybean"])
def test_categorical_missing_fold_matches_sklearn(shared_data, categorical_example, name):
    """One fold of the example by hand: imputed codes give sklearn's CategoricalNB to 1e-9, and
    marginalising counts each feature over the rows where it is observed."""
    import numpy as np
    from sklearn.model_selection import RepeatedStratifiedKFold
    from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB

    import fastgen

    example = categorical_example
    ds = example.load(name, shared_data)
    train, test = next(RepeatedStratifiedKFold(n_splits=5, n_repeats=1, random_state=0)
                       .split(np.zeros(len(ds.y)), ds.y))
    X_tr, y_tr, X_te = ds.X.iloc[train], ds.y[train], ds.X.iloc[test]
    categories = ds.categories()
    n_categories = np.array([len(categories[c]) for c in ds.X.columns])

    Xi_tr, yi_tr, Xi_te = example.apply_strategy("impute", ds, X_tr, y_tr, X_te)
    C_tr, C_te = example.encode(Xi_tr, categories), example.encode(Xi_te, categories)
    assert C_tr.min() >= 0 and C_te.min() >= 0
    ours = fastgen.CategoricalNB(min_categories=n_categories).fit(C_tr, yi_tr)
    ref = SkCategoricalNB(min_categories=n_categories).fit(C_tr, yi_tr)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    np.testing.assert_array_equal(ours.n_categories_, ref.n_categories_)
    np.testing.assert_allclose(ours.class_log_prior_, ref.class_log_prior_, rtol=0, atol=1e-9)
    for j in range(len(n_categories)):
        np.testing.assert_array_equal(ours.category_count_[j], ref.category_count_[j])
        np.testing.assert_allclose(ours.feature_log_prob_[j], ref.feature_log_prob_[j], rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.predict_proba(C_te), ref.predict_proba(C_te), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(ours.predict(C_te), ref.predict(C_te))

    # marginalise: -1 codes are skipped when counting, feature by feature
    M_tr, M_te = example.encode(X_tr, categories), example.encode(X_te, categories)
    assert (M_tr < 0).any() and (M_te < 0).any()
    marg = fastgen.CategoricalNB(min_categories=n_categories).fit(M_tr, y_tr)
    np.testing.assert_allclose(marg.class_log_prior_, ref.class_log_prior_, rtol=0, atol=1e-12)
    for j in np.flatnonzero((M_tr < 0).any(axis=0)):
        seen = M_tr[:, j] >= 0
        col = SkCategoricalNB(min_categories=n_categories[j]).fit(M_tr[seen, j:j + 1], y_tr[seen])
        rows = np.searchsorted(marg.classes_, col.classes_)
        np.testing.assert_allclose(marg.feature_log_prob_[j][rows], col.feature_log_prob_[0],
                                   rtol=0, atol=1e-9)
        # a class never observed in feature j (soybean): only the smoothing, a uniform distribution
        unseen = np.setdiff1d(np.arange(len(marg.classes_)), rows)
        np.testing.assert_allclose(marg.feature_log_prob_[j][unseen], -np.log(n_categories[j]),
                                   rtol=0, atol=1e-12)
    # ... and left out of the product at predict time
    proba = marg.predict_proba(M_te)
    jll = np.tile(marg.class_log_prior_, (len(M_te), 1))
    for j in range(M_te.shape[1]):
        seen = M_te[:, j] >= 0
        jll[seen] += marg.feature_log_prob_[j][:, M_te[seen, j]].T
    expected = np.exp(jll - jll.max(axis=1, keepdims=True))
    np.testing.assert_allclose(proba, expected / expected.sum(axis=1, keepdims=True), rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", ["adult", "hypothyroid"])
def test_categorical_missing_mixed_fold_matches_sklearn(shared_data, categorical_example, name):
    """One fold of the example by hand: MixedNB on the imputed DataFrame is scikit-learn's GaussianNB
    on the numeric columns plus CategoricalNB on the codes of the categorical ones, with the class
    prior counted once and an unseen category left out."""
    from scipy.stats import norm
    from sklearn.model_selection import RepeatedStratifiedKFold
    from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB
    from sklearn.naive_bayes import GaussianNB as SkGaussianNB

    import fastgen

    example = categorical_example
    ds = example.load(name, shared_data, adult_rows=3000)
    train, test = next(RepeatedStratifiedKFold(n_splits=5, n_repeats=1, random_state=0)
                       .split(np.zeros(len(ds.y)), ds.y))
    X_tr, X_te = example.standardise(ds, ds.X.iloc[train], ds.X.iloc[test])
    X_tr, y_tr, X_te = example.apply_strategy("impute", ds, X_tr, ds.y[train], X_te)

    model = fastgen.MixedNB(handle_unknown="ignore").fit(X_tr, y_tr)
    kinds = ["gaussian" if c in ds.numeric else "categorical" for c in ds.X.columns]
    assert model.feature_types_ == kinds

    gauss = SkGaussianNB().fit(X_tr[ds.numeric], y_tr)
    seen = {c: sorted(X_tr[c].unique()) for c in ds.categorical}  # the training fold's labels
    codes_tr = example.encode(X_tr[ds.categorical], seen)
    codes_te = example.encode(X_te[ds.categorical], seen)
    cat = SkCategoricalNB(min_categories=[len(seen[c]) for c in ds.categorical]).fit(codes_tr, y_tr)
    np.testing.assert_array_equal(model.classes_, gauss.classes_)
    np.testing.assert_allclose(model.class_prior_, gauss.class_prior_, rtol=0, atol=1e-12)

    jll = np.tile(np.log(gauss.class_prior_), (len(X_te), 1))
    x = X_te[ds.numeric].to_numpy()
    jll += norm.logpdf(x[:, None, :], gauss.theta_, np.sqrt(gauss.var_)).sum(axis=2)
    for j in range(codes_te.shape[1]):
        known = codes_te[:, j] >= 0  # handle_unknown="ignore": an unseen label is marginalised
        jll[known] += cat.feature_log_prob_[j][:, codes_te[known, j]].T
    expected = np.exp(jll - jll.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict_proba(X_te), expected, rtol=0, atol=1e-9)


def test_bayesian_prediction_quick(shared_data, capsys):
    """Few training rows: the predictive fits wherever it is asked to and its log-loss beats the
    plug-in's on breast cancer; the smoothed CategoricalNB beats the unsmoothed one."""
    pytest.importorskip("pandas")
    example = _load_example(BAYES_EXAMPLE)
    results = example.main(["--quick", "--data", str(shared_data),
                            "--datasets", "breast-cancer,house-votes"])
    assert "| breast-cancer | GaussianNB predictive |" in capsys.readouterr().out
    for name in example.GAUSSIAN_MODELS:
        for n in (10, 50):
            accuracy, log_loss, failed = results["breast-cancer", f"{name} predictive", n]
            assert failed == 0 and accuracy > 0.9
        plug_in = results["breast-cancer", f"{name} plug-in", 10]
        assert np.isnan(plug_in[1]) or results["breast-cancer", f"{name} predictive", 10][1] \
            < plug_in[1]
    smoothed = results["house-votes", "CategoricalNB predictive (alpha=1)", 10]
    assert smoothed[1] < results["house-votes", "CategoricalNB ML plug-in (alpha=1e-10)", 10][1]


def test_semi_supervised_quick(shared_data, capsys):
    """Few labels: EM over the unlabelled messages beats the labelled ones alone on SMS, and a
    lambda chosen as 0 gives exactly the labelled-only model (spambase, where EM hurts)."""
    pytest.importorskip("sklearn")
    example = _load_example(SEMI_EXAMPLE)
    results = example.main(["--quick", "--data", str(shared_data), "--datasets", "sms,spambase",
                            "--models", "MultinomialNB,GaussianNB"])
    out = capsys.readouterr().out
    assert "| sms | MultinomialNB | 1% (45) |" in out
    assert "| spambase | GaussianNB | 10/class (20) |" in out
    assert list(results) == ["sms", "spambase"]
    chosen_zero = 0
    for name, key in (("sms", ("MultinomialNB", 0.01)), ("spambase", ("GaussianNB", 10))):
        cells = results[name][key]
        assert list(cells) == list(example.METHODS)
        for method, cell in cells.items():
            assert len(cell.accuracy) == len(cell.seconds) == 2, (name, method)
            assert all(0.0 <= a <= 1.0 for a in cell.accuracy)
            assert not [w for w in cell.warnings if w.startswith("RuntimeWarning")], cell.warnings
        chosen, alone = cells["EM, lambda chosen"], cells["labelled only"]
        assert set(chosen.lambdas) <= set(example.LAMBDAS)
        for lam, accuracy, accuracy_alone in zip(chosen.lambdas, chosen.accuracy, alone.accuracy):
            if lam == 0:
                chosen_zero += 1
                assert accuracy == accuracy_alone, name
    assert chosen_zero  # spambase's Gaussian classes are no model of its unlabelled rows

    def mean(name, key, method):
        return np.mean(results[name][key][method].accuracy)

    sms = ("sms", ("MultinomialNB", 0.01))
    # 45 labelled messages: labelled only about 0.91, EM about 0.97 (majority class 0.87)
    assert mean(*sms, "EM, lambda=1") > mean(*sms, "labelled only") + 0.03
    assert mean(*sms, "EM, lambda chosen") > mean(*sms, "labelled only") + 0.03


# --------------------------------------------------------------------------------------------------
# examples/gallery: the sphinx-gallery scripts, which the documentation build runs


GALLERY = REPO_ROOT / "examples" / "gallery"
GALLERY_SCRIPTS = sorted(GALLERY.glob("plot_*.py"))


def test_gallery_layout():
    """The scripts the docs build expects are there, in sphinx-gallery's format: a module
    docstring opening with a title underlined by '=', then cells separated by '# %%' lines."""
    import ast

    names = {path.stem for path in GALLERY_SCRIPTS}
    assert {"plot_decision_regions", "plot_missing_values", "plot_loss_matrix", "plot_sampling",
            "plot_informative_words", "plot_speed"} <= names
    header = (GALLERY / "GALLERY_HEADER.rst").read_text(encoding="utf-8").splitlines()
    assert header[0] == "Examples gallery" and header[1] == "=" * len(header[0])
    for path in GALLERY_SCRIPTS:
        source = path.read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(source), clean=False)
        assert docstring, path.name
        title, underline = docstring.strip("\n").splitlines()[:2]
        assert underline == "=" * len(title), path.name
        assert "\n# %%\n" in source, path.name


@pytest.mark.parametrize("script", GALLERY_SCRIPTS, ids=lambda path: path.stem)
def test_gallery_script_runs(script, tmp_path):
    """Each script runs as the docs build runs it (Agg backend, from another directory), using
    only the data that ships with fastgen, without warnings, in a few seconds."""
    pytest.importorskip("matplotlib")
    import os

    import fastgen

    env = dict(os.environ, MPLBACKEND="Agg")
    # the fastgen this test imported, wherever it comes from (checkout or installed)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(fastgen.__file__).resolve().parents[1])]
        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", str(script)],
                          check=False, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Warning" not in proc.stderr, proc.stderr[-3000:]
