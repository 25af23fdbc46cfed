"""``python -m scrapy_robots_std``: see :mod:`scrapy_robots_std.cli`."""

from __future__ import annotations

from scrapy_robots_std.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
