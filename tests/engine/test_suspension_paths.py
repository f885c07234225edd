"""Every path that would move a suspended instance or start a suspended version, run in-process:
a signal broadcast and a called child ending wait for the resume, a call of a suspended version
is an incident naming it, and message and timer starts of a suspended version start nothing."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from tests.engine.timer_start_docs import iso, soon, timed
from tests.helpers.documents import caller_doc, catcher, child_doc, document, flow, node
from tests.helpers.http import basic
from tests.helpers.instances import (
    broadcast,
    complete,
    history,
    load,
    open_tasks,
    pending_jobs,
    start,
)
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import suspension
from webapp.models import Instance, ProcessVersion, Task
from webapp.models.base import utcnow
from webapp.models.schedules import Schedule
from webapp.services import schedules
from webapp.services.jobs import ENTRY_POINTS, commit


def _suspend(engine, instance_id: int) -> None:
    commit(suspension.suspend_instance(engine, instance_id, reason="test", actor=None))


def _resume(engine, instance_id: int) -> None:
    commit(suspension.resume_instance(engine, instance_id, actor=None))


def _suspend_version(engine, version_id: int) -> None:
    engine.rollback()
    engine.execute(
        update(ProcessVersion)
        .where(ProcessVersion.id == version_id)
        .values(suspended_at=utcnow(), suspend_reason="checking")
    )
    engine.commit()


def test_a_signal_broadcast_to_a_suspended_instance_is_applied_on_resume(engine):
    instance_id = start(engine, publish_document(catcher("go"), key="catcher"))
    _suspend(engine, instance_id)
    broadcast(engine, "go", {"n": 1})
    assert load(engine, instance_id).status == "running"
    assert ("signal", "wait") not in history(engine, instance_id)
    broadcast(engine, "go", {"n": 2})  # a second broadcast finds the subscription still there
    _resume(engine, instance_id)
    assert load(engine, instance_id).status == "completed"
    assert history(engine, instance_id).count(("signal", "wait")) == 1
    assert load(engine, instance_id).vars["got"] == {"n": 1}


def test_a_child_ending_while_its_caller_is_suspended_is_applied_on_resume(engine, demo):
    publish_document(child_doc(), key="child")
    caller_id = start(engine, publish_document(caller_doc(), key="caller"))
    drain(engine)
    child_id = engine.scalar(select(Instance.id).where(Instance.parent_id == caller_id))
    _suspend(engine, caller_id)
    [task] = open_tasks(engine, child_id)
    complete(engine, task, {})
    [handed] = pending_jobs(engine, caller_id, "resume")
    ENTRY_POINTS["resume"](handed.id, caller_id)  # delivered: it waits, still pending
    assert [job.id for job in pending_jobs(engine, caller_id, "resume")] == [handed.id]
    assert load(engine, child_id).status == "completed"
    assert load(engine, caller_id).status == "running"
    assert ("child_ended", "call") not in history(engine, caller_id)
    _resume(engine, caller_id)
    drain(engine)
    assert load(engine, caller_id).status == "completed"
    assert history(engine, caller_id).count(("child_ended", "call")) == 1


def test_a_call_of_a_suspended_version_is_an_incident_naming_it(engine, demo):
    child = publish_document(child_doc(), key="child")
    _suspend_version(engine, child.id)
    caller_id = start(engine, publish_document(caller_doc(), key="caller"))
    drain(engine)
    caller = load(engine, caller_id)
    assert caller.status == "failed"
    assert "Version 1 of process 'child' is suspended (checking)" in caller.error["message"]


def test_a_suspended_task_cannot_be_completed_in_the_engine(engine, demo):
    from webapp.engine import EngineError, steps

    instance_id = start(engine, publish_document(child_doc(), key="child"))
    [task] = open_tasks(engine, instance_id)
    _suspend(engine, instance_id)
    try:
        steps.complete_task(engine, task.id, {}, actor=None)
    except EngineError as error:
        assert (error.code, error.status) == ("suspended", 409)
    else:
        raise AssertionError("completed a task of a suspended instance")
    engine.rollback()
    assert engine.get(Task, task.id, populate_existing=True).status == "open"


def test_a_message_start_of_a_suspended_version_is_refused_with_409(client, engine, demo):
    nodes = {
        "ordered": node("startEvent", "Ordered", event="message", message="order"),
        "end": node("endEvent"),
    }
    version = publish_document(document(nodes, {"f1": flow("ordered", "end")}), key="orders")
    _suspend_version(engine, version.id)
    sent = client.post(
        "/api/messages", json={"name": "order", "correlation_key": "A"}, headers=basic("operator")
    )
    assert (sent.status_code, sent.json["error"]) == (409, "version_suspended")
    assert engine.scalar(select(Instance.id).where(Instance.process_key == "orders")) is None


def test_a_timer_start_of_a_suspended_version_starts_nothing_and_says_why(engine):
    begin = soon()
    version = publish_document(timed(cycle=f"R/{iso(begin)}/PT1S"))
    _suspend_version(engine, version.id)
    assert schedules.run_due(now=begin + timedelta(seconds=1, milliseconds=500)) == 0
    engine.rollback()
    row = engine.scalar(select(Schedule))
    assert "is suspended" in row.last_error
    assert row.next_run_at > begin
    assert engine.scalar(select(Instance.id).where(Instance.started_via == "schedule")) is None
