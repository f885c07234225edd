"""Throw-away databases for the test suite and the benchmarks: created empty, dropped after."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from webapp.config import normalize_database_url


def is_postgres(url: str | None) -> bool:
    return bool(url) and str(url).startswith(("postgres://", "postgresql"))


@contextmanager
def scratch_database(server_url: str | None, folder: Path, prefix: str) -> Iterator[str]:
    """A new, empty database on the PostgreSQL server `server_url` names (dropped on exit, its
    connections closed first), or else a new SQLite file in `folder`."""
    if not is_postgres(server_url):
        yield f"sqlite:///{Path(folder) / f'{prefix}-{uuid.uuid4().hex[:8]}.sqlite3'}"
        return
    base = make_url(normalize_database_url(str(server_url)))
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
                {"n": name},
            )
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()
