"""Signals end to end in-process: every signal element, partition scoping, signal starts, and
that a broadcast reaches each waiting instance once (receipts), even when run again."""

from __future__ import annotations

from sqlalchemy import func, select

from tests.engine.broadcasts import run_broadcasts
from tests.engine.unchecked import publish_unchecked
from tests.helpers.documents import CLERK, catcher, chain, document, node, wire
from tests.helpers.instances import broadcast, history, load, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import signals, steps
from webapp.models import Instance, MessageSubscription, SignalBroadcast, SignalReceipt
from webapp.models.base import utcnow
from webapp.services.jobs import commit


def test_a_signal_catch_waits_and_the_broadcast_moves_it_on_with_the_payload(engine):
    version = publish_document(catcher(), key="catcher")
    instance_id = start(engine, version)
    assert load(engine, instance_id).status == "running"
    broadcast_id = broadcast(engine, "go", {"n": 7})
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["got"] == {"n": 7}
    assert ("signal", "wait") in history(engine, instance_id)
    done = engine.get(SignalBroadcast, broadcast_id)
    assert (done.status, done.total, done.delivered) == ("done", 1, 1)


def test_another_name_or_a_later_subscription_does_not_receive_it(engine):
    version = publish_document(catcher(), key="catcher")
    other = start(engine, publish_document(catcher("stop"), key="other"))
    early = start(engine, version)
    conn = engine.connection()
    ref = signals.record(conn, name="go", payload={}, partition_id=None, now=utcnow())
    engine.commit()
    late = start(engine, version)  # subscribes after the broadcast was made
    run_broadcasts(engine)
    assert load(engine, early).status == "completed"
    assert load(engine, late).status == "running"
    assert load(engine, other).status == "running"
    assert engine.get(SignalBroadcast, ref.id).total == 1


def test_a_broadcast_reaches_only_its_partition(engine, demo):
    from webapp.models import Partition

    finance = engine.scalar(select(Partition.id).where(Partition.key == "finance"))
    hr = engine.scalar(select(Partition.id).where(Partition.key == "hr"))
    version = publish_document(catcher(), key="catcher")
    in_finance = start(engine, version, partition_id=finance)
    in_hr = start(engine, version, partition_id=hr)
    in_none = start(engine, version)
    broadcast(engine, "go", partition_id=finance)
    assert load(engine, in_finance).status == "completed"
    assert load(engine, in_hr).status == "running"
    assert load(engine, in_none).status == "running"
    broadcast(engine, "go")
    assert load(engine, in_none).status == "completed"
    assert load(engine, in_hr).status == "running"


def test_a_throw_broadcasts_after_its_step_and_goes_on(engine):
    waiting = start(engine, publish_document(catcher(), key="catcher"))
    thrower = chain(("throw", node("signalThrow", signal="go", payload={"who": "$input.who"})))
    thrower_id = start(engine, publish_document(thrower, key="thrower"), input={"who": "me"})
    assert load(engine, thrower_id).status == "completed"
    assert load(engine, waiting).status == "running"
    run_broadcasts(engine)
    instance = load(engine, waiting)
    assert instance.status == "completed" and instance.vars["got"] == {"who": "me"}
    row = engine.scalar(select(SignalBroadcast))
    assert (row.instance_id, row.node_id, row.name) == (thrower_id, "throw", "go")


def test_a_signal_end_broadcasts_and_ends_its_token(engine):
    waiting = start(engine, publish_document(catcher(), key="catcher"))
    doc = chain()
    doc["nodes"]["end"]["config"] = {"event": "signal", "signal": "go", "payload": {"x": "1 + 1"}}
    ender = start(engine, publish_document(doc, key="ender"))
    assert load(engine, ender).status == "completed"
    run_broadcasts(engine)
    assert load(engine, waiting).vars["got"] == {"x": 2}


def test_a_bad_payload_expression_is_an_incident_naming_the_value(engine):
    thrower = chain(("throw", node("signalThrow", signal="go", payload={"who": "$input.x +"})))
    instance = load(engine, start(engine, publish_unchecked(thrower, key="thrower")))
    assert instance.status == "failed"
    assert "who" in instance.error["message"]
    assert engine.scalar(select(func.count()).select_from(SignalBroadcast)) == 0


def _task_with_signal_boundary(interrupting: bool) -> dict:
    nodes = {
        "start": node("startEvent"),
        "work": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
        "sig": node(
            "boundaryEvent",
            attachedTo="work",
            event="signal",
            signal="go",
            interrupting=interrupting,
            saveTo="got",
        ),
        "after": node("userTask", assignee=CLERK),
        "end2": node("endEvent"),
    }
    return document(nodes, {**wire("start", "work", "end"), **wire("sig", "after", "end2")})


def test_an_interrupting_signal_boundary_ends_the_task_and_takes_its_path(engine, demo):
    instance_id = start(engine, publish_document(_task_with_signal_boundary(True)))
    broadcast(engine, "go", {"a": 1})
    assert {t.node_id for t in open_tasks(engine, instance_id)} == {"after"}
    assert load(engine, instance_id).vars["got"] == {"a": 1}
    broadcast(engine, "go")
    assert history(engine, instance_id).count(("boundary", "sig")) == 1


def test_a_non_interrupting_signal_boundary_fires_for_each_broadcast(engine, demo):
    instance_id = start(engine, publish_document(_task_with_signal_boundary(False)))
    broadcast(engine, "go")
    broadcast(engine, "go")
    tasks = sorted(t.node_id for t in open_tasks(engine, instance_id))
    assert tasks == ["after", "after", "work"]
    assert history(engine, instance_id).count(("boundary", "sig")) == 2


def _signal_event_sub_process(interrupting: bool) -> dict:
    nodes = {
        "start": node("startEvent"),
        "work": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
        "on": node("eventSubProcess"),
        "on_start": {
            **node("startEvent", event="signal", signal="go", interrupting=interrupting),
            "parent": "on",
        },
        "on_task": {**node("userTask", assignee=CLERK), "parent": "on"},
        "on_end": {**node("endEvent"), "parent": "on"},
    }
    flows = {**wire("start", "work", "end"), **wire("on_start", "on_task", "on_end")}
    return document(nodes, flows)


def test_a_signal_event_sub_process_interrupting_and_not(engine, demo):
    stops = start(engine, publish_document(_signal_event_sub_process(True), key="stops"))
    goes_on = start(engine, publish_document(_signal_event_sub_process(False), key="goes_on"))
    broadcast(engine, "go")
    assert {t.node_id for t in open_tasks(engine, stops)} == {"on_task"}
    assert sorted(t.node_id for t in open_tasks(engine, goes_on)) == ["on_task", "work"]
    broadcast(engine, "go")
    assert {t.node_id for t in open_tasks(engine, stops)} == {"on_task"}
    assert sorted(t.node_id for t in open_tasks(engine, goes_on)) == ["on_task", "on_task", "work"]


def test_a_signal_start_starts_one_instance_per_broadcast_in_its_partition(engine, demo):
    from webapp.models import Partition

    finance = engine.scalar(select(Partition.id).where(Partition.key == "finance"))
    doc = chain(("review", node("userTask", assignee=CLERK)))
    doc["nodes"]["start"]["config"] = {"event": "signal", "signal": "go"}
    publish_document(doc, key="started")
    hr_doc = chain(("review", node("userTask", assignee=CLERK)))
    hr_doc["nodes"]["start"]["config"] = {"event": "signal", "signal": "go"}
    publish_document(hr_doc, key="hr_started", partition="hr")
    broadcast_id = broadcast(engine, "go", {"n": 1}, partition_id=finance)
    made = engine.execute(select(Instance.process_key, Instance.partition_id, Instance.input)).all()
    assert [tuple(r) for r in made] == [("started", finance, {"n": 1})]
    row = engine.get(SignalBroadcast, broadcast_id)
    assert (row.total, row.delivered, row.started) == (0, 0, 1)
    # Running its batch again starts nothing more.
    from webapp.models import SignalBatch

    engine.execute(SignalBatch.__table__.update().values(status="pending", lease_until=None))
    engine.commit()
    run_broadcasts(engine)
    assert engine.scalar(select(func.count()).select_from(Instance)) == 1


def test_a_batch_run_again_delivers_to_no_instance_twice(engine):
    from webapp.models import SignalBatch

    doc = _task_with_signal_boundary(False)
    version = publish_document(doc, key="twice")
    instance_ids = [start(engine, version) for _ in range(3)]
    broadcast(engine, "go")
    engine.execute(SignalBatch.__table__.update().values(status="pending", lease_until=None))
    engine.execute(SignalBroadcast.__table__.update().values(status="running"))
    engine.commit()
    run_broadcasts(engine)
    for instance_id in instance_ids:
        assert history(engine, instance_id).count(("boundary", "sig")) == 1
    assert engine.scalar(select(func.count()).select_from(SignalReceipt)) == 3
    # The non-interrupting boundaries subscribed again, past the broadcast's high-water mark.
    kinds = engine.scalars(select(MessageSubscription.kind)).all()
    assert kinds == ["signal"] * 3


def test_the_send_message_tool_starts_a_listening_process_once(engine, demo):
    from webapp.engine import calls
    from webapp.models import Job

    listener = chain(("review", node("userTask", assignee=CLERK)))
    listener["nodes"]["start"]["config"] = {"event": "message", "message": "order.placed"}
    publish_document(listener, key="on_order", partition="finance")
    inputs = {"name": "'order.placed'", "correlationKey": "$input.order", "payload": "$input"}
    sender = chain(("send", node("serviceTask", tool="send_message", inputs=inputs, saveTo="out")))
    from webapp.models import Partition

    finance = engine.scalar(select(Partition.id).where(Partition.key == "finance"))
    sender_id = start(
        engine, publish_document(sender, key="sender"), input={"order": "O-9"}, partition_id=finance
    )
    job = engine.scalar(select(Job).where(Job.instance_id == sender_id))
    engine.rollback()
    drain(engine)
    sent = load(engine, sender_id)
    assert sent.status == "completed", sent.error
    started = engine.scalar(select(Instance).where(Instance.process_key == "on_order"))
    assert (started.input, started.business_key, started.partition_id) == (
        {"order": "O-9"},
        "O-9",
        finance,
    )
    assert sent.vars["out"]["started"] == started.id
    # The same call again (a retry after a lost answer) carries the same idempotency key.
    from webapp.engine.calls import Call

    again = calls.invoke(
        Call(
            job_id=job.id,
            instance_id=sender_id,
            node_id="send",
            tool="send_message",
            inputs={"name": "order.placed", "correlationKey": "O-9", "payload": {"order": "O-9"}},
            key=job.key,
            actor=None,
            timeout=30,
            attempt=2,
        ),
        {},
    )
    assert again.ok and again.output["duplicate"] is True
    assert (
        engine.scalar(select(func.count()).select_from(Instance).filter_by(process_key="on_order"))
        == 1
    )


def test_the_send_message_tool_fails_when_nobody_listens(engine, demo):
    inputs = {"name": "'nobody'", "correlationKey": "'x'"}
    sender = chain(("send", node("serviceTask", tool="send_message", inputs=inputs, retries=0)))
    sender_id = start(engine, publish_document(sender, key="sender"))
    drain(engine)
    instance = load(engine, sender_id)
    assert instance.status == "failed"
    assert instance.error["code"] == "no_match"


def test_two_workers_reaching_one_instance_deliver_once(engine, demo):
    """Two attempts at one batch (a lease that ran out while its worker still ran) both list an
    instance; the second step finds it has the broadcast and fires nothing again."""
    from webapp.models import SignalBatch

    instance_id = start(engine, publish_document(_task_with_signal_boundary(False), key="race"))
    conn = engine.connection()
    ref = signals.record(conn, name="go", payload={}, partition_id=None, now=utcnow())
    engine.commit()
    signals.claim_broadcast(engine, ref.id, utcnow())
    engine.commit()
    signals.plan(engine, ref.id, 500, utcnow())
    engine.commit()
    batch_id = engine.scalar(select(SignalBatch.id))
    engine.rollback()
    first = signals.claim_batch(engine, batch_id, utcnow(), 1.0)
    engine.commit()
    assert signals.batch_instances(engine, first) == [instance_id]
    for _ in range(2):
        signals.deliver(engine, first, instance_id, utcnow())
        engine.commit()
    assert history(engine, instance_id).count(("boundary", "sig")) == 1
    assert engine.scalar(select(func.count()).select_from(SignalReceipt)) == 1


def test_a_broadcast_never_reaches_a_subscription_made_after_it(engine):
    """A broadcast covers the subscriptions up to the largest id when it was made: an id freed
    by a cancelled instance must not come back (SQLite reuses the largest rowid without
    AUTOINCREMENT) and hand an older, still pending broadcast to a newer subscription."""
    waits = publish_document(chain(("wait", node("signalCatch", signal="late"))), "waits_late")
    first = start(engine, waits)
    freed = engine.scalar(select(func.max(MessageSubscription.id)))
    broadcast = signals.record(
        engine.connection(), name="late", payload={}, partition_id=None, now=utcnow()
    )
    engine.commit()
    commit(steps.cancel_instance(engine, first, reason="gone"))
    second = start(engine, waits)
    assert engine.scalar(select(func.max(MessageSubscription.id))) > freed
    run_broadcasts(engine)
    assert load(engine, second).status == "running"
    assert engine.get(SignalBroadcast, broadcast.id).delivered == 0
