"""The designer: draw, validate, publish and compare processes (blueprint `designer`)."""

from flask import Blueprint

from webapp.permissions import permission_required

bp = Blueprint("designer", __name__)


@bp.before_request
@permission_required("processes.edit")
def guard() -> None:
    """Every designer route needs `processes.edit`; each process is also checked by partition."""


from webapp.designer import (  # noqa: E402,F401
    editor,
    import_report,
    outline,
    panel,
    versions,
    views,
)
