"""Play on the draft: each post replays the recorded run on a throw-away database and takes
one step; refused steps are named and not recorded; a run is kept as a scenario."""

import html
import json
import re

import pytest
from sqlalchemy import func, select

from tests.helpers.designer import token
from webapp.cli.demo_processes import purchase_request
from webapp.models import HistoryEntry, Instance, Job, Process, Task, TestScenario, Token
from webapp.services import scenarios as service


@pytest.fixture(autouse=True)
def _tools(app):
    """The app loads the registered tools the runner calls."""


def played(page: str) -> str:
    found = re.search(r'name="played" value="([^"]*)"', page)
    assert found, "the page carries the recorded run"
    return html.unescape(found.group(1))


def step(client, pid, run: str, op: str, **data):
    path = f"/designer/{pid}/play"
    body = {"csrf_token": token(client, path), "played": run, "op": op, **data}
    return client.post(path, data=body)


def start(client, pid, **data):
    form = {"item": "Desk", "amount": "300", "reviewers": ["alice", "bob"], **data}
    return step(client, pid, "", "start", **form)


def open_tasks(run: str, page: str) -> list[str]:
    return re.findall(r'name="task" value="(\d+)"', page)


def counts(db_session):
    db_session.expire_all()
    return [
        db_session.scalar(select(func.count()).select_from(table))
        for table in (Instance, Token, Task, Job, HistoryEntry)
    ]


def test_playing_the_purchase_request_to_its_end_touches_no_real_table(
    designer, make_process, db_session
):
    pid = make_process(key="purchase", doc=purchase_request())
    before = counts(db_session)
    page = designer.get(f"/designer/{pid}/play").get_data(as_text=True)
    assert re.search(r'checked[^>]*value="alice"|value="alice"[^>]*checked', page)
    started = start(designer, pid)
    assert started.status_code == 200
    page = started.get_data(as_text=True)
    run = played(page)
    assert json.loads(run) == {
        "input": {"item": "Desk", "amount": 300, "reviewers": ["alice", "bob"]},
        "actions": [],
    }
    assert page.count("Complete “Review offer”") == 2
    assert '"offer": 2' in page
    [first, _] = open_tasks(run, page)
    page = step(designer, pid, run, "complete", task=first, approve="yes").get_data(as_text=True)
    run = played(page)
    [second] = open_tasks(run, page)
    page = step(designer, pid, run, "complete", task=second, approve="yes").get_data(as_text=True)
    assert "completed</span> after 2 steps" in page
    assert "decision" in page and "approved" in page
    assert [a["data"] for a in json.loads(played(page))["actions"]] == [
        {"approve": "yes"},
        {"approve": "yes"},
    ]
    assert counts(db_session) == before


def test_a_refused_form_value_is_named_and_not_recorded(designer, make_process):
    pid = make_process(key="purchase", doc=purchase_request())
    refused = start(designer, pid, amount="0")
    assert refused.status_code == 422
    assert "Amount (EUR):" in refused.get_data(as_text=True)
    page = start(designer, pid).get_data(as_text=True)
    run = played(page)
    [first, _] = open_tasks(run, page)
    response = step(designer, pid, run, "complete", task=first)
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert f'id="task-{first}-approve-msg"' in page
    assert "The step was not played: Approve the offer?:" in page
    assert json.loads(played(page))["actions"] == []


def test_undo_and_restart(designer, make_process):
    pid = make_process(key="purchase", doc=purchase_request())
    page = start(designer, pid).get_data(as_text=True)
    run = played(page)
    [first, _] = open_tasks(run, page)
    page = step(designer, pid, run, "complete", task=first, approve="no").get_data(as_text=True)
    assert len(json.loads(played(page))["actions"]) == 1
    undone = step(designer, pid, played(page), "undo").get_data(as_text=True)
    assert json.loads(played(undone))["actions"] == []
    assert undone.count("Complete “Review offer”") == 2
    path = f"/designer/{pid}/play"
    body = {"csrf_token": token(designer, path), "played": played(page), "op": "undo"}
    headers = {"HX-Request": "true", "HX-Target": "div#play-region"}
    fragment = designer.post(path, data=body, headers=headers).get_data(as_text=True)
    assert fragment.lstrip().startswith('<div id="play-region">') and "<html" not in fragment
    restarted = step(designer, pid, played(undone), "restart").get_data(as_text=True)
    assert 'id="play-start"' in restarted


def test_a_timer_fires_now_and_an_unknown_step_is_refused(designer, make_process):
    pid = make_process(key="purchase", doc=purchase_request())
    run = played(start(designer, pid).get_data(as_text=True))
    page = step(designer, pid, run, "timer", node="reminder").get_data(as_text=True)
    assert json.loads(played(page))["actions"] == [{"do": "timer", "node": "reminder"}]
    assert "<code>remind</code>" in page
    wrong = step(designer, pid, played(page), "timer", node="offer")
    assert wrong.status_code == 422
    assert "no timer &#39;offer&#39; in this draft" in wrong.get_data(as_text=True)
    assert len(json.loads(played(wrong.get_data(as_text=True)))["actions"]) == 1
    assert step(designer, pid, run, "dance").status_code == 400
    assert step(designer, pid, "{not json", "undo").status_code == 400


def test_a_tool_call_is_stubbed_with_output_or_an_error(designer, make_process):
    doc = purchase_request()
    doc["nodes"]["record"]["config"]["tool"] = "http.request"
    doc["nodes"]["record"]["config"]["inputs"] = {"url": "'https://example.org'"}
    pid = make_process(key="purchase", doc=doc)
    page = start(designer, pid, reviewers=["alice"]).get_data(as_text=True)
    run = played(page)
    [task] = open_tasks(run, page)
    page = step(designer, pid, run, "complete", task=task, approve="yes").get_data(as_text=True)
    assert "Tool call at record" in page
    run = played(page)
    bad = step(designer, pid, run, "tool", node="record", outcome="output", output="{oops")
    assert bad.status_code == 422
    assert "Output is not JSON" in bad.get_data(as_text=True)
    page = step(designer, pid, run, "tool", node="record", outcome="output",
                output='{"approved": true}').get_data(as_text=True)  # fmt: skip
    assert "completed</span>" in page
    failed = step(designer, pid, run, "tool", node="record", outcome="error", code="DOWN",
                  message="no").get_data(as_text=True)  # fmt: skip
    assert "failed</span>" in failed
    assert json.loads(played(failed))["actions"][-1]["error"]["code"] == "DOWN"


def test_save_as_scenario_then_it_passes(designer, make_process, db_session):
    pid = make_process(key="purchase", doc=purchase_request())
    page = start(designer, pid, reviewers=["alice"]).get_data(as_text=True)
    run = played(page)
    [task] = open_tasks(run, page)
    run = played(step(designer, pid, run, "complete", task=task, approve="yes").get_data(
        as_text=True))  # fmt: skip
    path = f"/designer/{pid}/play"
    response = designer.post(
        f"{path}/save",
        data={"csrf_token": token(designer, path), "played": run, "scenario_name": "Played"},
    )
    assert response.status_code == 302
    row = db_session.scalar(select(TestScenario).where(TestScenario.process_id == pid))
    assert response.headers["Location"].endswith(f"/designer/{pid}/scenarios/{row.id}")
    assert row.body["expect"] == {"status": "completed"}
    [(_, result)] = service.run_all(db_session.get(Process, pid))
    assert result.passed, result.failure
    again = designer.post(
        f"{path}/save",
        data={"csrf_token": token(designer, path), "played": run, "scenario_name": "Played"},
    )
    assert again.status_code == 422
    assert "another scenario is named" in again.get_data(as_text=True)


def test_play_needs_processes_edit_in_the_partition(designer, user_with, make_process):
    pid = make_process(key="purchase", doc=purchase_request())
    path = f"/designer/{pid}/play"
    assert designer.post(path, data={"op": "start"}).status_code == 400
    outsider = user_with(["processes.edit"], ["hr"])
    assert outsider.get(path).status_code == 404
    csrf = token(outsider, "/designer/")
    assert outsider.post(path, data={"csrf_token": csrf, "op": "start"}).status_code == 404
    assert outsider.post(f"{path}/save", data={"csrf_token": csrf}).status_code == 404
    reader = user_with(["instances.read"], ["finance"])
    assert reader.get(path).status_code == 403


def test_messages_signals_and_business_errors_are_played_or_refused_by_name(designer, make_process):
    pid = make_process(key="purchase", doc=purchase_request())
    run = played(start(designer, pid).get_data(as_text=True))
    nothing = step(designer, pid, run, "message", name="paid", key="7", payload='{"x": 1}')
    assert nothing.status_code == 422
    assert "nothing waits for message &#39;paid&#39;" in nothing.get_data(as_text=True)
    unnamed = step(designer, pid, run, "signal", name="", payload="")
    assert unnamed.status_code == 422
    assert "Name: give the signal&#39;s name." in unnamed.get_data(as_text=True)
    silent = step(designer, pid, run, "signal", name="stop")
    assert "nothing waits for signal &#39;stop&#39;" in silent.get_data(as_text=True)
    no_code = step(designer, pid, run, "error", node="offer", code="")
    assert no_code.status_code == 422
    reported = step(designer, pid, run, "error", node="offer", code="NO_BUDGET")
    page = reported.get_data(as_text=True)
    assert reported.status_code == 200
    assert json.loads(played(page))["actions"] == [
        {"do": "error", "node": "offer", "code": "NO_BUDGET"}
    ]


def test_a_draft_that_cannot_start_says_why_and_records_nothing(designer, make_process):
    doc = purchase_request()
    del doc["nodes"]["requested"]
    del doc["flows"]["f1"]
    pid = make_process(key="nostart", doc=doc)
    assert "The start event has no form" in designer.get(f"/designer/{pid}/play").get_data(
        as_text=True
    )
    response = start(designer, pid)
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert 'id="play-refused"' in page and 'id="play-start"' in page
