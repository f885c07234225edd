"""The "Move tokens" page of an instance: per live token move it or cancel it, add a token,
edit variables, give a reason; Preview shows the effects, Apply changes the instance."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.datastructures import MultiDict

from webapp.engine import modification
from webapp.operations.blueprint import bp
from webapp.process.naming import Namer
from webapp.services.instances import InstanceError
from webapp.services.operations import detail, structure
from webapp.services.operations import modification as service
from webapp.web.access import permission_required

VARIABLE_ROWS = 3
OPERATION_FIELD = re.compile(r"^operations\[(\d+)\]")


def _modifiable(instance_id: int):
    try:
        return service.modifiable(current_user, instance_id)
    except InstanceError as error:
        abort(error.status)


def _render(instance, *, form: MultiDict | None = None, errors=None, preview=None, status=200):
    version = instance.process_version
    document = version.document
    context = {
        "instance": instance,
        "titles": Namer(document.get("nodes") or {}, document.get("flows") or {}).labels(),
        "tokens": structure.token_table(instance),
        "choices": service.choices(instance),
        "form": form or MultiDict(),
        "errors": errors or {},
        "preview": preview,
        "variable_rows": range(VARIABLE_ROWS),
        "active": instance.status in ("running", "failed"),
    }
    return render_template("operations/modify.html", **context), status


@bp.route("/instances/<int:instance_id>/modify")
@permission_required("instances.modify")
def modify_page(instance_id: int):
    return _render(_modifiable(instance_id))


def _read(form: MultiDict) -> tuple[list[modification.Operation], list[str], dict, dict]:
    """The form's operations (with the field each came from), variable edits and field errors."""
    operations: list[modification.Operation] = []
    sources: list[str] = []
    errors: dict[str, str] = {}
    for raw in form.getlist("token"):
        if not raw.isdigit():
            continue
        token_id = int(raw)
        target = form.get(f"move_{token_id}", "").strip()
        cancelled = form.get(f"cancel_{token_id}") == "on"
        if target and cancelled:
            errors[f"move_{token_id}"] = (
                f"Token {token_id}: choose a node to move it to, or cancel it, not both."
            )
        elif target:
            operations.append(modification.Operation("move", token_id=token_id, node_id=target))
            sources.append(f"move_{token_id}")
        elif cancelled:
            operations.append(modification.Operation("cancel_branch", token_id=token_id))
            sources.append(f"cancel_{token_id}")
    added = form.get("add", "").strip()
    if added:
        operations.append(modification.Operation("add", node_id=added))
        sources.append("add")
    variables: dict[str, Any] = {}
    for row in range(VARIABLE_ROWS):
        name = form.get(f"var_name_{row}", "").strip()
        text = form.get(f"var_value_{row}", "")
        if not name and not text.strip():
            continue
        if not modification.VARIABLE_NAME.match(name):
            errors[f"var_name_{row}"] = (
                f"Variable {row + 1}: use letters, digits and _ for the name, not starting "
                "with a digit."
            )
            continue
        try:
            variables[name] = detail.parse_value(text)
        except InstanceError as error:
            errors[f"var_value_{row}"] = f"Variable {row + 1} ({name}): {error.message}"
    return operations, sources, variables, errors


def _field_errors(error: InstanceError, sources: list[str]) -> dict[str, str]:
    """The refusal's fields as the form's own: `operations[2]` is the field it came from."""
    found: dict[str, str] = {}
    for name, message in (error.fields or {"action": error.message}).items():
        matched = OPERATION_FIELD.match(name)
        if matched and int(matched.group(1)) < len(sources):
            found[sources[int(matched.group(1))]] = message
        elif name in ("reason", "stamp"):
            found["reason" if name == "reason" else "action"] = message
        else:
            found["action"] = message
    return found


def _digest(operations: list[modification.Operation], variables: dict[str, Any]) -> str:
    """What the form asks for, so an Apply of a form changed after its preview is refused."""
    asked = {"operations": [o.as_dict() for o in operations], "variables": variables}
    text = json.dumps(asked, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@bp.route("/instances/<int:instance_id>/modify", methods=["POST"])
@permission_required("instances.modify")
def modify_submit(instance_id: int):
    instance = _modifiable(instance_id)
    form = request.form
    applying = form.get("action") == "apply"
    operations, sources, variables, errors = _read(form)
    try:
        reason = service.clean_reason(form.get("reason"), required=applying)
    except InstanceError as error:
        errors["reason"] = error.message.removeprefix("reason: ").capitalize()
    if not operations and not variables and not errors:
        errors["action"] = (
            "Choose a token to move or cancel, a node to add a token at, or a variable."
        )
    asked = _digest(operations, variables)
    if applying and not errors and (not form.get("stamp") or form.get("asked") != asked):
        errors["action"] = "The change is not the one previewed: preview it again, then apply."
    if errors:
        return _render(instance, form=form, errors=errors, status=422)
    try:
        preview = service.run(
            current_user,
            instance_id,
            operations,
            variables,
            reason=reason,
            dry_run=not applying,
            stamp=form.get("stamp") if applying else None,
        )
    except InstanceError as error:
        return _render(
            instance, form=form, errors=_field_errors(error, sources), status=error.status
        )
    if applying:
        flash(f"The tokens of instance {instance_id} were changed.", "success")
        return redirect(url_for("operations.instance_detail", instance_id=instance_id), 303)
    return _render(instance, form=form, preview={**preview, "asked": asked})
