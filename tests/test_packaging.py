"""Packaging: one version, and the README's development install names pyproject's build requirements."""
import importlib.metadata
import re
import runpy
import shlex
import tomllib
import types
from pathlib import Path

import pytest

import fastgen

ROOT = Path(__file__).resolve().parents[1]


def test_installed_version_is_the_package_version():
    # pyproject.toml reads the version from fastgen/_version.py, as fastgen.__version__ does
    assert importlib.metadata.version("fastgen") == fastgen.__version__


def test_development_install_names_the_build_requirements():
    """The README's development install first installs pyproject.toml's [build-system] requires
    (the editable install that follows runs without build isolation)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Development\n.*?```bash\n(.*?)```", readme, re.S | re.M).group(1)
    first = shlex.split(block.splitlines()[0], comments=True)
    with open(ROOT / "pyproject.toml", "rb") as f:
        requires = tomllib.load(f)["build-system"]["requires"]
    assert first == ["pip", "install", *requires]


def _build_ext_runs(monkeypatch, tmp_path):
    """A function that runs setup.py's BuildExt.build_extensions as one `setup.py build_ext` would
    (a fresh command and extension each time, the build directory kept), with setup.py loaded
    without running cythonize or setup(), and the compiler, probes and setuptools' own build
    stubbed; and setuptools' build_ext, whose build_extensions the caller replaces."""
    pytest.importorskip("Cython.Build")
    import setuptools
    import Cython.Build
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    monkeypatch.setattr(Cython.Build, "cythonize", lambda extensions, **kwargs: extensions)
    monkeypatch.chdir(tmp_path)  # setup.py globs fastgen/_core/*.pyx and *.c: none here
    BuildExt = runpy.run_path(str(ROOT / "setup.py"))["BuildExt"]

    def run():
        cmd = BuildExt(Distribution({"ext_modules": [Extension("fastgen._core._x", ["x.c"])]}))
        cmd.initialize_options()
        cmd.finalize_options()
        cmd.build_temp = str(tmp_path / "temp")
        cmd.compiler = types.SimpleNamespace(compiler_type="unix")
        cmd._probe_openmp = lambda cflags, ldflags: None
        cmd._supports_avx2 = lambda compiler_type: False
        cmd.build_extensions()

    return run, build_ext


def test_interrupted_build_with_other_flags_forces_the_next_build(monkeypatch, tmp_path):
    """A build with other flags (here FASTGEN_NO_OPENMP=1) that fails or is interrupted after
    compiling some modules must not leave the previous build's flags stamp: the next build with
    those flags would find it unchanged and keep the serial modules."""
    run, build_ext = _build_ext_runs(monkeypatch, tmp_path)
    forced = []
    monkeypatch.setattr(build_ext, "build_extensions", lambda self: forced.append(bool(self.force)))
    monkeypatch.delenv("FASTGEN_NO_OPENMP", raising=False)
    run()  # OpenMP: the stamp is written
    run()  # the same flags: nothing forced
    assert forced == [True, False]

    def interrupted(self):
        raise KeyboardInterrupt  # some modules were compiled serial, then Ctrl-C

    monkeypatch.setattr(build_ext, "build_extensions", interrupted)
    monkeypatch.setenv("FASTGEN_NO_OPENMP", "1")
    with pytest.raises(KeyboardInterrupt):
        run()

    monkeypatch.setattr(build_ext, "build_extensions", lambda self: forced.append(bool(self.force)))
    monkeypatch.delenv("FASTGEN_NO_OPENMP")
    run()  # OpenMP again: every module is rebuilt
    assert forced == [True, False, True]


def test_setup_py_does_nothing_in_a_spawned_worker(monkeypatch, tmp_path):
    """cythonize's worker processes are spawned on macOS and Windows, and run setup.py again as
    __mp_main__: there it must neither cythonize nor call setup() (`python setup.py build_ext
    --inplace` failed with BrokenProcessPool)."""
    pytest.importorskip("Cython.Build")
    import setuptools
    import Cython.Build

    def forbidden(*args, **kwargs):
        raise AssertionError("setup.py cythonized or called setup() in a spawned worker")

    monkeypatch.setattr(setuptools, "setup", forbidden)
    monkeypatch.setattr(Cython.Build, "cythonize", forbidden)
    monkeypatch.chdir(tmp_path)
    assert "BuildExt" in runpy.run_path(str(ROOT / "setup.py"), run_name="__mp_main__")
