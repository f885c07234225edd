"""The instance page says what a token at an event-based gateway or an inclusive join waits for,
on the diagram (the badge's accessible name) and in the token table, and the history names the
event that won."""

from __future__ import annotations

from tests.helpers.documents import diamond, node, simple, task
from tests.helpers.http import send
from tests.helpers.instances import complete, start
from tests.helpers.pages import diagram_state, region, text_of
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.models import Task


def test_an_event_gateway_lists_its_events_and_the_history_names_the_winner(
    operator, engine, client, demo
):
    instance_id = start(engine, publish_document(simple(), key="pay"), input={"order": "O-1"})
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    awaited = "the first of: message 'paid' (Paid), timer (Late)"
    assert diagram_state(page)["awaits"] == {"gw": awaited}
    assert f"Wait gw waiting waits for {awaited}" in text_of(region(page, "live-tokens"))
    assert send(client, "O-1", {"amount": 1}).status_code == 200
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    history = text_of(page[page.index('id="history"') :])
    assert "event won Wait Message 'paid' won; the other events were withdrawn" in history
    assert "(won at Paid; withdrawn: Late)" in history
    assert diagram_state(page)["awaits"] == {}


def test_an_inclusive_join_lists_the_branches_it_still_waits_for(operator, engine, demo):
    branches = {"a": node("serviceTask", tool="noop", inputs={}), "b": task("B"), "c": task("C")}
    version = publish_document(diamond(branches), key="incl")
    instance_id = start(engine, version, input={"a": True, "b": True, "c": True})
    drain(engine)
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    both = "the branches from B (from_b), from C (from_c)"
    assert diagram_state(page)["awaits"] == {"join": both}
    assert f"Join join waiting waits for {both}" in text_of(region(page, "live-tokens"))
    engine.rollback()
    b_task = engine.query(Task).filter_by(instance_id=instance_id, node_id="b").one()
    complete(engine, b_task)
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    assert diagram_state(page)["awaits"] == {"join": "the branches from C (from_c)"}
    history = text_of(page[page.index('id="history"') :])
    assert 'taken:["to_a","to_b","to_c"]' in history.replace(" ", "")
