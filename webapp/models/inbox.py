"""Inbox data: named filters an assignee saved, and the indexes the inbox lists rely on."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.runtime import Task
from webapp.models.statuses import TaskStatus


class SavedFilter(Model):
    """A named inbox filter: the query string of the inbox URL, kept per user."""

    __tablename__ = "saved_filters"
    __table_args__ = (UniqueConstraint("user_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    query: Mapped[str] = mapped_column(String(1000), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


# The inbox tabs, badge and overdue lists; declared here (the tasks table is the engine's) so the
# models and migration 0004 agree.
tasks = Task.__table__
Index("ix_tasks_assignee_id_status_due_at", tasks.c.assignee_id, tasks.c.status, tasks.c.due_at)
Index(
    "ix_tasks_candidate_role_id_status_assignee_id",
    tasks.c.candidate_role_id,
    tasks.c.status,
    tasks.c.assignee_id,
)
Index("ix_tasks_completed_by_id_completed_at", tasks.c.completed_by_id, tasks.c.completed_at)
Index("ix_tasks_status_due_at", tasks.c.status, tasks.c.due_at)
Index("ix_tasks_open_to_partition_status", tasks.c.open_to_partition, tasks.c.status)
# "Open for my roles": every column its condition reads, over the unclaimed open tasks only, so
# counting them is an index-only scan; and their creation order for "newest first" (migration 0016).
UNCLAIMED = text(f"status = '{TaskStatus.OPEN.value}' AND assignee_id IS NULL")
Index(
    "ix_tasks_unclaimed",
    tasks.c.candidate_role_id,
    tasks.c.partition_id,
    tasks.c.open_to_partition,
    tasks.c.id,
    postgresql_where=UNCLAIMED,
    sqlite_where=UNCLAIMED,
)
Index(
    "ix_tasks_unclaimed_created_at",
    tasks.c.created_at,
    tasks.c.id,
    postgresql_where=UNCLAIMED,
    sqlite_where=UNCLAIMED,
)

# Trigram indexes for searching open task titles and business keys, which migration 0017 makes
# on PostgreSQL when the pg_trgm extension can be had. They are not in the models (SQLite, and
# PostgreSQL without pg_trgm, lack them), so comparing the models with a database skips them.
SEARCH_INDEXES = frozenset({"ix_tasks_title_trgm", "ix_instances_business_key_trgm"})


def compared_with_models(name: str | None, type_: str, _parents: dict[str, str | None]) -> bool:
    """Alembic's `include_name`: every schema object but the search indexes."""
    return not (type_ == "index" and name in SEARCH_INDEXES)
