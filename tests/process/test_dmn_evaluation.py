"""Evaluating decisions: hit policies, result shapes, required decisions and the errors named."""

from __future__ import annotations

import pytest

from tests.helpers.dmn import INVOICE_DMN, table_document
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


@pytest.mark.parametrize(
    ("amount", "category", "classification", "groups"),
    [
        (100, "Misc", "day-to-day expense", ["accounting"]),
        (500, "Misc", "budget", ["sales"]),
        (5000, "Misc", "exceptional", ["sales", "management"]),
        (9999, "Travel Expenses", "day-to-day expense", ["accounting"]),
        (1, "Other", None, []),
    ],
)
def test_required_decision_is_evaluated_first_and_read_by_its_result_name(
    amount, category, classification, groups
):
    document = read_dmn(INVOICE_DMN).document
    data = _vars(amount=amount, invoiceCategory=category)
    evaluation = evaluate(document, "invoice-assign-approver", data)
    assert evaluation.result == groups
    [required] = evaluation.required
    assert (required.decision_id, required.result) == ("invoiceClassification", classification)
    assert evaluation.to_json()["required"][0]["result"] == classification


def test_priority_picks_by_output_value_order():
    document = table_document(
        "PRIORITY",
        ["> 0", "> 10", "> 100"],
        ["low", "high", "medium"],
        output_values={"y": '"high","medium","low"'},
    )
    assert evaluate(document, "d", _vars(x=500)).result == "high"
    assert evaluate(document, "d", _vars(x=5)).result == "low"
    assert evaluate(document, "d", _vars(x=-5)).result is None


def test_output_order_sorts_every_match_by_priority():
    document = table_document(
        "OUTPUT ORDER",
        ["> 0", "> 10", "> 100"],
        ["low", "high", "medium"],
        output_values={"y": '"high","medium","low"'},
    )
    evaluation = evaluate(document, "d", _vars(x=500))
    assert evaluation.result == ["high", "medium", "low"]
    assert evaluation.matched == [1, 2, 3]


def test_rule_order_keeps_rule_order():
    document = table_document("RULE ORDER", ["> 0", "> 10", "-"], ["a", "b", "c"])
    assert evaluate(document, "d", _vars(x=50)).result == ["a", "b", "c"]
    assert evaluate(document, "d", _vars(x=-1)).result == ["c"]


def test_any_needs_matching_rules_to_agree():
    document = table_document("ANY", ["> 0", "> 10", "> 100"], ["yes", "yes", "no"])
    assert evaluate(document, "d", _vars(x=50)).result == "yes"
    with pytest.raises(DecisionError) as caught:
        evaluate(document, "d", _vars(x=500))
    assert caught.value.rules == [1, 2, 3]
    assert "ANY hit policy" in caught.value.message


@pytest.mark.parametrize(
    ("aggregation", "x", "expected"),
    [
        ("SUM", 50, 30),
        ("SUM", 500, 30),  # the distinct outputs 10 and 20 (DMN 1.3, 8.2.11)
        ("MIN", 50, 10),
        ("MAX", 50, 20),
        ("COUNT", 50, 2),
        ("COUNT", -1, 0),
        ("SUM", -1, None),
    ],
)
def test_collect_aggregations(aggregation, x, expected):
    document = table_document(
        "COLLECT", ["> 0", "> 10", "> 100"], ["10", "20", "10"], aggregation=aggregation
    )
    assert evaluate(document, "d", _vars(x=x)).result == expected


def test_several_outputs_give_a_dict_and_no_match_gives_none_or_empty():
    document = table_document(
        "UNIQUE", ["< 0", ">= 0"], [("neg", "1"), ("pos", "2")], output_names=("sign", "code")
    )
    assert evaluate(document, "d", _vars(x=3)).result == {"sign": "pos", "code": 2}
    collect = table_document("COLLECT", ["< 0"], [("neg", "1")], output_names=("sign", "code"))
    assert evaluate(collect, "d", _vars(x=3)).result == []
    assert evaluate(collect, "d", _vars(x=-3)).result == [{"sign": "neg", "code": 1}]


def test_literal_decision_reads_a_required_table():
    document = read_dmn(
        b"""<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="defs"
        name="n" namespace="x">
        <decision id="total" name="Total"><variable name="total"/>
          <informationRequirement><requiredDecision href="#rate"/></informationRequirement>
          <literalExpression><text>amount * rate</text></literalExpression></decision>
        <decision id="rate" name="rate"><decisionTable id="t" hitPolicy="FIRST">
          <input id="i" label="amount"><inputExpression><text>amount</text></inputExpression>
          </input><output id="o" name="rate"/>
          <rule id="r1"><inputEntry><text>&gt; 100</text></inputEntry>
            <outputEntry><text>0.5</text></outputEntry></rule>
          <rule id="r2"><inputEntry><text>-</text></inputEntry>
            <outputEntry><text>1</text></outputEntry></rule>
        </decisionTable></decision></definitions>"""
    ).document
    assert evaluate(document, "total", _vars(amount=200)).result == 100
    assert evaluate(document, "total", _vars(amount=50)).result == 50


def test_input_expression_errors_name_the_column():
    document = table_document("FIRST", ["> 1"], ["a"], columns=("x",))
    document["decisions"][0]["table"]["inputs"][0]["expression"] = "$vars.x + 1"
    with pytest.raises(DecisionError) as caught:
        evaluate(document, "d", _vars(x="text"))
    assert "input column 'x'" in caught.value.message


def test_missing_input_matches_no_comparison_but_type_errors_are_named():
    document = table_document("FIRST", ["> 1", "-"], ["a", "b"])
    assert evaluate(document, "d", _vars()).result == "b"
    with pytest.raises(DecisionError) as caught:
        evaluate(document, "d", _vars(x="text"))
    assert caught.value.rules == [1]
    assert "rule 1, input column 'x'" in caught.value.message


def test_cyclic_required_decisions_raise():
    document = read_dmn(
        b"""<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="defs"
        name="n" namespace="x">
        <decision id="a" name="a"><informationRequirement><requiredDecision href="#b"/>
        </informationRequirement><literalExpression><text>b</text></literalExpression></decision>
        <decision id="b" name="b"><informationRequirement><requiredDecision href="#a"/>
        </informationRequirement><literalExpression><text>a</text></literalExpression></decision>
        </definitions>"""
    ).document
    with pytest.raises(DecisionError, match="cycle: a -> b -> a"):
        evaluate(document, "a", _vars())
    with pytest.raises(DecisionError, match="no such decision"):
        evaluate(document, "nope", _vars())
