"""Instantiating receive tasks and event-based gateways in the process format: imported from
`instantiate` and `eventGatewayType`, exported back, and where validation refuses them."""

from __future__ import annotations

from lxml import etree

from tests.helpers.bpmn import definitions, same_after_round_trip
from tests.helpers.validation import found, make, node, user
from webapp.process.bpmn import import_bpmn
from webapp.process.bpmn.namespaces import BPMN, q
from webapp.process.validation import validate

STARTERS = """
  <{p}message id="m1" name="paid"/><{p}message id="m2" name="shipped"/>
  <{p}process id="p" isExecutable="true">
    <{p}eventBasedGateway id="gw" instantiate="true" eventGatewayType="Parallel"/>
    <{p}intermediateCatchEvent id="paid"><{p}messageEventDefinition messageRef="m1"/>
    </{p}intermediateCatchEvent>
    <{p}receiveTask id="shipped" messageRef="m2"/>
    <{p}parallelGateway id="join"/>
    <{p}endEvent id="e"/>
    <{p}sequenceFlow id="f1" sourceRef="gw" targetRef="paid"/>
    <{p}sequenceFlow id="f2" sourceRef="gw" targetRef="shipped"/>
    <{p}sequenceFlow id="f3" sourceRef="paid" targetRef="join"/>
    <{p}sequenceFlow id="f4" sourceRef="shipped" targetRef="join"/>
    <{p}sequenceFlow id="f5" sourceRef="join" targetRef="e"/>
  </{p}process>
"""


def test_an_instantiating_parallel_gateway_imports_publishes_and_exports() -> None:
    result = import_bpmn(definitions(STARTERS))
    assert result.unsupported == []
    gateway = result.document["nodes"]["gw"]
    assert gateway["config"] == {"instantiate": True, "gatewayType": "parallel"}
    assert [p for p in validate(result.document) if p.severity == "error"] == []
    root = etree.fromstring(same_after_round_trip(result.document).encode())
    written = next(root.iter(q(BPMN, "eventBasedGateway")))
    assert (written.get("instantiate"), written.get("eventGatewayType")) == ("true", "Parallel")


def _receiving(**config) -> dict:
    config.setdefault("message", "order")
    return make(
        {
            "order": node("receiveTask", "Order", instantiate=True, **config),
            "t": user(),
            "end": "endEvent",
        },
        ("order", "t"),
        ("t", "end"),
    )


def test_a_receive_task_that_starts_the_process_is_its_start() -> None:
    assert [p for p in validate(_receiving()) if p.severity == "error"] == []
    unnamed = found(validate(_receiving(message="")))
    assert ("config.missing", "order") in unnamed


def test_an_instantiating_element_has_no_incoming_flow_nor_a_scope() -> None:
    doc = _receiving()
    doc["nodes"]["start"] = node("startEvent")
    doc["flows"]["in"] = {"source": "start", "target": "order"}
    assert ("instantiate.incoming", "order") in found(validate(doc))
    nested = make(
        {
            "start": "startEvent",
            "sub": node("subProcess", "Sub"),
            "order": {
                **node("receiveTask", "Order", message="o", instantiate=True),
                "parent": "sub",
            },
            "end": "endEvent",
        },
        ("start", "sub"),
        ("sub", "end"),
    )
    assert ("instantiate.scope", "order") in found(validate(nested))


def test_an_instantiating_gateway_leads_to_message_waits_only() -> None:
    doc = make(
        {
            "gw": node("eventBasedGateway", "G", instantiate=True),
            "paid": node("messageCatch", "Paid", message="paid", correlationKey="$input.k"),
            "late": node("timerCatch", "Late", duration="PT1H"),
            "end": "endEvent",
        },
        ("gw", "paid"),
        ("gw", "late"),
        ("paid", "end"),
        ("late", "end"),
    )
    assert ("gateway.event_target", "gw") in found(validate(doc))
    parallel = make(
        {
            "start": "startEvent",
            "gw": node("eventBasedGateway", "G", gatewayType="parallel"),
            "paid": node("messageCatch", "Paid", message="paid", correlationKey="$input.k"),
            "late": node("timerCatch", "Late", duration="PT1H"),
            "end": "endEvent",
        },
        ("start", "gw"),
        ("gw", "paid"),
        ("gw", "late"),
        ("paid", "end"),
        ("late", "end"),
    )
    assert ("config.invalid", "gw") in found(validate(parallel))
