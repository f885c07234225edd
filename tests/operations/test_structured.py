"""Operations on structured instances, through HTTP: tokens and marks inside sub-processes,
multi-instance progress, call activities linking caller and child, a child's incident on its
caller, history in words, heat, and cancel, retry and set-variable on nested tokens."""

from __future__ import annotations

import json
import re
from datetime import timedelta

from sqlalchemy import select

from tests.helpers.app import csrf_token, login
from tests.helpers.documents import ALICE, caller_doc, child_doc, document, node, wire_pairs
from tests.helpers.instances import load, start
from tests.helpers.pages import diagram_state, region, text_of
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.models import Instance, Task

APPROVER = {"type": "role", "value": "approver"}


def inside(parent: str, kind: str, title: str = "", **config) -> dict:
    return {**node(kind, title, **config), "parent": parent}


def sub_doc(inner: dict, title: str = "Legal review") -> dict:
    """start -> sub-process `sub` (its start -> `inner` node `work` -> its end) -> end."""
    nodes = {
        "start": node("startEvent", "Start"),
        "sub": node("subProcess", title),
        "s_start": inside("sub", "startEvent"),
        "work": {**inner, "parent": "sub"},
        "s_end": inside("sub", "endEvent"),
        "end": node("endEvent", "Done"),
    }
    return document(
        nodes, {**wire_pairs("start", "sub", "end"), **wire_pairs("s_start", "work", "s_end")}
    )


def review_doc() -> dict:
    review = node(
        "userTask",
        "Review",
        assignee=APPROVER,
        saveTo="reviews",
        multiInstance={"collection": "$input.reviewers", "element": "reviewer"},
    )
    nodes = {"start": node("startEvent"), "review": review, "end": node("endEvent")}
    return document(nodes, wire_pairs("start", "review", "end"))


def _rows(page: str) -> list[int]:
    """The instance ids of the list's rows (their selection boxes), in order."""
    return [int(i) for i in re.findall(r'name="ids" value="(\d+)" form="bulk-form"', page)]


def _post(client, path: str, data: dict):
    page = path.rsplit("/", 1)[0]
    return client.post(path, data={**data, "csrf_token": csrf_token(client, page)})


def _child_of(session, parent_id: int) -> Instance:
    session.rollback()
    return session.scalars(select(Instance).where(Instance.parent_id == parent_id)).one()


def test_a_sub_process_shows_its_inner_token_scope_and_history(operator, engine, demo):
    version = publish_document(
        sub_doc(node("userTask", "Check", assignee=ALICE)), key="legal", name="Legal"
    )
    instance_id = start(engine, version)
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    state = diagram_state(page)
    assert state["active"] == {"sub": 1, "work": 1}, "the scope and the task inside it"
    assert {"s_start", "work", "s_start__work"} <= set(state["visited"]), "nested marks"
    tokens = text_of(region(page, "live-tokens"))
    assert "Check work waiting Legal review" in tokens, "the inner token names its scope"
    assert "Legal review sub waiting —" in tokens, "the scope itself is at the top"
    history = text_of(page[page.index('id="history"') :])
    assert "entered Check in Legal review" in history
    assert "in Legal review" in text_of(region(page, "live-tasks"))


def test_a_multi_instance_task_shows_done_of_total_and_each_element(
    app, operator, db_session, demo
):
    """Set up through `db_session` (another app): two users sign in, so no request may share
    the test's app context (and its cached user)."""
    version = publish_document(review_doc(), key="reviews", name="Reviews")
    instance_id = start(db_session, version, input={"reviewers": ["ann", "bob", "cy"]})
    bob = app.test_client()
    assert login(bob, "bob").status_code == 302
    listing = text_of(bob.get("/inbox/?tab=claimable").get_data(as_text=True))
    for number, name in enumerate(["ann", "bob", "cy"], start=1):
        assert f"Review — reviewer: {name} ({number} of 3)" in listing
    tasks = db_session.scalars(
        select(Task).where(Task.instance_id == instance_id).order_by(Task.id)
    ).all()
    task_page = text_of(bob.get(f"/inbox/tasks/{tasks[1].id}").get_data(as_text=True))
    assert "Review — reviewer: bob (2 of 3)" in task_page
    assert "Element 2 of 3 · reviewer: bob" in task_page

    from webapp.engine import steps
    from webapp.services.jobs import commit

    commit(steps.complete_task(db_session, tasks[0].id, {}, actor=None))
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    state = diagram_state(page)
    assert state["multi"] == {"review": {"done": 1, "total": 3}}
    assert state["active"] == {"review": 2}, "the two running instances, not their scope"
    tokens = text_of(region(page, "live-tokens"))
    assert "2 of 3 reviewer: bob" in tokens and "3 of 3 reviewer: cy" in tokens
    assert "Review review waiting — all: 1 of 3 done" in tokens, "the activity as a whole"
    history = text_of(page[page.index('id="history"') :])
    assert "multi-instance started Review 3 instances, in parallel" in history
    assert "one instance completed Review instance 1" in history
    live = text_of(region(page, "live-tasks"))
    assert "Review — reviewer: cy (3 of 3)" in live


def test_a_call_links_caller_and_child_and_the_childs_incident_shows_on_the_caller(
    operator, engine, demo
):
    publish_document(child_doc(node("serviceTask", "Charge", tool="fail", retries=0)), key="child")
    version = publish_document(caller_doc(), key="caller", name="Caller")
    parent_id = start(engine, version)
    drain(engine)
    child = _child_of(engine, parent_id)
    assert child.status == "failed" and load(engine, parent_id).status == "running"

    page = operator.get(f"/operations/instances/{parent_id}").get_data(as_text=True)
    state = diagram_state(page)
    assert state["calls"]["call"]["href"] == f"/operations/instances/{child.id}"
    assert state["calls"]["call"]["text"] == f"Called instance {child.id} of Check supplier"
    assert f'<a href="/operations/instances/{child.id}">Called instance {child.id}</a>' in page
    incident = text_of(region(page, "live-facts"))
    assert f"A called instance failed: instance {child.id} (child) at work" in incident
    assert f'<a href="/operations/instances/{child.id}">#{child.id}</a>' in page, "children list"

    child_page = operator.get(f"/operations/instances/{child.id}").get_data(as_text=True)
    assert f'<a href="/operations/instances/{parent_id}">Called by instance {parent_id}</a>' in (
        child_page
    )
    assert f"Called by instance {parent_id} at Check supplier" in text_of(child_page)
    assert f"called by instance {parent_id}" in text_of(child_page[child_page.index("history") :])

    listing = operator.get("/operations/instances?process=caller").get_data(as_text=True)
    assert f"called instance {child.id} failed" in text_of(listing), "the caller's row says so"
    children = operator.get(f"/operations/instances?parent={parent_id}").get_data(as_text=True)
    assert _rows(children) == [child.id]
    assert f'called by <a href="/operations/instances/{parent_id}">#{parent_id}</a>' in children
    top = operator.get("/operations/instances?top=1").get_data(as_text=True)
    assert _rows(top) == [parent_id]
    bad = operator.get("/operations/instances?parent=abc")
    assert bad.status_code == 422 and "Use an instance number" in bad.get_data(as_text=True)


def test_a_finished_call_names_its_child_in_the_history(operator, engine, demo):
    publish_document(child_doc(), key="child")
    parent_id = start(engine, publish_document(caller_doc(), key="caller"))
    drain(engine)
    child = _child_of(engine, parent_id)
    from webapp.engine import steps
    from webapp.services.jobs import commit

    [task] = engine.scalars(select(Task).where(Task.instance_id == child.id)).all()
    commit(steps.complete_task(engine, task.id, {"ok": True}, actor=None))
    drain(engine)
    assert load(engine, parent_id).status == "completed"
    page = operator.get(f"/operations/instances/{parent_id}").get_data(as_text=True)
    history = text_of(page[page.index('id="history"') :])
    assert f"called instance ended Check supplier instance {child.id} completed" in history
    assert f'href="/operations/instances/{child.id}">instance {child.id}</a>' in page


def test_boundary_errors_and_terminate_read_as_words(operator, engine, demo):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", "Payment"),
        "p_start": inside("sub", "startEvent"),
        "p_fail": inside("sub", "endEvent", "Declined", event="error", code="DECLINED"),
        "caught": node("boundaryEvent", "On decline", attachedTo="sub", event="error"),
        "stop": node("endEvent", "Stop", event="terminate"),
        "end": node("endEvent"),
    }
    flows = {
        **wire_pairs("start", "sub", "end"),
        **wire_pairs("p_start", "p_fail"),
        **wire_pairs("caught", "stop"),
    }
    instance_id = start(engine, publish_document(document(nodes, flows), key="pay"))
    assert load(engine, instance_id).status == "completed"
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    history = text_of(page[page.index('id="history"') :])
    assert "error thrown Declined in Payment error DECLINED , caught by On decline" in history
    assert "boundary event fired On decline error, interrupting" in history
    assert "terminated Stop ended every token of the instance" in history


def test_cancel_retry_and_set_variable_work_on_nested_tokens(operator, engine, demo, test_tools):
    flaky = node(
        "serviceTask",
        "Call",
        tool="test.flaky",
        retries=0,
        inputs={"name": "'nested'", "fail_times": "1"},
    )
    instance_id = start(engine, publish_document(sub_doc(flaky), key="nested"))
    drain(engine)
    assert load(engine, instance_id).status == "failed"
    path = f"/operations/instances/{instance_id}"
    page = operator.get(path).get_data(as_text=True)
    assert diagram_state(page)["failed"] == {"work": "flaky: failure number 1"}
    assert "failed Legal review" in text_of(region(page, "live-tokens"))
    response = _post(operator, f"{path}/variables", {"name": "fixed", "value": "true"})
    assert response.status_code == 303
    assert load(engine, instance_id).vars["fixed"] is True
    assert _post(operator, f"{path}/retry", {}).status_code == 303
    drain(engine)
    assert load(engine, instance_id).status == "completed"

    publish_document(child_doc(), key="child")
    outer = sub_doc(node("callActivity", "Ask", process="child"))
    parent_id = start(engine, publish_document(outer, key="outer"))
    drain(engine)
    child = _child_of(engine, parent_id)
    path = f"/operations/instances/{parent_id}"
    response = _post(operator, f"{path}/variables", {"name": "note", "value": '"waiting"'})
    assert response.status_code == 303, "every token waits: variables may change"
    assert _post(operator, f"{path}/cancel", {"reason": "not needed"}).status_code == 303
    drain(engine)
    assert load(engine, parent_id).status == "cancelled"
    assert load(engine, child.id).status == "cancelled", "the child went with its caller"
    engine.rollback()
    assert engine.scalars(select(Task.status).where(Task.instance_id == child.id)).all() == [
        "cancelled"
    ]
    page = operator.get(path).get_data(as_text=True)
    assert diagram_state(page)["cancelled"] == {"sub": 1, "work": 1}


def test_heat_counts_nested_nodes_but_not_listening_event_sub_processes(operator, engine, demo):
    doc = sub_doc(node("userTask", "Check", assignee=ALICE))
    doc["nodes"]["ping"] = node("eventSubProcess", "Reminder")
    doc["nodes"]["p_start"] = inside(
        "ping", "startEvent", event="timer", duration="PT1H", interrupting=False
    )
    doc["nodes"]["p_end"] = inside("ping", "endEvent")
    doc["flows"].update(wire_pairs("p_start", "p_end"))
    version = publish_document(doc, key="heat")
    start(engine, version)
    start(engine, version)
    page = operator.get("/operations/heat/heat").get_data(as_text=True)
    data = re.search(
        rf'<script type="application/json" id="heat-{version.id}">(.*?)</script>', page
    )
    heat = json.loads(data.group(1))["heat"]
    assert heat["work"]["waiting"] == 2 and heat["sub"]["waiting"] == 2
    assert "ping" not in heat, "a listener is not an instance waiting there"
    assert "in Legal review" in text_of(page[page.index("<table") :]), "the table names the scope"


def test_bulk_cancel_of_a_caller_reports_its_children(app, operator, engine, demo):
    from webapp.models import BulkItem
    from webapp.services.operations import bulk

    publish_document(child_doc(), key="child")
    version = publish_document(caller_doc(), key="caller")
    alone, together = start(engine, version), start(engine, version)
    drain(engine)
    alone_child, together_child = _child_of(engine, alone), _child_of(engine, together)
    response = operator.post(
        "/operations/bulk",
        data={
            "action": "cancel",
            "reason": "supplier gone",
            "scope": "selected",
            "ids": [str(alone), str(together), str(together_child.id)],
            "confirm": "yes",
            "csrf_token": csrf_token(operator, "/operations/instances"),
        },
    )
    assert response.status_code == 303
    operation_id = int(re.search(r"/bulk/(\d+)$", response.headers["Location"]).group(1))
    with app.app_context():
        report = bulk.run(operation_id)
    assert report == {"pending": 0, "ok": 3, "error": 0, "done": 3}
    engine.rollback()
    messages = dict(
        engine.execute(
            select(BulkItem.instance_id, BulkItem.message).where(
                BulkItem.operation_id == operation_id
            )
        ).all()
    )
    cancelled_too = f"Its called instance {alone_child.id} is cancelled too."
    assert messages[alone] == f"Now cancelled. {cancelled_too}"
    assert messages[together_child.id] == f"Cancelled with its calling instance {together}."
    drain(engine)
    for instance_id in (alone, together, alone_child.id, together_child.id):
        assert load(engine, instance_id).status == "cancelled"
    page = operator.get(f"/operations/bulk/{operation_id}").get_data(as_text=True)
    assert f"Its called instance {alone_child.id} is cancelled too." in page


def test_retention_deletes_children_with_their_caller_never_before(app, engine, demo):
    from webapp.engine import steps
    from webapp.models import RetentionPolicy
    from webapp.models.base import utcnow
    from webapp.services.jobs import commit
    from webapp.services.operations import run_retention
    from webapp.services.operations.retention import preview

    publish_document(child_doc(), key="child")
    version = publish_document(caller_doc(), key="caller")
    gone, stays = start(engine, version), start(engine, version)
    blocked = start(engine, version)
    drain(engine)
    children = {i: _child_of(engine, i).id for i in (gone, stays, blocked)}
    for caller in (gone, stays):
        [task] = engine.scalars(select(Task).where(Task.instance_id == children[caller])).all()
        commit(steps.complete_task(engine, task.id, {}, actor=None))
    drain(engine)
    assert load(engine, gone).status == load(engine, stays).status == "completed"
    old = utcnow() - timedelta(days=90)
    from tests.helpers.instances import set_columns

    set_columns(engine, [gone, children[gone], children[stays]], ended_at=old)
    set_columns(engine, [blocked], status="cancelled", ended_at=old)
    # The child process keeps its own instances forever: as children they go with their caller.
    child_process = version.process.__class__
    process_id = engine.scalar(select(child_process.id).where(child_process.key == "child"))
    engine.add(RetentionPolicy(process_id=process_id, days=None))
    engine.commit()

    with app.app_context():
        from webapp.extensions import db

        assert preview(db.session) == {"caller": 1, "child": 1}
        assert run_retention(db.session) == 2
    engine.rollback()
    left = set(engine.scalars(select(Instance.id)))
    assert gone not in left and children[gone] not in left, "caller and child went together"
    assert {stays, children[stays]} <= left, "a child whose caller stays is kept"
    assert {blocked, children[blocked]} <= left, "a running child keeps its finished caller"


def test_the_inbox_names_the_sub_process_and_the_form_sees_the_element(
    app, login_as, db_session, demo
):
    form = {
        "fields": [
            {"key": "who", "label": "Reviewer", "type": "display", "value": "upper($item)"},
            {"key": "first", "label": "Lead note", "type": "text", "visibleIf": "$loop.index == 0"},
            {"key": "ok", "label": "Approve", "type": "boolean"},
        ]
    }
    review = node(
        "userTask",
        "Review",
        assignee=ALICE,
        form=form,
        multiInstance={"collection": "$input.reviewers", "element": "reviewer"},
    )
    version = publish_document(sub_doc(review), key="legal", name="Legal")
    instance_id = start(db_session, version, input={"reviewers": ["ann", "bob"]})
    alice = login_as("alice")
    listing = text_of(alice.get("/inbox/").get_data(as_text=True))
    assert "Review — reviewer: ann (1 of 2) in Legal review" in listing
    tasks = db_session.scalars(
        select(Task).where(Task.instance_id == instance_id).order_by(Task.id)
    ).all()
    first = alice.get(f"/inbox/tasks/{tasks[0].id}").get_data(as_text=True)
    assert "Part of Legal review" in text_of(first)
    assert '<p class="display-value" id="field-who">ANN</p>' in first, "the form reads $item"
    assert 'name="first"' in first, "visibleIf reads $loop.index"
    second = alice.get(f"/inbox/tasks/{tasks[1].id}").get_data(as_text=True)
    assert '<p class="display-value" id="field-who">BOB</p>' in second
    assert 'name="first"' not in second
    response = alice.post(
        f"/inbox/tasks/{tasks[1].id}",
        data={"ok": "true", "first": "ignored", "csrf_token": csrf_token(alice, "/inbox/")},
    )
    assert response.status_code == 303
    db_session.rollback()
    result = db_session.get(Task, tasks[1].id).result
    assert result == {"ok": True}, "a field hidden for this element is not saved"


def test_a_caller_polls_fast_while_its_child_can_move_by_itself(operator, engine, demo):
    publish_document(child_doc(node("timerCatch", "Wait", duration="PT1H")), key="child")
    timed = start(engine, publish_document(caller_doc(), key="caller"))
    publish_document(child_doc(), key="asks", name="asks")
    asking = caller_doc()
    asking["nodes"]["call"]["config"]["process"] = "asks"
    people = start(engine, publish_document(asking, key="asking"))
    drain(engine, wait=0.5)
    page = operator.get(f"/operations/instances/{timed}").get_data(as_text=True)
    assert 'hx-trigger="every 2s"' in page, "the child's timer will resume the caller"
    page = operator.get(f"/operations/instances/{people}").get_data(as_text=True)
    assert 'hx-trigger="every 30s"' in page, "the child waits on a person"
