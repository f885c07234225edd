"""The processes list, new processes, imports and exports."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from flask import Response, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user
from sqlalchemy import func, or_, select

from webapp.designer.access import base_revision, load_process, partition_choices
from webapp.designer.blueprint import bp
from webapp.designer.editor import draft_xml
from webapp.designer.forms import DraftImportForm, ImportForm, NewProcessForm
from webapp.extensions import db
from webapp.infra.pagination import paginate
from webapp.models import Process, ProcessVersion
from webapp.permissions import partition_filter
from webapp.process.bpmn import ProcessChoice, with_scenarios
from webapp.process.naming import plural
from webapp.services import processes
from webapp.services import scenarios as test_scenarios
from webapp.services.processes import DraftImport, ImportRefused, ProcessError, StaleDraft
from webapp.web.htmx import htmx_target

MAX_UPLOAD = 5_000_000


@bp.get("/")
def index():
    q = request.args.get("q", "").strip()
    query = (
        select(Process)
        .where(partition_filter(Process.partition_id, current_user))
        .order_by(Process.updated_at.desc(), Process.id.desc())
    )
    if q:
        like = f"%{q.lower()}%"
        query = query.where(or_(Process.key.ilike(like), Process.name.ilike(like)))
    page = paginate(query, request.args.get("page", 1, type=int), 25)
    latest = _latest_versions([p.id for p in page.items])
    template = (
        "designer/_process_table.html"
        if htmx_target() == "process-table"
        else "designer/index.html"
    )
    return render_template(template, page=page, q=q, latest=latest)


def _latest_versions(ids: list[int]) -> dict[int, ProcessVersion]:
    """The newest version of each process in `ids`, in one query."""
    if not ids:
        return {}
    newest = (
        select(ProcessVersion.process_id, func.max(ProcessVersion.number).label("number"))
        .where(ProcessVersion.process_id.in_(ids))
        .group_by(ProcessVersion.process_id)
        .subquery()
    )
    rows = db.session.scalars(
        select(ProcessVersion).join(
            newest,
            (newest.c.process_id == ProcessVersion.process_id)
            & (newest.c.number == ProcessVersion.number),
        )
    )
    return {version.process_id: version for version in rows}


def _partition_id(value: str | None) -> int | None:
    return int(value) if value else None


@bp.route("/new", methods=["GET", "POST"])
def new():
    form = NewProcessForm()
    form.partition.choices = partition_choices()
    if form.validate_on_submit():
        try:
            process = processes.create_process(
                form.key.data,
                form.name.data,
                partition_id=_partition_id(form.partition.data),
                actor=current_user,
            )
        except ProcessError as exc:
            form.key.errors.append(exc.message)
        else:
            flash(f"Process {process.name} created.", "success")
            return redirect(url_for("designer.editor", process_id=process.id))
    status = 422 if request.method == "POST" else 200
    return render_template("designer/new.html", form=form), status


def _upload(field: Any) -> bytes:
    data = field.data.read(MAX_UPLOAD + 1)
    if len(data) > MAX_UPLOAD:
        raise ImportRefused(
            "import.too_large", f"The file is larger than {MAX_UPLOAD:,} bytes.", status=413
        )
    return data


def _file(form: Any) -> bytes | None:
    """A newly uploaded file, else the one carried from the first post while a process is
    picked; None (with the field's error) when there is neither."""
    if form.file.data and getattr(form.file.data, "filename", ""):
        form.carried.data = ""
        return _upload(form.file)
    if form.carried.data:
        try:
            data = base64.b64decode(form.carried.data, validate=True)
        except (binascii.Error, ValueError):
            data = b""
        if data and len(data) <= MAX_UPLOAD:
            return data
        form.carried.data = ""
    form.file.errors.append("Choose a .bpmn file.")
    return None


#: The second import step carries the file itself (base64): its form may be that large.
CARRIED_FORM_BYTES = MAX_UPLOAD * 4 // 3 + 64_000


@bp.url_value_preprocessor
def _larger_import_forms(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """Raise the form field limit of the import pages before anything (CSRF) reads the form."""
    if endpoint in ("designer.import_new", "designer.import_draft"):
        request.max_form_memory_size = CARRIED_FORM_BYTES


def _to_import(form: Any, *, offer_all: bool = False) -> tuple[bytes | None, int]:
    """The file to import now, or None and the status of the form shown again (no file, the
    list of its processes to pick from, or the key made from the name to confirm)."""
    data = _file(form)
    if data is None:
        return None, 422
    if _pick(form, data, offer_all=offer_all):
        return None, 422 if form.pool.errors else 200
    if offer_all and _confirm_key(form, data):
        return None, 200
    return data, 200


def _confirm_key(form: Any, data: bytes) -> bool:
    """Whether the key field was empty and the file's process id is one its tool made up: then
    the form shows the key made from the name, before anything is created."""
    if (form.key.data or "").strip() or form.pool.data:
        return False
    try:
        doc = processes.read_upload(data).document
    except ImportRefused:
        return False  # refused with its reason when imported
    process_id, name = str(doc.get("key") or ""), str(doc.get("name") or "")
    key = processes.derived_key(process_id, name)
    if key == process_id:
        return False
    form.key.data = key
    form.carried.data = base64.b64encode(data).decode("ascii")
    form.key.description = (
        f"Made from the name “{name}”: the file's process id “{process_id}” was generated "
        "by its tool. The key never changes; change it now if you like, then Import."
    )
    return True


#: The pool choice that imports every process of the file, each as a process of its own.
ALL_POOLS = "*"


def _pick(form: Any, data: bytes, *, offer_all: bool = False) -> bool:
    """Whether the person must pick one of the file's processes first: then the form lists
    them (and, for a new process, "all of them") and carries the file (also when the pick was
    not one of them)."""
    choices = processes.choices_in(data)
    form.pool.choices = [(c.id, _choice_label(c, offer_all)) for c in choices]
    if len(choices) < 2:
        form.pool.choices, form.pool.data = [], None
        return False
    if offer_all:
        form.pool.choices.append(
            (
                ALL_POOLS,
                f"All {len(choices)}, each as a process of its own under its id in the file "
                "(so that call activities between them work)",
            )
        )
    form.carried.data = base64.b64encode(data).decode("ascii")
    if form.pool.data in {value for value, _ in form.pool.choices}:
        return False
    if form.pool.data:
        form.pool.errors.append("Choose one of the processes listed.")
    form.pool.data = None
    return True


def _choice_label(choice: ProcessChoice, new: bool) -> str:
    """A pool as the chooser lists it: its name, the key it would get (for a new process), its
    size and the titles of its first steps; a long generated id shortened."""
    shown = choice.id if len(choice.id) <= 24 else f"{choice.id[:20]}…"
    label = choice.name or shown
    if new:
        label += f" (becomes {processes.derived_key(choice.id, choice.name)}"
    else:
        label += f" ({shown}" if choice.name else " ("
    label += f"{', ' if new or choice.name else ''}{plural(choice.nodes, 'element')})"
    if choice.titles:
        label += f": {', '.join(choice.titles)}{'…' if choice.nodes > len(choice.titles) else ''}"
    return label


def _imported(process: Process, result: DraftImport):
    """Open the import report, saying what was imported and what was left out."""
    flash(_imported_message(process, result), "success")
    return redirect(url_for("designer.import_report", process_id=process.id))


def _imported_message(process: Process, result: DraftImport) -> str:
    doc = process.draft_document or {}
    message = (
        f"Imported {plural(len(doc.get('nodes', {})), 'node')} and "
        f"{plural(len(doc.get('flows', {})), 'flow')} into {process.name} "
        f"(revision {result.revision})."
    )
    if result.unsupported:
        left = ", ".join(f"{u.type} '{u.id}'" for u in result.unsupported[:10])
        message += f" Left out: {left}{' …' if len(result.unsupported) > 10 else ''}."
    return message


@bp.route("/import", methods=["GET", "POST"])
def import_new() -> ResponseReturnValue:
    """Create a process from a .bpmn (or .json) file."""
    form = ImportForm()
    form.partition.choices = partition_choices()
    refusal: ImportRefused | None = None
    status = 200
    if form.validate_on_submit():
        try:
            data, status = _to_import(form, offer_all=True)
            if data is not None and form.pool.data == ALL_POOLS:
                created = processes.create_imported_all(
                    data,
                    partition_id=_partition_id(form.partition.data),
                    actor=current_user,
                    allow_unsupported=form.allow_unsupported.data,
                )
                keys = ", ".join(p.key for p in created)
                flash(
                    f"Imported {len(created)} processes: {keys}. Publish the called ones first; "
                    "each has its own import report.",
                    "success",
                )
                return redirect(url_for("designer.import_report", process_id=created[0].id))
            if data is not None:
                process, result = processes.create_imported(
                    form.key.data or "",
                    form.name.data or "",
                    data,
                    partition_id=_partition_id(form.partition.data),
                    actor=current_user,
                    allow_unsupported=form.allow_unsupported.data,
                    process_id=form.pool.data or None,
                )
                return _imported(process, result)
        except ImportRefused as exc:
            refusal, status = exc, exc.status
        except ProcessError as exc:
            if form.pool.data == ALL_POOLS:
                form.pool.errors.append(exc.message)
            else:
                form.key.errors.append(f"{exc.message} Choose another key.")
            status = 422
    elif request.method == "POST":
        status = 422
    return render_template("designer/import.html", form=form, refusal=refusal, process=None), status


@bp.route("/<int:process_id>/import", methods=["GET", "POST"])
def import_draft(process_id: int):
    """Replace a process's draft with a file."""
    process = load_process(process_id, lock=request.method == "POST")
    form = DraftImportForm(revision=process.draft_revision)
    refusal: ImportRefused | StaleDraft | None = None
    status = 200
    if form.validate_on_submit():
        try:
            data, status = _to_import(form)
            if data is not None:
                result = processes.import_draft(
                    process,
                    data,
                    base_revision=base_revision(),
                    actor=current_user,
                    allow_unsupported=form.allow_unsupported.data,
                    process_id=form.pool.data or None,
                )
                return _imported(process, result)
        except (ImportRefused, StaleDraft) as exc:
            db.session.rollback()  # the file may be refused before the service runs
            refusal, status = exc, exc.status
            form.revision.data = str(process.draft_revision)
    elif request.method == "POST":
        status = 422
    return render_template(
        "designer/import.html", form=form, refusal=refusal, process=process
    ), status


def download(body: str, filename: str, mimetype: str) -> Response:
    response = Response(body, mimetype=mimetype)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def document_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@bp.get("/<int:process_id>/draft.bpmn")
def export_draft_bpmn(process_id: int):
    process = load_process(process_id)
    xml = with_scenarios(draft_xml(process), test_scenarios.exported(process.id))
    return download(xml, f"{process.key}-draft.bpmn", "application/xml")


@bp.get("/<int:process_id>/draft.json")
def export_draft_json(process_id: int):
    process = load_process(process_id)
    doc = dict(process.draft_document or {})
    scenarios = test_scenarios.exported(process.id)
    if scenarios:
        doc["scenarios"] = scenarios
    return download(document_json(doc), f"{process.key}-draft.json", "application/json")
