"""The designer over HTTP: posting its forms with a CSRF token, uploading files, publishing, and
the properties panel's requests and answers."""

from __future__ import annotations

import io
import json
import re

from sqlalchemy import select

from tests.helpers.app import csrf_token
from webapp.models import Partition, Process, ProcessVersion, User
from webapp.process.kinds import KINDS
from webapp.services import processes


def post_form(client, path, **data):
    body = {"csrf_token": token(client, path), **data}
    return client.post(path, data=body, content_type="multipart/form-data")


def post_edit(client, path, revision=1, **data):
    csrf = token(client, "/designer/")
    return client.post(path, data={"csrf_token": csrf, "revision": revision, **data})


def finance(db_session) -> int:
    return db_session.scalar(select(Partition.id).where(Partition.key == "finance"))


def carried(page: str) -> str:
    found = re.search(r'name="carried" type="hidden" value="([^"]*)"', page)
    assert found, "the file is carried to the second step"
    return found.group(1)


def upload(client, path, content, filename="process.bpmn", **data):
    body = {"csrf_token": token(client, path), "file": (io.BytesIO(content), filename), **data}
    return client.post(path, data=body, content_type="multipart/form-data")


def publish(client, pid, note="First", revision=1, **headers):
    csrf = token(client, f"/designer/{pid}/publish")
    return client.post(
        f"/designer/{pid}/publish",
        data={"csrf_token": csrf, "note": note, "revision": revision},
        headers=headers,
    )


def versions(db_session, pid):
    db_session.expire_all()
    return db_session.scalars(
        select(ProcessVersion)
        .where(ProcessVersion.process_id == pid)
        .order_by(ProcessVersion.number)
    ).all()


def publish_now(db_session, process_id: int) -> None:
    actor = db_session.scalar(select(User).where(User.username == "designer"))
    processes.publish(get_process(db_session, process_id), actor=actor, note="v")
    db_session.commit()


HX = {"HX-Request": "true", "HX-Target": "section#props"}


def panel_get(client, pid, **values):
    return client.get(f"/designer/{pid}/panel", query_string=values, headers=HX)


def panel_post(client, pid, data, csrf=None):
    headers = {**HX, "X-CSRFToken": csrf or token(client, f"/designer/{pid}/")}
    return client.post(f"/designer/{pid}/panel", data=data, headers=headers)


def applied(response) -> dict:
    assert response.status_code == 200, response.get_data(as_text=True)
    return json.loads(response.headers["HX-Trigger"])["bpmn-apply"]


def user_task(**fields) -> dict:
    data = {
        "element_id": "review",
        "kind": "userTask",
        "original": "{}",
        "title": "Review",
        "assignee_type": "user",
        "assignee_user": "alice",
        "action": "apply",
    }
    data.update(fields)
    return data


def node(kind: str, element_id: str = "x", **fields) -> dict:
    data = {"element_id": element_id, "kind": kind, "original": "{}", "title": ""}
    data["action"] = "apply"
    data.update(fields)
    return data


def refused(response) -> str:
    assert response.status_code == 422, response.get_data(as_text=True)
    assert "HX-Trigger" not in response.headers
    return response.get_data(as_text=True)


def incomplete(response) -> str:
    """Applied with a value still missing (Apply pressed): the rest goes to the canvas, and the
    panel says what is missing."""
    assert response.status_code == 200, response.get_data(as_text=True)
    assert "bpmn-apply" in response.headers["HX-Trigger"]
    html = response.get_data(as_text=True)
    assert "Still to fill in" in html
    return html


def html_of(client, pid, kind, config=None, **extra) -> str:
    response = panel_get(
        client, pid, id="x", kind=kind, name="X", config=json.dumps(config or {}), **extra
    )
    assert response.status_code == 200
    return response.get_data(as_text=True)


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


#: The config a kind needs to be written as its own element (a boundary event needs a host and
#: an event; an event sub-process start an event).
CONFIGS = {
    "boundaryEvent": {"attachedTo": "n_userTask", "event": "timer", "duration": "PT1H"},
    "timerCatch": {"duration": "PT5M"},
}


def every_kind() -> dict:
    """A document with one element of every kind, each configured enough to be written as itself."""
    nodes: dict = {}
    for index, kind in enumerate(k for k in KINDS if k != "eventSubProcess"):
        nodes[f"n_{kind}"] = {
            "kind": kind,
            "title": "",
            "config": dict(CONFIGS.get(kind, {})),
            "position": {"x": 80 + (index % 6) * 180, "y": 80 + (index // 6) * 160},
        }
    host = nodes["n_userTask"]["position"]
    nodes["n_boundaryEvent"]["position"] = {"x": host["x"] + 32, "y": host["y"] + 62}
    nodes["n_eventSubProcess"] = {
        "kind": "eventSubProcess",
        "title": "",
        "config": {},
        "position": {"x": 80, "y": 760, "width": 350, "height": 200},
    }
    nodes["n_eventStart"] = {
        "kind": "startEvent",
        "title": "",
        "parent": "n_eventSubProcess",
        "config": {"event": "timer", "duration": "PT1H"},
        "position": {"x": 120, "y": 840},
    }
    return {"format_version": 1, "nodes": nodes, "flows": {}}
