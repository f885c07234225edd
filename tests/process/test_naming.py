"""Problems and labels name elements as a person sees them: by title, else by kind and place,
not by the ids a modeller never typed (Activity_13vyd1g)."""

from __future__ import annotations

import re
from typing import Any

from tests.helpers.validation import node, user
from webapp.process.naming import Namer, describe
from webapp.process.validation import validate


def flow(source: str, target: str, **extra: Any) -> dict[str, Any]:
    return {"source": source, "target": target, **extra}


def offers() -> dict[str, Any]:
    """A sub-process 'Review offers' with untitled start and end events, and an untitled timer
    boundary event on a titled task, all with generated-looking ids."""
    return {
        "format_version": 1,
        "key": "offers",
        "nodes": {
            "StartEvent_0x1a": node("startEvent"),
            "Activity_13vyd1g": user("Review"),
            "Activity_0sub9k": node("subProcess", "Review offers"),
            "Event_0inner1": {**node("startEvent"), "parent": "Activity_0sub9k"},
            "Activity_0offer": {**user("Read offer"), "parent": "Activity_0sub9k"},
            "Event_0innerend": {**node("endEvent"), "parent": "Activity_0sub9k"},
            "Event_1timer7": node(
                "boundaryEvent", attachedTo="Activity_13vyd1g", event="timer", duration="PT1H"
            ),
            "Event_0late": node("endEvent", "Late"),
            "Event_0done": node("endEvent", "Done"),
        },
        "flows": {
            "Flow_1": flow("StartEvent_0x1a", "Activity_13vyd1g"),
            "Flow_2": flow("Activity_13vyd1g", "Activity_0sub9k"),
            "Flow_3": flow("Event_0inner1", "Activity_0offer"),
            "Flow_4": flow("Activity_0offer", "Event_0innerend"),
            "Flow_5": flow("Activity_0sub9k", "Event_0done"),
            "Flow_6": flow("Event_1timer7", "Event_0late"),
        },
    }


GENERATED = re.compile(r"\b(Activity|Event|StartEvent|Flow)_\w+")


def test_names_use_the_title_else_kind_and_place() -> None:
    doc = offers()
    namer = Namer(doc["nodes"], doc["flows"])
    assert namer.node("Activity_13vyd1g") == "User task 'Review'"
    assert namer.node("Event_0inner1") == "the start event of 'Review offers'"
    assert namer.node("Event_0innerend") == "the end event of 'Review offers'"
    assert namer.node("Event_1timer7") == "the timer boundary event on 'Review'"
    assert namer.node("StartEvent_0x1a") == "the start event before 'Review'"
    assert namer.flow("Flow_2") == "the flow from 'Review' to 'Review offers'"
    assert describe(doc, "Flow_6") == "the flow from the timer boundary event on 'Review' to 'Late'"


def test_no_problem_message_shows_a_generated_id() -> None:
    doc = offers()
    inner = doc["nodes"]["Event_0inner1"]
    doc["nodes"]["Event_0inner2"] = {**inner, "title": "Restart", "config": {}}
    doc["flows"]["Flow_7"] = flow("Event_0inner2", "Activity_0offer")
    doc["nodes"]["Event_1timer7"]["config"].pop("duration")
    doc["nodes"]["Activity_13vyd1g"]["config"]["saveTo"] = "review"
    doc["nodes"]["Event_0done"]["kind"] = "robotEvent"
    problems = validate(doc)
    assert {p.code for p in problems} >= {"start.count", "config.missing", "kind.unknown"}
    for problem in problems:
        assert not GENERATED.search(problem.message), problem
        assert problem.message[:1].isupper(), problem
    missing = next(p for p in problems if p.code == "config.missing")
    assert missing.message.startswith("The timer boundary event on 'Review' needs a duration")
    assert missing.element_id == "Event_1timer7", "the id stays as the element to highlight"


def test_labels_give_titles_as_they_are_and_describe_untitled_nodes() -> None:
    nodes = {
        "start": {"kind": "startEvent", "title": ""},
        "check": {"kind": "scriptTask", "title": "Check  stock"},
        "end": {"kind": "endEvent"},
    }
    flows = {
        "f1": {"source": "start", "target": "check"},
        "f2": {"source": "check", "target": "end"},
    }
    assert Namer(nodes, flows).labels() == {
        "start": "the start event before 'Check stock'",
        "check": "Check stock",
        "end": "the end event after 'Check stock'",
    }
