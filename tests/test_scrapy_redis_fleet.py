"""Waiting requests survive in a scrapy-redis fleet (SPEC 3, "Waiting requests are
durable"): RobotsAwareRedisQueue with the real scrapy-redis and a real redis-server.

Two worker processes (``redis_worker.py``) share one queue. The first takes every
request, which waits for a robots.txt that answers slowly; it is stopped (SIGINT) or
killed (SIGKILL) while they wait, and the requests must still be in Redis; the second
worker then finishes the crawl: every URL fetched or dropped with its reason, once.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import time
from typing import IO, TYPE_CHECKING, Any

import pytest
import redis

from tests.helpers.crawl import RULES, serve_pages
from tests.helpers.processes import importable, worker_command
from tests.helpers.server import Reply, Sequence

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.helpers.server import HostileServer

pytest.importorskip("scrapy_redis")

pytestmark = pytest.mark.crawl

ORIGINS = 6
PAGES = ("/public/a", "/public/b", "/private/c")
#: How long the first robots.txt request of each origin takes to answer.
SLOW = 4.0
#: scrapy-redis's keys for HostileSpider ("hostile")
QUEUE = "hostile:requests"
WAITING_ORIGINS = f"{QUEUE}:robots-waiting-origins"
WAITING_PREFIX = f"{QUEUE}:robots-waiting:"


class Worker:
    """One ``redis_worker.py`` process; stopped by its PID."""

    def __init__(
        self,
        redis_url: str,
        tmp_path: Path,
        name: str,
        urls: list[str],
        proxy: str,
        settings: dict[str, Any] | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.out = tmp_path / f"{name}.json"
        self.log_path = tmp_path / f"{name}.log"
        env = {
            key: value
            for key, value in os.environ.items()
            if key.lower() not in ("no_proxy", "http_proxy")
        }
        env["http_proxy"] = proxy
        env["ROBOTS_STD_WORKER_SETTINGS"] = json.dumps(settings or {})
        env.update(extra_env or {})
        env = importable(env)
        self._log: IO[bytes] = self.log_path.open("wb")
        self.process = subprocess.Popen(
            worker_command("redis_worker", redis_url, str(self.out), *urls),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )

    def wait_ready(self, timeout: float = 20.0) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], timeout)
        assert ready, f"the worker did not start in {timeout} s: {self.log()}"
        assert stdout.readline() == b"ready\n", self.log()

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"go\n")
        self.process.stdin.flush()

    def signal(self, signum: int) -> None:
        os.kill(self.process.pid, signum)

    def wait(self, timeout: float) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the worker did not end in {timeout} s: {self.log()}")

    def report(self) -> dict[str, Any]:
        report: dict[str, Any] = json.loads(self.out.read_text())
        return report

    def log(self) -> str:
        """The end of the log, for failure messages."""
        return self.full_log()[-4000:]

    def full_log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        """End the process if it still runs (SIGKILL, by PID) and close its pipes."""
        if self.process.poll() is None:
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
        self._log.close()


@pytest.fixture
def workers(redis_url: str, tmp_path: Path) -> Iterator[list[Worker]]:
    """Started workers go in this list; whatever still runs at the end is killed."""
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.stop()


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url, socket_timeout=5)
    yield connection
    connection.close()


def serve_slow_origins(
    hostile: HostileServer, prefix: str, slow: int = ORIGINS
) -> list[str]:
    """``ORIGINS`` origins whose first robots.txt request answers after ``SLOW`` s
    (later ones at once), but for the origins from the ``slow``-th on, which answer
    every request at once; their page URLs, reached through the proxy."""
    urls = []
    for n in range(ORIGINS):
        host = f"{prefix}{n}.test"
        first_delay = SLOW if n < slow else 0.0
        hostile.add_route(
            "/robots.txt",
            Sequence(Reply(200, {}, RULES, delay=first_delay), Reply(200, {}, RULES)),
            host=host,
        )
        serve_pages(hostile, PAGES, host=host)
        urls += [f"http://{host}{page}" for page in PAGES]
    return urls


def held(client: redis.Redis) -> tuple[int, int]:
    """(requests in the shared queue, requests in waiting sets)."""
    queued = int(client.zcard(QUEUE))
    waiting = sum(
        int(client.zcard(WAITING_PREFIX + origin.decode()))
        for origin in client.smembers(WAITING_ORIGINS)
    )
    return queued, waiting


def wait_until(
    check: Callable[[], bool], timeout: float, what: str, worker: Worker
) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout} s: {worker.log()}")
        if worker.process.poll() is not None:
            pytest.fail(f"{what}: the worker ended first: {worker.log()}")
        time.sleep(0.05)


def start_pair(
    workers: list[Worker],
    redis_url: str,
    tmp_path: Path,
    hostile: HostileServer,
    urls: list[str],
) -> tuple[Worker, Worker]:
    """Worker 1 with the start URLs, worker 2 with none; both loaded, neither
    crawling yet."""
    first = Worker(redis_url, tmp_path, "worker1", urls, hostile.base_url)
    workers.append(first)
    second = Worker(redis_url, tmp_path, "worker2", [], hostile.base_url)
    workers.append(second)
    first.wait_ready()
    second.wait_ready()
    return first, second


def take_everything(
    first: Worker, client: redis.Redis, hostile: HostileServer, total: int
) -> None:
    """Worker 1 crawls until every request waits in Redis for a robots.txt."""
    first.go()
    wait_until(
        lambda: held(client) == (0, total),
        15.0,
        "every request moved to a waiting set",
        first,
    )
    # Every origin's robots.txt is being fetched (slowly); no page was asked for.
    wait_until(
        lambda: len(hostile.requests_for("/robots.txt")) == ORIGINS,
        5.0,
        "every robots.txt requested",
        first,
    )
    assert not [r for r in hostile.requests if r.path != "/robots.txt"]


def outcomes(reports: list[dict[str, Any]]) -> dict[str, list[str]]:
    """URL -> what happened to it, fleet-wide (``fetched`` or the drop message)."""
    seen: dict[str, list[str]] = {}
    for report in reports:
        for url in report["responses"]:
            seen.setdefault(url, []).append("fetched")
        for failure in report["failures"]:
            seen.setdefault(failure["url"], []).append(
                f"{failure['type']}: {failure['message']}"
            )
    return seen


def assert_crawl_finished(
    reports: list[dict[str, Any]],
    urls: list[str],
    client: redis.Redis,
    hostile: HostileServer,
) -> None:
    seen = outcomes(reports)
    assert sorted(seen) == sorted(urls)  # none lost
    for url, happened in seen.items():
        assert len(happened) == 1, (url, happened)  # each once
        if "/private/" in url:
            assert happened[0].startswith("RobotsTxtDisallowed: Forbidden by robots")
            assert "Disallow: /private/" in happened[0]
        else:
            assert happened == ["fetched"]
    # The server agrees: each allowed page once, no disallowed one.
    pages = [r.path for r in hostile.requests if r.path != "/robots.txt"]
    assert sorted(pages) == sorted(
        page for page in PAGES * ORIGINS if "/private/" not in page
    )
    assert held(client) == (0, 0)
    assert not client.smembers(WAITING_ORIGINS)


def test_a_worker_stopped_gracefully_leaves_its_waiting_requests_to_the_fleet(
    hostile: HostileServer,
    redis_url: str,
    client: redis.Redis,
    workers: list[Worker],
    tmp_path: Path,
) -> None:
    urls = serve_slow_origins(hostile, "stop")
    total = len(urls)
    started = time.monotonic()
    first, second = start_pair(workers, redis_url, tmp_path, hostile, urls)
    take_everything(first, client, hostile, total)

    first.signal(signal.SIGINT)
    assert first.wait(20) == 0, first.log()
    # Everything it held is still in Redis, for the others.
    assert sum(held(client)) == total
    report1 = first.report()
    assert report1["responses"] == []
    assert report1["failures"] == []
    assert report1["stats"]["robots_std/wait/held"] == total
    assert report1["stats"]["robots_std/wait/left_at_close"] == total
    robots_by_first = len(hostile.requests_for("/robots.txt"))

    second.go()
    assert second.wait(30) == 0, second.log()
    report2 = second.report()
    assert_crawl_finished([report1, report2], urls, client, hostile)
    print(
        f"graceful stop: {total} requests left in Redis by worker 1 "
        f"({robots_by_first} robots.txt requests); worker 2 fetched "
        f"{len(report2['responses'])}, dropped {len(report2['failures'])}; "
        f"robots.txt requests in all {len(hostile.requests_for('/robots.txt'))}; "
        f"{time.monotonic() - started:.1f} s"
    )


def test_a_killed_worker_loses_none_of_its_waiting_requests(
    hostile: HostileServer,
    redis_url: str,
    client: redis.Redis,
    workers: list[Worker],
    tmp_path: Path,
) -> None:
    urls = serve_slow_origins(hostile, "kill")
    total = len(urls)
    started = time.monotonic()
    first, second = start_pair(workers, redis_url, tmp_path, hostile, urls)
    take_everything(first, client, hostile, total)

    # No page download in flight: only robots.txt fetches, which die with it.
    first.signal(signal.SIGKILL)
    assert first.wait(10) == -signal.SIGKILL
    assert held(client) == (0, total)

    # Worker 2 finds the waiting origins, takes their claims over once the dead
    # worker's lapse, fetches their robots.txt and crawls every request.
    second.go()
    assert second.wait(40) == 0, second.log()
    report2 = second.report()
    assert_crawl_finished([report2], urls, client, hostile)
    robots = hostile.requests_for("/robots.txt")
    assert len(robots) == 2 * ORIGINS  # the dead worker's, then worker 2's
    print(
        f"SIGKILL: {total} requests left in Redis by the killed worker; worker 2 "
        f"fetched {len(report2['responses'])}, dropped {len(report2['failures'])}; "
        f"robots.txt requests {len(robots)}; {time.monotonic() - started:.1f} s"
    )


def test_a_worker_exits_when_redis_goes_away_before_it_closes(
    hostile: HostileServer, workers: list[Worker], tmp_path: Path
) -> None:
    """Issue 27, point 1: Redis stopped in a fleet crawl that CLOSESPIDER_TIMEOUT
    ends, once every request waits in it for a slow robots.txt. Counting the held
    requests at close fails; the other closing steps run, the store's thread is
    closed (or a daemon), and the worker exits: it used to stay alive after "Spider
    closed" until SIGKILL. The verdicts that arrive with Redis gone take nothing from
    it, and no traceback at all: pops used to raise Redis's error into Scrapy."""
    from tests.helpers.redis_server import RedisServer

    urls = serve_slow_origins(hostile, "gone")
    with RedisServer() as own_redis:
        worker = Worker(
            own_redis.url,
            tmp_path,
            "alone",
            urls,
            hostile.base_url,
            settings={"CLOSESPIDER_TIMEOUT": 6, "ROBOTS_STD_REDIS_TIMEOUT": 0.5},
        )
        workers.append(worker)
        worker.wait_ready()
        own_client = redis.Redis.from_url(own_redis.url, socket_timeout=5)
        worker.go()
        # A condition, not a fixed delay: a loaded machine takes longer to get there.
        wait_until(
            lambda: held(own_client) == (0, len(urls)),
            5.0,
            "every request moved to a waiting set",
            worker,
        )
        own_client.close()
        own_redis.stop()
        status = worker.wait(40)
    log = worker.full_log()
    assert "Spider closed (closespider_timeout)" in log, log
    assert "could not be counted at close" in log, log
    assert "Traceback" not in log, log
    assert status == 0, log
    stats = worker.report()["stats"]
    assert stats["robots_std/wait/held"] == len(urls)
    assert stats["robots_std/wait/store_unreachable"] == 1
    assert "robots_std/wait/kept_in_memory" not in stats


def test_requests_queued_while_redis_is_gone_are_sent_not_lost(
    hostile: HostileServer, workers: list[Worker], tmp_path: Path
) -> None:
    """SPEC 3, "Nothing is lost silently": the spider kills Redis once its first two
    origins' start requests wait there; the later ones are queued with Redis gone.
    None may raise into Scrapy (which then stopped reading start requests and lost
    them): each is kept in the worker's memory, counted, and sent on to wait for its
    robots.txt in the downloader; then fetched, or dropped with its reason."""
    from tests.helpers.redis_server import RedisServer

    # The first two origins' requests must still wait in Redis when it is killed:
    # their robots.txt is slow. The later ones' answers at once.
    urls = serve_slow_origins(hostile, "outage", slow=2)
    in_redis = 2 * len(PAGES)
    with RedisServer() as own_redis:
        worker = Worker(
            own_redis.url,
            tmp_path,
            "outage",
            urls,
            hostile.base_url,
            settings={"CLOSESPIDER_TIMEOUT": 10, "ROBOTS_STD_REDIS_TIMEOUT": 0.5},
            extra_env={"ROBOTS_STD_WORKER_STOP_REDIS": f"{own_redis.pid}:{in_redis}"},
        )
        workers.append(worker)
        worker.wait_ready()
        worker.go()
        status = worker.wait(40)
    log = worker.full_log()
    assert "test: redis-server killed" in log, log
    assert "Traceback" not in log, log
    assert "Spider closed" in log, log
    assert status == 0, worker.log()
    report = worker.report()
    stats = report["stats"]
    # The first two origins' requests wait in the Redis that is gone: not sent.
    assert stats["robots_std/wait/held"] == in_redis
    assert "could not be counted at close" in log
    # Every later one was kept in memory, then fetched or dropped with its reason.
    later = urls[in_redis:]
    assert stats["robots_std/wait/kept_in_memory"] == len(later)
    seen = outcomes([report])
    assert sorted(seen) == sorted(later)
    for url, happened in seen.items():
        if "/private/" in url:
            assert len(happened) == 1, (url, happened)
            assert happened[0].startswith("RobotsTxtDisallowed: Forbidden by robots")
        else:
            assert happened == ["fetched"], (url, happened)
