"""Flowdesk scripts: parsing names the line, evaluation runs in order, and nothing crashes."""

import time
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from webapp.process import expressions
from webapp.process.scripts import (
    MAX_LENGTH,
    MAX_LINES,
    MAX_SECONDS,
    MAX_SIZE,
    Script,
    ScriptError,
    check,
    evaluate,
    parse,
)

CONTEXT = {"$input": {"price": 2.5, "qty": 4, "name": "Ada"}, "$vars": {"old": 1}, "$nodes": {}}


def test_assignments_run_in_order_and_see_earlier_ones() -> None:
    script = """
# totals
total = $input.price * $input.qty
$vars.big = $vars.total >= 10
label = upper($input.name) + '!'

count = $vars.old + 1
"""
    assert evaluate(script, CONTEXT) == {
        "total": 10.0,
        "big": True,
        "label": "ADA!",
        "count": 2,
    }
    assert parse(script).names == ("total", "big", "label", "count")
    assert ("$input", "price") in parse(script).paths


def test_a_later_line_overwrites_and_reads_the_earlier_value() -> None:
    assert evaluate("n = 1\nn = $vars.n + 1\nn = $vars.n * 10", {}) == {"n": 20}


def test_the_context_is_not_changed() -> None:
    context = {"$vars": {"n": 1}}
    assert evaluate("n = $vars.n + 1", context) == {"n": 2}
    assert context == {"$vars": {"n": 1}}


@pytest.mark.parametrize(
    "script",
    [
        "a = $input.x == 1",
        "a = $input.x != 1",
        "a = $input.x <= 1",
        "a = $input.x >= 1",
        "a=$input.x==1",
        "$vars.a =$input.x>=1",
        "a = '=' + 'x = y'",
    ],
)
def test_only_the_assignment_sign_splits_a_line(script: str) -> None:
    parsed = parse(script)
    assert parsed.names == ("a",)
    assert parsed.assignments[0].expression.text == script.split("=", 1)[1].strip()


def test_windows_line_endings_and_comments() -> None:
    assert evaluate("# one\r\na = 1\r\n   # two\r\nb = 2\r\n", {}) == {"a": 1, "b": 2}


@pytest.mark.parametrize(
    ("script", "line", "words"),
    [
        ("a = 1\nb == 2", 2, "'==' compares"),
        ("a = 1\n\n# c\nb <= 2", 4, "'<=' compares"),
        ("total = $input.price *", 1, "unexpected end of expression"),
        ("a = 1\nb =", 2, "nothing after '='"),
        ("$input.x = 1", 1, "cannot assign to '$input.x'"),
        ("$vars.a.b = 1", 1, "cannot assign to '$vars.a.b'"),
        ("a = 1\n1 + 2", 2, "expected 'name = expression'"),
        ("a = foo(1)", 1, "unknown function 'foo'"),
        ("a = b", 1, "unknown name 'b'"),
        ("a = 'open", 1, "unterminated string"),
        ("x = 1 # note", 1, "unexpected '#'"),
    ],
)
def test_parse_errors_name_the_line(script: str, line: int, words: str) -> None:
    with pytest.raises(ScriptError) as caught:
        parse(script)
    assert caught.value.line == line
    assert words in str(caught.value)
    assert str(caught.value).startswith(f"line {line}: ")
    assert check(script) is not None


def test_an_empty_script_is_an_error() -> None:
    for text in ("", "\n\n", "# only a comment\n"):
        error = check(text)
        assert error is not None and "no assignments" in str(error)


def test_limits() -> None:
    assert "too long" in str(check("a = 1\n" * (MAX_LENGTH // 6 + 1)))
    assert "too many lines" in str(check("\n" * MAX_LINES + "a = 1"))
    assert check("\n" * (MAX_LINES - 1) + "a = 1") is None
    long_value = "a = " + "1 + " * (expressions.MAX_LENGTH // 4) + "1"
    error = check(long_value)
    assert error is not None and error.line == 1 and "too long" in str(error)
    assert "must be text" in str(check(None))  # type: ignore[arg-type]


def test_evaluation_errors_name_the_line_and_variable() -> None:
    with pytest.raises(ScriptError) as caught:
        evaluate("a = 1\nb = $vars.a + 'x'", {})
    assert caught.value.line == 2
    assert str(caught.value) == "line 2: in the value of 'b': cannot apply '+' to number and text"
    with pytest.raises(ScriptError) as caught:
        evaluate("ok = 1\n\nratio = $input.n / 0", {"$input": {"n": 1}})
    assert caught.value.line == 3 and "division by zero" in str(caught.value)


def test_values_that_double_every_line_stop_at_the_size_limit() -> None:
    lines = ["a = 'xxxxxxxxxx'"] + ["a = [$vars.a, $vars.a]"] * 60
    started = time.perf_counter()
    with pytest.raises(ScriptError) as caught:
        evaluate("\n".join(lines), {})
    assert time.perf_counter() - started < 2
    assert "too large" in str(caught.value) and caught.value.line is not None
    assert caught.value.line < 61
    text = ["t = 'xxxxxxxxxxxxxxxxxxxx'"] + ["t = $vars.t + $vars.t"] * 12
    text += ["l = [$vars.t, $vars.t, $vars.t, $vars.t]"] + ["l = $vars.l + $vars.l"] * 20
    with pytest.raises(ScriptError, match="too large"):
        evaluate("\n".join(text), {})


def test_a_run_stops_after_the_line_that_passes_the_time_limit() -> None:
    """Lines that each compare two large (allowed) values many times: the run stops with an
    error naming the line soon after the time limit, instead of running every line."""
    build = ["a = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", "b = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]
    build += ["a = [$vars.a, $vars.a]", "b = [$vars.b, $vars.b]"] * 12
    heavy = ["s = [" + ", ".join(["$vars.a == $vars.b"] * 8) + "]"] * 110
    script = parse("\n".join(build + heavy))
    started = time.perf_counter()
    with pytest.raises(ScriptError) as caught:
        script.evaluate({})
    elapsed = time.perf_counter() - started
    assert f"ran longer than {MAX_SECONDS:g} seconds" in str(caught.value)
    assert caught.value.line is not None and caught.value.line < len(build) + 110
    assert MAX_SECONDS <= elapsed < MAX_SECONDS + 8


def test_a_value_just_under_the_limit_is_fine() -> None:
    result = evaluate("a = [1, 2, 3]\nb = $vars.a + $vars.a", {})
    assert result == {"a": [1, 2, 3], "b": [1, 2, 3, 1, 2, 3]}
    assert MAX_SIZE >= expressions.MAX_ITEMS


def test_now_is_pinned_and_multi_instance_roots_are_seen() -> None:
    moment = datetime(2027, 1, 1, tzinfo=UTC)
    context = {"$item": {"n": 3}, "$loop": {"index": 1}}
    result = parse("at = now()\nn = $item.n * 2 + $loop.index").evaluate(context, now=moment)
    assert result == {"at": moment, "n": 7}


def test_errors_pickle() -> None:
    import pickle

    error = pickle.loads(pickle.dumps(ScriptError("bad", 3)))  # noqa: S301 (our own bytes)
    assert (error.message, error.line, str(error)) == ("bad", 3, "line 3: bad")


def test_parse_is_cached_and_scripts_compare() -> None:
    assert parse("a = 1") is parse("a = 1")
    assert isinstance(parse("a = 1"), Script)


# --- fuzz: never anything but ScriptError, always quickly --------------------------------------

FAST = settings(
    deadline=timedelta(seconds=3), max_examples=200, suppress_health_check=[HealthCheck.too_slow]
)
FRAGMENTS = [
    *("a", "b", "total", "$vars", "$vars.", "$input.x", "$nodes", "$item", "=", "==", "!=", "<="),
    *(">=", " ", "\n", "\r\n", "#", "'", '"', "(", ")", "[", "]", ",", "+", "-", "*", "/", "."),
    *("1", "0", "1e999", "true", "null", "len(", "upper(", "now()", "and", "not", "in", "é"),
    "$vars.a",
    "[$vars.a, $vars.a]",
    "$vars.a + $vars.a",
    "'xxxxxxxxxx'",
]
soup = st.lists(st.sampled_from(FRAGMENTS), max_size=80).map("".join)
lines = st.lists(
    st.builds(
        lambda name, value: f"{name} = {value}",
        st.sampled_from(["a", "b", "$vars.a", "$vars.b", "c"]),
        st.lists(st.sampled_from(FRAGMENTS[:-4] + FRAGMENTS[-4:] * 5), max_size=12).map("".join),
    ),
    max_size=40,
).map("\n".join)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children)
    ),
    max_leaves=8,
)
contexts = st.fixed_dictionaries(
    {
        "$input": st.dictionaries(st.sampled_from(["x", "a"]), values),
        "$vars": st.one_of(st.none(), st.dictionaries(st.sampled_from(["a", "b"]), values)),
    }
)


@pytest.mark.slow
@FAST
@given(text=st.one_of(st.text(max_size=200), soup, lines), context=contexts)
@example(text="a = 'x'\n" + "a = [$vars.a, $vars.a]\n" * 150, context={"$input": {}, "$vars": {}})
@example(text="a = " + "[" * 60 + "]" * 60, context={"$input": {}, "$vars": {}})
def test_fuzz_only_script_errors(text: str, context: dict) -> None:
    started = time.perf_counter()
    try:
        script = parse(text)
    except ScriptError as exc:
        assert isinstance(str(exc), str)
        return
    try:
        result = evaluate(script, context)
    except ScriptError as exc:
        assert exc.line is not None
        return
    finally:
        assert time.perf_counter() - started < 10, "far past the 2-second bound of a run"
    assert set(result) <= set(script.names)
