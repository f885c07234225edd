"""Translation of JUEL, FEEL and SpiffWorkflow (Python) conditions into our expression language."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.process import expressions
from webapp.process.bpmn.conditions import (
    FEEL,
    JUEL,
    PLAIN,
    PYTHON,
    detect_dialect,
    quote,
    translate,
    translate_date,
    translate_value,
)

TRANSLATED = [
    ("${amount > 1000}", "$vars.amount > 1000"),
    ("#{amount > 1000}", "$vars.amount > 1000"),
    ("${approved}", "$vars.approved"),
    ("${!approved}", "not $vars.approved"),
    ("${not approved}", "not $vars.approved"),
    ("${x == 'a' && y < 3}", "$vars.x == 'a' and $vars.y < 3"),
    ("${x eq 'a' or y ge 3}", "$vars.x == 'a' or $vars.y >= 3"),
    ('${vacationApproved == "Reject"}', "$vars.vacationApproved == 'Reject'"),
    ("${i <= numOfIterations}", "$vars.i <= $vars.numOfIterations"),
    ("${!a == b}", "(not $vars.a) == $vars.b"),
    ("${!(a && b)}", "not ($vars.a and $vars.b)"),
    ("${a || b && c}", "$vars.a or $vars.b and $vars.c"),
    ("${order.total * 2 + 1 > 10.5}", "$vars.order.total * 2 + 1 > 10.5"),
    ("${x != null}", "$vars.x != null"),
    ("=amount > 1000", "$vars.amount > 1000"),
    ('=status = "done"', "$vars.status == 'done'"),
    ("=not(done) or retries < 3", "not ($vars.done) or $vars.retries < 3"),
    ("=fraud", "$vars.fraud"),
    ("x == 1", "$vars.x == 1"),
    ("x < 2", "$vars.x < 2"),
    ("choice == 'No'", "$vars.choice == 'No'"),
    ("skipParallel == False", "$vars.skipParallel == false"),
    ("x is None", "$vars.x == null"),
    ("x is not None", "$vars.x != null"),
    ("not a == b", "not ($vars.a == $vars.b)"),
    ("(a or b) and c", "($vars.a or $vars.b) and $vars.c"),
    ("-x * 2 >= 3", "-$vars.x * 2 >= 3"),
    ("true", "true"),
    ('name == "it\'s"', '$vars.name == "it\'s"'),
]

KEPT = [
    '${customer.prop("age").numberValue() >= 21}',
    "${reservationService.showUp()}",
    "${empty list}",
    "${a} and ${b}",
    "${items[0] > 1}",
    "priority = 'Emergency'",
    "1 < x < 3",
    "a not in b",
    "Service Level == 'Premium'",
    "=list contains(x, 1)",
    "='single quotes'",
    "x % 2 == 0",
    "bpmn:getDataObject('approved')",
    "${a.in}",
    "",
]


@pytest.mark.parametrize(("source", "expected"), TRANSLATED)
def test_simple_expressions_translate(source: str, expected: str) -> None:
    result = translate(source)
    assert result.ok, result
    assert result.text == expected
    assert expressions.check(result.text) is None


@pytest.mark.parametrize("source", KEPT)
def test_other_expressions_are_kept_verbatim(source: str) -> None:
    result = translate(source)
    assert not result.ok
    assert result.text == source


def test_our_language_passes_through_untouched() -> None:
    assert translate("$input.amount > 5", "flowdesk").text == "$input.amount > 5"


@pytest.mark.parametrize(
    ("text", "language", "dialect"),
    [
        ("${a}", None, JUEL),
        ("a > 1", "http://camunda.org/juel", JUEL),
        ("=a", None, FEEL),
        ("a", "https://www.omg.org/spec/FEEL/20140401", FEEL),
        ("a == 1", "python", PYTHON),
        ("a == 1", None, PLAIN),
    ],
)
def test_dialect_detection(text: str, language: str | None, dialect: str) -> None:
    assert detect_dialect(text, language) == dialect


def test_python_dialect_does_not_read_lowercase_true_as_a_literal() -> None:
    assert translate("True", "python").text == "true"
    assert not translate("true", "python").ok


def test_vendor_values_are_literals_unless_wrapped() -> None:
    assert translate_value("demo").text == "'demo'"
    assert translate_value("${reviewer}").text == "$vars.reviewer"
    assert translate_value("=x").text == "$vars.x"
    assert translate_value("""both ' and " quotes\\""").text == """'both \\' and " quotes\\\\'"""
    assert translate_value("it's").text == '"it\'s"'
    assert translate_value("two\nlines").text == "'two\\nlines'"
    assert not translate_value("x" * 5000).ok


@given(st.text(max_size=50))
def test_quoted_text_evaluates_to_itself(text: str) -> None:
    assert expressions.evaluate(quote(text), {}) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01T10:00:00Z", "'2024-05-01T10:00:00Z'"),
        ('"2024-05-01"', "'2024-05-01'"),
        ("${timerDate}", "$vars.timerDate"),
        ("futuredate", "$vars.futuredate"),
    ],
)
def test_timer_dates(text: str, expected: str) -> None:
    assert translate_date(text).text == expected
