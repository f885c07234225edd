"""The request guard: what no view has to check again.

- `<int:...>` in every route takes ASCII digits within the id columns' range (else 404), so a
  huge id never reaches a query.
- Query arguments, form fields, headers and HTTP Basic credentials with a NUL or a lone
  surrogate are refused with 400 naming the field (PostgreSQL stores no NUL).
- An `InputError` raised anywhere answers with its status and the field it names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import Flask, current_app, jsonify, request
from werkzeug.routing import IntegerConverter

from webapp.extensions import db
from webapp.inputs import MAX_INT32, InputError, text_problem
from webapp.web.error_pages import render_error

View = TypeVar("View", bound=Callable[..., Any])
CODES = {400: "bad_request", 404: "not_found", 422: "invalid"}


def _up_to(high: int) -> str:
    """A regex for the whole numbers 0..`high` in ASCII digits, so a larger one matches no
    route at all (a converter refusing it after matching makes Werkzeug answer 405 instead)."""
    digits = str(high)
    options = [f"[0-9]{{1,{len(digits) - 1}}}"] if len(digits) > 1 else []
    for index, digit in enumerate(digits):
        if digit != "0":
            rest = len(digits) - index - 1
            options.append(f"{digits[:index]}[0-{int(digit) - 1}][0-9]{{{rest}}}")
    options.append(digits)
    return "(?:" + "|".join(options) + ")"


class IdConverter(IntegerConverter):
    """`<int:...>`: ASCII digits (not every Unicode digit as `\\d` does) up to the 32-bit
    column range, so an id the database cannot hold is a 404 like any unknown id."""

    regex = _up_to(MAX_INT32)


def checks_own_text(view: View) -> View:
    """Mark a view that reports unusable text in its arguments itself (inline on its page), so
    the guard lets its query arguments through; it must check every argument it reads."""
    view.checks_own_text = True  # type: ignore[attr-defined]
    return view


def register(app: Flask) -> None:
    """Install the converter (before any blueprint adds routes), the guard and its handler."""
    app.url_map.converters["int"] = IdConverter
    app.before_request(_guard)
    app.register_error_handler(InputError, _refused)


def _guard() -> None:
    """Refuse text no query or column can take before any view reads it."""
    if text_problem(request.path):
        raise InputError("path", "The address contains a character that is not allowed.", 404)
    for name, value in request.headers.items():
        if "\x00" in value:
            raise InputError(f"header {name}", "Remove the NUL character.", 400)
    credentials = request.authorization
    if credentials is not None and credentials.type == "basic":
        _check("username", credentials.username or "")
        _check("password", credentials.password or "")
    view = current_app.view_functions.get(request.endpoint or "")
    if not getattr(view, "checks_own_text", False):
        _check_all(request.args.items(multi=True))
    if request.method not in ("GET", "HEAD", "OPTIONS") and request.mimetype in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        _check_all(request.form.items(multi=True))


def _check_all(items: Any) -> None:
    for name, value in items:
        _check("a field name", name)
        _check(name, value)


def _check(field: str, value: str) -> None:
    problem = text_problem(value)
    if problem:
        raise InputError(field, problem, 400)


def _refused(error: InputError) -> Any:
    db.session.rollback()
    message = f"{error.field}: {error.message}"
    if request.path.startswith("/api/"):
        response = jsonify(
            error=CODES.get(error.status, "bad_request"),
            message=message,
            details={"fields": {error.field: error.message}},
        )
        response.status_code = error.status
        return response
    return render_error(error.status, message)
