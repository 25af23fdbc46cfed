"""Tables and the machine description, as plain text and as markdown."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from benchmarks.crawl.site import REPO_ROOT


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        self.rows.append([str(c) for c in cells])

    def text(self) -> str:
        widths = [
            max(len(r[i]) for r in [self.header, *self.rows])
            for i in range(len(self.header))
        ]
        lines = [self.title]
        for row in [self.header, *self.rows]:
            cells = [
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ]
            lines.append("  ".join(cells))
        lines += [f"  * {n}" for n in self.notes]
        return "\n".join(lines)

    def markdown(self) -> str:
        align = [":---", *["---:"] * (len(self.header) - 1)]
        lines = [f"**{self.title}**", ""]
        lines += [
            "| " + " | ".join(row) + " |" for row in (self.header, align, *self.rows)
        ]
        if self.notes:
            lines.append("")
            lines += [f"* {n}" for n in self.notes]
        return "\n".join(lines)


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def ratio(value: float | None, ref: float | None) -> str:
    if value is None or not ref:
        return "-"
    return f"{value / ref:.3f}x"


def _pkg_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git_describe() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "scrapy_robots_std"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" (package code modified)" if dirty else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_lines() -> list[str]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    machine = (
        f"machine: {platform.platform()}; CPU {_cpu_model()}; "
        f"cpu_count {os.cpu_count()} (usable {usable})"
    )
    versions = (
        f"versions: scrapy {_pkg_version('scrapy')}, protego {_pkg_version('protego')}, "
        f"twisted {_pkg_version('twisted')}, scrapy-robots-std "
        f"{_pkg_version('scrapy-robots-std')} (git {_git_describe()})"
    )
    python = f"python: {platform.python_implementation()} {platform.python_version()}"
    return [machine, python, versions]


def load_text(load: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.2f}" for x in load)
