"""The operations instance page on the later task types and events: manual tasks, milestones
and link jumps in the history in words, a receive task's token waiting where a message catch's
would, a message end's token active until its tool ran."""

from __future__ import annotations

from tests.helpers.documents import document, node, wire_pairs
from tests.helpers.instances import start
from tests.helpers.pages import diagram_state, region, text_of
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain


def test_history_and_tokens_of_the_new_task_types(operator, engine, demo):
    nodes = {
        "start": node("startEvent", "Start"),
        "sign": node("manualTask", "Sign the paper form"),
        "half": node("milestone", "Half way"),
        "jump": node("linkThrow", "To payment", link="pay"),
        "land": node("linkCatch", "Payment", link="pay"),
        "calc": node("scriptTask", "Work out", script="total = 2 * 21"),
        "wait": node(
            "receiveTask", "Wait for payment", message="paid", correlationKey="$input.order"
        ),
        "end": node("endEvent", "Done"),
    }
    flows = {
        **wire_pairs("start", "sign", "half", "jump"),
        **wire_pairs("land", "calc", "wait", "end"),
    }
    version = publish_document(document(nodes, flows), "kinds")
    instance_id = start(engine, version, input={"order": "A-1"})

    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    assert diagram_state(page)["active"] == {"wait": 1}
    assert {"sign", "half", "jump", "land", "calc"} <= set(diagram_state(page)["visited"])
    assert "Wait for payment wait waiting" in text_of(region(page, "live-tokens"))
    history = text_of(page[page.index('id="history"') :])
    assert "manual task recorded Sign the paper form done outside Flowdesk" in history
    assert "milestone reached Half way" in history
    assert "left To payment jumped by link pay to Payment" in history
    assert '"total": 42' in text_of(page)


def test_a_message_end_shows_its_token_active_until_its_tool_ran(operator, engine, demo):
    nodes = {
        "start": node("startEvent", "Start"),
        "end": node("endEvent", "Tell the shop", event="message", message="done", tool="noop"),
    }
    version = publish_document(document(nodes, wire_pairs("start", "end")), "tell")
    instance_id = start(engine, version)
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    assert diagram_state(page)["active"] == {"end": 1}
    assert "Tell the shop end active" in text_of(region(page, "live-tokens"))
    drain(engine)
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    assert diagram_state(page)["status"] == "completed"
