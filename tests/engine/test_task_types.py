"""Script, send, receive and manual tasks, message throws and ends, link events and milestones,
on the real database (in-process steps) and with real worker processes."""

from __future__ import annotations

import json

from sqlalchemy import func, select

from tests.engine import tools_for_tests
from tests.helpers.app import login
from tests.helpers.documents import CLERK, chain, document, flow, inside, node, wire
from tests.helpers.http import basic
from tests.helpers.instances import complete, fire, history, load, open_tasks, pending_jobs, start
from tests.helpers.processes import publish_document, publish_without_validation
from tests.helpers.workers import drain, wait_for
from webapp.engine import steps
from webapp.models import HistoryEntry, Job, MessageSubscription, Token
from webapp.services.jobs import commit


def details(session, instance_id: int, kind: str) -> list[tuple[str | None, dict]]:
    session.rollback()
    rows = session.execute(
        select(HistoryEntry.node_id, HistoryEntry.details)
        .where(HistoryEntry.instance_id == instance_id, HistoryEntry.kind == kind)
        .order_by(HistoryEntry.id)
    ).all()
    return [(node_id, data or {}) for node_id, data in rows]


def entered(session, instance_id: int) -> list[str | None]:
    return [n for k, n in history(session, instance_id) if k == "entered"]


# --- script tasks -----------------------------------------------------------------------------

SCRIPT = """# what the order costs
total = $input.price * $input.qty
label = 'Order of ' + $input.who
$vars.big = $vars.total > 100
"""


def _scripted_review() -> dict:
    form = {
        "fields": [
            {
                "key": "amount",
                "label": "Amount",
                "type": "number",
                "default": {"expr": "$vars.total"},
            },
            {"key": "what", "label": "What", "type": "display", "value": "$vars.label"},
        ]
    }
    nodes = {
        "start": node("startEvent"),
        "calc": node("scriptTask", "Work out the total", script=SCRIPT),
        "route": node("exclusiveGateway"),
        "review": node(
            "userTask", "Review", assignee={"type": "user", "value": "alice"}, form=form
        ),
        "end": node("endEvent"),
        "small": node("endEvent"),
    }
    flows = {
        **wire("start", "calc", "route"),
        "big": flow("route", "review", "$vars.big"),
        "other": flow("route", "small", default=True),
        **wire("review", "end"),
    }
    return document(nodes, flows)


def test_script_assignments_reach_a_gateway_condition_and_a_form(engine, demo, app):
    version = publish_document(_scripted_review())
    big = start(engine, version, input={"price": 30, "qty": 5, "who": "Ada"})
    instance = load(engine, big)
    assigned = {"total": 150, "label": "Order of Ada", "big": True}
    assert (instance.status, instance.vars, instance.nodes["calc"]) == (
        "running",
        assigned,
        assigned,
    )
    [task] = open_tasks(engine, big)
    assert task.node_id == "review"

    client = app.test_client()
    assert login(client, "alice").status_code == 302
    page = client.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    assert 'value="150"' in page
    assert "Order of Ada" in page

    small = start(engine, version, input={"price": 1, "qty": 5, "who": "Bo"})
    done = load(engine, small)
    assert (done.status, done.vars["big"], done.vars["total"]) == ("completed", False, 5)
    assert "small" in entered(engine, small)


def test_a_script_error_is_an_incident_naming_the_node_and_line_and_a_retry_fails_alike(engine):
    script = "ratio = 1\n\n# then\nshare = $vars.ratio / $input.parts\nlater = 2"
    version = publish_document(chain(("calc", node("scriptTask", script=script))))
    instance_id = start(engine, version, input={"parts": 0})
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert (instance.error["node"], instance.error["code"]) == ("calc", "script")
    message = instance.error["message"]
    assert message.startswith("The script of the untitled script task failed at line 4: ")
    assert "division by zero" in message
    assert "share" in message
    assert instance.vars == {} and instance.nodes == {}, "nothing half-written"
    [(_, error)] = details(engine, instance_id, "error")
    assert error["line"] == 4

    commit(steps.retry_instance(engine, instance_id))
    again = load(engine, instance_id)
    assert again.status == "failed"
    assert again.error["message"] == message
    kinds = [k for k, n in history(engine, instance_id) if n == "calc"]
    assert kinds[-3:] == ["retried", "entered", "error"]


def test_an_empty_script_imported_from_another_tool_runs_as_a_no_op(engine):
    calc = node("scriptTask", script="", language="flowdesk", emptyInFile=True)
    version = publish_document(chain(("calc", calc)))
    instance = load(engine, start(engine, version))
    assert instance.status == "completed"
    assert instance.vars == {} and instance.nodes["calc"] == {}


def test_a_script_in_another_language_is_an_incident(engine):
    doc = chain(("calc", node("scriptTask", script="x = 1", language="groovy")))
    version = publish_without_validation(doc, "groovy")
    instance = load(engine, start(engine, version))
    assert instance.status == "failed"
    assert instance.error["code"] == "unsupported_script"
    assert instance.error["message"].startswith(
        "The script of the untitled script task is written in 'groovy'"
    )


def test_a_parallel_multi_instance_script_runs_once_per_item_in_collection_order(engine):
    script = "double = $item * 2\nlast = $item"
    calc = node(
        "scriptTask",
        script=script,
        multiInstance={"collection": "$input.numbers", "output": "$nodes.calc.double"},
    )
    version = publish_document(chain(("calc", calc)))
    instance = load(engine, start(engine, version, input={"numbers": [3, 1, 2]}))
    assert instance.status == "completed"
    assert instance.nodes["calc"] == [6, 2, 4]
    assert instance.vars["last"] in (3, 1, 2)


def test_a_sequential_multi_instance_script_sees_what_the_previous_instance_assigned(engine):
    add = node(
        "scriptTask",
        script="total = $vars.total + $item\nseen = $vars.seen + [$loop.index]",
        multiInstance={"collection": "$input.numbers", "sequential": True},
    )
    version = publish_document(
        chain(("init", node("scriptTask", script="total = 0\nseen = []")), ("add", add))
    )
    instance = load(engine, start(engine, version, input={"numbers": [5, 7, 11]}))
    assert instance.status == "completed"
    assert instance.vars == {"total": 23, "seen": [0, 1, 2]}
    assert [out["total"] for out in instance.nodes["add"]] == [5, 12, 23]


# --- manual tasks, milestones ---------------------------------------------------------------


def test_manual_tasks_and_milestones_pass_through_into_the_history(engine):
    version = publish_document(
        chain(
            ("sign", node("manualTask", "Sign the paper form")),
            ("half", node("milestone", "Half way")),
            ("many", node("manualTask", "Post letters", multiInstance={"cardinality": "2"})),
        )
    )
    instance_id = start(engine, version)
    assert load(engine, instance_id).status == "completed"
    assert details(engine, instance_id, "manual") == [
        ("sign", {"title": "Sign the paper form"}),
        ("many", {"title": "Post letters"}),
        ("many", {"title": "Post letters"}),
    ]
    assert details(engine, instance_id, "milestone") == [("half", {"title": "Half way"})]
    assert entered(engine, instance_id)[:4] == ["start", "sign", "half", "many"]


# --- link events ------------------------------------------------------------------------------


def test_a_link_throw_jumps_to_the_catch_of_its_name_in_its_own_scope(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", "Inside"),
        "s_start": inside("sub", "startEvent"),
        "s_throw": inside("sub", "linkThrow", link="next"),
        "s_catch": inside("sub", "linkCatch", link="next"),
        "s_task": inside("sub", "userTask", assignee=CLERK),
        "s_end": inside("sub", "endEvent"),
        "after": node("linkThrow", link="next"),
        "catch": node("linkCatch", link="next"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "sub", "after"),
        **wire("s_start", "s_throw"),
        **wire("s_catch", "s_task", "s_end"),
        **wire("catch", "end"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    [task] = open_tasks(engine, instance_id)
    assert task.node_id == "s_task"
    complete(engine, task)
    assert load(engine, instance_id).status == "completed"
    assert entered(engine, instance_id) == [
        "start",
        "sub",
        "s_start",
        "s_throw",
        "s_catch",
        "s_task",
        "s_end",
        "after",
        "catch",
        "end",
    ]
    jumps = [(n, d) for n, d in details(engine, instance_id, "left") if "link" in d]
    assert jumps == [
        ("s_throw", {"link": "next", "to": "s_catch"}),
        ("after", {"link": "next", "to": "catch"}),
    ]


def test_a_link_throw_without_its_catch_is_an_incident_naming_the_link(engine):
    doc = document(
        {"start": node("startEvent"), "jump": node("linkThrow", link="nowhere")},
        wire("start", "jump"),
    )
    instance = load(engine, start(engine, publish_without_validation(doc, "lost-link")))
    assert instance.status == "failed"
    assert (instance.error["node"], instance.error["code"]) == ("jump", "no_link")
    assert "'nowhere'" in instance.error["message"]


# --- send tasks, message throws and message ends: tool calls ---------------------------------


def _record(name: str, **config) -> dict:
    return {"tool": "test.record", "inputs": {"name": f"'{name}'"}, **config}


def test_send_tasks_run_once_per_key_and_retry_with_real_workers(
    engine, workers, test_tools, redis_client
):
    flaky = {"name": "'flaky-' + $input.n", "fail_times": "2"}
    doc = chain(
        ("send", node("sendTask", "Send offer", message="offer", saveTo="sent", **_record("send"))),
        ("again", node("sendTask", tool="test.flaky", inputs=flaky, retries=3, backoff=0.05)),
    )
    version = publish_document(doc)
    instances = [start(engine, version, input={"n": str(n)}) for n in range(4)]
    workers.start(2)
    for instance_id in instances:
        wait_for(lambda i=instance_id: load(engine, i).status == "completed", what="completion")
    seen = tools_for_tests.seen(redis_client, "send")
    assert len(seen) == 4
    assert len({entry["key"] for entry in seen}) == 4
    for n, instance_id in enumerate(instances):
        instance = load(engine, instance_id)
        assert instance.vars["sent"]["calls"] in range(1, 5)
        assert instance.nodes["again"] == {"calls": 3}
        attempts = details(engine, instance_id, "tool_attempt")
        assert [d["status"] for node_id, d in attempts if node_id == "again"] == [
            "error",
            "error",
            "ok",
        ]
        assert redis_client.llen(f"fdtest:flaky-times:flaky-{n}") == 3


def test_a_business_error_of_a_send_task_goes_to_its_error_boundary(engine, demo, test_tools):
    nodes = {
        "start": node("startEvent"),
        "send": node("sendTask", tool="test.business", inputs={"code": "'REJECTED'"}),
        "end": node("endEvent"),
        "caught": node("boundaryEvent", attachedTo="send", event="error", code="REJECTED"),
        "handle": node("manualTask", "Phone the customer"),
        "handled": node("endEvent"),
    }
    flows = {**wire("start", "send", "end"), **wire("caught", "handle", "handled")}
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert "end" not in entered(engine, instance_id)
    assert entered(engine, instance_id)[-3:] == ["caught", "handle", "handled"]
    [(_, thrown)] = details(engine, instance_id, "thrown")
    assert thrown["caught_by"] == "caught"


def test_a_message_throw_calls_its_tool_then_goes_on(engine, test_tools, redis_client):
    throw = node("messageThrow", message="shipped", saveTo="shipping", **_record("throw"))
    version = publish_document(chain(("tell", throw)))
    instance_id = start(engine, version)
    assert load(engine, instance_id).status == "running"
    drain(engine)
    instance = load(engine, instance_id)
    assert (instance.status, instance.vars) == ("completed", {"shipping": {"calls": 1}})
    assert len(tools_for_tests.seen(redis_client, "throw")) == 1


def test_a_message_end_completes_the_instance_only_after_its_tool(engine, test_tools, redis_client):
    nodes = {
        "start": node("startEvent"),
        "end": node("endEvent", "Tell the shop", event="message", message="done", **_record("end")),
    }
    version = publish_document(document(nodes, wire("start", "end")))
    instance_id = start(engine, version)
    instance = load(engine, instance_id)
    assert instance.status == "running"
    [job] = pending_jobs(engine, instance_id, "tool")
    assert (job.node_id, job.tool) == ("end", "test.record")
    assert tools_for_tests.seen(redis_client, "end") == []
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert len(tools_for_tests.seen(redis_client, "end")) == 1
    engine.rollback()
    token = engine.scalar(select(Token).where(Token.instance_id == instance_id))
    assert (token.node_id, token.status) == ("end", "done")
    assert history(engine, instance_id)[-2:] == [("tool_attempt", "end"), ("completed", None)]


def test_a_message_end_in_a_sub_process_holds_the_sub_process_until_its_tool_ran(
    engine, test_tools, redis_client
):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        "s_start": inside("sub", "startEvent"),
        "s_split": inside("sub", "parallelGateway"),
        "s_plain": inside("sub", "endEvent"),
        "s_tell": inside("sub", "endEvent", event="message", message="m", **_record("sub-end")),
        "after": node("scriptTask", script="after = true"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "sub", "after", "end"),
        **wire("s_start", "s_split", "s_plain"),
        **wire("s_split", "s_tell"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    assert load(engine, instance_id).status == "running"
    assert "after" not in entered(engine, instance_id)
    drain(engine)
    instance = load(engine, instance_id)
    assert (instance.status, instance.vars) == ("completed", {"after": True})
    assert entered(engine, instance_id)[-2:] == ["after", "end"]


def test_a_failing_tool_at_a_message_end_is_an_incident_and_the_instance_does_not_complete(
    engine, test_tools
):
    nodes = {
        "start": node("startEvent"),
        "end": node("endEvent", event="message", message="m", tool="test.fatal", retries=0),
    }
    version = publish_document(document(nodes, wire("start", "end")))
    instance_id = start(engine, version)
    drain(engine)
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert (instance.error["node"], instance.error["code"]) == ("end", "bad_request")


def test_multi_instance_send_tasks_call_the_tool_once_per_item(engine, test_tools, redis_client):
    send = node(
        "sendTask",
        tool="test.record",
        inputs={"name": "'multi'", "to": "$item"},
        multiInstance={"collection": "$input.to"},
    )
    version = publish_document(chain(("send", send)))
    instance_id = start(engine, version, input={"to": ["a", "b", "c"]})
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    seen = tools_for_tests.seen(redis_client, "multi")
    assert sorted(entry["inputs"]["to"] for entry in seen) == ["a", "b", "c"]
    assert len({entry["key"] for entry in seen}) == 3


# --- receive tasks ----------------------------------------------------------------------------


def _receive(**config) -> dict:
    return node(
        "receiveTask",
        "Wait for payment",
        message="payment",
        correlationKey="$input.order",
        **config,
    )


def _operator(app):
    client = app.test_client()
    headers = basic("operator")

    def send(body: dict):
        return client.post("/api/messages", json=body, headers=headers)

    return send


def test_a_receive_task_waits_for_its_message_sent_through_the_api(engine, demo, app):
    version = publish_document(chain(("pay", _receive(saveTo="payment"))))
    instance_id = start(engine, version, input={"order": "A-1"})
    engine.rollback()
    [subscription] = engine.scalars(select(MessageSubscription)).all()
    assert (subscription.node_id, subscription.name, subscription.correlation_key) == (
        "pay",
        "payment",
        "A-1",
    )
    send = _operator(app)
    other = send({"name": "payment", "correlation_key": "B-2", "payload": {}})
    assert load(engine, instance_id).status == "running", other.get_data(as_text=True)
    answer = send({"name": "payment", "correlation_key": "A-1", "payload": {"amount": 12}})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars == {"payment": {"amount": 12}}
    assert instance.nodes == {"pay": {"amount": 12}}


def test_a_timer_boundary_on_a_receive_task_that_fires_first_withdraws_the_wait(engine, demo, app):
    nodes = {
        "start": node("startEvent"),
        "pay": _receive(),
        "end": node("endEvent"),
        "late": node("boundaryEvent", attachedTo="pay", event="timer", duration="PT1H"),
        "remind": node("milestone", "Payment is late"),
        "late_end": node("endEvent"),
    }
    flows = {**wire("start", "pay", "end"), **wire("late", "remind", "late_end")}
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"order": 7})
    [timer] = pending_jobs(engine, instance_id, "timer")
    assert timer.node_id == "late"
    fire(engine, timer, instance_id)
    assert load(engine, instance_id).status == "completed"
    assert entered(engine, instance_id)[-3:] == ["late", "remind", "late_end"]
    engine.rollback()
    assert engine.scalar(select(func.count()).select_from(MessageSubscription)) == 0
    late = _operator(app)({"name": "payment", "correlation_key": 7, "payload": {}})
    assert late.status_code in (200, 404), late.get_data(as_text=True)
    assert "end" not in entered(engine, instance_id)


def test_a_message_boundary_on_a_receive_task_and_a_non_interrupting_timer(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "pay": _receive(),
        "end": node("endEvent"),
        "cancel": node(
            "boundaryEvent",
            attachedTo="pay",
            event="message",
            message="cancel",
            correlationKey="$input.order",
        ),
        "cancelled": node("endEvent"),
        "nudge": node(
            "boundaryEvent", attachedTo="pay", event="timer", duration="PT1H", interrupting=False
        ),
        "nudged": node("endEvent"),
    }
    flows = {
        **wire("start", "pay", "end"),
        **wire("cancel", "cancelled"),
        **wire("nudge", "nudged"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"order": "X"})
    [timer] = pending_jobs(engine, instance_id, "timer")
    fire(engine, timer, instance_id)
    assert load(engine, instance_id).status == "running", "the receive task goes on waiting"
    commit(steps.deliver_message(engine, instance_id, "cancel", "X", {"why": "changed mind"}))
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.nodes["cancel"] == {"why": "changed mind"}
    assert "end" not in entered(engine, instance_id)
    engine.rollback()
    assert engine.scalar(select(func.count()).select_from(MessageSubscription)) == 0


def test_a_multi_instance_receive_task_waits_for_one_message_per_item(engine):
    pay = node(
        "receiveTask",
        message="paid",
        correlationKey="$item",
        multiInstance={"collection": "$input.orders"},
    )
    version = publish_document(chain(("pay", pay)))
    instance_id = start(engine, version, input={"orders": ["o1", "o2", "o3"]})
    assert (
        sorted(steps.message_targets(engine, "paid", key) for key in ("o1", "o2", "o3"))
        == [[instance_id]] * 3
    )
    for key, amount in (("o3", 3), ("o1", 1)):
        commit(steps.deliver_message(engine, instance_id, "paid", key, {"amount": amount}))
    assert load(engine, instance_id).status == "running"
    commit(steps.deliver_message(engine, instance_id, "paid", "o2", {"amount": 2}))
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.nodes["pay"] == [{"amount": 1}, {"amount": 2}, {"amount": 3}]


def test_the_new_kinds_run_in_a_real_worker_end_to_end(
    engine, workers, test_tools, redis_client, demo, app
):
    nodes = {
        "start": node("startEvent"),
        "calc": node("scriptTask", script="n = $input.n + 1"),
        "hand": node("manualTask", "Hand over"),
        "pay": _receive(saveTo="paid"),
        "tell": node("sendTask", message="receipt", **_record("e2e")),
        "flag": node("milestone", "Paid"),
        "end": node("endEvent", event="message", message="bye", **_record("e2e-end")),
    }
    version = publish_document(
        document(nodes, wire("start", "calc", "hand", "pay", "tell", "flag", "end"))
    )
    instance_id = start(engine, version, input={"n": 1, "order": "W-1"})
    workers.start(1)
    assert load(engine, instance_id).status == "running"
    answer = _operator(app)({"name": "payment", "correlation_key": "W-1", "payload": {"ok": True}})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    wait_for(lambda: load(engine, instance_id).status == "completed", what="completion")
    instance = load(engine, instance_id)
    assert instance.vars == {"n": 2, "paid": {"ok": True}}
    assert len(tools_for_tests.seen(redis_client, "e2e")) == 1
    assert len(tools_for_tests.seen(redis_client, "e2e-end")) == 1
    engine.rollback()
    assert engine.scalar(select(func.count()).select_from(Job).where(Job.status == "pending")) == 0
    assert json.dumps(instance.nodes)


def test_an_activity_without_outgoing_flow_ends_only_its_own_path(engine):
    """BPMN's implicit end: a parallel branch whose task has no outgoing flow ends there; the
    instance completes once the other branch reaches its end, in a sub-process as at the top."""
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "note": node("userTask", "Note", assignee=CLERK),
        "sub": node("subProcess", "Sub"),
        "s_start": inside("sub", "startEvent"),
        "s_task": inside("sub", "userTask", "Inner", assignee=CLERK),
        "go": node("userTask", "Go", assignee=CLERK),
        "end": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "split"),
        "f2": flow("split", "note"),
        "f3": flow("split", "sub"),
        "s1": flow("s_start", "s_task"),
        "f4": flow("sub", "go"),
        "f5": flow("go", "end"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    tasks = {t.node_id: t for t in open_tasks(engine, instance_id)}
    assert set(tasks) == {"note", "s_task"}
    complete(engine, tasks["note"])
    assert load(engine, instance_id).status == "running"
    complete(engine, tasks["s_task"])  # the sub-process's only path ends: the sub completes
    [go] = open_tasks(engine, instance_id)
    assert go.node_id == "go"
    complete(engine, go)
    assert load(engine, instance_id).status == "completed"
    ended = [n for n, d in details(engine, instance_id, "left") if d.get("implicit_end")]
    assert sorted(ended) == ["note", "s_task"]
