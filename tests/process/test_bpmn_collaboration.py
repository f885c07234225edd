"""Collaborations lose nothing on export: other pools' messages, signals and codes, other
diagrams of the file, and no Flowdesk markers leak into the pools Flowdesk does not run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from lxml import etree

from tests.helpers.bpmn import bpmn_schema
from tests.helpers.corpus_files import check_roundtrip, load
from tests.helpers.requirements import moddle_node
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.bpmn.namespaces import BPMN, BPMNDI, FLOWDESK, q
from webapp.process.document import canonical_json

REPO = Path(__file__).resolve().parents[2]
NEEDS_CORPUS = pytest.mark.corpus
#: Collaboration files of the corpus (several pools, message flows, several diagrams).
COLLABORATIONS = [
    "bpmn-js-examples/pizza-collaboration.bpmn",
    "spiffworkflow/collaboration.bpmn",
    "miwg-test-suite/reference/A.4.0.bpmn",
    "miwg-test-suite/reference/A.4.1.bpmn",
    "miwg-test-suite/reference/B.1.0.bpmn",
    "miwg-test-suite/reference/C.1.0.bpmn",
    "miwg-test-suite/reference/C.2.0.bpmn",
    "miwg-test-suite/reference/C.4.0.bpmn",
    "miwg-test-suite/reference/C.5.0.bpmn",
    "miwg-test-suite/bpmn-io-18.6.1/B.2.0-export.bpmn",
    "camunda-bpm-platform/invoice.v2.bpmn",
]

COLLABORATION = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI"
    xmlns:dc="http://www.omg.org/spec/DD/20100524/DC" id="d" targetNamespace="urn:x">
  <bpmn:collaboration id="c">
    <bpmn:participant id="shop" name="Shop" processRef="ours"/>
    <bpmn:participant id="client" name="Client" processRef="theirs"/>
    <bpmn:messageFlow id="mf" sourceRef="send" targetRef="take" messageRef="OrderMessage"/>
  </bpmn:collaboration>
  <bpmn:process id="ours" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:intermediateCatchEvent id="take" name="Order in">
      <bpmn:messageEventDefinition messageRef="OrderMessage"/>
    </bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="take"/>
    <bpmn:sequenceFlow id="f2" sourceRef="take" targetRef="end"/>
  </bpmn:process>
  <bpmn:process id="theirs" isExecutable="false">
    <bpmn:startEvent id="wish"/>
    <bpmn:intermediateThrowEvent id="send" name="Order">
      <bpmn:messageEventDefinition messageRef="OrderMessage"/>
    </bpmn:intermediateThrowEvent>
    <bpmn:intermediateThrowEvent id="shout">
      <bpmn:signalEventDefinition signalRef="Alarm"/>
    </bpmn:intermediateThrowEvent>
    <bpmn:sequenceFlow id="g1" sourceRef="wish" targetRef="send"/>
    <bpmn:sequenceFlow id="g2" sourceRef="send" targetRef="shout"/>
  </bpmn:process>
  <bpmn:message id="OrderMessage" name="Order"/>
  <bpmn:signal id="Alarm" name="alarm"/>
  <bpmn:message id="Unused" name="nobody"/>
  <bpmndi:BPMNDiagram id="main">
    <bpmndi:BPMNPlane id="main_plane" bpmnElement="c">
      <bpmndi:BPMNShape id="shop_di" bpmnElement="shop" isHorizontal="true">
        <dc:Bounds x="0" y="0" width="600" height="200"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="start_di" bpmnElement="start">
        <dc:Bounds x="50" y="80" width="36" height="36"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="take_di" bpmnElement="take">
        <dc:Bounds x="150" y="80" width="36" height="36"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="end_di" bpmnElement="end">
        <dc:Bounds x="250" y="80" width="36" height="36"/></bpmndi:BPMNShape>
    </bpmndi:BPMNPlane>
  </bpmndi:BPMNDiagram>
  <bpmndi:BPMNDiagram id="second" name="Client view">
    <bpmndi:BPMNPlane id="second_plane" bpmnElement="theirs">
      <bpmndi:BPMNShape id="wish_di" bpmnElement="wish">
        <dc:Bounds x="50" y="80" width="36" height="36"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="send_di" bpmnElement="send">
        <dc:Bounds x="150" y="80" width="36" height="36"/></bpmndi:BPMNShape>
    </bpmndi:BPMNPlane>
  </bpmndi:BPMNDiagram>
  <bpmndi:BPMNDiagram id="third" name="Shop only">
    <bpmndi:BPMNPlane id="third_plane" bpmnElement="ours">
      <bpmndi:BPMNShape id="take_di2" bpmnElement="take">
        <dc:Bounds x="10" y="10" width="36" height="36"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="end_di2" bpmnElement="end">
        <dc:Bounds x="90" y="10" width="36" height="36"/></bpmndi:BPMNShape>
    </bpmndi:BPMNPlane>
  </bpmndi:BPMNDiagram>
</bpmn:definitions>
"""


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    return bpmn_schema()


def roots(root: etree._Element) -> set[tuple[str, str | None]]:
    """(local name, id) of every root element but the diagrams (ours get fresh ids)."""
    return {
        (etree.QName(child).localname, child.get("id"))
        for child in root
        if isinstance(child.tag, str) and child.tag != q(BPMNDI, "BPMNDiagram")
    }


def markers(element: etree._Element) -> list[str]:
    """Flowdesk elements and attributes anywhere under `element`."""
    found = []
    for item in element.iter():
        if not isinstance(item.tag, str):
            continue
        if etree.QName(item).namespace == FLOWDESK:
            found.append(item.tag)
        found += [key for key in item.attrib if str(key).startswith(f"{{{FLOWDESK}}}")]
    return found


def test_messages_and_signals_of_other_pools_are_kept_and_shared(
    schema: etree.XMLSchema,
) -> None:
    result = import_bpmn(COLLABORATION)
    assert result.document["nodes"]["take"]["config"]["message"] == "Order"
    exported = export_bpmn(result.document)
    root = etree.fromstring(exported.encode())
    assert schema.validate(root), schema.error_log.last_error
    messages = [(m.get("id"), m.get("name")) for m in root.findall(q(BPMN, "message"))]
    assert sorted(messages) == [("OrderMessage", "Order"), ("Unused", "nobody")]
    assert [s.get("id") for s in root.findall(q(BPMN, "signal"))] == ["Alarm"]
    take = next(e for e in root.iter(q(BPMN, "intermediateCatchEvent")) if e.get("id") == "take")
    definition = take.find(q(BPMN, "messageEventDefinition"))
    assert definition is not None and definition.get("messageRef") == "OrderMessage"
    assert roots(etree.fromstring(COLLABORATION.encode())) == roots(root)
    again = import_bpmn(exported)
    assert canonical_json(again.document) == canonical_json(result.document)
    assert export_bpmn(again.document) == exported


def test_a_node_with_a_new_message_name_writes_its_own_message() -> None:
    document = import_bpmn(COLLABORATION).document
    document["nodes"]["take"]["config"]["message"] = "Refund"
    root = etree.fromstring(export_bpmn(document).encode())
    names = sorted(m.get("name") for m in root.findall(q(BPMN, "message")))
    assert names == ["Order", "Refund", "nobody"]  # the other pool still sends its Order


def test_other_diagrams_are_kept_whole_and_follow_the_process_id(
    schema: etree.XMLSchema,
) -> None:
    document = import_bpmn(COLLABORATION).document
    document["key"] = "shop_process"
    root = etree.fromstring(export_bpmn(document).encode())
    assert schema.validate(root), schema.error_log.last_error
    diagrams = root.findall(q(BPMNDI, "BPMNDiagram"))
    assert [d.get("id") for d in diagrams][1:] == ["second", "third"]
    planes = [d.find(q(BPMNDI, "BPMNPlane")) for d in diagrams]
    assert [p.get("bpmnElement") for p in planes if p is not None] == [
        "c",
        "theirs",
        "shop_process",
    ]
    # The main diagram draws the process once: the second view's shapes stay in their diagram.
    main = [s.get("bpmnElement") for s in diagrams[0].iter(q(BPMNDI, "BPMNShape"))]
    assert sorted(main) == ["end", "shop", "start", "take"]
    # A node deleted in Flowdesk leaves no shape behind in the kept diagrams.
    del document["nodes"]["end"]
    document["flows"] = {k: v for k, v in document["flows"].items() if v["target"] != "end"}
    root = etree.fromstring(export_bpmn(document).encode())
    assert schema.validate(root), schema.error_log.last_error
    third = root.findall(q(BPMNDI, "BPMNDiagram"))[2]
    assert [s.get("bpmnElement") for s in third.iter(q(BPMNDI, "BPMNShape"))] == ["take"]


def test_other_pools_never_carry_our_markers_and_the_round_trip_is_idempotent(
    schema: etree.XMLSchema,
) -> None:
    first = export_bpmn(import_bpmn(COLLABORATION).document)
    assert markers(etree.fromstring(first.encode()).findall(q(BPMN, "process"))[1]) == []
    # Import the other pool of our own export: the process we wrote becomes a kept pool.
    theirs = import_bpmn(first, process_id="theirs")
    exported = export_bpmn(theirs.document)
    root = etree.fromstring(exported.encode())
    assert schema.validate(root), schema.error_log.last_error
    processes = root.findall(q(BPMN, "process"))
    assert processes[0].get("id") == theirs.document["key"]
    assert markers(processes[1]) == []
    for diagram in root.findall(q(BPMNDI, "BPMNDiagram"))[1:]:
        assert markers(diagram) == []
    again = import_bpmn(exported)
    assert again.document["key"] == theirs.document["key"]
    assert canonical_json(again.document) == canonical_json(theirs.document)
    assert export_bpmn(again.document) == exported


@NEEDS_CORPUS
@pytest.mark.parametrize("name", COLLABORATIONS)
def test_corpus_collaboration_keeps_every_root_element(name: str, schema: etree.XMLSchema) -> None:
    source = etree.fromstring(load(name))
    result = import_bpmn(load(name))
    root = etree.fromstring(export_bpmn(result.document).encode())
    assert roots(source) - roots(root) == set()
    source_diagrams = len(source.findall(q(BPMNDI, "BPMNDiagram")))
    assert len(root.findall(q(BPMNDI, "BPMNDiagram"))) == source_diagrams
    for process in root.findall(q(BPMN, "process"))[1:]:
        assert markers(process) == []
    check_roundtrip(result, schema)


@NEEDS_CORPUS
def test_moddle_reads_exported_collaborations_without_warnings(tmp_path: Path) -> None:
    node = moddle_node()
    files = []
    # Label styles the kept shapes name, and kept edges' ends, resolve as well.
    for index, name in enumerate(COLLABORATIONS):
        path = tmp_path / f"{index}.bpmn"
        path.write_text(export_bpmn(import_bpmn(load(name)).document), encoding="utf-8")
        files.append(str(path))
    path = tmp_path / "inline.bpmn"
    path.write_text(export_bpmn(import_bpmn(COLLABORATION).document), encoding="utf-8")
    files.append(str(path))
    output = subprocess.run(
        [
            node,
            str(REPO / "tests/process/moddle_read.mjs"),
            str(REPO / "static/js/flowdesk-moddle.json"),
            *files,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert json.loads(output) == {path: [] for path in files}
