"""Decision models: import DMN files, edit the draft table by table, test it with example rows,
publish numbered immutable versions, compare and export them.

Each public change is one transaction of its own (`transactional`): a refused change leaves the
draft exactly as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from webapp.extensions import db
from webapp.infra.database import transactional
from webapp.models import DecisionModel, DecisionProvision, DecisionVersion, User
from webapp.models.base import utcnow
from webapp.process import decision_edits, decision_examples, dmn
from webapp.process.decision_diff import DecisionChange, diff_decisions
from webapp.process.decision_examples import ExampleError, ExampleResult
from webapp.services import processes

KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")


class DecisionServiceError(Exception):
    """A refused change; `code` is stable, `status` the HTTP status that fits, `field` the form
    field it concerns (when one does)."""

    status = 422

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str | None = None,
        problems: list[dmn.DmnProblem] | None = None,
        failures: list[ExampleResult] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.problems = problems or []
        self.failures = failures or []


class StaleDraft(DecisionServiceError):
    status = 409


@dataclass
class DraftState:
    """The draft after a change: its revision and what `check` (and translation) says of it."""

    revision: int
    problems: list[dmn.DmnProblem] = field(default_factory=list)


def _problem_key(problem: dmn.DmnProblem) -> tuple[Any, ...]:
    return (problem.code, problem.element_id, problem.message)


def retranslate(document: Mapping[str, Any]) -> dmn.DmnImport:
    """The document read again from its own DMN file: every entry's text translated afresh."""
    try:
        return dmn.read_dmn(dmn.write_dmn(document))
    except dmn.DmnImportError as exc:
        raise DecisionServiceError("draft.unwritable", exc.message) from None


def problems_of(
    document: Mapping[str, Any], translated: list[dmn.DmnProblem]
) -> list[dmn.DmnProblem]:
    """Translation problems and `check`'s, each once, blocking ones first."""
    seen: set[tuple[Any, ...]] = set()
    merged = []
    for problem in [*translated, *dmn.check(document)]:
        if _problem_key(problem) not in seen:
            seen.add(_problem_key(problem))
            merged.append(problem)
    return sorted(merged, key=lambda p: not p.blocking)


def draft_problems(model: DecisionModel) -> list[dmn.DmnProblem]:
    """What is wrong with the stored draft now."""
    if model.draft_document is None:
        return []
    return problems_of(model.draft_document, retranslate(model.draft_document).problems)


def check_key(key: str) -> str:
    key = (key or "").strip()
    if not KEY.match(key):
        raise DecisionServiceError(
            "key.invalid",
            "A decision model key starts with a letter or _ and has up to 100 letters, digits, "
            "'.', '-' or '_'.",
            field="key",
        )
    if db.session.scalar(select(DecisionModel.id).where(DecisionModel.key == key)) is not None:
        raise DecisionServiceError(
            "key.taken", f"A decision model with key '{key}' exists already.", field="key"
        )
    return key


def read_file(data: bytes | str) -> tuple[dmn.DmnImport, list[dict[str, Any]]]:
    """The file's document and problems, and its example rows; refused when unreadable."""
    try:
        xml, rows = decision_examples.split(data)
        imported = dmn.read_dmn(xml, first_match_python=True)
    except ExampleError as exc:
        raise DecisionServiceError("import.examples", exc.message, field="file") from None
    except dmn.DmnImportError as exc:
        where = f" (line {exc.line})" if exc.line else ""
        raise DecisionServiceError(
            "import.unreadable", f"The file cannot be read{where}: {exc.message}", field="file"
        ) from None
    if not dmn.decision_ids(imported.document):
        raise DecisionServiceError("import.empty", "The file defines no decision.", field="file")
    return imported, rows


def _store(
    model: DecisionModel,
    document: dict[str, Any],
    examples: list[dict[str, Any]] | None,
    actor: User | None,
) -> None:
    model.draft_document = document
    if examples is not None:
        model.draft_examples = examples
    model.draft_revision = (model.draft_revision or 0) + 1
    model.updated_by_id = actor.id if actor else None
    model.updated_at = utcnow()


@transactional
def import_new(
    data: bytes | str,
    *,
    key: str = "",
    name: str = "",
    partition_id: int | None,
    actor: User | None,
) -> tuple[DecisionModel, list[dmn.DmnProblem]]:
    """A new decision model whose draft is the file; its key defaults to the file's id."""
    imported, rows = read_file(data)
    document = imported.document
    model = DecisionModel(
        key=check_key(key or str(document.get("id") or "")),
        name=(name or document.get("name") or document.get("id") or "Decisions")[:200],
        description="",
        partition_id=partition_id,
        draft_revision=0,
        created_by_id=actor.id if actor else None,
        import_problems=[p.to_json() for p in imported.problems],
    )
    db.session.add(model)
    _store(model, document, rows, actor)
    db.session.flush()
    return model, problems_of(document, imported.problems)


@transactional
def import_draft(
    model: DecisionModel, data: bytes | str, *, base_revision: int, actor: User | None
) -> list[dmn.DmnProblem]:
    """Replace the draft (and its example rows) with the file."""
    check_revision(model, base_revision)
    imported, rows = read_file(data)
    model.import_problems = [p.to_json() for p in imported.problems]
    _store(model, imported.document, rows, actor)
    return problems_of(imported.document, imported.problems)


def check_revision(model: DecisionModel, base_revision: int) -> None:
    if base_revision != model.draft_revision:
        raise StaleDraft(
            "draft.stale",
            f"This draft was saved by someone else (revision {model.draft_revision}; you "
            f"edited revision {base_revision}). Reload to see their changes.",
        )


def _draft(model: DecisionModel) -> dict[str, Any]:
    if model.draft_document is None:
        raise DecisionServiceError("draft.empty", "This decision model has no draft yet.")
    return model.draft_document


def preview_edit(
    model: DecisionModel, edit: str, decision_id: str, params: Mapping[str, Any]
) -> tuple[dict[str, Any], list[dmn.DmnProblem]]:
    """The draft as the edit would leave it, and its problems; nothing is stored."""
    try:
        changed = decision_edits.apply(_draft(model), edit, decision_id, params)
    except decision_edits.EditError as exc:
        raise DecisionServiceError("edit.invalid", exc.message, field=exc.field) from None
    translated = retranslate(changed)
    return translated.document, problems_of(translated.document, translated.problems)


@transactional
def edit_draft(
    model: DecisionModel,
    edit: str,
    decision_id: str,
    params: Mapping[str, Any],
    *,
    base_revision: int,
    actor: User | None,
) -> DraftState:
    """Make one editor change to the draft unless someone saved since `base_revision`."""
    check_revision(model, base_revision)
    document, problems = preview_edit(model, edit, decision_id, params)
    _store(model, document, None, actor)
    return DraftState(model.draft_revision, problems)


def _coerce(value: Any, kind: str | None) -> Any:
    """A form field's text as the column's type (empty is null)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text == "":
        return None
    if kind in ("integer", "long"):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"'{text}' is not a whole number") from None
    if kind in ("double", "number"):
        try:
            return float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise ValueError(f"'{text}' is not a number") from None
    if kind == "boolean":
        if text.lower() not in ("true", "false"):
            raise ValueError(f"'{text}' is not true or false")
        return text.lower() == "true"
    return text


def typed_inputs(
    document: Mapping[str, Any], decision_id: str, form: Mapping[str, Any]
) -> dict[str, Any]:
    """The input column values of a form (keyed by column id), each as its column's type."""
    values = {}
    try:
        columns = dmn.input_columns(document, decision_id)
    except dmn.DecisionError as exc:
        raise DecisionServiceError("decision.unknown", exc.message, field="decision") from None
    for column in columns:
        try:
            values[column["id"]] = _coerce(form.get(column["id"], ""), column.get("type"))
        except ValueError as exc:
            raise DecisionServiceError(
                "input.invalid", f"{column['label']}: {exc}.", field=column["id"]
            ) from None
    return values


def try_table(
    document: Mapping[str, Any], decision_id: str, values: Mapping[str, Any]
) -> dmn.Evaluation:
    """Match the rules against input values given directly (the "try it" form)."""
    try:
        return dmn.evaluate_table(document, decision_id, values)
    except dmn.DecisionError as exc:
        raise DecisionServiceError("try.failed", str(exc), field="decision") from None


def parse_expected(text: str) -> Any:
    """An expected result typed in a form: JSON (`3`, `"A"`, `{"a": 1}`, `null`) or plain text."""
    stripped = (text or "").strip()
    if stripped == "":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return stripped


@transactional
def add_example(
    model: DecisionModel,
    decision_id: str,
    inputs: Mapping[str, Any],
    expected: Any,
    *,
    name: str = "",
    base_revision: int,
    actor: User | None,
) -> DraftState:
    """Keep an example row with the draft."""
    check_revision(model, base_revision)
    try:
        row = decision_examples.make_row(_draft(model), decision_id, inputs, expected, name)
    except ExampleError as exc:
        raise DecisionServiceError("example.invalid", exc.message, field=exc.field) from None
    _store(model, model.draft_document or {}, [*(model.draft_examples or []), row], actor)
    return DraftState(model.draft_revision)


@transactional
def remove_example(
    model: DecisionModel, index: int, *, base_revision: int, actor: User | None
) -> DraftState:
    check_revision(model, base_revision)
    rows = list(model.draft_examples or [])
    if not 0 <= index < len(rows):
        raise DecisionServiceError("example.unknown", f"There is no example {index + 1}.")
    del rows[index]
    _store(model, _draft(model), rows, actor)
    return DraftState(model.draft_revision)


def run_examples(model: DecisionModel) -> list[ExampleResult]:
    return decision_examples.run(_draft(model), list(model.draft_examples or []))


def latest_version(model: DecisionModel) -> DecisionVersion | None:
    return db.session.scalar(
        select(DecisionVersion)
        .where(DecisionVersion.model_id == model.id)
        .order_by(DecisionVersion.number.desc())
        .limit(1)
    )


def _other_provider(model: DecisionModel, decision_id: str) -> DecisionModel | None:
    partition = (
        DecisionModel.partition_id.is_(None)
        if model.partition_id is None
        else DecisionModel.partition_id == model.partition_id
    )
    return db.session.scalar(
        select(DecisionModel)
        .join(DecisionProvision, DecisionProvision.model_id == DecisionModel.id)
        .where(DecisionProvision.decision_id == decision_id, DecisionModel.id != model.id)
        .where(partition)
        .limit(1)
    )


def export_xml(document: Mapping[str, Any], examples: list[dict[str, Any]]) -> bytes:
    """The DMN 1.3 file of a document, its example rows under Flowdesk's extension namespace."""
    xml = dmn.write_dmn(document)
    return decision_examples.embed(xml, examples) if examples else xml


def _same_content(version: DecisionVersion, document: Mapping[str, Any], rows: list[Any]) -> bool:
    return decision_examples.jsonable(version.document) == decision_examples.jsonable(
        document
    ) and decision_examples.jsonable(version.examples or []) == decision_examples.jsonable(rows)


@transactional
def publish(
    model: DecisionModel,
    *,
    actor: User | None,
    note: str = "",
    base_revision: int | None = None,
) -> DecisionVersion:
    """Publish the draft as version N+1. Refused, naming why: blocking problems, a failing
    example row, a decision id another model of the partition provides, nothing changed."""
    if base_revision is not None:
        check_revision(model, base_revision)
    translated = retranslate(_draft(model))
    document = translated.document
    blocking = [p for p in problems_of(document, translated.problems) if p.blocking]
    if blocking:
        count = len(blocking)
        raise DecisionServiceError(
            "publish.problems",
            f"The draft has {count} blocking problem{'s' if count != 1 else ''}: "
            + "; ".join(p.message for p in blocking[:5]),
            problems=blocking,
        )
    rows = list(model.draft_examples or [])
    failures = [r for r in decision_examples.run(document, rows) if not r.passed]
    if failures:
        raise DecisionServiceError(
            "publish.examples",
            "Example rows fail on this draft: " + ", ".join(r.label for r in failures) + ".",
            failures=failures,
        )
    for decision_id in dmn.decision_ids(document):
        other = _other_provider(model, decision_id)
        if other is not None:
            raise DecisionServiceError(
                "publish.duplicate",
                f"Decision '{decision_id}' is already provided by decision model "
                f"'{other.key}' ({other.name}) in this partition.",
            )
    latest = latest_version(model)
    if latest is not None and _same_content(latest, document, rows):
        raise DecisionServiceError(
            "publish.unchanged", f"Nothing changed since version {latest.number}."
        )
    number = (
        db.session.scalar(
            select(func.max(DecisionVersion.number)).where(DecisionVersion.model_id == model.id)
        )
        or 0
    ) + 1
    version = DecisionVersion(
        model_id=model.id,
        number=number,
        document=document,
        xml=export_xml(document, rows).decode("utf-8"),
        examples=rows,
        change_note=(note or "").strip()[:500],
        published_by_id=actor.id if actor else None,
    )
    db.session.add(version)
    db.session.flush()
    for decision_id in dmn.decision_ids(document):
        db.session.add(
            DecisionProvision(version_id=version.id, model_id=model.id, decision_id=decision_id)
        )
    db.session.flush()
    processes.recheck_decision_users(dmn.decision_ids(document))
    return version


def versions(model: DecisionModel) -> list[DecisionVersion]:
    """Published versions, newest first."""
    return list(
        db.session.scalars(
            select(DecisionVersion)
            .where(DecisionVersion.model_id == model.id)
            .order_by(DecisionVersion.number.desc())
        )
    )


def get_version(model: DecisionModel, number: int) -> DecisionVersion | None:
    return db.session.scalar(
        select(DecisionVersion).where(
            DecisionVersion.model_id == model.id, DecisionVersion.number == number
        )
    )


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[DecisionChange]:
    return diff_decisions(old, new)


def lock_model(model_id: int) -> DecisionModel | None:
    """Load a decision model holding its row lock (PostgreSQL) for a read-check-write."""
    return db.session.scalar(
        select(DecisionModel).where(DecisionModel.id == model_id).with_for_update(of=DecisionModel)
    )
