"""The instance page's "Start an activity" section: a running ad-hoc sub-process's activities,
started by an operator; refusals come back to the page; others may not post."""

from __future__ import annotations

import json
import re

from sqlalchemy import select

from tests.helpers.app import csrf_token, failed_page
from tests.helpers.documents import document, flow, inside, node
from tests.helpers.instances import open_tasks, start
from tests.helpers.processes import publish_document
from webapp.models import Token

APPROVER = {"type": "role", "value": "approver"}


def _version(**config):
    nodes = {
        "start": node("startEvent"),
        "work": node("adHocSubProcess", "Work", **config),
        "research": inside("work", "userTask", "Research", assignee=APPROVER),
        "draft": inside("work", "userTask", "Draft", assignee=APPROVER),
        "end": node("endEvent"),
    }
    flows = {"f1": flow("start", "work"), "f2": flow("work", "end")}
    return publish_document(document(nodes, flows), key="cases")


def _post(client, path: str, target: str):
    return client.post(
        f"{path}/activities", data={"target": target, "csrf_token": csrf_token(client, path)}
    )


def test_an_operator_starts_an_activity_from_the_instance_page(operator, engine):
    instance_id = start(engine, _version())
    path = f"/operations/instances/{instance_id}"
    page = operator.get(path).get_data(as_text=True)
    assert 'id="live-adhoc"' in page
    found = re.findall(r'name="target" value="([^"]+)">Start (\w+)<', page)
    buttons = {label: value for value, label in found}
    assert set(buttons) == {"Research", "Draft"}
    response = _post(operator, path, buttons["Draft"])
    assert response.status_code == 303
    assert [t.title for t in open_tasks(engine, instance_id)] == ["Draft"]
    after = operator.get(path).get_data(as_text=True)
    assert "activity activated" in after
    state = re.search(r'<script type="application/json" id="instance-state">(.*?)</script>', after)
    assert json.loads(state.group(1))["active"] == {"work": 1, "draft": 1}, "the diagram's tokens"


def test_a_refused_start_comes_back_to_the_page_and_sequential_says_it_is_busy(operator, engine):
    instance_id = start(engine, _version(ordering="sequential", activate="['research']"))
    path = f"/operations/instances/{instance_id}"
    page = operator.get(path).get_data(as_text=True)
    assert "runs one activity at a time, and one is running" in page
    assert 'name="target"' not in page
    engine.rollback()
    scope = engine.scalar(select(Token.id).where(Token.node_id == "work"))
    refused = _post(operator, path, f"{scope}:draft")
    assert "one activity at a time" in failed_page(operator, refused, path)
    bad = _post(operator, path, "draft")
    assert "Choose an activity to start." in failed_page(operator, bad, path)


def test_people_without_instances_manage_may_not_post(login_as, engine):
    instance_id = start(engine, _version())
    alice = login_as("alice")
    path = f"/operations/instances/{instance_id}"
    token = csrf_token(alice, "/")
    response = alice.post(f"{path}/activities", data={"target": "1:draft", "csrf_token": token})
    assert response.status_code == 403
    assert open_tasks(engine, instance_id) == []
