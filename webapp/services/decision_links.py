"""Business rule tasks and the published decisions they name: the check drafts and publishing
see (a decision not published for the process's partition, a pinned version that does not
exist) and the decision ids the designer offers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import ColumnElement, or_, select

from webapp.extensions import db
from webapp.models.decisions import DecisionModel, DecisionProvision, published_decision
from webapp.models.session import db_session
from webapp.process.naming import Namer
from webapp.process.validation import Problem

#: The codes of the problems below; the import report lists them as decisions to import.
UNPUBLISHED = "decision.unpublished"
VERSION_UNKNOWN = "decision.version_unknown"


def problems(doc: Mapping[str, Any], partition_id: int | None) -> list[Problem]:
    """One error per business rule task whose decision has no published version for a process
    in `partition_id`, or whose pinned version does not exist (tasks naming none: validation)."""
    nodes = doc.get("nodes")
    if not isinstance(nodes, Mapping):
        return []
    namer = Namer(nodes, doc.get("flows") or {})
    session = db_session()
    found: list[Problem] = []
    for node_id, node in nodes.items():
        if not isinstance(node, dict) or node.get("kind") != "businessRuleTask":
            continue
        config = node.get("config") or {}
        decision = config.get("decision")
        if not isinstance(decision, str) or not decision.strip():
            continue
        if published_decision(session, decision, partition_id, None) is None:
            message = (
                f"Decision '{decision}': not imported yet — import its DMN file and publish it "
                f"({namer.node(node_id)} evaluates it)."
            )
            found.append(Problem(UNPUBLISHED, "error", node_id, message))
            continue
        version = config.get("version")
        pinned = config.get("binding") == "version" and isinstance(version, int)
        if pinned and published_decision(session, decision, partition_id, version) is None:
            message = (
                f"{namer.node(node_id)} evaluates version {version} of decision '{decision}', "
                "which has no such version."
            )
            found.append(Problem(VERSION_UNKNOWN, "error", node_id, message))
    return found


def decision_ids(partition_id: int | None) -> list[str]:
    """The decision ids published for a process in `partition_id` (its own and shared models)."""
    visible: ColumnElement[bool] = DecisionModel.partition_id.is_(None)
    if partition_id is not None:
        visible = or_(visible, DecisionModel.partition_id == partition_id)
    query = (
        select(DecisionProvision.decision_id)
        .join(DecisionModel, DecisionModel.id == DecisionProvision.model_id)
        .where(visible)
        .distinct()
        .order_by(DecisionProvision.decision_id)
        .limit(500)
    )
    return list(db.session.scalars(query))


def decided_in(
    partition_id: int | None,
) -> Callable[[str, int | None], tuple[int, Mapping[str, Any]] | None]:
    """How a scenario of a process in `partition_id` finds the decision versions its business
    rule tasks evaluate: (decision id, number or None) to (number, document)."""

    def decided(decision_id: str, number: int | None) -> tuple[int, Mapping[str, Any]] | None:
        found = published_decision(db_session(), decision_id, partition_id, number)
        return None if found is None else (found.number, found.document)

    return decided
