"""The crawl benchmark's smoke mode: it completes, and every drop is its parser's.

``python -m benchmarks.crawl --smoke`` crawls a few local origins (variants a, b and
d) three ways in fresh processes. Nothing here is timed: the test reads the exit
code and the JSON summary, which says what happened to every URL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

# Opt-in (marker "bench", deselected by default, see tests/conftest.py): these run
# the benchmarks themselves, real crawls in subprocesses, ~40 s together.  Run them
# with ``.venv/bin/pytest -m bench`` (all of them) or
# ``.venv/bin/pytest -m bench tests/test_crawl_benchmark.py``.
pytestmark = [
    pytest.mark.bench,
    pytest.mark.skipif(
        not (CORPUS / "robots").is_dir(),
        reason=f"robots.txt corpus not found at {CORPUS} (expected ../shared/corpus beside the repo)",
    ),
]


def test_smoke_run_completes_and_agrees(tmp_path: Path) -> None:
    summary_path = tmp_path / "summary.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.crawl",
            "--smoke",
            "--corpus",
            str(CORPUS),
            "--json",
            str(summary_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert "all checks passed (smoke)" in proc.stdout
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert sorted(summary) == ["a", "b", "d"]
    for variant, data in summary.items():
        assert data["failures"] == [], variant
        ways = {run["way"] for run in data["runs"]}
        assert ways == {"off", "builtin", "ours"}, variant
        for run in data["runs"]:
            # Every requested URL came back as a page or a drop; nothing failed.
            assert run["resolved"] == run["expected"] > 0, (variant, run)
            assert run["errors"] == 0, (variant, run)
    # (a): every page is allowed, so no way drops anything.
    assert all(run["dropped"] == 0 for run in summary["a"]["runs"])
    # (b): this package drops exactly what its parser disallows, and something is.
    ours = [run for run in summary["b"]["runs"] if run["way"] == "ours"]
    assert ours
    for run in ours:
        assert run["leaks"] == 0
        assert run["overblocks"] == 0
        assert run["dropped"] > 0
    off = next(run for run in summary["b"]["runs"] if run["way"] == "off")
    assert off["dropped"] == 0
    # (a): wall and CPU of every way, measured in the same run, and the ratio lines
    # against robots-off printed for the two layers.
    for run in summary["a"]["runs"]:
        assert run["wall"] > 0, run
        assert run["cpu"] > 0, run
    for label in ("scrapy-robots-std", "built-in (Protego)"):
        assert f"(a) wall <= 1.02x robots-off, {label}:" in proc.stdout
        assert f"(a) crawl CPU <= 1.02x robots-off, {label}:" in proc.stdout
    # (d): the memory probe found every origin in both caches.
    origins = next(run for run in summary["d"]["runs"] if run["way"] == "off")
    memory = summary["d"]["memory"]
    assert set(memory) == {"builtin", "ours"}
    for probe in memory.values():
        assert probe["origins"] == origins["expected"]  # one page per origin
        assert probe["freed"] > 0


def test_request_path_measures_every_way() -> None:
    """The per-request benchmark runs on a tiny site; each way's check completes
    with the verdict cached (a check that had to wait raises RuntimeError)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.crawl.request_path",
            "--origins",
            "3",
            "--pages",
            "4",
            "--rounds",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = {}
    for line in proc.stdout.splitlines():
        for label in ("robots.txt off", "built-in (Protego)", "scrapy-robots-std"):
            if line.startswith(label):
                rows[label] = [float(x) for x in line[len(label) :].split()]
    assert set(rows) == {"robots.txt off", "built-in (Protego)", "scrapy-robots-std"}
    for label, (page, page_layer, link, link_layer, total) in rows.items():
        # "page" takes the middleware's check; a duplicate link only the signal.
        assert 0 < page < 10_000, (label, page)
        assert 0 < link < 10_000, (label, link)
        if label == "robots.txt off":
            assert page_layer == link_layer == total == 0, label
        else:
            assert page_layer > 0, (label, page_layer)
