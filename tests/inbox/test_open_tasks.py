"""A user task with no assignee is open to everyone who may work tasks in its partition, as an
unassigned task in Camunda's Tasklist: listed, claimed, released and completed like a role task."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.helpers.app import login, make_user
from tests.helpers.documents import chain, node
from tests.helpers.inbox import INBOX, open_task, post
from tests.helpers.instances import start_latest
from tests.helpers.processes import publish_document
from webapp.models import HistoryEntry, Task


@pytest.fixture
def open_flows(app, demo):
    with app.app_context():
        publish_document(chain(("triage", node("userTask", "Triage request"))), key="triage")
        publish_document(
            chain(("count", node("userTask", "Count stock"))), key="stock", partition="finance"
        )
    return True


def fresh(db_session, task_id: int) -> Task:
    db_session.expire_all()
    return db_session.get(Task, task_id)


def test_an_open_task_is_listed_for_every_worker_and_claimed_by_one(
    users, open_flows, app, db_session
):
    task = open_task(db_session, start_latest(app, "triage"), "triage")
    assert task.open_to_partition and (task.assignee_id, task.candidate_role_id) == (None, None)
    alice, bob = users("alice"), users("bob")
    for client in (alice, bob):
        listed = client.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
        assert "Triage request" in listed and "open to everyone" in listed
        page = client.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
        assert "Everyone who works tasks here (not claimed)" in page
    assert users("designer").get(f"/inbox/tasks/{task.id}").status_code == 404

    assert post(bob, f"/inbox/tasks/{task.id}/claim").status_code == 303
    assert fresh(db_session, task.id).assignee_id is not None
    assert "Triage request" not in alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    assert alice.get(f"/inbox/tasks/{task.id}").status_code == 404
    assert "Release to everyone" in bob.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    released = post(bob, f"/inbox/tasks/{task.id}/release")
    assert released.status_code == 303
    assert "went back to everyone" in bob.get(INBOX).get_data(as_text=True)
    assert fresh(db_session, task.id).assignee_id is None

    done = post(alice, f"/inbox/tasks/{task.id}", {})
    assert done.status_code == 303, done.get_data(as_text=True)
    finished = fresh(db_session, task.id)
    assert finished.status == "completed"
    claimed = db_session.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == task.instance_id, HistoryEntry.kind == "task_claimed"
        )
    ).all()
    assert claimed == [{"task": task.id}], "no role is named for an open task"


def test_an_open_task_stays_in_its_partition(users, open_flows, app, db_session):
    task = open_task(db_session, start_latest(app, "stock"), "count")
    make_user("hr-clerk", ["tasks.work"], ["hr"], role="hr-worker")
    make_user("fin-clerk", ["tasks.work"], ["finance"], role="fin-worker")
    for username, expected in (("hr-clerk", 404), ("fin-clerk", 200)):
        client = app.test_client()
        assert login(client, username, "password-123").status_code == 302
        assert client.get(f"/inbox/tasks/{task.id}").status_code == expected, username
        listed = client.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
        assert ("Count stock" in listed) is (expected == 200), username


def test_an_operator_offering_an_open_task_to_a_role_closes_it_to_others(
    users, open_flows, app, db_session
):
    task = open_task(db_session, start_latest(app, "triage"), "triage")
    response = post(
        users("operator"), f"/inbox/tasks/{task.id}/reassign", {"role": "approver", "note": ""}
    )
    assert response.status_code == 303, response.get_data(as_text=True)
    moved = fresh(db_session, task.id)
    assert (moved.open_to_partition, moved.candidate_role.name) == (False, "approver")
    assert users("alice").get(f"/inbox/tasks/{task.id}").status_code == 404
    assert users("bob").get(f"/inbox/tasks/{task.id}").status_code == 200


@pytest.fixture
def offered_flows(app, demo):
    """approvals: offered to role approver, and also to the user alice and a role and a user
    that do not exist (recorded as unresolved)."""
    with app.app_context():
        task = node(
            "userTask",
            "Approve budget",
            assignee={"type": "role", "value": "approver"},
            candidates={"users": ["Alice", "ghost"], "roles": ["clerk"]},
        )
        publish_document(chain(("approve", task)), key="approvals")
    return True


def test_a_task_offered_to_several_roles_and_users(users, offered_flows, app, db_session):
    task = open_task(db_session, start_latest(app, "approvals"), "approve")
    assert [(c.role.name if c.role else None, c.user.username if c.user else None)
            for c in task.candidates] == [("clerk", None), (None, "alice")]  # fmt: skip
    created = db_session.scalar(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == task.instance_id, HistoryEntry.kind == "task_created"
        )
    )
    assert created == {
        "role": "approver",
        "candidates": ["clerk", "alice"],
        "unresolved_candidates": ["ghost"],
    }
    alice, bob = users("alice"), users("bob")
    for client in (alice, bob):
        listed = client.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
        assert "Approve budget" in listed and "roles approver, clerk and user alice" in listed
    assert users("designer").get(f"/inbox/tasks/{task.id}").status_code == 404

    assert post(alice, f"/inbox/tasks/{task.id}/claim").status_code == 303
    assert bob.get(f"/inbox/tasks/{task.id}").status_code == 404
    page = alice.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    assert "Release to roles approver, clerk and user alice" in page
    assert post(alice, f"/inbox/tasks/{task.id}/release").status_code == 303
    reassign = users("operator").get(f"/inbox/tasks/{task.id}/reassign").get_data(as_text=True)
    assert 'value="alice"' in reassign and 'value="bob"' in reassign
    done = post(bob, f"/inbox/tasks/{task.id}", {})
    assert done.status_code == 303 and fresh(db_session, task.id).status == "completed"


def test_a_task_offered_only_to_candidates_can_be_released(users, app, demo, db_session):
    """No role and no assignee in the model, only candidates: claimed, it shows Release."""
    with app.app_context():
        task = node("userTask", "Count cash", candidates={"users": ["alice", "bob"]})
        publish_document(chain(("count", task)), key="cash")
    task = open_task(db_session, start_latest(app, "cash"), "count")
    assert not task.open_to_partition and task.candidate_role_id is None
    alice = users("alice")
    assert post(alice, f"/inbox/tasks/{task.id}/claim").status_code == 303
    page = alice.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    assert "Release to users alice, bob" in page
    assert post(alice, f"/inbox/tasks/{task.id}/release").status_code == 303
    assert fresh(db_session, task.id).assignee_id is None


def test_candidate_expressions_offer_the_task_to_the_names_they_give(users, app, demo, db_session):
    """`rolesFrom`/`usersFrom` are read when the task is created: a comma-separated text or a
    list of names; anything else fails the step, naming the expression."""
    from webapp.models import Instance

    with app.app_context():
        task = node(
            "userTask",
            "Approve",
            candidates={"rolesFrom": "$input.groups", "usersFrom": "$input.people"},
        )
        publish_document(chain(("approve", task)), key="approve")
    offered = start_latest(app, "approve", input={"groups": "approver, clerk", "people": ["Bob"]})
    task = open_task(db_session, offered, "approve")
    assert not task.open_to_partition
    page = users("bob").get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    assert "approver" in page and "clerk" in page
    created = db_session.scalar(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == offered, HistoryEntry.kind == "task_created"
        )
    )
    assert created["candidates"] == ["approver", "clerk", "bob"]
    assert users("designer").get(f"/inbox/tasks/{task.id}").status_code == 404

    failing = start_latest(app, "approve", input={"groups": {"not": "names"}})
    db_session.expire_all()
    instance = db_session.get(Instance, failing)
    assert instance.status == "failed"
    assert "'rolesFrom' gave" in instance.error["message"]
