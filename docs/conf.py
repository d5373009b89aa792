"""Sphinx configuration of the fastgen documentation.

Build it with ``docs/build.sh`` (warnings are errors, dangling references are errors, and the
code of the user guide runs as doctests).
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # the gallery scripts draw without a display

try:
    import fastgen  # the installed package (CI installs it; its checkout has no built kernels)
except ImportError:  # a checkout with its kernels built in place
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import fastgen

project = "fastgen"
author = "the fastgen developers"
copyright = "the fastgen developers, BSD-3-Clause"
version = release = fastgen.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "build.sh",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
templates_path = ["_templates"]

# A dangling reference is an error (-n with -W). The documentation is built offline (CI reaches
# PyPI only), so there is no intersphinx inventory for the libraries fastgen works with; their
# names in signatures and docstrings cannot resolve and are not checked.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|sklearn|pandas|pd|dask|os|pathlib|collections|typing|importlib)(\..*)?"),
]

# -- API reference -----------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_member_order = "groupwise"  # methods first, then the fitted attributes
autodoc_typehints = "none"          # the numpydoc Parameters sections carry the types
numpydoc_show_class_members = False  # the class template documents the methods itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False    # types are prose ("{array-like, sparse matrix} of shape ...")
numpydoc_attributes_as_param_list = True


# numpydoc replaces an attribute's description in the class docstring by the first sentence of
# the property's own docstring, and links it to a page that autodoc does not write; the class
# docstring's Attributes section is the documentation, so it is kept as written.
from numpydoc.docscrape_sphinx import SphinxDocString  # noqa: E402

_process_param = SphinxDocString._process_param
SphinxDocString._process_param = (
    lambda self, param, desc, fake_autosummary: _process_param(self, param, desc, False))

# -- Code in the guide runs ----------------------------------------------------------------------
doctest_global_setup = """
import os, tempfile
os.chdir(tempfile.mkdtemp(prefix="fastgen-docs-"))  # the examples write model and data files
import numpy as np
import fastgen
"""
import doctest as _doctest  # noqa: E402

doctest_default_flags = (_doctest.ELLIPSIS | _doctest.NORMALIZE_WHITESPACE
                         | _doctest.DONT_ACCEPT_TRUE_FOR_1)
doctest_test_doctest_blocks = "default"  # the Examples sections of the API pages run too

# -- Markdown (docs/command_line.md) -------------------------------------------------------------
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# -- Examples gallery (scripts in examples/gallery/plot_*.py) ----------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["../examples/gallery"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"plot_",
    "abort_on_example_error": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
}

# -- HTML ------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"fastgen {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []
html_show_sourcelink = False
