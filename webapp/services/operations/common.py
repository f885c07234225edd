"""What the operations services share: the refusal error, partition scoping, per-database SQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Integer, func, literal_column
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import UnaryExpression
from sqlalchemy.sql.operators import custom_op

from webapp.extensions import db
from webapp.models import Instance, User
from webapp.models.base import UTCDateTime
from webapp.permissions import can, partition_filter
from webapp.services.instances import InstanceError

# A refused request (code, message, HTTP status, per-field messages): the same error the
# instance service raises, so views handle refusals from both alike.
OperationsError = InstanceError


def dialect(session: Session | None = None) -> str:
    return (session or db.session).get_bind().dialect.name


def visible(user: User) -> ColumnElement[bool]:
    """Instances in no partition or in one of the user's partitions."""
    return partition_filter(Instance.partition_id, user)


def get_instance(user: User, instance_id: int, permission: str = "instances.read") -> Instance:
    """The instance if `user` holds `permission` in its partition; 404 otherwise."""
    instance = db.session.get(Instance, instance_id)
    if instance is None or not can(user, permission, instance.partition_id):
        raise OperationsError(
            "not_found", f"There is no instance {instance_id} you may see.", status=404
        )
    return instance


def hour_of(column: Any, session: Session | None = None) -> ColumnElement[str]:
    """The UTC hour of a timestamp as 'YYYY-MM-DD HH' text, grouped the same on both databases."""
    if dialect(session) == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD HH24")
    return func.strftime("%Y-%m-%d %H", column)


def unindexed(column: Any, session: Session | None = None) -> Any:
    """The column as an expression of the same value that no index serves (`+x`, `x + 0`).

    Databases walk an index in ORDER BY or GROUP BY order and visit every table row from it; when
    the filter matches few rows (or everything is counted) a table scan is several times faster.
    """
    name = dialect(session)
    if name == "sqlite":
        return UnaryExpression(column, operator=custom_op("+"), type_=column.type)
    if isinstance(column.type, Integer):
        return column.op("+", return_type=column.type)(literal_column("0"))
    if isinstance(column.type, UTCDateTime):
        return column.op("+", return_type=column.type)(literal_column("interval '0 seconds'"))
    return column


def names_by_id(model: Any, attribute: str, ids: set[int | None]) -> dict[int, str]:
    """{id: attribute} for the given ids in one query (for labels next to list rows)."""
    wanted = sorted(i for i in ids if i is not None)
    if not wanted:
        return {}
    column = getattr(model, attribute)
    rows = db.session.execute(db.select(model.id, column).where(model.id.in_(wanted)))
    return {row[0]: row[1] for row in rows}
