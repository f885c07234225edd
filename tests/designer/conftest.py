"""Designer test helpers: processes made through the service, signed-in clients, canvas saves."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from sqlalchemy import select

from tests.conftest import csrf_token
from webapp.models import Partition, Process, User
from webapp.process.bpmn import export_bpmn
from webapp.services import processes

USER_TASK = {
    "assignee": {"type": "user", "value": "alice"},
    "form": {"fields": [{"key": "approved", "label": "Approve?", "type": "boolean"}]},
    "saveTo": "review",
}


def approval_document(**changes: Any) -> dict[str, Any]:
    """start -> review (user task) -> gateway -> ok / rejected, with a condition and a default."""
    doc = {
        "format_version": 1,
        "nodes": {
            "start": {"kind": "startEvent", "title": "Start", "position": {"x": 100, "y": 100}},
            "review": {
                "kind": "userTask",
                "title": "Review",
                "config": USER_TASK,
                "position": {"x": 200, "y": 78},
            },
            "ok": {"kind": "exclusiveGateway", "title": "OK?", "position": {"x": 360, "y": 93}},
            "done": {"kind": "endEvent", "title": "Done", "position": {"x": 480, "y": 100}},
            "rejected": {"kind": "endEvent", "title": "Rejected", "position": {"x": 480, "y": 200}},
        },
        "flows": {
            "f1": {"source": "start", "target": "review"},
            "f2": {"source": "review", "target": "ok"},
            "f3": {"source": "ok", "target": "done", "condition": "$vars.review.approved == true"},
            "f4": {"source": "ok", "target": "rejected", "default": True},
        },
    }
    doc.update(changes)
    return copy.deepcopy(doc)


@pytest.fixture
def make_process(db_session, demo):
    """Create a process (finance partition unless told) through the service; returns its id."""

    def make(
        key: str = "invoice", partition: str | None = "finance", doc: dict | None = None
    ) -> int:
        part = db_session.scalar(select(Partition).where(Partition.key == partition))
        actor = db_session.scalar(select(User).where(User.username == "designer"))
        process = processes.create_process(
            key, key.title(), partition_id=part.id if part else None, actor=actor, document=doc
        )
        db_session.commit()
        return process.id

    return make


@pytest.fixture
def designer(login_as):
    return login_as("designer")


def token(client, path: str = "/designer/") -> str:
    return csrf_token(client, path)


def get_process(db_session, process_id: int) -> Process:
    db_session.expire_all()
    return db_session.get(Process, process_id)


def save_xml(client, process_id: int, xml: str | bytes, revision: int, csrf: str | None = None):
    """Post a diagram as the canvas does."""
    headers = {"X-Draft-Revision": str(revision), "Accept": "application/json"}
    headers["X-CSRFToken"] = csrf or token(client, f"/designer/{process_id}/")
    return client.post(
        f"/designer/{process_id}/save", data=xml, headers=headers, content_type="application/xml"
    )


def xml_of(doc: dict[str, Any]) -> str:
    return export_bpmn(doc)
