"""Sphinx configuration of the Model Fleet documentation site (make docs-build).

Markdown through MyST, diagrams through sphinxcontrib-mermaid with mermaid served from the site itself
(make docs-bootstrap vendors it: no CDN, no network at build or view time), theme Furo.
"""

import os

project = "Model Fleet"
author = "Model Fleet contributors"
copyright = "Model Fleet contributors, Apache-2.0"

extensions = ["myst_parser", "sphinxcontrib.mermaid"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "scripts", "requirements.txt"]

# MyST: ```mermaid fences are diagrams; headings get anchors so pages can link to sections.
myst_fence_as_directive = ["mermaid"]
myst_heading_anchors = 4
myst_enable_extensions = ["deflist", "colon_fence"]

html_theme = "furo"
html_title = "Model Fleet"
html_static_path = []
_static = os.environ.get("MODEL_FLEET_DOCS_STATIC")
if _static:
    html_static_path.append(_static)
# Mermaid, vendored by make docs-bootstrap (docs/scripts/docs.sh) as its one-file browser build: a classic script that
# defines window.mermaid and works on file:// pages (browsers refuse ES module imports from file://, and the site is
# meant to be opened straight from docs/_build/html). sphinxcontrib-mermaid's page script does
# `import mermaid from URL`; URL is a data: module handing it that global. Its helper turns every other value of
# mermaid_use_local into a path under _static/, so data: URLs are passed through unchanged (pinned version 2.1.1).
import sphinxcontrib.mermaid as _mermaid_ext

_resolve_static = _mermaid_ext._resolve_local_url


def _resolve_local_url(url, context):
    return url if url.startswith("data:") else _resolve_static(url, context)


_mermaid_ext._resolve_local_url = _resolve_local_url
mermaid_use_local = "data:text/javascript,export default window.mermaid;"
mermaid_version = ""
html_js_files = [("mermaid/mermaid.min.js", {"priority": 200})]
# Furo ships its own fonts and scripts; nothing else is fetched by a reader's browser.
html_show_sourcelink = False

# linkcheck: only links inside the site are checked (this machine and CI reach no web site).
linkcheck_ignore = [r"^[a-zA-Z][a-zA-Z0-9+.-]*:"]

# Pygments' Terraform lexer fails on labelled nested blocks (`splits "train" { ... }`), which are valid HCL; it then
# highlights the block in relaxed mode. Every other warning stays an error.
suppress_warnings = ["misc.highlighting_failure"]

# Diagrams take the height they need (the extension default is a fixed 500px box).
mermaid_height = "auto"
