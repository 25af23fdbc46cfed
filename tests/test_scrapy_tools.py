"""Every Scrapy tool works with the add-on (SPEC 3): ``scrapy shell`` (and
``fetch()`` in it), ``fetch``, ``view``, ``parse``, ``check``, ``crawl`` and
``runspider``, each run as the user runs it, in a subprocess, against the local
scripted server (127.0.0.1), whose robots.txt disallows ``/private`` only.

The reactor is the one this pytest run uses (``--reactor``), chosen explicitly in
every command with ``-s TWISTED_REACTOR``: scripts/test.sh runs the ``crawl`` tests
under both. Every subprocess has a hard timeout (:data:`TIMEOUT`): a hang fails the
test, and the process is killed by its PID. The subprocesses of one test run at
the same time.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from tests.helpers.server import ScriptedServer

pytestmark = pytest.mark.crawl

#: seconds one tool may take before it counts as hung
TIMEOUT = 60.0
ROBOTS = b"User-agent: *\nDisallow: /private\n"
TITLE = "an allowed page"
PAGE = f"<html><head><title>{TITLE}</title></head><body>hello</body></html>".encode()
ASYNCIO = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

#: the two ways to switch the middleware on: the add-on, and by hand (no queue)
SETUPS: dict[str, dict[str, Any]] = {
    "addon": {"ADDONS": {"scrapy_robots_std.Addon": 0}},
    "manual": {
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy_robots_std.RobotsTxtStdMiddleware": 100,
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        }
    },
}

TOOLS_SPIDER = '''\
import scrapy


class ToolsSpider(scrapy.Spider):
    name = "tools"
    start_urls = [{allowed!r}, {private!r}]

    def parse(self, response):
        """A page's title.

        @url {allowed}
        @returns items 1 1
        @scrapes title
        """
        yield {{"title": response.css("title::text").get(), "url": response.url}}
'''

PRIVATE_SPIDER = '''

class PrivateSpider(scrapy.Spider):
    name = "private"

    def parse(self, response):
        """A page robots.txt disallows.

        @url {private}
        @returns items 1 1
        """
        yield {{"url": response.url}}
'''

#: ``scrapy view``'s browser (the BROWSER variable): copies the file it is given
BROWSER = """\
#!{python}
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

source = Path(unquote(urlsplit(sys.argv[1]).path))
Path({out!r}).write_bytes(source.read_bytes())
"""


@dataclass(frozen=True)
class Run:
    """One finished command."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def explain(self) -> str:
        return (
            f"scrapy {' '.join(self.args)} exited {self.returncode}\n"
            f"--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-5000:]}"
        )

    def result(self) -> Any:
        """What ``scrapy shell -c`` printed: a Python literal on its last line."""
        lines = self.stdout.strip().splitlines()
        assert lines, self.explain()
        return ast.literal_eval(lines[-1])


@pytest.fixture
def site(server: ScriptedServer) -> ScriptedServer:
    server.set_routes(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, ROBOTS),
            "/allowed": (200, {}, PAGE),
            "/allowed/again": (200, {}, PAGE),
            "/private": (200, {}, PAGE),
            "/private/again": (200, {}, PAGE),
        }
    )
    return server


@pytest.fixture
def reactor(request: pytest.FixtureRequest) -> str:
    """This run's reactor as a TWISTED_REACTOR value ("": Twisted's default)."""
    return ASYNCIO if request.config.getoption("reactor") == "asyncio" else ""


def options(reactor: str, setup: str = "addon") -> list[str]:
    settings: dict[str, Any] = {
        "ROBOTSTXT_OBEY": True,
        "LOG_LEVEL": "DEBUG",  # the drop line is at DEBUG
        # no listening port, and no job file in the user's profile directory
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "TWISTED_REACTOR": reactor,
        **SETUPS[setup],
    }
    args: list[str] = []
    for name, value in settings.items():
        text = json.dumps(value) if isinstance(value, dict) else str(value)
        args += ["-s", f"{name}={text}"]
    return args


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without proxies or a project chosen by a variable."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
        and key not in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT")
    }
    env.update(extra)
    return env


def run_all(
    commands: list[list[str]], cwd: Path, env: dict[str, str] | None = None
) -> list[Run]:
    """Run ``scrapy COMMAND...`` for every command at once; wait for all, each at
    most :data:`TIMEOUT` seconds. A command that hangs is killed and fails the test."""
    logs = cwd / "logs"
    logs.mkdir(exist_ok=True)
    started = []
    for n, command in enumerate(commands):
        out, err = logs / f"{n}.out", logs / f"{n}.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "scrapy", *command],
                cwd=cwd,
                env=env or clean_env(),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
            )
        started.append((command, process, out, err))
    deadline = time.monotonic() + TIMEOUT
    hung: list[str] = []
    runs = []
    for command, process, out, err in started:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()  # this process, by its PID
            process.wait(timeout=10)
            hung.append(f"scrapy {' '.join(command)}")
        runs.append(
            Run(
                tuple(command),
                process.returncode,
                out.read_text(encoding="utf-8", errors="replace"),
                err.read_text(encoding="utf-8", errors="replace"),
            )
        )
    if hung:
        details = "\n".join(run.explain() for run in runs)
        pytest.fail(f"hung for {TIMEOUT} s: {hung}\n{details}")
    return runs


def check_run(run: Run, reactor: str, returncode: int = 0) -> None:
    """The command exited as expected, under the reactor asked for, with no error
    logged and robots.txt obeyed (our setup line)."""
    assert run.returncode == returncode, run.explain()
    used = ASYNCIO if reactor else "twisted.internet."
    assert f"Using reactor: {used}" in run.stderr, run.explain()
    if not reactor:
        assert "asyncioreactor" not in run.stderr.split("Using reactor: ")[1]
    assert "robots.txt: standard rfc9309" in run.stderr, run.explain()
    assert "] ERROR:" not in run.stderr.replace(
        "[scrapy.commands.parse] ERROR: No response downloaded", ""
    ), run.explain()
    assert "Traceback" not in run.stderr, run.explain()
    assert "unreachable (" not in run.stderr, run.explain()


def dropped(run: Run, url: str) -> bool:
    """The run logged the drop of ``url`` for its robots.txt line."""
    return (
        f"Forbidden by robots.txt: <GET {url}> by " in run.stderr
        and 'line 2 "Disallow: /private"' in run.stderr
    )


# -- scrapy shell, and fetch() in it -----------------------------------------------------


@pytest.mark.parametrize("setup", list(SETUPS))
def test_shell_and_its_fetch_obey_robots_txt(
    site: ScriptedServer, tmp_path: Path, reactor: str, setup: str
) -> None:
    """``scrapy shell URL`` used to hang for ever (the add-on) or drop an allowed
    URL as "unreachable (the spider closed)" (by hand): the shell opens the engine
    without starting a crawl, and that read as "the crawl is stopping"."""
    allowed, private = site.url("/allowed"), site.url("/private")
    again, private_again = site.url("/allowed/again"), site.url("/private/again")
    opts = options(reactor, setup)
    # -c evaluates an expression in the shell's namespace, left to right: fetch()
    # returns None and sets ``response`` (None when the request was dropped)
    then_fetch = (
        f"(response.status, response.text, fetch({private_again!r}), response,"
        f" fetch({again!r}), response.status, response.url)"
    )
    fetch_after_drop = f"(response, fetch({again!r}), response.status, response.text)"
    allowed_first, private_first = run_all(
        [
            ["shell", allowed, *opts, "-c", then_fetch],
            ["shell", private, *opts, "-c", fetch_after_drop],
        ],
        tmp_path,
    )
    check_run(allowed_first, reactor)
    assert allowed_first.result() == (
        200,
        PAGE.decode(),
        None,
        None,  # /private/again was dropped
        None,
        200,
        again,
    )
    assert dropped(allowed_first, private_again), allowed_first.explain()

    check_run(private_first, reactor)
    assert private_first.result() == (None, None, 200, PAGE.decode())
    assert dropped(private_first, private), private_first.explain()

    served = site.requests
    # one robots.txt per shell; nothing disallowed was requested
    assert served.count("/robots.txt") == 2, served
    assert sorted(p for p in served if p != "/robots.txt") == [
        "/allowed",
        "/allowed/again",
        "/allowed/again",
    ]


# -- scrapy fetch, scrapy view -------------------------------------------------------------


def test_fetch_and_view_obey_robots_txt(
    site: ScriptedServer, tmp_path: Path, reactor: str
) -> None:
    allowed, private = site.url("/allowed"), site.url("/private")
    viewed = tmp_path / "viewed.html"
    browser = tmp_path / "browser.py"
    browser.write_text(BROWSER.format(python=sys.executable, out=str(viewed)))
    browser.chmod(0o755)
    views = tmp_path / "views"
    views.mkdir()
    opts = options(reactor)
    # view writes the page to a temporary file (TMPDIR: in tmp_path) and has the
    # browser open it; BROWSER is the copying script above
    env = clean_env(BROWSER=str(browser), TMPDIR=str(views))
    fetch_ok, fetch_private, view_ok, view_private = run_all(
        [
            ["fetch", allowed, *opts],
            ["fetch", private, *opts],
            ["view", allowed, *opts],
            ["view", private, *opts],
        ],
        tmp_path,
        env,
    )
    for run in (fetch_ok, fetch_private, view_ok, view_private):
        check_run(run, reactor)
    assert fetch_ok.stdout.strip() == PAGE.decode()
    assert fetch_private.stdout.strip() == ""
    assert dropped(fetch_private, private), fetch_private.explain()
    # the browser ran once, for the allowed page (with the base tag view adds)
    assert viewed.read_bytes().endswith(PAGE)
    assert dropped(view_private, private), view_private.explain()
    assert len(list(views.iterdir())) == 1
    served = site.requests
    assert served.count("/robots.txt") == 4, served
    assert sorted(p for p in served if p != "/robots.txt") == ["/allowed"] * 2


# -- a project's tools: parse, check, crawl, runspider --------------------------------------


def test_project_tools_obey_robots_txt(
    site: ScriptedServer, tmp_path: Path, reactor: str
) -> None:
    allowed, private = site.url("/allowed"), site.url("/private")
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = toolsproj.settings\n")
    package = tmp_path / "toolsproj"
    (package / "spiders").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(
        'BOT_NAME = "toolsproj"\nSPIDER_MODULES = ["toolsproj.spiders"]\n'
    )
    tools = TOOLS_SPIDER.format(allowed=allowed, private=private)
    (package / "spiders" / "__init__.py").write_text("")
    (package / "spiders" / "tools.py").write_text(
        tools + PRIVATE_SPIDER.format(private=private)
    )
    (tmp_path / "standalone.py").write_text(tools)
    opts = options(reactor)
    parse_ok, parse_private, check, crawl, runspider = run_all(
        [
            ["parse", "--spider", "tools", "-c", "parse", allowed, *opts],
            ["parse", "--spider", "tools", "-c", "parse", private, *opts],
            ["check", *opts],  # every spider's contracts
            ["crawl", "tools", "-O", "crawled.json", *opts],
            ["runspider", "standalone.py", "-O", "ran.json", *opts],
        ],
        tmp_path,
    )
    for run in (parse_ok, parse_private, crawl, runspider):
        check_run(run, reactor)
    assert f"[{{'title': '{TITLE}', 'url': '{allowed}'}}]" in parse_ok.stdout
    assert "No response downloaded for: " + private in parse_private.stderr
    assert dropped(parse_private, private), parse_private.explain()

    # check logs nothing (LOG_ENABLED is off for it): its report says it all.
    # tools's two contracts pass. private's is an error, as with Scrapy's built-in
    # middleware: its @url is dropped and the errback says why.
    assert check.returncode == 1, check.explain()
    # unittest's progress line: a dot a success, an E an error
    assert sorted(check.stderr.splitlines()[0]) == [".", ".", "E"], check.explain()
    assert check.stderr.rstrip().endswith("FAILED (errors=1)"), check.explain()
    assert "ERROR: [private] parse (errback)" in check.stderr, check.explain()
    assert "RobotsTxtDisallowed: Forbidden by robots.txt: <GET " + private in (
        check.stderr
    )

    assert dropped(crawl, private), crawl.explain()
    items = json.loads((tmp_path / "crawled.json").read_text())
    assert items == [{"title": TITLE, "url": allowed}]
    assert dropped(runspider, private), runspider.explain()
    assert json.loads((tmp_path / "ran.json").read_text()) == items
