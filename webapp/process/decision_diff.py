"""What changed between two decision model documents: decisions, hit policies, columns, rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_COLUMN_FIELDS = {
    "inputs": ("label", "text", "type"),
    "outputs": ("label", "name", "type", "values"),
}


@dataclass(frozen=True)
class DecisionChange:
    """One change: `status` is added, removed or changed; `what` names the element."""

    decision_id: str
    status: str
    what: str
    detail: str = ""


def diff_decisions(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[DecisionChange]:
    """The changes from `old` to `new`, decision by decision, in the new document's order."""
    before = {decision["id"]: decision for decision in old.get("decisions") or []}
    after = {decision["id"]: decision for decision in new.get("decisions") or []}
    changes = [
        DecisionChange(decision_id, "removed", "decision", _name(before[decision_id]))
        for decision_id in before
        if decision_id not in after
    ]
    for decision_id, decision in after.items():
        if decision_id not in before:
            changes.append(DecisionChange(decision_id, "added", "decision", _name(decision)))
        else:
            changes.extend(_decision_changes(before[decision_id], decision))
    return changes


def _name(decision: Mapping[str, Any]) -> str:
    return str(decision.get("name") or decision["id"])


def _decision_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[DecisionChange]:
    decision_id = new["id"]
    changes = []
    if _name(old) != _name(new):
        changes.append(
            DecisionChange(decision_id, "changed", "name", f"{_name(old)} → {_name(new)}")
        )
    if sorted(old.get("requires") or []) != sorted(new.get("requires") or []):
        changes.append(
            DecisionChange(
                decision_id,
                "changed",
                "required decisions",
                f"{', '.join(old.get('requires') or []) or 'none'} → "
                f"{', '.join(new.get('requires') or []) or 'none'}",
            )
        )
    old_literal, new_literal = old.get("literal") or {}, new.get("literal") or {}
    for field in ("text", "variable", "type"):
        if old_literal.get(field) != new_literal.get(field):
            changes.append(
                DecisionChange(
                    decision_id,
                    "changed",
                    f"literal expression {field}",
                    f"{old_literal.get(field) or '—'} → {new_literal.get(field) or '—'}",
                )
            )
    changes.extend(_table_changes(decision_id, old.get("table") or {}, new.get("table") or {}))
    return changes


def _table_changes(
    decision_id: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> list[DecisionChange]:
    changes = []
    for field in ("hitPolicy", "aggregation"):
        if old.get(field) != new.get(field):
            label = "hit policy" if field == "hitPolicy" else "aggregation"
            changes.append(
                DecisionChange(
                    decision_id,
                    "changed",
                    label,
                    f"{old.get(field) or 'none'} → {new.get(field) or 'none'}",
                )
            )
    for kind, fields in _COLUMN_FIELDS.items():
        changes.extend(_column_changes(decision_id, kind, fields, old, new))
    changes.extend(_rule_changes(decision_id, old, new))
    return changes


def _column_changes(
    decision_id: str,
    kind: str,
    fields: tuple[str, ...],
    old: Mapping[str, Any],
    new: Mapping[str, Any],
) -> list[DecisionChange]:
    singular = "input column" if kind == "inputs" else "output column"
    before = {column["id"]: column for column in old.get(kind) or []}
    after = {column["id"]: column for column in new.get(kind) or []}
    changes = []
    for column_id, column in before.items():
        if column_id not in after:
            changes.append(DecisionChange(decision_id, "removed", singular, _column(column)))
    for column_id, column in after.items():
        if column_id not in before:
            changes.append(DecisionChange(decision_id, "added", singular, _column(column)))
            continue
        differing = [f for f in fields if before[column_id].get(f) != column.get(f)]
        if differing:
            details = "; ".join(
                f"{f}: {_text(before[column_id].get(f))} → {_text(column.get(f))}"
                for f in differing
            )
            changes.append(
                DecisionChange(decision_id, "changed", f"{singular} {_column(column)}", details)
            )
    return changes


def _column(column: Mapping[str, Any]) -> str:
    return str(column.get("label") or column.get("name") or column["id"])


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "—"
    return "—" if value in (None, "") else str(value)


def _rule_texts(rule: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        tuple(entry.get("text") or "" for entry in rule.get("inputs") or []),
        tuple(entry.get("text") or "" for entry in rule.get("outputs") or []),
        rule.get("description") or "",
    )


def _rule_summary(rule: Mapping[str, Any]) -> str:
    ins = ", ".join(entry.get("text") or "-" for entry in rule.get("inputs") or [])
    outs = ", ".join(entry.get("text") or "-" for entry in rule.get("outputs") or [])
    return f"{ins} → {outs}"


def _rule_changes(
    decision_id: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> list[DecisionChange]:
    before = {rule["id"]: (n, rule) for n, rule in enumerate(old.get("rules") or [], 1)}
    after = {rule["id"]: (n, rule) for n, rule in enumerate(new.get("rules") or [], 1)}
    changes = []
    for rule_id, (number, rule) in before.items():
        if rule_id not in after:
            changes.append(
                DecisionChange(decision_id, "removed", f"rule {number}", _rule_summary(rule))
            )
    kept_before = [rule_id for rule_id in before if rule_id in after]
    kept_after = [rule_id for rule_id in after if rule_id in before]
    for rule_id, (number, rule) in after.items():
        if rule_id not in before:
            changes.append(
                DecisionChange(decision_id, "added", f"rule {number}", _rule_summary(rule))
            )
            continue
        old_number, old_rule = before[rule_id]
        if _rule_texts(old_rule) != _rule_texts(rule):
            changes.append(
                DecisionChange(
                    decision_id,
                    "changed",
                    f"rule {number}",
                    f"{_rule_summary(old_rule)}  ⇒  {_rule_summary(rule)}",
                )
            )
        elif kept_before.index(rule_id) != kept_after.index(rule_id):
            changes.append(
                DecisionChange(decision_id, "moved", f"rule {number}", f"was rule {old_number}")
            )
    return changes
