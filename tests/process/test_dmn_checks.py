"""check(): what the decision editor shows as you type and publishing enforces."""

from __future__ import annotations

import pytest

from tests.helpers.dmn import INVOICE_DMN, table_document
from webapp.process.dmn import check, read_dmn


def _messages(document, code):
    return [p.message for p in check(document) if p.code == code]


def test_a_clean_table_has_no_problems():
    assert check(read_dmn(INVOICE_DMN).document) == []


@pytest.mark.parametrize(
    ("tests", "overlapping"),
    [
        (["< 10", ">= 10"], []),
        (["[1..10]", "[10..20]"], ["1 and 2"]),
        (["[1..10[", "[10..20]"], []),
        (['"a","b"', '"c"'], []),
        (['"a","b"', 'not("c")'], ["1 and 2"]),
        (["< 5", "> 3", "-"], ["1 and 2", "1 and 3", "2 and 3"]),
        (["<= 4", ">= 5"], []),
    ],
)
def test_overlapping_rules_under_unique_are_blocking_and_named(tests, overlapping):
    document = table_document("UNIQUE", tests, ["a"] * len(tests))
    problems = [p for p in check(document) if p.code == "dmn.overlap"]
    assert [m.message.split("rules ")[1].split(" can")[0] for m in problems] == overlapping
    assert [f"{p.rules[0]} and {p.rules[1]}" for p in problems] == overlapping
    assert all(p.blocking for p in problems)
    assert all(p.element_id == "d" for p in problems)


def test_whole_number_columns_have_no_gap_between_4_and_5():
    document = table_document("UNIQUE", ["<= 4", ">= 5"], ["a", "b"], types=("integer",))
    assert _messages(document, "dmn.gap") == []
    decimal = table_document("UNIQUE", ["<= 4", ">= 5"], ["a", "b"], types=("double",))
    assert _messages(decimal, "dmn.gap") == [
        "Decision 'd': no rule matches input column 'x' when it is ]4..5[."
    ]


def test_multi_column_overlap_needs_every_column_to_meet():
    tests = [("< 10", '"a"'), ("< 10", '"b"'), ("[5..20]", '"a"')]
    document = table_document("UNIQUE", tests, ["1", "2", "3"], columns=("x", "k"))
    assert [p.message for p in check(document) if p.code == "dmn.overlap"] == [
        "Decision 'd': rules 1 and 3 can both match the same input, which the UNIQUE hit policy "
        "does not allow (with FIRST the earlier rule wins)."
    ]


def test_any_allows_overlaps_with_equal_outputs():
    document = table_document("ANY", ["< 10", "< 20", "< 30"], ['"a"', "'a'", '"b"'])
    assert len(_messages(document, "dmn.overlap")) == 2  # 1-3 and 2-3


def test_unreachable_rules_under_first_are_warnings():
    document = table_document("FIRST", ["< 10", "< 5", "[10..20]", "[5..15]", "-"], list("abcde"))
    problems = [p for p in check(document) if p.code == "dmn.unreachable"]
    assert [p.message for p in problems] == [
        "Decision 'd': rule 2 is never used: rule 1 matches every input it does (FIRST hit "
        "policy).",
        "Decision 'd': rule 4 is never used: rules 1 and 3 together match every input it does "
        "(FIRST hit policy).",
    ]
    assert not any(p.blocking for p in problems)
    assert [p.rules for p in problems] == [(1, 2), (1, 3, 4)]


def test_unreachable_through_several_columns_and_rules():
    tests = [("< 10", '"a"'), ("< 10", '"b"'), (">= 10", "-"), ("[0..20]", '"a","b"'), ("-", "-")]
    document = table_document(
        "FIRST", tests, list("abcde"), columns=("x", "k"), types=("double", "string")
    )
    problems = [p for p in check(document) if p.code == "dmn.unreachable"]
    assert [p.rules for p in problems] == [(1, 2, 3, 4)]
    assert "rules 1, 2 and 3 together match" in problems[0].message


def test_gaps_a_numeric_type_makes_visible():
    document = table_document("UNIQUE", ["< 0", "[10..20]"], ["a", "b"], types=("integer",))
    [problem] = [p for p in check(document) if p.code == "dmn.gap"]
    assert "input column 'x'" in problem.message and "[0..9]" in problem.message
    assert not problem.blocking and problem.column == "x"
    boolean = table_document("UNIQUE", ["true"], ["a"], types=("boolean",))
    assert _messages(boolean, "dmn.gap") == [
        "Decision 'd': no rule matches input column 'x' when it is false."
    ]


def test_gaps_across_columns_name_every_column_involved():
    tests = [("< 10", '"a"'), (">= 10", '"b"')]
    document = table_document(
        "UNIQUE", tests, ["1", "2"], columns=("x", "k"), types=("double", "string")
    )
    [problem] = [p for p in check(document) if p.code == "dmn.gap"]
    assert problem.message == "Decision 'd': no rule matches when 'x' is >= 10 and 'k' is \"a\"."
    other_text = table_document("UNIQUE", ['"a"', '"b"'], ["1", "2"], types=("string",))
    assert _messages(other_text, "dmn.gap") == []  # text no entry names is expected to miss
    untyped = table_document("UNIQUE", ["< 0"], ["1"])
    assert _messages(untyped, "dmn.gap") == []


def test_output_values_must_fit_the_type_and_the_allowed_values():
    document = table_document(
        "FIRST",
        ["< 0", "< 10", "-"],
        ['"x"', "1.5", "2"],
        output_types=("integer",),
        output_values={"y": "1,2"},
    )
    messages = [p.message for p in check(document) if p.code.startswith("dmn.output")]
    fit = "does not fit the output's type 'integer'."
    assert f"Decision 'd': rule 1, output column 'y': '\"x\"' {fit}" in messages
    assert f"Decision 'd': rule 2, output column 'y': '1.5' {fit}" in messages
    assert any("rule 1" in m and "not one of the output's values" in m for m in messages)
    assert not any("rule 3" in m for m in messages)


def test_duplicate_ids_and_required_decisions():
    document = read_dmn(INVOICE_DMN).document
    tables = [d["table"] for d in document["decisions"]]
    tables[1]["rules"][0]["id"] = tables[0]["rules"][0]["id"]
    document["decisions"][1]["requires"] = ["invoiceClassification", "missing"]
    document["decisions"][0]["requires"] = ["invoice-assign-approver"]
    messages = [p.message for p in check(document)]
    assert (
        "Decision 'invoice-assign-approver': the id 'DecisionRule_1of5a87' of a rule is already "
        "used by a rule." in messages
    )
    assert (
        "Decision 'invoice-assign-approver': it requires the decision 'missing', which this model "
        "does not have." in messages
    )
    assert any("cycle: invoiceClassification -> invoice-assign-approver" in m for m in messages)


def test_untranslatable_entries_block_naming_decision_rule_and_column():
    result = read_dmn(
        table_xml_with_entry("count(x) > 1")  # FEEL's count() has no Flowdesk equivalent
    )
    [problem] = [p for p in result.problems if p.code == "dmn.untranslatable"]
    assert problem.blocking and problem.element_id == "d" and problem.line == 5
    assert problem.message.startswith("Decision 'd', rule 2, input column 'x': cannot translate")
    assert (problem.rules, problem.column) == ((2,), "x")
    assert problem.to_json()["rules"] == [2]
    assert [p.message for p in check(result.document) if p.blocking] == [problem.message]


def table_xml_with_entry(entry: str) -> str:
    return (
        '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="defs" name="n"\n'
        ' namespace="x"><decision id="d" name="d"><decisionTable id="t" hitPolicy="FIRST">\n'
        '<input id="x_in" label="x"><inputExpression><text>x</text></inputExpression></input>\n'
        '<output id="o" name="y"/><rule id="r1"><inputEntry><text>1</text></inputEntry>\n'
        f'<outputEntry><text>1</text></outputEntry></rule><rule id="r2"><inputEntry><text>{entry}'
        "</text></inputEntry><outputEntry><text>2</text></outputEntry></rule>"
        "</decisionTable></decision></definitions>"
    )
