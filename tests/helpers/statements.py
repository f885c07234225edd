"""The SQL statements a block of code runs, as the database receives them (for tests that bound
how many a page or an action takes)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import event


@dataclass
class Seen:
    """The statements run (whitespace folded) and how many had run at each commit."""

    statements: list[str] = field(default_factory=list)
    commits: list[int] = field(default_factory=list)

    @property
    def queries(self) -> list[str]:
        """The statements but transaction control (SQLite's BEGIN), which PostgreSQL's driver
        sends without an event."""
        return [s for s in self.statements if not s.startswith(("BEGIN", "COMMIT", "ROLLBACK"))]

    def after_commit(self) -> list[str]:
        """The statements run after the last commit."""
        last = self.commits[-1] if self.commits else len(self.statements)
        return self.statements[last:]


@contextmanager
def statements(app_or_engine) -> Iterator[Seen]:
    """Record the statements run inside the block by an app's engine (or by this engine)."""
    from webapp.extensions import db

    engine = app_or_engine
    if hasattr(app_or_engine, "app_context"):
        with app_or_engine.app_context():
            engine = db.engine
    seen = Seen()

    def before(conn, cursor, statement, parameters, context, executemany) -> None:
        seen.statements.append(" ".join(statement.split()))

    def commit(conn) -> None:
        seen.commits.append(len(seen.statements))

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "commit", commit)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "commit", commit)
