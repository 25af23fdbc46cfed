"""A throwaway ``redis-server`` on 127.0.0.1, for tests and the cache benchmark.

Started on a free port with no persistence (``--save ''``, no append-only file) in
its own temporary directory, waited for until it answers PING, and stopped by PID.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Self

__all__ = ["RedisServer", "redis_server_missing"]

START_TIMEOUT = 10.0


def redis_server_missing() -> str | None:
    """Why no server can be started here, or ``None``."""
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (Debian: apt-get install redis-server)"
    try:
        import redis  # noqa: F401
    except ImportError:
        return "redis-py is not installed (pip install -e '.[test]')"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class RedisServer:
    """``with RedisServer() as server: server.url`` -- one redis-server process."""

    def __init__(self) -> None:
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._dir = ""

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def start(self) -> Self:
        self._dir = tempfile.mkdtemp(prefix="robots-std-redis-")
        # A port picked by the kernel may be taken again before redis binds it.
        for _ in range(3):
            self.port = _free_port()
            self._process = subprocess.Popen(
                [
                    "redis-server",
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--daemonize",
                    "no",
                    "--dir",
                    self._dir,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if self._wait_ready():
                return self
            self._stop_process()
        self.stop()
        raise RuntimeError("redis-server did not start (3 tries)")

    def _wait_ready(self) -> bool:
        import redis

        assert self._process is not None
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        deadline = time.monotonic() + START_TIMEOUT
        try:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    return False  # exited: the port was taken
                with contextlib.suppress(redis.RedisError):
                    if client.ping():
                        return True
                time.sleep(0.05)
            return False
        finally:
            client.close()

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s), by its PID."""
        self._stop_process()
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = ""

    def _stop_process(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


if __name__ == "__main__":  # a quick manual check
    with RedisServer() as server:
        print(server.url, os.getpid())
