"""The designer: draw, validate, publish and compare processes (blueprint `designer`)."""

from webapp.designer import (  # noqa: F401  (importing the views registers their routes)
    decisions,
    editor,
    import_report,
    outline,
    panel,
    play,
    scenario_form,
    scenarios,
    versions,
    views,
)
from webapp.designer.blueprint import bp

__all__ = ["bp"]
