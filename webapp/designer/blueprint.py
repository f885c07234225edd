"""The `designer` blueprint, with the check every one of its routes passes first."""

from flask import Blueprint

from webapp.web.access import permission_required

bp = Blueprint("designer", __name__)


@bp.before_request
@permission_required("processes.edit")
def guard() -> None:
    """Every designer route needs `processes.edit`; each process is also checked by partition."""
