"""A PostgreSQL server of the test's own that asks for a password, as a production one does
(CI's server trusts every local connection, so a wrong password would go unnoticed there)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PASSWORD = "right-password-for-the-test"


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_server_user(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run it as `postgres` then."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


@contextmanager
def password_postgres() -> Iterator[str]:
    """A new server on a free loopback port with scram-sha-256 for everyone; yields the URL of
    its `postgres` database with the right password. Its folder is directly under the system's
    temporary folder, which the `postgres` user can reach (pytest's folders are root's only)."""
    binaries = _binaries()
    if binaries is None:
        pytest.skip("PostgreSQL binaries (/usr/lib/postgresql/*/bin) are not installed")
    folder = Path(tempfile.mkdtemp(prefix="flowdesk-pg-"))
    data, password_file = folder / "data", folder / "password"
    password_file.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        shutil.chown(password_file, "postgres", "postgres")
    port = _free_port()
    initdb = [str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--no-sync"]
    subprocess.run(
        _as_server_user([*initdb, "-A", "scram-sha-256", f"--pwfile={password_file}"]),
        check=True,
        capture_output=True,
    )
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off"
    pg_ctl = [str(binaries / "pg_ctl"), "-D", str(data), "-w"]
    subprocess.run(
        _as_server_user([*pg_ctl, "-l", str(folder / "server.log"), "-o", options, "start"]),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_server_user([*pg_ctl, "-m", "immediate", "stop"]), capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
