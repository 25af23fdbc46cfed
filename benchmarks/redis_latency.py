"""A slow Redis under the crawl: RedisCache behind a TCP proxy that delays every command.

    .venv/bin/python -m benchmarks.redis_latency [--latency-ms 50] [--reps 3]
        [--origins 20] [--pages 20] [--page-delay 0.15] [--markdown benchmarks/RESULTS.md]

The script starts its own ``redis-server`` on a free 127.0.0.1 port (tests/helpers/redis_server.py;
stopped by PID at the end), an asyncio TCP proxy on 127.0.0.1 in front of it that holds
every chunk going from a client to the server for ``--latency-ms`` before passing it on
(redis-py writes one command, or one MULTI/EXEC pipeline, per chunk; replies are not
delayed), and a local site: ``--origins`` origins on 127.0.0.1, one port per origin,
served with keep-alive by the tests' asyncio server (tests/helpers/loop_server.py)
on a thread of this process, each with a robots.txt that disallows ``/private/``, a
home page linking to ``--pages`` pages and two private ones, and ``--page-delay`` seconds
of server time per page, so a crawl takes a few seconds.

Five ways crawl the same site, each crawl in a fresh process (no reactor is reused),
the ways interleaved within each repetition, medians over the repetitions:

* (a) RedisCache, REDIS_URL straight at redis-server;
* (b) RedisCache through the proxy with no delay;
* (c) RedisCache through the proxy with ``--latency-ms`` added to every command;
* (d) the add-on's default MemoryCache;
* (e) Scrapy's built-in RobotsTxtMiddleware (no add-on).

Redis is emptied (FLUSHALL) before every crawl, so every crawl fetches every origin's
robots.txt. The verdict is (c)'s median wall over (b)'s: PASS if at most 1.10.
Every crawl is bounded by CLOSESPIDER_TIMEOUT and a subprocess timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.helpers.loop_server import Encoded, LoopServer
from tests.helpers.server import Reply, RequestRecord

BEGIN = "<!-- redis_latency.py: begin -->"
END = "<!-- redis_latency.py: end -->"
USER_AGENT = "RedisLatencyBench/1.0 (+http://127.0.0.1/)"
ROBOTS = b"User-agent: *\nDisallow: /private/\nAllow: /\n"
REDIS_CACHE = "scrapy_robots_std.cache.RedisCache"
TARGET = 1.10
#: Bounds: every crawl closes itself after this, and is killed a little later.
CLOSESPIDER_TIMEOUT = 120
CRAWL_TIMEOUT = CLOSESPIDER_TIMEOUT + 60

#: The settings every way shares.
COMMON_SETTINGS: dict[str, Any] = {
    "CONCURRENT_REQUESTS": 16,
    # All origins are on 127.0.0.1, and Scrapy's download slots are per host name:
    # one slot, so its per-domain limit is the global one.
    "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "DOWNLOAD_TIMEOUT": 10,
    "CLOSESPIDER_TIMEOUT": CLOSESPIDER_TIMEOUT,
    "USER_AGENT": USER_AGENT,
    "ROBOTSTXT_OBEY": True,
}
ADDON = {"scrapy_robots_std.Addon": 0}


@dataclass(frozen=True)
class Variant:
    key: str
    label: str
    #: "direct", "proxy" or None (no Redis)
    redis: str | None
    latency_ms: float = 0.0
    addon: bool = True


def variants(latency_ms: float) -> list[Variant]:
    return [
        Variant("a", "RedisCache, direct", "direct"),
        Variant("b", "RedisCache, proxy 0 ms", "proxy", 0.0),
        Variant("c", f"RedisCache, proxy {latency_ms:g} ms", "proxy", latency_ms),
        Variant("d", "MemoryCache (default)", None),
        Variant("e", "built-in RobotsTxtMiddleware", None, addon=False),
    ]


# -- the delaying proxy ------------------------------------------------------------------


class DelayProxy:
    """A TCP proxy on 127.0.0.1; each client->server chunk waits ``latency`` seconds.

    The chunks of one connection keep their order and are each delayed from the time
    they arrived (a latency, not a rate limit). Runs its own event loop in a thread;
    ``latency`` may be changed between crawls.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.latency = 0.0
        self.port = 0
        self.chunks = 0  # client->server chunks forwarded (about one per command)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="delay-proxy", daemon=True
        )
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> DelayProxy:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        self.port = future.result(10)
        return self

    async def _start(self) -> int:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _handle(
        self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            server_r, server_w = await asyncio.open_connection(
                "127.0.0.1", self.target_port
            )
        except OSError:
            client_w.close()
            self._tasks.discard(task)  # type: ignore[arg-type]
            return
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def upstream_in() -> None:
            # Ends at the client's EOF (or a reset): bounded by the connection.
            while True:
                data = await client_r.read(65536)
                queue.put_nowait((loop.time() + self.latency, data))
                if not data:
                    return

        async def upstream_out() -> None:
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    with contextlib.suppress(OSError):
                        server_w.write_eof()
                    return
                self.chunks += 1
                server_w.write(data)
                await server_w.drain()

        async def downstream() -> None:
            while True:
                data = await server_r.read(65536)
                if not data:
                    return
                client_w.write(data)
                await client_w.drain()

        try:
            parts = [upstream_in(), upstream_out(), downstream()]
            await asyncio.gather(*parts, return_exceptions=True)
        finally:
            for writer in (client_w, server_w):
                writer.close()
            self._tasks.discard(task)  # type: ignore[arg-type]


# -- the site ----------------------------------------------------------------------------


def page_paths(pages: int) -> list[str]:
    return [f"/page/{k}" for k in range(pages)]


PRIVATE_PATHS = ("/private/a", "/private/b")


class Site:
    """``origins`` origins on 127.0.0.1, one port each, on a :class:`LoopServer` thread.

    Pages (the home page included) answer after ``page_delay`` seconds, robots.txt
    and 404s at once; a connection answers one request at a time, kept alive."""

    def __init__(self, origins: int, pages: int, page_delay: float) -> None:
        self.origins = origins
        self.pages = pages
        self.page_delay = page_delay
        self.ports: list[int] = []
        self.robots_served = 0
        self.pages_served = 0
        self._lock = threading.Lock()
        self._server = LoopServer()
        self._running = contextlib.ExitStack()

    @property
    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{port}/" for port in self.ports]

    def home(self) -> bytes:
        links = [*page_paths(self.pages), *PRIVATE_PATHS]
        return (
            "<html><body>"
            + "".join(f'<a href="{p}">{p}</a>' for p in links)
            + "</body></html>"
        ).encode()

    def _page(self, body: bytes) -> Reply:
        with self._lock:
            self.pages_served += 1
        return Reply(200, {"Content-Type": "text/html"}, body, self.page_delay)

    def answer(self, record: RequestRecord) -> Reply | Encoded:
        path = record.target
        if path == "/robots.txt":
            with self._lock:
                self.robots_served += 1
            return _ROBOTS_ANSWER
        if path == "/":
            return self._page(self._home)
        if path in self._known:
            return self._page(f"<html><body>{path}</body></html>".encode())
        return _NOT_FOUND

    def start(self) -> Site:
        self._home = self.home()
        self._known = set(page_paths(self.pages)) | set(PRIVATE_PATHS)
        self._running.enter_context(self._server.threaded())
        self.ports = [
            self._server.call(self._server.listen(self.answer))
            for _ in range(self.origins)
        ]
        return self

    def reset_counts(self) -> None:
        with self._lock:
            self.robots_served = self.pages_served = 0

    def stop(self) -> None:
        self._running.close()


_ROBOTS_ANSWER = Encoded.of(Reply(200, {"Content-Type": "text/plain"}, ROBOTS))
_NOT_FOUND = Encoded.of(Reply(404, {"Content-Type": "text/plain"}, b"not found"))


# -- one crawl (child process) -----------------------------------------------------------


def child(config_path: Path, out_path: Path) -> int:
    """Run one crawl as ``config_path`` says; write its result to ``out_path``."""
    import logging

    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess

    config = json.loads(config_path.read_text(encoding="utf-8"))

    class LatencySpider(Spider):
        name = "redis_latency"

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.pages = 0

        async def start(self) -> Any:
            for url in config["start_urls"]:
                yield Request(url)

        def parse(self, response: Any) -> Any:
            self.pages += 1
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href)

    warnings: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING and len(warnings) < 20:
                warnings.append(f"{record.name}: {record.getMessage()}")

    logging.getLogger().addHandler(Keep())
    process = CrawlerProcess(config["settings"], install_root_handler=True)
    crawler = process.create_crawler(LatencySpider)
    marks: dict[str, float] = {}

    def opened(spider: Any) -> None:
        marks["t0"] = time.perf_counter()
        marks["cpu0"] = time.process_time()

    def closed(spider: Any, reason: str) -> None:
        marks["t1"] = time.perf_counter()
        marks["cpu1"] = time.process_time()

    # When each origin's first page and first robots.txt request reached the
    # downloader, and when its first page came back (perf_counter).
    first_robots: dict[str, float] = {}
    first_page_out: dict[str, float] = {}
    first_page_in: dict[str, float] = {}
    last_page: list[float] = []

    def reached(request: Any, spider: Any) -> None:
        origin = request.url.split("/", 3)[2]
        now = time.perf_counter()
        if request.url.endswith("/robots.txt"):
            first_robots.setdefault(origin, now)
        else:
            first_page_out.setdefault(origin, now)

    def received(response: Any, request: Any, spider: Any) -> None:
        if not request.url.endswith("/robots.txt"):
            now = time.perf_counter()
            first_page_in.setdefault(request.url.split("/", 3)[2], now)
            last_page[:] = [now]

    crawler.signals.connect(opened, signals.spider_opened)
    crawler.signals.connect(closed, signals.spider_closed)
    crawler.signals.connect(reached, signals.request_reached_downloader)
    crawler.signals.connect(received, signals.response_received)
    process.crawl(crawler)
    process.start()
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    spider: LatencySpider = crawler.spider  # type: ignore[assignment]
    t0 = marks["t0"]
    result = {
        "wall": marks["t1"] - marks["t0"],
        "cpu": marks["cpu1"] - marks["cpu0"],
        # the verdict path: from the first robots.txt request to the last origin's
        # first page leaving for the downloader
        "first_robots": min(first_robots.values(), default=t0) - t0,
        "last_first_page": max(first_page_out.values(), default=t0) - t0,
        "last_first_response": max(first_page_in.values(), default=t0) - t0,
        "last_page": (last_page[0] if last_page else t0) - t0,
        "pages": spider.pages,
        "robots_requests": stats.get("robotstxt/request_count", 0),
        "store_slow": stats.get("robots_std/cache/store_slow", 0),
        "store_timeout": stats.get("robots_std/cache/store_timeout", 0),
        "store_error": stats.get("robots_std/cache/store_error", 0),
        "dropped": sum(
            v
            for k, v in stats.items()
            if k.startswith(("robots_std/dropped", "robotstxt/forbidden"))
            and isinstance(v, int)
        ),
        "finish_reason": stats.get("finish_reason"),
        "warnings": warnings,
        "stats": {
            k: v
            for k, v in sorted(stats.items())
            if k.startswith(("robotstxt/", "robots_std/"))
            and isinstance(v, (int, float, str))
        },
    }
    out_path.write_text(json.dumps(result, default=str), encoding="utf-8")
    return 0


# -- the runner --------------------------------------------------------------------------


@dataclass
class Runs:
    variant: Variant
    results: list[dict[str, Any]] = field(default_factory=list)

    def median(self, key: str) -> float:
        return statistics.median(float(r[key]) for r in self.results)


def crawl_settings(variant: Variant, redis_url: str | None) -> dict[str, Any]:
    settings = dict(COMMON_SETTINGS)
    if variant.addon:
        settings["ADDONS"] = ADDON
    if variant.redis is not None:
        assert redis_url is not None
        settings["ROBOTS_STD_CACHE_BACKEND"] = REDIS_CACHE
        settings["REDIS_URL"] = redis_url
    return settings


def run_crawl(
    variant: Variant,
    site: Site,
    redis_url: str | None,
    workdir: Path,
    tag: str,
) -> dict[str, Any]:
    config = {
        "settings": crawl_settings(variant, redis_url),
        "start_urls": site.urls,
    }
    config_path = workdir / f"{tag}.json"
    out_path = workdir / f"{tag}.out.json"
    log_path = workdir / f"{tag}.log"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    with log_path.open("wb") as log:
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--child",
                str(config_path),
                str(out_path),
            ],
            cwd=REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=CRAWL_TIMEOUT,
            check=True,
        )
    result: dict[str, Any] = json.loads(out_path.read_text(encoding="utf-8"))
    return result


def flush(redis_url: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    try:
        client.flushall()
    finally:
        client.close()


def machine_lines() -> list[str]:
    from benchmarks.machine import cpu_model, git_describe

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    git = git_describe(REPO_ROOT, "scrapy_robots_std", "package code modified")
    spec = importlib.util.find_spec("scrapy_robots_std")
    where = "not found" if spec is None or spec.origin is None else spec.origin
    return [
        (
            f"machine: {platform.platform()}; CPU {cpu_model()}; "
            f"cpu_count {os.cpu_count()} (usable {usable})"
        ),
        f"python: {platform.python_implementation()} {platform.python_version()}",
        (
            f"versions: scrapy {version('scrapy')}, twisted {version('twisted')}, "
            f"redis-py {version('redis')}, {redis_server_version()}, "
            f"scrapy-robots-std {version('scrapy-robots-std')} (git {git})"
        ),
        f"scrapy_robots_std from {Path(where).parent}",
    ]


def redis_server_version() -> str:
    try:
        out = subprocess.run(
            ["redis-server", "--version"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "redis-server unknown"
    for word in out.split():
        if word.startswith("v="):
            return f"redis-server {word[2:]}"
    return "redis-server unknown"


def table(runs: list[Runs]) -> list[str]:
    by_key = {r.variant.key: r for r in runs}
    base = by_key["b"].median("wall") if "b" in by_key else None
    builtin = by_key["e"].median("wall") if "e" in by_key else None
    lines = [
        (
            "| variant | wall s (median) | walls | vs (b) no-delay proxy | vs (e) built-in"
            " | last origin's first page, s | CPU s | robots.txt fetches | pages"
            " | store_slow | store_timeout | proxy chunks |"
        ),
        "| :--- | ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for run in runs:
        wall = run.median("wall")
        walls = ", ".join(f"{r['wall']:.2f}" for r in run.results)
        chunks = (
            f"{run.median('proxy_chunks'):.0f}" if run.variant.redis == "proxy" else "-"
        )
        lines.append(
            f"| ({run.variant.key}) {run.variant.label} | {wall:.3f} | {walls} | "
            f"{_ratio(wall, base)} | {_ratio(wall, builtin)} | "
            f"{run.median('last_first_page'):.2f} | {run.median('cpu'):.2f} | "
            f"{run.median('robots_requests'):.0f} | {run.median('pages'):.0f} | "
            f"{run.median('store_slow'):.0f} | {run.median('store_timeout'):.0f} | "
            f"{chunks} |"
        )
    return lines


def _ratio(value: float, ref: float | None) -> str:
    return "-" if not ref else f"{value / ref:.3f}x"


def verdict(runs: list[Runs], latency_ms: float) -> tuple[bool, str]:
    by_key = {r.variant.key: r for r in runs}
    ratio = by_key["c"].median("wall") / by_key["b"].median("wall")
    ok = ratio <= TARGET
    return ok, (
        f"{'PASS' if ok else 'FAIL'}: with {latency_ms:g} ms added to every Redis "
        f"command, the crawl's median wall is {ratio:.3f}x the no-delay proxy's "
        f"(target <= {TARGET:.2f}x)"
    )


def report(
    args: argparse.Namespace,
    runs: list[Runs],
    facts: list[str],
    verdict_line: str,
    notes: list[str],
) -> str:
    command = "python -m benchmarks.redis_latency" + "".join(
        f" {a}" for a in sys.argv[1:]
    )
    lines = [
        BEGIN,
        "## Redis latency under a crawl (`benchmarks/redis_latency.py`)",
        "",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        "Command (run from the repository root):",
        "",
        f"    .venv/bin/{command}",
        "",
        *[f"* {fact}" for fact in facts],
        "",
        *table(runs),
        "",
        f"**{verdict_line}**",
        "",
        *notes,
        END,
    ]
    return "\n".join(lines) + "\n"


def write_markdown(path: Path, section: str) -> None:
    """Replace this script's section of ``path`` (or append it)."""
    from benchmarks.machine import write_section

    write_section(path, section, BEGIN, END)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--origins", type=int, default=20)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--page-delay", type=float, default=0.15)
    parser.add_argument("--variants", default="a,b,c,d,e")
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)

    from tests.helpers.redis_server import RedisServer, redis_server_missing

    missing = redis_server_missing()
    if missing is not None:
        print(f"cannot run: {missing}", file=sys.stderr)
        return 2
    reps = max(1, min(args.reps, 10))
    origins = max(1, min(args.origins, 200))
    pages = max(1, min(args.pages, 500))
    page_delay = max(0.0, min(args.page_delay, 2.0))
    latency = max(0.0, min(args.latency_ms, 1000.0))
    wanted = set(args.variants.split(","))
    chosen = [v for v in variants(latency) if v.key in wanted]
    if not {"b", "c"} <= wanted:
        print("--variants must include b and c (the verdict)", file=sys.stderr)
        return 2
    load_start = os.getloadavg()
    runs = [Runs(v) for v in chosen]
    with contextlib.ExitStack() as stack:
        if args.workdir is not None:
            args.workdir.mkdir(parents=True, exist_ok=True)
            workdir = args.workdir
        else:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        server = stack.enter_context(RedisServer())
        proxy = DelayProxy(server.port).start()
        stack.callback(proxy.stop)
        site = Site(origins, pages, page_delay).start()
        stack.callback(site.stop)
        proxy_url = f"redis://127.0.0.1:{proxy.port}/0"
        print(
            f"redis-server pid {server.pid} at {server.url}; proxy at {proxy_url}; "
            f"{origins} origins x {pages} pages, {page_delay:g} s per page",
            file=sys.stderr,
        )
        for rep in range(reps):
            for run in runs:
                variant = run.variant
                url = {"direct": server.url, "proxy": proxy_url}.get(
                    variant.redis or ""
                )
                flush(server.url)
                proxy.latency = variant.latency_ms / 1000.0
                chunks_before = proxy.chunks
                site.reset_counts()
                result = run_crawl(variant, site, url, workdir, f"{variant.key}{rep}")
                result["proxy_chunks"] = proxy.chunks - chunks_before
                result["robots_served"] = site.robots_served
                run.results.append(result)
                print(
                    f"rep {rep + 1}/{reps} ({variant.key}) {variant.label}: "
                    f"{result['wall']:.2f} s (CPU {result['cpu']:.2f} s), "
                    f"{result['pages']} pages, "
                    f"{result['robots_requests']} robots.txt, "
                    f"slow {result['store_slow']}, timeout {result['store_timeout']}, "
                    f"proxy chunks {result['proxy_chunks']}; first robots.txt "
                    f"{result['first_robots']:.2f} s, last origin's first page "
                    f"{result['last_first_page']:.2f} s, last page "
                    f"{result['last_page']:.2f} s",
                    file=sys.stderr,
                )
    load_end = os.getloadavg()
    ok, verdict_line = verdict(runs, latency)
    facts = [
        (
            f"site: {origins} origins (127.0.0.1, one port each) x (home + {pages} "
            f"pages + 2 pages under the disallowed /private/), {page_delay:g} s of server "
            f"time per page; CONCURRENT_REQUESTS 16; {reps} repetitions, the ways "
            "interleaved, each crawl in a fresh process; wall = spider_opened to "
            "spider_closed"
        ),
        (
            f"Redis: a fresh redis-server, FLUSHALL before each crawl; the proxy holds "
            f"each client->server chunk {latency:g} ms in (c), 0 ms in (b); "
            "'proxy chunks' counts the chunks it forwarded (about one per command)"
        ),
        (
            "last origin's first page: when the last of the origins' first page "
            "requests reached the downloader, from spider_opened (median): the "
            "robots.txt path (store calls and fetch) of the slowest origin"
        ),
        *machine_lines(),
        "load average (1/5/15 min): start "
        + "/".join(f"{x:.2f}" for x in load_start)
        + ", end "
        + "/".join(f"{x:.2f}" for x in load_end),
    ]
    warnings = sorted({w for run in runs for r in run.results for w in r["warnings"]})
    notes = [f"* a crawl logged: `{w}`" for w in warnings[:5]]
    if notes:
        notes.append("")
    text = report(args, runs, facts, verdict_line, notes)
    print(text, end="")
    if args.markdown is not None:
        write_markdown(args.markdown, text)
        print(f"wrote {args.markdown}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
