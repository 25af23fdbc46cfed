"""The asyncio face of the test server stack (tests/helpers/loop_server.py).

The benchmarks serve their sites with it; these tests pin what they rely on:
keep-alive, answers in order, timers instead of threads, black holes, and the hooks
that count connections and requests.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import TYPE_CHECKING

import pytest

from tests.helpers.loop_server import Encoded, LoopServer
from tests.helpers.server import NOT_FOUND, Reply

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.helpers.server import RequestRecord

PAGE = Reply(200, {"Content-Type": "text/html"}, b"<p>ok</p>")


class Site:
    """A router and what it saw; ``/slow`` waits, ``/hole`` never answers."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.done: list[str] = []
        self.opened = self.closed = 0
        self.lock = threading.Lock()

    def route(self, record: RequestRecord) -> Reply | Encoded | None:
        self.seen.append(f"{record.method} {record.host} {record.path}")
        if record.path == "/hole":
            return None
        if record.path == "/slow":
            return Reply(200, {}, b"slow", delay=0.5)
        if record.path == "/encoded":
            return Encoded.of(Reply(200, {}, b"bytes"))
        return PAGE if record.path.startswith("/page") else NOT_FOUND

    def on_done(self, record: RequestRecord) -> None:
        with self.lock:
            self.done.append(record.path)

    def on_open(self) -> None:
        with self.lock:
            self.opened += 1

    def on_close(self) -> None:
        with self.lock:
            self.closed += 1


@pytest.fixture
def site() -> Iterator[tuple[Site, int]]:
    site = Site()
    server = LoopServer(
        on_open=site.on_open, on_close=site.on_close, on_done=site.on_done
    )
    with server.threaded():
        port = server.call(server.listen(site.route))
        yield site, port


def request(path: str, *, host: str = "a.test", close: bool = False) -> bytes:
    connection = "Connection: close\r\n" if close else ""
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{connection}\r\n".encode()


class Reader:
    """Responses off one socket, in order (a recv may hold more than one)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.data = b""

    def _more(self) -> None:
        chunk = self.sock.recv(4096)
        assert chunk, "closed mid-response"
        self.data += chunk

    def response(self) -> tuple[bytes, bytes]:
        """The next response's head and body (the body by its Content-Length)."""
        while b"\r\n\r\n" not in self.data:
            self._more()
        head, _, rest = self.data.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        while len(rest) < length:
            self._more()
            head, _, rest = self.data.partition(b"\r\n\r\n")
        self.data = rest[length:]
        return head, rest[:length]


def read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    return Reader(sock).response()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    return sock


def wait_for(condition: object, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_keep_alive_answers_pipelined_requests_in_order(site: tuple[Site, int]) -> None:
    recorder, port = site
    with connect(port) as sock:
        sock.sendall(request("/page/1") + request("/nothing") + request("/encoded"))
        reader = Reader(sock)
        heads = []
        for _ in range(3):
            head, body = reader.response()
            heads.append((head.split(b"\r\n")[0], body))
    assert heads == [
        (b"HTTP/1.1 200 OK", b"<p>ok</p>"),
        (b"HTTP/1.1 404 Not Found", b"not found\n"),
        (b"HTTP/1.1 200 OK", b"bytes"),
    ]
    assert recorder.seen == [
        "GET a.test /page/1",
        "GET a.test /nothing",
        "GET a.test /encoded",
    ]
    assert wait_for(lambda: recorder.closed == 1)
    assert recorder.opened == 1
    assert recorder.done == ["/page/1", "/nothing", "/encoded"]


def test_connection_close_is_honoured(site: tuple[Site, int]) -> None:
    _, port = site
    with connect(port) as sock:
        sock.sendall(request("/page/1", close=True))
        head, _ = read_response(sock)
        assert b"Connection" not in head
        assert sock.recv(4096) == b""  # the server hung up


def test_a_delay_is_a_timer_that_holds_up_no_other_connection(
    site: tuple[Site, int],
) -> None:
    _, port = site
    with connect(port) as slow, connect(port) as fast:
        started = time.monotonic()
        slow.sendall(request("/slow"))
        fast.sendall(request("/page/2"))
        read_response(fast)
        fast_done = time.monotonic() - started
        _, body = read_response(slow)
        slow_done = time.monotonic() - started
    assert body == b"slow"
    assert fast_done < 0.4
    assert slow_done >= 0.45


def test_a_black_hole_reads_and_never_answers(site: tuple[Site, int]) -> None:
    recorder, port = site
    with connect(port) as sock:
        sock.settimeout(0.3)
        sock.sendall(request("/hole"))
        with pytest.raises(TimeoutError):
            sock.recv(4096)
    # abandoned by its client: done all the same
    assert wait_for(lambda: recorder.done == ["/hole"])


def test_head_gets_the_head_only(site: tuple[Site, int]) -> None:
    _, port = site
    with connect(port) as sock:
        sock.sendall(b"HEAD /page/1 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        sock.sendall(request("/encoded"))
        data = b""
        while data.count(b"\r\n\r\n") < 2 or not data.endswith(b"bytes"):
            chunk = sock.recv(4096)
            assert chunk
            data += chunk
    assert data.count(b"<p>ok</p>") == 0
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Content-Length: 9\r\n" in data


def test_a_request_line_that_is_not_http_closes_the_connection(
    site: tuple[Site, int],
) -> None:
    recorder, port = site
    with connect(port) as sock:
        sock.sendall(b"SSH-2.0-garbage\r\n\r\n")
        assert sock.recv(4096) == b""
    assert recorder.seen == []


def test_it_listens_on_loopback_only() -> None:
    server = LoopServer()
    with server.threaded(), pytest.raises(ValueError, match="not a loopback"):
        server.call(server.listen(lambda record: PAGE, host="192.0.2.1"))
