"""The instance list: filters (including a data expression), keyset pages, row selection."""

from __future__ import annotations

from typing import Any

from flask import render_template, request
from flask_login import current_user

from webapp.failed_forms import failed_form
from webapp.guard import checks_own_text
from webapp.inputs import MAX_INT32, text_problem, whole_number
from webapp.operations import bp
from webapp.permissions import can
from webapp.services.operations import bulk
from webapp.services.operations import filters as listing
from webapp.services.operations.common import OperationsError
from webapp.services.operations.keyset import Cursor, KeysetPage

PAGE_SIZE = 25


def _cursor(name: str, problems: dict[str, str]) -> Cursor | None:
    text = request.args.get(name, "")
    if not text:
        return None
    try:
        return Cursor.decode(text)
    except ValueError:
        problems[name] = "This list position is not valid; start from the first page."
        return None


def _bulk_form() -> dict[str, Any]:
    """The bulk form as the person left it: after a failed post (errors, ticks and typed values
    kept by `bulk_submit`), or coming back from the confirmation (in the query)."""
    failed = failed_form("bulk")
    if failed is not None:
        values: Any = failed.values
        errors = failed.errors
    else:
        values, errors = request.args, {}

    def text(name: str) -> str:
        value = values.get(name, "")
        return value if isinstance(value, str) and not text_problem(value) else ""

    ticked = failed.values_of("ids") if failed else request.args.getlist("ids")
    ids = {number for v in ticked if (number := whole_number(v, 1, MAX_INT32))}
    action = text("action") if text("action") in bulk.ACTIONS else ""
    scope = "filter" if text("scope") == "filter" else "selected"
    reason = text("reason")
    return {"errors": errors, "action": action, "reason": reason, "scope": scope, "ids": ids}


def render_list(filters: listing.Filters, *, status: int = 200) -> tuple[str, int]:
    """The list page for `filters`; filter problems show inline with a 422."""
    form = _bulk_form()
    bulk_errors = form["errors"]
    problems: dict[str, str] = {}
    after, before = _cursor("after", problems), _cursor("before", problems)
    page = KeysetPage([], None, None)
    try:
        page = listing.list_page(current_user, filters, after=after, before=before, size=PAGE_SIZE)
    except OperationsError as error:
        problems.update(error.fields)
    if problems:
        status = 422
    context: dict[str, Any] = {
        "filters": filters,
        "args": filters.args(),
        "page": page,
        "problems": problems,
        "bulk_errors": bulk_errors,
        "bulk": form,
        "choices": listing.filter_choices(current_user),
        "selectable": can(current_user, "instances.manage", scoped=False) and not problems,
    }
    return render_template("operations/instances.html", **context), status


@bp.route("/instances")
@checks_own_text
def instance_list():
    return render_list(listing.read_filters(request.args))
