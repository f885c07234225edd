"""Conditional events and standard loops in BPMN files: Camunda 7 (JUEL, `camunda:variableName`),
Camunda 8 (FEEL), SpiffArena (Python) and our own conditions import; export writes them back as
standard BPMN and reading that again gives the same document."""

from __future__ import annotations

from lxml import etree

from tests.helpers.bpmn import bpmn_schema, codes, definitions
from webapp.process.bpmn import export_bpmn, import_bpmn

CAMUNDA_NS = 'xmlns:camunda="http://camunda.org/schema/1.0/bpmn"'
XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'

EVENTS = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
    <{p}userTask id="t"/>
    <{p}sequenceFlow id="f2" sourceRef="t" targetRef="c"/>
    <{p}intermediateCatchEvent id="c">
      <{p}conditionalEventDefinition camunda:variableName="amount, status"
          camunda:variableEvents="update">
        <{p}condition xsi:type="{p}tFormalExpression">${{amount &gt; 100}}</{p}condition>
      </{p}conditionalEventDefinition>
    </{p}intermediateCatchEvent>
    <{p}sequenceFlow id="f3" sourceRef="c" targetRef="e"/>
    <{p}endEvent id="e"/>
    <{p}boundaryEvent id="b" attachedToRef="t" cancelActivity="false">
      <{p}conditionalEventDefinition>
        <{p}condition xsi:type="{p}tFormalExpression">= urgent = true</{p}condition>
      </{p}conditionalEventDefinition>
    </{p}boundaryEvent>
    <{p}sequenceFlow id="f4" sourceRef="b" targetRef="e2"/>
    <{p}endEvent id="e2"/>
    <{p}startEvent id="cs">
      <{p}conditionalEventDefinition>
        <{p}condition xsi:type="{p}tFormalExpression">total &gt;= 10</{p}condition>
      </{p}conditionalEventDefinition>
    </{p}startEvent>
    <{p}sequenceFlow id="f5" sourceRef="cs" targetRef="t"/>
  </{p}process>
"""

LOOPS = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
    <{p}userTask id="t">
      <{p}standardLoopCharacteristics testBefore="true" loopMaximum="4">
        <{p}loopCondition xsi:type="{p}tFormalExpression">again == True</{p}loopCondition>
      </{p}standardLoopCharacteristics>
    </{p}userTask>
    <{p}sequenceFlow id="f2" sourceRef="t" targetRef="sub"/>
    <{p}subProcess id="sub">
      <{p}standardLoopCharacteristics/>
      <{p}startEvent id="ss"/>
      <{p}sequenceFlow id="sf" sourceRef="ss" targetRef="se"/>
      <{p}endEvent id="se"/>
    </{p}subProcess>
    <{p}sequenceFlow id="f3" sourceRef="sub" targetRef="e"/>
    <{p}endEvent id="e"/>
  </{p}process>
"""


def _config(result, node_id: str) -> dict:
    return result.document["nodes"][node_id]["config"]


def test_conditional_events_import_with_their_conditions_translated() -> None:
    result = import_bpmn(definitions(EVENTS, extra_ns=f"{CAMUNDA_NS} {XSI}"))
    assert result.unsupported == []
    nodes = result.document["nodes"]
    assert nodes["c"]["kind"] == "conditionalCatch"
    assert _config(result, "c") == {"condition": "$vars.amount > 100", "watch": "amount,status"}
    assert "import.condition_events" in codes(result)
    boundary = _config(result, "b")
    assert boundary["event"] == "conditional" and boundary["interrupting"] is False
    assert boundary["condition"] == "$vars.urgent == true"
    assert _config(result, "cs") == {"event": "conditional", "condition": "$vars.total >= 10"}


def test_standard_loops_import_with_their_settings() -> None:
    result = import_bpmn(definitions(LOOPS, extra_ns=XSI))
    assert result.unsupported == []
    assert _config(result, "t")["loop"] == {
        "testBefore": True,
        "condition": "$vars.again in [true, 1]",
        "maximum": 4,
    }
    assert _config(result, "sub")["loop"] == {"testBefore": False}


def test_export_writes_standard_bpmn_and_reads_back_the_same() -> None:
    schema = bpmn_schema()
    for body in (EVENTS, LOOPS):
        first = import_bpmn(definitions(body, extra_ns=f"{CAMUNDA_NS} {XSI}"))
        exported = export_bpmn(first.document)
        assert schema.validate(etree.fromstring(exported.encode())), schema.error_log.last_error
        assert "conditionalEventDefinition" in exported or "standardLoopCharacteristics" in exported
        again = import_bpmn(exported)
        for node_id, node in first.document["nodes"].items():
            assert again.document["nodes"][node_id]["config"] == node["config"], node_id
    exported = export_bpmn(import_bpmn(definitions(LOOPS, extra_ns=XSI)).document)
    assert 'loopMaximum="4"' in exported and 'testBefore="true"' in exported


def test_a_camunda_file_gets_its_variable_name_back_on_export() -> None:
    body = EVENTS.replace('<{p}userTask id="t"/>', '<{p}userTask id="t" camunda:assignee="demo"/>')
    result = import_bpmn(definitions(body, extra_ns=f"{CAMUNDA_NS} {XSI}"))
    exported = export_bpmn(result.document)
    root = etree.fromstring(exported.encode())
    found = root.find(".//{*}intermediateCatchEvent/{*}conditionalEventDefinition")
    assert found is not None
    assert found.get("{http://camunda.org/schema/1.0/bpmn}variableName") == "amount,status"
