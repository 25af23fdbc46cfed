"""The tests' local HTTP server stack: one request model, answers, and two servers.

Every server here listens on a loopback address only and shares the pieces below:
:func:`parse_head` turns a request head into a :class:`RequestRecord`, a
:class:`Reply` (status, headers, body, delay) is the ordinary answer, routes are
keyed by ``(host, path)`` or ``path``, with and without the query, and anything
else gets :data:`NOT_FOUND`.

* :class:`HostileServer` answers from a raw socket, one thread and one request per
  connection, so it can misbehave in ways a real HTTP server library refuses to:
  reset the connection, never answer, trickle a body, lie about Content-Length,
  speak garbage, send a gzip bomb or an endless-looking stream (the behaviours
  below). It serves http or https (:mod:`tests.helpers.tls`), on IPv4 or IPv6.
* :class:`ScriptedServer` is a :class:`HostileServer` scripted the simple way:
  ``add_route(path, status, body, headers, delay)``, and a request log of targets.
* :class:`~tests.helpers.loop_server.LoopServer` serves :class:`Reply` answers on
  asyncio with keep-alive, for volume: thousands of origins or waiting requests
  (the crawl and latency benchmarks).

Host names resolve to these servers through :mod:`tests.helpers.names`.
"""

from __future__ import annotations

import contextlib
import functools
import http
import selectors
import socket
import ssl
import struct
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeAlias
from urllib.parse import urlsplit

from tests.helpers.tls import server_tls_context

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Self

__all__ = [
    "NOT_FOUND",
    "BlackHole",
    "Exchange",
    "Garbage",
    "GzipBomb",
    "Headers",
    "HostileServer",
    "LyingLength",
    "Reply",
    "RequestRecord",
    "Reset",
    "Route",
    "ScriptedServer",
    "Sequence",
    "Streaming",
    "Trickle",
    "gzip_bomb_body",
    "ipv6_loopback_available",
    "normalise_host",
    "parse_head",
    "refused_port",
    "response_head",
]

MAX_HEAD = 64 * 1024
HEAD_TIMEOUT = 10.0
#: How long a send may block on a client that stopped reading.
SEND_TIMEOUT = 30.0
STREAM_CHUNK = 16 * 1024


# -- request records ---------------------------------------------------------------------


class Headers(Mapping[str, str]):
    """Request headers, looked up case-insensitively; repeats joined with ``, ``."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        self._pairs = list(pairs)
        self._joined: dict[str, str] = {}
        for name, value in self._pairs:
            key = name.lower()
            self._joined[key] = (
                f"{self._joined[key]}, {value}" if key in self._joined else value
            )

    def __getitem__(self, name: str) -> str:
        return self._joined[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._joined

    def __iter__(self) -> Iterator[str]:
        return iter(self._joined)

    def __len__(self) -> int:
        return len(self._joined)

    def get_all(self, name: str) -> list[str]:
        key = name.lower()
        return [value for n, value in self._pairs if n.lower() == key]

    def __repr__(self) -> str:
        return f"Headers({self._pairs!r})"


@dataclass(eq=False)
class RequestRecord:
    """One request as the server saw it."""

    method: str
    #: the request target exactly as sent (origin-form or absolute-form)
    target: str
    #: path and query
    path: str
    #: lower-cased, without port or IPv6 brackets; "" when the request named none
    host: str
    #: the port the request named (target or Host header), if any
    port: int | None
    headers: Headers
    #: ``time.monotonic()`` when the request head was complete
    arrived: float
    #: body bytes handed to the kernel so far: an upper bound on what the client read
    bytes_sent: int = 0
    done: threading.Event = field(default_factory=threading.Event, repr=False)
    #: the request line's protocol version
    version: str = "HTTP/1.1"

    def wait_done(self, timeout: float = 5.0) -> bool:
        """Wait until the server has finished with this request's connection."""
        return self.done.wait(timeout)

    @property
    def keep_alive(self) -> bool:
        """The client means to send another request on this connection."""
        connection = self.headers.get("Connection", "").strip().lower()
        if self.version == "HTTP/1.1":
            return connection != "close"
        return connection == "keep-alive"


def _split_host(authority: str) -> tuple[str, int | None]:
    authority = authority.strip()
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = authority.partition(":")
    port = int(port_text) if port_text.isdigit() else None
    return host.lower(), port


def normalise_host(host: str) -> str:
    host = host.strip().strip("[]").lower()
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def parse_head(head: bytes) -> RequestRecord | None:
    """The request of a head (request line and headers, without the blank line),
    or ``None`` if its request line is not HTTP."""
    text = head.decode("latin-1")
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    method, target, version = parts
    pairs = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            pairs.append((name.strip(), value.strip()))
    headers = Headers(pairs)
    if "://" in target:
        split = urlsplit(target)
        host, port = _split_host(split.netloc.rpartition("@")[2])
        path = (split.path or "/") + (f"?{split.query}" if split.query else "")
    else:
        host, port = _split_host(headers.get("Host", ""))
        path = target
    return RequestRecord(
        method, target, path, host, port, headers, time.monotonic(), version=version
    )


# -- behaviours --------------------------------------------------------------------------


class Behaviour(Protocol):
    """How a route answers; runs on the connection's own thread."""

    def serve(self, exchange: Exchange) -> None: ...


def _status_line(status: int) -> bytes:
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    return f"HTTP/1.1 {status} {reason}\r\n".encode("latin-1")


def response_head(
    status: int,
    headers: Mapping[str, str],
    length: int | None,
    *,
    close: bool = True,
) -> bytes:
    """A response head; ``close`` adds ``Connection: close`` (one request per
    connection) unless ``headers`` name a Connection of their own."""
    # Headers the test gives win, so a Reply can lie about its own length too.
    given = {name.lower() for name in headers}
    lines = [_status_line(status)]
    lines += [
        f"{name}: {value}\r\n".encode("latin-1") for name, value in headers.items()
    ]
    if length is not None and "content-length" not in given:
        lines.append(f"Content-Length: {length}\r\n".encode("latin-1"))
    if close and "connection" not in given:
        lines.append(b"Connection: close\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


@dataclass(frozen=True)
class Reply:
    """A well-formed HTTP/1.1 answer, optionally after ``delay`` seconds."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0

    def serve(self, exchange: Exchange) -> None:
        if self.delay and exchange.stopping.wait(self.delay):
            return
        exchange.send(response_head(self.status, self.headers, len(self.body)))
        if exchange.record.method != "HEAD":
            exchange.send_body(self.body)

    def wire(self, *, close: bool = False, head_only: bool = False) -> bytes:
        """The whole response as bytes, for a server that keeps connections open."""
        head = response_head(self.status, self.headers, len(self.body), close=close)
        return head if head_only else head + self.body


@dataclass(frozen=True, init=False)
class Sequence:
    """The n-th request for the route gets the n-th behaviour; the last one repeats."""

    replies: tuple[Behaviour, ...]

    def __init__(self, *replies: Behaviour) -> None:
        if not replies:
            raise ValueError("Sequence needs at least one behaviour")
        object.__setattr__(self, "replies", replies)

    def serve(self, exchange: Exchange) -> None:
        self.replies[min(exchange.index, len(self.replies) - 1)].serve(exchange)


@dataclass(frozen=True)
class Reset:
    """Read the request, then abort the connection with a TCP RST."""

    def serve(self, exchange: Exchange) -> None:
        exchange.reset()


@dataclass(frozen=True)
class BlackHole:
    """Read the request and never answer, holding the connection open."""

    max_hold: float = 120.0

    def serve(self, exchange: Exchange) -> None:
        exchange.wait_closed(self.max_hold)


@dataclass(frozen=True)
class Trickle:
    """An honest head, then the body one byte every ``interval`` seconds."""

    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    interval: float = 1.0

    def serve(self, exchange: Exchange) -> None:
        exchange.send(response_head(200, self.headers, len(self.body)))
        for index in range(len(self.body)):
            if exchange.wait_closed(self.interval):
                return
            exchange.send_body(self.body[index : index + 1])


@dataclass(frozen=True)
class LyingLength:
    """Declare ``declared`` bytes of body, send fewer, and close."""

    body: bytes
    declared: int

    def serve(self, exchange: Exchange) -> None:
        exchange.send(response_head(200, {"Content-Type": "text/plain"}, self.declared))
        exchange.send_body(self.body)


@dataclass(frozen=True)
class Garbage:
    """Answer with bytes that are not HTTP at all, and close."""

    data: bytes = (
        b"\x00\xffSSH-2.0-garbage\r\n\x00\x01\x02 not an HTTP response\r\n\r\n"
    )

    def serve(self, exchange: Exchange) -> None:
        exchange.send_body(self.data)


BOMB_LINE = b"Disallow: /bomb\n"
_BOMB_CHUNK = BOMB_LINE * (1024 * 1024 // len(BOMB_LINE))


@functools.cache
def gzip_bomb_body(decompressed_size: int) -> bytes:
    """A gzip member that inflates to ``decompressed_size`` bytes of :data:`BOMB_LINE`.

    Each MiB is deflated once and ended with a full flush, which resets the
    compressor, so every further MiB compresses to the very same bytes: the body
    is built by repetition without ever holding (or deflating) the full size.
    """
    full, rest = divmod(decompressed_size, len(_BOMB_CHUNK))
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = raw.compress(_BOMB_CHUNK) + raw.flush(zlib.Z_FULL_FLUSH)
    if raw.compress(_BOMB_CHUNK) + raw.flush(zlib.Z_FULL_FLUSH) != piece:
        return _gzip_bomb_slowly(decompressed_size)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15)
    end = tail.compress(_BOMB_CHUNK[:rest]) + tail.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(full):
        crc = zlib.crc32(_BOMB_CHUNK, crc)
    crc = zlib.crc32(_BOMB_CHUNK[:rest], crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, decompressed_size & 0xFFFFFFFF)
    return header + piece * full + end + trailer


def _gzip_bomb_slowly(decompressed_size: int) -> bytes:
    # Only if some zlib build does not make flushed pieces byte-identical.
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    full, rest = divmod(decompressed_size, len(_BOMB_CHUNK))
    parts = [compressor.compress(_BOMB_CHUNK) for _ in range(full)]
    parts.append(compressor.compress(_BOMB_CHUNK[:rest]))
    parts.append(compressor.flush())
    return b"".join(parts)


@dataclass(frozen=True)
class GzipBomb:
    """``Content-Encoding: gzip`` whose body inflates to ``decompressed_size`` bytes."""

    decompressed_size: int = 512 * 1024 * 1024

    def serve(self, exchange: Exchange) -> None:
        body = gzip_bomb_body(self.decompressed_size)
        headers = {"Content-Type": "text/plain", "Content-Encoding": "gzip"}
        exchange.send(response_head(200, headers, len(body)))
        exchange.send_body(body)


@dataclass(frozen=True)
class Streaming:
    """``size`` bytes of ``line`` sent in 16 KiB chunks, with an honest length.

    With ``declare_length=False`` the body is delimited by the close instead, so
    a client cannot refuse it up front and has to stop reading part-way.
    """

    size: int = 10 * 1024 * 1024
    line: bytes = b"Disallow: /big/path\n"
    headers: Mapping[str, str] = field(default_factory=dict)
    declare_length: bool = True

    def serve(self, exchange: Exchange) -> None:
        # A small send buffer keeps bytes_sent close to what the client has read.
        exchange.conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        headers = {"Content-Type": "text/plain", **self.headers}
        exchange.send(
            response_head(200, headers, self.size if self.declare_length else None)
        )
        repeats = STREAM_CHUNK // len(self.line) + 2
        pattern = self.line * repeats
        offset = 0
        while offset < self.size:
            if exchange.stopping.is_set():
                return
            start = offset % len(self.line)
            length = min(STREAM_CHUNK, self.size - offset)
            exchange.send_body(pattern[start : start + length])
            offset += length


# -- the server --------------------------------------------------------------------------

RouteKey: TypeAlias = str | tuple[str, str]

NOT_FOUND = Reply(404, {"Content-Type": "text/plain"}, b"not found\n")


def route_keys(record: RequestRecord) -> list[RouteKey]:
    """The route keys that may answer ``record``, the most specific first."""
    bare = record.path.split("?", 1)[0]
    return [(record.host, record.path), (record.host, bare), record.path, bare]


class Exchange:
    """One connection's request and the means to answer it."""

    def __init__(
        self,
        conn: socket.socket,
        record: RequestRecord,
        index: int,
        stopping: threading.Event,
    ) -> None:
        self.conn = conn
        self.record = record
        #: how many earlier requests this route has answered (for :class:`Sequence`)
        self.index = index
        self.stopping = stopping

    def send(self, data: bytes) -> None:
        self.conn.sendall(data)

    def send_body(self, data: bytes) -> None:
        view = memoryview(data)
        for start in range(0, len(view), STREAM_CHUNK):
            chunk = view[start : start + STREAM_CHUNK]
            self.conn.sendall(chunk)
            self.record.bytes_sent += len(chunk)

    def reset(self) -> None:
        """Make the coming close send a RST instead of a FIN."""
        self.conn.setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
        )

    def wait_closed(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the client to hang up (or the server to stop).

        Returns True if the connection is over, False if the time ran out.
        Anything the client sends meanwhile is read and dropped.
        """
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.conn, selectors.EVENT_READ)
            while True:
                if self.stopping.is_set():
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if not selector.select(left):
                    continue
                try:
                    if not self.conn.recv(4096):
                        return True
                except ssl.SSLWantReadError:
                    continue
                except OSError:
                    return True


class HostileServer:
    """A raw-socket HTTP/1.1 server on a loopback address that misbehaves on cue.

    Each connection gets its own daemon thread and exactly one request; routes
    are keyed by ``(host, path)`` falling back to ``path``, with and without the
    query. Unknown routes get a 404.
    """

    def __init__(
        self, host: str = "127.0.0.1", *, tls: bool = False, name: str = "hostile"
    ) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.host = host
        self.tls = tls
        self.name = name
        #: unexpected exceptions from connection threads (bugs, not client hang-ups)
        self.errors: list[BaseException] = []
        self._context = server_tls_context() if tls else None
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._routes: dict[RouteKey, Behaviour] = {}
        self._counts: dict[RouteKey, int] = {}
        self._log: list[RequestRecord] = []
        self._conns: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._stopping = threading.Event()
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._listener.bind((host, 0))
            self._listener.listen(128)
            # Polling lets the accept loop notice stop() without closing a
            # socket under a blocked accept(), which is not portable.
            self._listener.settimeout(0.1)
        except OSError:
            self._listener.close()
            raise
        self.port: int = self._listener.getsockname()[1]
        self._acceptor = threading.Thread(
            target=self._accept_loop, name=f"{name}-accept", daemon=True
        )

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> Self:
        self._acceptor.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, hang up on every client and wait for the threads."""
        deadline = time.monotonic() + timeout
        self._stopping.set()
        if self._acceptor.is_alive():
            self._acceptor.join(timeout)
        else:
            self._listener.close()
        self.drop_connections()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def drop_connections(self) -> None:
        """Hang up on every open client connection (black holes, trickles)."""
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            # Shut down, not close: the connection's thread still owns the
            # descriptor, and closing it here could let a new socket reuse the
            # number under that thread. SSLSocket.shutdown would also drop its
            # SSL object under the other thread, so go to the plain socket.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(conn, socket.SHUT_RDWR)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until no connection is being served; False if that took too long."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._threads:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def reset(self) -> None:
        """Forget routes and requests and hang up on clients left over from a test."""
        self.set_routes({})
        self.drop_connections()
        self.wait_idle(2.0)
        with self._lock:
            self.errors.clear()

    # -- scripting ----------------------------------------------------------------------

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def url(self, path: str = "/", host: str | None = None) -> str:
        """``path`` on this server, optionally under another (resolved) host name."""
        if host is None:
            return f"{self.base_url}{path}"
        if ":" in host:
            host = f"[{host}]"
        return f"{self.scheme}://{host}:{self.port}{path}"

    def set_routes(self, routes: Mapping[RouteKey, Behaviour]) -> None:
        """Replace every route (keys: ``path`` or ``(host, path)``); clear the log."""
        with self._lock:
            self._routes = {self._key(key): value for key, value in routes.items()}
            self._counts = {}
            self._log = []

    def add_route(
        self, path: str, behaviour: Behaviour, host: str | None = None
    ) -> None:
        key = self._key(path if host is None else (host, path))
        with self._lock:
            self._routes[key] = behaviour
            self._counts.pop(key, None)

    def add_routes(self, routes: Mapping[str, Behaviour]) -> None:
        """:meth:`add_route` for each ``path: behaviour`` of ``routes``."""
        for path, behaviour in routes.items():
            self.add_route(path, behaviour)

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request since the last :meth:`set_routes`, in arrival order."""
        with self._lock:
            return list(self._log)

    def requests_for(self, path: str, host: str | None = None) -> list[RequestRecord]:
        """Requests for ``path`` (query ignored unless ``path`` has one), on ``host``."""
        wanted = None if host is None else normalise_host(host)
        return [
            record
            for record in self.requests
            if (record.path if "?" in path else record.path.split("?", 1)[0]) == path
            and (wanted is None or record.host == wanted)
        ]

    @staticmethod
    def _key(key: RouteKey) -> RouteKey:
        if isinstance(key, tuple):
            return (normalise_host(key[0]), key[1])
        return key

    def _route(self, record: RequestRecord) -> tuple[Behaviour, int]:
        with self._lock:
            self._log.append(record)
            for key in route_keys(record):
                if key in self._routes:
                    index = self._counts.get(key, 0)
                    self._counts[key] = index + 1
                    return self._routes[key], index
        return NOT_FOUND, 0

    # -- serving ------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        try:
            while not self._stopping.is_set():
                try:
                    conn, _ = self._listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    return
                thread = threading.Thread(
                    target=self._serve,
                    args=(conn,),
                    name=f"{self.name}-conn",
                    daemon=True,
                )
                with self._lock:
                    self._conns.add(conn)
                    self._threads.add(thread)
                thread.start()
        finally:
            self._listener.close()

    def _serve(self, conn: socket.socket) -> None:
        record: RequestRecord | None = None
        try:
            conn.settimeout(HEAD_TIMEOUT)
            if self._context is not None:
                conn = self._wrap(conn)
                conn.do_handshake()
            if self._stopping.is_set():
                return
            head = self._read_head(conn)
            if head is None:
                return
            record = parse_head(head)
            if record is None:
                conn.sendall(response_head(400, {}, 0))
                return
            behaviour, index = self._route(record)
            conn.settimeout(SEND_TIMEOUT)
            behaviour.serve(Exchange(conn, record, index, self._stopping))
        except OSError:
            pass  # the client hung up or timed out; that is what these tests provoke
        except Exception as exc:  # noqa: BLE001 - a bug here; the fixtures report it
            with self._lock:
                self.errors.append(exc)
        finally:
            conn.close()
            if record is not None:
                record.done.set()
            with self._idle:
                self._conns.discard(conn)
                self._threads.discard(threading.current_thread())
                self._idle.notify_all()

    def _wrap(self, conn: socket.socket) -> ssl.SSLSocket:
        assert self._context is not None
        wrapped = self._context.wrap_socket(
            conn, server_side=True, do_handshake_on_connect=False
        )
        # wrap_socket took over the descriptor: track the wrapper instead.
        with self._lock:
            self._conns.discard(conn)
            self._conns.add(wrapped)
        return wrapped

    @staticmethod
    def _read_head(conn: socket.socket) -> bytes | None:
        deadline = time.monotonic() + HEAD_TIMEOUT
        data = b""
        while b"\r\n\r\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or len(data) > MAX_HEAD:
                return None
            conn.settimeout(left)
            chunk = conn.recv(MAX_HEAD)
            if not chunk:
                return None
            data += chunk
        head = data.split(b"\r\n\r\n", 1)[0]
        return head if len(head) <= MAX_HEAD else None


@dataclass(frozen=True)
class Route:
    """What :class:`ScriptedServer` answers for one path."""

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

#: What a scripted route sends unless its headers say otherwise.
SCRIPTED_CONTENT_TYPE = {"Content-Type": "text/html; charset=utf-8"}


def _scripted(spec: RouteSpec) -> Reply:
    route = spec if isinstance(spec, Route) else Route(*spec)
    headers = {**SCRIPTED_CONTENT_TYPE, **route.headers}
    return Reply(route.status, headers, route.body, route.delay)


class ScriptedServer:
    """A :class:`HostileServer` on 127.0.0.1 scripted the simple way.

    Routes are keyed by the request target's path and query (``/a?b=1``), falling
    back to the path alone; anything else gets a 404. Every request is logged in
    :attr:`requests` as that target, in arrival order.
    """

    def __init__(self, name: str = "scripted") -> None:
        self.server = HostileServer("127.0.0.1", name=name)

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    @property
    def errors(self) -> list[BaseException]:
        return self.server.errors

    def reset(self) -> None:
        self.server.reset()

    # -- scripting ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def url(self, path: str = "/") -> str:
        return self.server.url(path)

    def set_routes(self, routes: Mapping[str, RouteSpec]) -> None:
        """Replace every route and clear the request log."""
        self.server.set_routes({path: _scripted(spec) for path, spec in routes.items()})

    def add_route(
        self,
        path: str,
        status: int = 200,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        self.server.add_route(
            path, _scripted(Route(status, dict(headers or {}), body, delay))
        )

    @property
    def requests(self) -> list[str]:
        """Request targets served so far (since the last :meth:`set_routes`)."""
        return [record.target for record in self.server.requests]


def refused_port() -> int:
    """A 127.0.0.1 port with nothing listening (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def ipv6_loopback_available() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True
