"""The JSON API: every endpoint, its bad input, and who may do what in which partition."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.app import csrf_token
from tests.helpers.http import basic
from tests.helpers.workers import drain
from webapp.models import HistoryEntry, Instance


def start_over_api(api, user="alice", **body):
    body.setdefault("process_key", "open")
    return api(user).post("/api/instances", json=body)


def test_requests_without_valid_credentials_get_401(client, published):
    response = client.get("/api/instances")
    assert response.status_code == 401
    assert response.json["error"] == "unauthorized"
    assert response.headers["WWW-Authenticate"] == 'Basic realm="Flowdesk"'
    wrong = client.get("/api/instances", headers=basic("alice", "wrong-password"))
    assert (wrong.status_code, wrong.json["message"]) == (401, "Invalid username or password.")
    assert client.get("/api/instances", headers=basic("alice")).status_code == 200


def test_basic_auth_is_throttled_and_refuses_inactive_users(client, published, app):
    for _ in range(5):
        client.get("/api/instances", headers=basic("bob", "wrong-password"))
    locked = client.get("/api/instances", headers=basic("bob"))
    assert (locked.status_code, locked.json["error"]) == (429, "locked")
    assert "Too many failed sign-in attempts" in locked.json["message"]
    from webapp.extensions import db
    from webapp.services import accounts

    with app.app_context():
        accounts.find_user("alice").active = False
        db.session.commit()
    assert client.get("/api/instances", headers=basic("alice")).status_code == 401


def test_cookie_sessions_need_the_csrf_header_for_changes(login_as, published):
    client = login_as("alice")
    assert client.get("/api/instances").status_code == 200
    refused = client.post("/api/instances", json={"process_key": "open"})
    assert (refused.status_code, refused.json["error"]) == (400, "csrf")


def test_cookie_session_with_the_header_starts(login_as, published):
    client = login_as("alice")
    token = csrf_token(client, "/")
    response = client.post(
        "/api/instances", json={"process_key": "open"}, headers={"X-CSRFToken": token}
    )
    assert response.status_code == 201, response.json


def test_start_returns_201_with_the_instance(api, db_session):
    response = start_over_api(api, input={"order": 1}, business_key="  INV-7 ")
    assert response.status_code == 201, response.json
    body = response.json
    assert response.headers["Location"].endswith(f"/api/instances/{body['id']}")
    assert (body["status"], body["process_key"], body["version"]) == ("running", "open", 1)
    assert (body["business_key"], body["started_by"], body["started_via"]) == (
        "INV-7",
        "alice",
        "api",
    )
    assert body["input"] == {"order": 1}
    assert [t["node"] for t in body["tokens"]] == ["review"]
    assert body["tasks"][0]["role"] == "approver"
    assert db_session.get(Instance, body["id"]).status == "running"


def test_start_refuses_malformed_bodies_with_400(api):
    caller = api("alice")
    bad = caller.post("/api/instances", data="{nope", content_type="application/json")
    assert (bad.status_code, bad.json["error"]) == (400, "malformed_json")
    array = caller.post("/api/instances", json=[1, 2])
    assert array.status_code == 400
    empty = caller.post("/api/instances")
    assert empty.status_code == 400


def test_start_names_every_invalid_field_with_422(api, db_session):
    response = api("alice").post(
        "/api/instances",
        json={"version": "one", "input": [], "partition": 3, "colour": "red"},
    )
    assert response.status_code == 422
    assert response.json["error"] == "invalid"
    assert set(response.json["details"]["fields"]) == {
        "process_key",
        "version",
        "input",
        "partition",
        "colour",
    }
    long_key = start_over_api(api, business_key="x" * 201)
    assert list(long_key.json["details"]["fields"]) == ["business_key"]
    assert db_session.scalar(select(Instance)) is None


def test_start_checks_process_version_and_partition(api):
    assert start_over_api(api, process_key="nope").status_code == 404
    assert start_over_api(api, version=99).status_code == 404
    assert start_over_api(api, version=1).status_code == 201
    hidden = start_over_api(api, process_key="hr-only")
    assert (hidden.status_code, hidden.json["error"]) == (404, "not_found")
    assert start_over_api(api, user="operator", process_key="hr-only").json["partition"] == "hr"
    wrong = start_over_api(api, user="operator", process_key="fin", partition="hr")
    assert wrong.status_code == 422
    assert "runs in partition 'finance'" in wrong.json["details"]["fields"]["partition"]
    not_hers = start_over_api(api, partition="hr")
    assert (not_hers.status_code, list(not_hers.json["details"]["fields"])) == (422, ["partition"])
    assert start_over_api(api, partition="nowhere").status_code == 422
    assert start_over_api(api, partition="finance").json["partition"] == "finance"
    assert start_over_api(api, user="bob", process_key="fin").json["partition"] == "finance"
    no_start = start_over_api(api, user="designer")
    assert no_start.status_code == 201  # designers hold instances.start too


def test_start_validates_input_against_the_start_form(api):
    missing = start_over_api(api, process_key="form", input={"kind": "food"})
    assert missing.status_code == 422
    assert missing.json["details"]["fields"] == {"input.amount": "Amount is required"}
    low = start_over_api(api, process_key="form", input={"amount": 0, "kind": "other"})
    assert set(low.json["details"]["fields"]) == {"input.amount", "input.kind"}
    good = start_over_api(
        api, process_key="form", input={"amount": 12, "kind": "travel", "note": "x"}
    )
    assert good.status_code == 201
    assert good.json["input"] == {"amount": 12.0, "kind": "travel", "note": "x"}


def test_reading_instances_is_partition_scoped(api):
    mine = start_over_api(api).json["id"]
    finance = start_over_api(api, process_key="fin").json["id"]
    hr = start_over_api(api, user="operator", process_key="hr-only").json["id"]
    assert api("alice").get(f"/api/instances/{mine}").status_code == 200
    assert api("bob").get(f"/api/instances/{mine}").status_code == 404  # not his, no read right
    assert api("operator").get(f"/api/instances/{finance}").status_code == 200
    assert api("alice").get(f"/api/instances/{hr}").status_code == 404
    assert api("admin").get(f"/api/instances/{hr}").json["partition"] == "hr"
    assert api("alice").get("/api/instances/999999").status_code == 404
    finance_only = api("designer").get("/api/instances?partition=finance").json
    assert [item["id"] for item in finance_only["items"]] == [finance]
    assert api("designer").get("/api/instances?partition=nowhere").json["total"] == 0
    listed = api("alice").get("/api/instances").json
    assert sorted(item["id"] for item in listed["items"]) == sorted([mine, finance])


def test_listing_filters_and_pages(api):
    ids = [start_over_api(api, business_key=f"K{n}").json["id"] for n in range(3)]
    start_over_api(api, process_key="fin")
    caller = api("admin")
    everything = caller.get("/api/instances").json
    assert everything["total"] == 4
    page = caller.get("/api/instances?per_page=2&page=2").json
    assert (page["total"], page["page"], len(page["items"])) == (4, 2, 2)
    assert [i["id"] for i in caller.get("/api/instances?business_key=K1").json["items"]] == [ids[1]]
    assert caller.get("/api/instances?process=fin").json["total"] == 1
    assert caller.get("/api/instances?status=completed").json["total"] == 0
    assert caller.get("/api/instances?per_page=0").json["details"]["fields"] == {
        "per_page": "Use a whole number from 1 to 100."
    }
    status = caller.get("/api/instances?status=sleeping")
    assert (status.status_code, list(status.json["details"]["fields"])) == (422, ["status"])
    assert caller.get("/api/instances?page=x").status_code == 422


def test_history_lists_steps_in_order_and_pages(api):
    instance_id = start_over_api(api).json["id"]
    history = api("alice").get(f"/api/instances/{instance_id}/history").json
    kinds = [item["kind"] for item in history["items"]]
    assert kinds == ["started", "entered", "left", "entered", "task_created"]
    assert history["items"][0]["actor"] == "alice"
    first = api("alice").get(f"/api/instances/{instance_id}/history?limit=2").json
    assert len(first["items"]) == 2
    rest = (
        api("alice").get(f"/api/instances/{instance_id}/history?after={first['next_after']}").json
    )
    assert [i["kind"] for i in rest["items"]] == kinds[2:]
    assert rest["next_after"] is None
    assert api("bob").get(f"/api/instances/{instance_id}/history").status_code == 404
    assert api("alice").get(f"/api/instances/{instance_id}/history?limit=0").status_code == 422


def test_cancel_needs_instances_manage(api, db_session):
    instance_id = start_over_api(api).json["id"]
    refused = api("alice").post(f"/api/instances/{instance_id}/cancel", json={"reason": "x"})
    assert (refused.status_code, refused.json["error"]) == (403, "forbidden")
    assert (
        api("operator").post(f"/api/instances/{instance_id}/cancel", json={"reason": 5}).status_code
        == 422
    )
    assert (
        api("operator").post(f"/api/instances/{instance_id}/cancel", json={"why": "x"}).status_code
        == 422
    )
    done = api("operator").post(f"/api/instances/{instance_id}/cancel", json={"reason": "dupe"})
    assert (done.status_code, done.json["status"]) == (200, "cancelled")
    entry = db_session.scalar(select(HistoryEntry).where(HistoryEntry.kind == "cancelled"))
    assert (entry.actor, entry.details) == ("operator", {"reason": "dupe"})
    again = api("operator").post(f"/api/instances/{instance_id}/cancel")
    assert (again.status_code, again.json["error"]) == (409, "not_active")
    assert api("operator").post("/api/instances/424242/cancel").status_code == 404
    hr = start_over_api(api, user="admin", process_key="hr-only").json["id"]
    assert api("finance-op").post(f"/api/instances/{hr}/cancel").status_code == 404
    assert api("operator").post(f"/api/instances/{hr}/cancel").status_code == 200


def test_retry_only_failed_instances(api, app):
    running = start_over_api(api).json["id"]
    conflict = api("operator").post(f"/api/instances/{running}/retry")
    assert (conflict.status_code, conflict.json["error"]) == (409, "not_failed")
    failing = start_over_api(api, process_key="fail").json["id"]
    from webapp.extensions import db

    with app.app_context():
        drain(db.session)
        db.session.remove()
    failed = api("operator").get(f"/api/instances/{failing}").json
    assert (failed["status"], failed["error"]["code"]) == ("failed", "failed")
    assert api("alice").post(f"/api/instances/{failing}/retry").status_code == 403
    assert api("operator").post(f"/api/instances/{failing}/retry", json={"x": 1}).status_code == 422
    retried = api("operator").post(f"/api/instances/{failing}/retry")
    assert (retried.status_code, retried.json["status"], retried.json["error"]) == (
        200,
        "running",
        None,
    )


def test_a_cancelled_instance_is_not_retried(api, app):
    from webapp.extensions import db

    failing = start_over_api(api, process_key="fail").json["id"]
    with app.app_context():
        drain(db.session)
        db.session.remove()
    cancelled = api("operator").post(f"/api/instances/{failing}/cancel", json={"reason": "x"})
    assert cancelled.json["status"] == "cancelled"
    refused = api("operator").post(f"/api/instances/{failing}/retry")
    assert (refused.status_code, refused.json["error"]) == (409, "not_failed")
    assert api("operator").get(f"/api/instances/{failing}").json["status"] == "cancelled"


def test_messages_wake_only_matching_visible_instances(api, db_session):
    first = start_over_api(api, user="admin", process_key="msg", input={"order": "A-1"})
    first = first.json["id"]
    second = start_over_api(api, user="admin", process_key="msg", input={"order": "B-2"})
    second = second.json["id"]
    body = {"name": "paid", "correlation_key": "A-1", "payload": {"amount": 3}}
    assert api("alice").post("/api/messages", json=body).status_code == 403
    bad = api("operator").post(
        "/api/messages", json={"name": "", "correlation_key": True, "extra": 1}
    )
    assert set(bad.json["details"]["fields"]) == {"name", "correlation_key", "extra"}
    assert (
        api("operator").post("/api/messages", data="x", content_type="application/json").status_code
        == 400
    )
    missing = api("operator").post("/api/messages", json={**body, "correlation_key": "C-3"})
    assert (missing.status_code, missing.json["error"]) == (404, "no_match")
    assert "'paid'" in missing.json["message"] and "'C-3'" in missing.json["message"]
    delivered = api("operator").post("/api/messages", json=body)
    assert (delivered.status_code, delivered.json) == (200, {"delivered": [first]})
    assert db_session.get(Instance, first).status == "completed"
    assert db_session.get(Instance, first).nodes == {"paid": {"amount": 3}}
    assert db_session.get(Instance, second).status == "running"
    assert api("operator").post("/api/messages", json=body).status_code == 404
    hr = start_over_api(
        api, user="admin", process_key="msg", partition="hr", input={"order": "H"}
    ).json
    hr_body = {"name": "paid", "correlation_key": "H"}
    assert api("finance-op").post("/api/messages", json=hr_body).status_code == 404
    assert api("operator").post("/api/messages", json=hr_body).json == {"delivered": [hr["id"]]}


def test_wrong_methods_and_unknown_routes_answer_json(api):
    assert api("alice").get("/api/messages").status_code == 405
    assert api("alice").get("/api/messages").is_json
    assert api("alice").get("/api/nothing").status_code == 404


def test_a_called_child_names_its_caller_and_tokens_name_their_scope(api, app):
    from tests.helpers.documents import document, flow, node
    from tests.helpers.processes import publish_document

    task = node("userTask", assignee={"type": "role", "value": "approver"})
    child = {"start": node("startEvent"), "sub": node("subProcess"), "end": node("endEvent")}
    child.update(
        {
            "s_start": {**node("startEvent"), "parent": "sub"},
            "s_task": {**task, "parent": "sub"},
            "s_end": {**node("endEvent"), "parent": "sub"},
        }
    )
    child_flows = {
        "f1": flow("start", "sub"),
        "f2": flow("sub", "end"),
        "f3": flow("s_start", "s_task"),
        "f4": flow("s_task", "s_end"),
    }
    caller = {
        "start": node("startEvent"),
        "call": node("callActivity", process="child"),
        "end": node("endEvent"),
    }
    with app.app_context():
        publish_document(document(child, child_flows), key="child")
        publish_document(
            document(caller, {"f1": flow("start", "call"), "f2": flow("call", "end")}), key="caller"
        )
    started = start_over_api(api, "operator", process_key="caller")
    assert started.status_code == 201, started.json
    parent_id = started.json["id"]
    assert started.json["called_by"] is None
    from webapp.extensions import db

    with app.app_context():
        drain(db.session)
        child_id = db.session.scalar(select(Instance.id).where(Instance.parent_id == parent_id))
    body = api("operator").get(f"/api/instances/{child_id}").json
    assert body["called_by"] == {"instance": parent_id, "node": "call"}
    tokens = {t["node"]: t for t in body["tokens"]}
    assert tokens["s_task"]["scope"] == tokens["sub"]["id"]
    assert tokens["sub"]["scope"] is None


CAMUNDA7_WAIT = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="http://x">
  <bpmn:message id="Paid" name="paid"/>
  <bpmn:process id="invoice" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="Paid"/>
    </bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>"""


def test_a_camunda_7_message_catch_correlates_on_the_business_key(api, app, db_session):
    """Camunda 7 models carry no correlation key: its correlateMessage(name, businessKey) finds
    the instance by business key, and so does the imported model."""
    from tests.helpers.processes import publish_document
    from webapp.process.bpmn import import_bpmn

    with app.app_context():
        publish_document(import_bpmn(CAMUNDA7_WAIT).document, key="invoice")
    first = start_over_api(api, user="admin", process_key="invoice", business_key="INV-7").json[
        "id"
    ]
    other = start_over_api(api, user="admin", process_key="invoice", business_key="INV-8").json[
        "id"
    ]
    keyless = start_over_api(api, user="admin", process_key="invoice").json["id"]
    body = {"name": "paid", "correlation_key": "INV-7", "payload": {"amount": 120}}
    assert api("operator").post("/api/messages", json=body).json == {"delivered": [first]}
    db_session.expire_all()
    assert db_session.get(Instance, first).status == "completed"
    assert db_session.get(Instance, other).status == "running"
    failed = db_session.get(Instance, keyless)
    assert failed.status == "failed"
    assert failed.error["message"].startswith("The correlation key of ")
    assert failed.error["message"].endswith(" is empty.")
