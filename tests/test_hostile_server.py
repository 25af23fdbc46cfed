"""Self-tests of the hostile test servers, the loopback resolver and run_crawl."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import logging
import socket
import ssl
import struct
import threading
import time
import zlib
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.address import IPv4Address, IPv6Address

from tests.helpers.crawl import run_crawl
from tests.helpers.names import LoopbackResolver, loopback_names
from tests.helpers.server import (
    BOMB_LINE,
    BlackHole,
    Garbage,
    GzipBomb,
    HostileServer,
    LyingLength,
    Reply,
    Reset,
    Sequence,
    Streaming,
    Trickle,
    _gzip_bomb_slowly,
    gzip_bomb_body,
)
from tests.helpers.tls import tls_client_context

if TYPE_CHECKING:
    from collections.abc import Iterator

    from twisted.internet.interfaces import IAddress, IHostResolution

TIMEOUT = 5.0


# -- clients -----------------------------------------------------------------------------


@contextlib.contextmanager
def connect(server: HostileServer, name: str | None = None) -> Iterator[socket.socket]:
    """A connection to ``server``; over TLS, checked against ``name``."""
    with socket.create_connection((server.host, server.port), timeout=TIMEOUT) as sock:
        if not server.tls:
            yield sock
            return
        context = tls_client_context()
        with context.wrap_socket(sock, server_hostname=name or server.host) as tls:
            yield tls


def request_bytes(path: str = "/", host: str = "127.0.0.1", extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode()


def read_all(sock: socket.socket, limit: int = 64 * 1024 * 1024) -> bytes:
    chunks = []
    total = 0
    while total < limit:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def raw_exchange(
    server: HostileServer, request: bytes, name: str | None = None
) -> bytes:
    with connect(server, name) as sock:
        sock.sendall(request)
        return read_all(sock)


def split_response(data: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status_line, headers, body


@contextlib.contextmanager
def http_get(
    server: HostileServer, path: str, headers: dict[str, str] | None = None
) -> Iterator[http.client.HTTPResponse]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=TIMEOUT)
    try:
        conn.request("GET", path, headers=headers or {})
        with conn.getresponse() as response:
            yield response
    finally:
        conn.close()


# -- Reply, routing and records ----------------------------------------------------------


def test_reply_and_request_record(hostile: HostileServer) -> None:
    hostile.add_route(
        "/robots.txt", Reply(headers={"X-Test": "1"}, body=b"User-agent: *\n")
    )
    before = time.monotonic()
    headers = {"Cookie": "a=b", "Accept-Encoding": "gzip"}
    with http_get(hostile, "/robots.txt?x=1", headers) as response:
        assert response.status == 200
        assert response.read() == b"User-agent: *\n"
        assert response.getheader("Content-Length") == "14"
        assert response.getheader("Connection") == "close"
        assert response.getheader("X-Test") == "1"
    (record,) = hostile.requests
    assert record.wait_done(TIMEOUT)
    assert record.method == "GET"
    assert record.target == "/robots.txt?x=1"
    assert record.path == "/robots.txt?x=1"
    assert record.host == "127.0.0.1"
    assert record.port == hostile.port
    assert record.headers["cookie"] == "a=b"
    assert record.headers["ACCEPT-ENCODING"] == "gzip"
    assert "Cookie" in record.headers
    assert record.headers.get_all("cookie") == ["a=b"]
    assert before <= record.arrived <= time.monotonic()
    assert record.bytes_sent == 14


def test_head_gets_no_body(hostile: HostileServer) -> None:
    hostile.add_route("/", Reply(body=b"hello"))
    data = raw_exchange(hostile, b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
    status, headers, body = split_response(data)
    assert status == "HTTP/1.1 200 OK"
    assert headers["content-length"] == "5"
    assert body == b""


def test_reply_delay(hostile: HostileServer) -> None:
    hostile.add_route("/slow", Reply(body=b"late", delay=0.3))
    start = time.monotonic()
    with http_get(hostile, "/slow") as response:
        assert response.read() == b"late"
    assert time.monotonic() - start >= 0.3


def test_unknown_route_is_404(hostile: HostileServer) -> None:
    with http_get(hostile, "/missing") as response:
        assert response.status == 404
        assert response.read() == b"not found\n"
    assert [r.path for r in hostile.requests] == ["/missing"]


def test_host_routes_fall_back_to_path(hostile: HostileServer) -> None:
    hostile.set_routes(
        {
            "/p": Reply(body=b"any host"),
            ("A.test", "/p"): Reply(body=b"a.test"),
            ("bücher.test", "/p"): Reply(body=b"idn"),
            "/q?x=1": Reply(body=b"exact query"),
        }
    )

    def body_of(request: bytes) -> bytes:
        return split_response(raw_exchange(hostile, request))[2]

    assert body_of(request_bytes("/p", host="a.test:81")) == b"a.test"
    assert body_of(request_bytes("/p?z=9", host="A.TEST")) == b"a.test"
    assert body_of(request_bytes("/p", host="xn--bcher-kva.test")) == b"idn"
    assert body_of(request_bytes("/p", host="b.test")) == b"any host"
    assert body_of(request_bytes("/q?x=1")) == b"exact query"
    assert body_of(request_bytes("/q?x=2")).startswith(b"not found")
    # absolute-form names the host itself; the Host header is then ignored
    absolute = b"GET http://a.test:8080/p?k=v HTTP/1.1\r\nHost: b.test\r\n\r\n"
    assert body_of(absolute) == b"a.test"
    record = hostile.requests[-1]
    assert (record.host, record.port, record.path) == ("a.test", 8080, "/p?k=v")
    assert record.target == "http://a.test:8080/p?k=v"
    assert [r.port for r in hostile.requests_for("/p", host="a.test")] == [
        81,
        None,
        8080,
    ]
    assert len(hostile.requests_for("/p")) == 5
    assert len(hostile.requests_for("/p", host="bücher.test")) == 1
    assert len(hostile.requests_for("/q?x=1")) == 1


def test_set_routes_clears_the_log_and_add_route_adds(hostile: HostileServer) -> None:
    hostile.add_route("/a", Reply(body=b"a"))
    raw_exchange(hostile, request_bytes("/a"))
    assert len(hostile.requests) == 1
    hostile.set_routes({"/b": Reply(body=b"b")})
    assert hostile.requests == []
    assert split_response(raw_exchange(hostile, request_bytes("/a")))[0].endswith(
        "404 Not Found"
    )


def test_urls(hostile: HostileServer, hostile_tls: HostileServer) -> None:
    assert hostile.base_url == f"http://127.0.0.1:{hostile.port}"
    assert hostile.url("/x") == f"http://127.0.0.1:{hostile.port}/x"
    assert hostile.url("/x", host="a.test") == f"http://a.test:{hostile.port}/x"
    assert hostile.url("/", host="::1") == f"http://[::1]:{hostile.port}/"
    assert hostile_tls.url("/x") == f"https://127.0.0.1:{hostile_tls.port}/x"


def test_malformed_and_oversized_heads(hostile: HostileServer) -> None:
    assert raw_exchange(hostile, b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    with connect(hostile) as sock:
        # The server hangs up after 64 KiB of head without a blank line.
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            sock.sendall(b"GET / HTTP/1.1\r\nX: " + b"a" * (70 * 1024))
        with contextlib.suppress(ConnectionResetError):
            assert read_all(sock) == b""
    assert hostile.requests == []


# -- misbehaviours -----------------------------------------------------------------------


def test_sequence_repeats_its_last_behaviour(hostile: HostileServer) -> None:
    hostile.add_route("/r", Sequence(Reply(500), Reply(503), Reply(200, body=b"ok")))
    statuses = []
    for _ in range(4):
        with http_get(hostile, "/r") as response:
            response.read()
            statuses.append(response.status)
    assert statuses == [500, 503, 200, 200]
    with pytest.raises(ValueError, match="at least one"):
        Sequence()


def test_reset_sends_rst(hostile: HostileServer) -> None:
    hostile.add_route("/rst", Reset())
    with connect(hostile) as sock:
        sock.sendall(request_bytes("/rst"))
        with pytest.raises(ConnectionResetError):
            read_all(sock)
    assert [r.path for r in hostile.requests] == ["/rst"]


def test_black_hole_holds_until_the_client_leaves(hostile: HostileServer) -> None:
    hostile.add_route("/hole", BlackHole())
    with connect(hostile) as sock:
        sock.sendall(request_bytes("/hole"))
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sock.recv(1)
        (record,) = hostile.requests
        assert not record.done.is_set()
    assert record.wait_done(TIMEOUT)


def test_black_hole_max_hold(hostile: HostileServer) -> None:
    hostile.add_route("/hole", BlackHole(max_hold=0.2))
    with connect(hostile) as sock:
        sock.sendall(request_bytes("/hole"))
        start = time.monotonic()
        assert read_all(sock) == b""
    assert 0.15 <= time.monotonic() - start < 2


def test_stop_hangs_up_on_every_client() -> None:
    server = HostileServer(name="short-lived").start()
    server.set_routes(
        {"/hole": BlackHole(), "/drip": Trickle(b"x" * 1000, interval=0.05)}
    )
    with connect(server) as hole, connect(server) as drip:
        hole.sendall(request_bytes("/hole"))
        drip.sendall(request_bytes("/drip"))
        deadline = time.monotonic() + TIMEOUT
        while len(server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        start = time.monotonic()
        server.stop()
        assert time.monotonic() - start < 2
        assert read_all(hole) == b""
        assert read_all(drip).startswith(b"HTTP/1.1 200 OK")
    assert not [t for t in threading.enumerate() if t.name.startswith("short-lived")]
    assert server.errors == []
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT).close()


def test_trickle(hostile: HostileServer) -> None:
    hostile.add_route("/drip", Trickle(b"abcd", {"Content-Type": "text/plain"}, 0.05))
    start = time.monotonic()
    with http_get(hostile, "/drip") as response:
        assert response.getheader("Content-Length") == "4"
        assert response.read() == b"abcd"
    assert time.monotonic() - start >= 0.2


def test_trickle_stops_when_the_client_leaves(hostile: HostileServer) -> None:
    hostile.add_route("/drip", Trickle(b"x" * 1000, interval=0.02))
    with connect(hostile) as sock:
        sock.sendall(request_bytes("/drip"))
        assert sock.recv(4096).startswith(b"HTTP/1.1 200 OK")
    (record,) = hostile.requests
    assert record.wait_done(TIMEOUT)
    assert record.bytes_sent < 100


def test_lying_length(hostile: HostileServer) -> None:
    hostile.add_route("/lie", LyingLength(b"short", declared=100))
    with http_get(hostile, "/lie") as response:
        assert response.getheader("Content-Length") == "100"
        with pytest.raises(http.client.IncompleteRead) as caught:
            response.read()
    assert caught.value.partial == b"short"


def test_garbage(hostile: HostileServer) -> None:
    hostile.add_route("/g", Garbage())
    assert raw_exchange(hostile, request_bytes("/g")) == Garbage().data
    assert hostile.requests[0].path == "/g"


def inflate(body: bytes, limit: int) -> tuple[int, bytes]:
    """Size and first KiB of a gzip body, inflated a bounded piece at a time."""
    inflater = zlib.decompressobj(31)
    size, head, data = 0, b"", body
    while data or not inflater.eof:
        piece = inflater.decompress(data, 1024 * 1024)
        data = inflater.unconsumed_tail
        if not piece and not data:
            break
        head = head or piece[:1024]
        size += len(piece)
        assert size <= limit
    assert inflater.eof
    return size, head


def test_gzip_bomb(hostile: HostileServer) -> None:
    size = 3 * 1024 * 1024 + 5
    hostile.add_route("/bomb", GzipBomb(size))
    status, headers, body = split_response(
        raw_exchange(hostile, request_bytes("/bomb"))
    )
    assert status == "HTTP/1.1 200 OK"
    assert headers["content-encoding"] == "gzip"
    assert headers["content-type"] == "text/plain"
    assert int(headers["content-length"]) == len(body) < size // 100
    assert gzip.decompress(body) == (BOMB_LINE * (size // len(BOMB_LINE) + 1))[:size]
    assert gzip.decompress(_gzip_bomb_slowly(size)) == gzip.decompress(body)


def test_default_gzip_bomb_is_small_and_cached() -> None:
    size = 512 * 1024 * 1024
    body = gzip_bomb_body(size)
    assert gzip_bomb_body(size) is body
    assert len(body) < 2 * 1024 * 1024
    assert struct.unpack("<I", body[-4:])[0] == size % 2**32
    inflated, head = inflate(body, size)
    assert inflated == size
    assert head.startswith(BOMB_LINE * 10)


def test_streaming(hostile: HostileServer) -> None:
    hostile.add_route("/big", Streaming(size=100_000, line=b"0123456789\n"))
    with http_get(hostile, "/big") as response:
        assert response.getheader("Content-Length") == "100000"
        body = response.read()
    assert body == (b"0123456789\n" * 10_000)[:100_000]
    (record,) = hostile.requests
    assert record.wait_done(TIMEOUT)
    assert record.bytes_sent == 100_000


def test_streaming_stops_when_the_client_leaves(hostile: HostileServer) -> None:
    hostile.add_route("/big", Streaming(declare_length=False))
    with connect(hostile) as sock:
        sock.sendall(request_bytes("/big"))
        head = sock.recv(4096)
        assert b"Content-Length" not in head
    (record,) = hostile.requests
    assert record.wait_done(TIMEOUT)
    assert record.bytes_sent < 4 * 1024 * 1024


def test_tls_is_verifiable(hostile_tls: HostileServer) -> None:
    hostile_tls.add_route("/", Reply(body=b"secure"))
    names = ["127.0.0.1", "localhost", "a.test", "xn--bcher-kva.test"]
    for name in names:
        data = raw_exchange(hostile_tls, request_bytes("/", host=name), name)
        assert split_response(data)[2] == b"secure"
    with pytest.raises(ssl.SSLCertVerificationError):
        raw_exchange(hostile_tls, request_bytes("/"), "not-in-the.certificate")
    assert [r.host for r in hostile_tls.requests] == names


def test_ipv6(hostile_v6: HostileServer) -> None:
    hostile_v6.add_route("/six", Reply(body=b"v6"))
    with http_get(hostile_v6, "/six") as response:
        assert response.read() == b"v6"
    assert hostile_v6.requests[0].host == "::1"
    assert hostile_v6.base_url == f"http://[::1]:{hostile_v6.port}"


def test_refused_port(refused_port: int) -> None:
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", refused_port), timeout=TIMEOUT).close()


# -- name resolution ---------------------------------------------------------------------


class Receiver:
    def __init__(self) -> None:
        self.began: list[IHostResolution] = []
        self.addresses: list[IAddress] = []
        self.complete = False

    def resolutionBegan(self, resolution: IHostResolution) -> None:
        self.began.append(resolution)

    def addressResolved(self, address: IAddress) -> None:
        self.addresses.append(address)

    def resolutionComplete(self) -> None:
        self.complete = True


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.test", "127.0.0.1"),
        ("A.Test.", "127.0.0.1"),
        ("xn--bcher-kva.test", "127.0.0.1"),
        ("bücher.test", "127.0.0.1"),
        ("localhost", "127.0.0.1"),
        ("127.0.0.1", "127.0.0.1"),
        ("127.1.2.3", "127.1.2.3"),
        ("::1", "::1"),
        ("example.com", None),
        ("test", None),
        ("a.test.example.com", None),
        ("8.8.8.8", None),
        ("2001:db8::1", None),
    ],
)
def test_loopback_resolver_names(name: str, expected: str | None) -> None:
    assert LoopbackResolver().address_for(name) == expected


def test_loopback_resolver_answers_at_once() -> None:
    resolver = LoopbackResolver(names={"v6.test": "::1"})
    resolver.add("ELSEWHERE.example", "127.0.0.2")
    cases: list[tuple[str, Any, list[IAddress]]] = [
        ("a.test", None, [IPv4Address("TCP", "127.0.0.1", 80)]),
        ("v6.test", None, [IPv6Address("TCP", "::1", 80)]),
        ("elsewhere.example", None, [IPv4Address("TCP", "127.0.0.2", 80)]),
        ("a.test", [IPv6Address], []),
        ("nowhere.example", None, []),
    ]
    for name, types, expected in cases:
        receiver = Receiver()
        resolver.resolveHostName(receiver, name, 80, types)
        assert receiver.complete
        assert [r.name for r in receiver.began] == [name]
        assert receiver.addresses == expected
    assert resolver.lookups == [name for name, _, _ in cases]


def test_loopback_names_restores_the_reactor() -> None:
    from twisted.internet import reactor

    name_resolver, simple = reactor.nameResolver, reactor.resolver  # type: ignore[attr-defined]
    with loopback_names() as resolver:
        assert reactor.nameResolver is resolver  # type: ignore[attr-defined]
        assert reactor.resolver is not simple  # type: ignore[attr-defined]
    assert reactor.nameResolver is name_resolver  # type: ignore[attr-defined]
    assert reactor.resolver is simple  # type: ignore[attr-defined]


def test_resolver_is_a_scrapy_dns_resolver() -> None:
    class FakeReactor:
        installed: object = None

        def installNameResolver(self, resolver: object) -> object:
            self.installed = resolver
            return None

    fake = FakeReactor()
    resolver = LoopbackResolver.from_crawler(None, fake)  # type: ignore[arg-type]
    resolver.install_on_reactor()
    assert fake.installed is resolver


# -- real crawls -------------------------------------------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_crawl_test_names_through_the_resolver(
    hostile: HostileServer, hostile_b: HostileServer, loopback_dns: LoopbackResolver
) -> None:
    hostile.set_routes(
        {
            ("a.test", "/page"): Reply(body=b"a"),
            ("bücher.test", "/page"): Reply(body=b"idn"),
            ("other.test", "/page"): Reply(body=b"other"),
        }
    )
    hostile_b.add_route("/page", Reply(body=b"b"))
    result = await run_crawl(
        [
            hostile.url("/page", host="a.test"),
            hostile.url("/page", host="bücher.test"),
            hostile.url("/page", host="other.test"),
            hostile_b.url("/page", host="b.a.test"),
            "http://unknown.example/page",
        ],
        {"ROBOTSTXT_OBEY": False, "RETRY_ENABLED": False},
        spider_kwargs={"allowed_domains": ["a.test", "xn--bcher-kva.test"]},
        meta={"marker": 1},
    )
    assert sorted(result.responses) == sorted(
        [
            hostile.url("/page", host="a.test"),
            hostile.url("/page", host="xn--bcher-kva.test"),
            hostile_b.url("/page", host="b.a.test"),
        ]
    )
    assert all(request.meta["marker"] == 1 for request in result.requests)
    assert {r.host for r in hostile.requests} == {"a.test", "xn--bcher-kva.test"}
    assert "gzip" in hostile.requests[0].headers["Accept-Encoding"]
    assert "Cookie" not in hostile.requests[0].headers
    # unknown.example is offsite too: the resolver never saw it
    assert "unknown.example" not in loopback_dns.lookups
    assert result.failures == []
    assert result.stats["offsite/filtered"] == 2
    assert "Spider opened" in result.messages(logging.INFO, "scrapy.core.engine")
    assert result.messages(logging.ERROR) == []
    assert result.elapsed < 10


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_crawl_over_tls(
    hostile_tls: HostileServer, loopback_dns: LoopbackResolver
) -> None:
    hostile_tls.add_route("/", Reply(body=b"secure"))
    urls = [hostile_tls.url("/"), hostile_tls.url("/", host="a.test")]
    result = await run_crawl(urls, {"ROBOTSTXT_OBEY": False}, dont_filter=True)
    assert sorted(result.responses) == sorted(urls)
    # the certificate names both, so Scrapy logs no certificate warning
    assert result.messages(logging.WARNING) == []


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_crawl_over_ipv6(hostile_v6: HostileServer) -> None:
    hostile_v6.add_route("/", Reply(body=b"six"))
    result = await run_crawl([hostile_v6.url("/")], {"ROBOTSTXT_OBEY": False})
    assert result.responses == [hostile_v6.url("/")]
    assert hostile_v6.requests[0].host == "::1"


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_crawl_errbacks_see_scrapy_exceptions(
    hostile: HostileServer, refused_port: int, loopback_dns: LoopbackResolver
) -> None:
    """What Scrapy 2.19 raises for each misbehaviour (the middleware meets these)."""
    hostile.set_routes(
        {
            "/reset": Reset(),
            "/garbage": Garbage(),
            "/lie": LyingLength(b"User-agent: *\n", declared=1000),
            "/hole": BlackHole(),
            "/drip": Trickle(b"x" * 100, interval=0.2),
            "/bomb": GzipBomb(8 * 1024 * 1024),
            "/endless": Streaming(size=10 * 1024 * 1024, declare_length=False),
            "/big": Streaming(size=10 * 1024 * 1024),
        }
    )
    expected = {
        hostile.url("/reset"): DownloadFailedError,
        hostile.url("/garbage"): DownloadFailedError,
        hostile.url("/lie"): ResponseDataLossError,
        hostile.url("/hole"): DownloadTimeoutError,
        # DOWNLOAD_TIMEOUT covers the whole body, not just the wait for a head
        hostile.url("/drip"): DownloadTimeoutError,
        hostile.url("/bomb"): IgnoreRequest,
        hostile.url("/endless"): DownloadCancelledError,
        hostile.url("/big"): DownloadCancelledError,
        f"http://127.0.0.1:{refused_port}/": DownloadConnectionRefusedError,
        "http://nowhere.example/": CannotResolveHostError,
    }
    result = await run_crawl(
        expected,
        {"RETRY_ENABLED": False, "DOWNLOAD_TIMEOUT": 1, "DOWNLOAD_MAXSIZE": 500_000},
    )
    assert result.responses == []
    got = {
        url: type(exc)
        for url, exc in zip(result.failed_urls, result.failures, strict=True)
    }
    assert got == expected
    assert hostile.wait_idle(TIMEOUT)
    (endless,) = hostile.requests_for("/endless")
    assert 500_000 <= endless.bytes_sent < 4 * 1024 * 1024
    # an honest Content-Length over the limit is refused on the head alone
    (big,) = hostile.requests_for("/big")
    assert big.bytes_sent < 500_000
    assert result.elapsed < 5
