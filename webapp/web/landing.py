"""Where people land after signing in: the first area they work in (admins see the overview)."""

from __future__ import annotations

from typing import Any

from flask import current_app, url_for

from webapp.permissions import can

LANDING = [("tasks.work", "inbox.index"), ("processes.edit", "designer.index"),
           ("instances.read", "operations.index")]  # fmt: skip


def landing_url(user: Any) -> str:
    """The page a user starts on: their inbox, operations or the designer, else the home page."""
    if not can(user, "admin", scoped=False):
        for permission, endpoint in LANDING:
            if can(user, permission, scoped=False) and endpoint in current_app.view_functions:
                return url_for(endpoint)
    return url_for("home.index")
