"""Tables and the machine description, as plain text and as markdown."""

from __future__ import annotations

import os
import platform
import statistics
from dataclasses import dataclass, field
from importlib import metadata

from benchmarks.crawl.site import REPO_ROOT
from benchmarks.machine import cpu_model, git_describe


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


def machine_lines() -> list[str]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    machine = (
        f"machine: {platform.platform()}; CPU {cpu_model()}; "
        f"cpu_count {os.cpu_count()} (usable {usable})"
    )
    versions = (
        f"versions: scrapy {_pkg_version('scrapy')}, protego {_pkg_version('protego')}, "
        f"twisted {_pkg_version('twisted')}, scrapy-robots-std "
        f"{_pkg_version('scrapy-robots-std')} (git {git_describe(REPO_ROOT, 'scrapy_robots_std', 'package code modified')})"
    )
    python = f"python: {platform.python_implementation()} {platform.python_version()}"
    return [machine, python, versions]


def load_text(load: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.2f}" for x in load)
