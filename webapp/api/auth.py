"""Who calls the API: the signed-in session (with a CSRF header for changes) or HTTP Basic."""

from __future__ import annotations

from flask import current_app, g, request
from flask_login import current_user
from flask_wtf.csrf import validate_csrf
from wtforms.validators import ValidationError

from webapp.api.blueprint import bp
from webapp.api.contract import is_public
from webapp.api.errors import api_error
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.services import accounts

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


@bp.before_request
def authenticate():
    """Set `g.api_user`, or answer 401 (no or wrong credentials) / 400 (missing CSRF header).
    The contract and its page need no credentials."""
    if is_public(current_app.view_functions.get(request.endpoint or "")):
        return None
    credentials = request.authorization
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
