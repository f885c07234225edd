"""Modelling-only BPMN elements: imported, never run, written back unchanged.

Data objects and stores, data associations, ioSpecification, property, lanes, text annotations,
associations, groups, categories and other vendors' extensions; and the two refusals (a file
whose processes have no flow nodes, duplicate ids).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from lxml import etree

from tests.helpers.bpmn import KEPT_FILE, bpmn_schema
from tests.helpers.requirements import moddle_node
from webapp.process.bpmn import BpmnImportError, export_bpmn, import_bpmn
from webapp.process.bpmn.namespaces import BPMN, BPMNDI, q
from webapp.process.document import canonical_json
from webapp.process.validation import validate

REPO = Path(__file__).resolve().parents[2]
CAMUNDA = "http://camunda.org/schema/1.0/bpmn"

KEPT_IDS = {
    "Item_order": "itemDefinition",
    "Store": "dataStore",
    "Cat": "category",
    "ProcessIo": "ioSpecification",
    "ProcessProp": "property",
    "Lanes": "laneSet",
    "LaneSales": "lane",
    "CheckIo": "ioSpecification",
    "CheckProp": "property",
    "ReadOrder": "dataInputAssociation",
    "WriteStore": "dataOutputAssociation",
    "OrderData": "dataObject",
    "OrderRef": "dataObjectReference",
    "StoreRef": "dataStoreReference",
    "Note": "textAnnotation",
    "NoteLink": "association",
    "SalesGroup": "group",
}
DRAWN = {"LaneSales", "LaneOps", "OrderRef", "StoreRef", "Note", "NoteLink", "SalesGroup"}


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    return bpmn_schema()


def by_id(root: etree._Element) -> dict[str, etree._Element]:
    return {str(e.get("id")): e for e in root.iter() if isinstance(e.tag, str) and e.get("id")}


def test_modelling_only_elements_import_without_refusal_and_run_nowhere() -> None:
    result = import_bpmn(KEPT_FILE)
    assert result.unsupported == []
    assert not [w for w in result.warnings if w.code == "import.artifact"]
    document = result.document
    assert list(document["nodes"]) == ["start", "check", "done"]
    assert list(document["flows"]) == ["f1", "f2"]
    assert [item["tag"] for item in document["kept"]["process"]] == [
        f"{{{CAMUNDA}}}properties",
        "ioSpecification",
        "property",
        "laneSet",
        "dataObject",
        "dataObjectReference",
        "dataStoreReference",
        "textAnnotation",
        "association",
        "group",
    ]
    assert [item["tag"] for item in document["nodes"]["check"]["kept"]] == [
        f"{{{CAMUNDA}}}executionListener",
        "ioSpecification",
        "property",
        "dataInputAssociation",
        "dataOutputAssociation",
    ]
    refs = [item["attrs"] for item in document["kept"]["process"] if "attrs" in item]
    assert {"id": "StoreRef", "name": "Orders DB", "dataStoreRef": "Store"} in refs
    assert not [p for p in validate(document) if p.severity == "error" and "kept" in p.message]


def test_modelling_only_elements_roundtrip_identically(schema: etree.XMLSchema) -> None:
    result = import_bpmn(KEPT_FILE)
    assert result.document["kept"]["diagram"]
    exported = export_bpmn(result.document)
    root = etree.fromstring(exported.encode())
    assert schema.validate(root), schema.error_log.last_error
    assert {e.get("bpmnElement") for e in root.iter(q(BPMNDI, "BPMNShape"))} >= DRAWN - {"NoteLink"}
    again = import_bpmn(exported)
    assert again.unsupported == []
    assert canonical_json(again.document) == canonical_json(result.document)
    assert export_bpmn(again.document) == exported


def test_export_writes_them_back_with_their_shapes_and_edges() -> None:
    root = etree.fromstring(export_bpmn(import_bpmn(KEPT_FILE).document).encode())
    elements = by_id(root)
    for element_id, local in KEPT_IDS.items():
        assert elements[element_id].tag == q(BPMN, local), element_id
    assert elements["Note"].findtext(q(BPMN, "text")) == "Checked within a day & logged"
    assert [e.text for e in elements["LaneSales"].iter(q(BPMN, "flowNodeRef"))] == [
        "start",
        "check",
    ]
    assert elements["ReadOrder"].getparent() is elements["check"]
    assert elements["Store"].getparent() is root
    drawn = {
        str(e.get("bpmnElement")) for e in root.iter(q(BPMNDI, "BPMNShape"), q(BPMNDI, "BPMNEdge"))
    }
    assert DRAWN | {"ReadOrder", "WriteStore"} <= drawn
    lane = next(e for e in root.iter(q(BPMNDI, "BPMNShape")) if e.get("bpmnElement") == "LaneOps")
    assert lane.get("isHorizontal") == "true"
    listener = elements["check"].find(f"{{{BPMN}}}extensionElements/{{{CAMUNDA}}}executionListener")
    assert listener is not None
    assert dict(listener.attrib) == {"class": "com.example.Audit", "event": "start"}
    taken = elements["f1"].find(f"{{{BPMN}}}extensionElements/{{{CAMUNDA}}}executionListener")
    assert taken is not None and taken.get("expression") == "${audit.taken()}"
    assert root.nsmap.get("camunda") == CAMUNDA
    assert "kept" not in "".join(root.itertext()), "kept elements are written as XML only"
    owner = root.find(f".//{{{CAMUNDA}}}property")
    assert owner is not None and owner.get("value") == "team-a"


def test_deleting_a_task_drops_what_points_at_it_and_the_export_stays_valid(
    schema: etree.XMLSchema,
) -> None:
    document = import_bpmn(KEPT_FILE).document
    del document["nodes"]["check"]
    document["flows"] = {"f": {"source": "start", "target": "done"}}
    exported = export_bpmn(document)
    root = etree.fromstring(exported.encode())
    assert schema.validate(root), schema.error_log.last_error
    elements = by_id(root)
    assert "NoteLink" not in elements and "NoteLink_di" not in elements
    assert "ReadOrder" not in elements and "Note" in elements
    assert [e.text for e in root.iter(q(BPMN, "flowNodeRef"))] == ["start", "done"]
    again = import_bpmn(exported)
    assert export_bpmn(again.document) == exported


def test_kept_elements_of_a_sub_process_stay_in_it(schema: etree.XMLSchema) -> None:
    xml = KEPT_FILE.replace(
        '<semantic:endEvent id="done" name="Done"/>',
        '<semantic:subProcess id="done"><semantic:startEvent id="inner"/>'
        '<semantic:dataObject id="InnerData"/>'
        '<semantic:textAnnotation id="InnerNote"><semantic:text>inside</semantic:text>'
        "</semantic:textAnnotation></semantic:subProcess>",
    )
    result = import_bpmn(xml)
    assert result.unsupported == []
    assert [i["tag"] for i in result.document["nodes"]["done"]["kept"]] == [
        "dataObject",
        "textAnnotation",
    ]
    exported = export_bpmn(result.document)
    root = etree.fromstring(exported.encode())
    assert schema.validate(root), schema.error_log.last_error
    elements = by_id(root)
    assert elements["InnerNote"].getparent() is elements["done"]
    assert export_bpmn(import_bpmn(exported).document) == exported


def test_moddle_reads_kept_elements_without_warnings(tmp_path: Path) -> None:
    node = moddle_node()
    path = tmp_path / "kept.bpmn"
    path.write_text(export_bpmn(import_bpmn(KEPT_FILE).document), encoding="utf-8")
    output = subprocess.run(
        [
            node,
            str(REPO / "tests/process/moddle_read.mjs"),
            str(REPO / "static/js/flowdesk-moddle.json"),
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert output.returncode == 0, output.stdout + output.stderr


def test_a_file_whose_process_has_no_flow_nodes_is_refused_with_its_line() -> None:
    xml = KEPT_FILE.split("<semantic:process")[0] + (
        '<semantic:process id="empty">\n'
        '<semantic:textAnnotation id="n"><semantic:text>todo</semantic:text>'
        "</semantic:textAnnotation></semantic:process></semantic:definitions>"
    )
    with pytest.raises(BpmnImportError, match="Process 'empty' has no flow nodes") as caught:
        import_bpmn(xml)
    assert caught.value.line is not None
    assert '<semantic:process id="empty">' in xml.splitlines()[caught.value.line - 1]
    with pytest.raises(BpmnImportError, match="no flow nodes"):
        import_bpmn(xml, process_id="empty")


def test_duplicate_ids_are_refused_naming_the_id_and_its_line() -> None:
    xml = KEPT_FILE.replace('<semantic:endEvent id="done"', '<semantic:endEvent id="check"')
    with pytest.raises(BpmnImportError, match="The id 'check' is used by more than one") as caught:
        import_bpmn(xml)
    assert caught.value.line is not None
    assert '<semantic:endEvent id="check"' in xml.splitlines()[caught.value.line - 1]
    twice = KEPT_FILE.replace('id="f2_di"', 'id="f1_di"')
    with pytest.raises(BpmnImportError, match="'f1_di'"):
        import_bpmn(twice)


def test_kept_data_from_a_json_document_cannot_break_the_export(schema: etree.XMLSchema) -> None:
    """A hand-edited `kept` section: what cannot stand where it is, or reuses an id, is left out,
    and the export stays valid and stable."""
    document = import_bpmn(KEPT_FILE).document
    note = {"tag": "textAnnotation", "attrs": {"id": "check"}}  # a node's id
    document["kept"]["process"] += [
        note,
        {"tag": "textAnnotation", "attrs": {"id": "Note"}},  # a kept element's id
        {"tag": "startEvent", "attrs": {"id": "sneaky"}},  # a flow node is not documentation
        {"tag": "{https://flowdesk.dev/schema/bpmn/1.0}config", "text": '{"x": 1}'},
        {"tag": f"{{{BPMN}}}userTask", "attrs": {"id": "hidden"}},
        {"tag": "group", "attrs": {"id": "Bad", "a b": "c"}, "text": "\x01"},
        {"tag": "{bad", "children": "no"},
        "text",
        {"tag": "association", "attrs": {"id": "Dangling", "sourceRef": "nowhere"}},
    ]
    # A flow node cannot stand at the root (a message could: other pools' messages are kept).
    document["kept"]["definitions"].append({"tag": "userTask", "attrs": {"id": "Other"}})
    document["kept"]["diagram"].append({"plane": "check", "element": {"tag": "dataObject"}})
    document["kept"]["extra"] = [1]
    deep: dict[str, object] = {"tag": "textAnnotation", "attrs": {"id": "Deep"}}
    for _ in range(300):
        deep = {"tag": "{urn:x}wrap", "children": [deep]}
    document["kept"]["process"].append(deep)
    document["nodes"]["start"]["kept"] = 5
    document["nodes"]["done"]["kept"] = [{"tag": "laneSet", "attrs": {"id": "LaneOps"}}]
    exported = export_bpmn(document)
    root = etree.fromstring(exported.encode())
    assert schema.validate(root), schema.error_log.last_error
    elements = by_id(root)
    assert elements["check"].tag == q(BPMN, "userTask")
    assert elements["Note"].findtext(q(BPMN, "text")) == "Checked within a day & logged"
    assert not {"sneaky", "hidden", "Other", "Dangling", "Deep"} & set(elements)
    again = import_bpmn(exported)
    assert again.unsupported == []
    assert list(again.document["nodes"]) == ["start", "check", "done"]
    assert export_bpmn(again.document) == exported


def test_a_collapsed_sub_process_keeps_its_annotation_on_its_own_plane(
    schema: etree.XMLSchema,
) -> None:
    xml = KEPT_FILE.replace(
        '<semantic:endEvent id="done" name="Done"/>',
        '<semantic:subProcess id="done"><semantic:startEvent id="inner"/>'
        '<semantic:textAnnotation id="InnerNote"><semantic:text>inside</semantic:text>'
        "</semantic:textAnnotation></semantic:subProcess>",
    ).replace(
        "</semantic:definitions>",
        '<bpmndi:BPMNDiagram id="SubDiagram"><bpmndi:BPMNPlane id="SubPlane" bpmnElement="done">'
        '<bpmndi:BPMNShape id="inner_di" bpmnElement="inner">'
        '<dc:Bounds x="100" y="100" width="36" height="36"/></bpmndi:BPMNShape>'
        '<bpmndi:BPMNShape id="InnerNote_di" bpmnElement="InnerNote">'
        '<dc:Bounds x="200" y="100" width="100" height="30"/></bpmndi:BPMNShape>'
        "</bpmndi:BPMNPlane></bpmndi:BPMNDiagram></semantic:definitions>",
    )
    result = import_bpmn(xml)
    assert result.document["nodes"]["done"]["config"]["collapsed"] is True
    on_plane = {e["element"]["attrs"]["id"]: e["plane"] for e in result.document["kept"]["diagram"]}
    assert on_plane["InnerNote_di"] == "done" and on_plane["Note_di"] is None
    exported = export_bpmn(result.document)
    root = etree.fromstring(exported.encode())
    assert schema.validate(root), schema.error_log.last_error
    shape = by_id(root)["InnerNote_di"]
    assert shape.getparent().get("bpmnElement") == "done"
    assert export_bpmn(import_bpmn(exported).document) == exported


def test_vendor_settings_flowdesk_does_not_map_are_kept_and_mapped_ones_do_not_come_back(
    schema: etree.XMLSchema,
) -> None:
    xml = KEPT_FILE.replace(
        '<semantic:userTask id="check" name="Check order">',
        '<semantic:userTask id="check" name="Check order" camunda:assignee="alice" '
        'camunda:formKey="embedded:app:forms/check.html" camunda:asyncBefore="true">',
    ).replace(
        '<camunda:executionListener class="com.example.Audit" event="start"/>',
        '<camunda:executionListener class="com.example.Audit" event="start"/>'
        '<camunda:formData><camunda:formField id="ok" type="boolean"/></camunda:formData>',
    )
    document = import_bpmn(xml).document
    assert document["nodes"]["check"]["config"]["assignee"] == {"type": "user", "value": "alice"}
    root = etree.fromstring(export_bpmn(document).encode())
    check = by_id(root)["check"]
    assert check.get(f"{{{CAMUNDA}}}formKey") == "embedded:app:forms/check.html"
    assert check.get(f"{{{CAMUNDA}}}asyncBefore") == "true"
    assert check.get(f"{{{CAMUNDA}}}assignee") == "alice", "written back from the config"
    assert check.find(f".//{{{CAMUNDA}}}formData") is not None
    assert check.find(f".//{{{CAMUNDA}}}executionListener") is not None
    del document["nodes"]["check"]["config"]["assignee"]
    del document["nodes"]["check"]["config"]["form"]
    exported = export_bpmn(document)
    assert schema.validate(etree.fromstring(exported.encode())), schema.error_log.last_error
    check = by_id(etree.fromstring(exported.encode()))["check"]
    assert check.get(f"{{{CAMUNDA}}}assignee") is None
    assert check.find(f".//{{{CAMUNDA}}}formData") is None
    again = import_bpmn(exported).document
    assert "assignee" not in again["nodes"]["check"]["config"], "a deleted assignee stays deleted"
    assert "form" not in again["nodes"]["check"]["config"], "so does a deleted form"
    assert export_bpmn(again) == exported


SHARED = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:x="urn:other" id="d" targetNamespace="http://x">
  <bpmn:import importType="http://www.w3.org/2001/XMLSchema" location="types.xsd"
      namespace="urn:types"/>
  <bpmn:collaboration id="C">
    <bpmn:participant id="P_us" processRef="us"/>
    <bpmn:participant id="P_them" processRef="them"/>
    <bpmn:messageFlow id="MF" sourceRef="send_it" targetRef="wait" messageRef="x:letter"/>
  </bpmn:collaboration>
  <bpmn:message id="letter" name="Letter"/>
  <bpmn:message id="own_only" name="Reply"/>
  <bpmn:error id="E1" errorCode="broken"/>
  <bpmn:correlationProperty id="lover">
    <bpmn:correlationPropertyRetrievalExpression messageRef="letter">
      <bpmn:messagePath>to</bpmn:messagePath>
    </bpmn:correlationPropertyRetrievalExpression>
  </bpmn:correlationProperty>
  <bpmn:globalUserTask id="G1" name="Reusable"/>
  <bpmn:process id="us" isExecutable="true">
    <bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="wait"/>
    <bpmn:intermediateCatchEvent id="wait">
      <bpmn:messageEventDefinition messageRef="letter"/></bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="reply"/>
    <bpmn:intermediateCatchEvent id="reply">
      <bpmn:messageEventDefinition messageRef="own_only"/></bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f3" sourceRef="reply" targetRef="e"/>
    <bpmn:endEvent id="e"><bpmn:errorEventDefinition errorRef="E1"/></bpmn:endEvent>
  </bpmn:process>
  <bpmn:process id="them" isExecutable="false">
    <bpmn:startEvent id="ts"/><bpmn:sequenceFlow id="t1" sourceRef="ts" targetRef="send_it"/>
    <bpmn:intermediateThrowEvent id="send_it">
      <bpmn:messageEventDefinition messageRef="letter"/></bpmn:intermediateThrowEvent>
  </bpmn:process>
  <bpmn:relationship type="trace"><bpmn:source>s</bpmn:source>
    <bpmn:target>ts</bpmn:target></bpmn:relationship>
</bpmn:definitions>"""


def test_root_definitions_keep_their_ids_so_other_pools_and_tools_still_find_them(
    schema: etree.XMLSchema,
) -> None:
    """Messages, errors, correlation properties, global tasks, imports and relationships of a
    file come back with their ids: the other pool's events, the message flow and the
    correlation property still point at the same message, and nothing is written twice."""
    result = import_bpmn(SHARED)
    assert result.document["nodes"]["wait"]["config"]["message"] == "Letter"
    exported = export_bpmn(result.document)
    root = etree.fromstring(exported.encode())
    assert schema.validate(root), schema.error_log.last_error
    messages = root.findall(q(BPMN, "message"))
    assert sorted(m.get("id") for m in messages) == ["letter", "own_only"]
    assert [e.get("id") for e in root.findall(q(BPMN, "error"))] == ["E1"]
    elements = by_id(root)
    for node_id, ref in (("wait", "letter"), ("reply", "own_only"), ("send_it", "letter")):
        definition = elements[node_id].find(q(BPMN, "messageEventDefinition"))
        assert definition.get("messageRef") == ref, node_id
    assert elements["MF"].get("messageRef") == "letter"
    assert elements["e"].find(q(BPMN, "errorEventDefinition")).get("errorRef") == "E1"
    assert {"lover", "G1"} <= set(elements)
    assert root[0].tag == q(BPMN, "import") and root[-1].tag == q(BPMN, "relationship")
    again = import_bpmn(exported)
    assert again.document == result.document
    assert export_bpmn(again.document) == exported


def test_definitions_flowdesk_wrote_are_made_again_not_kept() -> None:
    """A process drawn in Flowdesk round-trips to the same document: the messages the writer
    made from names are made again from them."""
    result = import_bpmn(SHARED, process_id="us")
    result.document.pop("kept")
    exported = export_bpmn(result.document)
    again = import_bpmn(exported)
    assert "kept" not in again.document
    assert again.document == result.document
