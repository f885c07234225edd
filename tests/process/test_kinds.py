"""Tests for the node-kind registry."""

from __future__ import annotations

import pytest

from webapp.process.kinds import (
    BOUNDARY_EVENTS,
    END_EVENTS,
    EVENT_DEFINITIONS,
    EVENT_GATEWAY_TARGETS,
    EVENT_KINDS,
    KIND_EVENT,
    KINDS,
    PROCESS_START_EVENTS,
    config_type_ok,
    default_size,
    element_kind,
    get_kind,
)


def test_registry_lists_the_contract_kinds() -> None:
    assert set(KINDS) == {
        "startEvent",
        "endEvent",
        "userTask",
        "serviceTask",
        "exclusiveGateway",
        "parallelGateway",
        "timerCatch",
        "messageCatch",
        "subProcess",
        "eventSubProcess",
        "callActivity",
        "boundaryEvent",
        "escalationThrow",
        "inclusiveGateway",
        "eventBasedGateway",
        "signalCatch",
        "conditionalCatch",
        "signalThrow",
        "messageThrow",
        "linkThrow",
        "linkCatch",
        "milestone",
        "sendTask",
        "receiveTask",
        "scriptTask",
        "manualTask",
        "businessRuleTask",
        "compensationThrow",
        "transaction",
        "complexGateway",
        "adHocSubProcess",
    }
    assert all(kind.name == name for name, kind in KINDS.items())


def test_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        KINDS["ruleTask"] = KINDS["userTask"]  # type: ignore[index]
    with pytest.raises(TypeError):
        KINDS["serviceTask"].defaults["retries"] = 5  # type: ignore[index]


@pytest.mark.parametrize(
    ("name", "role", "flows"),
    [
        ("startEvent", "event", (0, 0, 1, 1)),
        ("endEvent", "event", (1, None, 0, 0)),
        ("userTask", "task", (1, None, 1, 1)),
        ("serviceTask", "task", (1, None, 1, 1)),
        ("exclusiveGateway", "gateway", (1, None, 1, None)),
        ("parallelGateway", "gateway", (1, None, 1, None)),
        ("timerCatch", "event", (1, None, 1, 1)),
        ("messageCatch", "event", (1, None, 1, 1)),
    ],
)
def test_roles_and_flow_counts(name: str, role: str, flows: tuple) -> None:
    kind = KINDS[name]
    assert kind.role == role
    assert (kind.min_in, kind.max_in, kind.min_out, kind.max_out) == flows


def test_config_keys_follow_the_contract() -> None:
    assert KINDS["userTask"].config_keys == (
        "assignee",
        "candidates",
        "form",
        "dueIn",
        "saveTo",
        "multiInstance",
        "loop",
    )
    assert set(KINDS["serviceTask"].config_keys) == {
        "tool",
        "inputs",
        "saveTo",
        "retries",
        "backoff",
        "timeout",
        "multiInstance",
        "loop",
    }
    assert KINDS["timerCatch"].config_keys == ("duration", "date", "cycle")
    assert KINDS["complexGateway"].config_keys == ("activation",)
    assert KINDS["messageCatch"].config_keys == ("message", "correlationKey", "saveTo")
    assert set(KINDS["endEvent"].config_keys) == {
        "event",
        "code",
        "signal",
        "payload",
        "message",
        *KINDS["serviceTask"].defaults,
        "tool",
        "saveTo",
        "activity",
        "waitForCompletion",
    }
    assert KINDS["scriptTask"].config_keys == (
        "script",
        "language",
        "multiInstance",
        "emptyInFile",
        "loop",
    )
    assert KINDS["conditionalCatch"].config_keys == ("condition", "watch")
    assert KINDS["scriptTask"].defaults == {"language": "flowdesk"}
    assert KINDS["linkThrow"].max_out == 0 and KINDS["linkCatch"].max_in == 0
    assert KINDS["eventBasedGateway"].min_out == 2
    assert KINDS["boundaryEvent"].defaults == {"interrupting": True}
    assert KINDS["callActivity"].defaults == {"binding": "latest", "inputs": {}}


def test_service_task_defaults_and_with_defaults() -> None:
    kind = KINDS["serviceTask"]
    assert dict(kind.defaults) == {"inputs": {}, "retries": 3, "backoff": 2.0, "timeout": 30}
    merged = kind.with_defaults({"tool": "mail", "retries": 0})
    assert merged == {"inputs": {}, "retries": 0, "backoff": 2.0, "timeout": 30, "tool": "mail"}
    assert KINDS["userTask"].with_defaults(None) == {}


def test_default_sizes() -> None:
    assert default_size("startEvent") == (36, 36)
    assert default_size("timerCatch") == (36, 36)
    assert default_size("userTask") == (100, 80)
    assert default_size("parallelGateway") == (50, 50)
    assert default_size("unknownKind") == (100, 80)


def test_config_type_ok() -> None:
    service = KINDS["serviceTask"]
    assert config_type_ok(service, "retries", 3)
    assert not config_type_ok(service, "retries", 3.0)
    assert not config_type_ok(service, "retries", True)
    assert config_type_ok(service, "backoff", 1)
    assert config_type_ok(service, "backoff", 0.5)
    assert not config_type_ok(service, "timeout", "30")
    assert config_type_ok(service, "tool", None)
    assert config_type_ok(service, "undeclared", object())


def test_get_kind() -> None:
    assert get_kind("userTask") is KINDS["userTask"]
    assert get_kind("nope") is None
    assert KINDS["userTask"].label == "User task"


def test_each_kind_names_its_bpmn_element_and_event_definition() -> None:
    table = {name: (kind.element, kind.event) for name, kind in KINDS.items()}
    assert table == {
        "startEvent": ("startEvent", None),
        "endEvent": ("endEvent", None),
        "boundaryEvent": ("boundaryEvent", None),
        "userTask": ("userTask", None),
        "serviceTask": ("serviceTask", None),
        "sendTask": ("sendTask", None),
        "receiveTask": ("receiveTask", None),
        "scriptTask": ("scriptTask", None),
        "manualTask": ("manualTask", None),
        "businessRuleTask": ("businessRuleTask", None),
        "exclusiveGateway": ("exclusiveGateway", None),
        "parallelGateway": ("parallelGateway", None),
        "inclusiveGateway": ("inclusiveGateway", None),
        "eventBasedGateway": ("eventBasedGateway", None),
        "complexGateway": ("complexGateway", None),
        "adHocSubProcess": ("adHocSubProcess", None),
        "subProcess": ("subProcess", None),
        "eventSubProcess": ("subProcess", None),
        "callActivity": ("callActivity", None),
        "timerCatch": ("intermediateCatchEvent", "timer"),
        "messageCatch": ("intermediateCatchEvent", "message"),
        "signalCatch": ("intermediateCatchEvent", "signal"),
        "conditionalCatch": ("intermediateCatchEvent", "conditional"),
        "linkCatch": ("intermediateCatchEvent", "link"),
        "signalThrow": ("intermediateThrowEvent", "signal"),
        "messageThrow": ("intermediateThrowEvent", "message"),
        "linkThrow": ("intermediateThrowEvent", "link"),
        "escalationThrow": ("intermediateThrowEvent", "escalation"),
        "milestone": ("intermediateThrowEvent", ""),
        "compensationThrow": ("intermediateThrowEvent", "compensate"),
        "transaction": ("transaction", None),
    }
    assert {name for name, kind in KINDS.items() if kind.message_ref} == {"sendTask", "receiveTask"}


def test_an_element_is_told_from_another_kind_of_it_by_its_marks() -> None:
    assert element_kind("subProcess", {"triggeredByEvent": "true"}) == "eventSubProcess"
    assert element_kind("subProcess", {"triggeredByEvent": "false"}) == "subProcess"
    assert element_kind("subProcess", {}) == "subProcess"
    assert element_kind("callActivity", {}) == "callActivity"
    assert element_kind("complexGateway", {}) == "complexGateway"
    assert element_kind("choreographyTask", {}) is None
    assert element_kind("intermediateCatchEvent", {}) is None


def test_intermediate_events_are_found_by_element_and_definition() -> None:
    assert EVENT_KINDS[("intermediateCatchEvent", ("timer",))] == "timerCatch"
    assert EVENT_KINDS[("intermediateThrowEvent", ())] == "milestone"
    assert ("intermediateCatchEvent", ()) not in EVENT_KINDS
    assert KIND_EVENT["linkThrow"] == "link"
    assert "milestone" not in KIND_EVENT


def test_every_kind_without_a_fixed_event_is_found_from_its_element() -> None:
    for name, kind in KINDS.items():
        if kind.role != "event":
            assert element_kind(kind.element, kind.marks) == name


def test_palette_entries_have_one_place_each_and_events_their_kind_takes() -> None:
    entries = [(name, entry) for name, kind in KINDS.items() for entry in kind.palette]
    assert len({entry.action for _, entry in entries}) == len(entries)
    assert len({entry.order for _, entry in entries}) == len(entries)
    allowed = {
        "startEvent": ("", *PROCESS_START_EVENTS),
        "endEvent": END_EVENTS,
        "boundaryEvent": BOUNDARY_EVENTS,
    }
    for name, entry in entries:
        assert entry.event in allowed.get(name, ("",)), (name, entry.action)
        assert entry.start_inside in (None, "", *EVENT_DEFINITIONS)
    ordered = sorted((entry for _, entry in entries), key=lambda entry: entry.order)
    groups = [entry.group for entry in ordered]
    assert groups == sorted(groups, key=groups.index), "each group's entries come together"


def test_each_replace_menu_target_makes_one_kind() -> None:
    targets = [t for kind in KINDS.values() for t in (*kind.replace, *kind.scoped_replace)]
    assert len(set(targets)) == len(targets)
    assert "error-start" in KINDS["startEvent"].scoped_replace
    assert "non-interrupting-error-boundary" not in KINDS["boundaryEvent"].replace


def test_event_gateway_targets_wait_for_the_event_of_their_kind() -> None:
    catches = {"timerCatch", "messageCatch", "signalCatch", "conditionalCatch"}
    assert set(EVENT_GATEWAY_TARGETS) == {*catches, "receiveTask"}
    for kind, event in EVENT_GATEWAY_TARGETS.items():
        assert event == (KIND_EVENT.get(kind) or ("message" if KINDS[kind].message_ref else ""))
