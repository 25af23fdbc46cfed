"""Shared fixtures: the local servers (tests/helpers) for real crawls and CLI fetches.

Also here: the ``bench`` marker's opt-in (below) and the hypothesis profiles.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.names import LoopbackResolver, loopback_names
from tests.helpers.redis_server import RedisServer, redis_server_missing
from tests.helpers.server import (
    HostileServer,
    ScriptedServer,
    ipv6_loopback_available,
)
from tests.helpers.server import refused_port as _refused_port

if TYPE_CHECKING:
    from collections.abc import Iterator


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


# -- hostile servers (tests/helpers/server.py) -------------------------------------------


def _fresh(hostile_server: HostileServer) -> Iterator[HostileServer]:
    hostile_server.reset()
    yield hostile_server
    # Exceptions in connection threads are bugs in the server, not client
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
