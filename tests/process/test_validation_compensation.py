"""Validation of compensation and transactions: each misplaced element is named, and a well
formed document (handlers outside the sequence flow, reading their activity's data) is clean."""

from __future__ import annotations

from tests.helpers.compensation import booking, saga
from tests.helpers.documents import document, flow, inside, node, wire
from webapp.process.validation import validate


def codes(doc: dict) -> set[tuple[str, str | None]]:
    return {(p.code, p.element_id) for p in validate(doc) if p.severity in ("error", "warning")}


def test_a_saga_with_handlers_outside_the_flow_is_clean() -> None:
    assert codes(saga()) == set()


def test_a_compensation_boundary_needs_its_handler() -> None:
    doc = saga()
    del doc["nodes"]["comp_flight"]["config"]["handler"]
    found = codes(doc)
    assert ("compensation.handler_missing", "comp_flight") in found
    # The handler it no longer names is an ordinary task again: nothing leads to it.
    assert ("node.incoming_missing", "undo_flight") in found


def test_a_handler_is_an_activity_beside_its_event_with_no_flows_of_its_own() -> None:
    doc = saga()
    doc["nodes"]["comp_flight"]["config"]["handler"] = "throw0"
    assert ("compensation.handler_invalid", "comp_flight") in codes(doc)
    doc = saga()
    doc["flows"]["extra"] = flow("undo_flight", "end")
    assert ("compensation.handler_flows", "undo_flight") in codes(doc)
    doc = saga()
    doc["nodes"]["comp_hotel"]["config"]["handler"] = "undo_flight"
    assert ("compensation.handler_shared", "comp_hotel") in codes(doc)


def test_a_compensation_boundary_has_no_outgoing_flow() -> None:
    doc = saga()
    doc["flows"]["out"] = flow("comp_flight", "end")
    assert ("compensation.flows", "comp_flight") in codes(doc)


def test_a_throw_names_an_activity_of_its_scope() -> None:
    assert ("compensation.activity", "throw0") in codes(saga(activity="nowhere"))
    doc = saga(activity="book_flight")
    assert codes(doc) == set()
    doc["nodes"]["plain"] = node("scriptTask", script="x = 1")
    doc["nodes"]["throw0"]["config"]["activity"] = "plain"
    assert ("compensation.nothing", "throw0") in codes(doc)


def _transaction(cancel_boundary: bool = True) -> dict:
    nodes = {
        "start": node("startEvent"),
        "tx": node("transaction", "Payment"),
        "t_start": inside("tx", "startEvent"),
        "t_cancel": inside("tx", "endEvent", event="cancel"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "tx", "end"), **wire("t_start", "t_cancel")}
    if cancel_boundary:
        nodes["on_cancel"] = node("boundaryEvent", event="cancel", attachedTo="tx")
        nodes["c_end"] = node("endEvent")
        flows.update(wire("on_cancel", "c_end"))
    return document(nodes, flows)


def test_a_cancel_end_sits_in_a_transaction_with_a_cancel_boundary() -> None:
    assert codes(_transaction()) == set()
    assert ("cancel.no_boundary", "t_cancel") in codes(_transaction(cancel_boundary=False))
    doc = _transaction()
    doc["nodes"]["tx"]["kind"] = "subProcess"
    found = codes(doc)
    assert ("cancel.outside_transaction", "t_cancel") in found
    assert ("boundary.cancel_host", "on_cancel") in found


def test_a_compensation_event_sub_process_belongs_in_a_sub_process() -> None:
    nodes = {
        "start": node("startEvent"),
        **booking("flight", script="price_now = 1"),
        "end": node("endEvent"),
        "esp": node("eventSubProcess"),
        "e_start": inside("esp", "startEvent", event="compensate"),
        "e_end": inside("esp", "endEvent"),
    }
    flows = {**wire("start", "book_flight", "end"), **wire("e_start", "e_end")}
    assert ("compensation.start_scope", "e_start") in codes(document(nodes, flows))


def test_a_handler_of_a_multi_instance_activity_may_read_its_item() -> None:
    nodes = {
        "start": node("startEvent"),
        "ship": node("scriptTask", script="shipped = $item", multiInstance={"cardinality": "2"}),
        "comp": node("boundaryEvent", event="compensate", attachedTo="ship", handler="recall"),
        "recall": node("scriptTask", script="recalled = $item"),
        "throw": node("compensationThrow"),
        "end": node("endEvent"),
    }
    assert codes(document(nodes, wire("start", "ship", "throw", "end"))) == set()


def test_problems_name_compensation_and_cancel_events_by_their_definition() -> None:
    doc = saga()
    del doc["nodes"]["comp_flight"]["config"]["handler"]
    (missing,) = [p for p in validate(doc) if p.code == "compensation.handler_missing"]
    assert missing.message.startswith("The compensation boundary event on 'Book flight'")
    doc = _transaction(cancel_boundary=False)
    (no_boundary,) = [p for p in validate(doc) if p.code == "cancel.no_boundary"]
    assert "cancel end event" in no_boundary.message


def test_a_throw_with_nothing_to_undo_and_a_handler_nothing_reaches_are_warned_about() -> None:
    doc = saga()
    for boundary in ("comp_flight", "comp_hotel"):
        del doc["nodes"][boundary]
    for handler in ("undo_flight", "undo_hotel"):
        del doc["nodes"][handler]
    assert ("compensation.nothing", "throw0") in codes(doc)
    doc = saga(throws=0)
    found = codes(doc)
    assert ("compensation.never_thrown", "comp_flight") in found
    assert ("compensation.never_thrown", "comp_hotel") in found
    assert not {code for code, _ in codes(saga())} & {"compensation.never_thrown"}


def test_a_throw_around_a_sub_process_reaches_the_handlers_inside_it() -> None:
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", "Trip"),
        "s_start": inside("sub", "startEvent"),
        **{k: {**v, "parent": "sub"} for k, v in booking("flight", script="price_now = 1").items()},
        "s_end": inside("sub", "endEvent"),
        "undo": node("endEvent", event="compensate"),
    }
    flows = {**wire("start", "sub", "undo"), **wire("s_start", "book_flight", "s_end")}
    assert codes(document(nodes, flows)) == set()
