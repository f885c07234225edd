"""Unit tests for the expression language: operators, paths, functions and error reporting."""

import copy
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from webapp.process.expressions import (
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_STRING,
    Expression,
    ExpressionError,
    ExpressionSyntaxError,
    check,
    evaluate,
    parse,
)

CONTEXT = {
    "$input": {
        "amount": 1500,
        "rate": 2.5,
        "name": "Ada Lovelace",
        "kind": "invoice",
        "tags": ["urgent", "finance"],
        "items": [{"price": 10, "sku": "a-1"}, {"price": 20.5, "sku": "b-2"}],
        "meta": {"weird key": 7, "nested": {"deep": True}},
        "due": "2024-03-01T12:00:00Z",
        "day": "2024-03-01",
        "empty": "",
        "zero": 0,
        "nothing": None,
        "flag": True,
    },
    "$vars": {"approval": {"ok": True, "by": "bob"}},
    "$nodes": {"review": {"decision": "approve"}, "task_1": {"decision": "reject"}},
}


def ev(text, context=CONTEXT, **kwargs):
    return evaluate(text, context, **kwargs)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1),
        ("2.5", 2.5),
        ("1e3", 1000.0),
        ("1.5E-1", 0.15),
        ("'single'", "single"),
        ('"double"', "double"),
        ("'it\\'s'", "it's"),
        ('"a\\"b"', 'a"b'),
        ("'tab\\there'", "tab\there"),
        ("'line\\nbreak'", "line\nbreak"),
        ("'back\\\\slash'", "back\\slash"),
        ("'\"'", '"'),
        ("true", True),
        ("false", False),
        ("null", None),
        ("[]", []),
        ("[1, 'a', [true, null]]", [1, "a", [True, None]]),
        ("  42  ", 42),
        ("'ünïcödé ✓'", "ünïcödé ✓"),
    ],
)
def test_literals(text, expected):
    assert ev(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2", 3),
        ("5 - 7", -2),
        ("3 * 4", 12),
        ("7 / 2", 3.5),
        ("6 / 3", 2.0),
        ("1.5 + 1", 2.5),
        ("-3", -3),
        ("--3", 3),
        ("-(2 + 3)", -5),
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 2 - 3", 5),
        ("24 / 4 / 2", 3.0),
        ("2 * -3", -6),
        ("-2 * 3 + 1", -5),
        ("'ab' + 'cd'", "abcd"),
        ("[1] + [2, 3]", [1, 2, 3]),
        ("$input.tags + ['x']", ["urgent", "finance", "x"]),
        ("$input.amount * $input.rate", 3750.0),
    ],
)
def test_arithmetic(text, expected):
    assert ev(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 == 1", True),
        ("1 == 1.0", True),
        ("1 != 2", True),
        ("'a' == 'a'", True),
        ("'a' == 1", False),
        ("1 == '1'", False),
        ("true == 1", False),
        ("false == 0", False),
        ("null == null", True),
        ("null == false", False),
        ("null != 0", True),
        ("[1, [2]] == [1, [2]]", True),
        ("[1, 2] == [2, 1]", False),
        ("[true] == [1]", False),
        ("$input.meta == $input.meta", True),
        ("$input.meta.nested == $input.meta", False),
        ("$input.missing == null", True),
        ("1 < 2", True),
        ("2 <= 2", True),
        ("3 > 2.5", True),
        ("2 >= 3", False),
        ("'abc' < 'abd'", True),
        ("'b' > 'a'", True),
        ("$input.amount > 1000", True),
    ],
)
def test_comparisons(text, expected):
    assert ev(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true and true", True),
        ("true and false", False),
        ("false or true", True),
        ("false or false", False),
        ("not true", False),
        ("not not 1", True),
        ("not 0", True),
        ("not ''", True),
        ("not []", True),
        ("not null", True),
        ("1 and 'x'", True),
        ("0 or ''", False),
        ("[] or [1]", True),
        ("true or false and false", True),
        ("(true or false) and false", False),
        ("not false and false", False),
        ("not 1 == 2", True),
        ("1 < 2 and 2 < 3", True),
        ("$input.missing or true", True),
    ],
)
def test_boolean_operators_return_booleans(text, expected):
    assert ev(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("false and 1 / 0", False),
        ("true or 1 / 0", True),
        ("false and $input.nothing + 1", False),
        ("true or 'a' < 1", True),
        ("false and false and 1 / 0", False),
    ],
)
def test_short_circuit(text, expected):
    assert ev(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("'Ada' in $input.name", True),
        ("'Bob' in $input.name", False),
        ("'' in 'x'", True),
        ("'urgent' in $input.tags", True),
        ("'low' in $input.tags", False),
        ("1 in [1, 2]", True),
        ("1.0 in [1, 2]", True),
        ("true in [1]", False),
        ("[1] in [[1], 2]", True),
        ("[1] in [1, 2, [2]]", False),
        ("[1] in [1, true, 'x']", False),
        ("true in [1, 'true', true]", True),
        ("false in [0, '', []]", False),
        ("[1.0, true] in [[1, true]]", True),
        ("[1, 1] in [[1, true]]", False),
        ("[date('2026-01-05')] in [['2026-01-05']]", True),
        ("$input.meta in [1, $input.meta]", True),
        ("$input.meta in [[$input.meta], 'x']", False),
        ("'weird key' in $input.meta", True),
        ("'other' in $input.meta", False),
        ("1 in $input.meta", False),
        ("'low' not in $input.tags", True),
        ("'urgent' not in $input.tags", False),
        ("not 'urgent' in $input.tags", False),
        ("$input.kind in ['invoice', 'receipt']", True),
    ],
)
def test_in(text, expected):
    assert ev(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$input", CONTEXT["$input"]),
        ("$input.amount", 1500),
        ("$vars.approval.ok", True),
        ("$vars.approval.by", "bob"),
        ("$nodes.review.decision", "approve"),
        ("$nodes.task_1.decision", "reject"),
        ("$input.items[0].price", 10),
        ("$input.items[1].sku", "b-2"),
        ("$input.items[-1].price", 20.5),
        ("$input.items[-2].price", 10),
        ("$input.meta['weird key']", 7),
        ('$input.meta["nested"].deep', True),
        ("$input . meta . nested . deep", True),
        ("$input.tags[1]", "finance"),
        ("$nodes['review'].decision", "approve"),
    ],
)
def test_paths(text, expected):
    assert ev(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "$input.missing",
        "$input.missing.deeper.still",
        "$input.items[5]",
        "$input.items[-3]",
        "$input.items.price",
        "$input.items[0].missing",
        "$input.amount.digits",
        "$input.name[0]",
        "$input.meta[0]",
        "$input.nothing.x",
        "$vars.unknown",
        "$nodes.never_ran.decision",
    ],
)
def test_missing_paths_are_none(text):
    assert ev(text) is None


def test_missing_roots_and_bad_context_are_none():
    assert evaluate("$nodes.review.decision", {}) is None
    assert evaluate("$input.a", {"$input": None}) is None
    assert evaluate("$input.a", {"$input": ["x"]}) is None
    assert evaluate("$vars", None) is None


def test_tuple_values_act_as_lists():
    context = {"$input": {"pair": (1, 2)}}
    assert evaluate("$input.pair[1]", context) == 2
    assert evaluate("2 in $input.pair", context) is True
    assert evaluate("$input.pair + [3]", context) == [1, 2, 3]


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("1 + 2", set()),
        ("$input", {("$input",)}),
        ("$input.amount > 10", {("$input", "amount")}),
        (
            "$nodes.review.decision == 'ok' and $vars.approval.ok",
            {("$nodes", "review", "decision"), ("$vars", "approval", "ok")},
        ),
        ("$input.items[0].price", {("$input", "items", "price")}),
        ("$nodes['task-1'].decision", {("$nodes", "task-1", "decision")}),
        ("len($input.a) + len($input.a)", {("$input", "a")}),
        ("$input.not.in.and", {("$input", "not", "in", "and")}),
    ],
)
def test_paths_property(text, paths):
    assert parse(text).paths == frozenset(paths)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("len('abc')", 3),
        ("len('')", 0),
        ("len($input.tags)", 2),
        ("len($input.meta)", 2),
        ("len([1, 2, 3])", 3),
        ("lower('HeLLo')", "hello"),
        ("upper($input.kind)", "INVOICE"),
        ("contains($input.name, 'Love')", True),
        ("contains($input.tags, 'finance')", True),
        ("contains($input.tags, 'x')", False),
        ("contains($input.meta, 'nested')", True),
        ("len(lower(upper('abc')))", 3),
        ("keys($input.meta)", ["weird key", "nested"]),
        ("'nested' in keys($input.meta)", True),
    ],
)
def test_functions(text, expected):
    assert ev(text) == expected


def test_now_is_aware_utc():
    before = datetime.now(UTC)
    value = ev("now()")
    assert value.tzinfo is not None
    assert value.utcoffset() == timedelta(0)
    assert before <= value <= datetime.now(UTC)


def test_now_can_be_pinned():
    pinned = datetime(2024, 1, 1, tzinfo=UTC)
    assert ev("now()", now=pinned) == pinned
    assert parse("now() < '2024-06-01'").evaluate({}, now=pinned) is True


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("date('2024-03-01')", datetime(2024, 3, 1, tzinfo=UTC)),
        ("date('2024-03-01T10:30:00')", datetime(2024, 3, 1, 10, 30, tzinfo=UTC)),
        ("date('2024-03-01T10:30:00Z')", datetime(2024, 3, 1, 10, 30, tzinfo=UTC)),
        (
            "date('2024-03-01T10:30:00+02:00')",
            datetime(2024, 3, 1, 10, 30, tzinfo=timezone(timedelta(hours=2))),
        ),
        ("date($input.due)", datetime(2024, 3, 1, 12, tzinfo=UTC)),
    ],
)
def test_date_function(text, expected):
    value = ev(text)
    assert value == expected
    assert value.tzinfo is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("date($input.day) < date($input.due)", True),
        ("date($input.due) > '2024-03-01'", True),
        ("'2024-03-02' > date($input.due)", True),
        ("date($input.due) == '2024-03-01T12:00:00+00:00'", True),
        ("date($input.due) == '2024-03-01T14:00:00+02:00'", True),
        ("date($input.due) != 'not a date'", True),
        ("date($input.due) == 5", False),
        ("date('2024-01-01') <= date('2024-01-01T00:00:00Z')", True),
        ("now() > date('2000-01-01')", True),
    ],
)
def test_date_comparisons(text, expected):
    assert ev(text) is expected


def test_dates_from_context():
    context = {"$input": {"when": date(2024, 1, 2), "at": datetime(2024, 1, 2, 3)}}
    assert evaluate("$input.when < $input.at", context) is True
    assert evaluate("$input.at == '2024-01-02T03:00:00Z'", context) is True
    assert evaluate("date($input.when)", context) == datetime(2024, 1, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("(1 + 2))", "unexpected ')' at position 7", 7),
        ("1 +", "unexpected end of expression at position 3", 3),
        ("foo(1)", "unknown function 'foo' at position 0", 0),
        ("1 + bar(2)", "unknown function 'bar' at position 4", 4),
        ("'abc", "unterminated string starting at position 0", 0),
        ('1 + "abc', "unterminated string starting at position 4", 4),
        ("'abc\\", "unterminated string starting at position 0", 0),
        ("'a\\qb'", "unknown escape '\\q' at position 2", 2),
        ("$foo.bar", "unknown root '$foo' at position 0", 0),
        ("1 == $input2.x", "unknown root '$input2' at position 5", 5),
        ("$", "expected a name after '$' at position 0", 0),
        ("$input.", "expected a name after '.' at position 7", 7),
        ("$input.1", "expected a name after '.' at position 7", 7),
        ("$input[1.5]", "expected a whole number or a quoted key at position 7", 7),
        ("$input[x]", "expected a whole number or a quoted key at position 7", 7),
        ("$input[-'a']", "expected a whole number or a quoted key at position 8", 8),
        ("$input[0", "missing ']' to close '[' at position 6", 6),
        ("(1 + 2", "missing ')' to close '(' at position 0", 0),
        ("[1, 2", "missing ']' to close '[' at position 0", 0),
        ("len('a'", "missing ')' to close '(' at position 3", 3),
        ("(1 2)", "unexpected '2' at position 3", 3),
        ("[1 2]", "unexpected '2' at position 3", 3),
        ("[1,]", "unexpected ']' at position 3", 3),
        ("1 < 2 < 3", "comparisons cannot be chained at position 6", 6),
        ("1 == 1 != 2", "comparisons cannot be chained", 7),
        ("len(1, 2)", "len() at position 0 takes 1 argument, got 2", 0),
        ("now(1)", "now() at position 0 takes 0 arguments, got 1", 0),
        ("contains('a')", "contains() at position 0 takes 2 arguments, got 1", 0),
        ("len", "expected '(' after 'len' at position 3", 3),
        ("amount > 1", "unknown name 'amount' at position 0; paths start with $input", 0),
        ("True", "unknown name 'True' at position 0; did you mean 'true'?", 0),
        ("LEN('a')", "unknown function 'LEN' at position 0", 0),
        ("Null", "did you mean 'null'?", 0),
        ("1 = 1", "unexpected '=' at position 2; use '==' to compare", 2),
        ("a && b", "unexpected '&' at position 2; use 'and'", 2),
        ("true && false", "unexpected '&' at position 5; use 'and'", 5),
        ("true || false", "unexpected '|' at position 5; use 'or'", 5),
        ("!true", "unexpected '!' at position 0; use 'not'", 0),
        ("1 % 2", "unexpected '%' at position 2", 2),
        ("2 ** 3", "unexpected '*' at position 3", 3),
        ("and", "unexpected 'and' at position 0", 0),
        ("1 in", "unexpected end of expression at position 4", 4),
        ("not", "unexpected end of expression at position 3", 3),
        ("1 not 2", "unexpected 'not' at position 2", 2),
        ("+1", "unexpected '+' at position 0", 0),
        ("1.", "unexpected '.' at position 1", 1),
        (".5", "unexpected '.' at position 0", 0),
        ("1e999", "number too large at position 0", 0),
        ("9" * 400, "number too large at position 0", 0),
        ("", "expression is empty", 0),
        ("   ", "expression is empty", 0),
        ("1 + é", "unexpected 'é' at position 4", 4),
        ("1 + 'a very long string literal that is shown shortened' 2", "unexpected '2'", 57),
        ("(1)(2)", "unexpected '(' at position 3", 3),
        ("$input.a.b(1)", "unexpected '(' at position 10", 10),
    ],
)
def test_syntax_errors(text, message, position):
    with pytest.raises(ExpressionSyntaxError) as info:
        parse(text)
    assert message in info.value.message
    assert info.value.position == position
    assert info.value.expression == text
    assert check(text) is not None
    assert check(text).position == position


def test_long_unexpected_token_is_shortened():
    error = check("1 'a string literal of quite some length' 2")
    assert error.message == 'unexpected "\'a string literal..." at position 2'


def test_text_length_limit():
    assert check("1" + " " * (MAX_LENGTH - 1)) is None
    error = check("1" + " " * MAX_LENGTH)
    assert "too long" in error.message
    assert error.position == MAX_LENGTH


def test_nesting_limit():
    """The whole expression counts as one level; brackets, calls, '-' and 'not' add one each."""
    assert check("(" * (MAX_DEPTH - 1) + "1" + ")" * (MAX_DEPTH - 1)) is None
    assert ev("(" * (MAX_DEPTH - 1) + "1" + ")" * (MAX_DEPTH - 1)) == 1
    for text in (
        "(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH,
        "-" * (MAX_DEPTH + 1) + "1",
        "not " * (MAX_DEPTH + 1) + "true",
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "len(" * MAX_DEPTH + "'a'" + ")" * MAX_DEPTH,
    ):
        error = check(text)
        assert error is not None
        assert "nested too deeply" in error.message


def test_long_flat_chains_are_fine():
    text = " + ".join(["1"] * 500)
    assert ev(text) == 500
    text = " and ".join(["true"] * 200)
    assert ev(text) is True
    text = " or ".join(["$input.zero"] * 120)
    assert ev(text) is False


@pytest.mark.parametrize("value", [None, 1, b"1 + 1", ["1"]])
def test_parse_rejects_non_text(value):
    with pytest.raises(ExpressionSyntaxError, match="expression must be text"):
        parse(value)


def test_check_returns_none_for_valid_text():
    assert check("$input.amount > 10") is None


def test_parse_is_cached_and_immutable():
    first = parse("$input.amount + 1")
    assert parse("$input.amount + 1") is first
    assert isinstance(first, Expression)
    assert first.text == "$input.amount + 1"
    with pytest.raises(AttributeError):
        first.text = "2"
    assert evaluate(first, CONTEXT) == 1501
    assert first.evaluate(CONTEXT) == 1501


def test_list_literal_results_are_fresh():
    expression = parse("[1, 2]")
    value = expression.evaluate({})
    value.append(3)
    assert expression.evaluate({}) == [1, 2]


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("'a' < 1", "cannot compare text and number with '<'", 4),
        ("1 >= 'a'", "cannot compare number and text with '>='", 2),
        ("true < false", "cannot compare boolean and boolean", 5),
        ("[1] < [2]", "cannot compare list and list", 4),
        ("$input.missing > 3", "compare null and number with '>' (a value may be missing)", 15),
        ("$input.nothing + 1", "cannot apply '+' to null and number (a value may be missing)", 15),
        ("1 - 'a'", "cannot apply '-' to number and text", 2),
        ("'a' * 3", "cannot apply '*' to text and number", 4),
        ("'a' + 1", "cannot apply '+' to text and number", 4),
        ("[1] + 'a'", "cannot apply '+' to list and text", 4),
        ("true + 1", "cannot apply '+' to boolean and number", 5),
        ("$input.meta + $input.meta", "cannot apply '+' to object and object", 12),
        ("1 / 0", "division by zero", 2),
        ("1 / 0.0", "division by zero", 2),
        ("1 / $input.zero", "division by zero", 2),
        ("-'a'", "cannot negate text", 0),
        ("-$input.nothing", "cannot negate null (a value may be missing)", 0),
        ("-true", "cannot negate boolean", 0),
        ("1 in 'abc'", "cannot look for number in text", 2),
        ("'a' in 1", "cannot look for a value in number", 4),
        ("'a' in $input.missing", "cannot look for a value in null (a value may be missing)", 4),
        ("'a' not in null", "cannot look for a value in null", 4),
        ("len(5)", "len() needs text, a list or an object, got number", 0),
        ("len($input.missing)", "got null (a value may be missing)", 0),
        ("lower(1)", "lower() needs text, got number", 0),
        ("1 + upper(null)", "upper() needs text, got null", 4),
        ("contains(1, 1)", "cannot look for a value in number", 0),
        ("contains('abc', 1)", "cannot look for number in text", 0),
        ("date('tomorrow')", "date() cannot read 'tomorrow' as an ISO date", 0),
        ("date(5)", "date() needs text, got number", 0),
        ("date($input.due) < 'soon'", "cannot compare a date with 'soon': not an ISO date", 17),
        ("date($input.due) < 5", "cannot compare date and number", 17),
        ("1e308 * 10", "number out of range", 6),
        ("-1e308 - 1e308", "number out of range", 7),
        ("2 * " + " * ".join(["99999999999999999999"] * 20), "number out of range", None),
    ],
)
def test_evaluation_errors(text, message, position):
    with pytest.raises(ExpressionError) as info:
        ev(text)
    error = info.value
    assert not isinstance(error, ExpressionSyntaxError)
    assert message in error.message
    assert error.expression == text
    assert text[:100] in str(error)
    if position is not None:
        assert error.position == position


def test_equality_never_raises():
    odd = {"$input": {"a": object(), "nan": float("nan"), "d": datetime(2024, 1, 1)}}
    for text, expected in (
        ("$input.a == 1", False),
        ("$input.a == $input.a", True),
        ("$input.nan == $input.nan", True),
        ("$input.d != 'garbage'", True),
        ("$input.d == [1]", False),
        ("[$input.d] == ['2024-01-01']", True),
    ):
        assert evaluate(text, odd) is expected, text


def test_string_and_list_results_are_capped():
    context = {"$input": {"s": "x" * (MAX_STRING // 2), "l": list(range(60_000))}}
    assert len(evaluate("$input.s + $input.s", context)) == MAX_STRING
    with pytest.raises(ExpressionError, match="longer than"):
        evaluate("$input.s + $input.s + 'y'", context)
    with pytest.raises(ExpressionError, match="longer than"):
        evaluate("$input.l + $input.l", context)


def test_big_context_numbers():
    context = {"$input": {"big": 10**400, "inf": float("inf")}}
    with pytest.raises(ExpressionError, match="out of range"):
        evaluate("$input.big / 3", context)
    with pytest.raises(ExpressionError, match="out of range"):
        evaluate("$input.inf + 1", context)
    assert evaluate("$input.big > 1", context) is True


def test_error_str_and_copy():
    error = check("1 +")
    assert str(error) == "unexpected end of expression at position 3 (expression: 1 +)"
    clone = copy.deepcopy(error)
    assert type(clone) is ExpressionSyntaxError
    assert (clone.message, clone.expression, clone.position) == (
        error.message,
        error.expression,
        error.position,
    )
    long_error = check("1 + " * 100 + "(")
    assert str(long_error).endswith("...)")


def test_evaluate_accepts_text_and_raises_syntax_errors():
    with pytest.raises(ExpressionSyntaxError):
        evaluate("1 +", {})
    assert evaluate("1 + 1", {}) == 2


def test_keys_needs_an_object():
    with pytest.raises(ExpressionError, match=r"keys\(\) needs an object, got list"):
        evaluate("keys($input.tags)", CONTEXT)
