"""The instance list: filters (including a data expression), keyset pages, row selection.

The rows and the pager refresh by themselves (webapp/web/live.py) every few seconds with the same
filters and page; the filter and bulk forms, the ticks (kept by hx-preserve) and scroll stay.
"""

from __future__ import annotations

from typing import Any

from flask import render_template, request
from flask_login import current_user

from webapp.inputs import MAX_INT32, text_problem, whole_number
from webapp.operations.blueprint import bp
from webapp.services.operations import bulk_actions
from webapp.services.operations import filters as listing
from webapp.services.operations.bulk_actions import ACTIONS
from webapp.services.operations.common import OperationsError
from webapp.services.operations.keyset import Cursor, KeysetPage
from webapp.web import live
from webapp.web.failed_forms import failed_form
from webapp.web.guard import checks_own_text

PAGE_SIZE = 25
REGIONS = {
    "instance-table": "operations/_instance_table.html",
    "instance-pager": "operations/_instance_pager.html",
}
POLLER = "instances-poll"


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
    action = text("action") if text("action") in ACTIONS else ""
    scope = "filter" if text("scope") == "filter" else "selected"
    reason = text("reason")
    return {"errors": errors, "action": action, "reason": reason, "scope": scope, "ids": ids}


def _list_context(filters: listing.Filters) -> dict[str, Any]:
    """The page's context with its live regions rendered and the poll's URL arguments."""
    form = _bulk_form()
    problems: dict[str, str] = {}
    after, before = _cursor("after", problems), _cursor("before", problems)
    page = KeysetPage([], None, None)
    try:
        page = listing.list_page(current_user, filters, after=after, before=before, size=PAGE_SIZE)
    except OperationsError as error:
        problems.update(error.fields)
    context: dict[str, Any] = {
        "filters": filters,
        "args": filters.args(),
        "page": page,
        "problems": problems,
        "bulk_errors": form["errors"],
        "bulk": form,
        "bulk_actions": bulk_actions.allowed(current_user),
    }
    context["selectable"] = bool(context["bulk_actions"]) and not problems
    context["regions"] = live.render_regions(REGIONS, context)
    cursors = {name: request.args[name] for name in ("after", "before") if request.args.get(name)}
    context["poll_args"] = {**context["args"], **cursors, "ids": sorted(form["ids"])}
    context["mode"] = "off" if problems else "steady"
    return context


def render_list(filters: listing.Filters, *, status: int = 200) -> tuple[str, int]:
    """The list page for `filters`; filter problems show inline with a 422."""
    context = _list_context(filters)
    if context["problems"]:
        status = 422
    context.update(
        choices=listing.filter_choices(current_user),
        poller=live.poller(
            POLLER,
            "operations.instance_list_live",
            context["regions"],
            context["mode"],
            **context["poll_args"],
        ),
    )
    return render_template("operations/instances.html", **context), status


@bp.route("/instances")
@checks_own_text
def instance_list():
    return render_list(listing.read_filters(request.args))


@bp.route("/instances/live")
@checks_own_text
def instance_list_live():
    """The list's poll: the rows and pager when they changed since the digests, or 204."""
    context = _list_context(listing.read_filters(request.args))
    return live.poll_response(
        POLLER,
        "operations.instance_list_live",
        context["regions"],
        context["mode"],
        **context["poll_args"],
    )
