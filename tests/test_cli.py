"""The command line: ``python -m scrapy_robots_std`` / ``robots-std`` / ``_cli.main()``."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import scrapy_robots_std
from scrapy_robots_std import cli as _cli
from scrapy_robots_std.cli import main

if TYPE_CHECKING:
    from tests.conftest import ScriptedServer

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
    assert out.splitlines() == [f"ALLOWED {SITE}/", f"ALLOWED {SITE}/private/press/kit"]
    assert err == ""


def test_any_disallowed_exits_1(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [str(robots_file), f"{SITE}/", f"{SITE}/private/x", "--token", "FooBot"]
    )
    out, _ = capsys.readouterr()
    assert code == 1
    assert out.splitlines() == [f"ALLOWED {SITE}/", f"DISALLOWED {SITE}/private/x"]


def test_token_may_be_positional(
    robots_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Google's robots_main order: ROBOTS TOKEN URL..."""
    assert main([str(robots_file), "FooBot", f"{SITE}/private/x"]) == 1
    assert capsys.readouterr().out == f"DISALLOWED {SITE}/private/x\n"


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


def test_standard_1994(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(
        b"User-agent: bot\nDisallow: /bots\n\nUser-agent: *\nDisallow: /all\n"
    )
    urls = [f"{SITE}/bots", f"{SITE}/all"]
    assert main([str(path), *urls, "--token", "ExampleBot"]) == 1
    assert capsys.readouterr().out.split() == [
        "ALLOWED",
        urls[0],
        "DISALLOWED",
        urls[1],
    ]
    assert main([str(path), *urls, "--token", "ExampleBot", "--standard", "1994"]) == 1
    assert capsys.readouterr().out.split() == [
        "DISALLOWED",
        urls[0],
        "ALLOWED",
        urls[1],
    ]


def test_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class FakeStdin:
        buffer = io.BytesIO(ROBOTS)

    monkeypatch.setattr(sys, "stdin", FakeStdin)
    assert main(["-", f"{SITE}/private/x", "--token", "FooBot"]) == 1
    assert capsys.readouterr().out == f"DISALLOWED {SITE}/private/x\n"


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
        f"ALLOWED {SITE}/private/press\n",
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
    assert (result.returncode, result.stdout) == (1, f"DISALLOWED {SITE}/private/x\n")


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
        f"DISALLOWED {SITE}/private/x\n",
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
    assert out == f"ALLOWED {SITE}/private/x\n"
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
    assert out == f"ALLOWED {SITE}/private/x\n"
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
