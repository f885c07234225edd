"""Processes: create, save drafts (with a revision check), publish immutable versions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from webapp.extensions import db
from webapp.models import Process, ProcessVersion, User
from webapp.models.base import utcnow
from webapp.process import document as documents
from webapp.process.bpmn import export_bpmn
from webapp.process.validation import Problem, has_errors, validate

KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")


class ProcessError(Exception):
    """A refused change; `code` is stable, `status` the HTTP status that fits."""

    status = 422

    def __init__(self, code: str, message: str, *, problems: list[Problem] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.problems = problems or []


class StaleDraft(ProcessError):
    status = 409


@dataclass(frozen=True)
class SaveResult:
    revision: int
    problems: list[Problem]


def tool_specs() -> dict:
    from webapp import tools

    return tools.specs()


def check_key(key: str) -> str:
    key = (key or "").strip()
    if not KEY.match(key):
        raise ProcessError(
            "key.invalid",
            "A process key starts with a letter or _ and has up to 100 letters, digits, "
            "'.', '-' or '_'.",
        )
    return key


def create_process(
    key: str,
    name: str,
    *,
    partition_id: int | None,
    actor: User | None,
    document: dict[str, Any] | None = None,
) -> Process:
    """Add a process with an empty (or given) draft; the caller commits."""
    key = check_key(key)
    if db.session.scalar(select(Process.id).where(Process.key == key)) is not None:
        raise ProcessError("key.taken", f"A process with the key {key!r} exists.")
    process = Process(
        key=key,
        name=(name or key).strip()[:200],
        partition_id=partition_id,
        created_by_id=actor.id if actor else None,
        updated_by_id=actor.id if actor else None,
    )
    db.session.add(process)
    doc = document or documents.new_document(key, process.name)
    _store_draft(process, documents.normalize(doc), actor)
    return process


def _store_draft(process: Process, doc: dict[str, Any], actor: User | None) -> list[Problem]:
    doc = dict(doc, key=process.key, name=process.name)
    problems = validate(doc, tool_specs())
    process.draft_document = doc
    process.draft_xml = export_bpmn(doc)
    process.draft_hash = documents.content_hash(doc)
    process.draft_problems = [p.as_dict() for p in problems]
    process.draft_revision = (process.draft_revision or 0) + 1
    process.updated_by_id = actor.id if actor else None
    process.updated_at = utcnow()
    return problems


def save_draft(
    process: Process, doc: dict[str, Any], *, base_revision: int, actor: User | None
) -> SaveResult:
    """Replace the draft unless someone saved since `base_revision`; the caller commits."""
    if base_revision != process.draft_revision:
        raise StaleDraft(
            "draft.stale",
            f"This draft was saved by someone else (revision {process.draft_revision}; "
            f"you edited revision {base_revision}). Reload to see their changes.",
        )
    problems = _store_draft(process, documents.normalize(doc), actor)
    return SaveResult(process.draft_revision, problems)


def latest_version(process: Process) -> ProcessVersion | None:
    return db.session.scalar(
        select(ProcessVersion)
        .where(ProcessVersion.process_id == process.id)
        .order_by(ProcessVersion.number.desc())
        .limit(1)
    )


def publish(process: Process, *, actor: User | None, note: str = "") -> ProcessVersion:
    """Publish the draft as version N+1; refused with errors or when nothing changed."""
    doc = process.draft_document or documents.new_document(process.key, process.name)
    problems = validate(doc, tool_specs())
    if has_errors(problems):
        count = sum(1 for p in problems if p.severity == "error")
        raise ProcessError(
            "publish.errors",
            f"The draft has {count} error{'s' if count != 1 else ''}; fix them before publishing.",
            problems=problems,
        )
    digest = documents.content_hash(doc)
    latest = latest_version(process)
    if latest is not None and latest.content_hash == digest:
        raise ProcessError("publish.unchanged", f"Nothing changed since version {latest.number}.")
    number = (
        db.session.scalar(
            select(func.max(ProcessVersion.number)).where(ProcessVersion.process_id == process.id)
        )
        or 0
    ) + 1
    version = ProcessVersion(
        process_id=process.id,
        number=number,
        document=doc,
        bpmn_xml=process.draft_xml or export_bpmn(doc),
        content_hash=digest,
        change_note=(note or "").strip()[:500],
        published_by_id=actor.id if actor else None,
    )
    db.session.add(version)
    return version
