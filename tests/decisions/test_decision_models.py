"""Resolving a decision id to its published version: partition first, then the shared models."""

from __future__ import annotations

from sqlalchemy import select

from webapp.models import DecisionModel, DecisionProvision, DecisionVersion, Partition
from webapp.models.decisions import published_decision


def _publish(session, model: DecisionModel, number: int, ids: list[str]) -> DecisionVersion:
    version = DecisionVersion(model=model, number=number, document={}, xml="<x/>", examples=[])
    session.add(version)
    session.flush()
    for decision_id in ids:
        session.add(
            DecisionProvision(version_id=version.id, model_id=model.id, decision_id=decision_id)
        )
    session.commit()
    return version


def _model(session, key: str, partition: str | None) -> DecisionModel:
    part = (
        session.scalar(select(Partition).where(Partition.key == partition)) if partition else None
    )
    model = DecisionModel(key=key, name=key, partition_id=part.id if part else None)
    session.add(model)
    session.commit()
    return model


def test_latest_version_providing_the_id_and_a_numbered_one(db_session, demo):
    finance = db_session.scalar(select(Partition).where(Partition.key == "finance"))
    model = _model(db_session, "pricing", "finance")
    v1 = _publish(db_session, model, 1, ["discount", "tier"])
    v2 = _publish(db_session, model, 2, ["discount"])

    assert published_decision(db_session, "discount", finance.id, None).id == v2.id
    assert published_decision(db_session, "tier", finance.id, None).id == v1.id
    assert published_decision(db_session, "discount", finance.id, 1).id == v1.id
    assert published_decision(db_session, "tier", finance.id, 2) is None
    assert published_decision(db_session, "discount", finance.id, 3) is None
    assert published_decision(db_session, "unknown", finance.id, None) is None


def test_partition_scoped_with_shared_models_as_fallback(db_session, demo):
    finance = db_session.scalar(select(Partition).where(Partition.key == "finance"))
    hr = db_session.scalar(select(Partition).where(Partition.key == "hr"))
    own = _publish(db_session, _model(db_session, "fin-rules", "finance"), 1, ["risk"])
    shared = _publish(db_session, _model(db_session, "shared-rules", None), 1, ["risk", "vat"])

    assert published_decision(db_session, "risk", finance.id, None).id == own.id
    assert published_decision(db_session, "risk", hr.id, None).id == shared.id
    assert published_decision(db_session, "risk", None, None).id == shared.id
    assert published_decision(db_session, "vat", finance.id, None).id == shared.id
    assert published_decision(db_session, "risk", None, 1).id == shared.id
