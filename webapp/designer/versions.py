"""Published versions: the list, a read-only view of one, exports, and comparing two."""

from __future__ import annotations

import json
from typing import Any

from flask import abort, render_template, request
from flask_login import current_user

from webapp.designer.access import can_publish, load_process
from webapp.designer.blueprint import bp
from webapp.designer.views import document_json, download
from webapp.inputs import MAX_INT32, whole_number
from webapp.models import Process, ProcessVersion
from webapp.permissions import can
from webapp.services import processes, scenarios
from webapp.services.operations import migration


def _version(process: Process, number: int) -> ProcessVersion:
    version = processes.get_version(process, number)
    if version is None:
        abort(404)
    return version


@bp.get("/<int:process_id>/versions")
def versions(process_id: int):
    process = load_process(process_id)
    items = processes.versions(process)
    latest = items[0] if items else None
    return render_template(
        "designer/versions.html",
        process=process,
        versions=items,
        draft_differs=latest is None or latest.content_hash != process.draft_hash,
        can_publish=can_publish(process),
        has_scenarios=bool(scenarios.scenarios_of(process.id)),
        coverage=scenarios.kept_coverage(process),
    )


@bp.get("/<int:process_id>/versions/<int:number>")
def version(process_id: int, number: int):
    process = load_process(process_id)
    item = _version(process, number)
    return render_template(
        "designer/version.html",
        process=process,
        version=item,
        nodes=item.document.get("nodes", {}),
        flows=item.document.get("flows", {}),
    )


@bp.get("/<int:process_id>/versions/<int:number>.bpmn")
def export_version_bpmn(process_id: int, number: int):
    process = load_process(process_id)
    item = _version(process, number)
    return download(item.bpmn_xml, f"{process.key}-v{number}.bpmn", "application/xml")


@bp.get("/<int:process_id>/versions/<int:number>.json")
def export_version_json(process_id: int, number: int):
    process = load_process(process_id)
    item = _version(process, number)
    return download(
        document_json(item.document), f"{process.key}-v{number}.json", "application/json"
    )


@bp.get("/<int:process_id>/compare")
def compare(process_id: int):
    """Two versions side by side: the list of differences and coloured diagrams."""
    process = load_process(process_id)
    items = processes.versions(process)
    if len(items) < 2:
        return render_template("designer/compare.html", process=process, versions=items, diff=None)
    a = whole_number(request.args.get("a"), 1, MAX_INT32) or items[1].number
    b = whole_number(request.args.get("b"), 1, MAX_INT32) or items[0].number
    old, new = _version(process, a), _version(process, b)
    diff = processes.compare_versions(old, new)
    statuses = diff.statuses()
    old_marks = {k: v for k, v in statuses.items() if v in ("removed", "changed", "moved")}
    new_marks = {k: v for k, v in statuses.items() if v in ("added", "changed", "moved")}
    return render_template(
        "designer/compare.html",
        process=process,
        versions=items,
        old=old,
        new=new,
        diff=diff,
        old_marks=old_marks,
        new_marks=new_marks,
        show=show_value,
        may_migrate=can(current_user, migration.PERMISSION, process.partition_id),
        running=migration.running_count(current_user, old),
    )


def show_value(value: Any) -> str:
    """A changed value as short text for the comparison table."""
    if value is None:
        return "—"
    text = (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )
    return text if len(text) <= 300 else text[:299] + "…"
