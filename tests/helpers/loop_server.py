"""The server stack's asyncio face: many origins and many waiting requests, cheaply.

:class:`LoopServer` speaks the same HTTP as :class:`~tests.helpers.server.HostileServer`
(:func:`~tests.helpers.server.parse_head`, :class:`~tests.helpers.server.Reply`) but
on asyncio protocols: keep-alive, GET and HEAD without request bodies, one request
at a time per connection (a pipelined request waits for the answer before it). A
delayed answer is a timer (``loop.call_later``), not a sleeping thread, so thousands
of requests can wait at once for nothing, and one listening socket per origin costs
a file descriptor, not a thread: the crawl and latency benchmarks serve their sites
with it, in processes of their own (:func:`run_until_signalled`), and
``benchmarks/redis_latency.py`` beside its crawls (:meth:`LoopServer.threaded`).

Each listening socket has a router: ``router(record)`` returns the
:class:`~tests.helpers.server.Reply` (or :class:`Encoded` bytes) to send, or
``None`` to read the request and never answer (a black hole). It runs on the event
loop, so it may count what it sees without a lock. Listening is on loopback
addresses only.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import signal
import socket
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from tests.helpers.server import MAX_HEAD, Reply, RequestRecord, parse_head

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Iterator
    from typing import Self

__all__ = ["Encoded", "LoopServer", "Router", "run_until_signalled"]


@dataclass(frozen=True)
class Encoded:
    """A whole response already in bytes (head and body), sent after ``delay`` s.

    What a router returns for answers it sends often: encoded once, not per request
    (``Encoded.of(Reply(...))``)."""

    data: bytes
    delay: float = 0.0

    @classmethod
    def of(cls, reply: Reply) -> Encoded:
        return cls(reply.wire(), reply.delay)


Answer: TypeAlias = "Reply | Encoded | None"
Router: TypeAlias = "Callable[[RequestRecord], Answer]"


class LoopServer:
    """HTTP/1.1 on asyncio, for volume; see the module's docstring.

    ``on_open()`` and ``on_close()`` run as each connection opens and closes,
    ``on_done(record)`` once a request is answered, or abandoned by its client.
    """

    def __init__(
        self,
        *,
        on_open: Callable[[], None] | None = None,
        on_close: Callable[[], None] | None = None,
        on_done: Callable[[RequestRecord], None] | None = None,
        max_head: int = MAX_HEAD,
    ) -> None:
        self.on_open = on_open
        self.on_close = on_close
        self.on_done = on_done
        self.max_head = max_head
        self._listeners: list[asyncio.Server] = []
        self._connections: set[_Connection] = set()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def listen(
        self, router: Router, host: str = "127.0.0.1", port: int = 0, backlog: int = 128
    ) -> int:
        """Serve ``host:port`` with ``router``; returns the port (0 picks a free one)."""
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"{host} is not a loopback address")
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            bound: int = sock.getsockname()[1]
            listener = await asyncio.get_running_loop().create_server(
                lambda: _Connection(self, router), sock=sock, backlog=backlog
            )
        except BaseException:
            sock.close()
            raise
        self._listeners.append(listener)
        return bound

    def close(self) -> None:
        """Stop listening (connections already open are left to their clients)."""
        for listener in self._listeners:
            listener.close()
        self._listeners.clear()

    # -- in a thread, beside synchronous code --------------------------------------------

    @contextlib.contextmanager
    def threaded(self) -> Iterator[Self]:
        """Run an event loop for this server on a daemon thread until the block ends;
        :meth:`call` runs coroutines (:meth:`listen`) on it."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="loop-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        try:
            yield self
        finally:
            self._stop_thread(loop)

    def call(self, coroutine: Coroutine[Any, Any, Any], timeout: float = 10.0) -> Any:
        """Run ``coroutine`` on the server's thread and return its result."""
        assert self._loop is not None, "call() needs threaded()"
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def _stop_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        async def shut() -> None:
            listeners = list(self._listeners)
            self.close()
            for connection in list(self._connections):
                if connection.transport is not None:
                    connection.transport.abort()
            for listener in listeners:
                await asyncio.wait_for(listener.wait_closed(), 5)

        with contextlib.suppress(Exception):
            self.call(shut())
        loop.call_soon_threadsafe(loop.stop)
        assert self._thread is not None
        self._thread.join(10)
        if not self._thread.is_alive():
            loop.close()
        self._thread = self._loop = None


class _Connection(asyncio.Protocol):
    def __init__(self, server: LoopServer, router: Router) -> None:
        self.server = server
        self.router = router
        self.buffer = bytearray()
        #: the request being answered (or held by a black hole)
        self.record: RequestRecord | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server._connections.add(self)
        if self.server.on_open is not None:
            self.server.on_open()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self._done()
        self.transport = None
        self.server._connections.discard(self)
        if self.server.on_close is not None:
            self.server.on_close()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._pump()

    def _pump(self) -> None:
        """Answer the requests in the buffer, in order, until one has to wait."""
        while (
            self.record is None
            and self.transport is not None
            and not self.transport.is_closing()
        ):
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > self.server.max_head:
                    self.transport.close()
                return
            record = parse_head(bytes(self.buffer[:end]))
            del self.buffer[: end + 4]
            if record is None:
                self.transport.close()
                return
            self.record = record
            answer = self.router(record)
            if answer is None:
                return  # a black hole: read, never answered
            if isinstance(answer, Reply):
                data = answer.wire(head_only=record.method == "HEAD")
                delay = answer.delay
            else:
                data, delay = answer.data, answer.delay
            if delay > 0:
                loop = asyncio.get_running_loop()
                self.timer = loop.call_later(delay, self._answer_later, data)
                return
            self._answer(data)

    def _answer_later(self, data: bytes) -> None:
        self.timer = None
        self._answer(data)
        self._pump()

    def _answer(self, data: bytes) -> None:
        record = self.record
        self._done()
        if self.transport is None or self.transport.is_closing():
            return
        self.transport.write(data)
        if record is not None and not record.keep_alive:
            self.transport.close()

    def _done(self) -> None:
        record, self.record = self.record, None
        if record is not None and self.server.on_done is not None:
            self.server.on_done(record)


def run_until_signalled(
    listen: Callable[[LoopServer], Awaitable[str]], **server_kwargs: Any
) -> None:
    """A server process's main: ``listen(server)`` opens the sockets and returns the
    line to print when they listen (``ready ...``); then serve until SIGTERM or
    SIGINT (the parent stops the process by PID)."""

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        server = LoopServer(**server_kwargs)
        print(await listen(server), flush=True)
        await stop.wait()
        server.close()

    asyncio.run(serve())
