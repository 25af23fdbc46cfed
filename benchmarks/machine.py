"""What the benchmark reports say about the machine and the code they measured."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_describe(repo: Path, pathspec: str | None, dirty_note: str) -> str:
    """The short HEAD of ``repo``, with ``dirty_note`` when tracked files under
    ``pathspec`` (all of them when None) have uncommitted changes."""
    status = ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"]
    if pathspec is not None:
        status += ["--", pathspec]
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            status, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + (f" ({dirty_note})" if dirty else "")


def write_section(path: Path, section: str, begin: str, end: str) -> None:
    """Put ``section`` (which starts with ``begin`` and ends with ``end``) in place
    of the one between those markers in ``path``, or append it."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if begin in old and end in old:
        before, rest = old.split(begin, 1)
        after = rest.split(end, 1)[1].lstrip("\n")
        text = before + section + ("\n" + after if after else "")
    else:
        text = old.rstrip("\n") + "\n\n" + section if old else section
    path.write_text(text, encoding="utf-8")
