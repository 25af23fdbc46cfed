"""The site server: one process (shard) serving a share of the origins of a site.

    python -m benchmarks.crawl.server SITE.json [--shard I --shards N]

Each origin gets its own listening socket on its own loopback address (see site.py);
shard I serves the origins whose index is I modulo N. Many origins need several
shards only for file descriptors: a shard holds one listening socket per origin plus
one per client connection, and the soft and hard limit here is 20,000 per process.

The HTTP is the tests' asyncio server (``tests/helpers/loop_server.py``: keep-alive,
GET only, no request bodies); this module says what each origin answers:
``/robots.txt`` is the origin's corpus file, ``/`` and the site's page URLs are
generated HTML, anything else is a 404. A dead origin accepts connections and reads
requests but never answers (``dead == "origin"``), or does so only for
``/robots.txt`` (``dead == "robots"``).

When every socket listens, the shard prints ``ready`` on stdout; it runs until it is
sent SIGTERM (the runner stops it by PID).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.crawl.site import Site, render_page, request_target
from tests.helpers.loop_server import Encoded, LoopServer, run_until_signalled
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from tests.helpers.server import RequestRecord

_ROBOTS = b"/robots.txt"
_NOT_FOUND = Encoded.of(Reply(404, {"Content-Type": "text/plain"}, b"not found"))


class OriginState:
    """What one origin answers."""

    def __init__(
        self, site: Site, index: int, robots_cache: dict[str, Encoded]
    ) -> None:
        self.site = site
        self.index = index
        origin = site.origins[index]
        self.dead = origin.dead
        self.pages = {request_target(url): k for k, url in enumerate(origin.pages)}
        if site.follow:
            self.pages[b"/"] = -1
        self._robots_name = origin.robots
        self._robots_cache = robots_cache

    def answer(self, record: RequestRecord) -> Encoded | None:
        """The response, or None to stay silent."""
        if self.dead == "origin":
            return None
        target = record.target.encode("latin-1")
        if target == _ROBOTS:
            if self.dead == "robots":
                return None
            cached = self._robots_cache.get(self._robots_name)
            if cached is None:
                body = self.site.robots_body(self.site.origins[self.index])
                cached = Encoded.of(Reply(200, {"Content-Type": "text/plain"}, body))
                self._robots_cache[self._robots_name] = cached
            return cached
        page = self.pages.get(target)
        if page is None:
            return _NOT_FOUND
        body = render_page(self.site, self.index, page)
        return Encoded.of(
            Reply(200, {"Content-Type": "text/html; charset=utf-8"}, body)
        )


async def listen(server: LoopServer, site: Site, shard: int, shards: int) -> str:
    robots_cache: dict[str, Encoded] = {}
    for origin in site.origins[shard::shards]:
        state = OriginState(site, origin.index, robots_cache)
        await server.listen(state.answer, origin.host, site.port)
    return "ready"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--shards", type=int, default=1)
    args = parser.parse_args(argv)
    site = Site.load(args.site)
    run_until_signalled(lambda server: listen(server, site, args.shard, args.shards))
    return 0


if __name__ == "__main__":
    sys.exit(main())
