"""Evaluating decisions: hit policies, result shapes, required decisions and the errors named."""

from __future__ import annotations

import pytest

from tests.helpers.dmn import table_document
from tests.helpers.dmn_corpus import dmn_file
from webapp.process.dmn import DecisionError, evaluate, evaluate_table, read_dmn

SPIFF = "spiffworkflow/"


def _vars(**values):
    return {"$vars": values}


@pytest.mark.parametrize(
    ("x", "expected"), [(3, "A"), (4, "B"), (5, "C"), (6, "D"), (99, "D"), (2, None)]
)
def test_camunda_feel_table_unique(x, expected):
    document = read_dmn(dmn_file(SPIFF + "camunda__data__dmn__test_integer_decision.dmn")).document
    evaluation = evaluate(document, "IntegerDecisionStringOutputTable", _vars(x=x))
    assert evaluation.result == expected
    assert evaluation.inputs[0]["value"] == x


def test_spiff_python_table_collect_gives_a_list_of_dicts():
    document = read_dmn(dmn_file(SPIFF + "dmn__data__collect_hit.dmn")).document
    evaluation = evaluate(document, "Decision_ExclusiveAMCheck", _vars(type="stooge"))
    assert evaluation.result == [
        {"result": 1, "name": "Larry"},
        {"result": 2, "name": "Mo"},
        {"result": 3, "name": "Curly"},
        {"result": 4, "name": "Shemp"},
    ]
    assert evaluation.matched == [1, 2, 3, 4]
    assert evaluate(document, "Decision_ExclusiveAMCheck", _vars(type="nobody")).result == []


def test_spiff_python_dict_keys_and_placeholder():
    document = read_dmn(dmn_file(SPIFF + "dmn__python_engine__data__dict_decision.dmn")).document
    decision = "DictDecisionStringOutputTable"
    assert evaluate(document, decision, _vars(allergies={"PEANUTS": 1})).result == "isPeanuts"
    assert evaluate(document, decision, _vars(allergies={"SHELLFISH": 1})).result == "IsNotPeanuts"


def test_unique_violation_names_the_rules():
    document = table_document("UNIQUE", [">= 1", "<= 5", "> 10"], ["a", "b", "c"])
    with pytest.raises(DecisionError) as caught:
        evaluate(document, "d", _vars(x=3))
    assert caught.value.rules == [1, 2]
    assert "UNIQUE hit policy: rules 1 and 2 both match" in str(caught.value)
    assert caught.value.decision_id == "d"


def test_first_takes_the_first_match_only():
    document = table_document("FIRST", [">= 1", "<= 5", "-"], ["a", "b", "c"])
    evaluation = evaluate(document, "d", _vars(x=3))
    assert (evaluation.result, evaluation.matched) == ("a", [1])
    assert evaluate(document, "d", _vars(x=0)).result == "b"


def test_evaluate_table_takes_column_values_by_input_id():
    document = table_document("FIRST", ["[1..5]", "]5..10]"], ["low", "high"])
    assert evaluate_table(document, "d", {"x_in": 5}).result == "low"
    assert evaluate_table(document, "d", {"x_in": 5.5}).result == "high"
    assert evaluate_table(document, "d", {"x_in": 11}).result is None
