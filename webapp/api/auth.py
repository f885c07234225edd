"""Who calls the API: a bearer token, the signed-in session (with a CSRF header for changes) or
HTTP Basic (legacy)."""

from __future__ import annotations

from flask import current_app, g, request
from flask_login import current_user
from flask_wtf.csrf import validate_csrf
from wtforms.validators import ValidationError

from webapp.api.blueprint import bp
from webapp.api.contract import is_public
from webapp.api.errors import api_error
from webapp.api.scopes import scope_for
from webapp.engine import history
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.services import accounts, api_tokens

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


@bp.before_request
def authenticate():
    """Set `g.api_user`, or answer 401 (no or wrong credentials) / 400 (missing CSRF header) /
    403 (a token without the endpoint's scope)."""
    if is_public(current_app.view_functions.get(request.endpoint or "")):
        return None
    credentials = request.authorization
    if credentials is not None and credentials.type == "bearer":
        return _bearer(credentials.token or "")
    if credentials is not None and credentials.type == "basic":
        begin_write(db.session)  # sign-in bookkeeping writes; take the SQLite lock first
        result = accounts.authenticate(
            credentials.username or "", credentials.password or "", request.remote_addr
        )
        if result.user is None:
            status = 429 if result.locked else 401
            response = api_error(
                "unauthorized" if status == 401 else "locked", result.error, status
            )
            response.headers["WWW-Authenticate"] = 'Basic realm="Flowdesk"'
            if result.locked:
                response.headers["Retry-After"] = str(result.retry_after)
            return response
        g.api_user = result.user
        return None
    if not current_user.is_authenticated:
        response = api_error(
            "unauthorized", "Sign in, or send HTTP Basic credentials of a Flowdesk user.", 401
        )
        response.headers["WWW-Authenticate"] = 'Basic realm="Flowdesk"'
        return response
    if request.method not in SAFE_METHODS:
        try:
            validate_csrf(request.headers.get("X-CSRFToken", ""))
        except ValidationError:
            return api_error(
                "csrf",
                "Requests signed in by cookie must send the page's token in X-CSRFToken.",
                400,
            )
    g.api_user = current_user._get_current_object()
    return None


def _bearer(raw: str):
    """Check a bearer token: 401 naming why it is refused, 403 naming a scope it lacks; no
    sign-in throttling, so a wrong token never locks anyone out."""
    result = api_tokens.check(raw)
    if result.user is None or result.token is None:
        response = api_error("unauthorized", result.error, 401)
        response.headers["WWW-Authenticate"] = (
            f'Bearer realm="Flowdesk", error="invalid_token", error_description="{result.error}"'
        )
        return response
    endpoint = request.endpoint
    if endpoint is not None:
        needed = scope_for(endpoint)
        if needed is None:
            return api_error("forbidden", "This endpoint does not accept API tokens.", 403)
        if needed not in result.token.scope_set:
            response = api_error(
                "insufficient_scope",
                f"This token lacks the scope {needed!r}.",
                403,
                {"scope": needed},
            )
            response.headers["WWW-Authenticate"] = (
                f'Bearer realm="Flowdesk", error="insufficient_scope", scope="{needed}"'
            )
            return response
    g.api_user = result.user
    g.api_token = result.token
    history.attribute(result.user.username, result.token.name)
    return None


@bp.teardown_request
def forget_token(_error: BaseException | None) -> None:
    """History written after this request names no token."""
    history.attribute(None, None)
