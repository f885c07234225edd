"""The published decisions a scenario's business rule tasks evaluate, copied into its scratch
database under the version numbers they have, so the real step resolves them as it would."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from webapp.models.decisions import DecisionModel, DecisionProvision, DecisionVersion

#: The published decision a business rule task evaluates: (decision id, version number or None
#: for the latest) to (number, document), or None when there is none.
Decided = Callable[[str, int | None], tuple[int, Mapping[str, Any]] | None]


def no_decisions(decision_id: str, number: int | None) -> None:
    return None


def wanted(document: Mapping[str, Any]) -> dict[str, set[int | None]]:
    """The decision ids the document's business rule tasks evaluate, each with the versions
    they pin (None: the latest)."""
    found: dict[str, set[int | None]] = {}
    nodes = document.get("nodes")
    for node in nodes.values() if isinstance(nodes, Mapping) else ():
        if not isinstance(node, Mapping) or node.get("kind") != "businessRuleTask":
            continue
        config = node.get("config") or {}
        decision, version = config.get("decision"), config.get("version")
        if isinstance(decision, str) and decision:
            pinned = config.get("binding") == "version" and isinstance(version, int)
            found.setdefault(decision, set()).add(version if pinned else None)
    return found


def copy_decisions(session: Session, document: Mapping[str, Any], decided: Decided) -> None:
    """Copy each decision version the document's business rule tasks would evaluate; one that
    is not published stays missing, so the task's incident says so as it would live."""
    for decision, numbers in wanted(document).items():
        for number in sorted(numbers, key=lambda n: n or 0):
            found = decided(decision, number)
            if found is not None:
                _copy(session, decision, *found)
    session.flush()


def _copy(session: Session, decision: str, number: int, document: Mapping[str, Any]) -> None:
    key = f"scenario:{decision}"[:100]
    model = session.scalar(select(DecisionModel).where(DecisionModel.key == key))
    if model is None:
        model = DecisionModel(key=key, name=decision[:200], partition_id=None)
        session.add(model)
        session.flush()
    exists = session.scalar(
        select(DecisionVersion.id).where(
            DecisionVersion.model_id == model.id, DecisionVersion.number == number
        )
    )
    if exists is not None:
        return
    version = DecisionVersion(
        model_id=model.id, number=number, document=dict(document), xml="", examples=[]
    )
    session.add(version)
    session.flush()
    session.add(DecisionProvision(version_id=version.id, model_id=model.id, decision_id=decision))
