"""The inbox area: starting processes (and, next, the task inbox)."""

from flask import Blueprint

bp = Blueprint("inbox", __name__)

from webapp.inbox import start, tasks  # noqa: E402, F401
