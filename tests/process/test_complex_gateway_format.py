"""The complex gateway in the process format: `$gateway` only in its activation condition, and
its activation condition and default flow through BPMN import and export."""

from __future__ import annotations

from lxml import etree

from tests.helpers.bpmn import definitions, same_after_round_trip
from tests.helpers.validation import found, make, node, user
from webapp.process.bpmn import import_bpmn
from webapp.process.bpmn.namespaces import BPMN, q
from webapp.process.validation import validate


def joined(activation: str, condition: str | None = None) -> dict:
    return make(
        {
            "start": "startEvent",
            "split": "parallelGateway",
            "a": user("A"),
            "b": user("B"),
            "cx": node("complexGateway", "Enough", activation=activation),
            "end": "endEvent",
        },
        ("start", "split"),
        ("split", "a"),
        ("split", "b"),
        ("a", "cx"),
        ("b", "cx"),
        ("cx", "end", {"condition": condition} if condition else {}),
    )


def test_gateway_counts_are_read_only_in_the_activation_condition() -> None:
    assert found(validate(joined("$gateway.arrived >= 1 and $gateway.waiting < 2"))) == set()
    assert ("expression.reference", "cx") in found(validate(joined("$gateway.count > 1")))
    misplaced = found(validate(joined("$gateway.arrived >= 1", condition="$gateway.waiting == 0")))
    assert ("expression.reference", "f6") in misplaced


COMPLEX = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}parallelGateway id="split"/>
    <{p}complexGateway id="cx" default="other">
      <{p}activationCondition language="flowdesk">$gateway.arrived &gt;= 1</{p}activationCondition>
    </{p}complexGateway>
    <{p}endEvent id="e"/><{p}endEvent id="e2"/>
    <{p}sequenceFlow id="f1" sourceRef="s" targetRef="split"/>
    <{p}sequenceFlow id="f2" sourceRef="split" targetRef="cx"/>
    <{p}sequenceFlow id="f3" sourceRef="split" targetRef="cx"/>
    <{p}sequenceFlow id="main" sourceRef="cx" targetRef="e">
      <{p}conditionExpression language="flowdesk">$input.x == 1</{p}conditionExpression>
    </{p}sequenceFlow>
    <{p}sequenceFlow id="other" sourceRef="cx" targetRef="e2"/>
  </{p}process>
"""


def test_a_complex_gateway_imports_and_exports_its_condition_and_default() -> None:
    result = import_bpmn(definitions(COMPLEX))
    assert result.unsupported == []
    cx = result.document["nodes"]["cx"]
    assert (cx["kind"], cx["config"]) == ("complexGateway", {"activation": "$gateway.arrived >= 1"})
    assert result.document["flows"]["other"]["default"] is True
    assert [p for p in validate(result.document) if p.severity == "error"] == []
    exported = etree.fromstring(same_after_round_trip(result.document).encode())
    gateway = next(exported.iter(q(BPMN, "complexGateway")))
    assert gateway.get("default") == "other"
    assert gateway.findtext(q(BPMN, "activationCondition")) == "$gateway.arrived >= 1"
