"""A TCP proxy between the app and the shared PostgreSQL server that a test can cut and restore.

A real outage without touching the shared server: `cut()` closes every proxied connection and
stops listening (new connections are refused), `restore()` listens again on the same port.
`lose_commit_reply()` lets a COMMIT reach the server and then drops the connection before
the server's answer reaches the app, so the commit happens but the app cannot know it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

from sqlalchemy.engine import make_url

# psycopg sends COMMIT as a simple query message: 'Q', int32 length (4 + 7), "COMMIT\0".
COMMIT_MESSAGE = b"Q\x00\x00\x00\x0bCOMMIT\x00"


class DatabaseProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._listener: socket.socket | None = None
        self._pairs: list[_Pair] = []
        self._lock = threading.Lock()
        self._drop_after: bytes | None = None
        self.commits_lost = 0
        self.commit_done = threading.Event()
        self._listen()

    def url(self, database_url: str) -> str:
        """`database_url` (on the target server) rewritten to go through the proxy."""
        url = make_url(database_url).set(host="127.0.0.1", port=self.port)
        return url.render_as_string(hide_password=False)

    def cut(self) -> None:
        """Refuse new connections and break every open one, as a server going away does."""
        listener, self._listener = self._listener, None
        if listener is not None:
            _close(listener)  # shutdown first: a close alone does not wake a blocked accept()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            pair.close()

    def restore(self) -> None:
        if self._listener is None:
            self._listen()

    def lose_commit_reply(self, after: bytes) -> None:
        """The next COMMIT of a transaction that sent `after` (a piece of SQL such as
        b"INSERT INTO instances") is carried out, but its reply never reaches the app."""
        self._drop_after = after

    def close(self) -> None:
        self.cut()

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            pair = _Pair(client, server)
            with self._lock:
                self._pairs.append(pair)
            threading.Thread(target=self._upstream, args=(pair,), daemon=True).start()
            threading.Thread(target=self._downstream, args=(pair,), daemon=True).start()

    def _upstream(self, pair: _Pair) -> None:
        """App to server. A COMMIT marked to be lost: the app's side is closed first (it sees the
        connection drop), then the COMMIT goes on to the server, whose answer is dropped."""
        while True:
            try:
                data = pair.client.recv(65536)
            except OSError:
                break
            if not data:
                break
            marker = self._drop_after
            if marker is not None and marker in data:
                pair.armed = True
            if pair.armed and marker is not None and COMMIT_MESSAGE in data:
                self._drop_after = None
                pair.muted = True
                _close(pair.client)
            try:
                pair.server.sendall(data)
            except OSError:
                break
            if pair.muted:
                return  # the downstream thread waits for the answer and closes the server side
        pair.close()

    def _downstream(self, pair: _Pair) -> None:
        while True:
            try:
                data = pair.server.recv(65536)
            except OSError:
                break
            if not data:
                break
            if pair.muted:
                self.commits_lost += 1  # the server answered the COMMIT: it is done
                self.commit_done.set()
                break
            try:
                pair.client.sendall(data)
            except OSError:
                break
        pair.close()


class _Pair:
    def __init__(self, client: socket.socket, server: socket.socket) -> None:
        self.client = client
        self.server = server
        self.armed = False
        self.muted = False

    def close(self) -> None:
        _close(self.client, self.server)


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()


@contextlib.contextmanager
def proxied(database_url: str) -> Iterator[tuple[DatabaseProxy, str]]:
    """A proxy to the server of `database_url`, and the URL that goes through it."""
    url = make_url(database_url)
    proxy = DatabaseProxy(url.host or "127.0.0.1", url.port or 5432)
    try:
        yield proxy, proxy.url(database_url)
    finally:
        proxy.close()
