"""API errors as JSON: {"error": code, "message": ..., "details": ...} with a fitting status."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify
from werkzeug.exceptions import HTTPException

from webapp.api.blueprint import bp
from webapp.engine import EngineError
from webapp.infra.database import is_unavailable, reset_session
from webapp.services.instances import InstanceError
from webapp.web.error_pages import CODES, database_unavailable


class BadRequest(Exception):
    """Malformed input (not JSON, not an object: 400) or a body of another media type (415)."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def api_error(code: str, message: str | None, status: int, details: Any = None) -> Response:
    response = jsonify(error=code, message=message or code, details=details)
    response.status_code = status
    return response


@bp.errorhandler(InstanceError)
def instance_error(error: InstanceError) -> Response:
    reset_session()
    details = {"fields": error.fields} if error.fields else None
    return api_error(error.code, error.message, error.status, details)


@bp.errorhandler(EngineError)
def engine_error(error: EngineError) -> Response:
    reset_session()
    return api_error(error.code, error.message, error.status, error.details)


@bp.errorhandler(BadRequest)
def bad_request(error: BadRequest) -> Response:
    reset_session()
    return api_error(error.code, error.message, error.status)


@bp.errorhandler(HTTPException)
def http_error(error: HTTPException) -> Response:
    original = getattr(error, "original_exception", None)
    if original is not None and is_unavailable(original):
        return database_unavailable()
    reset_session()
    status = error.code or 500
    return api_error(CODES.get(status, "error"), error.description, status)
