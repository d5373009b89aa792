"""Smoke test of an installed fastgen (a wheel), run from outside the checkout.

Used by cibuildwheel's test-command (pyproject.toml) and by .ci/run on the repaired Linux wheel
installed where no compiler can run. It checks what a build from the source tree would hide: the
distribution holds a compiled module for every kernel and the package data, `fastgen` is not
imported from the checkout, the command line works, and model files (a classifier and a text
Pipeline) save and load. Needs scikit-learn for the Pipeline.
"""
import importlib.machinery
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath

import numpy as np
from shipped import shipped_files  # .ci/shipped.py, beside this script
from sklearn.pipeline import make_pipeline

import fastgen
from fastgen.data import load_sms_spam
from fastgen.text import CountVectorizer

CHECKOUT = Path(__file__).resolve().parents[1]
PACKAGE_DATA = shipped_files(CHECKOUT)
# setup.py builds the AVX2 twins (_X_avx2.pyx) only on x86-64 with a gcc-compatible compiler: not on
# arm64 (Linux, macOS) nor with MSVC (Windows), where their .pyx ships without a compiled module
AVX2_TWINS = platform.machine().lower() in ("x86_64", "amd64") and sys.platform != "win32"


def check_distribution():
    """The installed files: package data, and a compiled module beside every kernel's .pyx (the AVX2
    twins only where setup.py builds them)."""
    assert not Path(fastgen.__file__).resolve().is_relative_to(CHECKOUT), (
        f"fastgen was imported from the checkout ({fastgen.__file__}), not from the installed wheel")
    assert importlib.metadata.version("fastgen") == fastgen.__version__
    files = {PurePosixPath(str(f)) for f in importlib.metadata.files("fastgen")}
    missing = [name for name in PACKAGE_DATA if PurePosixPath(name) not in files]
    assert not missing, f"package data missing from the distribution: {missing}"
    compiled = {f.parent / f.name.split(".")[0] for f in files
                if any(f.name.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)}
    kernels = sorted(f.with_suffix("") for f in files
                     if f.parent == PurePosixPath("fastgen/_core") and f.suffix == ".pyx")
    assert kernels, "no kernel sources (fastgen/_core/*.pyx) in the distribution"
    if not AVX2_TWINS:
        kernels = [k for k in kernels if not k.name.endswith("_avx2")]
    uncompiled = [str(k) for k in kernels if k not in compiled]
    assert not uncompiled, f"kernels without a compiled module: {uncompiled}"


def run_command(*args):
    """Run the installed `fastgen` command; return its standard output."""
    exe = shutil.which("fastgen")
    assert exe is not None, "the fastgen command is not on PATH"
    env = {**os.environ, "PYTHONUTF8": "1"}  # the demo prints µ and é, whatever the console's code page
    done = subprocess.run([exe, *args], capture_output=True, encoding="utf-8", env=env, timeout=600)
    assert done.returncode == 0, f"fastgen {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def check_model_files(folder):
    """A classifier and a text Pipeline survive fastgen.save/fastgen.load unchanged."""
    X = np.array([[2, 0, 1], [0, 3, 1], [1, 1, 0]])
    model = fastgen.MultinomialNB().fit(X, ["ham", "spam", "ham"])
    model.save(folder / "model.fastgen")
    loaded = fastgen.load(folder / "model.fastgen")
    np.testing.assert_array_equal(loaded.predict_log_proba(X), model.predict_log_proba(X))

    texts, labels = load_sms_spam()
    pipe = make_pipeline(CountVectorizer(), fastgen.MultinomialNB()).fit(texts[:2000], labels[:2000])
    fastgen.save(pipe, folder / "sms.fastgen", metadata={"rows": 2000})
    loaded = fastgen.load(folder / "sms.fastgen")
    new = texts[2000:2200]
    np.testing.assert_array_equal(loaded.predict_log_proba(new), pipe.predict_log_proba(new))
    assert fastgen.load_metadata(folder / "sms.fastgen") == {"rows": 2000}


def main():
    check_distribution()
    info = run_command("info")
    assert fastgen.__version__ in info, info
    demo = run_command("demo")
    assert "MultinomialNB" in demo, demo
    with tempfile.TemporaryDirectory() as tmp:
        check_model_files(Path(tmp))
    print(info, end="")
    print(f"smoke test passed: fastgen {fastgen.__version__} from {Path(fastgen.__file__).parent}")


if __name__ == "__main__":
    main()
