"""The site server: one process (shard) serving a share of the origins of a site.

    python -m benchmarks.crawl.server SITE.json [--shard I --shards N]

Each origin gets its own listening socket on its own loopback address (see site.py);
shard I serves the origins whose index is I modulo N. Many origins need several
shards only for file descriptors: a shard holds one listening socket per origin plus
one per client connection, and the soft and hard limit here is 20,000 per process.

A minimal HTTP/1.1 responder on asyncio protocols (keep-alive, GET only, no request
bodies): ``/robots.txt`` is the origin's corpus file, ``/`` and the site's page URLs
are generated HTML, anything else is a 404. A dead origin accepts connections and
reads requests but never answers (``dead == "origin"``), or does so only for
``/robots.txt`` (``dead == "robots"``).

When every socket listens, the shard prints ``ready`` on stdout; it runs until it is
sent SIGTERM (the runner stops it by PID).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import sys
from pathlib import Path

from benchmarks.crawl.site import Site, render_page, request_target

_ROBOTS = b"/robots.txt"
_NOT_FOUND = (
    b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\n"
    b"not found"
)


def _response(body: bytes, content_type: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: "
        + content_type
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


class OriginState:
    """What one origin answers."""

    def __init__(self, site: Site, index: int, robots_cache: dict[str, bytes]) -> None:
        self.site = site
        self.index = index
        origin = site.origins[index]
        self.dead = origin.dead
        self.pages = {request_target(url): k for k, url in enumerate(origin.pages)}
        if site.follow:
            self.pages[b"/"] = -1
        self._robots_name = origin.robots
        self._robots_cache = robots_cache

    def answer(self, target: bytes) -> bytes | None:
        """The response bytes, or None to stay silent."""
        if self.dead == "origin":
            return None
        if target == _ROBOTS:
            if self.dead == "robots":
                return None
            cached = self._robots_cache.get(self._robots_name)
            if cached is None:
                body = self.site.robots_body(self.site.origins[self.index])
                cached = _response(body, b"text/plain")
                self._robots_cache[self._robots_name] = cached
            return cached
        page = self.pages.get(target)
        if page is None:
            return _NOT_FOUND
        return _response(
            render_page(self.site, self.index, page), b"text/html; charset=utf-8"
        )


class HttpProtocol(asyncio.Protocol):
    def __init__(self, state: OriginState) -> None:
        self.state = state
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while self.transport is not None:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end]
            self.buffer = self.buffer[end + 4 :]
            line, _, headers = head.partition(b"\r\n")
            parts = line.split(b" ")
            if len(parts) != 3:
                self.transport.close()
                return
            answer = self.state.answer(parts[1])
            if answer is None:
                continue  # black hole: read, never answer
            self.transport.write(answer)
            if b"connection: close" in headers.lower():
                self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def serve(site: Site, shard: int, shards: int) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    robots_cache: dict[str, bytes] = {}
    servers = []
    for origin in site.origins[shard::shards]:
        state = OriginState(site, origin.index, robots_cache)
        sock = _listen(origin.host, site.port)
        servers.append(
            await loop.create_server(lambda s=state: HttpProtocol(s), sock=sock)
        )
    print("ready", flush=True)
    await stop.wait()
    for server in servers:
        server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--shards", type=int, default=1)
    args = parser.parse_args(argv)
    site = Site.load(args.site)
    asyncio.run(serve(site, args.shard, args.shards))
    return 0


if __name__ == "__main__":
    sys.exit(main())
