"""Hostile HTTP servers, a loopback name resolver and a crawl runner for tests.

:class:`HostileServer` answers from a raw socket so it can misbehave in ways a
real HTTP server library refuses to: reset the connection, never answer,
trickle a body, lie about Content-Length, speak garbage, send a gzip bomb or an
endless-looking stream. :class:`LoopbackResolver` sends ``*.test`` host names to
127.0.0.1 so one server can impersonate many sites, and :func:`run_crawl` runs a
real Scrapy crawl and collects what came back.

Import it as ``from hostile import ...``: pytest puts ``tests/`` (which has no
``__init__.py``) on ``sys.path``; ``tests.hostile`` is not importable at run time.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import http
import ipaddress
import logging
import selectors
import socket
import ssl
import struct
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias
from urllib.parse import urlsplit

from scrapy import Request, Spider
from scrapy.utils.test import get_crawler
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.interfaces import IHostnameResolver, IHostResolution
from zope.interface import implementer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.internet.interfaces import IAddress, IResolutionReceiver
    from twisted.python.failure import Failure
    from typing_extensions import Self

__all__ = [
    "TLS_NAMES",
    "BlackHole",
    "CrawlResult",
    "Exchange",
    "Garbage",
    "GzipBomb",
    "Headers",
    "HostileServer",
    "HostileSpider",
    "LoopbackResolver",
    "LyingLength",
    "Reply",
    "RequestRecord",
    "Reset",
    "Sequence",
    "Streaming",
    "Trickle",
    "gzip_bomb_body",
    "ipv6_loopback_available",
    "loopback_names",
    "refused_port",
    "run_crawl",
    "tls_client_context",
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

    def wait_done(self, timeout: float = 5.0) -> bool:
        """Wait until the server has finished with this request's connection."""
        return self.done.wait(timeout)


def _split_host(authority: str) -> tuple[str, int | None]:
    authority = authority.strip()
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = authority.partition(":")
    port = int(port_text) if port_text.isdigit() else None
    return host.lower(), port


def _normalise_host(host: str) -> str:
    host = host.strip().strip("[]").lower()
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _parse_head(head: bytes) -> RequestRecord | None:
    text = head.decode("latin-1")
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    method, target, _version = parts
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
    return RequestRecord(method, target, path, host, port, headers, time.monotonic())


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


def _head(status: int, headers: Mapping[str, str], length: int | None) -> bytes:
    # Headers the test gives win, so a Reply can lie about its own length too.
    given = {name.lower() for name in headers}
    lines = [_status_line(status)]
    lines += [
        f"{name}: {value}\r\n".encode("latin-1") for name, value in headers.items()
    ]
    if length is not None and "content-length" not in given:
        lines.append(f"Content-Length: {length}\r\n".encode("latin-1"))
    if "connection" not in given:
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
        exchange.send(_head(self.status, self.headers, len(self.body)))
        if exchange.record.method != "HEAD":
            exchange.send_body(self.body)


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
        exchange.send(_head(200, self.headers, len(self.body)))
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
        exchange.send(_head(200, {"Content-Type": "text/plain"}, self.declared))
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
        exchange.send(_head(200, headers, len(body)))
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
        exchange.send(_head(200, headers, self.size if self.declare_length else None))
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
        self._context = _server_tls_context() if tls else None
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

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request since the last :meth:`set_routes`, in arrival order."""
        with self._lock:
            return list(self._log)

    def requests_for(self, path: str, host: str | None = None) -> list[RequestRecord]:
        """Requests for ``path`` (query ignored unless ``path`` has one), on ``host``."""
        wanted = None if host is None else _normalise_host(host)
        return [
            record
            for record in self.requests
            if (record.path if "?" in path else record.path.split("?", 1)[0]) == path
            and (wanted is None or record.host == wanted)
        ]

    @staticmethod
    def _key(key: RouteKey) -> RouteKey:
        if isinstance(key, tuple):
            return (_normalise_host(key[0]), key[1])
        return key

    def _route(self, record: RequestRecord) -> tuple[Behaviour, int]:
        bare = record.path.split("?", 1)[0]
        candidates: list[RouteKey] = [
            (record.host, record.path),
            (record.host, bare),
            record.path,
            bare,
        ]
        with self._lock:
            self._log.append(record)
            for key in candidates:
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
            record = _parse_head(head)
            if record is None:
                conn.sendall(_head(400, {}, 0))
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


# -- TLS ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _TlsMaterial:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


#: Host names the TLS servers' certificate is valid for. Not ``*.test``: that
#: wildcard has too few labels, and service_identity (which Scrapy uses to check,
#: and warn about, every certificate) then rejects the whole certificate. Crawls
#: of other names work but log a "Remote certificate is not valid" warning.
TLS_NAMES = (
    "localhost",
    "a.test",
    "b.test",
    "c.test",
    "other.test",
    "site.test",
    "example.test",
    "www.example.test",
    "xn--bcher-kva.test",  # bücher.test
    "*.hostile.test",
)
TLS_ADDRESSES = ("127.0.0.1", "::1")


@functools.cache
def _tls_material() -> _TlsMaterial:
    """A throw-away CA and a server certificate for :data:`TLS_NAMES` and loopback.

    A separate CA (rather than one self-signed leaf) because OpenSSL will not
    use a non-CA certificate as a trust anchor for :func:`tls_client_context`.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hostile test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(name) for name in TLS_NAMES]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in TLS_ADDRESSES]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return _TlsMaterial(
        ca_pem=ca.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def _server_tls_context() -> ssl.SSLContext:
    material = _tls_material()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    # load_cert_chain only reads files.
    with tempfile.TemporaryDirectory(prefix="hostile-tls-") as directory:
        chain = Path(directory, "chain.pem")
        key = Path(directory, "key.pem")
        chain.write_bytes(material.cert_pem + material.ca_pem)
        key.write_bytes(material.key_pem)
        context.load_cert_chain(chain, key)
    return context


def tls_client_context() -> ssl.SSLContext:
    """A client context that trusts the hostile servers' certificate authority."""
    return ssl.create_default_context(cadata=_tls_material().ca_pem.decode("ascii"))


# -- name resolution ---------------------------------------------------------------------


@implementer(IHostResolution)
class _Resolution:
    def __init__(self, name: str) -> None:
        self.name = name

    def cancel(self) -> None:
        pass  # resolution is synchronous: nothing is ever pending


@implementer(IHostnameResolver)
class LoopbackResolver:
    """Resolves ``*.test`` and ``localhost`` to 127.0.0.1 and fails everything else.

    No real DNS query is ever made: unknown names fail at once (Twisted turns the
    empty answer into ``DNSLookupError``). Loopback IP literals resolve to
    themselves, because Twisted hands literals to the resolver as well; other
    literals fail so a test cannot reach the network by accident. :meth:`add`
    points one more name (e.g. ``"v6.test"``) at another loopback address.

    Usable as Scrapy's ``TWISTED_DNS_RESOLVER`` setting, which only
    ``CrawlerProcess.start()`` installs; in tests use :func:`loopback_names`.
    """

    def __init__(
        self, reactor: Any = None, names: Mapping[str, str] | None = None
    ) -> None:
        self.reactor = reactor
        self._names = {_normalise_host(k): v for k, v in (names or {}).items()}
        #: every name looked up, in order
        self.lookups: list[str] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: Any) -> LoopbackResolver:
        return cls(reactor)

    def install_on_reactor(self) -> None:
        self.reactor.installNameResolver(self)

    def add(self, name: str, address: str) -> None:
        self._names[_normalise_host(name)] = address

    def address_for(self, name: str) -> str | None:
        host = _normalise_host(name).rstrip(".")
        if host in self._names:
            return self._names[host]
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            return host if literal.is_loopback else None
        if host == "localhost" or host.endswith((".test", ".localhost")):
            return "127.0.0.1"
        return None

    def resolveHostName(
        self,
        resolutionReceiver: IResolutionReceiver,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Iterable[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> IHostResolution:
        self.lookups.append(hostName)
        resolution = _Resolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        address = self.address_for(hostName)
        if address is not None:
            kind = IPv6Address if ":" in address else IPv4Address
            if addressTypes is None or kind in set(addressTypes):
                resolutionReceiver.addressResolved(kind("TCP", address, portNumber))
        resolutionReceiver.resolutionComplete()
        return resolution


@contextlib.contextmanager
def loopback_names(
    reactor: Any = None, names: Mapping[str, str] | None = None
) -> Iterator[LoopbackResolver]:
    """Install a :class:`LoopbackResolver` on the running reactor, then restore.

    ``get_crawler()`` + ``crawl_async()`` never install ``TWISTED_DNS_RESOLVER``
    (only ``CrawlerProcess.start()`` does), so tests install it themselves.
    """
    if reactor is None:
        from twisted.internet import reactor as installed

        reactor = installed
    resolver = LoopbackResolver(reactor, names)
    # installNameResolver also replaces reactor.resolver with a wrapper, so
    # both are put back by hand.
    previous_simple = reactor.resolver
    previous = reactor.installNameResolver(resolver)
    try:
        yield resolver
    finally:
        reactor.installNameResolver(previous)
        reactor.resolver = previous_simple


# -- crawling ----------------------------------------------------------------------------


class HostileSpider(Spider):
    """Requests every start URL at once; records responses and errback failures."""

    name = "hostile"

    def __init__(
        self,
        *args: Any,
        start_urls: list[str] | None = None,
        request_meta: Mapping[str, Any] | None = None,
        dont_filter: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.start_urls = list(start_urls or [])
        self.request_meta = dict(request_meta or {})
        self.dont_filter = dont_filter
        # URLs and requests, not responses: a gzip bomb's body is not worth keeping.
        self.responses: list[tuple[str, Request]] = []
        self.failures: list[Failure] = []

    async def start(self) -> AsyncIterator[Request]:
        for url in self.start_urls:
            yield Request(
                url,
                callback=self.parse,
                errback=self.on_error,
                meta=dict(self.request_meta),
                # True would also bypass OffsiteMiddleware, i.e. allowed_domains
                dont_filter=self.dont_filter,
            )

    def parse(self, response: Response) -> None:
        self.responses.append((response.url, response.request or Request(response.url)))

    def on_error(self, failure: Failure) -> None:
        self.failures.append(failure)


@dataclass
class CrawlResult:
    stats: dict[str, Any]
    #: URL of every response that reached the callback, in arrival order
    responses: list[str]
    #: the exception of every errback failure, in arrival order
    failures: list[BaseException]
    logs: list[logging.LogRecord]
    crawler: Crawler
    #: ``response.request`` for each entry of :attr:`responses`
    requests: list[Request] = field(default_factory=list)
    #: the request URL for each entry of :attr:`failures`
    failed_urls: list[str] = field(default_factory=list)
    #: wall-clock seconds the crawl took
    elapsed: float = 0.0

    def messages(
        self, level: int | None = None, logger_prefix: str | None = None
    ) -> list[str]:
        """Formatted log messages at ``level`` or above, from loggers under a prefix."""
        return [
            record.getMessage()
            for record in self.logs
            if (level is None or record.levelno >= level)
            and (
                logger_prefix is None
                or record.name == logger_prefix
                or record.name.startswith(logger_prefix.rstrip(".") + ".")
            )
        ]


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


DEFAULT_CRAWL_SETTINGS: Mapping[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 10,
}


async def run_crawl(
    start_urls: Iterable[str],
    settings: Mapping[str, Any] | None = None,
    *,
    spider_kwargs: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    dont_filter: bool = False,
    spider_cls: type[HostileSpider] = HostileSpider,
    on_crawler: Callable[[Crawler], None] | None = None,
) -> CrawlResult:
    """Crawl ``start_urls`` with a :class:`HostileSpider`; return what happened.

    ``settings`` go on top of :data:`DEFAULT_CRAWL_SETTINGS`; ``spider_kwargs``
    become spider attributes (``allowed_domains=[...]``); ``meta`` is copied into
    every start request. ``on_crawler`` sees the crawler before it starts, e.g.
    to connect signals. Every log record emitted during the crawl, at every
    level, is kept.
    """
    crawler = get_crawler(spider_cls, {**DEFAULT_CRAWL_SETTINGS, **(settings or {})})
    if on_crawler is not None:
        on_crawler(crawler)
    root = logging.getLogger()
    handler = _ListHandler()
    previous_level = root.level
    # The root logger drops DEBUG and INFO before any handler sees them.
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    started = time.monotonic()
    try:
        await crawler.crawl_async(
            start_urls=list(start_urls),
            request_meta=meta,
            dont_filter=dont_filter,
            **(spider_kwargs or {}),
        )
    finally:
        root.removeHandler(handler)
        root.setLevel(previous_level)
    spider = crawler.spider
    assert isinstance(spider, HostileSpider)
    assert crawler.stats is not None
    return CrawlResult(
        stats=dict(crawler.stats.get_stats()),
        responses=[url for url, _ in spider.responses],
        failures=[failure.value for failure in spider.failures],
        logs=handler.records,
        crawler=crawler,
        requests=[request for _, request in spider.responses],
        failed_urls=[
            failure.request.url  # type: ignore[attr-defined]
            for failure in spider.failures
        ],
        elapsed=time.monotonic() - started,
    )
