"""The README's Python examples run as written (in a scratch directory: one writes a file)."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(block, tmp_path, monkeypatch):
    if "pandas" in block:
        pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, str(README), "exec"), {})
