"""Conditional events in-process: a catch fed by a task's answer or already true, boundary events
(interrupting, and non-interrupting firing once per false-to-true change), event sub-process
starts, a `watch` list, an operator's variable edit, and a failing condition as an incident."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.documents import document, flow, inside, node, task
from tests.helpers.instances import complete, details, history, load, open_tasks, start
from tests.helpers.processes import publish_document
from webapp.engine import steps, suspension, variables
from webapp.models import Job, MessageSubscription
from webapp.models.base import utcnow
from webapp.services.jobs import commit

# Null-safe: before `n` is set the condition is false, not an incident.
OVER_TWO = "$vars.n != null and $vars.n > 2"


def _set(engine, instance_id: int, name: str, value) -> None:
    commit(variables.set_variable(engine, instance_id, name, value, actor="op", now=utcnow()))


def _catch_after_task() -> dict:
    """A task and, in parallel, a catch waiting for the task's answer to say `ok`."""
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "ask": task("Ask", saveTo="answer"),
        "wait": node("conditionalCatch", "Ok?", condition="$vars.answer.ok == true"),
        "join": node("parallelGateway"),
        "end": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "split"),
        "f2": flow("split", "ask"),
        "f3": flow("split", "wait"),
        "f4": flow("ask", "join"),
        "f5": flow("wait", "join"),
        "f6": flow("join", "end"),
    }
    return document(nodes, flows)


def _boundary(interrupting: bool, condition: str = OVER_TWO, **extra) -> dict:
    """A task with a conditional boundary event leading to a service task `alert`."""
    nodes = {
        "start": node("startEvent"),
        "work": task("Work"),
        "end": node("endEvent"),
        "cond": node(
            "boundaryEvent",
            "Over two",
            attachedTo="work",
            event="conditional",
            interrupting=interrupting,
            condition=condition,
            **extra,
        ),
        "alert": node("manualTask", "Alert"),
        "alerted": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "work"),
        "f2": flow("work", "end"),
        "f3": flow("cond", "alert"),
        "f4": flow("alert", "alerted"),
    }
    return document(nodes, flows)


def _entered(engine, instance_id: int, node_id: str) -> int:
    return sum(1 for kind, at in history(engine, instance_id) if (kind, at) == ("entered", node_id))


def test_a_catch_waits_for_a_tasks_answer_and_fires_when_it_makes_the_condition_true(engine):
    version = publish_document(_catch_after_task(), key="catch")
    first = start(engine, version)
    (ask,) = open_tasks(engine, first)
    assert load(engine, first).status == "running"
    complete(engine, ask, {"ok": True})
    assert load(engine, first).status == "completed"
    assert ("condition", "wait") in history(engine, first)
    second = start(engine, version)
    (ask,) = open_tasks(engine, second)
    complete(engine, ask, {"ok": False})
    assert load(engine, second).status == "running"
    assert ("condition", "wait") not in history(engine, second)


def test_a_catch_whose_condition_already_holds_fires_at_once(engine):
    doc = document(
        {
            "start": node("startEvent"),
            "wait": node("conditionalCatch", condition="$input.go"),
            "end": node("endEvent"),
        },
        {"f1": flow("start", "wait"), "f2": flow("wait", "end")},
    )
    version = publish_document(doc, key="ready")
    assert load(engine, start(engine, version, input={"go": True})).status == "completed"
    waiting = start(engine, version, input={"go": False})
    assert load(engine, waiting).status == "running"
    assert (
        engine.scalar(
            select(MessageSubscription.satisfied).where(MessageSubscription.instance_id == waiting)
        )
        is False
    )


def test_an_interrupting_boundary_ends_its_task_when_an_operator_makes_it_true(engine):
    instance_id = start(engine, publish_document(_boundary(True), key="stop"))
    _set(engine, instance_id, "n", 1)
    assert len(open_tasks(engine, instance_id)) == 1
    _set(engine, instance_id, "n", 3)
    assert open_tasks(engine, instance_id) == []
    assert load(engine, instance_id).status == "completed"
    assert _entered(engine, instance_id, "alert") == 1
    assert _entered(engine, instance_id, "end") == 0


def test_a_non_interrupting_boundary_fires_once_per_change_from_false_to_true(engine):
    instance_id = start(engine, publish_document(_boundary(False), key="again"))
    for value in (3, 4, 5, 1, 7):
        _set(engine, instance_id, "n", value)
    assert _entered(engine, instance_id, "alert") == 2
    (work,) = open_tasks(engine, instance_id)
    complete(engine, work)
    assert load(engine, instance_id).status == "completed"
    assert engine.scalar(select(MessageSubscription.id)) is None


def test_a_watch_list_narrows_which_changes_re_evaluate_the_condition(engine):
    doc = _boundary(False, watch="trigger")
    instance_id = start(engine, publish_document(doc, key="watch"))
    _set(engine, instance_id, "n", 5)
    assert _entered(engine, instance_id, "alert") == 0
    _set(engine, instance_id, "trigger", True)
    assert _entered(engine, instance_id, "alert") == 1


def test_a_boundary_true_when_its_host_starts_fires_at_once(engine):
    version = publish_document(_boundary(True, condition="$input.urgent"), key="urgent")
    instance_id = start(engine, version, input={"urgent": True})
    assert load(engine, instance_id).status == "completed"
    assert _entered(engine, instance_id, "alert") == 1


def _event_subprocess(interrupting: bool) -> dict:
    nodes = {
        "start": node("startEvent"),
        "work": task("Work"),
        "end": node("endEvent"),
        "esp": node("eventSubProcess", "On escalation"),
        "esp_start": inside(
            "esp",
            "startEvent",
            event="conditional",
            interrupting=interrupting,
            condition="$vars.level == 'high'",
        ),
        "esp_task": inside("esp", "manualTask"),
        "esp_end": inside("esp", "endEvent"),
    }
    flows = {
        "f1": flow("start", "work"),
        "f2": flow("work", "end"),
        "e1": flow("esp_start", "esp_task"),
        "e2": flow("esp_task", "esp_end"),
    }
    return document(nodes, flows)


def test_an_interrupting_event_subprocess_start_ends_the_rest_of_its_scope(engine):
    instance_id = start(engine, publish_document(_event_subprocess(True), key="esp"))
    _set(engine, instance_id, "level", "low")
    assert len(open_tasks(engine, instance_id)) == 1
    _set(engine, instance_id, "level", "high")
    assert open_tasks(engine, instance_id) == []
    assert load(engine, instance_id).status == "completed"
    assert _entered(engine, instance_id, "esp_task") == 1


def test_a_non_interrupting_event_subprocess_start_fires_again_after_false(engine):
    instance_id = start(engine, publish_document(_event_subprocess(False), key="esp-again"))
    for value in ("high", "high", "low", "high"):
        _set(engine, instance_id, "level", value)
    assert _entered(engine, instance_id, "esp_task") == 2
    assert len(open_tasks(engine, instance_id)) == 1


def test_a_failing_condition_is_an_incident_naming_the_event(engine):
    doc = _boundary(True, condition="$vars.n.deep > 2")
    instance_id = start(engine, publish_document(doc, key="bad"))
    _set(engine, instance_id, "n", 3)
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert "condition of 'Over two'" in instance.error["message"]


def test_a_variable_set_while_suspended_fires_the_condition_on_resume(engine):
    instance_id = start(engine, publish_document(_boundary(True), key="held"))
    commit(suspension.suspend_instance(engine, instance_id, reason="check", actor=None))
    _set(engine, instance_id, "n", 3)
    assert len(open_tasks(engine, instance_id)) == 1
    assert _entered(engine, instance_id, "alert") == 0
    commit(suspension.resume_instance(engine, instance_id, reason="checked"))
    assert load(engine, instance_id).status == "completed"
    assert _entered(engine, instance_id, "alert") == 1


def test_after_an_event_based_gateway_a_condition_competes_with_a_timer(engine):
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "ask": task("Ask", saveTo="answer"),
        "ask_end": node("endEvent"),
        "gw": node("eventBasedGateway", "First of"),
        "ok": node("conditionalCatch", "Approved", condition="$vars.answer.ok == true"),
        "late": node("timerCatch", "Late", duration="PT1H"),
        "ok_end": node("endEvent"),
        "late_end": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "split"),
        "f2": flow("split", "ask"),
        "f3": flow("ask", "ask_end"),
        "f4": flow("split", "gw"),
        "g1": flow("gw", "ok"),
        "g2": flow("gw", "late"),
        "f5": flow("ok", "ok_end"),
        "f6": flow("late", "late_end"),
    }
    instance_id = start(engine, publish_document(document(nodes, flows), key="race"))
    (ask,) = open_tasks(engine, instance_id)
    complete(engine, ask, {"ok": True})
    assert load(engine, instance_id).status == "completed"
    assert _entered(engine, instance_id, "ok_end") == 1
    assert _entered(engine, instance_id, "late_end") == 0
    [won] = details(engine, instance_id, "event_won", "gw")
    assert (won["winner"], won["event"]) == ("ok", "conditional")
    assert engine.scalar(select(Job.status).where(Job.instance_id == instance_id)) == "cancelled"


def test_a_message_payload_and_a_script_change_the_data_a_condition_reads(engine):
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "paid": node("messageCatch", "Paid", message="paid", correlationKey="'k'", saveTo="pay"),
        "double": node("scriptTask", "Double", script="total = $vars.pay.amount * 2"),
        "paid_end": node("endEvent"),
        "big": node(
            "conditionalCatch", "Big", condition="$vars.total != null and $vars.total > 10"
        ),
        "big_end": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "split"),
        "f2": flow("split", "paid"),
        "f3": flow("paid", "double"),
        "f4": flow("double", "paid_end"),
        "f5": flow("split", "big"),
        "f6": flow("big", "big_end"),
    }
    version = publish_document(document(nodes, flows), key="paid")
    small = start(engine, version)
    commit(steps.deliver_message(engine, small, "paid", "k", {"amount": 3}))
    assert load(engine, small).status == "running"
    assert _entered(engine, small, "big_end") == 0
    large = start(engine, version)
    commit(steps.deliver_message(engine, large, "paid", "k", {"amount": 30}))
    assert load(engine, large).status == "completed"
    assert ("condition", "big") in history(engine, large)
