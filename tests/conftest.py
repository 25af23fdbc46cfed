"""Shared fixtures: a scripted local HTTP server for real crawls and CLI fetches.

Also here: the ``bench`` marker's opt-in (below) and the hypothesis profiles.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hostile import (
    HostileServer,
    LoopbackResolver,
    ipv6_loopback_available,
    loopback_names,
)
from hostile import refused_port as _refused_port
from hypothesis import HealthCheck, settings
from redis_server import RedisServer, redis_server_missing

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import TypeAlias

ROOT = Path(__file__).resolve().parent.parent

# Run from a plain checkout too (package not installed in the environment).
if importlib.util.find_spec("scrapy_robots_std") is None:
    sys.path.insert(0, str(ROOT))


# -- hypothesis profiles -----------------------------------------------------------------
#
# "ci" (the default) is derandomized: every run tries the same examples, so the suite
# takes the same time and a failure reproduces.  Tests keep their own max_examples.
# HYPOTHESIS_PROFILE=explore draws new examples on every run (and keeps hypothesis's
# example database), for hunting locally; add ROBOTS_STD_HYPOTHESIS_EXAMPLES=5000
# for test_properties.py's longer run.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# -- the "bench" marker: opt-in --------------------------------------------------------
#
# Tests marked ``bench`` run the benchmarks (benchmarks/crawl, benchmarks/latency) in
# smoke mode: real crawls in subprocesses, tens of seconds.  They are deselected
# unless the -m expression names the marker; run them with
#
#     .venv/bin/pytest -m bench
#
# (or e.g. ``-m "bench or crawl"``).  scripts/test.sh leaves them out.


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    if "bench" in (config.getoption("markexpr") or ""):
        return  # the -m expression decides (pytest's own deselection applies it)
    selected = [item for item in items if item.get_closest_marker("bench") is None]
    if len(selected) == len(items):
        return
    deselected = [item for item in items if item.get_closest_marker("bench")]
    config.hook.pytest_deselected(items=deselected)
    items[:] = selected


@dataclass(frozen=True)
class Route:
    """What the server answers for one path."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    #: seconds to wait before answering
    delay: float = 0.0


if TYPE_CHECKING:
    #: A route as tests write it: a Route, ``(status, headers, body)`` or
    #: ``(status, headers, body, delay)``.
    RouteSpec: TypeAlias = (
        Route
        | tuple[int, Mapping[str, str], bytes]
        | tuple[int, Mapping[str, str], bytes, float]
    )


def _route(spec: RouteSpec) -> Route:
    if isinstance(spec, Route):
        return spec
    return Route(*spec)


class ScriptedServer:
    """A stdlib ``ThreadingHTTPServer`` on 127.0.0.1 that serves scripted routes.

    Routes are keyed by the request target's path and query (``/a?b=1``), falling
    back to the path alone; anything else gets a 404. Every request is logged in
    :attr:`requests` as that target, in arrival order.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._routes: dict[str, Route] = {}
        self._log: list[str] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="scripted-http-server", daemon=True
        )

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    # -- scripting --------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return f"{self.base_url}{path}"

    def set_routes(self, routes: Mapping[str, RouteSpec]) -> None:
        """Replace every route and clear the request log."""
        with self._lock:
            self._routes = {path: _route(spec) for path, spec in routes.items()}
            self._log = []

    def add_route(
        self,
        path: str,
        status: int = 200,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        with self._lock:
            self._routes[path] = Route(status, dict(headers or {}), body, delay)

    @property
    def requests(self) -> list[str]:
        """Request targets served so far (since the last :meth:`set_routes`)."""
        with self._lock:
            return list(self._log)

    def _lookup(self, target: str) -> Route:
        with self._lock:
            self._log.append(target)
            route = self._routes.get(target) or self._routes.get(
                target.split("?", 1)[0]
            )
        if route is None:
            return Route(404, {"Content-Type": "text/plain"}, b"not found\n")
        return route

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer(send_body=True)

            def do_HEAD(self) -> None:
                self._answer(send_body=False)

            def _answer(self, *, send_body: bool) -> None:
                route = server._lookup(self.path)
                if route.delay:
                    time.sleep(route.delay)
                self.send_response(route.status)
                headers = {"Content-Type": "text/html; charset=utf-8", **route.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                if send_body:
                    # the client may hang up early (a CLI reading 500 KiB only)
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        self.wfile.write(route.body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep test output clean

        return Handler


@pytest.fixture(scope="session")
def http_server() -> Iterator[ScriptedServer]:
    """The session's scripted server (started once, shut down at the end)."""
    server = ScriptedServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def server(http_server: ScriptedServer) -> ScriptedServer:
    """The session server with no routes and an empty request log, for one test."""
    http_server.set_routes({})
    return http_server


# -- hostile servers (see hostile.py) ----------------------------------------------------


def _fresh(hostile_server: HostileServer) -> Iterator[HostileServer]:
    hostile_server.reset()
    yield hostile_server
    # Exceptions in connection threads are bugs in hostile.py, not client
    # behaviour: fail the test that provoked them.
    errors = list(hostile_server.errors)
    assert not errors, f"{hostile_server.name} server errors: {errors!r}"


@pytest.fixture(scope="session")
def _hostile_session() -> Iterator[HostileServer]:
    with HostileServer("127.0.0.1", tls=False, name="hostile") as hostile_server:
        yield hostile_server


@pytest.fixture(scope="session")
def _hostile_b_session() -> Iterator[HostileServer]:
    with HostileServer("127.0.0.1", tls=False, name="hostile-b") as hostile_server:
        yield hostile_server


@pytest.fixture(scope="session")
def _hostile_tls_session() -> Iterator[HostileServer]:
    with HostileServer("127.0.0.1", tls=True, name="hostile-tls") as hostile_server:
        yield hostile_server


@pytest.fixture(scope="session")
def _hostile_v6_session() -> Iterator[HostileServer]:
    if not ipv6_loopback_available():
        pytest.skip("IPv6 loopback (::1) is not available")
    with HostileServer("::1", tls=False, name="hostile-v6") as hostile_server:
        yield hostile_server


@pytest.fixture
def hostile(_hostile_session: HostileServer) -> Iterator[HostileServer]:
    """An http 127.0.0.1 HostileServer with no routes and an empty log."""
    yield from _fresh(_hostile_session)


@pytest.fixture
def hostile_b(_hostile_b_session: HostileServer) -> Iterator[HostileServer]:
    """A second, independent http 127.0.0.1 server: another origin."""
    yield from _fresh(_hostile_b_session)


@pytest.fixture
def hostile_tls(_hostile_tls_session: HostileServer) -> Iterator[HostileServer]:
    """An https 127.0.0.1 server (certificate for localhost, loopback, *.test)."""
    yield from _fresh(_hostile_tls_session)


@pytest.fixture
def hostile_v6(_hostile_v6_session: HostileServer) -> Iterator[HostileServer]:
    """An http server on [::1]; skips the test where IPv6 loopback is missing."""
    yield from _fresh(_hostile_v6_session)


@pytest.fixture
def loopback_dns() -> Iterator[LoopbackResolver]:
    """``*.test`` and ``localhost`` resolve to 127.0.0.1 on the running reactor."""
    with loopback_names() as resolver:
        yield resolver


@pytest.fixture
def refused_port() -> int:
    """A 127.0.0.1 port with nothing listening."""
    return _refused_port()


# -- redis-server (RedisCache tests) -----------------------------------------------------


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server on 127.0.0.1, started on first use and stopped by PID at the end.

    A missing redis-server (or redis-py) fails the tests that need it, never skips
    them: scripts/test.sh (through scripts/bootstrap.sh) installs it or stops first.
    """
    missing = redis_server_missing()
    if missing is not None:
        pytest.fail(
            f"{missing}; scripts/test.sh installs it (as root, with apt-get) or"
            " says how",
            pytrace=False,
        )
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session's redis-server, emptied for this test."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    try:
        client.flushall()
    finally:
        client.close()
    return redis_server.url
