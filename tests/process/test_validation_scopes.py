"""Validation of structured processes: scopes, boundary events, codes, call activities and
multi-instance; each rule fails on a broken example (code + element) and passes on a fixed one."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.helpers.bpmn import structured_document
from tests.helpers.validation import TOOLS, found, node, only, user
from webapp.process.catalog import KnownProcesses
from webapp.process.validation import Problem, has_errors, validate


def flow(source: str, target: str, **extra: Any) -> dict[str, Any]:
    return {"source": source, "target": target, **extra}


def scoped() -> dict[str, Any]:
    """start → sub(inner start → inner task → inner end) → after → end; a boundary timer on the
    sub-process leads to a second end."""
    return {
        "format_version": 1,
        "key": "main",
        "nodes": {
            "start": node("startEvent"),
            "before": user("Before", saveTo="before"),
            "sub": node("subProcess", "Sub"),
            "i_start": {**node("startEvent"), "parent": "sub"},
            "i_task": {**user("Inner", saveTo="inner"), "parent": "sub"},
            "i_end": {**node("endEvent"), "parent": "sub"},
            "late": node("boundaryEvent", "Late", attachedTo="sub", event="timer", duration="P1D"),
            "after": user("After"),
            "end": node("endEvent"),
            "late_end": node("endEvent"),
        },
        "flows": {
            "f1": flow("start", "before"),
            "f2": flow("before", "sub"),
            "i1": flow("i_start", "i_task"),
            "i2": flow("i_task", "i_end"),
            "f3": flow("sub", "after"),
            "f4": flow("after", "end"),
            "f5": flow("late", "late_end"),
        },
    }


def codes(problems: list[Problem]) -> set[str]:
    return {p.code for p in problems}


def test_scoped_process_is_valid() -> None:
    assert validate(scoped()) == []


def test_structured_example_has_only_the_expected_findings() -> None:
    doc = structured_document()
    doc["nodes"]["ot_end"]["config"]["code"] = "LATE"
    problems = validate(doc, TOOLS)
    assert [(p.severity, p.code, p.element_id) for p in problems] == [
        ("info", "error.never_thrown", "oe_start")
    ]


def test_flow_between_scopes_is_refused() -> None:
    doc = scoped()
    doc["flows"]["i2"]["target"] = "end"
    problems = validate(doc)
    assert ("flow.scope", "i2") in found(problems)
    assert has_errors(problems)


def test_flows_into_boundary_events_and_event_sub_processes_are_refused() -> None:
    doc = scoped()
    doc["nodes"]["esp"] = node("eventSubProcess")
    doc["nodes"]["esp_start"] = {**node("startEvent", event="message", message="m",
                                        correlationKey="$input.id"), "parent": "esp"}  # fmt: skip
    doc["nodes"]["esp_end"] = {**node("endEvent"), "parent": "esp"}
    doc["flows"]["e1"] = flow("esp_start", "esp_end")
    assert validate(doc) == []
    doc["flows"]["x1"] = flow("before", "late")
    doc["flows"]["x2"] = flow("after", "esp")
    assert {("node.incoming_forbidden", "late"), ("node.incoming_forbidden", "esp")} <= found(
        validate(doc)
    )


def test_a_sub_process_needs_one_plain_start_and_an_end() -> None:
    doc = scoped()
    doc["nodes"]["i_start"]["config"]["event"] = "timer"
    problems = validate(doc)
    assert ("start.count", "sub") in found(problems)
    assert ("config.invalid", "i_start") in found(problems)  # only event sub-processes
    doc = scoped()
    doc["nodes"]["i_start2"] = {**node("startEvent"), "parent": "sub"}
    doc["flows"]["i3"] = flow("i_start2", "i_task")
    assert ("start.count", "i_start2") in found(validate(doc))
    doc = scoped()
    del doc["nodes"]["i_end"], doc["flows"]["i2"]
    doc["flows"]["i2"] = flow("i_task", "i_task")
    problems = validate(doc)
    assert ("end.missing", "sub") in found(problems)
    assert ("start.count", None) not in found(problems)


def test_an_event_sub_process_needs_one_start_with_an_event() -> None:
    doc = scoped()
    doc["nodes"]["esp"] = node("eventSubProcess")
    doc["nodes"]["esp_start"] = {**node("startEvent"), "parent": "esp"}
    doc["nodes"]["esp_end"] = {**node("endEvent"), "parent": "esp"}
    doc["flows"]["e1"] = flow("esp_start", "esp_end")
    assert ("config.missing", "esp_start") in found(validate(doc))
    doc["nodes"]["esp_start"]["config"] = {"event": "link"}
    assert ("config.invalid", "esp_start") in found(validate(doc))
    doc["nodes"]["esp_start"]["config"] = {"event": "conditional"}
    assert ("config.missing", "esp_start") in found(validate(doc))
    doc["nodes"]["esp_start"]["config"] = {"event": "conditional", "condition": "$input.x > 1"}
    assert validate(doc) == []
    doc["nodes"]["esp_start"]["config"] = {"event": "signal"}
    assert ("config.missing", "esp_start") in found(validate(doc))
    doc["nodes"]["esp_start"]["config"] = {"event": "signal", "signal": "alarm"}
    assert validate(doc) == []
    doc["nodes"]["esp_start"]["config"] = {"event": "error", "interrupting": False}
    assert ("config.invalid", "esp_start") in found(validate(doc))
    doc["nodes"]["esp_start"]["config"] = {"event": "timer", "cycle": "R/PT1H"}
    assert validate(doc) == []
    del doc["nodes"]["esp_start"], doc["flows"]["e1"]
    problems = validate(doc)
    assert ("start.count", "esp") in found(problems)


def test_the_process_level_keeps_its_rules() -> None:
    doc = scoped()
    doc["nodes"]["start"]["config"]["event"] = "error"  # a process starts on no error
    assert ("config.invalid", "start") in found(validate(doc))
    doc = scoped()
    del doc["nodes"]["start"], doc["flows"]["f1"]
    assert ("start.count", None) in found(validate(doc))
    doc = scoped()
    doc["nodes"]["end"]["parent"] = "sub"
    doc["nodes"]["late_end"]["parent"] = "sub"
    doc["nodes"]["late"]["parent"] = "sub"
    doc["nodes"]["after"]["parent"] = "sub"
    doc["flows"]["f3"] = flow("i_task", "after")
    doc["flows"]["back"] = flow("sub", "before")  # no implicit end either: a loop
    assert ("end.missing", None) in found(validate(doc))


def test_reachability_and_dead_ends_are_checked_inside_each_scope() -> None:
    doc = scoped()
    doc["nodes"]["i_lost"] = {**user("Lost"), "parent": "sub"}
    doc["nodes"]["i_lost_gw"] = {**node("exclusiveGateway"), "parent": "sub"}
    doc["flows"]["i3"] = flow("i_lost", "i_lost_gw")
    doc["flows"]["i8"] = flow("i_lost_gw", "i_lost", condition="$vars.inner.again")
    doc["flows"]["i9"] = flow("i_lost_gw", "i_end", default=True)
    doc["nodes"]["i_loop"] = {**user("Loop"), "parent": "sub"}
    doc["nodes"]["i_gw"] = {**node("exclusiveGateway"), "parent": "sub"}
    doc["flows"]["i2"] = flow("i_task", "i_gw")
    doc["flows"]["i4"] = flow("i_gw", "i_end", condition="$vars.inner.ok")
    doc["flows"]["i5"] = flow("i_gw", "i_loop", default=True)
    doc["flows"]["i6"] = flow("i_loop", "i_loop2")
    doc["nodes"]["i_loop2"] = {**user("Loop 2"), "parent": "sub"}
    doc["flows"]["i7"] = flow("i_loop2", "i_loop")
    problems = validate(doc)
    assert ("node.unreachable", "i_lost") in found(problems)
    assert ("node.dead_end", "i_loop") in found(problems) or (
        "node.dead_end",
        "i_loop2",
    ) in found(problems)
    assert not any(p.element_id == "sub" for p in problems)


def test_parallel_deadlock_inside_a_sub_process() -> None:
    doc = scoped()
    doc["nodes"]["i_x"] = {**node("exclusiveGateway"), "parent": "sub"}
    doc["nodes"]["i_a"] = {**user("A"), "parent": "sub"}
    doc["nodes"]["i_b"] = {**user("B"), "parent": "sub"}
    doc["nodes"]["i_join"] = {**node("parallelGateway"), "parent": "sub"}
    doc["flows"]["i2"] = flow("i_task", "i_x")
    doc["flows"]["i3"] = flow("i_x", "i_a", condition="$vars.inner.a")
    doc["flows"]["i4"] = flow("i_x", "i_b", default=True)
    doc["flows"]["i5"] = flow("i_a", "i_join")
    doc["flows"]["i6"] = flow("i_b", "i_join")
    doc["flows"]["i7"] = flow("i_join", "i_end")
    assert found(validate(doc)) == {("parallel.deadlock", "i_join")}


# --- boundary events -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "parent"),
    [("ghost", None), ("start", None), ("end", None), ("i_task", None), ("late_end", None)],
)
def test_boundary_host_must_be_an_activity_beside_it(host: str, parent: str | None) -> None:
    doc = scoped()
    doc["nodes"]["late"]["config"]["attachedTo"] = host
    assert ("boundary.host", "late") in found(validate(doc))


def test_boundary_on_each_host_kind_is_accepted() -> None:
    doc = scoped()
    doc["nodes"]["late"]["config"]["attachedTo"] = "after"
    assert validate(doc) == []
    doc["nodes"]["late"]["config"]["attachedTo"] = "before"
    assert validate(doc) == []


@pytest.mark.parametrize(
    ("config", "code"),
    [
        ({"event": None}, "config.missing"),
        ({"event": "signal"}, "config.invalid"),
        ({"duration": None}, "config.missing"),
        ({"date": "$input.due"}, "config.invalid"),
        ({"duration": "5 minutes"}, "duration.invalid"),
        ({"duration": None, "cycle": "R/P1D"}, "config.invalid"),
        ({"duration": None, "cycle": "every day", "interrupting": False}, "cycle.invalid"),
        ({"event": "message", "duration": None, "message": "m"}, "config.missing"),
        ({"event": "message", "message": "m", "correlationKey": "$input.id"}, "config.invalid"),
        ({"event": "error", "duration": None, "interrupting": False}, "config.invalid"),
        ({"attachedTo": None}, "config.missing"),
        ({"date": "$vars.nobody", "duration": None}, "expression.reference"),
    ],
)
def test_boundary_event_settings(config: dict[str, Any], code: str) -> None:
    doc = scoped()
    settings = doc["nodes"]["late"]["config"]
    settings.update(config)
    for key in [k for k, v in settings.items() if v is None]:
        del settings[key]
    assert (code, "late") in found(validate(doc))


def test_non_interrupting_cycles_and_other_events_are_valid() -> None:
    for config in (
        {"event": "timer", "cycle": "R3/PT1H", "interrupting": False},
        {"event": "timer", "cycle": "R/2027-01-01T08:00:00Z/P1D", "interrupting": False},
        {"event": "timer", "date": "$vars.before.due"},
        {"event": "message", "message": "cancel", "correlationKey": "$input.id"},
        {"event": "error"},
        {"event": "error", "code": "E1"},
        {"event": "escalation", "code": "LATE", "interrupting": False},
    ):
        doc = scoped()
        doc["nodes"]["late"]["config"] = {"attachedTo": "sub", **config}
        problems = [p for p in validate(doc) if p.severity != "info"]
        assert problems == [], config


def test_two_interrupting_timers_of_the_same_definition_warn() -> None:
    doc = scoped()
    doc["nodes"]["late2"] = copy.deepcopy(doc["nodes"]["late"])
    doc["flows"]["f6"] = flow("late2", "late_end")
    problem = next(p for p in validate(doc) if p.code == "boundary.timer_duplicate")
    assert (problem.severity, problem.element_id) == ("warning", "late2")
    doc["nodes"]["late2"]["config"]["interrupting"] = False
    doc["nodes"]["late2"]["config"]["duration"] = None
    doc["nodes"]["late2"]["config"]["cycle"] = "R/P1D"
    del doc["nodes"]["late2"]["config"]["duration"]
    assert "boundary.timer_duplicate" not in codes(validate(doc))


# --- errors and escalations ----------------------------------------------------------------------


def thrower(doc: dict[str, Any], code: str = "E1") -> dict[str, Any]:
    """Put an error end event inside the sub-process behind an exclusive gateway."""
    doc["nodes"]["i_gw"] = {**node("exclusiveGateway"), "parent": "sub"}
    doc["nodes"]["i_fail"] = {**node("endEvent", event="error", code=code), "parent": "sub"}
    doc["flows"]["i2"] = flow("i_task", "i_gw")
    doc["flows"]["i3"] = flow("i_gw", "i_end", default=True)
    doc["flows"]["i4"] = flow("i_gw", "i_fail", condition="$vars.inner.failed")
    return doc


def test_an_error_nothing_catches_warns() -> None:
    problems = validate(thrower(scoped()))
    problem = next(p for p in problems if p.code == "error.uncaught")
    assert (problem.severity, problem.element_id) == ("warning", "i_fail")
    assert not has_errors(problems)


@pytest.mark.parametrize("code", ["E1", ""])
def test_an_error_caught_by_a_boundary_around_it_does_not_warn(code: str) -> None:
    doc = thrower(scoped())
    doc["nodes"]["late"]["config"] = {"attachedTo": "sub", "event": "error", "code": code}
    assert validate(doc) == []


def test_an_error_caught_by_an_event_sub_process_of_an_outer_scope_does_not_warn() -> None:
    doc = thrower(scoped())
    doc["nodes"]["esp"] = node("eventSubProcess")
    doc["nodes"]["esp_start"] = {**node("startEvent", event="error", code="E1"), "parent": "esp"}
    doc["nodes"]["esp_end"] = {**node("endEvent"), "parent": "esp"}
    doc["flows"]["e1"] = flow("esp_start", "esp_end")
    assert "error.uncaught" not in codes(validate(doc))
    doc["nodes"]["esp_start"]["config"]["code"] = "OTHER"
    problems = validate(doc)
    assert "error.uncaught" in codes(problems)
    info = next(p for p in problems if p.code == "error.never_thrown")
    assert (info.severity, info.element_id) == ("info", "esp_start")


def test_a_boundary_inside_does_not_catch_what_its_scope_throws_outside_it() -> None:
    doc = thrower(scoped())
    doc["nodes"]["i_catch"] = {**node("boundaryEvent", attachedTo="i_task", event="error"),
                               "parent": "sub"}  # fmt: skip
    doc["flows"]["i5"] = flow("i_catch", "i_end")
    assert "error.uncaught" in codes(validate(doc))


def test_throwing_events_need_their_code() -> None:
    doc = thrower(scoped(), code="")
    assert ("config.missing", "i_fail") in found(validate(doc))
    doc["nodes"]["i_fail"]["config"] = {"event": "explode"}
    assert ("config.invalid", "i_fail") in found(validate(doc))
    doc = scoped()
    doc["nodes"]["esc"] = node("escalationThrow")
    doc["flows"]["f4"] = flow("after", "esc")
    doc["flows"]["f6"] = flow("esc", "end")
    assert ("config.missing", "esc") in found(validate(doc))
    doc["nodes"]["esc"]["config"]["code"] = "LATE"
    doc["nodes"]["end"]["config"] = {"event": "terminate"}
    assert validate(doc) == []


# --- call activities -----------------------------------------------------------------------------


def calling(**config: Any) -> dict[str, Any]:
    doc = scoped()
    doc["nodes"]["after"] = node("callActivity", "Ship", **config)
    return doc


def child(*calls: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"nodes": {"s": node("startEvent")}, "flows": {}}
    for number, key in enumerate(calls):
        doc["nodes"][f"c{number}"] = node("callActivity", process=key)
    return doc


CATALOG = KnownProcesses(
    {
        "shipping": {1: child(), 2: child("billing")},
        "billing": {1: child("main")},
        "leaf": {1: child()},
    }
)


def test_call_activity_needs_a_process() -> None:
    assert ("call.process_unknown", "after") in found(validate(calling()))
    assert ("call.process_unknown", "after") in found(validate(calling(process=" ")))
    assert validate(calling(process="anything")) == []  # nothing to check against


def test_call_activity_process_is_checked_against_the_catalog() -> None:
    problem = next(
        p for p in validate(calling(process="nope"), processes=CATALOG) if p.severity == "error"
    )
    assert (problem.code, problem.element_id) == ("call.process_unknown", "after")
    assert "'nope'" in problem.message
    assert validate(calling(process="leaf"), processes=CATALOG) == []
    assert validate(calling(process="leaf"), processes={"leaf"}) == []
    assert ("call.process_unknown", "after") in found(
        validate(calling(process="leaf"), processes={"other"})
    )


def test_call_activity_version_binding() -> None:
    doc = calling(process="leaf", binding="version", version=7)
    assert ("call.version_unknown", "after") in found(validate(doc, processes=CATALOG))
    doc = calling(process="leaf", binding="version", version=1)
    assert validate(doc, processes=CATALOG) == []
    assert ("config.missing", "after") in found(
        validate(calling(process="leaf", binding="version"))
    )
    assert ("config.invalid", "after") in found(validate(calling(process="leaf", binding="tag")))
    assert ("config.invalid", "after") in found(
        validate(calling(process="leaf", binding="version", version=0))
    )


def test_call_inputs_are_expressions_checked_like_any() -> None:
    doc = calling(process="leaf", inputs={"order": "$vars.before.id", "bad": "$vars.nobody"})
    assert found(validate(doc)) == {("expression.reference", "after")}
    doc = calling(process="leaf", inputs={"order": "$vars.before.("})
    assert found(validate(doc)) == {("expression.syntax", "after")}


def test_call_cycles_warn() -> None:
    doc = calling(process="shipping", binding="version", version=1)
    assert validate(doc, processes=CATALOG) == []
    doc = calling(process="shipping", binding="version", version=2)
    problem = next(p for p in validate(doc, processes=CATALOG) if p.code == "call.cycle")
    assert (problem.severity, problem.element_id) == ("warning", "after")
    assert "main → shipping → billing → main" in problem.message
    recursive = calling(process="main")
    catalog = KnownProcesses({"main": {1: recursive}})
    assert "call.cycle" in codes(validate(recursive, processes=catalog))


def test_latest_binding_follows_the_newest_version() -> None:
    catalog = KnownProcesses({"shipping": {1: child(), 2: child("billing")},
                              "billing": {1: child("main")}})  # fmt: skip
    assert "call.cycle" in codes(validate(calling(process="shipping"), processes=catalog))


# --- multi-instance ------------------------------------------------------------------------------


def repeated(settings: Any, kind: str = "userTask", **config: Any) -> dict[str, Any]:
    doc = scoped()
    base = user("After", **config) if kind == "userTask" else node(kind, "After", **config)
    base["config"]["multiInstance"] = settings
    doc["nodes"]["after"] = base
    return doc


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"collection": "$input.items", "cardinality": "3"},
        {"collection": "$input.items", "colour": "red"},
        {"collection": "$input.items", "element": "the item"},
        {"collection": "$input.items", "sequential": "yes"},
        {"cardinality": 3},
    ],
)
def test_multi_instance_settings_that_cannot_run(settings: dict[str, Any]) -> None:
    assert ("multiInstance.invalid", "after") in found(validate(repeated(settings)))


def test_multi_instance_only_on_activities_that_repeat() -> None:
    doc = scoped()
    doc["nodes"]["late"]["config"]["multiInstance"] = {"cardinality": "2"}
    assert ("multiInstance.invalid", "late") in found(validate(doc))
    for kind, config in (
        ("serviceTask", {"tool": "mail", "inputs": {"to": "$item"}}),
        ("callActivity", {"process": "leaf", "inputs": {"who": "$item"}}),
        ("userTask", {}),
    ):
        doc = repeated({"collection": "$input.items"}, kind, **config)
        assert validate(doc, TOOLS) == [], kind


def test_multi_instance_expressions_are_checked() -> None:
    doc = repeated({"collection": "$input.items(", "element": "item"})
    assert ("expression.syntax", "after") in found(validate(doc))
    doc = repeated({"collection": "$vars.nobody"})
    assert ("expression.reference", "after") in found(validate(doc))
    doc = repeated({"collection": "$vars.before.items", "completion": "$loop.completed >= 2",
                    "output": "$nodes.after.ok", "sequential": True})  # fmt: skip
    assert validate(doc) == []
    doc = repeated({"collection": "$item.children"})  # evaluated before any instance exists
    assert ("expression.reference", "after") in found(validate(doc))


def test_item_and_loop_only_inside_a_multi_instance_activity() -> None:
    doc = scoped()
    doc["nodes"]["after"]["config"]["assignee"] = {"type": "expression", "value": "$item"}
    problem = next(p for p in validate(doc) if p.code == "expression.reference")
    assert problem.element_id == "after" and "$item" in problem.message
    doc = repeated({"collection": "$input.people", "element": "person"},
                   assignee={"type": "expression", "value": "$vars.person.login"})  # fmt: skip
    assert validate(doc) == []
    doc["nodes"]["after"]["config"]["assignee"]["value"] = "$loop.position"
    assert ("expression.reference", "after") in found(validate(doc))
    doc["nodes"]["after"]["config"]["assignee"]["value"] = "'r' + $loop.index + $loop.count"
    assert validate(doc) == []
    doc["nodes"]["after"]["config"]["assignee"]["value"] = "$vars.someone"
    assert ("expression.reference", "after") in found(validate(doc))


def test_nodes_inside_a_multi_instance_sub_process_read_the_element() -> None:
    doc = scoped()
    doc["nodes"]["sub"]["config"]["multiInstance"] = {"collection": "$input.items",
                                                      "element": "item"}  # fmt: skip
    doc["nodes"]["i_task"]["config"]["assignee"] = {"type": "expression",
                                                    "value": "$vars.item.owner"}  # fmt: skip
    doc["flows"]["i2"] = flow("i_task", "i_gw")
    doc["nodes"]["i_gw"] = {**node("exclusiveGateway"), "parent": "sub"}
    doc["flows"]["i3"] = flow("i_gw", "i_end", condition="$loop.index > 0 and $item.ok")
    doc["flows"]["i4"] = flow("i_gw", "i_end", default=True)
    assert validate(doc) == []
    doc["nodes"]["after"]["config"]["assignee"] = {"type": "expression", "value": "$vars.item"}
    assert ("expression.reference", "after") in found(validate(doc))


def test_data_written_inside_a_sub_process_is_visible_after_it_and_before_it_inside() -> None:
    doc = scoped()
    doc["nodes"]["after"]["config"]["assignee"] = {"type": "expression",
                                                   "value": "$vars.inner.who"}  # fmt: skip
    doc["nodes"]["i_task"]["config"]["assignee"] = {"type": "expression",
                                                    "value": "$vars.before.who"}  # fmt: skip
    assert validate(doc) == []
    doc["nodes"]["before"]["config"]["assignee"] = {"type": "expression",
                                                    "value": "$vars.inner.who"}  # fmt: skip
    assert ("expression.reference", "before") in found(validate(doc))


@pytest.mark.parametrize(
    ("host", "event", "refused"),
    [
        ("userTask", "error", False),
        ("userTask", "escalation", False),
        ("manualTask", "error", True),
        ("serviceTask", "escalation", True),
        ("serviceTask", "error", False),
        ("subProcess", "escalation", False),
        ("callActivity", "error", False),
    ],
)
def test_a_boundary_for_what_its_host_never_throws_is_refused(host, event, refused) -> None:
    """Accepted, it would never fire: only tools (business errors), people working a task (they
    report one), sub-processes and called children throw errors, and only people, sub-processes
    and children escalate."""
    from webapp.process.document import normalize
    from webapp.process.validation import validate

    config = {
        "userTask": {"assignee": {"type": "role", "value": "clerk"}},
        "manualTask": {},
        "serviceTask": {"tool": "noop"},
        "subProcess": {},
        "callActivity": {"process": "other"},
    }[host]
    nodes = {
        "s": {"kind": "startEvent"},
        "h": {"kind": host, "config": config},
        "b": {"kind": "boundaryEvent", "config": {"attachedTo": "h", "event": event}},
        "be": {"kind": "endEvent"},
        "e": {"kind": "endEvent"},
    }
    if host == "subProcess":
        nodes["hs"] = {"kind": "startEvent", "parent": "h"}
        nodes["he"] = {"kind": "endEvent", "parent": "h"}
    flows = {
        "f1": {"source": "s", "target": "h"},
        "f2": {"source": "h", "target": "e"},
        "f3": {"source": "b", "target": "be"},
    }
    if host == "subProcess":
        flows["f4"] = {"source": "hs", "target": "he"}
    problems = validate(normalize({"nodes": nodes, "flows": flows}), processes={"other"})
    found = [p for p in problems if p.code == "boundary.never_fires"]
    assert bool(found) is refused, problems
    if refused:
        assert found[0].element_id == "b" and found[0].severity == "error"


def reviewed(output: str, **settings: Any) -> dict[str, Any]:
    """Reviewers review in parallel, each result saved as `review`; a gateway after it reads
    the list: the modeller's process in which the outputs came out `[null, null]`."""
    doc = repeated({"collection": "$input.reviewers", "output": output, **settings},
                   saveTo="review")  # fmt: skip
    doc["nodes"]["after"]["config"]["form"] = {
        "fields": [{"key": "approved", "label": "Approve?", "type": "boolean"}]
    }
    return doc


def test_an_output_that_reads_the_activitys_saved_result_is_refused() -> None:
    for text in ("$vars.review", "$vars.review.approved", "$nodes.after.approved or $vars.review"):
        problem = only(validate(reviewed(text)), "expression.reference")
        assert (problem.element_id, problem.severity) == ("after", "error"), text
        assert "saved only after all instances have finished" in problem.message
        assert "$nodes.after" in problem.message, "it says where the instance's result is"
    assert validate(reviewed("$nodes.after.approved")) == [], "what the hint says is right"
    assert validate(reviewed("$nodes.after.approved and $vars.before.ok")) == []
    assert ("expression.reference", "after") in found(validate(reviewed("$vars.later")))


def test_a_completion_condition_cannot_read_the_results_either() -> None:
    for text in ("$vars.review.approved", "$nodes.after.approved"):
        doc = reviewed("$nodes.after.approved", completion=text)
        problem = only(validate(doc), "expression.reference")
        assert "$loop" in problem.message and problem.severity == "error", text
    assert validate(reviewed("$nodes.after", completion="$loop.completed >= 2")) == []


def test_what_steps_inside_save_is_there_for_the_output() -> None:
    doc = scoped()
    doc["nodes"]["sub"]["config"]["multiInstance"] = {"collection": "$input.items",
                                                      "output": "$vars.inner.ok"}  # fmt: skip
    assert validate(doc) == [], "a task inside saves before the instance finishes"
    script = node("scriptTask", "Sum", script="total = len($input.items)\nsame = $vars.total")
    script["config"]["multiInstance"] = {"cardinality": "2", "output": "$vars.total + 1"}
    doc = scoped()
    doc["nodes"]["after"] = script
    assert validate(doc) == [], "a script assigns its variables as each instance runs"


def test_the_same_trap_elsewhere_an_expression_reads_its_own_steps_result() -> None:
    call = repeated({"collection": "$input.orders", "output": "$vars.child.total"},
                    "callActivity", process="leaf", saveTo="child")  # fmt: skip
    problem = only(validate(call), "expression.reference")
    assert "saved only after all instances have finished" in problem.message
    call["nodes"]["after"]["config"]["multiInstance"]["output"] = "$nodes.after.total"
    assert validate(call) == []
    doc = scoped()
    doc["nodes"]["after"] = node("receiveTask", "Wait", message="paid", saveTo="payment",
                                 correlationKey="$vars.payment.id")  # fmt: skip
    problem = only(validate(doc), "expression.reference")
    assert "Receive task 'Wait' itself saves only when it has completed" in problem.message
    doc["nodes"]["after"]["config"]["correlationKey"] = "$nodes.after.id"
    problem = only(validate(doc), "expression.reference")
    assert (problem.severity, "the result of Receive task 'Wait' itself") == (
        "warning",
        problem.message.split(", which")[0].split("reads $nodes.after, ")[1],
    )
    doc["nodes"]["after"]["config"]["correlationKey"] = "$vars.before.id"
    assert validate(doc) == []


def test_in_a_pooled_process_an_instances_fields_are_not_in_vars_before_the_end() -> None:
    doc = reviewed("$vars.approved")
    doc["nodes"]["after"]["config"].pop("saveTo")
    doc["variables"] = "pool"
    problem = only(validate(doc), "expression.reference")
    assert "saved only after all instances have finished" in problem.message
    doc["nodes"]["after"]["config"]["multiInstance"]["output"] = "$nodes.after.approved"
    assert validate(doc) == []


def test_a_sub_process_instance_has_no_result_of_its_own() -> None:
    doc = scoped()
    doc["nodes"]["sub"]["config"]["multiInstance"] = {"collection": "$input.items",
                                                      "output": "$nodes.sub.ok"}  # fmt: skip
    problem = only(validate(doc), "expression.reference")
    assert "has no result of its own; read what the steps inside it saved" in problem.message
    doc["nodes"]["sub"]["config"]["multiInstance"]["output"] = "$nodes.i_task.ok"
    assert validate(doc) == []


def test_after_a_boundary_event_its_activity_has_not_completed() -> None:
    """The path leaving a boundary event runs while (or instead of) its activity: what the
    activity saves when it completes is not there; what steps inside it saved may be."""
    doc = scoped()
    doc["nodes"]["late_end"] = node("endEvent")
    doc["nodes"]["chase"] = user("Chase", assignee={"type": "expression",
                                                    "value": "$vars.inner.who"})  # fmt: skip
    doc["flows"]["f5"] = flow("late", "chase")
    doc["flows"]["f6"] = flow("chase", "late_end")
    problem = only(validate(doc), "expression.reference")
    assert (problem.element_id, problem.severity) == ("chase", "warning")
    assert "only User task 'Inner' saves; after a boundary event" in problem.message
    doc["nodes"]["chase"]["config"]["assignee"]["value"] = "$vars.before.who"
    assert validate(doc) == []

    doc["nodes"]["after"]["config"]["saveTo"] = "answer"
    doc["nodes"]["nag"] = node("boundaryEvent", attachedTo="after", event="timer",
                               duration="P1D")  # fmt: skip
    doc["nodes"]["nagged"] = user("Nag", assignee={"type": "expression",
                                                  "value": "$vars.answer.who"})  # fmt: skip
    doc["nodes"]["nag_end"] = node("endEvent")
    doc["flows"]["f7"] = flow("nag", "nagged")
    doc["flows"]["f8"] = flow("nagged", "nag_end")
    problem = only(validate(doc), "expression.reference")
    assert (problem.element_id, problem.severity) == ("nagged", "error")
    assert "never has" in problem.message and "User task 'After'" in problem.message
    doc["nodes"]["nag"]["config"]["interrupting"] = False
    problem = only(validate(doc), "expression.reference")
    assert problem.severity == "warning", "the activity may still complete meanwhile"
