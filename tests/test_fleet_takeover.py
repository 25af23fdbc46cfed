"""A fleet's claims survive their holder: kill the first claimer, one survivor takes over.

Three crawler processes (tests/helpers/fleet_crawler.py) share 50 origins' robots.txt
through a real redis-server. The first process to win a claim is killed (SIGKILL,
by PID) while its robots.txt downloads are in flight. Its claims stay in Redis until
their lease lapses; then exactly one of the two survivors claims and fetches each
of those origins. The server's request log (each process sends its PID in the
User-Agent) and the Redis claim keys read at the kill are the ground truth.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import IO, TYPE_CHECKING

import redis

from tests.helpers.crawl import RULES, serve_pages
from tests.helpers.processes import importable, worker_command
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.helpers.server import HostileServer, RequestRecord

ORIGINS = 50
PREFIX = "fleet"
#: The claims' lease in the crawler processes (the default is 10 s): short, so the
#: test is quick, and shorter than a robots.txt fetch that waits for a download
#: slot, so renewing a held claim is exercised too.
LEASE = 3.0
#: Each robots.txt answers this late, so the fetches overlap and the victim's are
#: still in flight when it is killed.
ROBOTS_DELAY = 4.0
#: The survivors poll a held claim at most this far apart (fetcher._POLL_MAX).
POLL_MAX = 0.5
_PID_IN_AGENT = re.compile(r"pid (\d+)\)")


class Crawler:
    """One fleet_crawler.py process; its standard output read on a thread."""

    def __init__(self, redis_url: str, out: Path, log: Path, env: dict[str, str]):
        self.out = out
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            worker_command("fleet_crawler", redis_url, PREFIX, str(ORIGINS), str(out)),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        self.pid = self.process.pid
        self.lines: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        assert self.process.stdout is not None
        self._reader = threading.Thread(
            target=self._read, args=(self.process.stdout,), daemon=True
        )
        self._reader.start()

    def _read(self, stream: IO[bytes]) -> None:
        for raw in stream:
            with self._lock:
                self.lines.append((time.monotonic(), raw.decode().strip()))

    def seen(self) -> list[tuple[float, str]]:
        with self._lock:
            return list(self.lines)

    def ready(self) -> bool:
        return any(line == "ready" for _, line in self.seen())

    def claims(self) -> list[tuple[float, str, str]]:
        """(when the test read it, origin, token) for each claim this process won."""
        won = []
        for at, line in self.seen():
            if line.startswith("claim "):
                _, origin, token = line.split()
                won.append((at, origin, token))
        return won

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"go\n")
        self.process.stdin.flush()

    def output_done(self, timeout: float) -> None:
        self._reader.join(timeout)
        assert not self._reader.is_alive(), f"{self.pid}: stdout still open"

    def stderr(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        """Kill the process (by its PID) if it still runs; close pipes and log."""
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
            self.process.wait(10)
        self._reader.join(5)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self._log.close()


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout} s: {what}"
        time.sleep(0.02)


def fetcher_pid(record: RequestRecord) -> int:
    match = _PID_IN_AGENT.search(record.headers.get("User-Agent") or "")
    assert match is not None, record.headers
    return int(match.group(1))


def test_a_dead_claimers_origins_are_fetched_once_more_by_one_survivor(
    hostile: HostileServer, redis_url: str, tmp_path: Path
) -> None:
    for n in range(ORIGINS):
        host = f"o{n}.test"
        hostile.add_route(
            "/robots.txt", Reply(200, {}, RULES, delay=ROBOTS_DELAY), host=host
        )
        serve_pages(hostile, ("/public/page", "/private/page"), host=host)
    env = importable({k: v for k, v in os.environ.items() if k.lower() != "no_proxy"})
    env.update(
        http_proxy=hostile.base_url,
        FLEET_TRACE_CLAIMS="1",
        FLEET_CLAIM_LEASE=str(LEASE),
    )
    crawlers = [
        Crawler(redis_url, tmp_path / f"crawler{n}.json", tmp_path / f"{n}.log", env)
        for n in range(3)
    ]
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        # Start the three crawls together, once each has Scrapy loaded.
        for crawler in crawlers:
            wait_for(
                lambda c=crawler: c.ready() or c.process.poll() is not None,  # type: ignore[misc]
                60,
                f"{crawler.pid} ready",
            )
            assert crawler.process.poll() is None, crawler.stderr()
        for crawler in crawlers:
            crawler.go()

        # The first claimer: kill it as soon as its first robots.txt request reaches
        # the server (which answers ROBOTS_DELAY s later, so none has completed).
        wait_for(lambda: any(c.claims() for c in crawlers), 30, "a first claim")
        victim = min(
            (c for c in crawlers if c.claims()), key=lambda c: c.claims()[0][0]
        )
        wait_for(
            lambda: any(
                fetcher_pid(r) == victim.pid
                for r in hostile.requests_for("/robots.txt")
            ),
            10,
            "the first claimer's first robots.txt request",
        )
        os.kill(victim.pid, signal.SIGKILL)
        killed = time.monotonic()
        victim.process.wait(10)
        # The claims it held at the kill: the claim keys that hold its tokens.
        victim.output_done(5)
        keys = list(client.scan_iter(match=f"{PREFIX}:claim:*", count=1000))
        values = client.mget(keys) if keys else []
        tokens = {token: origin for _, origin, token in victim.claims()}
        held = {tokens[value] for value in values if value in tokens}
        victim_fetching = {
            r.host
            for r in hostile.requests_for("/robots.txt")
            if fetcher_pid(r) == victim.pid
        }

        survivors = [c for c in crawlers if c is not victim]
        finished: dict[int, float] = {}
        for crawler in survivors:
            crawler.process.wait(LEASE + 2 * ROBOTS_DELAY + 30)
            finished[crawler.pid] = time.monotonic() - killed
            assert crawler.process.returncode == 0, crawler.stderr()
    finally:
        for crawler in crawlers:
            crawler.stop()
        client.close()

    robots = hostile.requests_for("/robots.txt")
    by_process = Counter(fetcher_pid(r) for r in robots)
    survivor_pids = {c.pid for c in survivors}
    survivor_fetches = Counter(r.host for r in robots if fetcher_pid(r) != victim.pid)
    victim_fetches = Counter(r.host for r in robots if fetcher_pid(r) == victim.pid)
    held_hosts = {origin.removeprefix("http://").removesuffix(":80") for origin in held}
    # When a survivor first claimed each origin the victim held (the other one may
    # claim it later, find the verdict stored, and release it).
    taken: dict[str, float] = {}
    for crawler in survivors:
        for at, origin, _ in crawler.claims():
            if origin in held:
                taken[origin] = min(taken.get(origin, at), at)
    takeovers = [at - killed for at in taken.values()]
    print(
        f"takeover: {len(robots)} robots.txt fetches (bound {ORIGINS} + {len(held)} "
        f"claims held by the killed process, which had {len(victim_fetching)} "
        f"in flight); per process {dict(by_process)}; first/last takeover "
        f"{min(takeovers, default=0):.1f}/{max(takeovers, default=0):.1f} s, "
        f"survivors done {sorted(round(t, 1) for t in finished.values())} s "
        f"after the kill (lease {LEASE} s, robots.txt delay {ROBOTS_DELAY} s)"
    )

    # The killed process was fetching under the claims it held.
    assert victim_fetching
    assert {f"http://{host}:80" for host in victim_fetching} <= held
    # The fleet fetched at most 50 + (the claims the dead process held) times...
    assert len(robots) <= ORIGINS + len(held)
    # ...every origin once by the survivors (the victim completed none of its
    # fetches: each answers ROBOTS_DELAY s after it arrives and it died before)...
    assert set(by_process) <= survivor_pids | {victim.pid}
    assert survivor_fetches == Counter({f"o{n}.test": 1 for n in range(ORIGINS)})
    # ...so each origin the victim was fetching was fetched again by exactly one
    # survivor, and nothing else twice.
    assert all(count == 1 for count in victim_fetches.values())
    assert set(victim_fetches) <= held_hosts
    # The survivors took each held claim over once it lapsed (a lease after the
    # kill at most, plus a poll), not before (it was renewed up to the kill).
    assert set(taken) == held
    assert min(takeovers) > LEASE / 3
    assert max(takeovers) < LEASE + POLL_MAX + 1.5
    # Every survivor crawled every origin by the rules, in bounded time.
    for crawler in survivors:
        report = json.loads(crawler.out.read_text())
        assert sorted(report["responses"]) == sorted(
            f"http://o{n}.test/public/page" for n in range(ORIGINS)
        )
        assert report["stats"]["robots_std/dropped/rule"] == ORIGINS
        assert report["failures"] == ["RobotsTxtDisallowed"] * ORIGINS
    assert not [r for r in hostile.requests if r.path == "/private/page"]
    assert max(finished.values()) < LEASE + POLL_MAX + 2 * ROBOTS_DELAY + 5
