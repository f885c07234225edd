"""Scenarios play ad-hoc sub-processes: an `activate` action starts an activity of the running
one, as a person does; one naming anything else is refused by its step."""

from __future__ import annotations

from tests.helpers.documents import document, flow, inside, node
from webapp.engine import scenario_runner
from webapp.process import scenarios

ROLE = {"type": "role", "value": "approver"}


def _doc() -> dict:
    nodes = {
        "start": node("startEvent"),
        "work": node("adHocSubProcess", "Work"),
        "call": inside("work", "userTask", "Call", assignee=ROLE),
        "note": inside("work", "manualTask", "Note"),
        "end": node("endEvent"),
    }
    return document(nodes, {"f1": flow("start", "work"), "f2": flow("work", "end")}, key="c")


def test_a_scenario_starts_ad_hoc_activities_and_completes(app):
    body = {
        "name": "two calls",
        "actions": [
            {"do": "activate", "node": "call"},
            {"do": "activate", "node": "call"},
            {"do": "complete", "node": "call"},
            {"do": "complete", "node": "call"},
        ],
        "expect": {"status": "completed", "reached": ["call", "end"], "not_reached": ["note"]},
    }
    with app.app_context():
        result = scenario_runner.run(_doc(), scenarios.parse(body))
    assert result.passed, result.failure


def test_an_activate_action_names_an_activity_of_an_ad_hoc_sub_process():
    stale = scenarios.parse({"name": "x", "actions": [{"do": "activate", "node": "end"}]})
    assert scenarios.problems_against(stale, _doc()) == [
        "actions[0].node: no activity 'end' an ad-hoc sub-process of this draft starts"
    ]
    bad = {"name": "x", "actions": [{"do": "activate", "node": "call", "data": {}}]}
    try:
        scenarios.parse(bad)
    except scenarios.ScenarioError as error:
        assert "takes no data" in str(error.problems)
    else:
        raise AssertionError("an activate action takes only its node")


def test_an_activate_action_round_trips_through_its_json():
    body = {"name": "x", "actions": [{"do": "activate", "node": "call"}]}
    assert scenarios.parse(body).as_dict()["actions"] == body["actions"]
