"""Sphinx configuration of calibr's documentation site.

Build it from the repository's root (README.md, "Documentation"):

    sphinx-build -W --keep-going -b html docs/site docs/_build/html

Everything that names calibr's API is made at build time from the package
itself by the local extension ``_ext/calibr_site.py``: one API page per public
name, the chapters copied from ``docs/*.md`` and ``vignettes/*.md``, README's
overview, the ``calibr`` command's help and the gallery's figures (from the
bundled data). The folders it writes (``api/``, ``guide/``, ``topics/``,
``_generated/``) are its own and ignored by git. The build fetches nothing: no
intersphinx, no web fonts or scripts from elsewhere (the theme ships its own).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE / "_ext"))
if str(ROOT) not in sys.path:  # the checkout's calibr, also when it is not installed
    sys.path.insert(0, str(ROOT))

import calibr  # noqa: E402 - after the path is set

project = "calibr"
author = "the calibr developers"
copyright = "the calibr developers"  # noqa: A001 - Sphinx's name
release = version = calibr.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "calibr_site",
]

root_doc = "index"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_generated"]  # included pieces and images, not pages
templates_path: list[str] = []

# No network: nothing is fetched at build time (sphinx.ext.intersphinx is not
# loaded, so no inventories) or at view time (the theme's fonts, icons and
# scripts are copied into _static; math is MathML, below).

# Cross-references to calibr's own objects must resolve: nitpicky reports every
# one that does not, as a warning (an error under -W). References to other
# packages (numpy, pandas, matplotlib, the standard library) cannot resolve
# without intersphinx, so those alone are let through.
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r"(?!calibr(\.|$)).*")]

# autodoc: the numpydoc Parameters sections carry the types, so signatures
# show names and defaults only (as scipy's reference does).
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autosummary_generate = False  # calibr_site writes the pages itself

numpydoc_show_class_members = False  # autodoc's :members: lists them
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# Text stays as typed: no typographic quotes or dashes, so that an option
# (--by), a value ("classwise") or an ellipsis (tests=...) written outside a code
# span reads and copies as it is in the sources.
smartquotes = False

myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"calibr {release}"
html_static_path = ["_static"]
html_css_files = ["calibr.css"]
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None

# math as MathML made at build time (calibr_site.mathml): no MathJax from a CDN
html_math_renderer = "mathml"
