"""Template globals: the navigation shown by permission, and small formatting filters."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Flask, url_for
from flask_login import current_user

from webapp.permissions import can
from webapp.services.tasks import is_offered, offered_to

# (label, endpoint, permission, unless): an area appears in the navigation when its blueprint
# exists and the user holds `permission` but not `unless`. Starting a process lives in the inbox;
# who may start but has no inbox gets its own entry.
NAVIGATION = [
    ("Designer", "designer.index", "processes.edit", None),
    ("Inbox", "inbox.index", "tasks.work", None),
    ("Start", "inbox.processes", "instances.start", "tasks.work"),
    ("Operations", "operations.index", "instances.read", None),
    ("Admin", "admin.index", "admin", None),
]


def navigation_for(user: Any, app: Flask) -> list[dict[str, str]]:
    """The areas `user` may open, in menu order."""
    items = []
    for label, endpoint, permission, unless in NAVIGATION:
        if endpoint not in app.view_functions:
            continue
        if can(user, permission, scoped=False) and not (unless and can(user, unless, scoped=False)):
            items.append({"label": label, "url": url_for(endpoint), "endpoint": endpoint})
    return items


def format_datetime(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else ""


def register(app: Flask) -> None:
    app.jinja_env.filters["datetime"] = format_datetime
    app.jinja_env.filters["offered_to"] = offered_to
    app.jinja_env.tests["offered"] = is_offered

    @app.context_processor
    def inject_navigation() -> dict[str, Any]:
        user = current_user
        nav = navigation_for(user, app) if user and user.is_authenticated else []
        return {"navigation": nav, "can": can}
