"""``python -m benchmarks.latency``: see run.py."""

from __future__ import annotations

import sys

from benchmarks.latency.run import main

sys.exit(main())
