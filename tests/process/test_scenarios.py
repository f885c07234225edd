"""The scenario format: read from JSON, every problem naming its step; checked against a draft."""

import pytest

from tests.helpers.documents import document, flow, node
from webapp.process.scenarios import ScenarioError, check, parse


def purchase_request() -> dict:
    """The demo Purchase request's shape, without loading the app."""
    nodes = {
        "requested": node("startEvent"),
        "offer": node("userTask", "Review offer"),
        "reminder": node("boundaryEvent", attachedTo="offer", event="timer", duration="P1D",
                         interrupting=False),
        "remind": node("serviceTask", tool="email.send", inputs={"to": "'a@example.org'"}),
        "reminded": node("endEvent"),
        "record": node("serviceTask", tool="vars.set", inputs={"a": "1"}),
        "decided": node("endEvent"),
    }  # fmt: skip
    flows = {
        "f1": flow("requested", "offer"),
        "f2": flow("offer", "record"),
        "f3": flow("record", "decided"),
        "f4": flow("reminder", "remind"),
        "f5": flow("remind", "reminded"),
    }
    return document(nodes, flows)


GOOD = {
    "name": "Both approve",
    "input": {"item": "Desk", "amount": 100, "reviewers": ["alice", "bob"]},
    "actions": [
        {"do": "complete", "node": "offer", "data": {"approve": "yes"}},
        {"do": "tool", "node": "remind", "output": {"sent": True}},
        {"do": "tool", "node": "remind", "error": {"code": "DOWN", "business": True}},
        {"do": "message", "name": "paid", "key": "42", "payload": {"x": 1}},
        {"do": "signal", "name": "stop"},
        {"do": "timer", "node": "reminder"},
        {"do": "error", "node": "offer", "code": "REJECTED"},
    ],
    "expect": {
        "status": "completed",
        "reached": ["record"],
        "not_reached": ["reminded"],
        "values": {"$vars.decision.approved": True},
    },
}


def test_a_good_scenario_reads_and_writes_back_the_same():
    scenario = check(GOOD, purchase_request())
    assert [a.do for a in scenario.actions] == [
        "complete", "tool", "tool", "message", "signal", "timer", "error"
    ]  # fmt: skip
    assert parse(scenario.as_dict()) == scenario


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"name": ""}, "scenario.name: a non-empty text is required"),
        ({"actions": "x"}, "actions: a list is required"),
        ({"actions": [{"do": "jump"}]}, "actions[0].do: must be one of complete, tool"),
        ({"actions": [{"do": "complete"}]}, "actions[0].node: a non-empty text is required"),
        (
            {"actions": [{"do": "timer", "node": "t", "data": {}}]},
            "actions[0]: 'timer' takes no data",
        ),
        (
            {"actions": [{"do": "tool", "node": "t", "output": 1, "error": {"code": "X"}}]},
            "actions[0]: give an output or an error, not both",
        ),
        ({"expect": {"status": "done"}}, "expect.status: must be one of completed"),
        ({"expect": {"values": {"$vars.(": 1}}}, "expect.values['$vars.(']:"),
        ({"input": [1]}, "input: an object is required, not list"),
    ],
)
def test_bad_input_names_the_step(change, problem):
    with pytest.raises(ScenarioError) as caught:
        parse({**GOOD, **change})
    assert any(p.startswith(problem) for p in caught.value.problems), caught.value.problems


def test_an_action_on_a_node_the_draft_lacks_names_it():
    raw = {**GOOD, "actions": [*GOOD["actions"][:3], {"do": "complete", "node": "approve"}]}
    with pytest.raises(ScenarioError) as caught:
        check(raw, purchase_request())
    assert caught.value.problems == ["actions[3].node: no user task 'approve' in this draft"]


def test_actions_on_nodes_of_the_wrong_kind_and_unknown_expected_nodes_are_named():
    raw = {
        **GOOD,
        "actions": [{"do": "timer", "node": "offer"}, {"do": "tool", "node": "offer"}],
        "expect": {"reached": ["gone"]},
    }
    with pytest.raises(ScenarioError) as caught:
        check(raw, purchase_request())
    assert caught.value.problems == [
        "actions[0].node: no timer 'offer' in this draft",
        "actions[1].node: no service task 'offer' in this draft",
        "expect.reached: no node 'gone' in this draft",
    ]


def test_with_a_call_activity_an_action_may_answer_a_node_of_the_called_process():
    doc = purchase_request()
    doc["nodes"]["check"] = node("callActivity", "Check supplier", process="supplier")
    raw = {**GOOD, "actions": [{"do": "complete", "node": "confirm"},
                               {"do": "timer", "node": "offer"}]}  # fmt: skip
    with pytest.raises(ScenarioError) as caught:
        check(raw, doc)
    assert caught.value.problems == ["actions[1].node: no timer 'offer' in this draft"]
    check({**raw, "actions": raw["actions"][:1]}, doc)
