"""The JSON API under /api: instances and messages, for scripts and other systems.

Authenticated by the session cookie (unsafe methods then need the X-CSRFToken header) or by
HTTP Basic with a Flowdesk username and password.
"""

from flask import Blueprint

from webapp.extensions import csrf

bp = Blueprint("api", __name__)
csrf.exempt(bp)

from webapp.api import auth, views  # noqa: E402, F401
