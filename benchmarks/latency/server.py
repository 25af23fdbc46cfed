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

A minimal HTTP/1.1 responder on asyncio protocols: keep-alive, GET only, no request
bodies, one request at a time per connection (a pipelined request waits for the
response before it). The delay is a timer per request (``loop.call_later``), not a
sleep: thousands of requests can wait at once at no cost, and a response goes out
``delay`` after its request was read, whatever else is waiting.

It prints ``ready PORT`` on stdout when it listens and runs until SIGTERM (the runner
stops it by PID).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import sys

from benchmarks.latency.cases import ROBOTS_BODY

#: A request head larger than this closes the connection.
MAX_HEAD = 16_384


def _response(status: bytes, body: bytes, content_type: bytes) -> bytes:
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\nContent-Type: "
        + content_type
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


_ROBOTS = _response(b"200 OK", ROBOTS_BODY, b"text/plain")
_PAGE = _response(
    b"200 OK", b"<html><body><p>page</p></body></html>", b"text/html; charset=utf-8"
)
_NOT_FOUND = _response(b"404 Not Found", b"not found", b"text/plain")


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
        self.hosts: set[bytes] = set()
        #: requests being answered, per host; the largest such count seen
        self.in_flight: dict[bytes, int] = {}
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


class Connection(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server
        self.buffer = bytearray()
        self.busy = False
        self.timer: asyncio.TimerHandle | None = None
        self.host: bytes | None = None  # of the request being answered
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        counts = self.server.counts
        counts.connections += 1
        counts.open += 1
        counts.peak_open = max(counts.peak_open, counts.open)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.counts.open -= 1
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
            self._done()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.busy:
            self._next()

    def _next(self) -> None:
        assert self.transport is not None
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                self.transport.close()
            return
        head = bytes(self.buffer[:end])
        del self.buffer[: end + 4]
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3:
            self.transport.close()
            return
        target, version = parts[1], parts[2]
        keep_alive = version == b"HTTP/1.1"
        host = b""
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"host":
                host = value.strip().lower()
            elif name == b"connection":
                keep_alive = value.strip().lower() != b"close"
        counts = self.server.counts
        if target == b"/__stats":  # the runner's, not counted
            body = json.dumps(counts.as_dict()).encode()
            counts.reset()
            self.busy = True
            self._respond(_response(b"200 OK", body, b"application/json"), keep_alive)
            return
        counts.hosts.add(host)
        if not keep_alive:
            counts.close_requested += 1
        if target == b"/robots.txt":
            counts.robots += 1
            response, delay = _ROBOTS, self.server.robots_delay
        elif target.startswith((b"/p/", b"/private/")):
            counts.pages += 1
            response, delay = _PAGE, self.server.page_delay
        else:
            counts.other += 1
            response, delay = _NOT_FOUND, 0.0
        self.busy = True
        self.host = host
        flying = counts.in_flight.get(host, 0) + 1
        counts.in_flight[host] = flying
        counts.peak_per_host = max(counts.peak_per_host, flying)
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(delay, self._respond, response, keep_alive)

    def _done(self) -> None:
        """The request of this connection is answered (or abandoned)."""
        if self.host is not None:
            in_flight = self.server.counts.in_flight
            left = in_flight.get(self.host, 1) - 1
            if left > 0:
                in_flight[self.host] = left
            else:
                in_flight.pop(self.host, None)
            self.host = None

    def _respond(self, response: bytes, keep_alive: bool) -> None:
        self.timer = None
        self._done()
        assert self.transport is not None
        if self.transport.is_closing():
            return
        self.transport.write(response)
        self.busy = False
        if not keep_alive:
            self.transport.close()
        elif self.buffer:
            self._next()


class Server:
    def __init__(self, page_delay: float, robots_delay: float) -> None:
        self.page_delay = page_delay
        self.robots_delay = robots_delay
        self.counts = Counts()


async def serve(args: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    server = Server(args.page_delay, args.robots_delay)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    listener = await loop.create_server(
        lambda: Connection(server), sock=sock, backlog=4096
    )
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    port = sock.getsockname()[1]
    print(f"ready {port}", flush=True)
    await stop.wait()
    listener.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page-delay", type=float, required=True)
    parser.add_argument("--robots-delay", type=float, required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
