"""Processes: create, save drafts (with a revision check), publish immutable versions.

Each public change is one transaction of its own: committed when it returns, rolled back when it
raises (`transactional`), so views only call and answer.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Text, cast, func, or_, select

from webapp.engine import tools
from webapp.extensions import db
from webapp.infra.database import transactional
from webapp.models import Process, ProcessVersion, Role, User
from webapp.models.base import utcnow
from webapp.process import document as documents
from webapp.process.bpmn import (
    BpmnImportError,
    ImportResult,
    ProcessChoice,
    UnsupportedElement,
    auto_layout,
    export_bpmn,
    import_bpmn,
    process_choices,
)
from webapp.process.bpmn import report as import_report
from webapp.process.bpmn.vendor import refreshed_xml
from webapp.process.diff import DocumentDiff, diff_documents
from webapp.process.kinds import KINDS
from webapp.process.validation import Problem, has_errors, validate
from webapp.process.validation import expression_problems as validation_problems
from webapp.services import decision_links, event_starts, schedules
from webapp.services import scenarios as test_scenarios

KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")
#: Ids a modelling tool made up rather than a person chose: Signavio's `sid-3D32F965-...`,
#: jBPM's `_3`, bpmn.io's `Process_0x1y2z3`, UUIDs. A key is derived from the name instead.
GENERATED_ID = re.compile(
    r"^(sid-[0-9A-Fa-f-]+|_[0-9A-Fa-f-]*|Process_[0-9a-z]{7}|Process_\d+|"
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"
)


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


class ScenariosFailed(ProcessError):
    """Test scenarios fail on the draft: publishing needs a reason to go ahead anyway."""

    def __init__(self, failures: list[tuple[Any, Any]]) -> None:
        count = len(failures)
        super().__init__(
            "publish.scenarios",
            f"{count} test scenario{'s' if count != 1 else ''} fail{'' if count != 1 else 's'} "
            "on this draft; fix the draft or the scenarios, or publish anyway with a reason.",
        )
        self.failures = failures


@dataclass(frozen=True)
class SaveResult:
    revision: int
    problems: list[Problem]


def tool_specs() -> dict:
    return tools.specs()


class CallableProcesses:
    """The published processes a call activity of a process in `partition_id` may start: those
    in the same partition or in none (the child runs in its caller's partition, so a process in
    no partition calls only processes in no partition). Looked up lazily, each key once."""

    def __init__(self, partition_id: int | None) -> None:
        self.partition_id = partition_id
        self._versions: dict[str, dict[int, int]] = {}

    def _published(self, key: str) -> dict[int, int]:
        """Version number -> version id of the callable process `key` (empty when none)."""
        if key not in self._versions:
            visible: ColumnElement[bool] = Process.partition_id.is_(None)
            if self.partition_id is not None:
                visible = or_(visible, Process.partition_id == self.partition_id)
            rows = db.session.execute(
                select(ProcessVersion.number, ProcessVersion.id)
                .join(Process, Process.id == ProcessVersion.process_id)
                .where(Process.key == key, visible)
            ).all()
            self._versions[key] = {number: version_id for number, version_id in rows}
        return self._versions[key]

    def exists(self, key: str) -> bool:
        return bool(self._published(key))

    def has_version(self, key: str, version: int) -> bool:
        return version in self._published(key)

    def document(self, key: str, version: int | None) -> dict[str, Any] | None:
        published = self._published(key)
        number = max(published, default=None) if version is None else version
        if number not in published:
            return None
        found = db.session.get(ProcessVersion, published[number])
        return found.document if found is not None else None


def role_names() -> set[str]:
    """The names of the roles that exist, for the check that user tasks go to real roles."""
    return set(db.session.scalars(select(Role.name)))


def existing_users(names: Iterable[str]) -> set[str]:
    """Which of `names` (compared lower-cased, as the engine looks them up) are user names."""
    wanted = {name.strip().lower() for name in names}
    if not wanted:
        return set()
    return set(db.session.scalars(select(User.username).where(User.username.in_(wanted))))


def check_draft(process: Process, doc: dict[str, Any] | None = None) -> list[Problem]:
    """Validate `doc` (the stored draft when None) with the registered tools, the processes
    its call activities may start and the decisions its business rule tasks evaluate."""
    if doc is None:
        doc = process.draft_document or documents.new_document(process.key, process.name)
    return [
        *validate(
            doc,
            tool_specs(),
            CallableProcesses(process.partition_id),
            role_names(),
            existing_users(import_report.assignees(doc, "user")),
        ),
        *decision_links.problems(doc, process.partition_id),
    ]


def derived_key(process_id: str, name: str) -> str:
    """The key an import uses when none is typed: the file's process id when a person chose it,
    else one made from the name ("Order handling" -> `order-handling`), free among processes."""
    if KEY.match(process_id or "") and not GENERATED_ID.match(process_id):
        return process_id
    ascii_name = unicodedata.normalize("NFKD", name or "").encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:90].rstrip("-")
    if not slug:
        slug = process_id if KEY.match(process_id or "") else "process"
    elif not slug[0].isalpha():
        slug = f"p-{slug}"
    key, number = slug, 1
    while db.session.scalar(select(Process.id).where(Process.key == key)) is not None:
        number += 1
        key = f"{slug}-{number}"
    return key


def check_key(key: str) -> str:
    key = (key or "").strip()
    if not KEY.match(key):
        raise ProcessError(
            "key.invalid",
            "A process key starts with a letter or _ and has up to 100 letters, digits, "
            "'.', '-' or '_'.",
        )
    return key


@transactional
def create_process(
    key: str,
    name: str,
    *,
    partition_id: int | None,
    actor: User | None,
    document: dict[str, Any] | None = None,
) -> Process:
    """Add a process with an empty (or given) draft."""
    return _add_process(key, name, partition_id=partition_id, actor=actor, document=document)


def _add_process(
    key: str,
    name: str,
    *,
    partition_id: int | None,
    actor: User | None,
    document: dict[str, Any] | None = None,
) -> Process:
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
    store_draft(process, documents.normalize(doc), actor)
    return process


def store_draft(
    process: Process, doc: dict[str, Any], actor: User | None, xml: str | None = None
) -> list[Problem]:
    """Store `doc` as the draft; `xml` (when given) must import to exactly `doc`."""
    doc = dict(doc, key=process.key, name=process.name)
    problems = check_draft(process, doc)
    process.draft_document = doc
    process.draft_xml = xml if xml is not None else export_bpmn(doc)
    process.draft_hash = documents.content_hash(doc)
    process.draft_problems = [p.as_dict() for p in problems]
    process.draft_revision = (process.draft_revision or 0) + 1
    process.updated_by_id = actor.id if actor else None
    process.updated_at = utcnow()
    return problems


@transactional
def save_draft(
    process: Process, doc: dict[str, Any], *, base_revision: int, actor: User | None
) -> SaveResult:
    """Replace the draft unless someone saved since `base_revision`."""
    check_revision(process, base_revision)
    problems = store_draft(process, documents.normalize(doc), actor)
    return SaveResult(process.draft_revision, problems)


def check_revision(process: Process, base_revision: int) -> None:
    """Raise StaleDraft unless the draft is still at `base_revision`."""
    if base_revision != process.draft_revision:
        raise StaleDraft(
            "draft.stale",
            f"This draft was saved by someone else (revision {process.draft_revision}; "
            f"you edited revision {base_revision}). Reload to see their changes.",
        )


def latest_version(process: Process) -> ProcessVersion | None:
    return db.session.scalar(
        select(ProcessVersion)
        .where(ProcessVersion.process_id == process.id)
        .order_by(ProcessVersion.number.desc())
        .limit(1)
    )


def unchanged_since(process: Process) -> ProcessVersion | None:
    """The latest version when the draft has the same content (publishing would be refused)."""
    latest = latest_version(process)
    doc = process.draft_document or documents.new_document(process.key, process.name)
    if latest is not None and latest.content_hash == documents.content_hash(doc):
        return latest
    return None


@transactional
def publish(
    process: Process,
    *,
    actor: User | None,
    note: str = "",
    base_revision: int | None = None,
    scenarios_override: str = "",
) -> ProcessVersion:
    """Publish the draft as version N+1; refused with errors, when nothing changed, when
    someone saved since `base_revision` (when given), or when a test scenario fails on it and
    no `scenarios_override` reason is given (the version keeps that reason)."""
    if base_revision is not None:
        check_revision(process, base_revision)
    doc = process.draft_document or documents.new_document(process.key, process.name)
    problems = check_draft(process, doc)
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
    failures = test_scenarios.failing(process)
    override = (scenarios_override or "").strip()[:500]
    if failures and not override:
        raise ScenariosFailed(failures)
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
        scenarios_override=override if failures else None,
    )
    db.session.add(version)
    db.session.flush()
    event_starts.keep(process, version, ProcessError)
    _move_schedules(process, version)
    _recheck_callers(process)
    return version


def _recheck_callers(process: Process) -> None:
    """Check again the drafts of the other processes whose call activities name `process`, so
    that their problems (shown in the list, designer and report) say it is published now."""
    candidates = db.session.scalars(
        select(Process).where(
            Process.id != process.id,
            cast(Process.draft_document, Text).contains(process.key),
        )
    )
    for caller in candidates:
        nodes = (caller.draft_document or {}).get("nodes", {})
        if any(
            node.get("kind") == "callActivity"
            and (node.get("config") or {}).get("process") == process.key
            for node in nodes.values()
            if isinstance(node, dict)
        ):
            caller.draft_problems = [p.as_dict() for p in check_draft(caller)]


def recheck_decision_users(decision_ids: Iterable[str]) -> None:
    """Check again the drafts whose business rule tasks name one of `decision_ids` (a decision
    model was just published), so that their problems say the decision is published now."""
    wanted = {decision for decision in decision_ids if decision}
    if not wanted:
        return
    mentions = [cast(Process.draft_document, Text).contains(decision) for decision in wanted]
    for process in db.session.scalars(select(Process).where(or_(*mentions))):
        nodes = (process.draft_document or {}).get("nodes", {})
        if any(
            node.get("kind") == "businessRuleTask"
            and (node.get("config") or {}).get("decision") in wanted
            for node in nodes.values()
            if isinstance(node, dict)
        ):
            process.draft_problems = [p.as_dict() for p in check_draft(process)]


def _move_schedules(process: Process, version: ProcessVersion) -> None:
    """The new version's timer starts take over the process's schedules (services.schedules)."""
    try:
        schedules.move_on_publish(process, version)
    except schedules.InvalidTimerStart as error:
        problem = Problem("config.invalid", "error", error.node_id, str(error))
        raise ProcessError(
            "publish.errors", f"The draft has 1 error: {error}", problems=[problem]
        ) from None


# --- the designer: BPMN import, canvas saves, whole-draft edits, versions ----------------------


class ImportRefused(ProcessError):
    """A file or posted diagram that cannot become a draft; nothing was saved.

    `line` points into the file when known; `unsupported` lists elements Flowdesk cannot run.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        line: int | None = None,
        unsupported: list[UnsupportedElement] | None = None,
        status: int = 422,
    ) -> None:
        super().__init__(code, message)
        self.line = line
        self.unsupported = unsupported or []
        self.status = status


@dataclass(frozen=True)
class DraftImport:
    """A draft saved from a file or the canvas: the new revision and what was found."""

    revision: int
    problems: list[Problem]
    warnings: list[Problem]
    unsupported: list[UnsupportedElement]

    def as_dict(self) -> dict[str, Any]:
        return {
            "revision": self.revision,
            "problems": [p.as_dict() for p in [*self.problems, *self.warnings]],
            "unsupported": [unsupported_dict(u) for u in self.unsupported],
        }


def unsupported_dict(item: UnsupportedElement) -> dict[str, Any]:
    return {"id": item.id, "type": item.type, "line": item.line, "detail": item.detail}


def choices_in(data: bytes) -> list[ProcessChoice]:
    """The processes of a BPMN file a person must choose between (none for JSON or one
    process); an unreadable file has none here and is refused when imported."""
    if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return []
    try:
        return process_choices(data)
    except BpmnImportError:
        return []


def read_upload(data: bytes | str, process_id: str | None = None) -> ImportResult:
    """Read a .bpmn (XML) or .json file into a document (of process `process_id` of a BPMN file
    with several); raises ImportRefused saying why not."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        try:
            result = ImportResult(documents.from_json(raw))
        except documents.DocumentError as exc:
            raise ImportRefused("import.invalid", exc.message, line=exc.line) from None
    else:
        try:
            result = import_bpmn(raw, process_id=process_id)
        except BpmnImportError as exc:
            raise ImportRefused(
                "import.malformed", exc.message, line=exc.line, status=400
            ) from None
    unknown = [
        (i, n["kind"]) for i, n in result.document["nodes"].items() if n["kind"] not in KINDS
    ]
    if unknown:
        node_id, kind = unknown[0]
        raise ImportRefused(
            "import.unknown_kind",
            f"Node '{node_id}' has the unknown kind '{kind}'; Flowdesk knows {', '.join(KINDS)}.",
        )
    return result


def _refuse_unsupported(result: ImportResult, what: str) -> None:
    items = result.unsupported
    if items:
        listed = ", ".join(f"{u.type} '{u.id}'" for u in items[:5])
        more = f" and {len(items) - 5} more" if len(items) > 5 else ""
        raise ImportRefused(
            "import.unsupported",
            f"{what} contains {len(items)} element{'s' if len(items) != 1 else ''} Flowdesk "
            f"cannot run ({listed}{more}); nothing was saved.",
            unsupported=items,
        )


@transactional
def save_draft_xml(
    process: Process, xml: bytes | str, *, base_revision: int, actor: User | None
) -> DraftImport:
    """Save a diagram drawn in the designer.

    The posted XML is stored as is (it imports to exactly the stored document), so what the
    modeller drew, label positions included, comes back on reload.
    """
    check_revision(process, base_revision)
    result = read_upload(xml if isinstance(xml, bytes) else xml.encode("utf-8"))
    _refuse_unsupported(result, "The diagram")
    result.document.pop("scenarios", None)  # kept in their own table, changed on their page
    doc = result.document
    keep = doc.get("key") == process.key and doc.get("name") == process.name
    text = xml.decode("utf-8") if isinstance(xml, bytes) else xml
    refreshed = refreshed_xml(text, doc)  # panel edits reach the vendor's copy of settings
    if refreshed is not None:
        text, doc = refreshed, read_upload(refreshed.encode("utf-8")).document
    problems = store_draft(process, doc, actor, text if keep else None)
    return DraftImport(process.draft_revision, problems, result.warnings, [])


def _take_scenarios(result: ImportResult) -> list[Any] | None:
    """The test scenarios a JSON export carries (None when it has none), out of the document."""
    bodies = result.document.pop("scenarios", None)
    if bodies is not None and not isinstance(bodies, list):
        raise ImportRefused("import.scenarios", "The file's scenarios must be a list.")
    return bodies


def _keep_scenarios(process: Process, bodies: list[Any] | None, actor: User | None) -> None:
    """Store the imported scenarios in place of the process's; refused when one is invalid."""
    if bodies is None:
        return
    try:
        test_scenarios.store_all(process, bodies, actor=actor)
    except test_scenarios.ScenarioRefused as refused:
        raise ImportRefused(
            "import.scenarios", "The file's test scenarios were refused: " + str(refused)
        ) from None


def _record_import(process: Process, result: ImportResult) -> None:
    """Keep what the import did for the import report page."""
    process.import_report = {
        "revision": process.draft_revision,
        "at": utcnow().isoformat(),
        **import_report.summarize(result),
        "fingerprints": import_report.fingerprints(process.draft_document or {}),
    }


@transactional
def import_draft(
    process: Process,
    data: bytes | str,
    *,
    base_revision: int,
    actor: User | None,
    allow_unsupported: bool = False,
    process_id: str | None = None,
) -> DraftImport:
    """Replace the draft with an imported file; unsupported elements need `allow_unsupported`."""
    check_revision(process, base_revision)
    result = read_upload(data, process_id)
    if not allow_unsupported:
        _refuse_unsupported(result, "The file")
    bodies = _take_scenarios(result)
    problems = store_draft(process, result.document, actor)
    _record_import(process, result)
    _keep_scenarios(process, bodies, actor)
    return DraftImport(process.draft_revision, problems, result.warnings, result.unsupported)


@transactional
def create_imported(
    key: str,
    name: str,
    data: bytes | str,
    *,
    partition_id: int | None,
    actor: User | None,
    allow_unsupported: bool = False,
    process_id: str | None = None,
) -> tuple[Process, DraftImport]:
    """A new process whose first draft is an imported file; key and name default to the file's."""
    result = read_upload(data, process_id)
    if not allow_unsupported:
        _refuse_unsupported(result, "The file")
    return _add_imported(key, name, result, partition_id=partition_id, actor=actor)


def _add_imported(
    key: str, name: str, result: ImportResult, *, partition_id: int | None, actor: User | None
) -> tuple[Process, DraftImport]:
    bodies = _take_scenarios(result)
    doc = result.document
    process = _add_process(
        key or derived_key(str(doc.get("key") or ""), str(doc.get("name") or "")),
        name or str(doc.get("name") or ""),
        partition_id=partition_id,
        actor=actor,
        document=doc,
    )
    _record_import(process, result)
    _keep_scenarios(process, bodies, actor)
    problems = [Problem(**p) for p in process.draft_problems]
    return process, DraftImport(
        process.draft_revision, problems, result.warnings, result.unsupported
    )


@transactional
def create_imported_all(
    data: bytes,
    *,
    partition_id: int | None,
    actor: User | None,
    allow_unsupported: bool = False,
) -> list[Process]:
    """Every process of a file with several, each a new process keyed by its id in the file, so
    that call activities between them resolve (SpiffArena keeps called processes in the caller's
    file). All or nothing: a refused process or a taken key saves none."""
    results = [(choice, read_upload(data, choice.id)) for choice in choices_in(data)]
    invalid = [choice.id for choice, _ in results if not KEY.match(choice.id)]
    if invalid:
        raise ProcessError(
            "key.invalid",
            f"The process ids {', '.join(map(repr, invalid))} cannot be keys (a letter or _ "
            "first, then letters, digits, '.', '-' or '_'); import them one by one with a key.",
        )
    taken = [
        choice.id
        for choice, _ in results
        if db.session.scalar(select(Process.id).where(Process.key == choice.id)) is not None
    ]
    if taken:
        raise ProcessError(
            "key.taken",
            f"Processes with the keys {', '.join(map(repr, taken))} exist; nothing was imported.",
        )
    created = []
    for choice, result in results:
        if not allow_unsupported:
            _refuse_unsupported(result, f"Process '{choice.id}'")
        process, _ = _add_imported(
            choice.id, choice.name, result, partition_id=partition_id, actor=actor
        )
        created.append(process)
    return created


@transactional
def edit_draft(
    process: Process,
    edit: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    base_revision: int,
    actor: User | None,
) -> SaveResult:
    """Apply `edit` (document -> new document; may raise ProcessError) to the draft and save."""
    check_revision(process, base_revision)
    doc = copy.deepcopy(process.draft_document or documents.new_document(process.key, process.name))
    return save_draft(process, edit(doc), base_revision=base_revision, actor=actor)


@transactional
def auto_layout_draft(process: Process, *, base_revision: int, actor: User | None) -> SaveResult:
    """Lay the draft out left to right (every position and route recomputed)."""
    return edit_draft(process, auto_layout, base_revision=base_revision, actor=actor)


def expression_problems(
    process: Process,
    element_id: str,
    path: tuple[str, ...],
    text: str,
    canvas_xml: str | None = None,
    changes: Mapping[tuple[str, ...], Any] | None = None,
) -> list[Problem]:
    """What the validator would say about the expression at `path` of `element_id` (a flow's
    condition, a multi-instance output...): checked against the canvas the modeller sees
    (`canvas_xml`) or, without it, the saved draft, with the panel's unapplied `changes`."""
    doc: dict[str, Any] | None = None
    if canvas_xml:
        try:
            doc = read_upload(canvas_xml).document
        except ImportRefused:
            doc = None
    if doc is None:
        doc = process.draft_document
    if not doc:
        return []
    return validation_problems(doc, element_id, path, text, tool_specs(), changes)


def lock_process(process_id: int) -> Process | None:
    """Load a process holding its row lock (PostgreSQL) for a read-check-write sequence."""
    return db.session.scalar(
        select(Process).where(Process.id == process_id).with_for_update(of=Process)
    )


def versions(process: Process) -> list[ProcessVersion]:
    """Published versions, newest first."""
    return list(
        db.session.scalars(
            select(ProcessVersion)
            .where(ProcessVersion.process_id == process.id)
            .order_by(ProcessVersion.number.desc())
        )
    )


def get_version(process: Process, number: int) -> ProcessVersion | None:
    return db.session.scalar(
        select(ProcessVersion).where(
            ProcessVersion.process_id == process.id, ProcessVersion.number == number
        )
    )


def compare_versions(old: ProcessVersion, new: ProcessVersion) -> DocumentDiff:
    return diff_documents(old.document, new.document)
