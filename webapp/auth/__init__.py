"""Sign-in and sign-out."""

from flask import Blueprint

bp = Blueprint("auth", __name__)

from webapp.auth import views  # noqa: E402,F401
