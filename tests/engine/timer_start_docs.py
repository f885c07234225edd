"""Timer start documents for tests."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.helpers.documents import document, flow, node
from webapp.models.base import utcnow


def timed(start_id: str = "tick", **timer: str) -> dict:
    """A timer start (`timer` settings) -> end."""
    nodes = {start_id: node("startEvent", "Every tick", event="timer", **timer)}
    return document({**nodes, "end": node("endEvent")}, {"f1": flow(start_id, "end")})


def soon() -> datetime:
    """A whole second far enough ahead that publishing is done before it (for in-process runs
    that pass their own `now`)."""
    return utcnow().replace(microsecond=0) + timedelta(seconds=30)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
