"""validate() on the later gateways, events and task types: each rule fails on a broken example
(code + element id) and passes on the well-formed one."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.bpmn import events_document
from tests.helpers.corpus_files import EVENT_FILES, load
from tests.helpers.validation import TOOLS, found, linear, make, node, only, user
from webapp.process.bpmn import import_bpmn
from webapp.process.validation import CODES, validate

MAIL = {"tool": "mail", "inputs": {"to": "'a@example.org'"}}


def events() -> dict[str, Any]:
    return copy.deepcopy(events_document())


# --- process-level starts ---------------------------------------------------------------------


def test_event_starts_beside_one_plain_start_are_valid() -> None:
    doc = events()
    assert validate(doc) == []
    del doc["nodes"]["start"], doc["flows"]["f0"]
    doc["nodes"]["split"]["kind"] = "inclusiveGateway"
    doc["flows"]["fx"] = {"source": "daily", "target": "split"}
    assert ("start.count", None) not in found(validate(doc))


def test_at_most_one_plain_start_and_at_least_one_start() -> None:
    doc = linear()
    doc["nodes"]["again"] = node("startEvent")
    doc["flows"]["f9"] = {"source": "again", "target": "task"}
    assert ("start.count", "again") in found(validate(doc))
    doc["nodes"]["again"]["config"] = {"event": "message", "message": "order"}
    assert validate(doc) == []
    del doc["nodes"]["start"], doc["flows"]["f1"]
    assert validate(doc) == []  # only an event start: started by messages, not by hand
    del doc["nodes"]["again"], doc["flows"]["f9"]
    assert ("start.count", None) in found(validate(doc))


@pytest.mark.parametrize(
    ("config", "code"),
    [
        ({"event": "error"}, "config.invalid"),
        ({"event": "escalation", "code": "X"}, "config.invalid"),
        ({"event": "message"}, "config.missing"),
        ({"event": "message", "message": "  "}, "config.missing"),
        ({"event": "signal"}, "config.missing"),
        ({"event": "timer"}, "config.missing"),
        ({"event": "timer", "cycle": "every day"}, "cycle.invalid"),
        ({"event": "timer", "cycle": "61 * * * *"}, "cycle.invalid"),
        ({"event": "timer", "cycle": "R0/PT1H"}, "cycle.invalid"),
        ({"event": "timer", "cycle": "0 8 * * *", "timezone": "Mars/Olympus"}, "config.invalid"),
        ({"event": "timer", "date": "tomorrow"}, "config.invalid"),
        ({"event": "timer", "date": "2027-01-01T08:00:00Z", "cycle": "R/PT1H"}, "cycle.invalid"),
        ({"event": "timer", "duration": "PT1H"}, "config.invalid"),
        ({"event": "message", "message": "m", "cycle": "R/PT1H"}, "config.invalid"),
    ],
)
def test_bad_event_starts_name_the_start(config: dict[str, Any], code: str) -> None:
    doc = linear()
    doc["nodes"]["start"]["config"] = config
    assert (code, "start") in found(validate(doc))


@pytest.mark.parametrize(
    "config",
    [
        {"event": "timer", "cycle": "0 8 * * MON-FRI", "timezone": "Europe/Berlin"},
        {"event": "timer", "cycle": "R5/2027-01-01T08:00:00Z/P1D"},
        {"event": "timer", "cycle": "R/PT1H"},
        {"event": "timer", "date": "2027-01-01T08:00:00"},
        {"event": "message", "message": "order"},
        {"event": "signal", "signal": "alarm"},
    ],
)
def test_good_event_starts_pass(config: dict[str, Any]) -> None:
    doc = linear()
    doc["nodes"]["start"]["config"] = config
    assert validate(doc) == []


def test_a_plain_sub_process_still_starts_on_no_event() -> None:
    doc = events()
    doc["nodes"]["sub"] = {**node("subProcess"), "position": {"x": 0, "y": 900}}
    doc["nodes"]["in"] = {**node("startEvent", event="signal", signal="s"), "parent": "sub"}
    doc["nodes"]["out"] = {**node("endEvent"), "parent": "sub"}
    doc["flows"]["s1"] = {"source": "in", "target": "out"}
    doc["flows"]["f6"]["target"] = "sub"
    doc["flows"]["s2"] = {"source": "sub", "target": "race"}
    assert ("config.invalid", "in") in found(validate(doc))


# --- signals, messages, tools -----------------------------------------------------------------


def test_signal_events_need_their_name() -> None:
    doc = events()
    for node_id in ("abort", "shout", "end", "stop", "alarm"):
        doc["nodes"][node_id]["config"]["signal"] = ""
    problems = found(validate(doc))
    for node_id in ("abort", "shout", "end", "stop", "alarm"):
        assert ("config.missing", node_id) in problems


def test_signal_payload_is_expressions() -> None:
    doc = events()
    doc["nodes"]["shout"]["config"]["payload"] = {"a": 1, "b": "$vars.total +", "c": "$vars.nope"}
    problems = validate(doc)
    assert ("config.invalid", "shout") in found(problems)
    assert ("expression.syntax", "shout") in found(problems)
    assert ("expression.reference", "shout") in found(problems)
    doc["nodes"]["end"]["config"]["payload"] = "everything"
    assert ("config.invalid", "end") in found(validate(doc))


@pytest.mark.parametrize("node_id", ["send", "tell", "late"])
def test_tool_calls_need_a_known_tool_and_its_inputs(node_id: str) -> None:
    doc = events()
    config = doc["nodes"][node_id]["config"]
    del config["tool"]
    assert ("tool.missing", node_id) in found(validate(doc))
    config.update(tool="fax")
    assert ("tool.unknown", node_id) in found(validate(doc, TOOLS))
    config.update(tool="mail", inputs={})
    assert ("tool.input_missing", node_id) in found(validate(doc, TOOLS))
    config.update(MAIL, retries=-1)
    assert ("config.invalid", node_id) in found(validate(doc, TOOLS))


def test_receive_tasks_wait_like_message_catches() -> None:
    doc = events()
    doc["nodes"]["doc"]["config"] = {"message": "doc"}
    assert ("config.missing", "doc") in found(validate(doc))
    doc["nodes"]["doc"]["config"] = {"correlationKey": "$input.id"}
    assert ("config.missing", "doc") in found(validate(doc))
    doc["nodes"]["doc"]["config"] = {"message": "doc", "correlationKey": "$input.id +"}
    assert ("expression.syntax", "doc") in found(validate(doc))


# --- event-based gateways ---------------------------------------------------------------------


def test_event_gateway_targets_are_catch_events_or_receive_tasks() -> None:
    doc = events()
    doc["nodes"]["wait"] = user("Not an event")
    problem = only(validate(doc), "gateway.event_target")
    assert problem.element_id == "race" and "Not an event" in problem.message


def test_an_event_gateway_target_waits_only_for_the_gateway() -> None:
    doc = events()
    doc["flows"]["f19"]["target"] = "abort"  # the boundary event "stop" also leads there
    del doc["nodes"]["stopped"]
    problem = only(validate(doc), "gateway.event_target")
    assert problem.element_id == "abort" and "other incoming flows" in problem.message


def test_event_gateway_flows_carry_no_condition_or_default() -> None:
    doc = events()
    doc["flows"]["f7"]["condition"] = "$input.x"
    doc["flows"]["f8"]["default"] = True
    problems = found(validate(doc))
    assert {("gateway.event_condition", "f7"), ("gateway.event_condition", "f8")} <= problems
    assert not {code for code, _ in problems} & {"flow.condition_ignored", "flow.default_ignored"}


def test_a_receive_task_after_an_event_gateway_carries_no_boundary_events() -> None:
    doc = events()
    doc["nodes"]["give_up"] = node("boundaryEvent", attachedTo="doc", event="timer", duration="P1D")
    doc["flows"]["g1"] = {"source": "give_up", "target": "got"}
    assert found(validate(doc)) == {("gateway.event_boundary", "doc")}


def test_a_parallel_join_after_an_event_gateway_deadlocks() -> None:
    doc = make(
        {
            "start": "startEvent",
            "race": "eventBasedGateway",
            "wait": node("timerCatch", duration="PT1H"),
            "abort": node("signalCatch", signal="abort"),
            "join": "parallelGateway",
            "end": "endEvent",
        },
        ("start", "race"),
        ("race", "wait"),
        ("race", "abort"),
        ("wait", "join"),
        ("abort", "join"),
        ("join", "end"),
    )
    assert ("parallel.deadlock", "join") in found(validate(doc))
    doc["nodes"]["join"]["kind"] = "exclusiveGateway"
    assert validate(doc) == []


def test_an_event_gateway_needs_two_events() -> None:
    doc = events()
    for flow_id in ("f8", "f9", "f10"):
        del doc["flows"][flow_id]
    for node_id in ("wait", "abort", "doc", "late", "aborted", "got"):
        del doc["nodes"][node_id]
    assert ("node.outgoing_count", "race") in found(validate(doc))


# --- links --------------------------------------------------------------------------------------


def test_link_pairs_connect_the_process() -> None:
    doc = events()
    doc["nodes"]["land"]["config"]["link"] = "elsewhere"
    problems = found(validate(doc))
    assert ("link.unpaired", "jump") in problems
    assert ("node.unreachable", "land") in problems


def test_one_catch_per_link_name_and_scope() -> None:
    doc = events()
    doc["nodes"]["land2"] = node("linkCatch", link="next")
    doc["nodes"]["end2"] = node("endEvent")
    doc["flows"]["l2"] = {"source": "land2", "target": "end2"}
    assert ("link.duplicate", "land2") in found(validate(doc))


def test_a_link_does_not_leave_its_sub_process() -> None:
    doc = events()
    doc["nodes"]["sub"] = node("subProcess")
    doc["nodes"]["in"] = {**node("startEvent"), "parent": "sub"}
    doc["nodes"]["jump_in"] = {**node("linkThrow", link="next"), "parent": "sub"}
    doc["flows"]["s1"] = {"source": "in", "target": "jump_in"}
    doc["flows"]["f6"]["target"] = "sub"
    doc["flows"]["s2"] = {"source": "sub", "target": "race"}
    problems = found(validate(doc))
    assert ("link.unpaired", "jump_in") in problems
    assert ("config.missing", "jump") not in problems


def test_link_events_need_a_name() -> None:
    doc = events()
    doc["nodes"]["jump"]["config"] = {}
    doc["nodes"]["land"]["config"] = {"link": " "}
    problems = found(validate(doc))
    assert {("config.missing", "jump"), ("config.missing", "land")} <= problems


# --- script tasks -------------------------------------------------------------------------------


def script(text: Any, **config: Any) -> dict[str, Any]:
    return make(
        {
            "start": "startEvent",
            "calc": node("scriptTask", "Compute", script=text, **config),
            "use": user("Use", dueIn="PT1H", assignee={"type": "expression", "value": text}),
            "end": "endEvent",
        },
        ("start", "calc"),
        ("calc", "use"),
        ("use", "end"),
    )


def test_a_flowdesk_script_reads_earlier_lines_and_writes_vars() -> None:
    doc = script("total = $input.price * $input.qty\n\n# twice\n$vars.gross = $vars.total * 2")
    doc["nodes"]["use"]["config"]["assignee"]["value"] = "$vars.gross + $nodes.calc.total"
    assert validate(doc) == []


def test_a_script_line_reading_what_it_assigns_later_is_reported() -> None:
    doc = script("a = $vars.b\nb = 1")
    doc["nodes"]["use"]["config"]["assignee"]["value"] = "$vars.a"
    problem = only(validate(doc), "expression.reference")
    assert problem.element_id == "calc" and "Line 1" in problem.message


@pytest.mark.parametrize(
    ("text", "line"),
    [("total = ", 1), ("a = 1\nb == 2", 2), ("a = 1\n\nlen(x) = 2", 3), ("a = (", 1)],
)
def test_script_syntax_errors_name_the_line(text: str, line: int) -> None:
    doc = script(text)
    doc["nodes"]["use"]["config"]["assignee"]["value"] = "'alice'"
    problem = only(validate(doc), "script.syntax")
    assert problem.element_id == "calc" and f"line {line}" in problem.message


@pytest.mark.parametrize("language", ["groovy", "javascript", "python", "juel", "unspecified"])
def test_scripts_in_other_languages_are_a_publish_error(language: str) -> None:
    doc = script("x = 1", language=language)
    doc["nodes"]["use"]["config"]["assignee"]["value"] = "'alice'"
    problem = only(validate(doc), "script.language")
    assert problem.element_id == "calc"
    assert language in problem.message and "Compute" in problem.message


@pytest.mark.parametrize("text", [None, "", "  \n", 42])
def test_a_script_task_needs_a_script(text: Any) -> None:
    doc = script(text)
    doc["nodes"]["use"]["config"]["assignee"]["value"] = "'alice'"
    problems = found(validate(doc))
    assert ("config.missing", "calc") in problems or ("config.invalid", "calc") in problems


# --- inclusive gateways -------------------------------------------------------------------------


def block(*branches: str, join: str = "inclusiveGateway") -> dict[str, Any]:
    """start → inclusive split → one user task per branch → `join` → end."""
    nodes: dict[str, Any] = {"start": "startEvent", "split": "inclusiveGateway", "join": join}
    flows: list[tuple] = [("start", "split")]
    for i, branch in enumerate(branches):
        nodes[branch] = user(branch)
        extra = {"default": True} if i == 0 else {"condition": f"$input.n > {i}"}
        flows += [("split", branch, extra), (branch, "join")]
    nodes["end"] = "endEvent"
    flows.append(("join", "end"))
    return make(nodes, *flows)


def test_inclusive_split_and_join_are_valid() -> None:
    assert validate(block("a", "b", "c")) == []


def test_an_inclusive_join_joins_parallel_branches() -> None:
    doc = block("a", "b", "c")
    doc["nodes"]["split"]["kind"] = "parallelGateway"
    doc["flows"]["f2"]["default"] = False
    for flow_id in ("f4", "f6"):
        doc["flows"][flow_id]["condition"] = None
    assert validate(doc) == []
    doc["nodes"]["join"]["kind"] = "exclusiveGateway"
    assert ("parallel.unjoined", "split") in found(validate(doc))


def test_inclusive_split_allows_unconditional_flows_and_one_default() -> None:
    doc = block("a", "b", "c")
    doc["flows"]["f4"]["condition"] = None
    assert found(validate(doc)) == {("gateway.default_unused", "split")}  # a warning only
    doc["flows"]["f4"]["default"] = True
    assert ("gateway.default_multiple", "split") in found(validate(doc))


def test_a_parallel_join_after_a_deciding_inclusive_split_deadlocks() -> None:
    problem = only(validate(block("a", "b", join="parallelGateway")), "parallel.deadlock")
    assert problem.element_id == "join" and "only some" in problem.message
    doc = block("a", "b", join="parallelGateway")
    doc["flows"]["f2"]["default"] = False
    doc["flows"]["f4"]["condition"] = None
    assert validate(doc) == []  # every flow unconditional: it splits like a parallel gateway


def test_an_inclusive_split_with_one_conditional_and_one_unconditional_flow_deadlocks_a_join() -> (
    None
):
    """No default: the unconditional flow always runs, the conditional one only sometimes, so
    a parallel join after them waits forever when the condition is false."""
    doc = block("a", "b", join="parallelGateway")
    doc["flows"]["f2"]["default"] = False  # "a": unconditional, "b": "$input.n > 1"
    problem = only(validate(doc), "parallel.deadlock")
    assert (problem.element_id, problem.severity) == ("join", "error")
    assert "inclusive gateway" in problem.message.lower() and "only some" in problem.message
    straight = make(
        {"start": "startEvent", "split": "inclusiveGateway", "join": "parallelGateway",
         "end": "endEvent"},
        ("start", "split"),
        ("split", "join", {"condition": "$input.ok"}),
        ("split", "join"),
        ("join", "end"),
    )  # fmt: skip
    assert ("parallel.deadlock", "join") in found(validate(straight))


def test_nested_inclusive_blocks_with_a_loop_back_before_the_split_are_valid() -> None:
    doc = make(
        {
            "start": "startEvent",
            "merge": "exclusiveGateway",
            "outer": "inclusiveGateway",
            "inner": "inclusiveGateway",
            "a": user("A"),
            "b": user("B"),
            "c": user("C"),
            "inner_join": "inclusiveGateway",
            "outer_join": "inclusiveGateway",
            "again": "exclusiveGateway",
            "end": "endEvent",
        },
        ("start", "merge"),
        ("merge", "outer"),
        ("outer", "inner", {"condition": "$input.x"}),
        ("outer", "c", {"default": True}),
        ("inner", "a", {"condition": "$input.a"}),
        ("inner", "b", {"default": True}),
        ("a", "inner_join"),
        ("b", "inner_join"),
        ("inner_join", "outer_join"),
        ("c", "outer_join"),
        ("outer_join", "again"),
        ("again", "merge", {"condition": "$input.more"}),
        ("again", "end", {"default": True}),
    )
    assert validate(doc) == []


def test_inclusive_joins_waiting_for_each_other_deadlock() -> None:
    doc = make(
        {
            "start": "startEvent",
            "fork": "parallelGateway",
            "a": user("A"),
            "b": user("B"),
            "j1": "inclusiveGateway",
            "j2": "inclusiveGateway",
            "c": user("C"),
            "d": user("D"),
            "x": "exclusiveGateway",
            "end": "endEvent",
        },
        ("start", "fork"),
        ("fork", "a"),
        ("fork", "b"),
        ("a", "j1"),
        ("b", "j2"),
        ("j1", "c"),
        ("c", "j2"),
        ("j2", "d"),
        ("d", "x"),
        ("x", "j1", {"condition": "$input.again"}),
        ("x", "end", {"default": True}),
    )
    deadlocks = {p.element_id for p in validate(doc) if p.code == "inclusive.deadlock"}
    assert deadlocks == {"j1", "j2"}
    doc["flows"]["f5"]["target"] = "j1"  # both branches meet at j1 first: no circle
    doc["flows"]["f7"]["target"] = "d"
    del doc["nodes"]["j2"]
    assert not [p for p in validate(doc) if p.code == "inclusive.deadlock"]


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(EVENT_FILES))
def test_corpus_files_give_no_false_deadlocks(name: str) -> None:
    problems = validate(import_bpmn(load(name)).document)
    deadlocks = [p for p in problems if p.code in ("parallel.deadlock", "inclusive.deadlock")]
    assert deadlocks == []


_KEYS = [
    "signal",
    "payload",
    "link",
    "script",
    "language",
    "message",
    "correlationKey",
    "tool",
    "inputs",
    "event",
    "cycle",
    "date",
    "timezone",
    "attachedTo",
    "multiInstance",
    "saveTo",
]
_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=12)
    | st.sampled_from(["signal", "message", "timer", "flowdesk", "groovy", "0 8 * * *",
                       "R/PT1H", "a = $vars.", "next", "Europe/Berlin", "$input.x"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=2),
    max_leaves=4,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    changes=st.lists(
        st.tuples(st.sampled_from(sorted(events_document()["nodes"])), st.sampled_from(_KEYS),
                  _VALUE),
        min_size=1, max_size=5,
    ),
    kinds=st.lists(
        st.tuples(st.sampled_from(sorted(events_document()["nodes"])),
                  st.sampled_from(["inclusiveGateway", "eventBasedGateway", "linkThrow",
                                   "linkCatch", "scriptTask", "receiveTask", "signalThrow"])),
        max_size=2,
    ),
)  # fmt: skip
def test_any_settings_give_problems_not_crashes(
    changes: list[tuple[str, str, Any]], kinds: list[tuple[str, str]]
) -> None:
    doc = events()
    for node_id, kind in kinds:
        doc["nodes"][node_id]["kind"] = kind
    for node_id, key, value in changes:
        doc["nodes"][node_id]["config"][key] = value
    problems = validate(doc)
    assert all(p.code in CODES and p.message for p in problems)


def test_a_default_beside_an_unconditional_flow_is_never_taken() -> None:
    doc = block("a", "b", "c")
    doc["flows"]["f4"]["condition"] = None  # "b" is always taken, so default "a" never is
    assert found(validate(doc)) == {("gateway.default_unused", "split")}
    doc["flows"]["f4"]["condition"] = "$input.n > 1"
    assert validate(doc) == []


def test_a_conditional_flow_taken_besides_the_joined_ones_is_no_deadlock() -> None:
    """The two unconditional flows always reach the parallel join; the conditional one leaves
    for an end of its own on top of them, never instead of them."""
    doc = make(
        {"start": "startEvent", "split": "inclusiveGateway", "a": user("a"), "b": user("b"),
         "extra": user("extra"), "join": "parallelGateway", "end": "endEvent",
         "extra_end": "endEvent"},
        ("start", "split"),
        ("split", "a"),
        ("split", "b"),
        ("split", "extra", {"condition": "$input.more"}),
        ("a", "join"),
        ("b", "join"),
        ("extra", "extra_end"),
        ("join", "end"),
    )  # fmt: skip
    assert validate(doc) == []
