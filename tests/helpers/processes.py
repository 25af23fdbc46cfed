"""Starting the worker modules of this package in processes of their own."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ROOT", "importable", "worker_command"]

#: The repository root: on ``PYTHONPATH``, ``tests.helpers`` imports.
ROOT = Path(__file__).resolve().parents[2]


def worker_command(name: str, *args: str) -> list[str]:
    """The command line that runs ``tests/helpers/<name>.py`` with ``args``."""
    return [sys.executable, "-m", f"tests.helpers.{name}", *args]


def importable(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (this process's environment by default) with the repository root
    first on ``PYTHONPATH``, so that a worker, and the objects its settings name
    (``tests.helpers.names.LoopbackResolver``), import."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [env.get("PYTHONPATH")])]
    )
    return env
