"""Suspend and resume over the API and the pages: instances and versions, bad input, starts of a
suspended version, tasks of a suspended instance, bulk suspension with progress, permissions."""

from __future__ import annotations

from sqlalchemy import func, select

from tests.helpers.app import csrf_token, make_user
from tests.helpers.http import basic
from tests.helpers.instances import history, load, open_tasks
from webapp.models import BulkOperation, HistoryEntry, Instance, Task


def _start(api, key: str = "open", user: str = "operator") -> int:
    response = api(user).post("/api/instances", json={"process_key": key})
    assert response.status_code == 201, response.json
    return response.json["id"]


def _suspend(api, instance_id: int, user: str = "operator", **body):
    body.setdefault("reason", "waiting for the auditor")
    return api(user).post(f"/api/instances/{instance_id}/suspend", json=body)


def test_suspend_and_resume_an_instance_record_who_when_and_why(api, engine):
    instance_id = _start(api)
    response = _suspend(api, instance_id)
    assert response.status_code == 200, response.json
    assert response.json["status"] == "running"  # the status stays; suspension is beside it
    assert response.json["suspended"]["by"] == "operator"
    assert response.json["suspended"]["reason"] == "waiting for the auditor"
    assert api("operator").get(f"/api/instances/{instance_id}").json["suspended"]["at"]
    resumed = api("operator").post(
        f"/api/instances/{instance_id}/resume", json={"reason": "auditor done"}
    )
    assert (resumed.status_code, resumed.json["suspended"]) == (200, None)
    engine.rollback()
    entries = engine.execute(
        select(HistoryEntry.kind, HistoryEntry.actor, HistoryEntry.details)
        .where(HistoryEntry.instance_id == instance_id)
        .where(HistoryEntry.kind.in_(["suspended", "resumed"]))
        .order_by(HistoryEntry.id)
    ).all()
    assert [(kind, actor) for kind, actor, _ in entries] == [
        ("suspended", "operator"),
        ("resumed", "operator"),
    ]
    assert entries[0].details["reason"] == "waiting for the auditor"
    assert entries[1].details["reason"] == "auditor done"


def test_bad_suspend_and_resume_requests_are_refused_and_change_nothing(api, engine):
    instance_id = _start(api)
    missing = api("operator").post(f"/api/instances/{instance_id}/suspend", json={})
    assert (missing.status_code, missing.json["details"]["fields"]) == (
        422,
        {"reason": "Say why it is suspended."},
    )
    wrong = _suspend(api, instance_id, reason=5)
    assert wrong.status_code == 422 and "reason" in wrong.json["details"]["fields"]
    unknown = _suspend(api, instance_id, node="x")
    assert (unknown.status_code, unknown.json["details"]["fields"]) == (
        422,
        {"node": "Unknown field."},
    )
    not_suspended = api("operator").post(f"/api/instances/{instance_id}/resume")
    assert (not_suspended.status_code, not_suspended.json["error"]) == (409, "not_suspended")
    assert load(engine, instance_id).suspended_at is None
    assert _suspend(api, instance_id).status_code == 200
    twice = _suspend(api, instance_id)
    assert (twice.status_code, twice.json["error"]) == (409, "suspended")
    assert (
        api("operator").post("/api/instances/999999/suspend", json={"reason": "x"}).status_code
        == 404
    )
    assert [kind for kind, _ in history(engine, instance_id)].count("suspended") == 1


def test_an_ended_instance_cannot_be_suspended(api):
    instance_id = _start(api)
    api("operator").post(f"/api/instances/{instance_id}/cancel", json={"reason": "done"})
    refused = _suspend(api, instance_id)
    assert (refused.status_code, refused.json["error"]) == (409, "not_active")


def test_cancelling_a_suspended_instance_ends_its_suspension(api, engine):
    instance_id = _start(api)
    _suspend(api, instance_id)
    cancelled = api("operator").post(f"/api/instances/{instance_id}/cancel", json={"reason": "x"})
    assert (cancelled.json["status"], cancelled.json["suspended"]) == ("cancelled", None)


def test_without_instances_modify_403_and_in_another_partition_404(api, app, engine):
    with app.app_context():
        make_user(
            "fin-modifier",
            ["instances.read", "instances.modify"],
            ["finance"],
            password="flowdesk-demo",
        )
        make_user("hr-reader", ["instances.read"], ["hr"], password="flowdesk-demo")
    hr_instance = _start(api, "hr-only")
    fin_instance = _start(api, "fin")
    reader = {"headers": basic("hr-reader")}
    modifier = {"headers": basic("fin-modifier")}
    client = api("operator")
    # finance-op (published fixture) reads and manages finance but may not modify.
    refused = _suspend(api, fin_instance, user="finance-op")
    assert (refused.status_code, refused.json["error"]) == (403, "forbidden")
    hidden = client.post(f"/api/instances/{hr_instance}/suspend", json={"reason": "x"}, **modifier)
    assert hidden.status_code == 404
    assert (
        client.post(
            f"/api/instances/{hr_instance}/suspend", json={"reason": "x"}, **reader
        ).status_code
        == 403
    )
    ok = client.post(f"/api/instances/{fin_instance}/suspend", json={"reason": "x"}, **modifier)
    assert ok.status_code == 200
    version = client.post(
        "/api/processes/hr-only/versions/1/suspend", json={"reason": "x"}, **modifier
    )
    assert version.status_code == 404
    assert load(engine, hr_instance).suspended_at is None


def test_a_task_of_a_suspended_instance_is_refused_and_nothing_changes(
    api, client, login_as, engine
):
    instance_id = _start(api)
    [task] = open_tasks(engine, instance_id)
    _suspend(api, instance_id)
    bob = login_as("bob")
    page = bob.get(f"/inbox/tasks/{task.id}")
    assert "An operator suspended this task" in page.get_data(as_text=True)
    claimed = bob.post(
        f"/inbox/tasks/{task.id}/claim",
        data={"csrf_token": csrf_token(bob, f"/inbox/tasks/{task.id}")},
    )
    assert claimed.status_code in (302, 303)  # claiming stays possible
    refused = bob.post(
        f"/inbox/tasks/{task.id}",
        data={"csrf_token": csrf_token(bob, f"/inbox/tasks/{task.id}")},
    )
    assert refused.status_code == 409
    assert "is suspended" in refused.get_data(as_text=True)
    engine.rollback()
    assert engine.get(Task, task.id, populate_existing=True).status == "open"
    assert load(engine, instance_id).status == "running"
    assert ("task_completed", "review") not in history(engine, instance_id)


def test_a_suspended_version_starts_nothing_until_resumed(api, login_as, engine):
    suspended = api("operator").post(
        "/api/processes/open/versions/1/suspend", json={"reason": "a wrong rate in v1"}
    )
    assert suspended.status_code == 200, suspended.json
    assert suspended.json["suspended"] is True and suspended.json["bulk_operation"] is None
    refused = api("alice").post("/api/instances", json={"process_key": "open"})
    assert refused.status_code == 409
    assert refused.json["error"] == "version_suspended"
    assert (
        "Version 1 of process 'open' is suspended (a wrong rate in v1)" in refused.json["message"]
    )
    alice = login_as("alice")
    form = alice.post(
        "/inbox/processes/open/start", data={"csrf_token": csrf_token(alice, "/inbox/processes")}
    )
    assert "Version 1 of process &#39;open&#39; is suspended" in form.get_data(as_text=True)
    again = api("operator").post("/api/processes/open/versions/1/suspend", json={"reason": "x"})
    assert again.status_code == 409
    resumed = api("operator").post("/api/processes/open/versions/1/resume")
    assert (resumed.status_code, resumed.json["suspended"]) == (200, False)
    assert api("alice").post("/api/instances", json={"process_key": "open"}).status_code == 201


def test_suspending_a_version_with_its_instances_runs_in_bulk_with_progress(
    api, app, login_as, engine
):
    from webapp.services.operations import bulk

    ids = [_start(api) for _ in range(3)]
    response = api("operator").post(
        "/api/processes/open/versions/1/suspend",
        json={"reason": "incident 42", "instances": True},
    )
    assert response.status_code == 202, response.json
    operation_id = response.json["bulk_operation"]
    assert response.headers["Location"].endswith(f"/operations/bulk/{operation_id}")
    operator = login_as("operator")
    waiting = operator.get(f"/operations/bulk/{operation_id}").get_data(as_text=True)
    assert "of 3 done" in waiting
    with app.app_context():
        assert bulk.run(operation_id)["ok"] == 3
    engine.rollback()  # the requests share the test's session: read afresh
    page = operator.get(f"/operations/bulk/{operation_id}").get_data(as_text=True)
    assert "Finished:" in page and "<strong>3</strong> of 3 done" in page
    assert page.count("Now suspended.") == 3
    for instance_id in ids:
        assert load(engine, instance_id).suspend_reason == "incident 42"
    listed = operator.get("/operations/instances?suspended=1").get_data(as_text=True)
    assert all(f"#{i}" in listed or f'/instances/{i}"' in listed for i in ids)
    resumed = api("operator").post(
        "/api/processes/open/versions/1/resume", json={"instances": True}
    )
    assert resumed.status_code == 202
    engine.remove()
    with app.app_context():
        assert bulk.run(resumed.json["bulk_operation"])["ok"] == 3
    engine.rollback()
    assert (
        engine.scalar(
            select(func.count()).where(Instance.id.in_(ids), Instance.suspended_at.is_not(None))
        )
        == 0
    )
    assert engine.scalar(select(func.count()).select_from(BulkOperation)) >= 2
