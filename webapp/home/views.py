"""The landing page, and the health endpoints load balancers and supervisors poll."""

from __future__ import annotations

from typing import Any

from flask import current_app, render_template, send_from_directory
from flask_login import current_user, login_required
from redis import Redis
from sqlalchemy import text

from webapp.extensions import db
from webapp.home.blueprint import bp
from webapp.infra.queue import redis_url
from webapp.permissions import can
from webapp.services import tasks
from webapp.services.operations.overview import status_counts


@bp.route("/")
@login_required
def index():
    return render_template("home.html", summary=_summary(current_user))


def _summary(user: Any) -> dict[str, str]:
    """A line of counts per area: what is waiting for the user there."""
    lines = {}
    if can(user, "tasks.work", scoped=False):
        counts = tasks.open_counts(user)
        lines["inbox.index"] = (
            f"{counts['mine']} assigned to you, {counts['claimable']} open for your roles"
        )
    if can(user, "instances.read", scoped=False):
        totals, _ = status_counts(user)
        lines["operations.index"] = (
            f"{totals.get('running', 0)} running, {totals.get('failed', 0)} failed"
        )
    return lines


@bp.route("/favicon.ico")
def favicon():
    """Browsers and tools ask for /favicon.ico whatever the page links."""
    return send_from_directory(
        current_app.static_folder or "static", "favicon.svg", mimetype="image/svg+xml"
    )


@bp.route("/livez")
@bp.route("/healthz")
def livez():
    """Liveness: the process answers. Restart it when this fails; nothing else is checked."""
    return {"status": "ok"}


@bp.route("/readyz")
def readyz():
    """Readiness: the database and Redis answer; 503 names the part that does not."""
    parts = {"database": _database(), "redis": _redis()}
    ready = all(state == "ok" for state in parts.values())
    body = {"status": "ok" if ready else "unavailable", **parts}
    return body, (200 if ready else 503), {"Cache-Control": "no-store"}


def _database() -> str:
    try:
        db.session.execute(text("SELECT 1"))
        return "ok"
    except Exception as error:
        current_app.logger.warning("readiness: database unavailable: %s", error)
        return "unavailable"
    finally:
        db.session.rollback()


def _redis() -> str:
    try:
        client = Redis.from_url(redis_url(current_app), socket_connect_timeout=1, socket_timeout=1)
        with client:
            client.ping()
        return "ok"
    except Exception as error:
        current_app.logger.warning("readiness: Redis unavailable: %s", error)
        return "unavailable"
