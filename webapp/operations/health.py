"""Worker and queue health: live RQ workers, queue depth, scheduled and failed jobs, leases."""

from __future__ import annotations

from flask import render_template

from webapp.operations.blueprint import bp
from webapp.services.operations import health as health_service


@bp.route("/health")
def health():
    return render_template("operations/health.html", health=health_service.read())
