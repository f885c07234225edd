"""Decision model pages: the list, importing a DMN file, the import report, versions, their
comparison, export and publishing."""

from __future__ import annotations

from typing import Any

from flask import Response, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from sqlalchemy import func, or_, select
from sqlalchemy.orm import undefer
from wtforms import SelectField, StringField, TextAreaField
from wtforms.validators import Length, Optional

from webapp.designer.access import partition_choices
from webapp.designer.blueprint import bp
from webapp.designer.decisions.access import load_model, posted_revision
from webapp.extensions import db
from webapp.infra.pagination import paginate
from webapp.models import DecisionModel, DecisionVersion, Partition
from webapp.permissions import can, partition_filter, visible_partition_ids
from webapp.services import decisions
from webapp.services.decisions import DecisionServiceError
from webapp.web.htmx import htmx_target

MAX_UPLOAD = 5_000_000


class DecisionImportForm(FlaskForm):
    file = FileField("DMN file", render_kw={"accept": ".dmn,.xml"})
    key = StringField(
        "Key",
        validators=[Optional(), Length(max=100)],
        description="Leave empty to use the file's definitions id.",
        render_kw={"autocomplete": "off", "spellcheck": "false"},
    )
    name = StringField("Name", validators=[Optional(), Length(max=200)])
    partition = SelectField("Partition", validate_choice=True)


class DecisionDraftImportForm(FlaskForm):
    file = FileField("DMN file", render_kw={"accept": ".dmn,.xml"})


class DecisionPublishForm(FlaskForm):
    note = TextAreaField("Change note", validators=[Optional(), Length(max=500)])


class TooLarge(DecisionServiceError):
    status = 413


def _upload(form: Any) -> bytes:
    """The uploaded file; refused (naming the file field) when missing or too large."""
    if not form.file.data or not getattr(form.file.data, "filename", ""):
        raise DecisionServiceError("import.no_file", "Choose a DMN file.", field="file")
    data = form.file.data.read(MAX_UPLOAD + 1)
    if len(data) > MAX_UPLOAD:
        raise TooLarge(
            "import.too_large", f"The file is larger than {MAX_UPLOAD:,} bytes.", field="file"
        )
    return data


def _latest(ids: list[int]) -> dict[int, int]:
    """The newest version number of each model in `ids`."""
    if not ids:
        return {}
    rows = db.session.execute(
        select(DecisionVersion.model_id, func.max(DecisionVersion.number))
        .where(DecisionVersion.model_id.in_(ids))
        .group_by(DecisionVersion.model_id)
    )
    return {model_id: number for model_id, number in rows}


def _partitions() -> list[Partition]:
    ids = visible_partition_ids(current_user)
    query = select(Partition).order_by(Partition.name)
    if ids is not None:
        query = query.where(Partition.id.in_(sorted(ids)))
    return list(db.session.scalars(query))


@bp.get("/decisions/")
def decisions_index():
    q = request.args.get("q", "").strip()
    partition = request.args.get("partition", "")
    query = (
        select(DecisionModel)
        .options(undefer(DecisionModel.draft_document))
        .where(partition_filter(DecisionModel.partition_id, current_user))
        .order_by(DecisionModel.updated_at.desc(), DecisionModel.id.desc())
    )
    if q:
        like = f"%{q.lower()}%"
        query = query.where(or_(DecisionModel.key.ilike(like), DecisionModel.name.ilike(like)))
    if partition == "none":
        query = query.where(DecisionModel.partition_id.is_(None))
    elif partition.isdigit():
        query = query.where(DecisionModel.partition_id == int(partition))
    page = paginate(query, request.args.get("page", 1, type=int), 25)
    template = (
        "designer/decisions/_list.html"
        if htmx_target() == "decision-list"
        else "designer/decisions/index.html"
    )
    return render_template(
        template,
        page=page,
        q=q,
        partition=partition,
        partitions=_partitions(),
        latest=_latest([m.id for m in page.items]),
    )


def _partition_id(value: str | None) -> int | None:
    return int(value) if value else None


@bp.route("/decisions/import", methods=["GET", "POST"])
def decisions_import():
    form = DecisionImportForm()
    form.partition.choices = partition_choices()
    refusal = None
    status = 422 if request.method == "POST" else 200
    if form.validate_on_submit():
        try:
            model, problems = decisions.import_new(
                _upload(form),
                key=form.key.data or "",
                name=form.name.data or "",
                partition_id=_partition_id(form.partition.data),
                actor=current_user,
            )
        except DecisionServiceError as exc:
            status = exc.status
            field = getattr(form, exc.field or "", None) if exc.field in ("key", "file") else None
            if field is not None:
                field.errors.append(exc.message)
            else:
                refusal = exc.message
        else:
            flash(_imported_message(model, problems), "success")
            return redirect(url_for("designer.decision_report", model_id=model.id))
    return render_template(
        "designer/decisions/import.html", form=form, model=None, refusal=refusal
    ), status


def _imported_message(model: DecisionModel, problems: list) -> str:
    blocking = sum(1 for p in problems if p.blocking)
    if not problems:
        return f"Imported {model.name}: no problems."
    return (
        f"Imported {model.name}: {len(problems)} problem{'s' if len(problems) != 1 else ''}"
        f" ({blocking} blocking publish)."
    )


@bp.route("/decisions/<int:model_id>/import", methods=["GET", "POST"])
def decision_import_draft(model_id: int):
    model = load_model(model_id, lock=request.method == "POST")
    form = DecisionDraftImportForm()
    refusal = None
    status = 200
    if request.method == "POST":
        status = 422
        if form.validate_on_submit():
            try:
                problems = decisions.import_draft(
                    model, _upload(form), base_revision=posted_revision(), actor=current_user
                )
            except DecisionServiceError as exc:
                status = exc.status
                if exc.field == "file":
                    form.file.errors.append(exc.message)
                else:
                    refusal = exc.message
            else:
                flash(_imported_message(model, problems), "success")
                return redirect(url_for("designer.decision_report", model_id=model.id))
    return render_template(
        "designer/decisions/import.html", form=form, model=model, refusal=refusal
    ), status


@bp.get("/decisions/<int:model_id>/report")
def decision_report(model_id: int):
    model = load_model(model_id)
    return render_template(
        "designer/decisions/report.html",
        model=model,
        imported=model.import_problems or [],
        problems=decisions.draft_problems(model),
        current="report",
    )


def _versions_page(model: DecisionModel, form: DecisionPublishForm, **extra: Any):
    versions = decisions.versions(model)
    old = request.args.get("old", type=int)
    new = request.args.get("new", "")
    return render_template(
        "designer/decisions/versions.html",
        model=model,
        versions=versions,
        form=form,
        can_publish=can(current_user, "processes.publish", model.partition_id),
        examples=decisions.run_examples(model) if model.draft_document else [],
        old=old if old is not None else (versions[1].number if len(versions) > 1 else None),
        new=new or (str(versions[0].number) if versions else "draft"),
        current="versions",
        **extra,
    )


@bp.get("/decisions/<int:model_id>/versions")
def decision_versions(model_id: int):
    model = load_model(model_id)
    return _versions_page(model, DecisionPublishForm())


@bp.post("/decisions/<int:model_id>/publish")
def decision_publish(model_id: int):
    model = load_model(model_id, lock=True, permission="processes.publish")
    form = DecisionPublishForm()
    if not form.validate_on_submit():
        return _versions_page(model, form), 422
    try:
        version = decisions.publish(
            model, actor=current_user, note=form.note.data or "", base_revision=posted_revision()
        )
    except DecisionServiceError as exc:
        db.session.rollback()
        model = load_model(model_id)
        return _versions_page(model, form, refusal=exc), exc.status
    flash(f"Published {model.name} as version {version.number}.", "success")
    return redirect(url_for("designer.decision_versions", model_id=model.id))


def _document_of(model: DecisionModel, which: str) -> tuple[str, dict] | None:
    if which == "draft":
        return ("the draft", model.draft_document) if model.draft_document else None
    if not which.isdigit():
        return None
    version = decisions.get_version(model, int(which))
    return (f"version {version.number}", version.document) if version else None


@bp.get("/decisions/<int:model_id>/compare")
def decision_compare(model_id: int):
    model = load_model(model_id)
    old = _document_of(model, request.args.get("old", ""))
    new = _document_of(model, request.args.get("new", ""))
    if old is None or new is None:
        abort(404)
    return render_template(
        "designer/decisions/compare.html",
        model=model,
        old_label=old[0],
        new_label=new[0],
        changes=decisions.compare(old[1], new[1]),
        versions=decisions.versions(model),
        old=request.args.get("old", ""),
        new=request.args.get("new", ""),
        current="versions",
    )


@bp.get("/decisions/<int:model_id>/export")
def decision_export(model_id: int):
    model = load_model(model_id)
    which = request.args.get("version", "draft")
    if which == "draft":
        if model.draft_document is None:
            abort(404)
        data = decisions.export_xml(model.draft_document, list(model.draft_examples or []))
        name = f"{model.key}-draft.dmn"
    else:
        version = decisions.get_version(model, int(which)) if which.isdigit() else None
        if version is None:
            abort(404)
        data = version.xml.encode("utf-8")
        name = f"{model.key}-v{version.number}.dmn"
    return Response(
        data,
        mimetype="application/xml",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
