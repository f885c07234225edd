"""Ad-hoc sub-processes in-process: activities activated when it starts and later by a person,
each any number of times, one at a time when sequential, and the completion condition."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from tests.helpers.documents import document, flow, inside, node, task
from tests.helpers.instances import complete, details, load, open_tasks, start
from tests.helpers.processes import publish_document
from webapp.engine import EngineError, activation, steps
from webapp.models import HistoryEntry, Job, Token
from webapp.services.jobs import commit

FORM = {"fields": [{"key": "done", "label": "Done?", "type": "boolean"}]}


def adhoc_doc(**config: Any) -> dict:
    """start -> ad-hoc `work` {research, draft -> review, note (a script)} -> after -> end."""
    nodes = {
        "start": node("startEvent"),
        "work": node("adHocSubProcess", "Work", **config),
        "research": inside(
            "work", "userTask", "Research", assignee={"type": "role", "value": "approver"}
        ),
        "draft": inside(
            "work",
            "userTask",
            "Draft",
            assignee={"type": "role", "value": "approver"},
            form=FORM,
            saveTo="draft",
        ),
        "review": inside(
            "work", "userTask", "Review", assignee={"type": "role", "value": "approver"}
        ),
        "note": inside("work", "scriptTask", "Note", script="notes = 1"),
        "after": task("After"),
        "end": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "work"),
        "f2": flow("draft", "review"),
        "f3": flow("work", "after"),
        "f4": flow("after", "end"),
    }
    return document(nodes, flows)


def scope_token(session, instance_id: int) -> int:
    session.rollback()
    return session.scalar(
        select(Token.id).where(
            Token.instance_id == instance_id, Token.node_id == "work", Token.status == "waiting"
        )
    )


def activate(session, instance_id: int, node_id: str) -> None:
    commit(
        activation.activate(
            session, instance_id, scope_token(session, instance_id), node_id, actor="alice"
        )
    )


def titles(session, instance_id: int) -> list[str]:
    return [t.title for t in open_tasks(session, instance_id)]


def finish(session, instance_id: int, title: str, values: dict | None = None) -> None:
    [chosen] = [t for t in open_tasks(session, instance_id) if t.title == title][:1]
    complete(session, chosen, values)


def test_the_activities_named_at_the_start_run_and_it_completes_when_they_are_done(engine):
    version = publish_document(adhoc_doc(activate="['research', 'draft']"))
    instance_id = start(engine, version)
    assert titles(engine, instance_id) == ["Research", "Draft"]
    finish(engine, instance_id, "Research")
    finish(engine, instance_id, "Draft", {"done": True})
    assert titles(engine, instance_id) == ["Review"]
    finish(engine, instance_id, "Review")
    assert titles(engine, instance_id) == ["After"]
    activated = details(engine, instance_id, "adhoc_activated", "work")
    assert [d["activity"] for d in activated] == ["research", "draft"]


def test_a_person_activates_an_activity_any_number_of_times(engine):
    version = publish_document(adhoc_doc())
    instance_id = start(engine, version)
    assert titles(engine, instance_id) == []
    assert load(engine, instance_id).status == "running"
    activate(engine, instance_id, "research")
    activate(engine, instance_id, "research")
    assert titles(engine, instance_id) == ["Research", "Research"]
    activate(engine, instance_id, "note")
    finish(engine, instance_id, "Research")
    finish(engine, instance_id, "Research")
    assert titles(engine, instance_id) == ["After"]
    engine.rollback()
    actors = engine.scalars(
        select(HistoryEntry.actor).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "adhoc_activated"
        )
    ).all()
    assert actors == ["alice"] * 3


def test_only_enabled_activities_of_a_running_ad_hoc_sub_process_start(engine):
    version = publish_document(adhoc_doc())
    instance_id = start(engine, version)
    scope = scope_token(engine, instance_id)
    with pytest.raises(EngineError, match="'review' is not one of the activities"):
        activation.activate(engine, instance_id, scope, "review")
    engine.rollback()
    with pytest.raises(EngineError) as missing:
        activation.activate(engine, instance_id, scope + 1000, "research")
    assert missing.value.status == 404
    engine.rollback()


def test_sequential_runs_one_at_a_time_and_the_start_list_in_order(engine):
    version = publish_document(adhoc_doc(ordering="sequential", activate="['draft', 'research']"))
    instance_id = start(engine, version)
    assert titles(engine, instance_id) == ["Draft"]
    with pytest.raises(EngineError, match="one activity at a time"):
        activate(engine, instance_id, "note")
    engine.rollback()
    finish(engine, instance_id, "Draft", {"done": False})
    assert titles(engine, instance_id) == ["Review"]
    finish(engine, instance_id, "Review")
    assert titles(engine, instance_id) == ["Research"]
    finish(engine, instance_id, "Research")
    assert titles(engine, instance_id) == ["After"]


@pytest.mark.parametrize("cancel", [True, False])
def test_the_completion_condition_ends_it_cancelling_what_remains_or_not(engine, cancel):
    config = {"activate": "['research', 'draft']", "completion": "$vars.draft.done == true"}
    if not cancel:
        config["cancelRemaining"] = False
    version = publish_document(adhoc_doc(**config))
    instance_id = start(engine, version)
    finish(engine, instance_id, "Draft", {"done": True})
    if cancel:
        assert titles(engine, instance_id) == ["After"]
        return
    assert titles(engine, instance_id) == ["Research", "Review"]
    with pytest.raises(EngineError, match="completing"):
        activate(engine, instance_id, "note")
    engine.rollback()
    finish(engine, instance_id, "Research")
    finish(engine, instance_id, "Review")
    assert titles(engine, instance_id) == ["After"]


def test_a_false_condition_keeps_it_open_for_more_activations(engine):
    version = publish_document(adhoc_doc(completion="$vars.draft.done == true"))
    instance_id = start(engine, version)
    activate(engine, instance_id, "draft")
    finish(engine, instance_id, "Draft", {"done": False})
    finish(engine, instance_id, "Review")
    assert titles(engine, instance_id) == []
    assert scope_token(engine, instance_id) is not None
    activate(engine, instance_id, "draft")
    finish(engine, instance_id, "Draft", {"done": True})
    assert titles(engine, instance_id) == ["After"]


def test_a_start_list_naming_no_enabled_activity_is_an_incident(engine):
    version = publish_document(adhoc_doc(activate="['review']"))
    instance_id = start(engine, version)
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert (instance.error["node"], instance.error["code"]) == ("work", "adhoc")
    assert "review" in instance.error["message"]


def test_a_failing_completion_condition_is_an_incident_a_retry_reads_again(engine):
    version = publish_document(adhoc_doc(completion="$vars.draft.done > 1"))
    instance_id = start(engine, version)
    activate(engine, instance_id, "draft")
    finish(engine, instance_id, "Draft", {"done": True})
    instance = load(engine, instance_id)
    assert (instance.status, instance.error["node"]) == ("failed", "work")
    assert "completion condition" in instance.error["message"]
    finish(engine, instance_id, "Review")
    commit(steps.retry_instance(engine, instance_id))
    assert load(engine, instance_id).status == "failed", "the condition fails again"
    activated = details(engine, instance_id, "adhoc_activated", "work")
    assert len(activated) == 1, "a retry starts nothing again"


def test_an_interrupting_timer_on_it_ends_what_runs_inside(engine):
    doc = adhoc_doc(activate="['research', 'draft']")
    doc["nodes"]["late"] = node("boundaryEvent", "Late", attachedTo="work", event="timer",
                                duration="PT1H")  # fmt: skip
    doc["nodes"]["chase"] = task("Chase")
    doc["flows"]["f5"] = flow("late", "chase")
    doc["nodes"]["late"]["position"] = {"x": 100, "y": 300}
    doc["nodes"]["chase"]["position"] = {"x": 300, "y": 300}
    version = publish_document(doc)
    instance_id = start(engine, version)
    assert titles(engine, instance_id) == ["Research", "Draft"]
    engine.rollback()
    job = engine.scalar(select(Job).where(Job.instance_id == instance_id, Job.kind == "timer"))
    commit(steps.fire_timer(engine, job.id, instance_id, now=job.due_at))
    assert titles(engine, instance_id) == ["Chase"]
