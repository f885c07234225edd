"""Styled error pages (JSON under /api). A 500 rolls the database session back so nothing
half-written stays; a database outage answers 503 with Retry-After, rendered without the database.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, current_app, g, jsonify, render_template, request, url_for
from flask_wtf.csrf import CSRFError
from markupsafe import escape
from werkzeug.exceptions import HTTPException

from webapp.extensions import login_manager
from webapp.infra.database import RETRY_AFTER, commit_outcome, is_unavailable, reset_session
from webapp.web.transport import insecure_transport

MESSAGES = {
    400: ("Bad request", "The request could not be understood."),
    403: ("Not allowed", "You do not have permission to do that."),
    404: ("Not found", "There is nothing here, or you may not see it."),
    405: ("Method not allowed", "That action is not available here."),
    409: ("Conflict", "Someone else changed this first."),
    413: ("Too large", "What you sent is larger than Flowdesk accepts."),
    422: ("Invalid input", "Some values need fixing."),
    429: ("Too many requests", "Slow down and try again shortly."),
    500: ("Something went wrong", "The error was logged."),
    503: ("Database unavailable", "Flowdesk cannot reach its database right now."),
}

# The stable `error` code of a JSON error answer, by status (callers may give a finer one).
CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    422: "invalid",
    429: "too_many_requests",
    500: "server_error",
    503: "database_unavailable",
}

# What a failed request left behind, by `database.commit_outcome()`; said with every 500 and 503.
OUTCOMES = {
    "none": "Nothing was saved.",
    "saved": "Part of the change was saved before the error: check before you repeat it.",
    "unknown": (
        "The connection to the database was lost while saving, so the outcome is unknown: "
        "your change may or may not have been saved. Check before you repeat it."
    ),
}
# Flask-WTF's reasons for refusing an HTTPS form post whose Referer is not this server's address:
# behind a proxy, most often a Host header that lost the port (nginx's $host).
ORIGIN_MISMATCH = ("The referrer header is missing.", "The referrer does not match the host.")
EXPIRED_FORM = (
    "The form expired or was sent without its security token. Reload the page and try again."
)
FOREIGN_ORIGIN = (
    "The form was refused because the address it was sent from does not match this server's "
    "address. Reload the page and try again; if this keeps happening, the proxy in front of "
    "Flowdesk must pass the Host header with its port (see the deployment guide)."
)
API_UNKNOWN = (
    "The connection to the database was lost while saving, so the outcome is unknown: the "
    "change may or may not have been saved. Retry with the same Idempotency-Key (or message_id) "
    "to get the first result if it was saved; without one, check before repeating the request."
)


def wants_json() -> bool:
    return request.path.startswith("/api/") or (request.accept_mimetypes.best == "application/json")


def render_error(
    status: int, detail: str | None = None, *, code: str | None = None, details: Any = None
) -> Response:
    title, message = MESSAGES.get(status, ("Error", "Something went wrong."))
    message = detail or message
    if wants_json():
        response = jsonify(
            error=code or CODES.get(status, "error"),
            message=message,
            status=status,
            details=details,
        )
    else:
        response = Response(_page(status, title, message), mimetype="text/html")
    response.status_code = status
    return response


def database_unavailable() -> Response:
    """503 with Retry-After for a database that is down, locked or was lost during a commit."""
    outcome = commit_outcome()
    reset_session()
    code = "outcome_unknown" if outcome == "unknown" else "database_unavailable"
    if outcome == "unknown" and request.path.startswith("/api/"):
        detail = API_UNKNOWN
    else:
        detail = f"{MESSAGES[503][1]} Try again in a few seconds. {OUTCOMES[outcome]}"
    response = render_error(503, detail, code=code, details={"retry_after": RETRY_AFTER})
    response.headers["Retry-After"] = str(RETRY_AFTER)
    return response


def _page(status: int, title: str, message: str) -> str:
    """The styled error page; while the database is unreachable it renders for an anonymous
    visitor (no user lookup, no navigation), and if even that fails, as plain styled HTML."""
    context = {"status": status, "title": title, "message": message}
    if status == 503:
        _as_anonymous()
    try:
        return render_template("errors/error.html", **context)
    except Exception as error:
        if not is_unavailable(error):
            current_app.logger.exception("the styled error page failed")
            return _plain_page(status, title, message)
    reset_session()
    _as_anonymous()
    try:
        return render_template("errors/error.html", **context)
    except Exception:
        return _plain_page(status, title, message)


def _as_anonymous() -> None:
    g._login_user = login_manager.anonymous_user()


def _plain_page(status: int, title: str, message: str) -> str:
    css = escape(url_for("static", filename="css/app.css"))
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)} · '
        f'Flowdesk</title><link rel="stylesheet" href="{css}"></head><body><main id="main">'
        f'<section class="narrow error-page"><p class="status">{status}</p><h1>{escape(title)}'
        f"</h1><p>{escape(message)}</p></section></main></body></html>"
    )


def register(app: Flask) -> None:
    @app.errorhandler(CSRFError)
    def csrf_error(error: CSRFError):
        reset_session()
        if error.description in ORIGIN_MISMATCH:
            app.logger.warning(
                "form refused, origin/referrer mismatch (not an expired token): %s Host %r, "
                "Referer %r; a proxy must pass the Host header with its port",
                error.description,
                request.host,
                request.referrer,
            )
            return render_error(400, insecure_transport() or FOREIGN_ORIGIN)
        app.logger.warning("form refused, security token: %s", error.description)
        return render_error(400, insecure_transport() or EXPIRED_FORM)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        if error.code is None or error.code < 400:
            return error
        if error.code >= 500:
            original = getattr(error, "original_exception", None)
            if original is not None and is_unavailable(original):
                return database_unavailable()
            if error.code == 500:
                return _server_error()
            reset_session()
        return render_error(error.code, error.description if error.code == 409 else None)

    @app.errorhandler(Exception)
    def unhandled(error: Exception):
        if is_unavailable(error):
            app.logger.warning(
                "database unavailable on %s %s: %s", request.method, request.path, error
            )
            return database_unavailable()
        app.logger.exception("unhandled error on %s %s", request.method, request.path)
        return _server_error()


def _server_error() -> Response:
    outcome = commit_outcome()
    reset_session()
    return render_error(500, f"{MESSAGES[500][1]} {OUTCOMES[outcome]}", code="server_error")
