"""Packaging: one version, and the README's development install names pyproject's build requirements."""
import importlib.metadata
import re
import shlex
import tomllib
from pathlib import Path

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
