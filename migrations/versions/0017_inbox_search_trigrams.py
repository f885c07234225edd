"""inbox search trigrams: on PostgreSQL, searching the inbox by any part of a task title or
business key reads trigram indexes instead of every open task and instance

Two GIN indexes of the `pg_trgm` extension: the titles of the open tasks (the lists that search
them all are of open tasks; a user's own completed tasks are few) and the business keys of the
instances that have one. Creating the extension needs the right to (a superuser, or the owner of
the database on PostgreSQL 13 and later with a trusted extension): when it cannot be created the
migration still succeeds, without these indexes, and search works as before, only slower. Once
a superuser has run `CREATE EXTENSION pg_trgm` in the database, going back to 0016 and up again
adds them. SQLite keeps its `LIKE`, which no index helps with a leading wildcard.

Revision ID: 0017_inbox_search_trigrams
Revises: 0016_unclaimed_tasks_index
Create Date: 2026-12-06 08:00:00

"""

import logging

import sqlalchemy as sa
from alembic import op

revision = "0017_inbox_search_trigrams"
down_revision = "0016_unclaimed_tasks_index"
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql" or not _trigrams(bind):
        return
    op.create_index(
        "ix_tasks_title_trgm",
        "tasks",
        ["title"],
        postgresql_using="gin",
        postgresql_ops={"title": "gin_trgm_ops"},
        postgresql_where=sa.text("status = 'open'"),
    )
    op.create_index(
        "ix_instances_business_key_trgm",
        "instances",
        ["business_key"],
        postgresql_using="gin",
        postgresql_ops={"business_key": "gin_trgm_ops"},
        postgresql_where=sa.text("business_key IS NOT NULL"),
    )


def _trigrams(bind: sa.engine.Connection) -> bool:
    """pg_trgm is in the database, or this role may create it (in a savepoint, so a refusal
    leaves the rest of the upgrade going)."""
    found = bind.execute(sa.text("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'"))
    if found.scalar() is not None:
        return True
    try:
        with bind.begin_nested():
            bind.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
    except sa.exc.DBAPIError as error:
        reason = str(error.orig).splitlines()[0] if error.orig is not None else str(error)
        log.warning(
            "pg_trgm could not be created (%s): inbox search works without its indexes, "
            "reading every open task. To add them, have a superuser run CREATE EXTENSION "
            "pg_trgm in this database, then `flask db downgrade 0016_unclaimed_tasks_index` "
            "and `flask db upgrade`.",
            reason,
        )
        return False
    return True


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.drop_index("ix_instances_business_key_trgm", table_name="instances", if_exists=True)
    op.drop_index("ix_tasks_title_trgm", table_name="tasks", if_exists=True)
