"""The `operations` blueprint, with the check every one of its routes passes first."""

from flask import Blueprint

from webapp.web.access import permission_required

bp = Blueprint("operations", __name__)


@bp.before_request
@permission_required("instances.read")
def guard() -> None:
    """Every operations route needs the instances.read permission."""
