"""Unary tests and expressions in FEEL and SpiffWorkflow's Python, translated and then run."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from webapp.process import expressions
from webapp.process.dmn import evaluate, read_dmn, write_dmn
from webapp.process.dmn.translate import Untranslatable, expression, unary_test


def _accepts(test: str | None, value, variables=None) -> bool:
    if test is None:
        return True
    return bool(expressions.evaluate(test, {"$cell": value, "$vars": variables or {}}))


FEEL_CASES = [
    ("< 250", [249, -3, 249.9], [250, 1000]),
    ("<= 250", [250], [251]),
    (">= 6", [6, 7.5], [5]),
    ("> -5", [-4, 0], [-5, -6]),
    ("[1..10]", [1, 5, 10], [0, 10.1]),
    ("]1..10[", [1.5, 9], [1, 10]),
    ("(1..10)", [2], [1, 10]),
    ("[1..10)", [1, 9.9], [10]),
    ('"Misc"', ["Misc"], ["misc", "Travel"]),
    ('"a","b"', ["a", "b"], ["c"]),
    ("1, 2, [5..7]", [1, 2, 6], [3, 8]),
    ('not("a", "b")', ["c"], ["a", "b"]),
    ("not(< 5)", [5, 6], [4]),
    ("true", [True], [False]),
    ("false", [False], [True]),
    ("null", [None], [0, ""]),
    ("3", [3, 3.0], [4, "3"]),
    ("-", [1, "x", None], []),
    ("", [1, None], []),
    ('date("2020-01-01")', [datetime(2020, 1, 1, tzinfo=UTC), "2020-01-01"], ["2020-01-02"]),
    ('> date and time("2020-01-01T10:00:00")', ["2020-01-01T10:00:01"], ["2020-01-01T10:00:00"]),
    ("? > 5 and ? < 8", [6, 7], [5, 8]),
    ("[-5..-1]", [-5, -3, -1], [0, -6]),
    ("< now()", ["2000-01-01T00:00:00"], ["2999-01-01T00:00:00"]),
    ('"it\'s, fine"', ["it's, fine"], ["it's"]),
]


@pytest.mark.parametrize(("text", "matching", "other"), FEEL_CASES)
def test_feel_unary_tests(text, matching, other):
    test = unary_test(text, "feel")
    assert all(_accepts(test, value) for value in matching), test
    assert not any(_accepts(test, value) for value in other), test


def test_feel_names_read_data():
    test = unary_test("< limit", "feel")
    assert _accepts(test, 5, {"limit": 10})
    assert not _accepts(test, 15, {"limit": 10})
    assert _accepts(unary_test("customer.status", "feel"), "gold", {"customer": {"status": "gold"}})


PYTHON_CASES = [
    ("> 5", [6], [5]),
    ("'a'", ["a"], ["b"]),
    ('== "x"', ["x"], ["y"]),
    ('!= "x"', ["y"], ["x"]),
    ('in ["a", "b"]', ["a"], ["c"]),
    ('not in ["a", "b"]', ["c"], ["a"]),
    ('"PEANUTS" in ?', [["PEANUTS", "EGGS"]], [["EGGS"]]),
    ("100 <= ? < 110", [100, 109.9], [110, 99]),
    ("Decimal('100.05') < ? <= Decimal('110.05')", [110.05], [100.05]),
    ("True", [True], [False]),
    ("None", [None], [0]),
    ("len(?) > 2", [[1, 2, 3], "abc"], [[1]]),
    (
        "datetime.datetime(2017,11,13) <= ? <= datetime.datetime(2017,11,14,23,59,59)",
        ["2017-11-14T12:00:00"],
        ["2017-11-15T00:00:00"],
    ),
]


@pytest.mark.parametrize(("text", "matching", "other"), PYTHON_CASES)
def test_python_unary_tests(text, matching, other):
    test = unary_test(text, "python")
    assert all(_accepts(test, value) for value in matching), test
    assert not any(_accepts(test, value) for value in other), test


@pytest.mark.parametrize(
    ("text", "language", "variables", "value"),
    [
        ("amount", "feel", {"amount": 5}, 5),
        ("amount * 2 + 1", "feel", {"amount": 5}, 11),
        ('first + " " + last', "feel", {"first": "A", "last": "B"}, "A B"),
        ("order.total", "feel", {"order": {"total": 9}}, 9),
        ("item['x']", "python", {"item": {"x": 3}}, 3),
        ("allergies.keys()", "python", {"allergies": {"A": 1, "B": 2}}, ["A", "B"]),
        ('"text"', "feel", {}, "text"),
        ("-2.5", "feel", {}, -2.5),
    ],
)
def test_expressions(text, language, variables, value):
    assert expressions.evaluate(expression(text, language), {"$vars": variables}) == value


@pytest.mark.parametrize(
    ("text", "language", "reason"),
    [
        ("sum([1 for x in exclusive if x.done is None])", "python", "sum()"),
        ("x.upper()", "python", "method .upper()"),
        ("[1..", "feel", ""),
        ("count(items) > 1", "feel", "count()"),
        ("a ** 2", "python", "'**'"),
        ('"a", "b"', "python", "tuple"),
        ("[1..2..3]", "feel", "range"),
        ("datetime.datetime(2017,13,3)", "python", "month must be in 1..12"),
    ],
)
def test_untranslatable_entries_name_the_reason(text, language, reason):
    with pytest.raises(Untranslatable) as caught:
        if reason in ("tuple", "range", "", "month must be in 1..12"):
            unary_test(text, language)
        else:
            expression(text, language)
    assert reason in str(caught.value)


def test_translation_never_runs_python():
    with pytest.raises(Untranslatable):
        expression("__import__('os').system('true')", "python")


def test_camunda_juel_entries_translate_and_survive_writing():
    xml = """<definitions xmlns="http://www.omg.org/spec/DMN/20151101/dmn.xsd" id="d1" name="n"
      namespace="x"><decision id="d" name="d"><decisionTable id="t" hitPolicy="FIRST">
      <input id="i" label="Amount"><inputExpression id="e" typeRef="double"
        expressionLanguage="juel"><text>${amount * 2}</text></inputExpression></input>
      <output id="o" name="size" typeRef="string"/>
      <rule id="r1"><inputEntry id="a" expressionLanguage="juel"><text>${cellInput &gt; 100}</text>
        </inputEntry><outputEntry id="b" expressionLanguage="juel"><text>${"big"}</text>
        </outputEntry></rule>
      <rule id="r2"><inputEntry id="c"><text>-</text></inputEntry>
        <outputEntry id="f"><text>"small"</text></outputEntry></rule>
      </decisionTable></decision></definitions>"""
    imported = read_dmn(xml)
    assert not imported.problems
    document = imported.document
    assert evaluate(document, "d", {"$vars": {"amount": 60}}).result == "big"
    assert evaluate(document, "d", {"$vars": {"amount": 40}}).result == "small"
    assert read_dmn(write_dmn(document)).document == document
    written = write_dmn(document)
    assert written.count(b'expressionLanguage="juel"') == 3
    assert b"${cellInput &gt; 100}" in written


@pytest.mark.parametrize("language", ["javascript", "groovy"])
def test_languages_not_translated_are_refused(language):
    with pytest.raises(Untranslatable, match=f"the expression language '{language}'"):
        expression("x", language)
    with pytest.raises(Untranslatable, match=f"the expression language '{language}'"):
        unary_test("> 1", language)
