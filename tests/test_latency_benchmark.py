"""The latency benchmark's smoke mode: every case completes, every URL is accounted for.

``python -m benchmarks.latency --smoke`` runs tiny versions of cases (a)-(d): a
delaying server, crawls three ways in fresh processes, and (d)'s stop and resume.
Nothing here is timed: the test reads the exit code and the JSON summary.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Opt-in (marker "bench", deselected by default, see tests/conftest.py): real
# crawls in subprocesses, 30-60 s.  Run with
# ``.venv/bin/pytest -m bench tests/test_latency_benchmark.py``.
pytestmark = pytest.mark.bench


def test_smoke_run_accounts_for_every_url(tmp_path: Path) -> None:
    summary_path = tmp_path / "summary.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.latency",
            "--smoke",
            "--json",
            str(summary_path),
            "--markdown",
            str(tmp_path / "RESULTS.md"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert sorted(summary) == ["a", "b", "c", "d"]
    for case, data in summary.items():
        assert data["failures"] == [], case
        assert {run["way"] for run in data["runs"]} == {"off", "builtin", "ours"}
        expected = data["expected"]
        private = expected // 20  # every 20th URL is under /private/
        for run in data["runs"]:
            assert run["problems"] == [], (case, run)
            assert run["missing"] == 0, (case, run)
            assert run["errors"] == 0, (case, run)
            assert run["fetched"] + run["dropped"] == expected, (case, run)
            assert run["peak_fds"] > 0, (case, run)
            assert run["wall"] > 0, (case, run)
            # the crawl imported this checkout's package
            assert run["package"] == str(ROOT / "scrapy_robots_std"), run
            # robots.txt is asked by the two layers only
            robots = run["server"]["robots"]
            if run["way"] == "off":
                assert run["dropped"] == 0, (case, run)
                assert robots == 0, (case, run)
            if run["way"] == "ours":
                assert run["dropped"] == private, (case, run)
                assert run["leaked"] == 0, (case, run)
                assert robots > 0, (case, run)
        # one PASS/MISS line per target
        assert data["verdicts"], case
        assert all((" PASS " in v) or (" MISS " in v) for v in data["verdicts"]), case
    resumes = {r["way"]: r for r in summary["d"]["resumes"]}
    assert set(resumes) == {"off", "ours"}
    for way, resume in resumes.items():
        assert resume["first"]["finish_reason"] == "shutdown", way  # the SIGINT
        assert resume["second"]["finish_reason"] == "finished", way
        assert resume["missing"] == 0, (way, resume)
        assert resume["errors"] == 0, (way, resume)
        assert resume["accounted"], (way, resume)
    text = (tmp_path / "RESULTS.md").read_text(encoding="utf-8")
    for name in ("head", "a", "b", "c", "d"):
        assert f"<!-- latency:{name} -->" in text
        assert f"<!-- /latency:{name} -->" in text
    assert "| scrapy-robots-std |" in text
