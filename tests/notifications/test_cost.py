"""The observer keeps a step cheap: a step that makes many tasks for a role adds one statement
(assignees and role members together), whatever the number of tasks and members; other steps
add none."""

from __future__ import annotations

from sqlalchemy import func, select

from tests.helpers.documents import chain, document, node, wire
from tests.helpers.notifications import start_as
from tests.helpers.processes import publish_document
from tests.helpers.statements import statements
from webapp.extensions import db
from webapp.models.notifications import Notification


def _fan_out(count: int) -> dict:
    review = node(
        "userTask",
        assignee={"type": "role", "value": "checker"},
        multiInstance={"cardinality": str(count), "output": "$loop.index"},
    )
    nodes = {"start": node("startEvent"), "review": review, "end": node("endEvent")}
    return document(nodes, wire("start", "review", "end"))


def test_notifications_for_a_step_cost_one_statement_whatever_the_tasks(app, people):
    with app.app_context():
        counts = {}
        for tasks in (2, 20):
            version = publish_document(_fan_out(tasks), key=f"fan-{tasks}")
            with statements(app) as seen:
                start_as(version.id)
            counts[tasks] = len([q for q in seen.queries if "notifications" in q])
        assert counts == {2: 1, 20: 1}
        # ann and ben, who have addresses, for each of the 22 tasks
        assert db.session.scalar(select(func.count()).select_from(Notification)) == 44
        plain = publish_document(chain(("wait", node("timerCatch", duration="PT1H"))), key="plain")
        with statements(app) as seen:
            start_as(plain.id)
        assert not [q for q in seen.queries if "notifications" in q]
