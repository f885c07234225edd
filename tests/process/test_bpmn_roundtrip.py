"""Export to BPMN 2.0 and re-import: the document must come back identical and the XML be valid."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from tests.helpers.bpmn import SPECIAL, bpmn_schema, full_document
from webapp.process.bpmn import BpmnExportError, export_bpmn, import_bpmn
from webapp.process.bpmn.namespaces import BPMN, BPMNDI, DC, DI, FLOWDESK, q
from webapp.process.document import DocumentError, canonical_json, normalize
from webapp.process.kinds import KINDS


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    return bpmn_schema()


def same(left: dict[str, Any], right: dict[str, Any]) -> bool:
    return canonical_json(normalize(left)) == canonical_json(normalize(right))


def roundtrip(doc: dict[str, Any]) -> dict[str, Any]:
    result = import_bpmn(export_bpmn(doc))
    assert result.unsupported == []
    return result.document


def test_full_document_roundtrips_identically() -> None:
    doc = full_document()
    result = import_bpmn(export_bpmn(doc))
    assert result.unsupported == []
    assert canonical_json(result.document) == canonical_json(normalize(doc))


def test_full_document_export_is_valid_bpmn(schema: etree.XMLSchema) -> None:
    tree = etree.fromstring(export_bpmn(full_document()).encode())
    assert schema.validate(tree), schema.error_log


def test_export_uses_standard_bpmn_where_it_can() -> None:
    doc = full_document()
    root = etree.fromstring(export_bpmn(doc).encode())
    process = root.find(q(BPMN, "process"))
    assert process.get("id") == "invoice-approval"
    assert process.get("name") == doc["name"]
    assert process.get("isExecutable") == "true"
    by_id = {e.get("id"): e for e in process}
    expected_tags = {
        "start": "startEvent", "review": "userTask", "decide": "exclusiveGateway",
        "call_api": "serviceTask", "split": "parallelGateway", "wait": "intermediateCatchEvent",
        "paid": "intermediateCatchEvent", "end": "endEvent", "big": "sequenceFlow",
    }  # fmt: skip
    for element_id, tag in expected_tags.items():
        assert by_id[element_id].tag == q(BPMN, tag)
    assert by_id["review"].get("name") == f"Review {SPECIAL}"
    assert by_id["decide"].get("default") == "small"
    assert [e.text for e in by_id["decide"].findall(q(BPMN, "outgoing"))] == ["big", "small"]
    assert [e.text for e in by_id["decide"].findall(q(BPMN, "incoming"))] == ["f2"]
    duration = by_id["wait"].find(f"{q(BPMN, 'timerEventDefinition')}/{q(BPMN, 'timeDuration')}")
    assert duration.text == "PT5M"
    date = by_id["wait_until"].find(f"{q(BPMN, 'timerEventDefinition')}/{q(BPMN, 'timeDate')}")
    assert date.text == "$input.due_at"
    message_ref = by_id["paid"].find(q(BPMN, "messageEventDefinition")).get("messageRef")
    message = root.find(f"{q(BPMN, 'message')}[@id='{message_ref}']")
    assert message.get("name") == f"payment {SPECIAL}"
    condition = by_id["big"].find(q(BPMN, "conditionExpression"))
    assert condition.text == doc["flows"]["big"]["condition"]
    assert condition.get("language") == "flowdesk"
    assert (
        condition.get("{http://www.w3.org/2001/XMLSchema-instance}type") == "bpmn:tFormalExpression"
    )
    config = by_id["paid"].find(f"{q(BPMN, 'extensionElements')}/{q(FLOWDESK, 'config')}")
    assert json.loads(config.text) == {"correlationKey": "$input.invoice_id", "saveTo": "payment"}
    assert by_id["wait"].find(q(BPMN, "extensionElements")) is None


def test_export_writes_shapes_and_edges_from_the_document() -> None:
    doc = full_document()
    root = etree.fromstring(export_bpmn(doc).encode())
    plane = root.find(f"{q(BPMNDI, 'BPMNDiagram')}/{q(BPMNDI, 'BPMNPlane')}")
    assert plane.get("bpmnElement") == "invoice-approval"
    shapes = {
        s.get("bpmnElement"): s.find(q(DC, "Bounds")) for s in plane.iter(q(BPMNDI, "BPMNShape"))
    }
    assert set(shapes) == set(doc["nodes"])
    bounds = shapes["call_api"]
    assert [bounds.get(k) for k in ("x", "y", "width", "height")] == ["450.5", "0.25", "100", "80"]
    edges = {e.get("bpmnElement"): e for e in plane.iter(q(BPMNDI, "BPMNEdge"))}
    assert set(edges) == set(doc["flows"])
    points = [(p.get("x"), p.get("y")) for p in edges["big"].iter(q(DI, "waypoint"))]
    assert points == [("375", "93"), ("375", "40.5"), ("450", "40")]
    generated = edges["f2"]
    assert generated.get(q(FLOWDESK, "generated")) == "true"
    assert len(generated.findall(q(DI, "waypoint"))) >= 2


def test_our_files_import_whatever_prefixes_an_editor_writes() -> None:
    doc = full_document()
    xml = export_bpmn(doc)
    renamed = (
        xml.replace("bpmn:", "semantic:")
        .replace("xmlns:bpmn=", "xmlns:semantic=")
        .replace("flowdesk:", "fd:")
        .replace("xmlns:flowdesk=", "xmlns:fd=")
    )
    assert "bpmn:" not in renamed and "flowdesk:" not in renamed
    assert same(import_bpmn(renamed).document, doc)


def test_export_is_deterministic_and_stable_across_roundtrips() -> None:
    doc = full_document()
    first = export_bpmn(doc)
    assert export_bpmn(copy.deepcopy(doc)) == first
    assert export_bpmn(import_bpmn(first).document) == first


def test_document_without_positions_key_or_name_roundtrips(schema: etree.XMLSchema) -> None:
    doc = full_document()
    del doc["key"], doc["name"]
    for node in doc["nodes"].values():
        del node["position"]
    for flow in doc["flows"].values():
        del flow["waypoints"]
    xml = export_bpmn(doc)
    assert schema.validate(etree.fromstring(xml.encode())), schema.error_log
    back = roundtrip(doc)
    assert same(back, doc)
    assert "key" not in back and "name" not in back
    assert all("position" not in node for node in back["nodes"].values())


def test_partial_positions_and_missing_sizes_roundtrip() -> None:
    doc = full_document()
    del doc["nodes"]["wait"]["position"]
    doc["nodes"]["review"]["position"] = {"x": 1, "y": 2}
    assert same(roundtrip(doc), doc)


@pytest.mark.parametrize("key", ["1 not an id", "start", "", None, "a:b"])
def test_awkward_keys_roundtrip(key: str | None) -> None:
    doc = full_document()
    doc["key"] = key
    doc["name"] = ""
    back = roundtrip(doc)
    assert back.get("key", "missing") == key
    assert back["name"] == ""


def test_extra_fields_and_unknown_kinds_survive() -> None:
    doc = full_document()
    doc["description"] = {"text": SPECIAL}
    doc["nodes"]["review"]["color"] = "#ff0000"
    doc["nodes"]["review"]["position"]["z"] = 3
    doc["nodes"]["mystery"] = {"kind": "scriptTask", "title": "?", "config": {"script": "x = 1"}}
    doc["flows"]["f1"]["color"] = "blue"
    doc["flows"]["f1"]["waypoints"][0]["label"] = "start"
    assert same(roundtrip(doc), doc)


def test_model_errors_survive_the_roundtrip() -> None:
    doc = full_document()
    doc["flows"]["f5"]["default"] = True  # default flow out of a parallel gateway
    doc["flows"]["big"]["default"] = True  # two default flows on one gateway
    doc["flows"]["f1"]["waypoints"] = [{"x": 1, "y": 2}]  # a single waypoint is not an edge
    doc["nodes"]["wait"]["config"] = {"duration": " PT5M ", "date": "$input.x"}
    doc["nodes"]["paid"]["config"] = {"message": "", "correlationKey": ""}
    doc["nodes"]["review"]["config"]["assignee"] = {"type": "nobody"}
    assert same(roundtrip(doc), doc)


def test_characters_xml_cannot_hold_survive() -> None:
    doc = full_document()
    doc["name"] = "bell\x07"
    doc["nodes"]["review"]["title"] = "nul\x00 and \ufffe"
    doc["nodes"]["review"]["config"]["saveTo"] = "x\x01\ud800"
    doc["flows"]["big"]["title"] = "\x0b"
    doc["flows"]["big"]["condition"] = "$input.a == '\x02'"
    doc["nodes"]["paid"]["config"]["message"] = "m\x03"
    assert same(roundtrip(doc), doc)


def test_messages_get_deterministic_shared_ids() -> None:
    doc = full_document()
    doc["nodes"]["paid"]["config"]["message"] = "order paid"
    doc["nodes"]["wait_until"] = {"kind": "messageCatch", "config": {"message": "order paid"}}
    root = etree.fromstring(export_bpmn(doc).encode())
    messages = root.findall(q(BPMN, "message"))
    assert [(m.get("id"), m.get("name")) for m in messages] == [
        ("Message_order_paid", "order paid")
    ]
    assert same(roundtrip(doc), doc)


def test_export_rejects_what_bpmn_cannot_express() -> None:
    doc = full_document()
    doc["flows"]["f1"]["target"] = "nowhere"
    with pytest.raises(BpmnExportError, match="nowhere"):
        export_bpmn(doc)
    doc = full_document()
    doc["nodes"]["bad id"] = {"kind": "endEvent"}
    with pytest.raises(BpmnExportError, match="bad id"):
        export_bpmn(doc)
    doc = full_document()
    doc["flows"]["start"] = dict(doc["flows"]["f1"])
    with pytest.raises(BpmnExportError, match="node and a flow"):
        export_bpmn(doc)
    with pytest.raises(DocumentError):
        export_bpmn({"nodes": {"a": {"title": "no kind"}}})


_text = st.text(max_size=30)


@settings(max_examples=60, deadline=None)
@given(title=_text, condition=_text, value=st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
))  # fmt: skip
def test_arbitrary_text_and_config_roundtrip(title: str, condition: str, value: Any) -> None:
    doc = full_document()
    doc["nodes"]["review"]["title"] = title
    doc["nodes"]["review"]["config"]["extra"] = value
    doc["flows"]["big"]["condition"] = condition
    doc["flows"]["big"]["title"] = title
    assert same(roundtrip(doc), doc)


def test_every_kind_is_written_as_its_element_and_read_back_as_itself() -> None:
    nodes: dict[str, Any] = {"host": {"kind": "userTask", "title": "", "config": {}}}
    configs = {
        "boundaryEvent": {"attachedTo": "host", "event": "timer", "duration": "PT1H"},
        "timerCatch": {"duration": "PT5M"},
    }
    for kind in KINDS:
        nodes[f"n_{kind}"] = {"kind": kind, "title": "", "config": configs.get(kind, {})}
    doc = {"format_version": 1, "nodes": nodes, "flows": {}}
    xml = export_bpmn(doc)
    root = etree.fromstring(xml.encode())
    process = root.find(q(BPMN, "process"))
    assert process is not None
    for kind, spec in KINDS.items():
        element = process.find(f"{q(BPMN, spec.element)}[@id='n_{kind}']")
        assert element is not None, kind
        events = [child.tag for child in element if child.tag.endswith("EventDefinition")]
        if spec.event is not None:
            assert events == ([q(BPMN, f"{spec.event}EventDefinition")] if spec.event else [])
        assert element.find(f".//{q(FLOWDESK, 'node')}") is None, kind
    read = import_bpmn(xml).document["nodes"]
    assert {node_id: node["kind"] for node_id, node in read.items()} == {
        node_id: node["kind"] for node_id, node in nodes.items()
    }
