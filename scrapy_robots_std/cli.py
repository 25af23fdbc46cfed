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
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from scrapy_robots_std import RobotsTxt, __version__, tdm_source
from scrapy_robots_std.robots_source import (
    FETCH_TIMEOUT,
    CliError,
    Source,
    load,
    one_line,
)
from scrapy_robots_std.robotstxt.reader import RFC9309
from scrapy_robots_std.robotstxt.robots import REASON_ROBOTS_TXT
from scrapy_robots_std.safetext import safe, safe_json
from scrapy_robots_std.stats import DROP_STATUS
from scrapy_robots_std.usage.preferences import (
    REASON_DISALLOWED,
    UsagePreferences,
)
from scrapy_robots_std.usage.vocab import REVISIONS, check_purpose

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy_robots_std import Decision

__all__ = ["main"]


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see --help)\n")


def _build_parser(prog: str) -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog=prog,
        usage="%(prog)s ROBOTS URL [URL ...] --token NAME [--standard STANDARD] "
        "[--explain] [--purpose PURPOSE] [--json]",
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
    _add_options(parser)
    return parser


def _add_options(parser: argparse.ArgumentParser) -> None:
    """The options beside ROBOTS, URL and --token."""
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
        help="also print the line that decided each URL, and the usage preferences "
        "(Content-Usage, draft-ietf-aipref-vocab-08; Content-Signal) stated for it",
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
        "--purpose",
        metavar="PURPOSE",
        help="a usage purpose (train-ai, ai-use, search): when ROBOTS is a URL, also "
        "fetch its origin's TDMRep /.well-known/tdmrep.json and print its statement "
        "for each URL",
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


def _prog() -> str:
    argv0 = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if argv0 in {"__main__.py", "-m", "-c", ""}:
        return "python -m scrapy_robots_std"
    return argv0


def _token_and_urls(args: argparse.Namespace) -> tuple[str, list[str]]:
    positional: list[str] = args.urls
    if args.token is not None:
        return args.token, positional
    if len(positional) < 2 or "://" in positional[0]:
        raise CliError("missing the crawler's token: give --token NAME")
    return positional[0], positional[1:]


def _problem(what: str, value: str, exc: ValueError) -> str:
    """The API's message, naming *value* if it does not already."""
    message = one_line(exc)
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
        except ValueError as exc:
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


def _check(robots: RobotsTxt, source: Source, token: str, url: str) -> dict[str, Any]:
    decision = robots.decide(url, token)
    if source.disallow_all and decision.reason != REASON_ROBOTS_TXT:
        return {
            "url": url,
            "allowed": False,
            "reason": DROP_STATUS,  # the middleware's reason for it
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


def _usage(robots: RobotsTxt, source: Source, token: str, url: str) -> UsagePreferences:
    if source.disallow_all:
        return UsagePreferences.unknown(REASON_DISALLOWED)
    return robots.usage(url, token)


#: Diagnostics listed in the text output; --json lists every one the parser kept.
MAX_SHOWN_DIAGNOSTICS = 20


def _print(line: str) -> None:
    """One line of output, with control and bidi characters escaped."""
    print(safe(line))


def _group_line(robots: RobotsTxt, source: Source, token: str) -> str:
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
    source = load(args.robots, standard, timeout)
    if source.note:
        print(f"note: {safe(source.note)}", file=sys.stderr)
    robots = RobotsTxt.parse(source.body, standard=standard)
    results = [_check(robots, source, token, url) for url in urls]
    if args.purpose is not None:
        _add_tdmrep(args, results, timeout)
    usages = [_usage(robots, source, token, url) for url in urls]
    summary = robots.usage_summary()

    if args.json:
        document = {
            "robots": args.robots,
            "status": source.status,
            "standard": robots.standard,
            "token": token,
            "groups": [] if source.disallow_all else robots.groups_for(token),
            "truncated": robots.truncated,
            "results": [
                {**result, "usage": usage.to_dict()}
                for result, usage in zip(results, usages, strict=True)
            ],
            "usage_lines": {
                "content_usage": summary.content_usage,
                "content_signal": summary.content_signal,
                "invalid": summary.invalid,
                "outside_group": summary.outside_group,
                "revisions": REVISIONS,
            },
            "sitemaps": list(robots.sitemaps),
            "diagnostics": [
                {"line": d.line, "kind": d.kind, "message": d.message}
                for d in robots.diagnostics
            ],
        }
        text = safe_json(json.dumps(document, indent=2, ensure_ascii=False))
        if not _encodable(text, sys.stdout):
            # The same JSON value in ASCII escapes: a terminal that cannot show the
            # text still gets a document json.loads reads back.
            text = json.dumps(document, indent=2, ensure_ascii=True)
        print(text)
    else:
        _print_text(robots, source, token, results, usages, explain=args.explain)
    return 0 if all(result["allowed"] for result in results) else 1


def _add_tdmrep(
    args: argparse.Namespace, results: list[dict[str, Any]], timeout: float
) -> None:
    """Each result's TDMRep file statement for ``--purpose`` (ROBOTS a URL)."""
    try:
        purpose = check_purpose(args.purpose.strip().lower())
    except ValueError as exc:
        raise CliError(f"invalid --purpose: {exc}") from None
    url = tdm_source.file_url(args.robots)
    file, fetched = (
        (None, "ROBOTS is not a URL: no tdmrep.json")
        if url is None
        else (tdm_source.load_file(url, args.standard, timeout))
    )
    print(f"note: TDMRep {safe(fetched)}", file=sys.stderr)
    for note in () if file is None else file.notes:
        print(f"note: {safe(note)}", file=sys.stderr)
    for result in results:
        statement = None if file is None else file.statement(result["url"])[0]
        value = tdm_source.meaning(statement, purpose)
        said = "unset" if statement is None else str(statement)
        result["tdmrep"] = {
            "statement": None if statement is None else statement.to_dict(),
            "purpose": purpose,
            "value": value,
            "explain": f"TDMRep: {said}: {value} for {purpose}",
        }


def _print_text(
    robots: RobotsTxt,
    source: Source,
    token: str,
    results: list[dict[str, Any]],
    usages: list[UsagePreferences],
    *,
    explain: bool,
) -> None:
    """The text output; files without usage lines print what they printed before."""
    show_usage = explain and robots.usage_summary().stated
    for result, usage in zip(results, usages, strict=True):
        verdict = "ALLOWED" if result["allowed"] else "DISALLOWED"
        _print(f"{verdict} {result['url']}")
        if explain:
            _print(f"  {result['explain']}")
        if show_usage:
            for line in usage.explain_lines():
                _print(f"  {line}")
        if "tdmrep" in result:
            _print(f"  {result['tdmrep']['explain']}")
    _print(_group_line(robots, source, token))
    if show_usage:
        _print(
            f"usage read as {REVISIONS['vocab']} and {REVISIONS['attach']}, and"
            f" the {REVISIONS['content-signals']}"
        )
    for line in _diagnostic_lines(robots):
        _print(line)


def main(argv: list[str] | None = None) -> int:
    """Run the command line with *argv* (default: ``sys.argv[1:]``); return the exit status."""
    _escape_what_cannot_be_encoded()
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


def _escape_what_cannot_be_encoded() -> None:
    """Text the terminal's encoding cannot write (``PYTHONIOENCODING=ascii`` and a
    non-ASCII URL or rule) is written as ``\\xNN`` escapes, never an exception:
    the exit codes keep their meaning (1 is "disallowed")."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _encodable(text: str, stream: object) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True
