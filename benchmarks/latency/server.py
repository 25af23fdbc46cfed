"""The latency benchmark's server: every response after a delay, in its own process.

    python -m benchmarks.latency.server --page-delay 0.1 --robots-delay 1.5 [--port 0]

One listening socket on 127.0.0.1 serves every host name (the ``Host`` header only
names the origin; the answers are the same for all): ``/robots.txt`` is
:data:`~benchmarks.latency.cases.ROBOTS_BODY` after ``--robots-delay`` seconds,
``/p/N.html`` and ``/private/N.html`` are a few bytes of HTML after ``--page-delay``
seconds, anything else is a 404 at once. ``/__stats`` (asked by the runner, not by
a crawl) answers at once with the counts since the last ``/__stats`` as JSON, and
resets them: requests by kind, connections accepted, the most connections open at
once, host names seen, and the most requests answered at once for one host name
(which shows whether the crawler kept to ``CONCURRENT_REQUESTS_PER_DOMAIN``).

The HTTP is the tests' asyncio server (``tests/helpers/loop_server.py``): keep-alive,
GET only, no request bodies, one request at a time per connection (a pipelined
request waits for the response before it). The delay is a timer per request
(``loop.call_later``), not a sleep: thousands of requests can wait at once at no
cost, and a response goes out ``delay`` after its request was read, whatever else is
waiting.

It prints ``ready PORT`` on stdout when it listens and runs until SIGTERM (the runner
stops it by PID).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from benchmarks.latency.cases import ROBOTS_BODY
from tests.helpers.loop_server import Encoded, LoopServer, run_until_signalled
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from tests.helpers.server import RequestRecord

#: A request head larger than this closes the connection.
MAX_HEAD = 16_384

_NOT_FOUND = Encoded.of(Reply(404, {"Content-Type": "text/plain"}, b"not found"))
_STATS = "/__stats"


class Counts:
    def __init__(self) -> None:
        self.open = 0
        self.reset()

    def reset(self) -> None:
        """Zero the counts; connections still open stay counted as open."""
        self.robots = 0
        self.pages = 0
        self.other = 0
        self.connections = 0
        self.close_requested = 0
        self.peak_open = self.open
        self.hosts: set[str] = set()
        #: requests being answered, per host; the largest such count seen
        self.in_flight: dict[str, int] = {}
        self.peak_per_host = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "robots": self.robots,
            "pages": self.pages,
            "other": self.other,
            "connections": self.connections,
            "close_requested": self.close_requested,
            "peak_open_connections": self.peak_open,
            "hosts": len(self.hosts),
            "peak_in_flight_per_host": self.peak_per_host,
        }

    # -- the server's hooks ----------------------------------------------------------

    def opened(self) -> None:
        self.connections += 1
        self.open += 1
        self.peak_open = max(self.peak_open, self.open)

    def closed(self) -> None:
        self.open -= 1

    def done(self, record: RequestRecord) -> None:
        """The request is answered (or abandoned)."""
        if record.target == _STATS:
            return
        left = self.in_flight.get(record.host, 1) - 1
        if left > 0:
            self.in_flight[record.host] = left
        else:
            self.in_flight.pop(record.host, None)


class Site:
    """What the server answers, and when."""

    def __init__(self, page_delay: float, robots_delay: float) -> None:
        self.counts = Counts()
        self.robots = Encoded(
            Reply(200, {"Content-Type": "text/plain"}, ROBOTS_BODY).wire(), robots_delay
        )
        self.page = Encoded(
            Reply(
                200,
                {"Content-Type": "text/html; charset=utf-8"},
                b"<html><body><p>page</p></body></html>",
            ).wire(),
            page_delay,
        )

    def answer(self, record: RequestRecord) -> Encoded:
        counts = self.counts
        if record.target == _STATS:  # the runner's, not counted
            body = json.dumps(counts.as_dict()).encode()
            counts.reset()
            return Encoded.of(Reply(200, {"Content-Type": "application/json"}, body))
        counts.hosts.add(record.host)
        if not record.keep_alive:
            counts.close_requested += 1
        flying = counts.in_flight.get(record.host, 0) + 1
        counts.in_flight[record.host] = flying
        counts.peak_per_host = max(counts.peak_per_host, flying)
        if record.target == "/robots.txt":
            counts.robots += 1
            return self.robots
        if record.target.startswith(("/p/", "/private/")):
            counts.pages += 1
            return self.page
        counts.other += 1
        return _NOT_FOUND


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page-delay", type=float, required=True)
    parser.add_argument("--robots-delay", type=float, required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    site = Site(args.page_delay, args.robots_delay)

    async def listen(server: LoopServer) -> str:
        port = await server.listen(site.answer, "127.0.0.1", args.port, backlog=4096)
        return f"ready {port}"

    run_until_signalled(
        listen,
        on_open=site.counts.opened,
        on_close=site.counts.closed,
        on_done=site.counts.done,
        max_head=MAX_HEAD,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
