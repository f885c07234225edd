"""Standard loops in-process: test after (at least one run) and before (maybe none), the
maximum, `$loop.index`, a looped user task and sub-process, and a failing loop condition."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.documents import chain, document, flow, inside, node, task
from tests.helpers.instances import complete, history, load, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.models import Instance


def _count(engine, instance_id: int, node_id: str) -> int:
    return sum(1 for entry in history(engine, instance_id) if entry == ("entered", node_id))


def _looped_script(**loop) -> dict:
    """A script task that appends `$loop.index` to `$vars.seen`, looped with `loop`."""
    script = node("scriptTask", "Count", script="seen = $vars.seen + [$loop.index]", loop=loop)
    return chain(("init", node("scriptTask", script="seen = []")), ("count", script))


def test_a_loop_tested_after_runs_once_even_when_the_condition_is_false(engine):
    version = publish_document(_looped_script(condition="$loop.index < 3"), key="after")
    instance = load(engine, start(engine, version))
    assert instance.status == "completed"
    assert instance.vars["seen"] == [0, 1, 2]
    never = publish_document(_looped_script(condition="false"), key="after-once")
    assert load(engine, start(engine, never)).vars["seen"] == [0]


def test_a_loop_tested_before_may_not_run_at_all(engine):
    version = publish_document(
        _looped_script(condition="$input.go and $loop.index < 2", testBefore=True), key="before"
    )
    ran = load(engine, start(engine, version, input={"go": True}))
    assert ran.vars["seen"] == [0, 1]
    skipped_id = start(engine, version, input={"go": False})
    skipped = load(engine, skipped_id)
    assert skipped.status == "completed" and skipped.vars["seen"] == []
    assert _count(engine, skipped_id, "end") == 1


def test_the_maximum_stops_a_loop_whose_condition_still_holds(engine):
    version = publish_document(_looped_script(condition="true", maximum=4), key="max")
    assert load(engine, start(engine, version)).vars["seen"] == [0, 1, 2, 3]


def test_a_looped_user_task_asks_again_until_the_answer_says_done(engine):
    doc = chain(("ask", task("Ask", saveTo="answer", loop={"condition": "not $vars.answer.done"})))
    instance_id = start(engine, publish_document(doc, key="ask"))
    for done in (False, False, True):
        (ask,) = open_tasks(engine, instance_id)
        complete(engine, ask, {"done": done})
    assert load(engine, instance_id).status == "completed"
    assert _count(engine, instance_id, "ask") == 3
    assert ("loop", "ask") in history(engine, instance_id)


def test_a_looped_sub_process_runs_its_inside_again_with_the_loop_index(engine):
    nodes = {
        "start": node("startEvent"),
        "init": node("scriptTask", script="rounds = []"),
        "sub": node("subProcess", "Round", loop={"condition": "$loop.index < 2"}),
        "s_start": inside("sub", "startEvent"),
        "s_work": inside("sub", "scriptTask", script="rounds = $vars.rounds + [$loop.index]"),
        "s_end": inside("sub", "endEvent"),
        "end": node("endEvent"),
    }
    flows = {
        "f0": flow("start", "init"),
        "f1": flow("init", "sub"),
        "f2": flow("sub", "end"),
        "s1": flow("s_start", "s_work"),
        "s2": flow("s_work", "s_end"),
    }
    instance = load(engine, start(engine, publish_document(document(nodes, flows), key="sub")))
    assert instance.status == "completed"
    assert instance.vars["rounds"] == [0, 1]


def test_a_failing_loop_condition_is_an_incident_naming_the_activity(engine):
    version = publish_document(_looped_script(condition="$vars.seen.x > 1"), key="bad")
    instance = load(engine, start(engine, version))
    assert instance.status == "failed"
    assert "loop condition of 'Count'" in instance.error["message"]


def test_a_looped_call_activity_calls_its_process_again_while_the_condition_holds(engine, demo):
    child = document(
        {
            "start": node("startEvent"),
            "t": task("Answer", saveTo="answer"),
            "end": node("endEvent"),
        },
        {"c1": flow("start", "t"), "c2": flow("t", "end")},
    )
    publish_document(child, key="child")
    caller = chain(
        (
            "call",
            node(
                "callActivity",
                "Ask the child",
                process="child",
                saveTo="result",
                loop={"condition": "not $vars.result.answer.done", "maximum": 5},
            ),
        )
    )
    parent_id = start(engine, publish_document(caller, key="parent"))
    children = []
    for done in (False, True):
        drain(engine)
        engine.rollback()
        called = engine.scalars(
            select(Instance).where(Instance.parent_id == parent_id).order_by(Instance.id)
        ).all()
        children = [c.id for c in called]
        (ask,) = open_tasks(engine, children[-1])
        complete(engine, ask, {"done": done})
    drain(engine)
    assert len(children) == 2
    assert load(engine, parent_id).status == "completed"
    assert _count(engine, parent_id, "call") == 2
