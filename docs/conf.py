"""Sphinx configuration of the scrapy-robots-std documentation.

Built strictly (``-W --keep-going -n``) by ``scripts/docs.sh`` and by CI: a warning
fails the build.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import scrapy_robots_std

project = "scrapy-robots-std"
author = "scrapy-robots-std developers"
copyright = "scrapy-robots-std developers"
release = scrapy_robots_std.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# Markdown pages: anchors for headings down to ###, so pages can link to
# sections (``settings.md#...``) the way GitHub renders them.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# Every reference must resolve (-n in scripts/docs.sh).
nitpicky = True

# The API pages document the public names at their public path
# (scrapy_robots_std.RobotsTxt); autodoc records where each really lives
# (scrapy_robots_std.robotstxt.robots.RobotsTxt) as its canonical name.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"show-inheritance": True}
# RobotsAwareRedisQueue and RedisCache need scrapy-redis and redis-py, optional
# dependencies that the docs do not install.
autodoc_mock_imports = ["scrapy_redis", "redis"]

# References the build cannot resolve. There is no network in CI, so no intersphinx:
# names from Scrapy, Twisted, scrapy-redis and the standard library that appear in
# signatures and base classes stay plain text.
nitpick_ignore = [
    ("py:class", name)
    for name in (
        "BaseSettings",
        "Crawler",
        "Path",
        "QueueProtocol",
        "Request",
        "Response",
        "StatsCollector",
    )
]
nitpick_ignore_regex = [
    ("py:(class|exc|func|meth|attr)", r"(scrapy|scrapy_redis|twisted)\..*"),
    # Private classes behind the public ones: a base class shown by
    # show-inheritance, and the parser's internal tables in RobotsTxt's signature.
    ("py:class", r"scrapy_robots_std\.cache\.persistent\.PersistentCache"),
    ("py:class", r"scrapy_robots_std\.robotstxt\.parser\.Parsed"),
    # The fetch policy's enums, named in CacheEntry's docstring; the API pages do
    # not document scrapy_robots_std.policy, so they stay plain text.
    ("py:class", r"scrapy_robots_std\.policy\.(Verdict|FetchReason)"),
]
# StdRobotParser's docstring names the private helper product_token as a function.
nitpick_ignore += [("py:func", "product_token")]
# CacheEntry.tdm's type: the pure TDMRep module's TdmFile (described in
# usage-preferences.md, not on the API pages).
nitpick_ignore += [("py:class", "TdmFile")]

# Furo (the `docs` extra): responsive, with a sidebar, a search box and a
# table of contents of each page; on a narrow window the sidebars fold away.
# scripts/check_docs_browser.sh checks that every page fits 1280 and 390 px.
html_theme = "furo"
html_title = f"scrapy-robots-std {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
# Tables too wide for a narrow window are shown as stacked rows (custom.css).
html_js_files = ["tables.js"]
html_theme_options = {
    "source_repository": "https://github.com/scrapy-robots-std/scrapy-robots-std/",
    "source_branch": "main",
    "source_directory": "docs/",
}
