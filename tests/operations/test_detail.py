"""One instance: diagram state, history pages, tasks and jobs; cancel, retry and variable edits."""

from __future__ import annotations

import json
import re

import pytest
from sqlalchemy import insert, select

from tests.helpers.app import csrf_token, failed_page, user
from tests.helpers.documents import chain, failing_doc, flaky_doc, node, waiting_doc
from tests.helpers.instances import load, start, start_failed_gate
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.models import HistoryEntry, Task


def _state(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="instance-state">(.*?)</script>', page)
    return json.loads(match.group(1))


def _post(client, path: str, data: dict, page: str):
    return client.post(path, data={**data, "csrf_token": csrf_token(client, page)})


def test_a_waiting_instance_shows_its_token_task_and_visited_path(operator, engine):
    version = publish_document(waiting_doc("alice"), key="invoice")
    instance_id = start(engine, version, input={"amount": 1200}, business_key="INV-9")
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    state = _state(page)
    assert state["active"] == {"review": 1}
    assert state["failed"] == {}
    assert set(state["visited"]) == {"start", "f1", "review"}
    assert "assigned to alice" in page
    task_id = engine.scalar(select(Task.id).where(Task.instance_id == instance_id))
    assert f'<a href="/inbox/tasks/{task_id}">' in page, "open tasks link to the task"
    assert f'href="/inbox/tasks/{task_id}/reassign">Reassign' in page
    assert "INV-9" in page and "&#34;amount&#34;: 1200" in page
    assert 'data-instance-viewer data-source="instance-diagram"' in page
    assert "bpmn-navigated-viewer.production.min.js" in page
    assert 'hx-trigger="every 2s"' not in page, "waiting on alice, nothing changes by itself"
    assert 'hx-trigger="every 30s"' in page, "a slow check notices alice completing the task"


def test_a_failed_instance_shows_the_node_and_error_then_retry_completes(
    operator, engine, test_tools
):
    version = publish_document(flaky_doc("detail", 1), key="charge")
    instance_id = start(engine, version)
    drain(engine)
    assert load(engine, instance_id).status == "failed"
    path = f"/operations/instances/{instance_id}"
    page = operator.get(path).get_data(as_text=True)
    assert _state(page)["failed"] == {"call": "flaky: failure number 1"}
    assert "Failed at Call" in page and "failure number 1" in page
    assert 'hx-trigger="every 2s"' not in page, "a failed instance does not poll"
    assert "<code>flaky</code> failure number 1" in page, "the job's last error"

    response = _post(operator, f"{path}/retry", {}, path)
    assert response.status_code == 303
    drain(engine)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    page = operator.get(path).get_data(as_text=True)
    kinds = re.findall(r'data-kind="(\w+)"', page)
    assert kinds[0] == "completed" and "retried" in kinds, "newest first"
    assert _state(page)["failed"] == {}


def test_retry_of_a_running_instance_is_refused_with_409(operator, engine):
    version = publish_document(waiting_doc(), key="invoice")
    instance_id = start(engine, version)
    path = f"/operations/instances/{instance_id}"
    response = _post(operator, f"{path}/retry", {}, path)
    assert "only failed instances can be retried" in failed_page(operator, response, path)


def test_cancel_needs_a_reason_and_closes_the_open_task_which_leaves_the_inbox(
    operator, engine, db_session
):
    from webapp.services import tasks

    version = publish_document(waiting_doc("alice"), key="invoice")
    instance_id = start(engine, version)
    alice = user(db_session, "alice")
    inbox = db_session.scalars(tasks.inbox_query(alice, tab="mine")).all()
    assert [task.instance_id for task in inbox] == [instance_id]

    path = f"/operations/instances/{instance_id}"
    refused = _post(operator, f"{path}/cancel", {"reason": "  "}, path)
    page = failed_page(operator, refused, path)
    assert "Say why the instance is cancelled." in page
    assert '<details class="op-confirm" open>' in page, "the cancel form stays open"
    assert load(engine, instance_id).status == "running"

    done = _post(operator, f"{path}/cancel", {"reason": "duplicate invoice"}, path)
    assert done.status_code == 303
    assert load(engine, instance_id).status == "cancelled"
    db_session.rollback()
    task = db_session.scalar(select(Task).where(Task.instance_id == instance_id))
    assert task.status == "cancelled"
    assert db_session.scalars(tasks.inbox_query(alice, tab="mine")).all() == []
    entry = db_session.scalar(
        select(HistoryEntry).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "cancelled"
        )
    )
    assert (entry.actor, entry.details["reason"]) == ("operator", "duplicate invoice")


def test_a_variable_edit_is_recorded_with_the_actor_and_lets_retry_complete(
    operator, engine, db_session
):
    instance_id = start_failed_gate(engine)
    assert load(engine, instance_id).status == "failed"
    path = f"/operations/instances/{instance_id}"
    for value in ('{"ok": "yes"}', '{"ok": false, "n": 1}', '{"ok": true}'):
        response = _post(operator, f"{path}/variables", {"name": "check", "value": value}, path)
        assert response.status_code == 303
    assert load(engine, instance_id).vars == {"check": {"ok": True}}
    db_session.rollback()
    edits = db_session.scalars(
        select(HistoryEntry)
        .where(HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "variable_set")
        .order_by(HistoryEntry.id)
    ).all()
    assert [(e.actor, e.details) for e in edits] == [
        ("operator", {"name": "check", "value": {"ok": "yes"}, "previous": {"ok": False}}),
        ("operator", {"name": "check", "value": {"ok": False, "n": 1}, "previous": {"ok": "yes"}}),
        ("operator", {"name": "check", "value": {"ok": True}, "previous": {"ok": False, "n": 1}}),
    ]
    _post(operator, f"{path}/retry", {}, path)
    assert load(engine, instance_id).status == "completed"
    page = operator.get(path).get_data(as_text=True)
    assert "variable set" in page and "name: check" in page


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("check", "{not json", "Not valid JSON: Expecting property name enclosed in double quotes"),
        ("check", "NaN", "Not valid JSON: NaN is not allowed in JSON."),
        ("check", "", "Not valid JSON: Expecting value (line 1, column 1)."),
        ("9lives", "1", "Use letters, digits and _, not starting with a digit."),
        ("a.b", "1", "Use letters, digits and _, not starting with a digit."),
    ],
)
def test_bad_variable_edits_are_named_and_change_nothing(operator, engine, name, value, message):
    instance_id = start_failed_gate(engine)
    path = f"/operations/instances/{instance_id}"
    response = _post(operator, f"{path}/variables", {"name": name, "value": value}, path)
    page = failed_page(operator, response, path)
    assert message in page
    assert f'id="var-name" name="name" type="text" value="{name}"' in page, "typed name kept"
    assert load(engine, instance_id).vars == {"check": {"ok": False}}


def test_variables_of_a_finished_or_busy_instance_cannot_change(operator, engine, test_tools):
    finished = start(engine, publish_document(failing_doc(), key="pay"))
    path = f"/operations/instances/{finished}"
    _post(operator, f"{path}/cancel", {"reason": "test"}, path)
    response = _post(operator, f"{path}/variables", {"name": "x", "value": "1"}, path)
    page = failed_page(operator, response, path)
    assert "variables can change only while it failed or waits" in page

    busy = start(engine, publish_document(flaky_doc("busy", 0), key="busy"))
    path = f"/operations/instances/{busy}"
    busy_page = operator.get(path).get_data(as_text=True)
    assert 'id="live-actions"' in busy_page and "data-editable" not in busy_page, "form hidden"
    response = _post(operator, f"{path}/variables", {"name": "x", "value": "1"}, path)
    page = failed_page(operator, response, path)
    assert "variables can change only" in page, "a token is active: its tool job has not run yet"


def test_readers_without_manage_may_look_but_not_change(app, login_as, engine):
    instance_id = start_failed_gate(engine, partition="finance")
    designer = login_as("designer")
    path = f"/operations/instances/{instance_id}"
    page = designer.get(path)
    assert page.status_code == 200
    assert "Cancel instance" not in page.get_data(as_text=True)
    actions = {"retry": {}, "cancel": {"reason": "x"}, "variables": {"name": "a", "value": "1"}}
    for action, data in actions.items():
        assert _post(designer, f"{path}/{action}", data, path).status_code == 403
    assert load(engine, instance_id).status == "failed"


def test_history_is_paged_newest_first(operator, engine, db_session):
    version = publish_document(waiting_doc(), key="chatty")
    instance_id = start(engine, version)
    engine.execute(
        insert(HistoryEntry),
        [
            {"instance_id": instance_id, "kind": "message", "details": {"reason": f"n{n}"}}
            for n in range(120)
        ],
    )
    engine.commit()
    path = f"/operations/instances/{instance_id}"
    first = operator.get(path).get_data(as_text=True)
    assert first.count('data-kind="message"') == 50
    assert "reason: n119" in first and "reason: n70" in first and "reason: n69" not in first
    older = re.search(r'href="([^"]+)#history" rel="next"', first).group(1)
    second = operator.get(older.replace("&amp;", "&")).get_data(as_text=True)
    assert "reason: n69" in second and "reason: n20" in second and "reason: n119" not in second
    assert 'hx-trigger="every 2s"' not in second, "an older page does not poll"
    third = operator.get(re.search(r'href="([^"]+)#history" rel="next"', second).group(1))
    rest = third.get_data(as_text=True)
    assert rest.count('data-kind="message"') == 20 and 'data-kind="started"' in rest
    assert 'rel="next"' not in rest


POLLER = re.compile(r'<div id="live-poll" hidden data-live="(\w+)"(?: hx-get="([^"]+)")?')


def _poller(html: str) -> tuple[str, str | None]:
    """The poller's mode and URL (None when it does not poll)."""
    mode, url = POLLER.search(html).groups()
    return mode, url and url.replace("&amp;", "&")


def _regions(fragment: str) -> set[str]:
    return set(re.findall(r'<(?:div|pre|section)[^>]* id="(live-facts|live-tasks|live-jobs|'
                          r'data-vars|data-nodes|history)"', fragment))  # fmt: skip


def test_the_poll_answers_204_until_something_changes_then_only_the_changed_regions(
    operator, engine
):
    instance_id = start(engine, publish_document(waiting_doc(), key="invoice"))
    path = f"/operations/instances/{instance_id}"
    page = operator.get(path).get_data(as_text=True)
    mode, url = _poller(page)
    assert mode == "slow" and url.startswith(f"{path}/live?")
    assert _regions(page) == {"live-facts", "live-tasks", "live-jobs", "data-vars",
                              "data-nodes", "history"}  # fmt: skip
    nothing = operator.get(url)
    assert nothing.status_code == 204 and nothing.get_data() == b""

    assert _post(operator, f"{path}/variables", {"name": "note", "value": '"checked"'}, path)
    fragment = operator.get(url).get_data(as_text=True)
    assert _regions(fragment) == {"data-vars", "history"}, (
        "status, tasks, jobs and node outputs did not change, so they are not sent"
    )
    assert "&#34;note&#34;: &#34;checked&#34;" in fragment
    assert "<details" not in fragment and 'id="data-input"' not in fragment
    assert "<html" not in fragment
    new_mode, new_url = _poller(fragment)
    assert new_mode == "slow" and new_url != url
    assert operator.get(new_url).status_code == 204


@pytest.mark.parametrize(
    ("doc", "mode"),
    [
        (chain(("wait", node("timerCatch", duration="PT1H"))), "fast"),
        (chain(("paid", node("messageCatch", message="paid", correlationKey="'A1'"))), "fast"),
        (chain(("call", node("serviceTask", tool="vars.set", inputs={"a": "1"}))), "fast"),
        (waiting_doc(), "slow"),
        (failing_doc(), "slow"),
        (chain(("call", node("serviceTask", tool="vars.set", inputs={"a": "1"}))), "off"),
    ],
    ids=["timer", "message", "tool-job", "user-task", "failed", "completed"],
)
def test_the_page_polls_fast_only_while_a_worker_or_the_outside_can_move_it(
    operator, engine, doc, mode
):
    instance_id = start(engine, publish_document(doc, key="proc"))
    if mode != "fast":
        drain(engine)
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    assert _poller(page)[0] == mode
    expected = {"fast": "every 2s", "slow": "every 30s"}.get(mode)
    triggers = re.findall(r'hx-trigger="(every \w+)"', page)
    assert triggers == ([expected] if expected else []), page


def test_an_older_history_page_polls_without_the_history_region(operator, engine):
    instance_id = start(engine, publish_document(waiting_doc(), key="invoice"))
    path = f"/operations/instances/{instance_id}"
    page = operator.get(f"{path}?before=999999").get_data(as_text=True)
    url = _poller(page)[1]
    assert "before=999999" in url and "history=" not in url
    assert operator.get(url).status_code == 204


def test_unknown_instances_are_404(operator):
    assert operator.get("/operations/instances/999999").status_code == 404


def test_a_cancelled_instance_cannot_be_retried_on_its_page_or_in_bulk(
    operator, engine, app_config, db_session, test_tools
):
    from tests.helpers.workers import run_burst
    from webapp.models import BulkItem

    version = publish_document(flaky_doc("cancelled-retry", 1), key="charge")
    instance_id = start(engine, version)
    drain(engine)
    path = f"/operations/instances/{instance_id}"
    assert _post(operator, f"{path}/cancel", {"reason": "duplicate"}, path).status_code == 303
    assert load(engine, instance_id).status == "cancelled"

    response = _post(operator, f"{path}/retry", {}, path)
    assert "only failed instances can be retried" in failed_page(operator, response, path)

    bulk = operator.post(
        "/operations/bulk",
        data={
            "csrf_token": csrf_token(operator, "/operations/instances"),
            "action": "retry",
            "scope": "selected",
            "ids": [str(instance_id)],
            "confirm": "yes",
        },
    )
    assert bulk.status_code == 303
    run_burst(app_config)
    drain(engine)
    db_session.rollback()
    item = db_session.scalar(select(BulkItem).where(BulkItem.instance_id == instance_id))
    assert item.status == "error" and "only failed instances" in (item.message or "")
    instance = load(engine, instance_id)
    assert instance.status == "cancelled"
    kinds = [k for k, in engine.execute(
        select(HistoryEntry.kind).where(HistoryEntry.instance_id == instance_id)
    )]  # fmt: skip
    assert "retried" not in kinds


def test_a_failed_then_cancelled_instance_shows_both_and_the_reason_at_the_top(
    operator, engine, test_tools
):
    instance_id = start(engine, publish_document(flaky_doc("cancel-failed", 1), key="charge"))
    drain(engine)
    path = f"/operations/instances/{instance_id}"
    response = _post(operator, f"{path}/cancel", {"reason": "customer withdrew"}, path)
    assert response.status_code == 303
    page = operator.get(path).get_data(as_text=True)
    state = _state(page)
    assert state["failed"] == {"call": "flaky: failure number 1 (then cancelled)"}
    assert state["cancelled"] == {} and state["active"] == {}
    top = page.split('<section aria-label="Diagram"')[0]
    outcome = re.sub(r"<[^>]+>", "", top.split('id="live-outcome"')[1])
    assert "Failed at Call (call): flaky · failure number 1" in outcome
    assert "Then cancelled" in outcome and "by operator" in outcome
    assert "Reason: customer withdrew" in outcome
    assert 'role="alert"' not in page, "no live incident: the instance is over"
    inbox = operator.get(f"/inbox/instances/{instance_id}").get_data(as_text=True)
    assert "then cancelled" in inbox and "Reason: customer withdrew" in inbox


def test_a_cancelled_waiting_instance_marks_where_it_stopped(operator, engine):
    instance_id = start(engine, publish_document(waiting_doc(), key="invoice"))
    path = f"/operations/instances/{instance_id}"
    assert _post(operator, f"{path}/cancel", {"reason": "duplicate"}, path).status_code == 303
    page = operator.get(path).get_data(as_text=True)
    state = _state(page)
    assert state["cancelled"] == {"review": 1} and state["failed"] == {}
    assert state["active"] == {}
    outcome = re.sub(r"<[^>]+>", "", page.split('id="live-outcome"')[1].split("</section>")[0])
    assert "Cancelled" in outcome and "Reason: duplicate" in outcome
    assert "Failed" not in outcome
    assert _poller(page)[0] == "off"


def _retry_button(html: str) -> bool:
    return (
        re.search(r'<button type="submit" form="retry-form"[^>]*>Retry</button>', html) is not None
    )


def test_an_instance_that_fails_again_after_retry_offers_retry_without_a_reload(
    operator, engine, test_tools
):
    instance_id = start(engine, publish_document(flaky_doc("again", 2), key="charge"))
    drain(engine)
    path = f"/operations/instances/{instance_id}"
    assert _post(operator, f"{path}/retry", {}, path).status_code == 303
    page = operator.get(path).get_data(as_text=True)
    assert not _retry_button(page), "running again: nothing to retry"
    mode, url = _poller(page)
    assert mode == "fast"

    drain(engine)
    assert load(engine, instance_id).status == "failed"
    fragment = operator.get(url).get_data(as_text=True)
    assert 'id="live-actions"' in fragment and _retry_button(fragment)
    assert "data-editable" in fragment.split('id="live-actions"')[1].split(">")[0], (
        "the variable form shows again, for the usual fix: set a variable, then retry"
    )
    assert "failure number 2" in fragment
    facts = fragment.split('id="live-facts"')[1]
    assert "waiting on people" not in facts, "a failed instance waits for a retry, not people"
    assert "checked every 30 seconds for a retry" in facts
    page = operator.get(path).get_data(as_text=True)
    assert 'id="retry-form"' in page and csrf_token(operator, page)


def test_a_failed_instance_cancelled_elsewhere_loses_its_incident_and_actions_live(
    operator, login_as, engine, test_tools
):
    instance_id = start(engine, publish_document(flaky_doc("gone", 1), key="charge"))
    drain(engine)
    path = f"/operations/instances/{instance_id}"
    page = operator.get(path).get_data(as_text=True)
    assert _retry_button(page) and 'role="alert"' in page
    url = _poller(page)[1]

    from webapp.services import instances as instance_service

    instance_service.cancel(user(engine, "admin"), instance_id, "duplicate")
    fragment = operator.get(url).get_data(as_text=True)
    assert _poller(fragment)[0] == "off"
    facts = fragment.split('id="live-facts"')[1].split('id="live-')[0]
    assert 'role="alert"' not in facts and "Failed at" not in facts
    actions = fragment.split('id="live-actions"')[1].split("</div>")[0]
    assert not _retry_button(actions) and "data-ended" in actions
    outcome = re.sub(r"<[^>]+>", "", fragment.split('id="live-outcome"')[1])
    assert "Then cancelled" in outcome and "Reason: duplicate" in outcome
