"""Tests for the process document helpers: normalize, canonical JSON, hashing, upgrades, parsing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from webapp.process import document
from webapp.process.document import (
    CURRENT_FORMAT_VERSION,
    DocumentError,
    canonical_json,
    content_hash,
    from_json,
    incoming,
    new_document,
    next_id,
    normalize,
    outgoing,
    upgrade,
)


def sample() -> dict[str, Any]:
    return {
        "format_version": 1,
        "key": "invoice",
        "name": "Invoice approval",
        "nodes": {
            "start": {"kind": "startEvent", "position": {"x": 100.0, "y": 100}},
            "review": {
                "kind": "userTask",
                "title": "Review",
                "config": {"saveTo": "review", "assignee": {"value": "bob", "type": "user"}},
                "position": {"x": 200, "y": 80, "width": 120},
            },
            "end": {"kind": "endEvent", "title": "Done"},
        },
        "flows": {
            "f2": {"source": "review", "target": "end", "waypoints": [{"x": 320.0, "y": 120.5}]},
            "f1": {"source": "start", "target": "review", "condition": "  "},
        },
    }


def test_normalize_fills_defaults() -> None:
    doc = normalize(sample())
    assert doc["nodes"]["start"]["title"] == ""
    assert doc["nodes"]["start"]["config"] == {}
    assert doc["nodes"]["start"]["position"] == {"x": 100, "y": 100, "width": 36, "height": 36}
    assert doc["nodes"]["review"]["position"] == {"x": 200, "y": 80, "width": 120, "height": 80}
    assert "position" not in doc["nodes"]["end"]
    assert doc["flows"]["f1"] == {
        "source": "start",
        "target": "review",
        "title": "",
        "condition": None,
        "default": False,
        "waypoints": [],
    }
    assert doc["flows"]["f2"]["waypoints"] == [{"x": 320, "y": 120.5}]


def test_normalize_gateway_size_and_integral_floats() -> None:
    doc = normalize({"nodes": {"g": {"kind": "exclusiveGateway", "position": {"x": 1.0, "y": 2}}}})
    position = doc["nodes"]["g"]["position"]
    assert position == {"x": 1, "y": 2, "width": 50, "height": 50}
    assert isinstance(position["x"], int)
    assert doc["format_version"] == CURRENT_FORMAT_VERSION
    assert doc["flows"] == {}


def test_normalize_does_not_modify_input_and_is_idempotent() -> None:
    original = sample()
    before = json.dumps(original, sort_keys=True)
    once = normalize(original)
    once["nodes"]["review"]["config"]["assignee"]["value"] = "changed"
    assert json.dumps(original, sort_keys=True) == before
    assert normalize(normalize(sample())) == normalize(sample())


def test_normalize_keeps_document_order() -> None:
    doc = normalize(sample())
    assert list(doc["nodes"]) == ["start", "review", "end"]
    assert list(doc["flows"]) == ["f2", "f1"]


def test_equal_documents_compare_equal_after_normalize() -> None:
    sparse = {"nodes": {"a": {"kind": "endEvent"}}, "flows": {}}
    full = {
        "format_version": 1,
        "nodes": {"a": {"kind": "endEvent", "title": None, "config": {}}},
        "flows": {},
    }
    assert normalize(sparse) == normalize(full)
    assert content_hash(normalize(sparse)) == content_hash(normalize(full))


@pytest.mark.parametrize(
    ("doc", "element_id", "fragment"),
    [
        ({"nodes": []}, None, "nodes must be an object"),
        ({"flows": "x"}, None, "flows must be an object"),
        ({"nodes": {"a": "startEvent"}}, "a", "Node 'a' must be an object"),
        ({"nodes": {"a": {}}}, "a", "Node 'a' has no kind"),
        ({"nodes": {"a": {"kind": "endEvent", "title": 5}}}, "a", "title must be a string"),
        ({"nodes": {"a": {"kind": "endEvent", "config": []}}}, "a", "config must be an object"),
        ({"nodes": {"a": {"kind": "endEvent", "position": {"x": 1}}}}, "a", "has no 'y'"),
        (
            {"nodes": {"a": {"kind": "endEvent", "position": {"x": "1", "y": 2}}}},
            "a",
            "'x' must be a number",
        ),
        (
            {"nodes": {"a": {"kind": "endEvent", "position": {"x": 1, "y": 2, "width": 0}}}},
            "a",
            "'width' must be positive",
        ),
        (
            {"nodes": {"a": {"kind": "endEvent", "config": {"n": float("nan")}}}},
            "a",
            "not a finite number",
        ),
        ({"nodes": {"a": {"kind": "endEvent", "config": {"s": {1, 2}}}}}, "a", "not a JSON value"),
        ({"flows": {"f": {"target": "b"}}}, "f", "Flow 'f' has no source"),
        ({"flows": {"f": {"source": "a", "target": "b", "default": "yes"}}}, "f", "default"),
        ({"flows": {"f": {"source": "a", "target": "b", "condition": 1}}}, "f", "condition"),
        ({"flows": {"f": {"source": "a", "target": "b", "waypoints": [1]}}}, "f", "waypoint 1"),
        ({"format_version": "1"}, None, "format_version"),
        ({"name": 3}, None, "name must be a string"),
    ],
)
def test_normalize_rejects_malformed_documents(
    doc: dict[str, Any], element_id: str | None, fragment: str
) -> None:
    with pytest.raises(DocumentError) as caught:
        normalize(doc)
    assert caught.value.element_id == element_id
    assert fragment in caught.value.message


def test_normalize_rejects_non_dict() -> None:
    with pytest.raises(DocumentError, match="must be an object, not a list"):
        normalize([])


def test_shallow_normalize_shares_nested_config() -> None:
    original = sample()
    shallow = normalize(original, deep=False)
    assert shallow == normalize(original)
    assignee = original["nodes"]["review"]["config"]["assignee"]
    assert shallow["nodes"]["review"]["config"]["assignee"] is assignee
    assert shallow["nodes"]["review"]["config"] is not original["nodes"]["review"]["config"]


def test_canonical_json_sorts_records_but_keeps_map_order() -> None:
    text = canonical_json(normalize(sample()))
    assert text.startswith('{"flows":{"f2":{"condition":null,"default":false,"source":"review"')
    assert text.index('"start":') < text.index('"review":{') < text.index('"end":')
    assert text.index('"f2":') < text.index('"f1":')
    assert '"assignee":{"type":"user","value":"bob"}' in text
    assert ": " not in text
    assert ", " not in text


def test_canonical_json_keeps_unicode_and_rejects_nan() -> None:
    assert canonical_json({"name": "Rechnungsprüfung"}) == '{"name":"Rechnungsprüfung"}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("inf")})


def test_content_hash_depends_on_order_of_nodes_not_of_keys() -> None:
    doc = normalize(sample())
    same = normalize(sample())
    same["nodes"]["review"] = dict(reversed(list(same["nodes"]["review"].items())))
    assert content_hash(doc) == content_hash(same)
    reordered = dict(doc, nodes=dict(reversed(list(doc["nodes"].items()))))
    assert content_hash(doc) != content_hash(reordered)
    assert len(content_hash(doc)) == 64


def test_upgrade_current_version_is_a_copy() -> None:
    original = {"nodes": {}, "flows": {}}
    upgraded = upgrade(original)
    assert upgraded == {"nodes": {}, "flows": {}, "format_version": 1}
    assert "format_version" not in original


def test_upgrade_rejects_newer_and_invalid_versions() -> None:
    with pytest.raises(DocumentError, match="newer"):
        upgrade({"format_version": CURRENT_FORMAT_VERSION + 1})
    with pytest.raises(DocumentError, match="format_version"):
        upgrade({"format_version": 0})


def test_upgrade_runs_registered_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    def rename_steps(doc: dict[str, Any]) -> dict[str, Any]:
        doc["nodes"] = doc.pop("steps")
        return doc

    monkeypatch.setattr(document, "CURRENT_FORMAT_VERSION", 2)
    monkeypatch.setitem(document.UPGRADES, 1, rename_steps)
    original = {"format_version": 1, "steps": {"a": {"kind": "endEvent"}}}
    upgraded = upgrade(original)
    assert upgraded == {"format_version": 2, "nodes": {"a": {"kind": "endEvent"}}}
    assert "steps" in original


def test_upgrade_without_registered_step_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(document, "CURRENT_FORMAT_VERSION", 3)
    with pytest.raises(DocumentError, match="No upgrade from format version 1"):
        upgrade({"format_version": 1})


def test_outgoing_and_incoming_follow_document_order() -> None:
    doc = {
        "flows": {
            "b": {"source": "gw", "target": "x"},
            "a": {"source": "gw", "target": "y"},
            "c": {"source": "x", "target": "y"},
        }
    }
    assert [fid for fid, _ in outgoing(doc, "gw")] == ["b", "a"]
    assert [fid for fid, _ in incoming(doc, "y")] == ["a", "c"]
    assert outgoing(doc, "y") == []


def test_new_document_is_valid_and_normalized() -> None:
    from webapp.process.validation import validate

    doc = new_document("invoice", "Invoice approval")
    assert (doc["key"], doc["name"]) == ("invoice", "Invoice approval")
    assert [n["kind"] for n in doc["nodes"].values()] == ["startEvent", "endEvent"]
    assert normalize(doc) == doc
    assert validate(doc) == []


def test_next_id_skips_used_ids() -> None:
    doc = {"nodes": {"task_1": {}}, "flows": {"task_2": {}}}
    assert next_id(doc, "task") == "task_3"
    assert next_id(doc, "task", taken={"task_3"}) == "task_4"
    assert next_id(doc, "gateway") == "gateway_1"


def test_from_json_parses_upgrades_and_normalizes() -> None:
    doc = from_json(json.dumps(sample()).encode())
    assert doc == normalize(sample())


def test_from_json_reports_line_and_column() -> None:
    with pytest.raises(DocumentError) as caught:
        from_json('{\n  "nodes": {,}\n}')
    assert (caught.value.line, caught.value.column) == (2, 13)
    assert "line 2, column 13" in caught.value.message


def test_from_json_rejects_duplicate_keys() -> None:
    text = '{"nodes": {"a": {"kind": "endEvent"}, "a": {"kind": "startEvent"}}}'
    with pytest.raises(DocumentError, match="Duplicate key 'a'"):
        from_json(text)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ('{"nodes": {"a": {"kind": "endEvent", "config": {"x": NaN}}}}', "NaN"),
        (b"\xff\xfe{}", "UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("[]", "must be an object"),
    ],
)
def test_from_json_rejects_bad_input(data: str | bytes, fragment: str) -> None:
    with pytest.raises(DocumentError, match=fragment):
        from_json(data)


def test_from_json_enforces_size_limit() -> None:
    with pytest.raises(DocumentError, match="limit is 10"):
        from_json('{"nodes": {}}', max_bytes=10)
    assert from_json('{"nodes": {}}', max_bytes=13)["nodes"] == {}


def test_id_helpers() -> None:
    assert document.is_valid_id("Task_1.a-b")
    assert not document.is_valid_id("1task")
    assert not document.is_valid_id("a b")
    assert document.is_identifier("approval_2")
    assert not document.is_identifier("approval-2")
    assert not document.is_identifier(None)


# --- scopes: the parent of a node ---------------------------------------------------------------


def nested() -> dict[str, Any]:
    doc = sample()
    doc["nodes"]["sub"] = {"kind": "subProcess", "title": "Inner", "parent": None}
    doc["nodes"]["deeper"] = {"kind": "eventSubProcess", "parent": "sub"}
    doc["nodes"]["inner"] = {"kind": "userTask", "parent": "deeper"}
    return doc


def test_parent_is_kept_and_a_null_parent_dropped() -> None:
    doc = normalize(nested())
    assert "parent" not in doc["nodes"]["sub"]
    assert doc["nodes"]["inner"]["parent"] == "deeper"
    assert document.ancestors(doc, "inner") == ["deeper", "sub"]
    assert document.parent_of(doc, "review") is None
    assert document.children(doc) == {
        None: ["start", "review", "end", "sub"],
        "sub": ["deeper"],
        "deeper": ["inner"],
    }
    assert canonical_json(doc) == canonical_json(normalize(doc))


@pytest.mark.parametrize(
    ("node_id", "parent", "fragment"),
    [
        ("inner", "ghost", "'ghost', which is not a node"),
        ("inner", "review", "only subProcess and eventSubProcess"),
        ("inner", 7, "parent must name a sub-process"),
        ("inner", "", "parent must name a sub-process"),
        ("sub", "deeper", "inside itself"),
        ("sub", "sub", "inside itself"),
    ],
)
def test_bad_parents_are_refused_naming_the_node(node_id: str, parent: Any, fragment: str) -> None:
    doc = nested()
    doc["nodes"][node_id]["parent"] = parent
    with pytest.raises(DocumentError, match=fragment) as error:
        normalize(doc)
    assert error.value.element_id == node_id
    assert error.value.field == "parent"
