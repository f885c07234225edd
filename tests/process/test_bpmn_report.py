"""The import report's pure parts: names user tasks are given to, renaming them, and sorting a
draft's errors by the edit they need."""

from __future__ import annotations

import copy

from webapp.process.bpmn import import_bpmn, report
from webapp.process.validation import Problem

DOC = {
    "nodes": {
        "a": {"kind": "userTask", "config": {"assignee": {"type": "role", "value": "acct"}}},
        "b": {
            "kind": "userTask",
            "config": {
                "assignee": {"type": "user", "value": "demo"},
                "candidates": {"roles": ["acct", "audit"], "users": ["demo", "kermit"]},
            },
        },
        "c": {"kind": "serviceTask", "config": {"assignee": {"type": "role", "value": "acct"}}},
    }
}


def test_names_are_found_in_assignees_and_candidates_of_user_tasks_only() -> None:
    assert report.assignees(DOC, "role") == {"acct": ["a", "b"], "audit": ["b"]}
    assert report.assignees(DOC, "user") == {"demo": ["b"], "kermit": ["b"]}


def test_renaming_and_removing_names() -> None:
    doc = report.reassign(copy.deepcopy(DOC), "role", {"acct": "clerk", "audit": "clerk"})
    assert doc["nodes"]["a"]["config"]["assignee"]["value"] == "clerk"
    assert doc["nodes"]["b"]["config"]["candidates"]["roles"] == ["clerk"]
    assert doc["nodes"]["c"] == DOC["nodes"]["c"], "only user tasks"
    doc = report.reassign(doc, "user", {"demo": None, "kermit": None})
    assert doc["nodes"]["b"]["config"] == {"candidates": {"roles": ["clerk"]}}
    doc = report.reassign(doc, "role", {"clerk": None})
    assert doc["nodes"]["b"]["config"] == {} and doc["nodes"]["a"]["config"] == {}


def test_errors_are_sorted_by_the_edit_they_need() -> None:
    problems = [
        Problem("tool.unknown", "error", "t", "tool"),
        Problem("task.role_unknown", "error", "u", "group"),
        Problem("script.language", "error", "s", "script"),
        Problem("gateway.condition_missing", "error", "g", "other"),
        Problem("decision.unpublished", "error", "d", "decision"),
        Problem("task.user_unknown", "warning", "u", "not an error"),
    ]
    needs = report.needs_a_person(problems)
    assert {kind: [p.element_id for p in found] for kind, found in needs.items()} == {
        "tool": ["t"],
        "script": ["s"],
        "group": ["u"],
        "decision": ["d"],
        "other": ["g"],
    }


def test_summary_of_an_import() -> None:
    xml = """<?xml version="1.0"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="x">
  <process id="p" isExecutable="true">
    <laneSet id="ls"><lane id="l1"/></laneSet>
    <startEvent id="s"/><sequenceFlow id="f1" sourceRef="s" targetRef="u"/>
    <userTask id="u" camunda:candidateGroups="acct,audit" camunda:formKey="embedded:x"/>
    <sequenceFlow id="f2" sourceRef="u" targetRef="e"/><endEvent id="e"/>
    <textAnnotation id="n"><text>note</text></textAnnotation>
  </process>
</definitions>"""
    summary = report.summarize(import_bpmn(xml))
    assert {"element": "u", "text": "assigned to role acct"} in summary["mapped"]
    assert {"element": "u", "text": "also offered to roles audit"} in summary["mapped"]
    assert {"what": "lane set", "count": 1} in summary["kept"]
    assert {"what": "text annotation", "count": 1} in summary["kept"]
    assert summary["left_out"] == []


def test_counts_fit_their_number_and_elements_are_named_for_people():
    assert [report.plural(1, "message"), report.plural(2, "message")] == [
        "1 message",
        "2 messages",
    ]
    doc = {
        "nodes": {
            "s": {"kind": "startEvent", "title": ""},
            "t": {"kind": "userTask", "title": "Check"},
            "g": {"kind": "exclusiveGateway", "title": ""},
            "e": {"kind": "endEvent", "title": ""},
        },
        "flows": {
            "f1": {"source": "s", "target": "t"},
            "f2": {"source": "t", "target": "g"},
            "f3": {"source": "g", "target": "e", "title": "No"},
        },
    }
    names = report.element_names(doc)
    assert names["s"] == "Start event before 'Check'"
    assert names["g"] == "Exclusive gateway after 'Check'"
    assert names["e"] == "End event after exclusive gateway"
    assert names["f2"] == "Check → Exclusive gateway after 'Check'"
    assert (
        names["f3"] == "'No' (Exclusive gateway after 'Check' → End event after exclusive gateway)"
    )
