"""Durability under JOBDIR: a graceful stop while requests wait for robots.txt, then
a resume, loses none of them (SPEC section 3, "Waiting requests are durable").

The crawl runs in a subprocess (``jobdir_crawler.py``, ``CrawlerProcess`` with the
add-on and ``JOBDIR``) against a HostileServer started here, under the reactor this
pytest run uses. Two origins answer robots.txt only after :data:`SLOW` seconds, one
at once; that one's pages link onward to pages of the slow ones, so requests are
scheduled while their origin waits. Once the server has seen the slow robots.txt
requests arrive and the fast origin's pages, the test sends one SIGINT (a graceful
stop) to the subprocess by its PID and waits for it to exit; then the same job runs
again, with the same JOBDIR and robots.txt answering at once everywhere.

Across the two runs every URL the spider requested must have reached the spider or
been dropped with its reason counted in the stats; a request dropped at the first
run's shutdown counts only if the second run fetched or dropped it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.processes import importable, worker_command
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.helpers.server import HostileServer

pytestmark = pytest.mark.crawl

RULES = b"User-agent: *\nDisallow: /private/\n"
PAGE = Reply(200, {"Content-Type": "text/html"}, b"<p>ok</p>")
FAST = "fast.test"
SLOW_HOSTS = ("slow1.test", "slow2.test")
#: seconds the slow origins' robots.txt takes in the first run
SLOW = 6.0
#: bound on every wait for the subprocess or the server
WAIT = 60.0
DROPPED_PREFIX = "robots_std/dropped/"


def pages(prefix: str, count: int) -> list[str]:
    """``count`` paths, every other one under /private/ (disallowed by RULES)."""
    return [f"/{'private' if i % 2 else 'public'}/{prefix}{i}" for i in range(count)]


def disallowed(url: str) -> bool:
    return "/private/" in url


def clean_env() -> dict[str, str]:
    """This environment without proxies, with tests.helpers importable."""
    return importable(
        {
            key: value
            for key, value in os.environ.items()
            if key.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
        }
    )


def start_run(config: Path, out: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as sink:
        return subprocess.Popen(
            worker_command("jobdir_crawler", str(config), str(out)),
            env=clean_env(),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The runs a test starts; one still running at the end (an assertion failed
    before its stop) is killed by its PID, so no crawl outlives its test."""
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def tail(log: Path, size: int = 3000) -> str:
    return log.read_text(encoding="utf-8", errors="replace")[-size:]


def finish(process: subprocess.Popen[bytes], log: Path, what: str) -> None:
    """Wait (bounded) for the subprocess to exit by itself; kill it by PID if not."""
    try:
        process.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        process.kill()  # this process, by its PID
        process.wait(timeout=10)
        pytest.fail(f"{what} did not exit within {WAIT} s:\n{tail(log)}")
    assert process.returncode == 0, f"{what} exited {process.returncode}:\n{tail(log)}"


def wait_for(condition: Any, what: str, process: subprocess.Popen[bytes]) -> None:
    """Poll ``condition`` every 0.05 s, at most :data:`WAIT` seconds."""
    deadline = time.monotonic() + WAIT
    for _ in range(int(WAIT / 0.05) + 1):
        if condition():
            return
        if process.poll() is not None:
            pytest.fail(f"the crawl exited before {what}")
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    process.kill()  # this process, by its PID
    process.wait(timeout=10)
    pytest.fail(f"timed out waiting for {what}")


def drops_by_reason(report: dict[str, Any]) -> Counter[str]:
    return Counter(
        reason
        for _, kind, reason in report["failures"]
        if kind == "RobotsTxtDisallowed"
    )


def drop_stats(report: dict[str, Any]) -> dict[str, int]:
    return {
        key[len(DROPPED_PREFIX) :]: value
        for key, value in report["stats"].items()
        if key.startswith(DROPPED_PREFIX)
    }


#: How the slow origins' robots.txt answers in the first run: slowly (the answer
#: comes during the graceful stop), or 503 with a long Retry-After (the fetch cycle
#: is in its backoff when the stop comes).
FIRST_RUN_ROBOTS = {
    "slow": Reply(200, {}, RULES, delay=SLOW),
    "retrying": Reply(503, {"Retry-After": "20"}, b""),
}


@pytest.mark.parametrize("behaviour", list(FIRST_RUN_ROBOTS))
def test_sigint_with_jobdir_then_resume_loses_no_waiting_request(
    hostile: HostileServer,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    behaviour: str,
    started: list[subprocess.Popen[bytes]],
) -> None:
    reactor = (
        "asyncio" if request.config.getoption("reactor") == "asyncio" else "default"
    )
    hostile.add_route("/robots.txt", Reply(200, {}, RULES), host=FAST)
    for host in SLOW_HOSTS:
        hostile.add_route("/robots.txt", FIRST_RUN_ROBOTS[behaviour], host=host)
    fast_paths = pages("f", 8)
    for path in fast_paths:
        hostile.add_route(path, PAGE, host=FAST)
    starts: list[str] = []
    slow_starts: dict[str, list[str]] = {}
    for host in SLOW_HOSTS:
        paths = pages(f"{host[:5]}-s", 6)
        for path in paths:
            hostile.add_route(path, PAGE, host=host)
        slow_starts[host] = [hostile.url(path, host) for path in paths]
    fast_urls = [hostile.url(path, FAST) for path in fast_paths]
    # fast first, so its pages (and the links they yield) come while the slow
    # origins wait; then the slow origins' own start URLs
    starts = fast_urls + [url for host in SLOW_HOSTS for url in slow_starts[host]]
    links: dict[str, list[str]] = {}
    for url in fast_urls:
        if disallowed(url):
            continue
        name = url.rsplit("/", 1)[1]
        onward = []
        for host in SLOW_HOSTS:
            for path in (f"/public/from-{name}", f"/private/from-{name}"):
                hostile.add_route(path, PAGE, host=host)
                onward.append(hostile.url(path, host))
        links[url] = onward
    everything = set(starts) | {url for urls in links.values() for url in urls}
    allowed = {url for url in everything if not disallowed(url)}
    assert len(everything) == 8 + 12 + 4 * 4

    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "starts": starts,
                "links": links,
                "reactor": reactor,
                "settings": {
                    "JOBDIR": str(tmp_path / "job"),
                    "ROBOTS_STD_FETCH_TIMEOUT": 30,
                    "ROBOTS_STD_FETCH_RETRIES": 3,
                    "ROBOTS_STD_RETRY_BACKOFF": 20,
                    "ROBOTS_STD_RETRY_AFTER_MAX": 30,
                    "ROBOTS_STD_MAX_WAIT": 60,
                    "DOWNLOAD_TIMEOUT": 30,
                },
            }
        ),
        encoding="utf-8",
    )
    outs = [tmp_path / "run1.json", tmp_path / "run2.json"]
    logs = [tmp_path / "run1.log", tmp_path / "run2.log"]

    # -- run 1: interrupted while the slow origins' requests wait ---------------------
    first = start_run(config, outs[0], logs[0])
    started.append(first)

    def slow_robots_asked() -> bool:
        return all(hostile.requests_for("/robots.txt", host=h) for h in SLOW_HOSTS)

    fast_public = {p for p in fast_paths if not p.startswith("/private/")}

    def fast_pages_served() -> bool:
        return fast_public <= {
            r.path for r in hostile.requests if r.host == FAST and r.done.is_set()
        }

    wait_for(slow_robots_asked, "the slow robots.txt requests", first)
    wait_for(fast_pages_served, "the fast origin's pages", first)
    time.sleep(0.5)  # for their callbacks to yield the onward links
    slow_robots = [
        r for h in SLOW_HOSTS for r in hostile.requests_for("/robots.txt", host=h)
    ]
    if behaviour == "slow":  # still waiting: the answers are not due yet
        assert time.monotonic() < min(r.arrived for r in slow_robots) + SLOW - 1
    else:  # still in the backoff: no second attempt yet
        assert len(slow_robots) == len(SLOW_HOSTS)
    os.kill(first.pid, signal.SIGINT)
    finish(first, logs[0], "the interrupted run")
    report1 = json.loads(outs[0].read_text(encoding="utf-8"))
    assert report1["stats"].get("finish_reason") == "shutdown", tail(logs[0])

    # -- run 2: the same job, robots.txt answering at once ----------------------------
    for host in SLOW_HOSTS:
        hostile.add_route("/robots.txt", Reply(200, {}, RULES), host=host)
    second = start_run(config, outs[1], logs[1])
    started.append(second)
    finish(second, logs[1], "the resumed run")
    report2 = json.loads(outs[1].read_text(encoding="utf-8"))
    assert report2["stats"].get("finish_reason") == "finished", tail(logs[1])

    # -- the accounting, across the two runs ------------------------------------------
    reports = [report1, report2]
    requested = {url for report in reports for url in report["requested"]}
    assert requested == everything, (
        f"never requested: {sorted(everything - requested)[:5]}"
    )
    responded = {url for report in reports for url in report["responded"]}
    dropped: dict[str, str] = {}
    other: dict[str, str] = {}
    for report in reports:
        for url, kind, reason in report["failures"]:
            if kind == "RobotsTxtDisallowed":
                dropped[url] = reason
            else:
                other[url] = kind
    assert other == {}
    lost = everything - responded - dropped.keys()
    shutdown = {n: drop_stats(r).get("shutdown", 0) for n, r in enumerate(reports, 1)}
    assert not lost, (
        f"{len(lost)} of {len(everything)} request(s) lost across the stop and the "
        f"resume (dropped at shutdown per run: {shutdown}): {sorted(lost)[:6]}"
    )
    assert responded == allowed, f"not crawled: {sorted(allowed - responded)[:5]}"
    assert dropped == {url: "rule" for url in everything if disallowed(url)}
    for number, report in enumerate(reports, 1):
        stats = drop_stats(report)
        stats.pop("shutdown", None)  # counted above: those were retried
        assert stats == dict(drops_by_reason(report)), f"run {number}"
    assert "shutdown" not in drop_stats(report2)
    served = {(r.host, r.path) for r in hostile.requests}
    assert not {path for _, path in served if path.startswith("/private/")}
    left = report1["stats"].get("robots_std/wait/left_at_close", 0)
    print(
        f"JOBDIR [{behaviour}]: {len(everything)} requests; run 1 (SIGINT) "
        f"responded {len(report1['responded'])}, left {left} waiting in the saved "
        f"queue, dropped at shutdown {shutdown[1]}; run 2 responded "
        f"{len(report2['responded'])}; dropped by rule in all {len(dropped)}; "
        f"lost {len(lost)}"
    )
