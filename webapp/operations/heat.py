"""The heat view: per version, how many instances wait at each node and for how long."""

from __future__ import annotations

from flask import abort, render_template
from flask_login import current_user
from sqlalchemy import func, select

from webapp.extensions import db
from webapp.models import Instance, Process
from webapp.models.statuses import UNFINISHED_INSTANCE
from webapp.operations.blueprint import bp
from webapp.operations.formatting import duration
from webapp.permissions import can, partition_filter
from webapp.services import processes, scopes
from webapp.services.operations import labels, overview

VERSIONS_DRAWN = 5


@bp.route("/heat")
def heat_index():
    visible = partition_filter(Process.partition_id, current_user)
    processes = db.session.scalars(select(Process).where(visible).order_by(Process.key)).all()
    live = dict(
        db.session.execute(
            select(Instance.process_key, func.count())
            .where(Instance.status.in_(UNFINISHED_INSTANCE))
            .where(partition_filter(Instance.partition_id, current_user))
            .group_by(Instance.process_key)
        ).all()
    )
    return render_template("operations/heat_index.html", processes=processes, live=live)


@bp.route("/heat/<key>")
def heat(key: str):
    process = db.session.scalar(select(Process).where(Process.key == key))
    if process is None or not can(current_user, "instances.read", process.partition_id):
        abort(404)
    by_version = overview.heat(current_user, process)
    versions = processes.versions(process)
    drawn = [v for v in versions if v.id in by_version] or versions[:1]
    drawn = drawn[:VERSIONS_DRAWN]
    overlays = {
        version_id: {
            node_id: {
                "waiting": h.waiting,
                "failed": h.failed,
                "median": duration(h.median),
                "longest": duration(h.longest),
            }
            for node_id, h in nodes.items()
        }
        for version_id, nodes in by_version.items()
    }
    return render_template(
        "operations/heat.html",
        overlays=overlays,
        process=process,
        drawn=drawn,
        quiet=[v for v in versions if v not in drawn],
        by_version=by_version,
        titles=labels.version_titles(v.id for v in drawn),
        scopes={v.id: scopes.scopes_by_node(v.document) for v in drawn},
    )
