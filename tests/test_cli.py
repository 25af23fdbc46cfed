"""The command line: ``python -m scrapy_robots_std`` / ``robots-std`` / ``_cli.main()``."""

from __future__ import annotations

import gzip
import io
import json
import os
import socket
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import scrapy_robots_std
from scrapy_robots_std import cli as _cli
from scrapy_robots_std.cli import main
from scrapy_robots_std.policy import MAX_REDIRECTS, FetchOutcome, Verdict, fetch_verdict
from scrapy_robots_std.robotstxt.reader import MAX_BODY_BYTES, MAX_READ_BYTES
from scrapy_robots_std.robotstxt.robots import RobotsTxt
from scrapy_robots_std.stats import DROP_STATUS
from tests.helpers.server import (
    BlackHole,
    GzipBomb,
    HostileServer,
    Reply,
    Streaming,
    Trickle,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.helpers.server import Exchange, ScriptedServer

ROBOTS = b"""\
User-agent: FooBot
Disallow: /private
Allow: /private/press

User-agent: *
Disallow: /

Sitemap: https://example.com/sitemap.xml
"""

SITE = "https://example.com"


@pytest.fixture
def robots_file(tmp_path: Path) -> Path:
    path = tmp_path / "robots.txt"
    path.write_bytes(ROBOTS)
    return path


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m scrapy_robots_std`` in a fresh interpreter."""
    package_root = str(Path(scrapy_robots_std.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [package_root, env.get("PYTHONPATH")])
    )
    env["PYTHONWARNINGS"] = "error"
    return subprocess.run(
        [sys.executable, "-m", "scrapy_robots_std", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def verdicts(out: str) -> list[str]:
    """The verdict lines (and --explain lines) of the text output, without the
    group and diagnostics lines that follow them."""
    return [
        line
        for line in out.splitlines()
        if line.startswith(("ALLOWED ", "DISALLOWED ", "  ALLOWED", "  DISALLOWED"))
    ]


def assert_one_error_line(stderr: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")


# -- verdicts and exit status ------------------------------------------------------------


def test_all_allowed_exits_0(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [str(robots_file), f"{SITE}/", f"{SITE}/private/press/kit", "--token", "FooBot"]
    )
    out, err = capsys.readouterr()
    assert code == 0
    assert out.splitlines() == [
        f"ALLOWED {SITE}/",
        f"ALLOWED {SITE}/private/press/kit",
        "group: User-agent: FooBot",
        "diagnostics: none",
    ]
    assert err == ""


def test_any_disallowed_exits_1(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [str(robots_file), f"{SITE}/", f"{SITE}/private/x", "--token", "FooBot"]
    )
    out, _ = capsys.readouterr()
    assert code == 1
    assert verdicts(out) == [f"ALLOWED {SITE}/", f"DISALLOWED {SITE}/private/x"]


def test_token_may_be_positional(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Google's robots_main order: ROBOTS TOKEN URL..."""
    assert main([str(robots_file), "FooBot", f"{SITE}/private/x"]) == 1
    assert verdicts(capsys.readouterr().out) == [f"DISALLOWED {SITE}/private/x"]


def test_explain_names_the_deciding_line(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            str(robots_file),
            f"{SITE}/private/x",
            f"{SITE}/",
            "--token",
            "FooBot",
            "--explain",
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"DISALLOWED {SITE}/private/x"
    assert "line 2" in lines[1]
    assert "Disallow: /private" in lines[1]
    assert lines[2] == f"ALLOWED {SITE}/"
    assert lines[3].startswith("  ")


def test_json_document(robots_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            str(robots_file),
            f"{SITE}/private/x",
            f"{SITE}/a",
            "--token",
            "OtherBot",
            "--json",
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 1
    doc = json.loads(out)
    assert doc["token"] == "OtherBot"
    assert doc["standard"] == "rfc9309"
    assert doc["status"] is None
    assert doc["truncated"] is False
    assert doc["sitemaps"] == ["https://example.com/sitemap.xml"]
    assert isinstance(doc["diagnostics"], list)
    first, second = doc["results"]
    assert first["url"] == f"{SITE}/private/x"
    assert first["allowed"] is False
    assert first["reason"] == "rule"
    assert first["rule"] == {
        "line": 6,
        "directive": "Disallow",
        "pattern": "/",
        "allow": False,
        "agents": ["*"],
    }
    assert isinstance(first["explain"], str)
    assert second["allowed"] is False


def test_json_no_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert main([str(path), f"{SITE}/", "--token", "FooBot", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["results"][0]
    assert result["allowed"] is True
    assert result["rule"] is None
    assert result["reason"] == "no-group"


def test_a_check_past_its_budget_is_disallowed_and_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Rules of one-letter pieces in increasing order, a path of every letter in
    # decreasing order: every rule is a try that fails (docs/standards.md).
    letters = "abcdefghijklmnopqrstuvwxyz"
    rules = [
        f"Disallow: /*{a}*{b}*{c}"
        for i, a in enumerate(letters)
        for j, b in enumerate(letters[i + 1 :], i + 1)
        for c in letters[j + 1 :]
    ]
    path = tmp_path / "hostile.txt"
    path.write_text("User-agent: *\n" + "\n".join(rules) + "\n")
    url = f"{SITE}/{letters[::-1]}" + "-" * 1_000
    assert main([str(path), url, f"{SITE}/-", "--token", "FooBot", "--explain"]) == 1
    out = capsys.readouterr().out
    assert f"DISALLOWED {url}\n" in out
    assert "disallowed to be safe" in out
    assert f"ALLOWED {SITE}/-\n" in out
    assert main([str(path), url, "--token", "FooBot", "--json"]) == 1
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert (result["allowed"], result["reason"], result["rule"]) == (
        False,
        "too-complex",
        None,
    )


def test_standard_1994(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(
        b"User-agent: bot\nDisallow: /bots\n\nUser-agent: *\nDisallow: /all\n"
    )
    urls = [f"{SITE}/bots", f"{SITE}/all"]
    assert main([str(path), *urls, "--token", "ExampleBot"]) == 1
    out = capsys.readouterr().out
    assert verdicts(out) == [f"ALLOWED {urls[0]}", f"DISALLOWED {urls[1]}"]
    assert "group: User-agent: * (no group names ExampleBot)" in out.splitlines()
    assert main([str(path), *urls, "--token", "ExampleBot", "--standard", "1994"]) == 1
    out = capsys.readouterr().out
    assert verdicts(out) == [f"DISALLOWED {urls[0]}", f"ALLOWED {urls[1]}"]
    assert "group: User-agent: bot" in out.splitlines()


def test_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class FakeStdin:
        buffer = io.BytesIO(ROBOTS)

    monkeypatch.setattr(sys, "stdin", FakeStdin)
    assert main(["-", f"{SITE}/private/x", "--token", "FooBot"]) == 1
    assert verdicts(capsys.readouterr().out) == [f"DISALLOWED {SITE}/private/x"]


def test_body_over_500_kib_is_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(
        b"User-agent: *\nDisallow: /a\n" + b"#" * 600_000 + b"\nDisallow: /b\n"
    )
    assert main([str(path), f"{SITE}/b", "--token", "FooBot", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["truncated"] is True


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--token" in capsys.readouterr().out


# -- bad input: exit 2, one line, no traceback -------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            ["{robots}", f"{SITE}/", "--token", "Foo Bot"], id="token-with-space"
        ),
        pytest.param(
            ["{robots}", f"{SITE}/", "--token", "Foo/1.0"], id="token-with-slash"
        ),
        pytest.param(["{robots}", f"{SITE}/", "--token", ""], id="empty-token"),
        pytest.param(
            ["{robots}", f"{SITE}/", "--token", "Foo2"], id="token-not-rfc9309"
        ),
        pytest.param(
            ["{robots}", "example.com/a", "--token", "FooBot"], id="relative-url"
        ),
        pytest.param(["{robots}", "/a", "--token", "FooBot"], id="path-only"),
        pytest.param(
            ["{robots}", "ftp://example.com/a", "--token", "FooBot"], id="ftp-url"
        ),
        pytest.param(
            ["{robots}", f"{SITE}/", "--token", "FooBot", "-s", "2000"], id="standard"
        ),
        pytest.param(["{missing}", f"{SITE}/", "--token", "FooBot"], id="missing-file"),
        pytest.param(["{dir}", f"{SITE}/", "--token", "FooBot"], id="directory"),
        pytest.param(
            ["ftp://example.com/robots.txt", f"{SITE}/", "-t", "A"], id="ftp-robots"
        ),
        pytest.param(["{robots}", f"{SITE}/a", f"{SITE}/b"], id="no-token"),
        pytest.param(["{robots}"], id="no-url"),
        pytest.param([], id="no-arguments"),
        pytest.param(
            ["{robots}", f"{SITE}/", "--token", "A", "--bogus"], id="unknown-option"
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(robots_file: Path, args: list[str]) -> None:
    values = {
        "robots": str(robots_file),
        "missing": str(robots_file.parent / "missing.txt"),
        "dir": str(robots_file.parent),
    }
    argv = [arg.format(**values) for arg in args]
    result = run_cli(*argv)
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert_one_error_line(result.stderr)


def test_bad_input_via_main(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(robots_file), f"{SITE}/", "--token", "Foo Bot"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert_one_error_line(err)
    assert "Foo Bot" in err


def test_unknown_standard_message(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(robots_file), f"{SITE}/", "-t", "A", "--standard", "rfc"]) == 2
    err = capsys.readouterr().err
    assert "rfc9309" in err
    assert "1994" in err


def test_subprocess_verdicts(robots_file: Path) -> None:
    allowed = run_cli(str(robots_file), f"{SITE}/private/press", "--token", "FooBot")
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (
        0,
        f"ALLOWED {SITE}/private/press\ngroup: User-agent: FooBot\ndiagnostics: none\n",
        "",
    )
    disallowed = run_cli(str(robots_file), "FooBot", f"{SITE}/private/x", "--explain")
    assert disallowed.returncode == 1
    assert disallowed.stdout.startswith(f"DISALLOWED {SITE}/private/x\n")
    assert "line 2" in disallowed.stdout
    as_json = run_cli(str(robots_file), f"{SITE}/", "--token", "FooBot", "--json")
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout)["results"][0]["allowed"] is True


def test_subprocess_stdin() -> None:
    result = run_cli("-", f"{SITE}/private/x", "--token", "FooBot", stdin=ROBOTS)
    assert result.returncode == 1
    assert verdicts(result.stdout) == [f"DISALLOWED {SITE}/private/x"]


# -- ROBOTS as a URL -----------------------------------------------------------------------


def test_url_200(server: ScriptedServer, capsys: pytest.CaptureFixture[str]) -> None:
    server.add_route("/robots.txt", 200, ROBOTS, {"Content-Type": "text/plain"})
    code = main(
        [server.url("/robots.txt"), f"{SITE}/private/x", "--token", "FooBot", "--json"]
    )
    out, err = capsys.readouterr()
    assert code == 1
    doc = json.loads(out)
    assert doc["status"] == 200
    assert doc["results"][0]["rule"]["line"] == 2
    assert err == ""
    assert server.requests == ["/robots.txt"]


def test_url_200_subprocess(server: ScriptedServer) -> None:
    server.add_route("/robots.txt", 200, ROBOTS)
    result = run_cli(
        server.url("/robots.txt"), f"{SITE}/private/x", "--token", "FooBot"
    )
    assert (result.returncode, result.stdout, result.stderr) == (
        1,
        f"DISALLOWED {SITE}/private/x\ngroup: User-agent: FooBot\ndiagnostics: none\n",
        "",
    )


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451])
def test_url_4xx_is_an_empty_robots_txt(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str], status: int
) -> None:
    server.add_route("/robots.txt", status, b"User-agent: *\nDisallow: /\n")
    code = main([server.url("/robots.txt"), f"{SITE}/private/x", "--token", "FooBot"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.splitlines() == [
        f"ALLOWED {SITE}/private/x",
        f"group: none (no robots.txt: HTTP {status})",
        "diagnostics: none",
    ]
    assert err.startswith("note: ")
    assert str(status) in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(("status", "code"), [(401, 1), (403, 1), (404, 0)])
def test_url_4xx_in_1994_mode(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str], status: int, code: int
) -> None:
    server.add_route("/robots.txt", status)
    argv = [
        server.url("/robots.txt"),
        f"{SITE}/x",
        f"{SITE}/robots.txt",
        "-t",
        "FooBot",
    ]
    assert main([*argv, "--standard", "1994", "--json"]) == code
    results = json.loads(capsys.readouterr().out)["results"]
    assert results[0]["allowed"] is (code == 0)
    assert results[1]["allowed"] is True  # /robots.txt itself


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_url_unreachable_exits_2(server: ScriptedServer, status: int) -> None:
    server.add_route("/robots.txt", status, b"User-agent: *\nAllow: /\n")
    result = run_cli(server.url("/robots.txt"), f"{SITE}/", "--token", "FooBot")
    assert result.returncode == 2
    assert result.stdout == ""
    assert_one_error_line(result.stderr)
    assert str(status) in result.stderr


def test_url_redirects_are_followed(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add_route("/robots.txt", 301, headers={"Location": "/r1"})
    server.add_route("/r1", 302, headers={"Location": server.url("/real-robots.txt")})
    server.add_route("/real-robots.txt", 200, ROBOTS)
    assert main([server.url("/robots.txt"), f"{SITE}/private/x", "-t", "FooBot"]) == 1
    assert server.requests == ["/robots.txt", "/r1", "/real-robots.txt"]
    assert capsys.readouterr().err == ""


def test_url_too_many_redirects_is_unavailable(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for n in range(10):
        server.add_route(f"/r{n}", 302, headers={"Location": f"/r{n + 1}"})
    server.add_route("/r10", 200, ROBOTS)
    assert main([server.url("/r0"), f"{SITE}/private/x", "-t", "FooBot"]) == 0
    out, err = capsys.readouterr()
    assert verdicts(out) == [f"ALLOWED {SITE}/private/x"]
    assert err.startswith("note: ")
    assert "/r10" not in server.requests


def test_url_redirect_loop_is_unavailable(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add_route("/robots.txt", 302, headers={"Location": "/robots.txt"})
    assert main([server.url("/robots.txt"), f"{SITE}/private/x", "-t", "FooBot"]) == 0
    assert capsys.readouterr().err.startswith("note: ")


def test_url_body_is_read_to_500_kib_only(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add_route(
        "/robots.txt", 200, b"User-agent: *\nDisallow: /a\n" + b"#" * 2_000_000
    )
    assert main([server.url("/robots.txt"), f"{SITE}/a", "-t", "FooBot", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["truncated"] is True


# -- the crawl's fetch policy and limits, shared (issue 24, point 5) ----------------------


@pytest.mark.parametrize("standard", ["rfc9309", "1994"])
@pytest.mark.parametrize(
    "status", [200, 299, 300, 301, 304, 399, 400, 401, 403, 404, 429, 500, 503, 599]
)
def test_url_answers_as_the_crawl_fetch_policy_decides(
    server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
    status: int,
    standard: str,
) -> None:
    """Whatever the status, the CLI does what ``policy.fetch_verdict`` says a crawl
    does: parse the body, allow or disallow everything, or (unreachable) exit 2."""
    server.add_route("/robots.txt", status, ROBOTS)  # no Location: not a redirect
    argv = [server.url("/robots.txt"), f"{SITE}/private/x", "-t", "FooBot", "--json"]
    code = main([*argv, "--standard", standard])
    out, err = capsys.readouterr()
    verdict = fetch_verdict(FetchOutcome(status=status), standard)
    if verdict.verdict == Verdict.UNREACHABLE:
        assert (code, out) == (2, "")
        assert_one_error_line(err)
        return
    [result] = json.loads(out)["results"]
    expected = {
        Verdict.PARSE: (1, False, "rule"),  # FooBot: Disallow: /private
        Verdict.ALLOW_ALL: (0, True, "no-group"),
        Verdict.DISALLOW_ALL: (1, False, DROP_STATUS),
    }[verdict.verdict]
    assert (code, result["allowed"], result["reason"]) == expected
    assert (err == "") is (verdict.verdict == Verdict.PARSE)


@pytest.mark.parametrize(
    ("hops", "followed"),
    [(MAX_REDIRECTS, True), (MAX_REDIRECTS + 1, False)],
)
def test_url_redirects_are_followed_as_far_as_the_crawl_follows_them(
    server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
    hops: int,
    followed: bool,
) -> None:
    for n in range(hops):
        # 300 and 305 too: the crawl follows any 3xx but 304 that has a Location.
        status = (300, 301, 302, 303, 305, 307, 308)[n % 7]
        server.add_route(f"/hop{n}", status, headers={"Location": f"/hop{n + 1}"})
    server.add_route(f"/hop{hops}", 200, ROBOTS)
    code = main([server.url("/hop0"), f"{SITE}/private/x", "-t", "FooBot"])
    err = capsys.readouterr().err
    assert code == (1 if followed else 0)
    assert (f"/hop{hops}" in server.requests) is followed
    assert len(server.requests) == min(hops, MAX_REDIRECTS) + 1
    if not followed:
        assert f"more than {MAX_REDIRECTS} redirects" in err


def test_url_304_with_a_location_is_not_a_redirect(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add_route("/robots.txt", 304, headers={"Location": "/elsewhere"})
    server.add_route("/elsewhere", 200, ROBOTS)
    assert main([server.url("/robots.txt"), f"{SITE}/private/x", "-t", "FooBot"]) == 0
    assert server.requests == ["/robots.txt"]
    assert "HTTP 304 without a Location to follow" in capsys.readouterr().err


def test_url_oversized_body_is_cut_where_the_crawl_cuts_it(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The parser's 512,000 bytes fall inside a rule: the CLI reads MAX_READ_BYTES
    off the wire, as the middleware does, so it completes that rule and ignores the
    rest, and answers as a crawl would."""
    head = b"User-agent: *\n" + b"# pad\n" * ((MAX_BODY_BYTES - 100) // 6)
    body = head + b"Disallow: /cut-here-" + b"x" * 200 + b"\nDisallow: /after\n"
    body += b"# more\n" * 100_000
    server.add_route("/robots.txt", 200, body)
    crawl = RobotsTxt.parse(body[:MAX_READ_BYTES])
    urls = [f"{SITE}/cut-here-{'x' * 200}", f"{SITE}/cut-here-x", f"{SITE}/after"]
    code = main([server.url("/robots.txt"), *urls, "-t", "FooBot", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert document["truncated"] is True
    answers = [result["allowed"] for result in document["results"]]
    assert answers == [crawl.allowed(url, "FooBot") for url in urls]
    assert answers == [False, True, True]
    assert code == 1


def test_url_timeout_exits_2(
    server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_cli, "FETCH_TIMEOUT", 0.2)
    server.add_route("/robots.txt", 200, ROBOTS, delay=1.0)
    assert main([server.url("/robots.txt"), f"{SITE}/", "-t", "FooBot"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert_one_error_line(err)
    assert "timed out" in err


def test_url_connection_refused_exits_2() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_cli(
        f"http://127.0.0.1:{port}/robots.txt", f"{SITE}/", "--token", "FooBot"
    )
    assert result.returncode == 2
    assert_one_error_line(result.stderr)


def test_url_invalid_exits_2() -> None:
    result = run_cli("http://[::1/robots.txt", f"{SITE}/", "--token", "FooBot")
    assert result.returncode == 2
    assert_one_error_line(result.stderr)


def test_bad_arguments_are_reported_before_fetching(server: ScriptedServer) -> None:
    server.add_route("/robots.txt", 200, ROBOTS)
    result = run_cli(server.url("/robots.txt"), "not-a-url", "--token", "FooBot")
    assert result.returncode == 2
    assert server.requests == []


def test_closed_stdout_gives_no_traceback(tmp_path: Path) -> None:
    """`... --json | head -1`: the reader goes away before the output is written."""
    robots = tmp_path / "robots.txt"
    robots.write_bytes(b"User-agent: *\nDisallow: /p\n")
    urls = [f"http://example.com/p{i}" for i in range(2000)]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scrapy_robots_std",
            str(robots),
            *urls,
            "--token",
            "Bot",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.readline()
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    assert b"Traceback" not in stderr
    assert process.returncode in (0, 1)


def test_version_prints_name_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    """`robots-std --version` needs no other argument and exits 0."""
    assert main(["--version"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"robots-std {scrapy_robots_std.__version__}\n"
    assert captured.err == ""


def test_version_in_a_fresh_interpreter() -> None:
    result = run_cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"robots-std {scrapy_robots_std.__version__}"


# -- the text output: the group that applied and the diagnostics ---------------------------

MESSY = b"""\
User-agent: FooBot
Disallow: /private
Dissallow: /typo
Crawl-dellay: 4
this line is not a rule

User-agent: *
Disallow: /
"""


def test_text_output_names_the_group_and_lists_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(MESSY)
    assert main([str(path), "FooBot", f"{SITE}/private/x", f"{SITE}/ok"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"DISALLOWED {SITE}/private/x",
        f"ALLOWED {SITE}/ok",
        "group: User-agent: FooBot",
        "diagnostics: 3",
        "  line 3: misspelling 'Dissallow' accepted",
        "  line 4: unknown field 'Crawl-dellay' ignored",
        "  line 5: line without a key and a value ignored",
    ]


def test_text_output_for_the_star_group_merged_groups_and_no_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(MESSY)
    assert main([str(path), "OtherBot", f"{SITE}/x"]) == 1
    assert "group: User-agent: * (no group names OtherBot)" in capsys.readouterr().out
    path.write_bytes(
        b"User-agent: FooBot\nUser-agent: BarBot\nDisallow: /a\n\n"
        b"User-agent: foobot/2\nDisallow: /b\n"
    )
    assert main([str(path), "FooBot", f"{SITE}/b"]) == 1
    assert (
        "groups: User-agent: FooBot, BarBot; User-agent: foobot/2 "
        "(2 groups name FooBot: merged)"
    ) in capsys.readouterr().out.splitlines()
    assert main([str(path), "OtherBot", f"{SITE}/b"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "group: none (no group names OtherBot and there is no * group): "
        "everything allowed"
    )


def test_text_output_reports_truncation(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(
        b"User-agent: *\nDisallow: /a\n" + b"#" * 600_000 + b"\nDisallow: /b\n"
    )
    result = run_cli(str(path), "FooBot", f"{SITE}/b")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        f"ALLOWED {SITE}/b",
        "group: User-agent: * (no group names FooBot)",
        "diagnostics: 1",
    ]
    assert lines[3].startswith("  truncated: body longer than 512000 bytes")


def test_text_output_lists_at_most_20_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "page.html"
    path.write_bytes(b"User-agent: *\n" + b"<p>robots</p>\n" * 50)
    assert main([str(path), "FooBot", f"{SITE}/"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "diagnostics: 50"
    assert lines[3] == "  line 2: line without a key and a value ignored"
    assert lines[3 + _cli.MAX_SHOWN_DIAGNOSTICS :] == [
        "  ... and 30 more (--json lists every one)"
    ]


def test_json_lists_the_groups(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(robots_file), "FooBot", f"{SITE}/", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"] == [["FooBot"]]


# -- escaping: nothing from a robots.txt, a header or a URL reaches the terminal raw --------

HOSTILE_TEXT = (
    b"User-agent: Foo\x1b]0;pwned\x07Bot\n"
    b"Disallow: /\xe2\x80\xaeevil\x1b[2J\n"  # U+202E RIGHT-TO-LEFT OVERRIDE, then ESC
    b"X-\xc2\x9bfield: 1\n"  # U+009B, the C1 control sequence introducer
)
UNSAFE_CHARS = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\x7f")


def assert_printable(text: str) -> None:
    for char in UNSAFE_CHARS:
        assert char not in text, repr(text)


def test_text_output_escapes_robots_txt_and_url(tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(HOSTILE_TEXT)
    url = f"{SITE}/\u202eevil\x1b[2J"
    result = run_cli(str(path), "Foo", url, f"{SITE}/\u2066x\x7f", "--explain")
    assert result.returncode == 1, result.stderr
    assert_printable(result.stdout)
    lines = result.stdout.splitlines()
    assert lines[0] == f"DISALLOWED {SITE}/\\u202eevil\\x1b[2J"
    assert lines[1] == (
        '  DISALLOWED by line 2 "Disallow: /\\u202eevil\\x1b[2J" '
        "(User-agent: Foo\\x1b]0;pwned\\x07Bot)"
    )
    assert lines[2] == f"ALLOWED {SITE}/\\u2066x\\x7f"
    assert "group: User-agent: Foo\\x1b]0;pwned\\x07Bot" in lines
    assert "  line 3: unknown field 'X-\\x9bfield' ignored" in lines


def test_json_output_escapes_bidi_and_c1_and_keeps_the_values(tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(HOSTILE_TEXT)
    url = f"{SITE}/\u202eevil\x1b[2J"
    result = run_cli(str(path), "Foo", url, "--json")
    assert result.returncode == 1, result.stderr
    assert_printable(result.stdout)
    assert "\\u202e" in result.stdout
    doc = json.loads(result.stdout)
    assert doc["results"][0]["url"] == url
    assert doc["results"][0]["rule"]["pattern"] == "/\u202eevil\x1b[2J"
    assert doc["groups"] == [["Foo\x1b]0;pwned\x07Bot"]]
    # The parser's message quotes the field with repr(): escaped already.
    assert doc["diagnostics"][0]["message"] == "unknown field 'X-\\x9bfield' ignored"


def test_errors_and_notes_are_escaped(hostile: HostileServer, tmp_path: Path) -> None:
    missing = tmp_path / "no\u202efile\x1b[31m.txt"
    result = run_cli(str(missing), "Foo", f"{SITE}/")
    assert result.returncode == 2
    assert_printable(result.stderr)
    assert_one_error_line(result.stderr)
    hostile.add_route(
        "/robots.txt", Reply(302, {"Location": "ftp://x/\x1b]0;pwned\x07\x9b"})
    )
    result = run_cli(hostile.url("/robots.txt"), "Foo", f"{SITE}/")
    assert result.returncode == 0, result.stderr
    assert_printable(result.stderr)
    assert result.stderr.startswith("note: ")


# -- the live fetch against hostile servers ------------------------------------------------


@dataclass(frozen=True)
class SlowHeaders:
    """A status line, then one header byte every ``interval`` seconds, forever."""

    interval: float = 0.1

    def serve(self, exchange: Exchange) -> None:
        exchange.send(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        while not exchange.wait_closed(self.interval):
            exchange.send(b"x")


def run_timed(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    result = run_cli(*args)
    return result, time.monotonic() - started


def test_fetch_slowloris_headers_hit_the_overall_deadline(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", SlowHeaders(0.1))
    result, elapsed = run_timed(
        hostile.url("/robots.txt"), "Foo", f"{SITE}/", "--timeout", "1"
    )
    assert result.returncode == 2
    assert_one_error_line(result.stderr)
    assert "timed out" in result.stderr
    assert elapsed < 8  # one 1 s deadline (plus an interpreter's start), not per read


def test_fetch_trickled_body_hits_the_overall_deadline(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Trickle(ROBOTS, interval=0.1))
    result, elapsed = run_timed(
        hostile.url("/robots.txt"), "Foo", f"{SITE}/", "--timeout", "1"
    )
    assert result.returncode == 2
    assert "timed out" in result.stderr
    assert elapsed < 8


def test_fetch_black_hole_in_process_returns_at_the_deadline(
    hostile: HostileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile.add_route("/robots.txt", BlackHole(30))
    started = time.monotonic()
    code = main([hostile.url("/robots.txt"), "Foo", f"{SITE}/", "--timeout", "0.5"])
    assert code == 2
    assert time.monotonic() - started < 3
    assert "timed out" in capsys.readouterr().err


@pytest.mark.parametrize(
    "location",
    [
        "ftp://127.0.0.1/robots.txt",
        "file:///etc/passwd",
        "http://[/x",
        "javascript:alert(1)",
        "",
    ],
)
def test_fetch_follows_only_http_redirects(
    hostile: HostileServer, capsys: pytest.CaptureFixture[str], location: str
) -> None:
    """An unfollowable redirect is the middleware's answer: unavailable, so
    everything is allowed (RFC 9309 2.3.1.2), with a note on stderr."""
    hostile.add_route("/robots.txt", Reply(301, {"Location": location}))
    code = main([hostile.url("/robots.txt"), "Foo", f"{SITE}/private"])
    out, err = capsys.readouterr()
    assert code == 0
    assert verdicts(out) == [f"ALLOWED {SITE}/private"]
    assert err.startswith("note: ")
    assert "everything allowed" in err
    assert len(err.splitlines()) == 1
    if location.startswith(("ftp", "file")):
        assert "only http and https are followed" in err
    assert [r.path for r in hostile.requests] == ["/robots.txt"]


def test_fetch_follows_a_redirect_to_another_origin(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    hostile.add_route("/robots.txt", Reply(308, {"Location": hostile_b.url("/r")}))
    hostile_b.add_route("/r", Reply(200, {}, ROBOTS))
    result = run_cli(hostile.url("/robots.txt"), "FooBot", f"{SITE}/private/x")
    assert result.returncode == 1, result.stderr
    assert [r.path for r in hostile_b.requests] == ["/r"]


def _brotli_compress(data: bytes) -> bytes:
    brotli = pytest.importorskip("brotli")
    compressed: bytes = brotli.compress(data)
    return compressed


def _zstd_compress(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found]
    except ImportError:
        zstd = pytest.importorskip("backports.zstd")
    compressed: bytes = zstd.compress(data)
    return compressed


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data, wbits=-15)),  # raw, as IIS sends
        ("br", _brotli_compress),
        ("zstd", _zstd_compress),
        ("gzip, gzip", lambda data: gzip.compress(gzip.compress(data))),
        ("identity", lambda data: data),
    ],
)
def test_fetch_decodes_content_encoding(
    hostile: HostileServer,
    capsys: pytest.CaptureFixture[str],
    encoding: str,
    compress: Callable[[bytes], bytes],
) -> None:
    body = compress(ROBOTS)
    hostile.add_route("/robots.txt", Reply(200, {"Content-Encoding": encoding}, body))
    code = main([hostile.url("/robots.txt"), "FooBot", f"{SITE}/private/x", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["results"][0]["rule"]["line"] == 2
    assert doc["diagnostics"] == []
    accepted = hostile.requests[0].headers.get("accept-encoding", "")
    assert "gzip" in accepted


def test_fetch_gzip_bomb_stops_at_the_decompression_cap(hostile: HostileServer) -> None:
    """512 MiB inflated from 512 KiB: refused at 4 MiB, as the middleware refuses it
    (unreachable), so no verdict: exit 2."""
    hostile.add_route("/robots.txt", GzipBomb(512 * 1024 * 1024))
    result, elapsed = run_timed(hostile.url("/robots.txt"), "Foo", f"{SITE}/")
    assert result.returncode == 2
    assert_one_error_line(result.stderr)
    assert "inflates past 4,194,304 bytes" in result.stderr
    assert elapsed < 20


def test_fetch_compressed_body_under_the_cap_is_cut_at_500_kib(
    hostile: HostileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """2 MiB inflated is within the 4 MiB cap; the parser reads its first 500 KiB."""
    hostile.add_route("/robots.txt", GzipBomb(2 * 1024 * 1024))
    code = main([hostile.url("/robots.txt"), "Foo", f"{SITE}/bomb", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0  # "Disallow: /bomb" lines outside any group
    assert doc["truncated"] is True


def test_fetch_corrupt_or_unknown_encoding_exits_2(hostile: HostileServer) -> None:
    hostile.add_route(
        "/robots.txt", Reply(200, {"Content-Encoding": "gzip"}, b"not gzip at all")
    )
    result = run_cli(hostile.url("/robots.txt"), "Foo", f"{SITE}/")
    assert result.returncode == 2
    assert_one_error_line(result.stderr)
    assert "invalid gzip body" in result.stderr
    hostile.add_route(
        "/robots.txt", Reply(200, {"Content-Encoding": "compress"}, b"\x1f\x9d")
    )
    result = run_cli(hostile.url("/robots.txt"), "Foo", f"{SITE}/")
    assert result.returncode == 2
    assert "unsupported Content-Encoding 'compress'" in result.stderr


def test_fetch_endless_body_is_cut_on_the_wire(
    hostile: HostileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile.add_route(
        "/robots.txt",
        Streaming(size=50 * 1024 * 1024, line=b"# x\n", declare_length=False),
    )
    code = main([hostile.url("/robots.txt"), "Foo", f"{SITE}/", "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["truncated"] is True
    assert hostile.requests[0].bytes_sent < 5 * 1024 * 1024


# -- a terminal that cannot show the text (issue 27, point 7) -----------------------


def _ascii_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    package_root = str(Path(scrapy_robots_std.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONIOENCODING="ascii", PYTHONWARNINGS="error")
    env["PYTHONPATH"] = package_root
    return subprocess.run(
        [sys.executable, "-m", "scrapy_robots_std", *args],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("url", "status", "verdict"),
    [
        ("http://a.test/caf\u00e9/menu", 1, b"DISALLOWED"),
        ("http://a.test/th\u00e9", 0, b"ALLOWED"),
    ],
)
def test_an_ascii_terminal_gets_escapes_and_the_right_exit_code(
    tmp_path: Path, url: str, status: int, verdict: bytes
) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_bytes("User-agent: *\nDisallow: /caf\u00e9\n".encode())
    result = _ascii_cli(str(robots), "Bot", url, "--explain")
    assert result.returncode == status, result.stderr
    assert result.stderr == b""
    assert result.stdout.startswith(verdict + b" http://a.test/")
    assert b"\\xe9" in result.stdout
    assert result.stdout.isascii()


def test_an_ascii_terminal_gets_json_it_can_read_back(tmp_path: Path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_bytes("User-agent: *\nDisallow: /caf\u00e9\n".encode())
    result = _ascii_cli(str(robots), "Bot", "http://a.test/caf\u00e9", "--json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["results"][0]["url"] == "http://a.test/caf\u00e9"
