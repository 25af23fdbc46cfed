"""``python -m benchmarks.crawl``: see run.py."""

from __future__ import annotations

import sys

from benchmarks.crawl.run import main

sys.exit(main())
