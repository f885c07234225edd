"""Test scenarios: played on the draft with the real engine in a throw-away database; kept with
the process, run from its page, exported and imported, and a gate before publishing."""

import copy
import json

import pytest
from sqlalchemy import func, select

from tests.helpers.designer import finance, get_process, publish, token, upload, versions
from tests.helpers.documents import caller_doc, chain, child_doc, node, simple
from webapp.cli.demo_processes import purchase_request
from webapp.engine.scenario_runner import run
from webapp.models import (
    HistoryEntry,
    Instance,
    Job,
    OutboxMessage,
    Process,
    Task,
    TestScenario,
    Token,
)
from webapp.process.scenarios import parse
from webapp.services.scenarios import published

INPUT = {"item": "Desk", "amount": 300, "reviewers": ["alice", "bob"]}


def both(answer_a: str, answer_b: str, **expect) -> dict:
    return {
        "name": f"Reviews {answer_a} and {answer_b}",
        "input": INPUT,
        "actions": [
            {"do": "complete", "node": "offer", "data": {"approve": answer_a}},
            {"do": "complete", "node": "offer", "data": {"approve": answer_b}},
        ],
        "expect": {"status": "completed", "reached": ["record", "decided"], **expect},
    }


APPROVED = both("yes", "yes", values={"$vars.decision.approved": True})


@pytest.fixture(autouse=True)
def _tools(app):
    """The app loads the registered tools the runner calls."""


def test_a_scenario_over_the_purchase_request_passes_with_what_it_walked():
    result = run(purchase_request(), parse(APPROVED))
    assert result.passed, result.failure
    assert result.status == "completed"
    assert result.variables["decision"] == {"approved": True}
    assert {"requested", "offer", "record", "decided"} <= result.nodes_walked
    assert "remind" not in result.nodes_walked
    assert {"f1", "f2", "f6", "f7"} <= result.flows_walked


def test_a_wrong_expectation_fails_naming_it_and_shows_the_state():
    scenario = both("yes", "no", values={"$vars.decision.approved": True})
    result = run(purchase_request(), parse(scenario))
    assert not result.passed
    assert result.failure.step == "expect.values['$vars.decision.approved']"
    assert result.failure.reason == "expected True, got False"
    assert result.variables["reviews"] == ["yes", "no"]


def test_timers_fire_on_the_scenarios_clock_and_no_mail_is_sent(db_session):
    outbox = db_session.scalar(select(func.count()).select_from(OutboxMessage))
    scenario = {
        "name": "Reminded twice",
        "input": INPUT,
        "actions": [
            {"do": "timer", "node": "reminder"},
            {"do": "timer", "node": "reminder"},
            {"do": "complete", "node": "offer", "data": {"approve": "yes"}},
        ],
        "expect": {"status": "waiting", "reached": ["remind", "reminded"]},
    }
    result = run(purchase_request(), parse(scenario))
    assert result.passed, result.failure
    assert [h["kind"] for h in result.history].count("timer") == 2
    assert "offer" in {wait["node"] for wait in result.waits}
    assert db_session.scalar(select(func.count()).select_from(OutboxMessage)) == outbox


def test_an_action_the_instance_is_not_ready_for_fails_at_that_step():
    scenario = {**APPROVED, "actions": [*APPROVED["actions"], APPROVED["actions"][0]]}
    result = run(purchase_request(), parse(scenario))
    assert result.failure.step == "actions[2]"
    assert result.failure.reason == "no open task at 'offer'; the instance is completed"


def test_a_removed_task_fails_the_scenario_naming_it():
    doc = purchase_request()
    del doc["nodes"]["offer"]
    doc["flows"] = {k: f for k, f in doc["flows"].items() if "offer" not in f.values()}
    result = run(doc, parse(APPROVED))
    assert not result.passed
    assert result.failure.step == "actions[0].node"
    assert result.failure.reason == "no user task 'offer' in this draft"


def test_a_business_error_from_a_stubbed_tool_and_a_partial_play():
    doc = purchase_request()
    doc["nodes"]["record"]["config"]["tool"] = "http.request"
    doc["nodes"]["record"]["config"]["inputs"] = {"url": "'https://example.org'"}
    stub = {"do": "tool", "node": "record", "error": {"code": "DOWN", "message": "no"}}
    scenario = {**APPROVED, "actions": [*APPROVED["actions"], stub], "expect": {}}
    partial = run(doc, parse(scenario), upto=2)
    assert partial.passed and partial.actions_played == 2
    first = run(doc, parse(scenario), upto=1)
    [task] = [wait for wait in first.waits if "task" in wait]
    assert task["node"] == "offer" and task["title"] == "Review offer"
    assert task["form"]["fields"][2]["key"] == "approve"
    assert any(w.get("job") == "tool" and w["node"] == "record" for w in partial.waits)
    failed = run(doc, parse({**scenario, "expect": {"status": "failed"}}))
    assert failed.passed, failed.failure
    answered = run(doc, parse({**APPROVED, "actions": [*APPROVED["actions"],
                   {"do": "tool", "node": "record", "output": {"approved": True}}]}))  # fmt: skip
    assert answered.passed, answered.failure


def _counts(db_session):
    db_session.expire_all()
    return [
        db_session.scalar(select(func.count()).select_from(table))
        for table in (Instance, Token, Task, Job, HistoryEntry)
    ]


def _save(client, pid, body, path=None):
    path = path or f"/designer/{pid}/scenarios"
    text = body if isinstance(body, str) else json.dumps(body)
    return client.post(path, data={"csrf_token": token(client, path), "body": text})


def _run_all(client, pid):
    path = f"/designer/{pid}/scenarios"
    return client.post(
        f"{path}/run", data={"csrf_token": token(client, path), "revision": "0"}
    ).get_data(as_text=True)


def test_scenarios_saved_and_run_from_the_page_leave_the_real_tables_alone(
    designer, make_process, db_session
):
    pid = make_process(key="purchase", doc=purchase_request())
    assert _save(designer, pid, APPROVED).status_code == 302
    assert _save(designer, pid, both("yes", "no")).status_code == 302
    before = _counts(db_session)
    page = _run_all(designer, pid)
    assert page.count("passed</span>") == 2
    assert "Coverage: 70%" in page and "(7 of 10)" in page
    assert _counts(db_session) == before


def test_bad_scenarios_are_refused_naming_the_step(designer, make_process, db_session):
    pid = make_process(key="purchase", doc=purchase_request())
    bad = {**APPROVED, "actions": [{"do": "complete", "node": "approve"}]}
    response = _save(designer, pid, bad)
    assert response.status_code == 422
    assert "actions[0].node: no user task &#39;approve&#39; in this draft" in response.get_data(
        as_text=True
    )
    response = _save(designer, pid, '{"name": ')
    assert response.status_code == 422
    assert "not JSON at line 1, column 10" in response.get_data(as_text=True)
    assert _save(designer, pid, APPROVED).status_code == 302
    same = _save(designer, pid, APPROVED)
    assert same.status_code == 422
    assert "another scenario is named" in same.get_data(as_text=True)
    assert db_session.scalar(select(func.count()).select_from(TestScenario)) == 1


def test_a_failing_scenario_blocks_publishing_unless_a_reason_is_given(
    designer, make_process, db_session
):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, both("yes", "no", values={"$vars.decision.approved": True}))
    refused = publish(designer, pid)
    page = refused.get_data(as_text=True)
    assert refused.status_code == 422
    assert "1 test scenario fails" in page
    assert "expected True, got False" in page
    assert versions(db_session, pid) == []
    path = f"/designer/{pid}/publish"
    allowed = designer.post(
        path,
        data={"csrf_token": token(designer, path), "note": "v1", "revision": 1,
              "override": "The rule changes next week"},
    )  # fmt: skip
    assert allowed.status_code == 302
    [version] = versions(db_session, pid)
    assert version.scenarios_override == "The rule changes next week"
    page = designer.get(f"/designer/{pid}/versions/1").get_data(as_text=True)
    assert "Published although test scenarios failed, because" in page


def test_passing_scenarios_let_publishing_through(designer, make_process, db_session):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, APPROVED)
    assert publish(designer, pid).status_code == 302
    assert versions(db_session, pid)[0].scenarios_override is None


def test_scenarios_travel_with_the_json_export_and_import(designer, make_process, db_session):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, APPROVED)
    exported = json.loads(designer.get(f"/designer/{pid}/draft.json").get_data())
    assert [s["name"] for s in exported["scenarios"]] == ["Reviews yes and yes"]
    other = make_process(key="other", doc=purchase_request())
    path = f"/designer/{other}/import"
    response = upload(designer, path, json.dumps(exported).encode(), "p.json", revision="1")
    assert response.status_code == 302, response.get_data(as_text=True)
    db_session.expire_all()
    rows = db_session.scalars(select(TestScenario).where(TestScenario.process_id == other)).all()
    assert [row.body for row in rows] == exported["scenarios"]
    assert "scenarios" not in get_process(db_session, other).draft_document
    broken = copy.deepcopy(exported)
    broken["scenarios"][0]["actions"][0]["do"] = "jump"
    response = upload(designer, path, json.dumps(broken).encode(), "p.json", revision="2")
    assert response.status_code == 422
    assert "scenarios[0] actions[0].do" in response.get_data(as_text=True)
    assert get_process(db_session, other).draft_revision == 2


def test_the_cli_runs_scenarios_and_exits_non_zero_on_failure(
    app, designer, make_process, tmp_path
):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, APPROVED)
    runner = app.test_cli_runner()
    passed = runner.invoke(args=["scenarios", "run", "--process", "purchase"])
    assert passed.exit_code == 0, passed.output
    assert "PASS purchase: Reviews yes and yes" in passed.output
    exported = json.loads(designer.get(f"/designer/{pid}/draft.json").get_data())
    exported["scenarios"].append(both("yes", "no", values={"$vars.decision.approved": True}))
    path = tmp_path / "purchase.json"
    path.write_text(json.dumps(exported))
    failed = runner.invoke(args=["scenarios", "run", str(path)])
    assert failed.exit_code == 1
    assert "FAIL " in failed.output and "expected True, got False" in failed.output
    assert "1 passed, 1 failed" in failed.output
    missing = runner.invoke(args=["scenarios", "run", "--process", "nope"])
    assert missing.exit_code != 0 and "no process with the key 'nope'" in missing.output


def test_form_data_is_checked_by_the_form_as_the_inbox_would():
    missing = {**APPROVED, "actions": [{"do": "complete", "node": "offer", "data": {}}]}
    result = run(purchase_request(), parse(missing))
    assert result.failure.step == "actions[0]"
    assert result.failure.reason.startswith("the form refuses the data: approve: ")
    no_item = {**APPROVED, "input": {"amount": 5, "reviewers": ["alice"]}}
    result = run(purchase_request(), parse(no_item))
    assert result.failure.step == "input"
    assert result.failure.reason.startswith("the form refuses the data: item: ")


def test_messages_signals_and_event_gateway_timers_move_the_instance():
    paid = {"do": "message", "name": "paid", "key": "42", "payload": {"sum": 7}}
    scenario = {
        "name": "Paid",
        "input": {"order": "42"},
        "actions": [paid],
        "expect": {"status": "completed", "reached": ["paid_end"], "not_reached": ["late"]},
    }
    assert run(simple(), parse(scenario)).passed
    late = {**scenario, "actions": [{"do": "timer", "node": "late"}, paid],
            "expect": {"reached": ["late_end"]}}  # fmt: skip
    result = run(simple(), parse(late))
    assert result.failure.step == "actions[1]"
    assert result.failure.reason.startswith("nothing waits for message 'paid'")
    signal_doc = chain(("wait", node("signalCatch", signal="go", saveTo="got")))
    signalled = {
        "name": "Signalled",
        "actions": [{"do": "signal", "name": "go", "payload": {"n": 1}}],
        "expect": {"status": "completed", "values": {"$vars.got.n": 1}},
    }
    result = run(signal_doc, parse(signalled))
    assert result.passed, result.failure


def test_a_scenario_is_edited_and_deleted_and_only_modellers_see_them(
    designer, make_process, db_session, user_with
):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, APPROVED)
    row = db_session.scalar(select(TestScenario))
    path = f"/designer/{pid}/scenarios/{row.id}"
    assert "Reviews yes and yes" in designer.get(path).get_data(as_text=True)
    renamed = _save(designer, pid, {**APPROVED, "name": "Renamed"}, path=path)
    assert renamed.status_code == 302
    db_session.expire_all()
    assert db_session.get(TestScenario, row.id).name == "Renamed"
    assert designer.get(f"/designer/{pid}/scenarios/999999").status_code == 404
    page = f"/designer/{pid}/scenarios"
    deleted = designer.post(
        f"{path}/delete", data={"csrf_token": token(designer, page), "revision": "0"}
    )
    assert deleted.status_code == 302
    assert db_session.scalar(select(func.count()).select_from(TestScenario)) == 0
    assert designer.post(f"{path}/delete", data={"revision": "0"}).status_code == 400
    outsider = user_with(["processes.edit"], ["hr"])
    assert outsider.get(page).status_code == 404


def test_a_new_process_imported_from_json_keeps_its_scenarios(designer, make_process, db_session):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, APPROVED)
    exported = json.loads(designer.get(f"/designer/{pid}/draft.json").get_data())
    exported["key"], exported["name"] = "purchase-copy", "Purchase copy"
    response = upload(
        designer,
        "/designer/import",
        json.dumps(exported).encode(),
        "p.json",
        partition=finance(db_session),
    )
    assert response.status_code == 302, response.get_data(as_text=True)
    copy_id = db_session.scalar(select(Process.id).where(Process.key == "purchase-copy"))
    rows = db_session.scalars(select(TestScenario).where(TestScenario.process_id == copy_id)).all()
    assert [row.body for row in rows] == exported["scenarios"]
    assert "passed</span>" in _run_all(designer, copy_id)
    broken = copy.deepcopy(exported)
    broken["key"] = "purchase-broken"
    broken["scenarios"][0]["expect"]["status"] = "sideways"
    response = upload(
        designer,
        "/designer/import",
        json.dumps(broken).encode(),
        "p.json",
        partition=finance(db_session),
    )
    assert response.status_code == 422
    assert "scenarios[0] expect.status" in response.get_data(as_text=True)
    assert db_session.scalar(select(Process.id).where(Process.key == "purchase-broken")) is None


def test_coverage_is_kept_with_the_draft_until_the_draft_or_a_scenario_changes(
    designer, make_process, db_session
):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, APPROVED)
    waiting = "run the scenarios</a> to see coverage"
    assert waiting in designer.get(f"/designer/{pid}/versions").get_data(as_text=True)
    _run_all(designer, pid)
    versions_page = designer.get(f"/designer/{pid}/versions").get_data(as_text=True)
    assert "Coverage: 70%</strong>" in versions_page and "nodes (7 of 10)" in versions_page
    assert "71% of its flows (5 of 7)" in versions_page
    editor = designer.get(f"/designer/{pid}/").get_data(as_text=True)
    kept = json.loads(editor.split('id="draft-coverage">', 1)[1].split("</script>", 1)[0])
    assert {"offer", "record", "decided"} <= set(kept["nodes"])
    doc = purchase_request()
    assert set(kept["flows"]) < set(doc["flows"]) and kept["flows"]
    assert "scenarios" not in doc
    doc["nodes"]["offer"]["title"] = "Review the offer"
    path = f"/designer/{pid}/import"
    response = upload(designer, path, json.dumps(doc).encode(), "p.json", revision="1")
    assert response.status_code == 302, response.get_data(as_text=True)
    assert waiting in designer.get(f"/designer/{pid}/versions").get_data(as_text=True)
    editor = designer.get(f"/designer/{pid}/").get_data(as_text=True)
    assert 'id="draft-coverage">null<' in editor
    _run_all(designer, pid)
    assert "Coverage: 70%" in designer.get(f"/designer/{pid}/versions").get_data(as_text=True)
    _save(designer, pid, both("yes", "no"))
    assert waiting in designer.get(f"/designer/{pid}/scenarios").get_data(as_text=True)


def test_scenarios_travel_with_the_bpmn_export_and_import(designer, make_process, db_session):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, APPROVED)
    xml = designer.get(f"/designer/{pid}/draft.bpmn").get_data(as_text=True)
    assert "<flowdesk:scenarios>" in xml
    other = make_process(key="other", doc=purchase_request())
    path = f"/designer/{other}/import"
    response = upload(designer, path, xml.encode(), "p.bpmn", revision="1")
    assert response.status_code == 302, response.get_data(as_text=True)
    db_session.expire_all()
    rows = db_session.scalars(select(TestScenario).where(TestScenario.process_id == other)).all()
    assert [row.name for row in rows] == ["Reviews yes and yes"]
    assert rows[0].body == parse(APPROVED).as_dict()
    assert "scenarios" not in get_process(db_session, other).draft_document
    assert "passed</span>" in _run_all(designer, other)
    wrong_step = xml.replace('"do":"complete"', '"do":"jump"', 1)
    response = upload(designer, path, wrong_step.encode(), "p.bpmn", revision="2")
    assert response.status_code == 422
    assert "scenarios[0] actions[0].do" in response.get_data(as_text=True)
    not_a_list = xml.replace("<flowdesk:scenarios>[", "<flowdesk:scenarios>{[", 1)
    response = upload(designer, path, not_a_list.encode(), "p.bpmn", revision="2")
    assert response.status_code == 400
    assert "flowdesk:scenarios of process" in response.get_data(as_text=True)
    assert get_process(db_session, other).draft_revision == 2
    assert (
        db_session.scalar(
            select(func.count()).select_from(TestScenario).where(TestScenario.process_id == other)
        )
        == 1
    )


def _caller_scenario(**expect) -> dict:
    return {
        "name": "The child confirms",
        "input": {},
        "actions": [{"do": "complete", "node": "work", "data": {}}],
        "expect": {"status": "completed", "reached": ["call", "end"], **expect},
    }


def test_a_call_activity_runs_the_published_child_whose_task_the_scenario_answers(
    designer, make_process, db_session
):
    caller = make_process(key="caller", doc=caller_doc())
    missing = run_all_of(designer, caller, _caller_scenario())
    assert "failed</span>" in missing
    assert "the call activity &#39;call&#39; calls the process &#39;child&#39;" in missing
    child = make_process(key="child", doc=child_doc())
    assert publish(designer, child).status_code == 302
    page = _run_all(designer, caller)
    assert "passed</span>" in page, page
    result = run(caller_doc(), parse(_caller_scenario()), called=published)
    assert result.passed and result.status == "completed"
    assert {"call", "end"} <= result.nodes_walked and "work" not in result.nodes_walked
    assert db_session.scalar(select(func.count()).select_from(Instance)) == 0
    waiting = run(caller_doc(), parse({**_caller_scenario(), "actions": []}),
                  called=published)  # fmt: skip
    assert not waiting.passed and "it waits at call, work" in waiting.failure.reason
    wrong = run(caller_doc(), parse({**_caller_scenario(), "actions": [
        {"do": "complete", "node": "nowhere", "data": {}}]}),
        called=published)  # fmt: skip
    assert wrong.failure.step == "actions[0]"
    assert "no open task at 'nowhere'" in wrong.failure.reason


def run_all_of(client, pid: int, scenario: dict) -> str:
    assert _save(client, pid, scenario).status_code == 302
    return _run_all(client, pid)


def test_the_cli_runs_the_scenarios_of_an_exported_bpmn_file(app, designer, make_process, tmp_path):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, APPROVED)
    xml = designer.get(f"/designer/{pid}/draft.bpmn").get_data(as_text=True)
    path = tmp_path / "purchase.bpmn"
    path.write_text(xml)
    runner = app.test_cli_runner()
    passed = runner.invoke(args=["scenarios", "run", str(path)])
    assert passed.exit_code == 0, passed.output
    assert "PASS " in passed.output and "1 passed, 0 failed" in passed.output
    path.write_text(xml.replace("<flowdesk:scenarios>[", "<flowdesk:scenarios>{", 1))
    broken = runner.invoke(args=["scenarios", "run", str(path)])
    assert broken.exit_code != 0
    assert "flowdesk:scenarios of process" in broken.output and "(line " in broken.output


def test_publishing_keeps_the_coverage_of_its_scenario_run(designer, make_process):
    pid = make_process(key="purchase", doc=purchase_request())
    _save(designer, pid, APPROVED)
    assert publish(designer, pid).status_code == 302
    page = designer.get(f"/designer/{pid}/versions").get_data(as_text=True)
    assert "Coverage: 70%</strong>" in page


def _state_of(page: str, scenario_id: int) -> dict:
    marker = f'<script type="application/json" id="failed-{scenario_id}-state">'
    return json.loads(page.split(marker, 1)[1].split("</script>", 1)[0])


def test_a_failed_result_shows_the_tokens_and_variables_where_it_stopped(
    designer, make_process, db_session
):
    pid = make_process(key="purchase", doc=purchase_request())
    assert _save(designer, pid, APPROVED).status_code == 302
    unanswered = {"do": "complete", "node": "offer", "data": {}}
    stuck = {**APPROVED, "name": "Leaves out the answer",
             "actions": [APPROVED["actions"][0], unanswered]}  # fmt: skip
    assert _save(designer, pid, stuck).status_code == 302
    ids = {row.name: row.id for row in db_session.scalars(select(TestScenario))}
    page = _run_all(designer, pid)
    assert "Where “Leaves out the answer” failed" in page
    assert "Where “Both" not in page and f'id="failed-{ids["Reviews yes and yes"]}"' not in page
    state = _state_of(page, ids["Leaves out the answer"])
    assert "offer" in state["active"]
    assert "requested" in state["visited"] and "record" not in state["visited"]
    assert list(state["failed"]) == ["offer"]
    assert state["failed"]["offer"].startswith("actions[1]: ")
    assert f'id="failed-{ids["Leaves out the answer"]}-diagram"' in page
    assert "No variables set yet." in page
    assert '<dt>item</dt><dd><code>"Desk"</code>' in page
