"""Origins (scheme, host, port) and their robots.txt URLs (SPEC 3)."""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import ParseResult, SplitResult, urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


class Origin(NamedTuple):
    """``key`` identifies the origin (``"https://example.com:443"``);
    ``robots_url`` is where its robots.txt lives (default port and userinfo left out).
    """

    key: str
    robots_url: str


def _ascii_host(host: str) -> str | None:
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def origin_of(url: str | SplitResult | ParseResult) -> Origin | None:
    """The origin of an http(s) URL, or ``None`` for anything robots.txt does not cover.

    The host is lower-cased and IDNA-encoded; ``http://a:80`` and ``http://a`` are one
    origin; ``http://a`` and ``https://a`` are two. Userinfo is not part of the origin
    and is not sent with the robots.txt request.
    """
    parts = urlsplit(url) if isinstance(url, str) else url
    scheme = parts.scheme.lower()
    default = _DEFAULT_PORTS.get(scheme)
    if default is None:
        return None
    try:
        host = parts.hostname
        port = parts.port
    except ValueError:  # a port that is not a number, or out of range
        return None
    if not host or port == 0:
        return None
    host = _ascii_host(host.rstrip(".") or host)
    if host is None:
        return None
    port = default if port is None else port
    shown = f"[{host}]" if ":" in host else host
    suffix = "" if port == default else f":{port}"
    return Origin(
        f"{scheme}://{shown}:{port}", f"{scheme}://{shown}{suffix}/robots.txt"
    )
