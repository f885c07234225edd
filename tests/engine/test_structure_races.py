"""Races in structured processes resolve to exactly one winner, in-process (many trials, threads
meeting at a barrier) and with real worker processes, including SIGKILLed ones."""

from __future__ import annotations

import threading
from collections.abc import Callable

from sqlalchemy import select, update

from tests.engine import tools_for_tests
from tests.helpers.documents import CLERK, document, node, wire
from tests.helpers.instances import history, load, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import steps
from webapp.engine.calls import Outcome
from webapp.extensions import db
from webapp.models import Instance, Job, Task
from webapp.models.base import utcnow
from webapp.services.jobs import commit

TRIALS = 12


def _race(app, *actions: Callable[[], object]) -> list[Exception]:
    """Run each action in its own thread and app context, all released at once."""
    gate = threading.Barrier(len(actions))
    errors: list[Exception] = []

    def run(action: Callable[[], object]) -> None:
        with app.app_context():
            try:
                gate.wait()
                result = action()
                if result is not None:
                    commit(result)
            except Exception as error:  # collected and checked by the caller
                db.session.rollback()
                errors.append(error)
            finally:
                db.session.remove()

    threads = [threading.Thread(target=run, args=(action,)) for action in actions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


def _paths(engine, instance_id: int) -> list[str]:
    return [n for k, n in history(engine, instance_id) if k == "entered" and n in ("end", "late")]


def test_a_boundary_timer_and_the_task_completion_have_one_winner(app, engine, demo):
    nodes = {
        "start": node("startEvent"),
        "task": node("userTask", assignee=CLERK),
        "timeout": node("boundaryEvent", attachedTo="task", event="timer", duration="PT1H"),
        "end": node("endEvent"),
        "late": node("endEvent"),
    }
    version = publish_document(
        document(nodes, {**wire("start", "task", "end"), **wire("timeout", "late")})
    )
    winners = set()
    for _ in range(TRIALS):
        instance_id = start(engine, version)
        [task] = open_tasks(engine, instance_id)
        job_id = engine.scalar(select(Job.id).where(Job.instance_id == instance_id))
        engine.execute(update(Job).where(Job.id == job_id).values(due_at=utcnow()))
        engine.commit()
        errors = _race(
            app,
            lambda i=instance_id, j=job_id: steps.fire_timer(db.session, j, i),
            lambda t=task.id: steps.complete_task(db.session, t, {}, actor=None),
        )
        assert all(getattr(e, "code", None) == "task_closed" for e in errors), errors
        paths = _paths(engine, instance_id)
        assert len(paths) == 1, paths
        winners.add(paths[0])
        instance = load(engine, instance_id)
        assert instance.status == "completed"
        status = engine.get(Task, task.id).status
        assert status == ("completed" if paths == ["end"] else "cancelled")
        assert engine.get(Job, job_id).status in ("done", "cancelled")
    assert winners <= {"end", "late"}


def test_a_message_boundary_and_the_tool_result_have_one_winner(app, engine, test_tools):
    nodes = {
        "start": node("startEvent"),
        "call": node("serviceTask", tool="test.business", inputs={}),
        "stop": node(
            "boundaryEvent",
            attachedTo="call",
            event="message",
            message="stop",
            correlationKey="$input.key",
        ),
        "end": node("endEvent"),
        "late": node("endEvent"),
    }
    version = publish_document(
        document(nodes, {**wire("start", "call", "end"), **wire("stop", "late")})
    )
    for trial in range(TRIALS):
        key = f"k{trial}"
        instance_id = start(engine, version, input={"key": key})
        job_id = engine.scalar(
            select(Job.id).where(Job.instance_id == instance_id, Job.kind == "tool")
        )
        call = steps.claim_tool_job(engine, job_id, lease_grace=5)
        engine.commit()
        errors = _race(
            app,
            lambda j=job_id, i=instance_id, a=call.attempt: steps.apply_tool_outcome(
                db.session, j, i, Outcome(True, {"ok": True}), attempt=a
            ),
            lambda i=instance_id, k=key: steps.deliver_message(db.session, i, "stop", k, {}),
        )
        assert errors == []
        assert len(_paths(engine, instance_id)) == 1
        assert load(engine, instance_id).status == "completed"


def test_two_instances_meeting_the_completion_condition_at_once_complete_the_body_once(
    app, engine, test_tools
):
    work = node(
        "serviceTask",
        tool="test.business",
        inputs={},
        saveTo="out",
        multiInstance={"collection": "[1, 2]", "completion": "$loop.completed >= 1"},
    )
    nodes = {"start": node("startEvent"), "work": work, "end": node("endEvent")}
    version = publish_document(document(nodes, wire("start", "work", "end")))
    for _ in range(TRIALS):
        instance_id = start(engine, version)
        jobs = engine.scalars(select(Job.id).where(Job.instance_id == instance_id)).all()
        calls = [steps.claim_tool_job(engine, job_id, lease_grace=5) for job_id in jobs]
        engine.commit()
        errors = _race(
            app,
            *[
                lambda j=job_id, i=instance_id, a=c.attempt: steps.apply_tool_outcome(
                    db.session, j, i, Outcome(True, {"ok": True}), attempt=a
                )
                for job_id, c in zip(jobs, calls, strict=True)
            ],
        )
        assert errors == []
        taken = history(engine, instance_id)
        assert taken.count(("instance_completed", "work")) == 1
        assert taken.count(("entered", "end")) == 1
        instance = load(engine, instance_id)
        assert instance.status == "completed"
        assert sorted(instance.vars["out"], key=lambda v: v is None) == [{"ok": True}, None]


# --- real workers -----------------------------------------------------------------------------


def test_parallel_instances_on_two_workers_meet_the_completion_condition_once(
    engine, workers, test_tools
):
    barrier = node(
        "serviceTask",
        tool="test.barrier",
        inputs={"name": "$input.id", "parties": "2"},
        multiInstance={"collection": "[1, 2]", "completion": "$loop.completed >= 1"},
    )
    nodes = {"start": node("startEvent"), "work": barrier, "end": node("endEvent")}
    version = publish_document(document(nodes, wire("start", "work", "end")))
    instances = [start(engine, version, input={"id": f"mi-{n}"}) for n in range(4)]
    workers.start(2)
    for instance_id in instances:
        wait_for(lambda i=instance_id: load(engine, i).status == "completed", what="completion")
        taken = history(engine, instance_id)
        assert taken.count(("instance_completed", "work")) == 1
        assert taken.count(("entered", "end")) == 1


def test_a_worker_killed_inside_a_multi_instance_tool_loses_and_doubles_nothing(
    engine, workers, test_tools, redis_client
):
    work = node(
        "serviceTask",
        tool="test.record",
        timeout=2,
        saveTo="out",
        inputs={"name": "'mi-kill'", "block_first": "30", "n": "$item"},
        multiInstance={"collection": "[10, 20, 30]"},
    )
    nodes = {"start": node("startEvent"), "work": work, "end": node("endEvent")}
    instance_id = start(engine, publish_document(document(nodes, wire("start", "work", "end"))))
    first = workers.start(1)[0]
    wait_for(lambda: redis_client.llen("fdtest:started:mi-kill") >= 1, what="a tool call")
    workers.kill(first)
    workers.start(1)
    wait_for(lambda: load(engine, instance_id).status == "completed", what="recovery", timeout=40)
    seen = tools_for_tests.seen(redis_client, "mi-kill")
    keys = {entry["inputs"]["n"]: entry["key"] for entry in seen}
    assert sorted(keys) == [10, 20, 30]
    assert len(set(keys.values())) == 3, "each instance has its own idempotency key"
    taken = history(engine, instance_id)
    assert taken.count(("instance_completed", "work")) == 3
    assert taken.count(("entered", "end")) == 1
    assert len(load(engine, instance_id).vars["out"]) == 3


def test_a_worker_killed_inside_a_called_child_still_resumes_the_parent_once(
    engine, workers, test_tools, redis_client
):
    child = {
        "start": node("startEvent"),
        "work": node(
            "serviceTask",
            tool="test.record",
            timeout=2,
            saveTo="out",
            inputs={"name": "'call-kill'", "block_first": "30"},
        ),
        "end": node("endEvent"),
    }
    publish_document(document(child, wire("start", "work", "end")), key="child")
    parent = {
        "start": node("startEvent"),
        "call": node("callActivity", process="child", saveTo="child"),
        "end": node("endEvent"),
    }
    parent_id = start(
        engine, publish_document(document(parent, wire("start", "call", "end")), key="parent")
    )
    first = workers.start(1)[0]
    wait_for(lambda: redis_client.llen("fdtest:started:call-kill") >= 1, what="the child's tool")
    workers.kill(first)
    workers.start(1)
    wait_for(lambda: load(engine, parent_id).status == "completed", what="resume", timeout=40)
    engine.rollback()
    children = engine.scalars(select(Instance).where(Instance.parent_id == parent_id)).all()
    assert [c.status for c in children] == ["completed"]
    assert history(engine, parent_id).count(("child_ended", "call")) == 1
    assert load(engine, parent_id).vars["child"] == {"out": {"calls": 2}}


def test_a_repeated_call_delivery_starts_one_child(engine, demo):
    child = {
        "start": node("startEvent"),
        "t": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
    }
    publish_document(document(child, wire("start", "t", "end")), key="child")
    parent = {
        "start": node("startEvent"),
        "call": node("callActivity", process="child"),
        "end": node("endEvent"),
    }
    parent_id = start(
        engine, publish_document(document(parent, wire("start", "call", "end")), key="parent")
    )
    job_id = engine.scalar(select(Job.id).where(Job.instance_id == parent_id, Job.kind == "call"))
    engine.rollback()
    for _ in range(3):
        result = steps.start_called(engine, job_id)
        if result is not None:
            commit(result)
        else:
            engine.commit()
    engine.rollback()
    assert len(engine.scalars(select(Instance).where(Instance.parent_id == parent_id)).all()) == 1


def test_a_structured_process_runs_to_the_end_on_real_workers(engine, workers, test_tools):
    """Workers fire a non-interrupting boundary timer on a sub-process whose multi-instance tool
    runs, start a called child whose error the call activity catches, and finish."""
    child = {
        "start": node("startEvent"),
        "work": node("serviceTask", tool="test.business", inputs={}),
        "fail": node("endEvent", event="error", code="NOPE"),
    }
    publish_document(document(child, wire("start", "work", "fail")), key="child")
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        "s_start": {**node("startEvent"), "parent": "sub"},
        "s_work": {
            **node(
                "serviceTask",
                tool="test.record",
                inputs={"name": "$input.id", "sleep": "0.4"},
                multiInstance={"collection": "[1, 2, 3]", "sequential": True},
            ),
            "parent": "sub",
        },
        "s_end": {**node("endEvent"), "parent": "sub"},
        "tick": node(
            "boundaryEvent", attachedTo="sub", event="timer", duration="PT0.5S", interrupting=False
        ),
        "note": node("serviceTask", tool="noop", inputs={}),
        "note_end": node("endEvent"),
        "call": node("callActivity", process="child"),
        "caught": node("boundaryEvent", attachedTo="call", event="error", code="NOPE"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "sub", "call", "end"), **wire("s_start", "s_work", "s_end")}
    flows.update({**wire("tick", "note", "note_end"), **wire("caught", "end")})
    version = publish_document(document(nodes, flows), key="parent")
    instances = [start(engine, version, input={"id": f"real-{n}"}) for n in range(2)]
    workers.start(2)
    for instance_id in instances:
        wait_for(lambda i=instance_id: load(engine, i).status == "completed", what="completion")
        taken = history(engine, instance_id)
        assert taken.count(("instance_completed", "s_work")) == 3
        assert taken.count(("entered", "note")) == 1
        assert ("boundary", "caught") in taken
        assert taken.count(("entered", "end")) == 1
