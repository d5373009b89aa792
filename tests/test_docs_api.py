"""The API reference (docs/api.rst) lists every public name, so that a new class or function
cannot be left out of the documentation."""
from pathlib import Path

import pytest

import fastgen
import fastgen.data
import fastgen.io
import fastgen.text

API = (Path(__file__).resolve().parents[1] / "docs" / "api.rst").read_text(encoding="utf-8")


@pytest.mark.parametrize("module", [fastgen, fastgen.io, fastgen.text, fastgen.data],
                         ids=lambda m: m.__name__)
def test_every_public_name_is_documented(module):
    section = API if module is fastgen else API[API.index(f"automodule:: {module.__name__}"):]
    listed = {line.strip().removeprefix(".. data:: ") for line in section.splitlines()}
    missing = [name for name in module.__all__ if name not in listed]
    assert not missing, f"not in docs/api.rst: {missing}"
