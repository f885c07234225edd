"""DMN decision models (one editable draft) and their published, immutable, numbered versions.

A version lists the decision ids it provides (one `DecisionProvision` row each), so a business
rule task resolves a decision id to the model and version that provides it in its partition.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint, select
from sqlalchemy.orm import Mapped, Session, mapped_column, relationship

from webapp.models.auth import Partition, User
from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.types import OrderedJSON


class DecisionModel(Model):
    """A DMN file the modellers edit as decision tables: one draft, many published versions."""

    __tablename__ = "decision_models"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(100), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    partition_id: Mapped[int | None] = mapped_column(
        ForeignKey("partitions.id", ondelete="RESTRICT"), index=True, nullable=True
    )
    #: The decision model document (webapp.process.dmn) being edited; None before the first import.
    draft_document: Mapped[dict[str, Any] | None] = mapped_column(
        OrderedJSON, nullable=True, deferred=True, deferred_group="draft"
    )
    #: Example rows (inputs -> expected result) kept with the draft, run on the page and at publish.
    draft_examples: Mapped[list[dict[str, Any]]] = mapped_column(
        OrderedJSON, default=list, deferred=True, deferred_group="draft"
    )
    draft_revision: Mapped[int] = mapped_column(Integer, default=0)
    #: What the last import reported (problems with decision, rule, column and line).
    import_problems: Mapped[list[dict[str, Any]]] = mapped_column(
        OrderedJSON, default=list, deferred=True
    )
    created_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)

    partition: Mapped[Partition | None] = relationship(lazy="joined")
    updated_by: Mapped[User | None] = relationship(foreign_keys=[updated_by_id], lazy="joined")
    versions: Mapped[list[DecisionVersion]] = relationship(
        back_populates="model", order_by="DecisionVersion.number", lazy="select"
    )

    def __repr__(self) -> str:
        return f"<DecisionModel {self.key}>"


class DecisionVersion(Model):
    """A published version: the document the engine evaluates, its DMN XML and example rows."""

    __tablename__ = "decision_versions"
    __table_args__ = (UniqueConstraint("model_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(
        ForeignKey("decision_models.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int] = mapped_column(Integer)
    document: Mapped[dict[str, Any]] = mapped_column(OrderedJSON)
    xml: Mapped[str] = mapped_column(Text, deferred=True)  # only downloads
    examples: Mapped[list[dict[str, Any]]] = mapped_column(OrderedJSON, default=list)
    change_note: Mapped[str] = mapped_column(String(500), default="")
    published_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    published_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    model: Mapped[DecisionModel] = relationship(back_populates="versions", lazy="joined")
    published_by: Mapped[User | None] = relationship(lazy="joined", foreign_keys=[published_by_id])

    def __repr__(self) -> str:
        return f"<DecisionVersion {self.model_id} v{self.number}>"


class DecisionProvision(Model):
    """One decision id a published version provides: how a decision id finds its model."""

    __tablename__ = "decision_provisions"
    __table_args__ = (UniqueConstraint("version_id", "decision_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(
        ForeignKey("decision_versions.id", ondelete="CASCADE"), index=True
    )
    model_id: Mapped[int] = mapped_column(
        ForeignKey("decision_models.id", ondelete="CASCADE"), index=True
    )
    decision_id: Mapped[str] = mapped_column(String(200), index=True)


def providing_model(session: Session, decision_id: str, partition: int | None) -> int | None:
    """The id of the model whose versions provide `decision_id` in exactly that partition."""
    query = (
        select(DecisionModel.id)
        .join(DecisionProvision, DecisionProvision.model_id == DecisionModel.id)
        .where(DecisionProvision.decision_id == decision_id)
        .where(
            DecisionModel.partition_id.is_(None)
            if partition is None
            else DecisionModel.partition_id == partition
        )
        .order_by(DecisionModel.id)
        .limit(1)
    )
    return session.scalar(query)


def published_decision(
    session: Session, decision_id: str, partition: int | None, version: int | None
) -> DecisionVersion | None:
    """The published version providing `decision_id` for a process in `partition` (an id).

    The model in the same partition wins; a model in no partition serves every partition.
    `version` None: the latest version that provides the id; otherwise that version number of
    the providing model (None when it does not exist or no longer provides the id).
    """
    model_id = providing_model(session, decision_id, partition)
    if model_id is None and partition is not None:
        model_id = providing_model(session, decision_id, None)
    if model_id is None:
        return None
    query = (
        select(DecisionVersion)
        .join(DecisionProvision, DecisionProvision.version_id == DecisionVersion.id)
        .where(DecisionVersion.model_id == model_id)
        .where(DecisionProvision.decision_id == decision_id)
    )
    if version is None:
        query = query.order_by(DecisionVersion.number.desc()).limit(1)
    else:
        query = query.where(DecisionVersion.number == version)
    return session.scalar(query)
