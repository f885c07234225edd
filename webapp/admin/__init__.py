"""The admin area: users, roles and partitions."""

from flask import Blueprint

bp = Blueprint("admin", __name__)

from webapp.admin import views  # noqa: E402,F401
