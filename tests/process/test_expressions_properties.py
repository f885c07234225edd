"""Property tests: parsing and evaluation never fail unexpectedly and always finish quickly."""

import contextlib
import gc
import operator
import time
from datetime import UTC, timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from webapp.process.expressions import (
    MAX_LENGTH,
    ROOTS,
    Expression,
    ExpressionError,
    ExpressionSyntaxError,
    check,
    evaluate,
    parse,
)

TIME_LIMIT = 0.5
FAST = settings(
    deadline=timedelta(seconds=2),
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
)

# --- strategies --------------------------------------------------------------------------------

KEYS = ["a", "b", "c", "items", "x", "decision", "not", "in"]
keys = st.sampled_from(KEYS)
FRAGMENTS = [
    *("(", ")", "[", "]", "'", '"', "\\", ".", ",", " ", "$", "$input", "$vars", "$nodes"),
    *("==", "!=", "<", "<=", ">", ">=", "=", "!", "&", "+", "-", "*", "/", "in", "not"),
    *("and", "or", "true", "false", "null", "len", "lower", "upper", "contains", "now"),
    *("date", "foo", "1", "0", "2.5", "1e3", "1e999", "a", "x", "_", "é", "\n"),
]
token_soup = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)
any_text = st.one_of(st.text(max_size=300), token_soup)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=20),
    st.sampled_from(["2024-01-01", "2024-01-01T10:00:00+02:00", "2024-13-99", ""]),
    st.datetimes(timezones=st.sampled_from([None, UTC])),
    st.dates(),
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)
contexts = st.fixed_dictionaries(
    {root: st.dictionaries(keys, json_values, max_size=5) for root in ROOTS}
)


def _quote(text: str) -> str:
    quote = "'" if len(text) % 2 else '"'
    return quote + text.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote


segments = st.one_of(
    keys.map(lambda key: "." + key),
    st.integers(-3, 3).map(lambda index: f"[{index}]"),
    keys.map(lambda key: f"[{_quote(key)}]"),
)
paths = st.builds(
    lambda root, parts: root + "".join(parts),
    st.sampled_from(ROOTS),
    st.lists(segments, max_size=4),
)
atoms = st.one_of(
    st.integers(0, 10**6).map(str),
    st.floats(min_value=0, max_value=1e6, allow_nan=False).map(repr),
    st.text(max_size=12).map(_quote),
    st.sampled_from(["true", "false", "null", "now()", "[]"]),
    paths,
)
BINARY = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "+", "-", "*", "/", "and", "or"]


def _gap(op: str, gap: str) -> str:
    return gap if op[0] in "=!<>+-*/" else " "


def _compound(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    spaced = st.sampled_from([" ", "", "  ", "\n"])
    return st.one_of(
        st.builds(
            lambda left, op, right, gap: (
                f"({left}{_gap(op, gap)}{op}{_gap(op, gap) or ' '}{right})"
            ),
            children,
            st.sampled_from(BINARY),
            children,
            spaced,
        ),
        children.map(lambda operand: f"-({operand})"),
        children.map(lambda operand: f"(not ({operand}))"),
        st.lists(children, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        st.builds(
            lambda name, arg: f"{name}({arg})",
            st.sampled_from(["len", "lower", "upper", "date"]),
            children,
        ),
        st.builds(lambda a, b: f"contains({a}, {b})", children, children),
    )


grammar = st.recursive(atoms, _compound, max_leaves=30)


# A fixed pure-Python workload and the CPU time it took on the machine TIME_LIMIT was set on.
REFERENCE_SECONDS = 0.025


def _reference() -> float:
    listed = list(range(5_000))
    started = time.thread_time()
    for _ in range(200):
        [1] in listed  # noqa: B015 - the comparison is the work
    return time.thread_time() - started


def _slowness() -> float:
    """How much slower this machine's CPU is right now than the reference one (at least 1): a
    shared or throttled machine stretches CPU time too, and the bound is about blow-ups, which
    cost far more than that."""
    return max(1.0, min(_reference() for _ in range(3)) / REFERENCE_SECONDS)


def _timed(function, *args):
    """CPU time of this thread, not wall time: other processes' load cannot fail the bound; the
    garbage collector is off meanwhile, so a collection of the whole test worker's heap (seen
    at six times the call's own cost) is not counted against the expression."""
    gc.collect()
    gc.disable()
    started = time.thread_time()
    try:
        return function(*args)
    finally:
        elapsed = time.thread_time() - started
        gc.enable()
        limit = TIME_LIMIT * _slowness()
        assert elapsed < limit, f"took {elapsed:.3f}s (limit {limit:.3f}s on this machine)"


# --- any text ----------------------------------------------------------------------------------


@pytest.mark.slow
@FAST
@given(any_text)
@example("(" * 2000)
@example("-" * 2000 + "1")
@example("not " * 500 + "true")
@example("'" + "\\" * 1998 + "'")
@example("1" * 2000)
@example("$input" + ".a" * 997)
def test_parse_any_text_returns_expression_or_syntax_error(text):
    try:
        expression = _timed(parse, text)
    except ExpressionSyntaxError as exc:
        assert exc.expression == text
        assert exc.message
        assert exc.position is None or 0 <= exc.position <= max(len(text), MAX_LENGTH)
        assert check(text) is not None
    else:
        assert isinstance(expression, Expression)
        assert expression.text == text
        assert all(path[0] in ROOTS for path in expression.paths)
        assert check(text) is None


@pytest.mark.slow
@FAST
@given(token_soup, contexts)
def test_evaluating_any_parsed_text_returns_or_raises_expression_error(text, context):
    if check(text) is not None:
        return
    try:
        _timed(evaluate, text, context)
    except ExpressionError as exc:
        assert not isinstance(exc, ExpressionSyntaxError)
        assert exc.expression == text


# --- structured expressions from the grammar ---------------------------------------------------


@pytest.mark.slow
@FAST
@given(grammar, contexts)
def test_grammar_expressions_parse_and_evaluate_safely(text, context):
    try:
        expression = _timed(parse, text)
    except ExpressionSyntaxError as exc:
        assert "too long" in exc.message or "nested too deeply" in exc.message
        return
    try:
        _timed(evaluate, expression, context)
    except ExpressionError as exc:
        assert not isinstance(exc, ExpressionSyntaxError)
        assert exc.expression == text
        assert exc.message


@FAST
@given(st.sampled_from(ROOTS), st.lists(st.one_of(keys, st.integers(-3, 3)), max_size=5))
def test_path_text_parses_to_its_name_segments(root, parts):
    text = root + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts)
    names = tuple(part for part in parts if isinstance(part, str))
    assert parse(text).paths == {(root, *names)}


@FAST
@given(
    st.sampled_from(ROOTS), st.lists(st.one_of(keys, st.integers(-3, 3)), max_size=5), json_values
)
def test_paths_resolve_like_plain_lookups(root, parts, data):
    text = root + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts)
    expected = data
    for part in parts:
        if isinstance(part, str) and isinstance(expected, dict):
            expected = expected.get(part)
        elif (
            isinstance(part, int)
            and isinstance(expected, list)
            and -len(expected) <= part < len(expected)
        ):
            expected = expected[part]
        else:
            expected = None
            break
    result = evaluate(text, {root: data})
    assert result is expected or result == expected or result != result


# --- oracles -----------------------------------------------------------------------------------

ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul}
COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le}
numbers = st.integers(-1000, 1000).map(lambda n: (str(n), n))
numeric = st.recursive(
    numbers,
    lambda children: st.builds(
        lambda left, op, right: (f"({left[0]} {op} {right[0]})", ARITH[op](left[1], right[1])),
        children,
        st.sampled_from(list(ARITH)),
        children,
    ),
    max_leaves=8,
)
booleans = st.recursive(
    st.builds(
        lambda left, op, right: (f"{left[0]} {op} {right[0]}", COMPARE[op](left[1], right[1])),
        numeric,
        st.sampled_from(list(COMPARE)),
        numeric,
    )
    | st.sampled_from([("true", True), ("false", False)]),
    lambda children: st.one_of(
        st.builds(lambda a, b: (f"({a[0]} and {b[0]})", a[1] and b[1]), children, children),
        st.builds(lambda a, b: (f"({a[0]} or {b[0]})", a[1] or b[1]), children, children),
        children.map(lambda a: (f"not ({a[0]})", not a[1])),
    ),
    max_leaves=8,
)


@FAST
@given(numeric)
def test_integer_arithmetic_matches_python(case):
    text, expected = case
    assert evaluate(text, {}) == expected


@FAST
@given(booleans)
def test_boolean_logic_matches_python(case):
    text, expected = case
    assert evaluate(text, {}) is expected


@FAST
@given(
    st.lists(st.tuples(st.sampled_from(["+", "-", "*"]), st.integers(0, 99)), max_size=12),
    st.integers(0, 99),
)
def test_unparenthesized_precedence(rest, first):
    text = str(first) + "".join(f" {op} {number}" for op, number in rest)
    terms, sign, product = [], 1, first
    for op, number in rest:
        if op == "*":
            product *= number
        else:
            terms.append(sign * product)
            sign, product = (1 if op == "+" else -1), number
    terms.append(sign * product)
    assert evaluate(text, {}) == sum(terms)


@FAST
@given(
    st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=10),
    st.lists(st.sampled_from(["and", "or"]), max_size=9),
)
def test_and_binds_tighter_than_or(operands, ops):
    ops = ops[: len(operands) - 1] + ["and"] * max(0, len(operands) - 1 - len(ops))
    words = [
        ("not " if negate else "") + ("true" if value else "false") for negate, value in operands
    ]
    text = words[0] + "".join(f" {op} {word}" for op, word in zip(ops, words[1:]))
    values = [value != negate for negate, value in operands]
    groups, current = [], [values[0]]
    for op, value in zip(ops, values[1:]):
        if op == "and":
            current.append(value)
        else:
            groups.append(current)
            current = [value]
    groups.append(current)
    assert evaluate(text, {}) is any(all(group) for group in groups)


# --- adversarial inputs ------------------------------------------------------------------------

BIG = {
    "$input": {
        "s": "x" * 499,
        "long": "x" * 49_999,
        "l": list(range(5_000)),
        "copy": list(range(5_000)),
        "words": [str(n) for n in range(5_000)],
        "nested": [[[[[[[[[[n]]]]]]]]] for n in range(1_000)],
        "big": 10**300,
    }
}


def _fill(piece: str, separator: str) -> str:
    """Repeat ``piece`` as often as the length limit allows."""
    return separator.join(
        [piece] * ((MAX_LENGTH + len(separator)) // (len(piece) + len(separator)))
    )


@pytest.mark.parametrize(
    "text",
    [
        _fill("$input.s", " + "),
        _fill("$input.l", " + "),
        _fill("$input.long", " + "),
        _fill("$input.l != $input.copy", " or "),
        _fill("$input.nested != $input.nested + []", " or "),
        _fill("'z' in $input.words", " or "),
        _fill("-1 in $input.l", " or "),
        _fill("2.5 in $input.words", " or "),
        _fill("[1] in $input.l", " or "),
        _fill("$input.long in $input.long + 'y'", " and "),
        _fill("$input.big", " * "),
        _fill("upper($input.long)", " + "),
        _fill("len(lower($input.long))", " + "),
        "len(" * 49 + "'a'" + ")" * 49,
    ],
)
def test_worst_cases_are_bounded(text):
    assert len(text) <= MAX_LENGTH
    with contextlib.suppress(ExpressionError):
        _timed(evaluate, text, BIG)
