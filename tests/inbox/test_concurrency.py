"""Two requests really racing on the same task, in threads, on the suite's database (SQLite or
PostgreSQL): exactly one wins, the other is told who got there first, nothing is applied twice."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import func, select

from tests.helpers.app import failed_page
from tests.helpers.inbox import kinds, open_task, post
from tests.helpers.instances import cancel, start_latest
from webapp.models import Task

ROUNDS = 4


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls at the same moment in threads; return their results (or exceptions)."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[index] = call()
        except Exception as error:  # reported to the test, which fails on it
            results[index] = error

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_two_people_completing_the_same_task(users, flows, app, db_session):
    alice, bob = users("alice"), users("bob")
    for client in (alice, bob):
        client.get("/")  # sessions and CSRF tokens ready before the race
    for round_ in range(ROUNDS):
        review = open_task(db_session, start_latest(app, "expense"), "review")
        path = f"/inbox/tasks/{review.id}"
        answers = race(
            lambda p=path: post(alice, p, {"amount": "10"}),
            lambda p=path: post(bob, p, {"amount": "20"}),
        )
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses == [303, 409], (round_, statuses)
        loser = next(answer for answer in answers if answer.status_code == 409)
        db_session.expire_all()
        done = db_session.get(Task, review.id)
        winner = "Alice Clerk" if done.result == {"amount": 10.0} else "Bob Approver"
        assert f"already completed by {winner}" in loser.get_data(as_text=True)
        history = kinds(db_session, review.instance_id)
        assert sum(kind == "task_completed" for kind, _ in history) == 1
        approvals = db_session.scalar(
            select(func.count(Task.id)).where(
                Task.instance_id == review.instance_id, Task.node_id == "approve"
            )
        )
        assert approvals == 1, "the instance moved on exactly once"


def test_a_double_click_completes_once(users, flows, app, db_session):
    alice = users("alice")
    alice.get("/")
    second_tab = app.test_client()
    second_tab.set_cookie(
        "session", alice.get_cookie("session").value, domain=alice.get_cookie("session").domain
    )
    second_tab._csrf = getattr(alice, "_csrf", None)
    for _ in range(ROUNDS):
        review = open_task(db_session, start_latest(app, "expense"), "review")
        path = f"/inbox/tasks/{review.id}"
        answers = race(
            lambda p=path: post(alice, p, {"amount": "10"}),
            lambda p=path: post(second_tab, p, {"amount": "10"}),
        )
        assert [answer.status_code for answer in answers] == [303, 303]
        history = kinds(db_session, review.instance_id)
        assert history.count(("task_completed", "alice")) == 1


def test_two_people_claiming_the_same_task(users, flows, app, db_session):
    alice, bob = users("alice"), users("bob")
    for client in (alice, bob):
        client.get("/")
    for _ in range(ROUNDS):
        review = open_task(db_session, start_latest(app, "expense"), "review")
        path = f"/inbox/tasks/{review.id}/claim"
        answers = race(lambda p=path: post(alice, p), lambda p=path: post(bob, p))
        assert [answer.status_code for answer in answers] == [303, 303]
        refused = [n for n, answer in enumerate(answers) if "failed=" in answer.location]
        assert len(refused) == 1, [answer.location for answer in answers]
        loser_client, loser = (alice, bob)[refused[0]], answers[refused[0]]
        page = failed_page(loser_client, loser, f"/inbox/tasks/{review.id}", 409)
        assert "has claimed this task" in page
        claims = [actor for kind, actor in kinds(db_session, review.instance_id)
                  if kind == "task_claimed"]  # fmt: skip
        assert len(claims) == 1


def test_completing_while_an_operator_cancels(users, flows, app, db_session):
    alice = users("alice")
    alice.get("/")
    for _ in range(ROUNDS):
        review = open_task(db_session, start_latest(app, "expense"), "review")
        path = f"/inbox/tasks/{review.id}"
        answer, cancelled = race(
            lambda p=path: post(alice, p, {"amount": "10"}),
            lambda i=review.instance_id: cancel(app, i, "race"),
        )
        assert cancelled is None, cancelled
        db_session.expire_all()
        task = db_session.get(Task, review.id)
        if answer.status_code == 303:
            assert task.status == "completed"
        else:
            assert answer.status_code == 409
            assert "was cancelled by operator (race)" in answer.get_data(as_text=True)
            assert task.status == "cancelled" and task.result is None
        assert task.instance.status == "cancelled"
