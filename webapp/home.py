"""The landing page, and the health endpoints load balancers and supervisors poll."""

from __future__ import annotations

from flask import Blueprint, current_app, render_template
from flask_login import login_required
from redis import Redis
from sqlalchemy import text

from webapp.extensions import db
from webapp.queue import redis_url

bp = Blueprint("home", __name__)


@bp.route("/")
@login_required
def index():
    return render_template("home.html")


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
