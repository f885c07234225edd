"""Working tasks through the API as the inbox does: list, read, claim, release and complete with
a bearer token (the `tasks` scope) or HTTP Basic; form checks, conflicts and partitions."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.helpers.http import basic
from tests.helpers.inbox import kinds, open_task
from tests.helpers.instances import load, start_latest
from tests.inbox.conftest import flows  # noqa: F401 - shared fixture
from webapp.models import HistoryEntry, Role, Task
from webapp.services import accounts, api_tokens

pytestmark = pytest.mark.usefixtures("flows")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def bot(app, demo):
    """A service account holding the clerk role (no partitions) and a token with `tasks`."""
    with app.app_context():
        clerk = accounts.db.session.scalar(select(Role).where(Role.name == "clerk"))
        account = api_tokens.create_service_account(
            "ledger-bot", display_name="Ledger", roles=[clerk], partitions=[]
        )
        _, text = api_tokens.create_token(
            account, "ledger", ["tasks"], 0, created_by=accounts.find_user("admin")
        )
    return bearer(text)


def task_row(db_session, task_id: int) -> Task:
    db_session.expire_all()
    return db_session.get(Task, task_id)


def test_a_service_account_works_a_role_task_with_a_token(client, bot, app, db_session):
    instance_id = start_latest(app, "expense", business_key="EXP-1", input={"requested": 70})
    review = open_task(db_session, instance_id, "review")

    listed = client.get("/api/tasks?tab=claimable", headers=bot)
    assert listed.status_code == 200, listed.json
    assert [item["id"] for item in listed.json["items"]] == [review.id]
    row = listed.json["items"][0]
    assert (row["title"], row["business_key"], row["assignee"]) == ("Review expense", "EXP-1", None)
    assert row["offered_to"] == {"roles": ["clerk"], "users": [], "everyone": False}
    assert listed.json["total"] == 1
    assert client.get("/api/tasks", headers=bot).json["items"] == [], "nothing assigned yet"

    shown = client.get(f"/api/tasks/{review.id}", headers=bot)
    assert shown.status_code == 200
    assert [field["key"] for field in shown.json["form"]["fields"]] == [
        "amount",
        "reason",
        "requested",
    ]
    assert shown.json["display"] == [{"label": "Requested", "value": 70}]
    assert shown.json["actions"] == {"claim": True, "release": False, "complete": True}

    claimed = client.post(f"/api/tasks/{review.id}/claim", headers=bot)
    assert (claimed.status_code, claimed.json["assignee"]) == (200, "ledger-bot")
    mine = client.get("/api/tasks?tab=mine", headers=bot).json["items"]
    assert [item["id"] for item in mine] == [review.id]
    released = client.post(f"/api/tasks/{review.id}/release", headers=bot)
    assert (released.status_code, released.json["assignee"]) == (200, None)
    assert task_row(db_session, review.id).assignee_id is None

    done = client.post(f"/api/tasks/{review.id}/complete", json={"amount": 50}, headers=bot)
    assert done.status_code == 200, done.json
    assert (done.json["status"], done.json["completed_by"]) == ("completed", "ledger-bot")
    assert done.json["result"] == {"amount": 50.0}
    assert (
        done.json["moved_on"]["message"] == f"Instance {instance_id} moved on to: Approve expense."
    )
    approve = open_task(db_session, instance_id, "approve")
    assert load(db_session, instance_id).vars["review"] == {"amount": 50.0}
    entry = db_session.scalars(
        select(HistoryEntry).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "task_completed"
        )
    ).one()
    assert (entry.actor, entry.details["api_token"]) == ("ledger-bot", "ledger")
    assert client.get("/api/tasks?tab=done", headers=bot).json["items"][0]["id"] == review.id

    # alice finishes the instance through HTTP Basic
    finished = client.post(
        f"/api/tasks/{approve.id}/complete", json={"decision": "yes"}, headers=basic("alice")
    )
    assert finished.status_code == 200, finished.json
    assert finished.json["moved_on"] == {
        "message": f"Instance {instance_id} is complete.",
        "next_task": None,
    }
    assert load(db_session, instance_id).status == "completed"


def test_http_basic_lists_claims_and_completes(client, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    listed = client.get("/api/tasks?tab=claimable&sort=created", headers=basic("bob"))
    assert [item["id"] for item in listed.json["items"]] == [review.id]
    assert client.post(f"/api/tasks/{review.id}/claim", headers=basic("bob")).status_code == 200
    shown = client.get(f"/api/tasks/{review.id}", headers=basic("bob")).json
    assert shown["actions"] == {"claim": False, "release": True, "complete": True}
    done = client.post(
        f"/api/tasks/{review.id}/complete",
        json={"amount": 500, "reason": "team dinner"},
        headers=basic("bob"),
    )
    assert done.status_code == 200, done.json
    assert done.json["result"] == {"amount": 500.0, "reason": "team dinner"}
    assert ("task_completed", "bob") in kinds(db_session, review.instance_id)
    assert open_task(db_session, review.instance_id, "approve").assignee_id is not None


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"amount": "Amount is required"}),
        (
            {"amount": 5000},
            {"amount": "Amount must be at most 1000", "reason": "Reason is required"},
        ),
        ({"amount": "lots"}, {"amount": "Amount must be a number"}),
        ({"amount": 500}, {"reason": "Reason is required"}),
        ({"amount": 5, "amunt": 5}, {"amunt": "Unknown field; the form has no such field."}),
        (
            {"amunt": 5},
            {"amount": "Amount is required", "amunt": "Unknown field; the form has no such field."},
        ),
        ({"amount": [5, 6]}, {"amount": "Amount takes one value, not a list."}),
        ({"amount": {"value": 5}}, {"amount": "Amount has an unexpected value"}),
    ],
)
def test_form_checks_name_each_field_and_change_nothing(client, app, db_session, body, fields):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    before = kinds(db_session, review.instance_id)
    refused = client.post(f"/api/tasks/{review.id}/complete", json=body, headers=basic("bob"))
    assert refused.status_code == 422
    assert refused.json["error"] == "invalid"
    assert refused.json["details"] == {"fields": fields}
    row = task_row(db_session, review.id)
    assert (row.status, row.assignee_id, row.result) == ("open", None, None)
    assert kinds(db_session, review.instance_id) == before


def test_a_body_that_is_not_json_is_refused(client, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    sent = client.post(
        f"/api/tasks/{review.id}/complete", data={"amount": "5"}, headers=basic("bob")
    )
    assert sent.status_code == 415
    assert task_row(db_session, review.id).status == "open"


def test_conflicts_are_409_without_side_effects(client, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    assert client.post(f"/api/tasks/{review.id}/claim", headers=basic("bob")).status_code == 200

    taken = client.post(
        f"/api/tasks/{review.id}/complete", json={"amount": 5}, headers=basic("alice")
    )
    assert (taken.status_code, taken.json["error"]) == (409, "claimed")
    assert "Bob Approver has claimed this task" in taken.json["message"]
    claim = client.post(f"/api/tasks/{review.id}/claim", headers=basic("alice"))
    assert (claim.status_code, claim.json["error"]) == (409, "claimed")
    release = client.post(f"/api/tasks/{review.id}/release", headers=basic("alice"))
    assert (release.status_code, release.json["error"]) == (409, "claimed")

    first = client.post(
        f"/api/tasks/{review.id}/complete", json={"amount": 5}, headers=basic("bob")
    )
    assert first.status_code == 200
    history = kinds(db_session, review.instance_id)
    again = client.post(
        f"/api/tasks/{review.id}/complete", json={"amount": 5}, headers=basic("bob")
    )
    assert (again.status_code, again.json["error"]) == (409, "already_completed")
    assert "You already completed this task" in again.json["message"]
    assert kinds(db_session, review.instance_id) == history
    assert task_row(db_session, review.id).result == {"amount": 5.0}
    late = client.post(f"/api/tasks/{review.id}/claim", headers=basic("bob"))
    assert (late.status_code, late.json["error"]) == (409, "already_completed")


def test_a_suspended_instance_lets_tasks_be_claimed_but_not_completed(client, app, db_session):
    instance_id = start_latest(app, "expense")
    review = open_task(db_session, instance_id, "review")
    suspended = client.post(
        f"/api/instances/{instance_id}/suspend", json={"reason": "audit"}, headers=basic("admin")
    )
    assert suspended.status_code == 200, suspended.json
    assert client.post(f"/api/tasks/{review.id}/claim", headers=basic("bob")).status_code == 200
    shown = client.get(f"/api/tasks/{review.id}", headers=basic("bob")).json
    assert (shown["suspended"], shown["actions"]["complete"]) == (True, False)
    refused = client.post(
        f"/api/tasks/{review.id}/complete", json={"amount": 5}, headers=basic("bob")
    )
    assert (refused.status_code, refused.json["error"]) == (409, "suspended")
    assert "suspended" in refused.json["message"]
    row = task_row(db_session, review.id)
    assert (row.status, row.result) == ("open", None)
    assert load(db_session, instance_id).status == "running"


def test_tasks_outside_the_callers_partitions_or_rights_are_404(client, app, db_session):
    screen = open_task(db_session, start_latest(app, "hr"), "screen")  # hr: alice is in finance
    sign = open_task(db_session, start_latest(app, "direct"), "sign")  # bob's own task
    for task_id in (screen.id, sign.id, 999_999):
        assert client.get(f"/api/tasks/{task_id}", headers=basic("alice")).status_code == 404
        for action in ("claim", "release", "complete"):
            refused = client.post(f"/api/tasks/{task_id}/{action}", json={}, headers=basic("alice"))
            assert (refused.status_code, refused.json["error"]) == (404, "not_found")
    listed = client.get("/api/tasks?tab=claimable", headers=basic("alice")).json["items"]
    assert screen.id not in [item["id"] for item in listed]
    assert task_row(db_session, screen.id).assignee_id is None


def test_a_token_without_the_tasks_scope_is_403(client, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    with app.app_context():
        _, text = api_tokens.create_token(
            accounts.find_user("bob"),
            "reader",
            ["read", "start", "messages", "operate"],
            0,
            created_by=accounts.find_user("bob"),
        )
    calls = [
        ("get", "/api/tasks"),
        ("get", f"/api/tasks/{review.id}"),
        ("post", f"/api/tasks/{review.id}/claim"),
        ("post", f"/api/tasks/{review.id}/release"),
        ("post", f"/api/tasks/{review.id}/complete"),
    ]
    for method, path in calls:
        refused = getattr(client, method)(path, headers=bearer(text))
        assert refused.status_code == 403, path
        assert (refused.json["error"], refused.json["details"]) == (
            "insufficient_scope",
            {"scope": "tasks"},
        )
    assert task_row(db_session, review.id).assignee_id is None


def test_working_tasks_needs_the_tasks_work_permission(client, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    for method, path in [("get", "/api/tasks"), ("post", f"/api/tasks/{review.id}/claim")]:
        refused = getattr(client, method)(path, headers=basic("designer"))
        assert (refused.status_code, refused.json["error"]) == (403, "forbidden")
    # an operator may read the task (as on its page) but not work it
    shown = client.get(f"/api/tasks/{review.id}", headers=basic("operator"))
    assert shown.status_code == 200
    assert shown.json["actions"] == {"claim": False, "release": False, "complete": False}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("tab=everything", "tab"),
        ("due=soon", "due"),
        ("sort=name", "sort"),
        ("per_page=500", "per_page"),
    ],
)
def test_wrong_list_filters_are_422_naming_them(client, query, field):
    refused = client.get(f"/api/tasks?{query}", headers=basic("bob"))
    assert refused.status_code == 422
    assert list(refused.json["details"]["fields"]) == [field]


def test_the_list_pages_and_filters_as_the_inbox(client, app, db_session):
    ids = [
        open_task(db_session, start_latest(app, "expense", business_key=f"EXP-{n}"), "review").id
        for n in range(3)
    ]
    first = client.get("/api/tasks?tab=claimable&per_page=2", headers=basic("bob")).json
    second = client.get("/api/tasks?tab=claimable&per_page=2&page=2", headers=basic("bob")).json
    assert (first["total"], first["page"], first["per_page"]) == (3, 1, 2)
    assert [item["id"] for item in first["items"] + second["items"]] == ids
    found = client.get("/api/tasks?tab=claimable&q=EXP-1", headers=basic("bob")).json
    assert [item["id"] for item in found["items"]] == [ids[1]]
    other = client.get("/api/tasks?tab=claimable&process=fin", headers=basic("bob")).json
    assert other["items"] == []
