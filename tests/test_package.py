"""The package as a user meets it: installed metadata, entry points, README and LICENSE.

The metadata is read the way ``pip show`` and PyPI read it, from the installed
distribution (the editable install that scripts/bootstrap.sh makes), not from
pyproject.toml. The built wheel itself is checked by .ci/run in a fresh venv.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata, resources
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import scrapy_robots_std
from scrapy_robots_std import cli

NAME = "scrapy-robots-std"
ROOT = Path(__file__).resolve().parent.parent
BASE_URL = "https://github.com/scrapy-robots-std/scrapy-robots-std"


@pytest.fixture(scope="module")
def dist() -> metadata.Distribution:
    """The installed distribution; an ``.egg-info`` left in the work tree is skipped."""
    found = list(metadata.distributions(name=NAME))
    installed = [d for d in found if Path(str(d.locate_file(""))).resolve() != ROOT]
    assert installed, f"{NAME} is not installed (run scripts/bootstrap.sh)"
    return installed[0]


def test_version_matches_the_package(dist: metadata.Distribution) -> None:
    assert dist.version == scrapy_robots_std.__version__
    assert Version(dist.version) == Version(scrapy_robots_std.__version__)


def test_license_is_bsd_3_clause(dist: metadata.Distribution) -> None:
    assert dist.metadata["License-Expression"] == "BSD-3-Clause"
    assert dist.metadata.get_all("License-File") == ["LICENSE"]
    # No legacy licence classifier beside the SPDX expression (PEP 639).
    classifiers = dist.metadata.get_all("Classifier") or []
    assert not [c for c in classifiers if c.startswith("License ::")]


def test_license_file_is_shipped_and_is_the_bsd_text(
    dist: metadata.Distribution,
) -> None:
    shipped = dist.read_text("licenses/LICENSE")
    assert shipped is not None, "LICENSE is not in the installed .dist-info"
    assert shipped == (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert shipped.startswith("BSD 3-Clause License\n")
    assert "Copyright (c) scrapy-robots-std developers." in shipped
    assert "Neither the name of the copyright holder" in shipped  # clause 3


def test_project_urls(dist: metadata.Distribution) -> None:
    urls = dict(
        entry.split(", ", 1) for entry in dist.metadata.get_all("Project-URL") or []
    )
    assert urls["Homepage"] == BASE_URL
    assert urls["Source"] == BASE_URL
    assert urls["Issues"] == f"{BASE_URL}/issues"
    assert urls["Documentation"].startswith(f"{BASE_URL}/")
    assert urls["Changelog"].startswith(f"{BASE_URL}/")
    for url in urls.values():
        assert re.fullmatch(r"https://\S+", url), url


def test_classifiers(dist: metadata.Distribution) -> None:
    classifiers = set(dist.metadata.get_all("Classifier") or [])
    assert {
        "Framework :: Scrapy",
        "Development Status :: 4 - Beta",
        "Operating System :: OS Independent",
        "Programming Language :: Python :: 3",
        "Typing :: Typed",
    } <= classifiers
    assert any(c.startswith("Topic :: ") for c in classifiers)


def test_python_version_classifiers_agree_with_requires_python(
    dist: metadata.Distribution,
) -> None:
    requires = SpecifierSet(dist.metadata["Requires-Python"])
    versions = [
        c.rsplit(" :: ", 1)[1]
        for c in dist.metadata.get_all("Classifier") or []
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    assert versions, "no Python 3.X classifier"
    for version in versions:
        assert requires.contains(f"{version}.0"), (version, str(requires))
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert requires.contains(f"{running}.0")
    # The lowest version allowed is also the lowest one listed.
    lowest = min(versions, key=Version)
    assert not requires.contains(f"3.{int(lowest.split('.')[1]) - 1}.0")


def test_keywords_and_description(dist: metadata.Distribution) -> None:
    keywords = (dist.metadata["Keywords"] or "").split(",")
    assert {"scrapy", "robots.txt", "rfc9309"} <= set(keywords)
    assert "robots.txt" in dist.metadata["Summary"]
    assert dist.metadata["Description-Content-Type"] == "text/markdown"
    assert "pip install scrapy-robots-std" in (dist.metadata.get_payload() or "")


def test_runtime_requirements_hold_no_tooling(dist: metadata.Distribution) -> None:
    """Sphinx, build and twine are extras: installing the package pulls none of them."""
    requirements = [Requirement(r) for r in dist.requires or []]
    runtime = {r.name.lower() for r in requirements if r.marker is None}
    assert runtime == {"scrapy", "twisted"}
    scrapy = next(r for r in requirements if r.name.lower() == "scrapy")
    assert scrapy.specifier.contains("2.14")
    assert not scrapy.specifier.contains("2.13")
    extras = set(dist.metadata.get_all("Provides-Extra") or [])
    assert {"docs", "release", "redis", "test"} <= extras
    for tool in ("sphinx", "build", "twine"):
        needed_by = [
            str(r.marker)
            for r in requirements
            if r.name.lower() == tool and r.marker is not None
        ]
        assert needed_by, f"{tool} is not in any extra"


def test_console_script_entry_point(dist: metadata.Distribution) -> None:
    scripts = [ep for ep in dist.entry_points if ep.group == "console_scripts"]
    assert [ep.name for ep in scripts] == ["robots-std"]
    assert scripts[0].value == "scrapy_robots_std.cli:main"
    assert scripts[0].load() is cli.main


def test_console_script_runs() -> None:
    script = Path(sys.executable).parent / "robots-std"
    assert script.is_file(), f"{script} is missing: the entry point is not installed"
    result = subprocess.run(
        [str(script), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"robots-std {scrapy_robots_std.__version__}\n"


def test_py_typed_marker_is_shipped() -> None:
    assert resources.files("scrapy_robots_std").joinpath("py.typed").is_file()


README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_is_a_front_page() -> None:
    lines = README.splitlines()
    assert len(lines) <= 400, f"README.md has {len(lines)} lines"
    headings = [line for line in lines if line.startswith("## ")]
    text = "\n".join(lines)
    order = [
        text.index("pip install scrapy-robots-std"),
        text.index('ADDONS = {"scrapy_robots_std.Addon": 0}'),
        text.index("Forbidden by robots.txt: <GET "),
        text.index("bash scripts/demo.sh"),
        text.index("bash scripts/test.sh"),
        text.index("| `ROBOTS_STD_STANDARD` |"),
        text.index("(docs/index.md)"),
    ]
    assert order == sorted(order), headings


def test_readme_documents_every_setting() -> None:
    """Each ROBOTS_STD_* name that the package reads has a row in the README table."""
    source = "\n".join(
        path.read_text(encoding="utf-8")
        for path in (ROOT / "scrapy_robots_std").rglob("*.py")
    )
    read = set(re.findall(r'"(ROBOTS_STD_[A-Z_]+)"', source))
    rows = set(re.findall(r"^\| `(ROBOTS_STD_[A-Z_]+)` \|", README, re.MULTILINE))
    assert read, "no setting found in the package"
    assert read <= rows, sorted(read - rows)


@pytest.mark.parametrize(
    "target",
    sorted(set(re.findall(r"\]\(((?!https?://|#)[^)#\s]+)(?:#[^)]*)?\)", README))),
)
def test_readme_links_point_at_files(target: str) -> None:
    assert (ROOT / target).exists(), f"README.md links to a missing {target}"
