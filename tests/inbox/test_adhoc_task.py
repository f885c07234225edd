"""The task page of a task inside a running ad-hoc sub-process: its assignee starts the
sub-process's other activities from there; nobody else may."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.app import csrf_token, login
from tests.helpers.documents import document, flow, inside, node
from tests.helpers.instances import open_tasks, start
from tests.helpers.processes import publish_document
from webapp.extensions import db
from webapp.models import Task

ALICE = {"type": "user", "value": "alice"}


def test_the_assignee_starts_another_activity_from_the_task_page(app, demo, db_session):
    nodes = {
        "start": node("startEvent"),
        "case": node("adHocSubProcess", "Case", activate="['call']"),
        "call": inside("case", "userTask", "Call the customer", assignee=ALICE),
        "letter": inside("case", "userTask", "Write a letter", assignee=ALICE),
        "end": node("endEvent"),
    }
    flows = {"f1": flow("start", "case"), "f2": flow("case", "end")}
    with app.app_context():
        version = publish_document(document(nodes, flows), key="case", partition="finance")
        instance_id = start(db.session, version)
    [call] = open_tasks(db_session, instance_id)
    alice = app.test_client()
    login(alice, "alice")
    path = f"/inbox/tasks/{call.id}"
    page = alice.get(path).get_data(as_text=True)
    assert "Start another activity of Case" in page
    assert 'name="activity" value="letter"' in page
    token = csrf_token(alice, path)
    done = alice.post(f"{path}/activities", data={"activity": "letter", "csrf_token": token})
    assert done.status_code in (302, 303)
    titles = [t.title for t in open_tasks(db_session, instance_id)]
    assert titles == ["Call the customer", "Write a letter"]
    refused = alice.post(f"{path}/activities", data={"activity": "end", "csrf_token": token})
    assert "Not started" in alice.get(refused.headers["Location"]).get_data(as_text=True)

    bob = app.test_client()
    login(bob, "bob")
    other = bob.post(
        f"{path}/activities", data={"activity": "letter", "csrf_token": csrf_token(bob, "/")}
    )
    assert other.status_code == 404
    db_session.rollback()
    count = db_session.scalars(select(Task.id).where(Task.instance_id == instance_id)).all()
    assert len(count) == 2
