#!/usr/bin/env bash
# Build the documentation site (docs/_build/html) with every warning an error, a reference that
# does not resolve included (-W -n), then run the code of the user guide and of the API pages'
# Examples sections as doctests (docs/_build/doctest/output.txt). Needs fastgen importable
# (installed, or built in place in this checkout) and the docs extra: pip install ".[docs]".
# The gallery scripts (examples/gallery/plot_*.py) run during the HTML build; one that fails
# fails the build.
set -euo pipefail
cd "$(dirname "$0")"
python -m sphinx -b html -W -n --keep-going -q . _build/html
python -m sphinx -b doctest -W -n --keep-going -q . _build/doctest
echo "docs: built in $(pwd)/_build/html; doctests passed"
