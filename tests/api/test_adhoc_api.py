"""POST /api/instances/<id>/activities: starting an activity of a running ad-hoc sub-process,
by an operator or the assignee of a task inside it; bad input and refusals named."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.app import make_user
from tests.helpers.documents import document, flow, inside, node
from tests.helpers.instances import open_tasks, start
from tests.helpers.processes import publish_document
from webapp.models import Token

ALICE = {"type": "user", "value": "alice"}


def _adhoc_version():
    nodes = {
        "start": node("startEvent"),
        "work": node("adHocSubProcess", "Work", activate="['mine']"),
        "mine": inside("work", "userTask", "Mine", assignee=ALICE),
        "other": inside(
            "work", "userTask", "Other", assignee={"type": "role", "value": "approver"}
        ),
        "end": node("endEvent"),
    }
    return publish_document(
        document(nodes, {"f1": flow("start", "work"), "f2": flow("work", "end")}),
        key="adhoc",
        partition="finance",
    )


def test_an_operator_and_the_assignee_inside_activate_others_may_not(app, api, engine):
    version = _adhoc_version()
    instance_id = start(engine, version)
    path = f"/api/instances/{instance_id}/activities"
    answer = api("operator").post(path, json={"activity": "other"})
    assert answer.status_code == 200, answer.json
    assert answer.json["id"] == instance_id
    assert sorted(t.title for t in open_tasks(engine, instance_id)) == ["Mine", "Other"]
    by_alice = api("alice").post(path, json={"activity": "other"})
    assert by_alice.status_code == 200, by_alice.json
    by_bob = api("bob").post(path, json={"activity": "other"})
    assert (by_bob.status_code, by_bob.json["error"]) == (404, "not_found")
    with app.app_context():
        make_user("reader", ["instances.read"], ["finance"], password="flowdesk-demo")
    by_reader = api("reader").post(path, json={"activity": "other"})
    assert (by_reader.status_code, by_reader.json["error"]) == (403, "forbidden")
    assert [t.title for t in open_tasks(engine, instance_id)].count("Other") == 2


def test_bad_activations_are_refused_naming_what_is_wrong(app, api, engine):
    version = _adhoc_version()
    instance_id = start(engine, version)
    path = f"/api/instances/{instance_id}/activities"
    operator = api("operator")
    unknown = operator.post(path, json={"activity": "end"})
    assert unknown.status_code == 422
    assert "scope" in unknown.json["details"]["fields"]
    engine.rollback()
    scope = engine.scalar(select(Token.id).where(Token.node_id == "work"))
    named = operator.post(path, json={"activity": "end", "scope": scope})
    assert (named.status_code, named.json["error"]) == (409, "not_enabled")
    assert "'end'" in named.json["message"]
    bad = operator.post(path, json={"activity": 3, "scope": "x", "more": 1})
    assert bad.status_code == 422
    assert set(bad.json["details"]["fields"]) == {"activity", "scope", "more"}
    missing = operator.post(f"/api/instances/{instance_id + 99}/activities", json={"activity": "x"})
    assert missing.status_code == 404
    elsewhere = operator.post(path, json={"activity": "other", "scope": scope + 999})
    assert elsewhere.status_code == 404
