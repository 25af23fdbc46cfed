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
import http.client
import json
import os
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from scrapy_robots_std import RobotsTxt, __version__
from scrapy_robots_std.robotstxt.parser import RFC9309, STD1994

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy_robots_std import Decision

__all__ = ["main"]

#: RFC 9309 section 2.5: crawlers parse at least the first 500 KiB. One more byte is
#: read so that the parser can tell that the body was cut.
MAX_BYTES = 512_000
FETCH_TIMEOUT = 10.0
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


class _RedirectHandler(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS


def _read_body(response: Any, url: str) -> bytes:
    deadline = time.monotonic() + FETCH_TIMEOUT
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_BYTES:
        if time.monotonic() > deadline:
            raise CliError(f"cannot fetch {url}: timed out after {FETCH_TIMEOUT:g} s")
        chunk: bytes = response.read1(min(65_536, MAX_BYTES + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _http_error_source(exc: urllib.error.HTTPError, url: str, standard: str) -> _Source:
    code = exc.code
    if 300 <= code < 400:
        return _Source(
            b"",
            code,
            f"{url}: more than {MAX_REDIRECTS} redirects (or a redirect without a "
            "target); treated as unavailable (4xx): everything allowed",
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


def _fetch(url: str, standard: str) -> _Source:
    opener = urllib.request.build_opener(_RedirectHandler)
    try:
        request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
        with opener.open(request, timeout=FETCH_TIMEOUT) as response:
            status = int(response.status)
            body = _read_body(response, url)
    except urllib.error.HTTPError as exc:
        with exc:
            return _http_error_source(exc, url, standard)
    except urllib.error.URLError as exc:
        reason = exc.reason
        text = reason if isinstance(reason, str) else _one_line(reason)
        raise CliError(f"cannot fetch {url}: {text}") from None
    except TimeoutError:
        raise CliError(
            f"cannot fetch {url}: timed out after {FETCH_TIMEOUT:g} s"
        ) from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise CliError(f"cannot fetch {url}: {_one_line(exc)}") from None
    return _Source(body, status)


def _load(source: str, standard: str) -> _Source:
    return _fetch(source, standard) if _is_url(source) else _read_file(source)


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


def _run(args: argparse.Namespace) -> int:
    token, urls = _token_and_urls(args)
    standard: str = args.standard
    _validate(standard, token, urls)
    source = _load(args.robots, standard)
    if source.note:
        print(f"note: {source.note}", file=sys.stderr)
    robots = RobotsTxt.parse(source.body, standard=standard)
    results = [_check(robots, source, token, url) for url in urls]

    if args.json:
        document = {
            "robots": args.robots,
            "status": source.status,
            "standard": robots.standard,
            "token": token,
            "truncated": robots.truncated,
            "results": results,
            "sitemaps": list(robots.sitemaps),
            "diagnostics": [
                {"line": d.line, "kind": d.kind, "message": d.message}
                for d in robots.diagnostics
            ],
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        for result in results:
            verdict = "ALLOWED" if result["allowed"] else "DISALLOWED"
            print(f"{verdict} {result['url']}")
            if args.explain:
                print(f"  {result['explain']}")
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
        print(f"error: {exc}", file=sys.stderr)
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
