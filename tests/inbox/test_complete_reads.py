"""What completing or reporting a task reads: the task and its instance once, under the lock the
step holds, and nothing of the user's roles or partitions again after the commit."""

from __future__ import annotations

import re

from sqlalchemy import select

from tests.helpers.inbox import open_task
from tests.helpers.instances import start_latest
from tests.helpers.statements import Seen, statements
from webapp.extensions import db


def _timed(seen: Seen) -> list[tuple[str, bool]]:
    """(statement, run after the last commit) for each statement seen."""
    late = len(seen.statements) - len(seen.after_commit())
    return [(statement, index >= late) for index, statement in enumerate(seen.statements)]


def _reads(seen: Seen, table: str, *, after: bool | None = None) -> list[str]:
    """SELECTs reading `table` (in FROM), before or after the last commit (None: either)."""
    pattern = re.compile(rf"^SELECT .* FROM {table}\b")
    return [s for s, late in _timed(seen) if pattern.match(s) and (after is None or late == after)]


def _loaded_user(db_session, username: str):
    from webapp.models import User
    from webapp.permissions import can

    user = db_session.scalar(select(User).where(User.username == username))
    can(user, "tasks.work", None)  # the request has loaded its user's roles, as a page does
    return user


def test_completing_reads_the_task_and_instance_once(app, flows, db_session):
    from webapp.models import Task
    from webapp.services import tasks

    instance_id = start_latest(app, "expense", input={"requested": 5})
    review = open_task(db_session, instance_id, "review")
    alice = _loaded_user(db_session, "alice")
    with statements(db.engine) as seen:
        done = tasks.complete(alice, review.id, {"amount": "40"})
    assert len(_reads(seen, "instances")) == 1, "the instance is read once, by the locking step"
    assert len(_reads(seen, "tasks", after=False)) == 2, "in the lock, then the task itself"
    assert not _reads(seen, "tokens", after=True)
    for table in ("users", "roles", "partitions", "role_permissions"):
        assert not _reads(seen, table, after=True), f"{table} reloaded after the commit"
    updates = [s for s in seen.statements if s.startswith("UPDATE tasks")]
    assert len(updates) == 1, "claimed and completed in one statement"
    approve = db_session.scalar(select(Task).where(Task.node_id == "approve"))
    assert done.next_task is not None and done.next_task.id == approve.id
    assert done.where == f"Instance {instance_id} moved on to: Approve expense."
    completed = db_session.get(Task, review.id)
    db_session.refresh(completed)
    assert (completed.status, completed.assignee_id, completed.completed_by_id) == (
        "completed",
        alice.id,
        alice.id,
    )
    assert completed.claimed_at is not None and completed.result == {"amount": 40.0}


def test_completing_the_last_task_says_so_without_a_next_one(app, flows, db_session):
    from webapp.services import tasks

    instance_id = start_latest(app, "direct")
    sign = open_task(db_session, instance_id)
    bob = _loaded_user(db_session, "bob")
    with statements(db.engine) as seen:
        done = tasks.complete(bob, sign.id, {})
    assert (done.where, done.next_task) == (f"Instance {instance_id} is complete.", None)
    assert not seen.after_commit(), "a completed instance needs no read after"


def test_a_task_for_others_next_is_named_but_not_offered(app, flows, db_session):
    """Bob completes the clerk review; the approval is alice's: said, not opened for bob."""
    from webapp.services import tasks

    instance_id = start_latest(app, "expense", input={"requested": 5})
    review = open_task(db_session, instance_id, "review")
    done = tasks.complete(_loaded_user(db_session, "bob"), review.id, {"amount": "40"})
    assert done.where == f"Instance {instance_id} moved on to: Approve expense."
    assert done.next_task is None


def test_reporting_claims_the_task_and_names_the_next_without_reloading_the_user(
    app,
    payable,
    db_session,
):
    """A non-interrupting escalation: the task stays open, now bob's, and comes next again (the
    first of his open tasks there); the user's roles are not read again after the commit."""
    from webapp.models import Task
    from webapp.services import tasks

    instance_id = start_latest(app, "pay")
    pay = open_task(db_session, instance_id, "pay")
    bob = _loaded_user(db_session, "bob")
    with statements(db.engine) as seen:
        done = tasks.report(bob, pay.id, "escalation:sender")
    for table in ("users", "roles", "partitions", "role_permissions"):
        assert not _reads(seen, table, after=True), f"{table} reloaded after the commit"
    assert open_task(db_session, instance_id, "clarify")
    assert done.next_task is not None and done.next_task.id == pay.id
    assert done.where == f"Instance {instance_id} moved on to: Pay invoice, Clarify."
    still = db_session.get(Task, pay.id)
    db_session.refresh(still)
    assert (still.status, still.assignee_id) == ("open", bob.id)
    assert still.claimed_at is not None


def test_claiming_finds_and_locks_the_instance_in_one_statement(app, flows, db_session):
    from webapp.services import tasks

    review = open_task(db_session, start_latest(app, "expense", input={"requested": 5}), "review")
    alice = _loaded_user(db_session, "alice")
    with statements(db.engine) as seen:
        claimed = tasks.claim(alice, review.id)
    locks = _reads(seen, "instances", after=False)  # FOR UPDATE on PostgreSQL
    assert len(locks) == 1 and "FROM tasks" in locks[0], "the task's instance, found and locked"
    assert len(_reads(seen, "tasks", after=False)) == 2, "in the lock, then the task itself"
    assert claimed.assignee_id == alice.id


def test_after_a_completion_many_open_tasks_are_named_up_to_ten_and_counted(app, demo, db_session):
    """Twelve parallel tasks: completing one names the next ten by title, counts the rest, and
    offers the user's next one, from one grouped read whatever the number of tasks."""
    from tests.helpers.documents import document, flow, node
    from tests.helpers.inbox import user_task
    from tests.helpers.processes import publish_document
    from webapp.services import tasks

    titles = [f"Check part {n:02d}" for n in range(1, 13)]
    nodes = {"start": node("startEvent"), "split": node("parallelGateway")}
    nodes |= {"join": node("parallelGateway"), "end": node("endEvent")}
    flows = {"f0": flow("start", "split"), "f9": flow("join", "end")}
    for n, title in enumerate(titles, 1):
        nodes[f"t{n}"] = user_task(title, "role", "clerk")
        flows[f"a{n}"] = flow("split", f"t{n}")
        flows[f"b{n}"] = flow(f"t{n}", "join")
    with app.app_context():
        publish_document(document(nodes, flows), key="parts")
    instance_id = start_latest(app, "parts")
    first = open_task(db_session, instance_id, "t1")
    alice = _loaded_user(db_session, "alice")
    with statements(db.engine) as seen:
        done = tasks.complete(alice, first.id, {})
    assert done.where == (
        f"Instance {instance_id} moved on to: {', '.join(titles[1:11])} and 1 more."
    )
    assert done.next_task is not None and done.next_task.title == "Check part 02"
    assert len(_reads(seen, "tasks", after=True)) == 1
