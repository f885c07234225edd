"""An event-based gateway's message and timer due at the same moment, with two real RQ workers
firing the timers and the messages sent through the API from threads: exactly one event wins."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from tests.helpers.documents import simple
from tests.helpers.http import basic
from tests.helpers.instances import details, history, load, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.models import Job, MessageSubscription

TRIALS = 30
SENDERS = 3
# Seconds over which the messages are sent, from just before the due moment.
SPREAD = 2.0


def test_a_message_and_a_timer_due_together_have_exactly_one_winner(
    app, engine, client, demo, workers
):
    doc = simple()
    doc["nodes"]["late"]["config"] = {"date": "$input.due"}
    version = publish_document(doc)
    # A whole second, as RQ schedules by whole seconds: the timers come due right then.
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=4)
    orders = [f"race-{n}" for n in range(TRIALS)]
    instances = {
        order: start(engine, version, input={"order": order, "due": due.isoformat()})
        for order in orders
    }
    workers.start(2)
    answers: dict[str, int] = {}

    def send(batch: list[str]) -> None:
        with app.test_client() as own:
            for order in batch:
                # Spread over the moments when the timers are due and being fired.
                moment = due + timedelta(seconds=SPREAD * (orders.index(order) / TRIALS - 0.1))
                time.sleep(max(0.0, (moment - datetime.now(UTC)).total_seconds()))
                body = {"name": "paid", "correlation_key": order, "payload": {"o": order}}
                answer = own.post("/api/messages", json=body, headers=basic("operator"))
                answers[order] = answer.status_code

    threads = [threading.Thread(target=send, args=(orders[n::SENDERS],)) for n in range(SENDERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == TRIALS

    def all_done() -> bool:
        return all(load(engine, i).status == "completed" for i in instances.values())

    wait_for(all_done, timeout=60, what="every instance to complete")
    winners = []
    for order, instance_id in instances.items():
        [won] = details(engine, instance_id, "event_won", "gw")
        entries = history(engine, instance_id)
        ends = [n for k, n in entries if k == "entered" and n in ("paid_end", "late_end")]
        assert ends == [f"{won['winner']}_end"], (order, entries)
        assert entries.count(("event_won", "gw")) == 1
        assert (answers[order] == 200) == (won["winner"] == "paid"), (order, answers[order])
        assert answers[order] in (200, 404)
        jobs = engine.scalars(select(Job.status).where(Job.instance_id == instance_id)).all()
        assert sorted(jobs) == ["cancelled" if won["winner"] == "paid" else "done"]
        subscriptions = engine.scalars(
            select(MessageSubscription.id).where(MessageSubscription.instance_id == instance_id)
        ).all()
        assert subscriptions == []
        instance = load(engine, instance_id)
        assert ("paid" in instance.nodes) == (won["winner"] == "paid")
        winners.append(won["winner"])
    assert set(winners) <= {"paid", "late"}
