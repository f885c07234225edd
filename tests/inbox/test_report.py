"""Reporting a business error or an escalation from a task instead of completing it, as
Camunda's handleBpmnError / handleEscalation: the task's boundary events route it."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.helpers.documents import CLERK, document, flow, nested_document, node
from tests.helpers.inbox import open_task, post
from tests.helpers.instances import start_latest
from tests.helpers.processes import publish_document
from webapp.models import HistoryEntry, Instance, Task, User


@pytest.fixture
def nested(app, demo):
    """Process "nested": a task in a sub-process, with catchers on the task, the sub-process and
    the process."""
    with app.app_context():
        publish_document(nested_document(), key="nested")
    return True


def test_a_task_lists_what_its_boundaries_catch_and_reports_an_escalation_and_an_error(
    users, payable, app, db_session
):
    instance_id = start_latest(app, "pay")
    task = open_task(db_session, instance_id, "pay")
    bob = users("bob")
    page = bob.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    assert "Report instead of completing" in page
    assert 'value="error:unclear"' in page and "Amount unclear (error unclear)" in page
    assert 'value="escalation:sender"' in page

    bad = post(bob, f"/inbox/tasks/{task.id}/report", {"outcome": "error:other"})
    assert bad.status_code == 422
    assert "Choose one of the listed" in bad.get_data(as_text=True)

    sent = post(bob, f"/inbox/tasks/{task.id}/report", {"outcome": "escalation:sender"})
    assert sent.status_code == 303
    db_session.expire_all()
    assert db_session.get(Task, task.id).status == "open", "non-interrupting: the task goes on"
    assert open_task(db_session, instance_id, "clarify")

    failed = post(bob, f"/inbox/tasks/{task.id}/report", {"outcome": "error:unclear"})
    assert failed.status_code == 303
    db_session.expire_all()
    paid = db_session.get(Task, task.id)
    assert paid.status == "completed" and paid.completed_by_id == paid.assignee_id
    reported = db_session.execute(
        select(HistoryEntry.details, HistoryEntry.actor)
        .where(HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "task_reported")
        .order_by(HistoryEntry.id)
    ).all()
    assert [(d["event"], d["code"], actor) for d, actor in reported] == [
        ("escalation", "sender", "bob"),
        ("error", "unclear", "bob"),
    ]
    thrown = db_session.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "thrown"
        )
    ).all()
    assert [d["caught_by"] for d in thrown] == ["ask", "unpaid"]
    assert db_session.get(Instance, instance_id).status == "running"  # "clarify" is still open
    again = post(bob, f"/inbox/tasks/{task.id}/report", {"outcome": "error:unclear"})
    assert again.status_code == 409


def test_only_someone_who_may_work_the_task_reports(users, payable, app, db_session):
    task = open_task(db_session, start_latest(app, "pay"), "pay")
    response = post(users("designer"), f"/inbox/tasks/{task.id}/report", {"outcome": "error:x"})
    assert response.status_code in (403, 404)
    db_session.expire_all()
    assert db_session.get(Task, task.id).status == "open"


def test_a_task_in_a_sub_process_offers_what_the_scopes_around_it_catch(
    users, nested, app, db_session
):
    instance_id = start_latest(app, "nested")
    task = open_task(db_session, instance_id, "check")
    bob = users("bob")
    page = bob.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    report = page.split('id="report-heading"')[1].split("</section>")[0]
    values = [part.split('"')[0] for part in report.split('name="outcome" value="')[1:]]
    assert values == ["escalation:ask", "error:invalid", "error:", "escalation:late"]
    assert "Offer invalid (error invalid, on Review)" in report
    assert "Review failed (error of any code, on Review)" in report
    assert "Offer late (escalation late, in the process)" in report
    assert "Never reached" not in report, "the task's own boundary catches 'ask' first"

    sent = post(bob, f"/inbox/tasks/{task.id}/report", {"outcome": "error:invalid"})
    assert sent.status_code == 303
    db_session.expire_all()
    assert db_session.get(Task, task.id).status == "completed"
    thrown = db_session.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "thrown"
        )
    ).all()
    assert [d["caught_by"] for d in thrown] == ["invalid"]
    assert db_session.get(Instance, instance_id).status == "completed"


def _escalation_catcher(attached_to: str, **extra) -> dict:
    config = {"attachedTo": attached_to, "event": "escalation", "code": "late", **extra}
    return {**node("boundaryEvent", "Running late"), "config": config}


@pytest.fixture
def escalating(app, demo):
    """ "Pay invoice" with an interrupting escalation boundary "late" (leading to "Chase"); and
    the same task inside the sub-process "Review", whose boundary catches "late"; and the task
    in a process whose interrupting event sub-process starts on "late"."""
    own = {
        "start": node("startEvent"),
        "pay": node("userTask", "Pay invoice", assignee=CLERK),
        "done": node("endEvent"),
        "late": _escalation_catcher("pay"),
        "chase": node("userTask", "Chase", assignee=CLERK),
        "chased": node("endEvent"),
    }
    own_flows = {
        "f1": flow("start", "pay"),
        "f2": flow("pay", "done"),
        "f3": flow("late", "chase"),
        "f4": flow("chase", "chased"),
    }

    def inner(spec: dict) -> dict:
        return {**spec, "parent": "review"}

    outer = {
        "start": node("startEvent"),
        "review": node("subProcess", "Review"),
        "r_start": inner(node("startEvent")),
        "pay": inner(node("userTask", "Pay invoice", assignee=CLERK)),
        "r_end": inner(node("endEvent")),
        "done": node("endEvent"),
        "late": _escalation_catcher("review"),
        "chase": node("userTask", "Chase", assignee=CLERK),
        "chased": node("endEvent"),
    }
    outer_flows = {
        "f1": flow("start", "review"),
        "f2": flow("review", "done"),
        "f3": flow("r_start", "pay"),
        "f4": flow("pay", "r_end"),
        "f5": flow("late", "chase"),
        "f6": flow("chase", "chased"),
    }
    in_process = {
        "start": node("startEvent"),
        "pay": node("userTask", "Pay invoice", assignee=CLERK),
        "done": node("endEvent"),
        "late": node("eventSubProcess", "Chase the payment"),
        "late_start": {
            **node("startEvent", "Running late"),
            "parent": "late",
            "config": {"event": "escalation", "code": "late"},
        },
        "chase": {**node("userTask", "Chase", assignee=CLERK), "parent": "late"},
        "chased": {**node("endEvent"), "parent": "late"},
    }
    in_process_flows = {
        "f1": flow("start", "pay"),
        "f2": flow("pay", "done"),
        "f3": flow("late_start", "chase"),
        "f4": flow("chase", "chased"),
    }
    with app.app_context():
        publish_document(document(own, own_flows), key="own")
        publish_document(document(outer, outer_flows), key="outer")
        publish_document(document(in_process, in_process_flows), key="in-process")
    return True


@pytest.mark.parametrize("key", ["own", "outer", "in-process"])
def test_an_interrupting_escalation_reported_from_a_task_completes_it(
    users, escalating, app, db_session, key
):
    """The task's own boundary, its sub-process's or an event sub-process catches it: either
    way the task ends completed by the reporter, and the instance follows the catcher."""
    instance_id = start_latest(app, key)
    task = open_task(db_session, instance_id, "pay")
    sent = post(users("bob"), f"/inbox/tasks/{task.id}/report", {"outcome": "escalation:late"})
    assert sent.status_code == 303
    db_session.expire_all()
    reported = db_session.get(Task, task.id)
    bob_id = db_session.scalar(select(User.id).where(User.username == "bob"))
    assert (reported.status, reported.completed_by_id) == ("completed", bob_id)
    assert reported.completed_at is not None
    assert open_task(db_session, instance_id, "chase")
    entered = db_session.scalars(
        select(HistoryEntry.node_id).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "entered"
        )
    ).all()
    assert "late" in entered and "done" not in entered
    assert db_session.get(Instance, instance_id).status == "running"


@pytest.mark.parametrize(
    ("reporter", "claimed_by", "status"),
    [("admin", None, 403), ("admin", "bob", 409), ("alice", None, 404)],
    ids=["admin", "admin-after-a-claim", "worker-of-another-role"],
)
def test_only_the_assignee_or_a_candidate_may_report_from_a_task(
    users, payable, app, db_session, reporter, claimed_by, status
):
    """The admin sees and manages the task and holds `tasks.work`, but is neither its assignee
    nor in its candidate role: a valid outcome is refused (after a claim: the claim says so).
    Alice works tasks too, but not this role's: to her the task does not exist."""
    instance_id = start_latest(app, "pay")
    task = open_task(db_session, instance_id, "pay")
    if claimed_by:
        assert post(users(claimed_by), f"/inbox/tasks/{task.id}/claim").status_code == 303
    client = users(reporter)
    seen = client.get(f"/inbox/tasks/{task.id}")
    assert seen.status_code == (404 if status == 404 else 200)
    assert "Report instead of completing" not in seen.get_data(as_text=True)
    for outcome in ("error:unclear", "escalation:sender"):
        refused = post(client, f"/inbox/tasks/{task.id}/report", {"outcome": outcome})
        assert refused.status_code == status, outcome
    db_session.expire_all()
    assert db_session.get(Task, task.id).status == "open"
    assert not db_session.scalars(
        select(HistoryEntry.id).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "task_reported"
        )
    ).all()
    assert open_task(db_session, instance_id, "pay")
