"""The structured scenario form: field rows for the start input, actions and checks, rows added
and removed by plain buttons, the JSON view as an alternative, both saved through one check."""

import json

import pytest
from sqlalchemy import func, select

from tests.helpers.designer import token
from tests.helpers.documents import simple
from webapp.cli.demo_processes import purchase_request
from webapp.models import TestScenario

INPUT = {"item": "Desk", "amount": "300", "reviewers": ["alice", "bob"]}


@pytest.fixture(autouse=True)
def _tools(app):
    """The app loads the registered tools the runner calls."""


def _form(**extra) -> dict:
    """A posted form for the purchase request: both reviewers approve, then the checks."""
    data = {
        "name": "Both approve", **INPUT, "actions": "2", "checks": "1", "values": "1",
        "a0-do": "complete", "a0-node": "offer", "a0-data": '{"approve": "yes"}',
        "a1-do": "complete", "a1-node": "offer", "a1-data": '{"approve": "yes"}',
        "status": "completed", "c0-kind": "reached", "c0-node": "record",
        "v0-expression": "$vars.decision.approved", "v0-expected": "true",
    }  # fmt: skip
    data.update(extra)
    return data


def _post(client, pid, data, path=None):
    path = path or f"/designer/{pid}/scenarios/new"
    return client.post(path, data={"csrf_token": token(client, path), **data})


def test_the_form_lists_the_drafts_nodes_by_kind_and_the_start_forms_fields(designer, make_process):
    pid = make_process(key="purchase", doc=purchase_request())
    page = designer.get(f"/designer/{pid}/scenarios/new").get_data(as_text=True)
    assert 'for="scenario-name"' in page and "Reviewers" in page
    added = _post(designer, pid, _form(op="add-action")).get_data(as_text=True)
    assert 'id="action-2"' in added and 'name="actions" value="3"' in added
    node_select = added.split('id="a2-node"', 1)[1].split("</select>", 1)[0]
    assert "Review offer (offer)" in node_select and 'value="record"' not in node_select
    assert 'value="alice" checked' in added or "alice" in added


def test_a_scenario_saved_from_the_form_is_the_json_the_format_reads(
    designer, make_process, db_session
):
    pid = make_process(key="purchase", doc=purchase_request())
    assert _post(designer, pid, _form()).status_code == 302
    row = db_session.scalar(select(TestScenario))
    assert row.body == {
        "name": "Both approve",
        "input": {"item": "Desk", "amount": 300, "reviewers": ["alice", "bob"]},
        "actions": [
            {"do": "complete", "node": "offer", "data": {"approve": "yes"}},
            {"do": "complete", "node": "offer", "data": {"approve": "yes"}},
        ],
        "expect": {"status": "completed", "reached": ["record"],
                   "values": {"$vars.decision.approved": True}},
    }  # fmt: skip
    path = f"/designer/{pid}/scenarios/{row.id}/form"
    page = designer.get(path).get_data(as_text=True)
    assert 'value="Both approve"' in page and "{&#34;approve&#34;: &#34;yes&#34;}" in page
    renamed = _post(designer, pid, _form(name="Renamed", remove="action-1"), path=path)
    assert renamed.status_code == 200
    assert 'name="actions" value="1"' in renamed.get_data(as_text=True)
    assert _post(designer, pid, _form(name="Renamed", op="save"), path=path).status_code == 302
    db_session.expire_all()
    assert db_session.get(TestScenario, row.id).name == "Renamed"


def test_bad_rows_are_refused_naming_the_step_and_nothing_is_saved(
    designer, make_process, db_session
):
    pid = make_process(key="purchase", doc=purchase_request())
    cases = [
        (_form(**{"a1-data": "{approve"}), "actions[1].data: not JSON at column 2"),
        (_form(**{"a0-node": "record"}), "actions[0].node: no user task &#39;record&#39;"),
        (_form(**{"v0-expected": "yes please"}), "expect.values[&#39;$vars.decision.approved"),
        (_form(amount="lots"), "input.amount: Amount (EUR)"),
        (_form(**{"a0-do": "message"}), "actions[0].name: a non-empty text is required"),
        (_form(name=""), "scenario.name: a non-empty text is required"),
    ]  # fmt: skip
    for data, message in cases:
        answer = _post(designer, pid, data)
        assert answer.status_code == 422, message
        assert message in answer.get_data(as_text=True)
    assert db_session.scalar(select(func.count()).select_from(TestScenario)) == 0
    assert _post(designer, pid, _form(actions="many")).status_code == 400
    assert designer.post(f"/designer/{pid}/scenarios/new", data=_form()).status_code == 400


def test_the_form_and_the_json_view_switch_both_ways(designer, make_process):
    pid = make_process(key="purchase", doc=purchase_request())
    as_json = _post(designer, pid, _form(op="json")).get_data(as_text=True)
    assert "Scenario (JSON)" in as_json and "&#34;$vars.decision.approved&#34;: true" in as_json
    body = {
        "name": "From JSON",
        "input": {"item": "Desk"},
        "actions": [{"do": "timer", "node": "remind"}],
        "expect": {"not_reached": ["record"]},
    }
    back = _post(designer, pid, {"op": "from-json", "body": json.dumps(body)})
    page = back.get_data(as_text=True)
    assert back.status_code == 200 and 'value="From JSON"' in page
    assert '<option value="timer" selected>' in page
    assert '<option value="not_reached" selected>' in page
    odd = {"name": "Odd", "actions": "x", "expect": {"values": [1], "reached": "record"}}
    shown = _post(designer, pid, {"op": "from-json", "body": json.dumps(odd)})
    assert shown.status_code == 200 and 'name="actions" value="0"' in shown.get_data(as_text=True)
    broken = _post(designer, pid, {"op": "from-json", "body": "{nope"})
    assert broken.status_code == 422 and "not JSON at line 1" in broken.get_data(as_text=True)


def test_without_a_start_form_the_input_is_json(designer, make_process):
    pid = make_process(key="plain", doc=simple())
    page = designer.get(f"/designer/{pid}/scenarios/new").get_data(as_text=True)
    assert "Start input (JSON)" in page
    answer = _post(designer, pid, {"name": "x", "input-json": "[1]", "actions": "0",
                                   "checks": "0", "values": "0"})  # fmt: skip
    assert answer.status_code == 422
    assert "input: an object is required" in answer.get_data(as_text=True)


def test_only_modellers_of_the_partition_reach_the_form(designer, make_process, user_with):
    pid = make_process(key="purchase", doc=purchase_request())
    outsider = user_with(["processes.edit"], ["hr"])
    assert outsider.get(f"/designer/{pid}/scenarios/new").status_code == 404
    assert designer.get(f"/designer/{pid}/scenarios/999999/form").status_code == 404
