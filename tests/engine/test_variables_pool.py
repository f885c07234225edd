"""A process with `"variables": "pool"` (imported from Camunda, Flowable or SpiffWorkflow) reads
one pool of process variables: start input, form answers, payloads and tool results land in
`$vars`; without the setting nothing but `saveTo` and scripts writes there."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.documents import CLERK, chain, node
from tests.helpers.instances import broadcast, load, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import steps
from webapp.models import User
from webapp.services.jobs import commit

FORM = {"fields": [{"key": "approved", "label": "Approved?", "type": "boolean"}]}


def _process(pool: bool, read: str) -> dict:
    """start -> review (form) -> tool -> message -> signal -> end; the tool reads `read`."""
    doc = chain(
        ("review", node("userTask", "Review", assignee=CLERK, form=FORM)),
        (
            "price",
            node(
                "serviceTask",
                "Price",
                tool="noop",
                inputs={"total": f"{read}.amount * 2", "amount": "1"},
            ),
        ),
        ("paid", node("messageCatch", message="payment", correlationKey="$input.order")),
        ("go", node("signalCatch", signal="go")),
    )
    if pool:
        doc["variables"] = "pool"
    return doc


def _run(engine, doc: dict, key: str) -> int:
    instance_id = start(engine, publish_document(doc, key=key), input={"amount": 50, "order": key})
    bob = engine.scalar(select(User).where(User.username == "bob"))
    (task,) = open_tasks(engine, instance_id)
    commit(steps.complete_task(engine, task.id, {"approved": True}, actor=bob))
    drain(engine)
    commit(steps.deliver_message(engine, instance_id, "payment", key, {"paid": 50, "amount": 3}))
    broadcast(engine, "go", {"channel": "mail"})
    return instance_id


def test_the_pool_holds_start_input_form_answers_tool_results_and_payloads(engine, demo):
    instance_id = _run(engine, _process(True, "$vars"), "pooled")
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    # Later writes win: the tool's `amount` (1) replaced the start's, the message's replaced it.
    assert instance.vars == {
        "amount": 3,
        "order": "pooled",
        "approved": True,
        "total": 100,
        "paid": 50,
        "channel": "mail",
    }
    assert instance.input == {"amount": 50, "order": "pooled"}
    assert instance.nodes["review"] == {"approved": True}
    assert instance.nodes["price"] == {"total": 100, "amount": 1}


def test_without_the_setting_only_save_to_writes_vars(engine, demo):
    instance_id = _run(engine, _process(False, "$input"), "plain")
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars == {}
    assert instance.nodes["price"] == {"total": 100, "amount": 1}
    assert instance.nodes["paid"] == {"paid": 50, "amount": 3}


def test_a_save_to_keeps_the_output_out_of_the_pool(engine):
    doc = chain(("price", node("serviceTask", "P", tool="noop", inputs={"x": "1"}, saveTo="p")))
    doc["variables"] = "pool"
    instance_id = start(engine, publish_document(doc, key="saved"), input={"a": 1})
    drain(engine)
    assert load(engine, instance_id).vars == {"a": 1, "p": {"x": 1}}


def test_an_event_sub_process_correlates_on_a_start_variable_of_the_pool(engine, demo):
    """Zeebe evaluates such a correlation key from the variables the instance started with."""
    from tests.helpers.documents import document, inside, wire

    nodes = {
        "start": node("startEvent"),
        "work": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
        "on_cancel": node("eventSubProcess"),
        "c_start": inside(
            "on_cancel", "startEvent", event="message", message="cancel", correlationKey="$vars.id"
        ),
        "c_end": inside("on_cancel", "endEvent"),
    }
    doc = document(nodes, {**wire("start", "work", "end"), **wire("c_start", "c_end")})
    doc["variables"] = "pool"
    instance_id = start(engine, publish_document(doc, key="esp"), input={"id": "K-9"})
    assert steps.message_targets(engine, "cancel", "K-9") == [instance_id]
    commit(steps.deliver_message(engine, instance_id, "cancel", "K-9", {"why": "late"}))
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars == {"id": "K-9", "why": "late"}
