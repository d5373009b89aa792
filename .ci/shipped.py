"""The files besides the Python modules that every distribution of fastgen must carry, as paths
relative to the checkout: every file of fastgen/data (the corpora, Horse Colic, their README),
py.typed, and the kernels' Cython and C sources. They are globbed in the checkout rather than read
from pyproject.toml's package-data, so that a file added to the checkout but not declared there is
caught. Used by .ci/smoke.py (a wheel) and .ci/run (the sdist)."""
from pathlib import Path

PATTERNS = ("fastgen/py.typed", "fastgen/data/*", "fastgen/_core/*.pyx", "fastgen/_core/*.pxd",
            "fastgen/_core/*.pxi", "fastgen/_core/*.h")


def shipped_files(checkout):
    """The sorted relative paths (str, '/'-separated) of the files PATTERNS names in checkout."""
    checkout = Path(checkout)
    return sorted({path.relative_to(checkout).as_posix() for pattern in PATTERNS
                   for path in checkout.glob(pattern) if path.is_file() and path.suffix != ".pyc"})
