"""robots.txt for the command line: read from a file or standard input, or fetched.

The live fetch has one deadline for everything (connect, headers, redirects and
body). What it answers is judged as in a crawl, with the package's own rules and
limits: redirects are followed as the middleware follows them (to http(s) URLs only,
at most :data:`~scrapy_robots_std.policy.MAX_REDIRECTS` hops), the outcome goes
through :func:`~scrapy_robots_std.policy.fetch_verdict`, a compressed body inflates
up to ``ROBOTS_STD_MAX_DECOMPRESSED_SIZE``'s default, and the body is cut where the
parser stops reading (``MAX_READ_BYTES``: 500 KiB, the line that crosses it, and one
byte more). Every failure is a :class:`CliError` with one line to print.
"""

from __future__ import annotations

import contextlib
import http.client
import importlib
import socket
import sys
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, quote, urljoin, urlsplit, urlunsplit

from scrapy_robots_std.config import DEFAULTS
from scrapy_robots_std.policy import (
    MAX_REDIRECTS,
    FetchOutcome,
    FetchReason,
    RedirectFailure,
    Verdict,
    fetch_verdict,
    is_redirect,
    redirect_failure,
)
from scrapy_robots_std.robotstxt.reader import MAX_READ_BYTES

__all__ = ["FETCH_TIMEOUT", "CliError", "Source", "load", "one_line"]

#: One deadline for the whole fetch: connect, headers, redirects and body.
FETCH_TIMEOUT = 10.0
#: What a compressed body may inflate to, as in the middleware.
MAX_DECOMPRESSED: int = DEFAULTS["ROBOTS_STD_MAX_DECOMPRESSED_SIZE"]
_USER_AGENT = "scrapy-robots-std (robots.txt checker; +https://pypi.org/project/scrapy-robots-std/)"


class CliError(Exception):
    """Bad input, or robots.txt could not be obtained: one line on stderr, exit 2."""


@dataclass(frozen=True)
class Source:
    body: bytes
    #: HTTP status when ROBOTS was a URL, else None.
    status: int | None = None
    #: What was done with a non-2xx answer (also printed on stderr).
    note: str | None = None
    #: the fetch policy's verdict (a file or standard input: parse)
    verdict: Verdict = Verdict.PARSE

    @property
    def disallow_all(self) -> bool:
        """1994 mode: robots.txt answered 401/403, which disallows everything."""
        return self.verdict == Verdict.DISALLOW_ALL


def one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return " ".join(str(exc).split()) or type(exc).__name__


# -- reading robots.txt -------------------------------------------------------------


def _is_url(source: str) -> bool:
    return source[:8].lower().startswith(("http://", "https://"))


def _read_file(source: str) -> Source:
    if source == "-":
        return Source(sys.stdin.buffer.read(MAX_READ_BYTES))
    if "://" in source:
        scheme = source.split("://", 1)[0]
        raise CliError(
            f"unsupported robots.txt URL scheme {scheme!r} (use http or https)"
        )
    try:
        with Path(source).open("rb") as f:
            return Source(f.read(MAX_READ_BYTES))
    except OSError as exc:
        raise CliError(f"cannot read {source!r}: {one_line(exc)}") from None


def _optional_module(*names: str) -> Any:
    """The first of *names* that imports, or None (optional decoders)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _brotli() -> Any:
    module = _optional_module("brotli", "brotlicffi")
    try:  # output_buffer_limit (brotli 1.2) bounds what one call inflates
        module.Decompressor().process(b"", output_buffer_limit=1)
    except (AttributeError, TypeError):  # absent, or too old to be bounded
        return None
    return module


#: Decoders for ``Content-Encoding`` beyond gzip and deflate, when installed (Scrapy
#: 2.14 needs brotli and zstd itself, so they normally are).
_BROTLI = _brotli()
_ZSTD = _optional_module("compression.zstd", "backports.zstd")
ACCEPT_ENCODING = ", ".join(
    ["gzip", "deflate"] + (["br"] if _BROTLI else []) + (["zstd"] if _ZSTD else [])
)


#: What a decoder raises for corrupt data.
_DECODE_ERRORS: tuple[type[BaseException], ...] = tuple(
    error
    for error in (
        zlib.error,
        EOFError,
        getattr(_BROTLI, "error", None),
        getattr(_ZSTD, "ZstdError", None),
    )
    if isinstance(error, type) and issubclass(error, BaseException)
)


class _TooBig(Exception):
    pass


def _inflate_zlib(data: bytes, wbits: int, limit: int) -> bytes:
    """zlib/gzip/raw deflate, every gzip member, at most *limit* bytes out."""
    out = bytearray()
    while data:
        inflater = zlib.decompressobj(wbits)
        out += inflater.decompress(data, limit + 1 - len(out))
        while inflater.unconsumed_tail and len(out) <= limit:
            out += inflater.decompress(inflater.unconsumed_tail, limit + 1 - len(out))
        if len(out) > limit:
            raise _TooBig
        rest = inflater.unused_data if inflater.eof else b""
        # Another gzip member may follow; anything else after the end is ignored.
        data = rest if wbits > zlib.MAX_WBITS and rest[:2] == b"\x1f\x8b" else b""
    return bytes(out)


def _inflate_deflate(data: bytes, limit: int) -> bytes:
    try:
        return _inflate_zlib(data, zlib.MAX_WBITS, limit)
    except zlib.error:
        # Raw deflate without the zlib header, as some servers send it.
        return _inflate_zlib(data, -zlib.MAX_WBITS, limit)


def _inflate_brotli(data: bytes, limit: int) -> bytes:
    inflater = _BROTLI.Decompressor()
    out = bytearray(inflater.process(data, output_buffer_limit=limit + 1))
    while not inflater.is_finished() and len(out) <= limit:
        chunk = inflater.process(b"", output_buffer_limit=limit + 1 - len(out))
        if not chunk:
            break
        out += chunk
    if len(out) > limit:
        raise _TooBig
    return bytes(out)


def _inflate_zstd(data: bytes, limit: int) -> bytes:
    inflater = _ZSTD.ZstdDecompressor()
    out = bytearray(inflater.decompress(data, limit + 1))
    while not inflater.eof and not inflater.needs_input and len(out) <= limit:
        out += inflater.decompress(b"", limit + 1 - len(out))
    if len(out) > limit:
        raise _TooBig
    return bytes(out)


def _decode(body: bytes, content_encoding: str | None, url: str) -> bytes:
    """Undo ``Content-Encoding`` (last applied, first undone), inflating at most
    MAX_DECOMPRESSED bytes per step, as the middleware does."""
    codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
    for coding in reversed(codings):
        try:
            if coding in {"", "identity"}:
                continue
            if coding in {"gzip", "x-gzip"}:
                body = _inflate_zlib(body, 16 + zlib.MAX_WBITS, MAX_DECOMPRESSED)
            elif coding == "deflate":
                body = _inflate_deflate(body, MAX_DECOMPRESSED)
            elif coding == "br" and _BROTLI is not None:
                body = _inflate_brotli(body, MAX_DECOMPRESSED)
            elif coding == "zstd" and _ZSTD is not None:
                body = _inflate_zstd(body, MAX_DECOMPRESSED)
            else:
                raise CliError(
                    f"cannot use {url}: unsupported Content-Encoding {coding!r} "
                    f"(supported: {ACCEPT_ENCODING})"
                )
        except _TooBig:
            raise CliError(
                f"cannot use {url}: the {coding} body inflates past "
                f"{MAX_DECOMPRESSED:,} bytes (ROBOTS_STD_MAX_DECOMPRESSED_SIZE); a "
                "crawl treats the site as unreachable (everything disallowed)"
            ) from None
        except CliError:
            raise
        except _DECODE_ERRORS as exc:  # corrupt data
            raise CliError(
                f"cannot use {url}: invalid {coding} body ({one_line(exc)}); a crawl "
                "treats the site as unreachable (everything disallowed)"
            ) from None
    return body


@dataclass(frozen=True)
class _Fetched:
    """What the fetch ended with: the outcome the fetch policy judges
    (:func:`scrapy_robots_std.policy.fetch_verdict`, as in a crawl), the URL that
    answered, its status, the body of a 2xx, and why a redirect was not followed or
    the fetch failed, in words."""

    outcome: FetchOutcome
    url: str
    status: int | None = None
    body: bytes = b""
    detail: str = ""


def _failed(url: str, error: BaseException, message: str) -> _Fetched:
    return _Fetched(FetchOutcome(error=type(error).__name__), url, detail=message)


def _source(fetched: _Fetched, standard: str) -> Source:
    """What the CLI does with the fetch policy's verdict: exit 2 when robots.txt is
    unreachable; otherwise the body, or no body and a note saying why."""
    verdict = fetch_verdict(fetched.outcome, standard)
    url, code = fetched.url, fetched.status
    if verdict.verdict == Verdict.UNREACHABLE:
        if code is None:
            raise CliError(fetched.detail)
        if verdict.reason == FetchReason.STATUS:
            raise CliError(f"cannot fetch {url}: unexpected HTTP status {code}")
        raise CliError(
            f"cannot fetch {url}: HTTP {code}; robots.txt is unreachable "
            "(a crawler must assume everything is disallowed)"
        )
    if verdict.verdict == Verdict.PARSE:
        return Source(fetched.body, code)
    if verdict.verdict == Verdict.DISALLOW_ALL:
        note = (
            f"{url}: HTTP {code}; 1994 standard: access to the site is restricted, "
            "everything disallowed"
        )
    elif verdict.reason == FetchReason.REDIRECTS:
        why = fetched.detail or f"HTTP {code} without a Location to follow"
        # RFC 9309 2.3.1.2 lets a crawler treat robots.txt as unavailable.
        note = f"{url}: {why}; treated as unavailable (4xx): everything allowed"
    else:
        note = (
            f"{url}: HTTP {code}; treated as an empty robots.txt (everything allowed)"
        )
    return Source(b"", code, note, verdict.verdict)


def _redirect_target(url: str, location: str | None) -> tuple[str | None, str]:
    """The absolute http(s) URL a ``Location`` names, or None and the reason."""
    if not location or not location.strip():
        return None, "redirect without a Location"
    location = location.strip()
    try:
        target = urljoin(url, location)
        parts = urlsplit(target)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        return None, f"redirect to {location!r}, which is not a URL"
    if parts.scheme.lower() not in {"http", "https"}:
        return (
            None,
            f"redirect to {location!r} refused (only http and https are followed)",
        )
    if not parts.hostname:
        return None, f"redirect to {location!r}, which names no host"
    return urlunsplit(parts._replace(fragment="")), ""


def _request_target(parts: SplitResult) -> str:
    target = quote(parts.path or "/", safe=_TARGET_SAFE)
    if parts.query:
        target += "?" + quote(parts.query, safe=_TARGET_SAFE + "?")
    return target


_TARGET_SAFE = "/%;:@&=+$,!~*'()[]"


class _Fetch:
    """One robots.txt fetch, run in a worker thread.

    The caller waits on the thread for at most the timeout, which covers
    everything: name resolution, connect, TLS, the status line and headers (so a
    server that trickles its headers cannot hold the command), every redirect
    and the body. At the deadline the socket is shut down, which ends any read
    the worker is blocked in.
    """

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.result: _Fetched | None = None
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._conn: http.client.HTTPConnection | None = None

    def run(self) -> _Fetched:
        worker = threading.Thread(target=self._work, name="robots-fetch", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            self.cancel()
            worker.join(1.0)
            return _failed(
                self.url,
                TimeoutError(),
                f"cannot fetch {self.url}: timed out, no complete answer within "
                f"{self.timeout:g} s (connect, headers and body together)",
            )
        if self.error is not None:
            raise self.error
        assert self.result is not None  # set by _work when there is no error
        return self.result

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            conn = self._conn
        sock = conn.sock if conn is not None else None
        if sock is not None:
            # The plain socket's shutdown: an SSLSocket's would touch its SSL
            # object under the worker.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def _work(self) -> None:
        url = self.url
        try:
            self.result = self._follow()
        except CliError as exc:
            self.result = _failed(url, exc, str(exc))
        except TimeoutError as exc:
            message = f"cannot fetch {url}: timed out after {self.timeout:g} s"
            self.result = _failed(url, exc, message)
        except (OSError, http.client.HTTPException, ValueError, UnicodeError) as exc:
            self.result = _failed(url, exc, f"cannot fetch {url}: {one_line(exc)}")
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            self.error = exc

    def _follow(self) -> _Fetched:
        """Follow redirects as the middleware does (policy.is_redirect and
        policy.redirect_failure: at most MAX_REDIRECTS hops, to any origin)."""
        url = self.url
        seen = {url}
        hops = 0
        while True:
            conn, response = self._get(url)
            try:
                code = int(response.status)
                location = response.getheader("Location")
                if not is_redirect(code, location is not None):
                    return self._answer(url, code, response)
                target, why = _redirect_target(url, location)
                problem = redirect_failure(target, seen, hops)
            finally:
                response.close()
                conn.close()
            if problem is not None:
                if problem == RedirectFailure.LOOP:
                    why = f"redirect loop (back to {target})"
                elif problem == RedirectFailure.TOO_MANY:
                    url, why = self.url, f"more than {MAX_REDIRECTS} redirects"
                else:
                    why = f"HTTP {code} {why}"
                outcome = FetchOutcome(redirect_failure=problem, redirects=hops)
                return _Fetched(outcome, url, code, detail=why)
            assert target is not None  # a redirect_failure otherwise
            seen.add(target)
            hops += 1
            url = target

    def _answer(
        self, url: str, code: int, response: http.client.HTTPResponse
    ) -> _Fetched:
        """The final answer; a 2xx's body read and decoded."""
        body = b""
        if 200 <= code < 300:
            encoding = response.getheader("Content-Encoding")
            body = _decode(self._read_body(response), encoding, url)
        return _Fetched(FetchOutcome(status=code), url, code, body)

    def _get(
        self, url: str
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        parts = urlsplit(url)
        host = parts.hostname
        if not host:
            raise CliError(f"cannot fetch {url}: no host name")
        cls = (
            http.client.HTTPSConnection
            if parts.scheme.lower() == "https"
            else http.client.HTTPConnection
        )
        left = self.deadline - time.monotonic()
        with self._lock:
            if self._cancelled or left <= 0:
                raise TimeoutError
            conn = cls(host, parts.port, timeout=left)
            self._conn = conn
        try:
            conn.request(
                "GET",
                _request_target(parts),
                headers={
                    "User-Agent": _USER_AGENT,
                    "Accept-Encoding": ACCEPT_ENCODING,
                    "Connection": "close",
                },
            )
            return conn, conn.getresponse()
        except BaseException:
            conn.close()
            raise

    def _read_body(self, response: http.client.HTTPResponse) -> bytes:
        """At most MAX_READ_BYTES as they come on the wire (the middleware's cut:
        the parser's 500 KiB, the line that crosses it, and one byte to tell that
        there was more; a larger body is not downloaded)."""
        chunks: list[bytes] = []
        size = 0
        while size < MAX_READ_BYTES:
            if time.monotonic() > self.deadline:
                raise TimeoutError
            chunk = response.read1(min(65_536, MAX_READ_BYTES - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)


def load(source: str, standard: str, timeout: float) -> Source:
    if _is_url(source):
        return _source(_Fetch(source, timeout).run(), standard)
    return _read_file(source)
