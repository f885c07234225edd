"""Timer start documents for tests, and publishing them before the library accepts them."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from tests.engine.documents import document, flow, node
from webapp.models.base import utcnow
from webapp.services import processes

# Until the library's validation accepts process-level timer starts (issue 16, library helper),
# only that one refusal is dropped; a no-op once validation accepts them.
_MAIN_REFUSAL = "only the start event of an event sub-process starts on an event"


@pytest.fixture(autouse=True)
def timer_starts_publishable(monkeypatch):
    check = processes.check_draft

    def accepting(process, doc=None):
        return [problem for problem in check(process, doc) if _MAIN_REFUSAL not in problem.message]

    monkeypatch.setattr(processes, "check_draft", accepting)


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
