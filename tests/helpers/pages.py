"""Pieces of the pages the page-directive and TDMRep crawls serve."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.helpers.server import Exchange

__all__ = ["Lines", "meta"]


def meta(name: str, content: str) -> str:
    """A ``<meta name=... content=...>`` tag."""
    return f'<meta name="{name}" content="{content}">'


@dataclass(frozen=True)
class Lines:
    """A 200 whose header lines are given as (name, value): repeats allowed."""

    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes = b""

    def serve(self, exchange: Exchange) -> None:
        lines = [b"HTTP/1.1 200 OK\r\n"]
        lines += [name + b": " + value + b"\r\n" for name, value in self.headers]
        lines.append(
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(self.body)
        )
        exchange.send(b"".join(lines))
        if exchange.record.method != "HEAD":
            exchange.send_body(self.body)
