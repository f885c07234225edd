"""Styled error pages; a 500 rolls the database session back so nothing half-written stays."""

from __future__ import annotations

from flask import Flask, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from webapp.extensions import db

MESSAGES = {
    400: ("Bad request", "The request could not be understood."),
    403: ("Not allowed", "You do not have permission to do that."),
    404: ("Not found", "There is nothing here, or you may not see it."),
    405: ("Method not allowed", "That action is not available here."),
    409: ("Conflict", "Someone else changed this first."),
    413: ("Too large", "What you sent is larger than Flowdesk accepts."),
    422: ("Invalid input", "Some values need fixing."),
    429: ("Too many requests", "Slow down and try again shortly."),
    500: ("Something went wrong", "The error was logged and nothing was saved."),
}


def wants_json() -> bool:
    return request.path.startswith("/api/") or (request.accept_mimetypes.best == "application/json")


def render_error(status: int, detail: str | None = None):
    title, message = MESSAGES.get(status, ("Error", "Something went wrong."))
    if wants_json():
        return jsonify(error=title, message=detail or message, status=status), status
    return render_template(
        "errors/error.html", status=status, title=title, message=detail or message
    ), status


def register(app: Flask) -> None:
    @app.errorhandler(CSRFError)
    def csrf_error(error: CSRFError):
        db.session.rollback()
        return render_error(
            400,
            "The form expired or was sent without its security token. "
            "Reload the page and try again.",
        )

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        if error.code is None or error.code < 400:
            return error
        if error.code >= 500:
            db.session.rollback()
        return render_error(error.code, error.description if error.code == 409 else None)

    @app.errorhandler(Exception)
    def unhandled(error: Exception):
        db.session.rollback()
        app.logger.exception("unhandled error on %s %s", request.method, request.path)
        return render_error(500)
