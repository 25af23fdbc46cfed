"""Command line: check URLs against a robots.txt file or URL.

    python -m scrapy_robots_std ROBOTS URL [URL ...] --token NAME
        [--standard rfc9309|1994] [--explain] [--json]

``ROBOTS`` is a file path, ``-`` for standard input, or an ``http(s)://`` URL to fetch.
The token may also be given positionally before the URLs, as in Google's
``robots_main`` (``ROBOTS TOKEN URL...``). Exit status: 0 if every URL is allowed,
1 if any is disallowed, 2 on bad input or when robots.txt cannot be fetched.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import importlib
import json
import os
import socket
import sys
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import SplitResult, quote, urljoin, urlsplit, urlunsplit

from scrapy_robots_std import RobotsTxt, __version__
from scrapy_robots_std.config import DEFAULTS
from scrapy_robots_std.robotstxt.parser import RFC9309, STD1994
from scrapy_robots_std.safetext import safe, safe_json

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy_robots_std import Decision

__all__ = ["main"]

#: RFC 9309 section 2.5: crawlers parse at least the first 500 KiB. One more byte is
#: read so that the parser can tell that the body was cut.
MAX_BYTES = 512_000
#: One deadline for the whole fetch: connect, headers, redirects and body.
FETCH_TIMEOUT = 10.0
#: What a compressed body may inflate to, as in the middleware.
MAX_DECOMPRESSED: int = DEFAULTS["ROBOTS_STD_MAX_DECOMPRESSED_SIZE"]
#: RFC 9309 section 2.3.1.2: follow at least five consecutive redirects.
MAX_REDIRECTS = 5
_USER_AGENT = "scrapy-robots-std (robots.txt checker; +https://pypi.org/project/scrapy-robots-std/)"


class CliError(Exception):
    """Bad input, or robots.txt could not be obtained: one line on stderr, exit 2."""


@dataclass(frozen=True)
class _Source:
    body: bytes
    #: HTTP status when ROBOTS was a URL, else None.
    status: int | None = None
    #: What was done with a non-2xx answer (also printed on stderr).
    note: str | None = None
    #: 1994 mode: robots.txt answered 401/403, which disallows everything.
    disallow_all: bool = False


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see --help)\n")


def _build_parser(prog: str) -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog=prog,
        usage="%(prog)s ROBOTS URL [URL ...] --token NAME [--standard STANDARD] "
        "[--explain] [--json]",
        description="Check URLs against a robots.txt file the way scrapy-robots-std "
        "does: print ALLOWED or DISALLOWED for each URL.",
        epilog="Exit status: 0 if every URL is allowed, 1 if any is disallowed, "
        "2 on bad input or when robots.txt cannot be fetched (HTTP 429/5xx, network "
        "error). A robots.txt URL answering 4xx counts as an empty file (RFC 9309); "
        "in 1994 mode 401 and 403 disallow everything.",
    )
    parser.add_argument(
        "robots",
        metavar="ROBOTS",
        help="robots.txt file path, '-' for standard input, or an http(s):// URL",
    )
    parser.add_argument(
        "urls",
        metavar="URL",
        nargs="+",
        help="absolute http(s) URLs to check (without --token, the first one is the token)",
    )
    parser.add_argument(
        "--token",
        "-t",
        metavar="NAME",
        help="the crawler's product token, e.g. FooBot (not a whole User-Agent header)",
    )
    parser.add_argument(
        "--standard",
        "-s",
        default=RFC9309,
        metavar="STANDARD",
        help="rules to apply: rfc9309 (the default) or 1994",
    )
    parser.add_argument(
        "--explain",
        "-e",
        action="store_true",
        help="also print the line of robots.txt that decided each URL",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"when ROBOTS is a URL: the most the whole fetch may take (connect, "
        f"headers, redirects and body; default {FETCH_TIMEOUT:g})",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document with every verdict, the sitemaps and diagnostics",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"robots-std {__version__}",
        help="print the version and exit",
    )
    return parser


def _prog() -> str:
    argv0 = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if argv0 in {"__main__.py", "-m", "-c", ""}:
        return "python -m scrapy_robots_std"
    return argv0


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return " ".join(str(exc).split()) or type(exc).__name__


# -- reading robots.txt -------------------------------------------------------------


def _is_url(source: str) -> bool:
    return source[:8].lower().startswith(("http://", "https://"))


def _read_file(source: str) -> _Source:
    if source == "-":
        return _Source(sys.stdin.buffer.read(MAX_BYTES + 1))
    if "://" in source:
        scheme = source.split("://", 1)[0]
        raise CliError(
            f"unsupported robots.txt URL scheme {scheme!r} (use http or https)"
        )
    try:
        with Path(source).open("rb") as f:
            return _Source(f.read(MAX_BYTES + 1))
    except OSError as exc:
        raise CliError(f"cannot read {source!r}: {_one_line(exc)}") from None


def _optional_module(*names: str) -> Any:
    """The first of *names* that imports, or None (optional decoders)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:  # noqa: PERF203 - a handful of names
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
                f"cannot use {url}: invalid {coding} body ({_one_line(exc)}); a crawl "
                "treats the site as unreachable (everything disallowed)"
            ) from None
    return body


def _status_source(code: int, url: str, standard: str) -> _Source:
    """What a final non-2xx answer means (the middleware's fetch policy)."""
    if 300 <= code < 400:
        return _Source(
            b"",
            code,
            f"{url}: HTTP {code} without a Location to follow; treated as "
            "unavailable (4xx): everything allowed",
        )
    if code == 429 or code >= 500:
        raise CliError(
            f"cannot fetch {url}: HTTP {code}; robots.txt is unreachable "
            "(a crawler must assume everything is disallowed)"
        )
    if 400 <= code < 500:
        if standard == STD1994 and code in {401, 403}:
            return _Source(
                b"",
                code,
                f"{url}: HTTP {code}; 1994 standard: access to the site is "
                "restricted, everything disallowed",
                disallow_all=True,
            )
        return _Source(
            b"",
            code,
            f"{url}: HTTP {code}; treated as an empty robots.txt (everything allowed)",
        )
    raise CliError(f"cannot fetch {url}: unexpected HTTP status {code}")


def _unfollowable(url: str, code: int, why: str) -> _Source:
    """A redirect the middleware does not follow: RFC 9309 2.3.1.2 lets a crawler
    treat robots.txt as unavailable, which allows everything."""
    return _Source(
        b"", code, f"{url}: {why}; treated as unavailable (4xx): everything allowed"
    )


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

    def __init__(self, url: str, standard: str, timeout: float) -> None:
        self.url = url
        self.standard = standard
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.result: _Source | None = None
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._conn: http.client.HTTPConnection | None = None

    def run(self) -> _Source:
        worker = threading.Thread(target=self._work, name="robots-fetch", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            self.cancel()
            worker.join(1.0)
            raise CliError(
                f"cannot fetch {self.url}: timed out, no complete answer within "
                f"{self.timeout:g} s (connect, headers and body together)"
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
        try:
            self.result = self._follow()
        except CliError as exc:
            self.error = exc
        except TimeoutError:
            self.error = CliError(
                f"cannot fetch {self.url}: timed out after {self.timeout:g} s"
            )
        except (OSError, http.client.HTTPException, ValueError, UnicodeError) as exc:
            self.error = CliError(f"cannot fetch {self.url}: {_one_line(exc)}")
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            self.error = exc

    def _follow(self) -> _Source:
        url = self.url
        seen = {url}
        for hop in range(MAX_REDIRECTS + 1):
            conn, response = self._get(url)
            try:
                code = int(response.status)
                if code in _REDIRECT_STATUSES:
                    target, why = _redirect_target(url, response.getheader("Location"))
                    if target is None:
                        return _unfollowable(url, code, f"HTTP {code} {why}")
                    if target in seen:
                        return _unfollowable(
                            url, code, f"redirect loop (back to {target})"
                        )
                    if hop == MAX_REDIRECTS:
                        return _unfollowable(
                            self.url, code, f"more than {MAX_REDIRECTS} redirects"
                        )
                    seen.add(target)
                    url = target
                    continue
                if 200 <= code < 300:
                    body = self._read_body(response)
                    encoding = response.getheader("Content-Encoding")
                    return _Source(_decode(body, encoding, url), code)
                return _status_source(code, url, self.standard)
            finally:
                response.close()
                conn.close()
        raise AssertionError("unreachable")  # pragma: no cover

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
        """At most MAX_BYTES + 1 bytes as they come on the wire (the middleware's
        cut: a larger body is not downloaded)."""
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_BYTES:
            if time.monotonic() > self.deadline:
                raise TimeoutError
            chunk = response.read1(min(65_536, MAX_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)


_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


def _fetch(url: str, standard: str, timeout: float) -> _Source:
    return _Fetch(url, standard, timeout).run()


def _load(source: str, standard: str, timeout: float) -> _Source:
    if _is_url(source):
        return _fetch(source, standard, timeout)
    return _read_file(source)


# -- checking -------------------------------------------------------------------------


def _token_and_urls(args: argparse.Namespace) -> tuple[str, list[str]]:
    positional: list[str] = args.urls
    if args.token is not None:
        return args.token, positional
    if len(positional) < 2 or "://" in positional[0]:
        raise CliError("missing the crawler's token: give --token NAME")
    return positional[0], positional[1:]


def _problem(what: str, value: str, exc: ValueError) -> str:
    """The API's message, naming *value* if it does not already."""
    message = _one_line(exc)
    return message if repr(value) in message else f"{what} {value!r}: {message}"


def _validate(standard: str, token: str, urls: Sequence[str]) -> None:
    """Check the arguments before reading or fetching anything."""
    try:
        empty = RobotsTxt.parse(b"", standard=standard)
    except ValueError as exc:
        raise CliError(_problem("unknown standard", standard, exc)) from None
    # The token first (against a URL known to be valid), then each URL.
    checks = [("invalid token", token, "http://example.com/")]
    checks += [("invalid URL", url, url) for url in urls]
    for what, subject, url in checks:
        try:
            empty.decide(url, token)
        except ValueError as exc:  # noqa: PERF203 - stops at the first error
            raise CliError(_problem(what, subject, exc)) from None


def _rule_json(decision: Decision) -> dict[str, Any] | None:
    rule = decision.rule
    if rule is None:
        return None
    return {
        "line": rule.line,
        "directive": rule.directive,
        "pattern": rule.pattern,
        "allow": rule.allow,
        "agents": list(rule.agents),
    }


def _check(robots: RobotsTxt, source: _Source, token: str, url: str) -> dict[str, Any]:
    decision = robots.decide(url, token)
    if source.disallow_all and decision.reason != "robots-txt":
        return {
            "url": url,
            "allowed": False,
            "reason": "http-status",
            "explain": f"DISALLOWED: robots.txt answered HTTP {source.status} "
            "(1994: everything disallowed)",
            "rule": None,
        }
    return {
        "url": url,
        "allowed": decision.allowed,
        "reason": decision.reason,
        "explain": decision.explain(),
        "rule": _rule_json(decision),
    }


#: Diagnostics listed in the text output; --json lists every one the parser kept.
MAX_SHOWN_DIAGNOSTICS = 20


def _print(line: str) -> None:
    """One line of output, with control and bidi characters escaped."""
    print(safe(line))


def _group_line(robots: RobotsTxt, source: _Source, token: str) -> str:
    """Which group of robots.txt applied to *token*, by its user-agent lines."""
    if source.disallow_all:
        return (
            f"group: none (robots.txt answered HTTP {source.status}: "
            "everything disallowed)"
        )
    groups = robots.groups_for(token)
    if not groups:
        if source.status is not None and not 200 <= source.status < 300:
            return f"group: none (no robots.txt: HTTP {source.status})"
        return (
            f"group: none (no group names {token} and there is no * group): "
            "everything allowed"
        )
    names = "; ".join("User-agent: " + ", ".join(agents) for agents in groups)
    if all(agent.lstrip().startswith("*") for agents in groups for agent in agents):
        return f"group: {names} (no group names {token})"
    if len(groups) > 1:
        return f"groups: {names} ({len(groups)} groups name {token}: merged)"
    return f"group: {names}"


def _diagnostic_lines(robots: RobotsTxt) -> list[str]:
    diagnostics = robots.diagnostics
    if not diagnostics:
        return ["diagnostics: none"]
    lines = [f"diagnostics: {len(diagnostics)}"]
    for diagnostic in diagnostics[:MAX_SHOWN_DIAGNOSTICS]:
        if diagnostic.kind == "body-cut":
            lines.append(f"  truncated: {diagnostic.message}")
        elif diagnostic.line <= 0:
            lines.append(f"  {diagnostic.message}")
        else:
            lines.append(f"  line {diagnostic.line}: {diagnostic.message}")
    hidden = len(diagnostics) - MAX_SHOWN_DIAGNOSTICS
    if hidden > 0:
        lines.append(f"  ... and {hidden} more (--json lists every one)")
    return lines


def _run(args: argparse.Namespace) -> int:
    token, urls = _token_and_urls(args)
    standard: str = args.standard
    timeout: float = FETCH_TIMEOUT if args.timeout is None else args.timeout
    if not 0 < timeout < float("inf"):
        raise CliError(
            f"invalid --timeout {timeout:g}: give a positive number of seconds"
        )
    _validate(standard, token, urls)
    source = _load(args.robots, standard, timeout)
    if source.note:
        print(f"note: {safe(source.note)}", file=sys.stderr)
    robots = RobotsTxt.parse(source.body, standard=standard)
    results = [_check(robots, source, token, url) for url in urls]

    if args.json:
        document = {
            "robots": args.robots,
            "status": source.status,
            "standard": robots.standard,
            "token": token,
            "groups": [] if source.disallow_all else robots.groups_for(token),
            "truncated": robots.truncated,
            "results": results,
            "sitemaps": list(robots.sitemaps),
            "diagnostics": [
                {"line": d.line, "kind": d.kind, "message": d.message}
                for d in robots.diagnostics
            ],
        }
        print(safe_json(json.dumps(document, indent=2, ensure_ascii=False)))
    else:
        for result in results:
            verdict = "ALLOWED" if result["allowed"] else "DISALLOWED"
            _print(f"{verdict} {result['url']}")
            if args.explain:
                _print(f"  {result['explain']}")
        _print(_group_line(robots, source, token))
        for line in _diagnostic_lines(robots):
            _print(line)
    return 0 if all(result["allowed"] for result in results) else 1


def main(argv: list[str] | None = None) -> int:
    """Run the command line with *argv* (default: ``sys.argv[1:]``); return the exit status."""
    parser = _build_parser(_prog())
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already reported on stderr
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return _run(args)
    except CliError as exc:
        print(f"error: {safe(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): not an error of ours, and no traceback.
        # Point stdout at devnull so the interpreter's final flush stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
