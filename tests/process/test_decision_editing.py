"""The pure helpers of the decision pages: table edits, version comparison, and example rows in
the DMN file."""

from __future__ import annotations

import pytest

from tests.helpers.decisions import DISCOUNT_DMN
from webapp.process import decision_edits, decision_examples, dmn
from webapp.process.decision_diff import diff_decisions
from webapp.process.decision_examples import ExampleError


def _document() -> dict:
    return dmn.read_dmn(DISCOUNT_DMN).document


def test_allowed_values_split_on_commas_outside_quotes():
    doc = decision_edits.apply(
        _document(),
        "output",
        "discount",
        {"column": "0", "name": "rate", "type": "string", "values": '"a, b", "c",d'},
    )
    assert doc["decisions"][0]["table"]["outputs"][0]["values"] == ['"a, b"', '"c"', "d"]


def test_an_edit_leaves_the_original_document_alone():
    original = _document()
    decision_edits.apply(original, "remove-rule", "discount", {"rule": "0"})
    assert len(original["decisions"][0]["table"]["rules"]) == 3


def test_an_unknown_edit_or_decision_is_named():
    with pytest.raises(decision_edits.EditError) as unknown:
        decision_edits.apply(_document(), "explode", "discount", {})
    assert unknown.value.field == "edit"
    with pytest.raises(decision_edits.EditError) as missing:
        decision_edits.apply(_document(), "add-rule", "nothing", {})
    assert "nothing" in missing.value.message


def test_compare_tells_a_moved_rule_from_a_changed_one_and_names_column_changes():
    old = _document()
    moved = decision_edits.apply(old, "move-rule", "discount", {"rule": "2", "direction": "up"})
    assert [(c.status, c.what, c.detail) for c in diff_decisions(old, moved)] == [
        ("moved", "rule 2", "was rule 3"),
        ("moved", "rule 3", "was rule 2"),
    ]
    renamed = decision_edits.apply(
        old,
        "input",
        "discount",
        {"column": "0", "label": "Total", "text": "total", "type": "number"},
    )
    [change] = diff_decisions(old, renamed)
    assert change.what == "input column Total"
    assert "label: Amount → Total" in change.detail and "text: amount → total" in change.detail
    gone = dict(old, decisions=[])
    assert [(c.status, c.what) for c in diff_decisions(old, gone)] == [("removed", "decision")]


ROW = {"decision": "discount", "name": "gold", "inputs": {"amount": 150, "tier": "gold"},
       "expected": 10}  # fmt: skip


def test_example_rows_go_into_the_definitions_extension_elements_and_come_back():
    xml = decision_examples.embed(DISCOUNT_DMN.encode(), [ROW])
    assert b"<extensionElements><flowdesk:examples" in xml
    stripped, rows = decision_examples.split(xml)
    assert rows == [ROW]
    assert dmn.read_dmn(stripped).document == _document()
    again = decision_examples.embed(xml, [dict(ROW, expected=5)])
    assert again.count(b"flowdesk:example ") == 1
    untouched, none = decision_examples.split(DISCOUNT_DMN)
    assert untouched == DISCOUNT_DMN and none == []


def test_an_example_value_that_is_not_json_is_named_with_its_line():
    xml = decision_examples.embed(DISCOUNT_DMN.encode(), [ROW]).replace(b">10<", b">ten<")
    with pytest.raises(ExampleError) as refused:
        decision_examples.split(xml)
    assert "'ten' is not JSON" in refused.value.message
    assert refused.value.message.startswith("Line ")


def test_running_rows_reports_actual_results_and_failures():
    doc = _document()
    rows = [ROW, dict(ROW, expected=3), dict(ROW, decision="gone")]
    passed, wrong, missing = decision_examples.run(doc, rows)
    assert passed.passed and passed.matched == (2,)
    assert not wrong.passed and wrong.actual == 10
    assert not missing.passed and "gone" in (missing.error or "")
