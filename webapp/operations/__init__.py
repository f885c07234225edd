"""The operations area: overview, instance list and detail, bulk actions, heat, health, retention,
schedules.

Every route needs `instances.read`; changes need `instances.manage` in the object's partition.
"""

from flask import Blueprint

from webapp.permissions import permission_required

bp = Blueprint("operations", __name__)


@bp.before_request
@permission_required("instances.read")
def guard() -> None:
    """Every operations route needs the instances.read permission."""


from webapp.operations import (  # noqa: E402, F401
    bulk,
    detail,
    formatting,
    health,
    heat,
    instances,
    overview,
    retention,
    schedules,
    signals,
)
