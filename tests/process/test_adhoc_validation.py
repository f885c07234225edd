"""Validation of ad-hoc sub-processes: activities without incoming flows are its fragments (no
start event, no "never runs" error, no implicit-end warning), what one fragment saves another
may read (a warning: they run in any order), and the settings' values."""

from __future__ import annotations

from tests.helpers.documents import document, flow, node
from tests.helpers.validation import found
from webapp.process.validation import validate

FORM = {"fields": [{"key": "done", "label": "Done?", "type": "boolean"}]}
ROLE = {"type": "role", "value": "approver"}


def _doc(*members: tuple[str, dict], **config) -> dict:
    nodes = {"start": node("startEvent"), "work": node("adHocSubProcess", "Work", **config)}
    nodes.update({node_id: {**spec, "parent": "work"} for node_id, spec in members})
    nodes["end"] = node("endEvent")
    return document(nodes, {"f1": flow("start", "work"), "f2": flow("work", "end")})


def test_fragments_need_no_start_event_nor_incoming_flows():
    doc = _doc(("a", node("userTask", "A", assignee=ROLE)), ("b", node("manualTask", "B")))
    assert found(validate(doc)) == set()


def test_a_start_event_inside_or_nothing_to_start_is_refused():
    doc = _doc(("s", node("startEvent")), ("a", node("userTask", "A", assignee=ROLE)))
    doc["flows"]["inner"] = flow("s", "a")
    problems = found(validate(doc))
    assert ("adhoc.start", "s") in problems
    assert ("adhoc.empty", "work") in problems


def test_one_fragment_reads_what_another_saves_with_a_warning():
    doc = _doc(
        ("draft", node("userTask", "Draft", assignee=ROLE, form=FORM, saveTo="draft")),
        ("check", node("scriptTask", "Check", script="ok = $vars.draft.done")),
    )
    [problem] = [p for p in validate(doc) if p.element_id == "check"]
    assert (problem.code, problem.severity) == ("expression.reference", "warning")
    assert "any order" in problem.message
    unknown = _doc(("check", node("scriptTask", "Check", script="ok = $vars.nothing")))
    [error] = [p for p in validate(unknown) if p.element_id == "check"]
    assert (error.code, error.severity) == ("expression.reference", "error")


def test_the_settings_must_have_known_values():
    doc = _doc(("a", node("userTask", "A", assignee=ROLE)), ordering="random", activate="[")
    problems = found(validate(doc))
    assert ("config.invalid", "work") in problems
    assert ("expression.syntax", "work") in problems
