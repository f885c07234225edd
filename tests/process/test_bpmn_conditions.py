"""Translation of JUEL, FEEL and SpiffWorkflow (Python) conditions into our expression language."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.process import expressions
from webapp.process.bpmn.conditions import (
    FEEL,
    JAVA,
    JUEL,
    OTHER,
    PLAIN,
    PYTHON,
    Translation,
    detect_dialect,
    quote,
    translate,
    translate_date,
    translate_script,
    translate_value,
)
from webapp.process.bpmn.events import short_duration

TRANSLATED = [
    # JUEL: relational operators, arithmetic with a number, property paths
    ("${amount > 1000}", "$vars.amount > 1000"),
    ("#{amount > 1000}", "$vars.amount > 1000"),
    ("${i <= numOfIterations}", "$vars.i <= $vars.numOfIterations"),
    ("${x lt 3 and y ge 2}", "$vars.x < 3 and $vars.y >= 2"),
    ("${order.total * 2 + 1 > 10.5}", "$vars.order.total * 2 + 1 > 10.5"),
    ("${x div 2 > 1}", "$vars.x / 2 > 1"),
    ("${i+1}", "$vars.i + 1"),
    ("${-x < 0}", "-$vars.x < 0"),
    # a value is read as it is; a condition must be a boolean in Camunda anyway
    ("${approved}", "$vars.approved"),
    ("${a.b.c}", "$vars.a.b.c"),
    # getVariable reads a process variable, null when missing
    ('${execution.getVariable("amount") > 5}', "$vars.amount > 5"),
    ("${execution.getVariable('a').b == null}", "$vars.a.b == null"),
    # null equals only null
    ("${x != null}", "$vars.x != null"),
    ("${a eq null}", "$vars.a == null"),
    # JUEL reads a text operand of !, &&, || as a boolean: "" false, "true" in any case true
    (
        "${!approved}",
        "$vars.approved in [false, null] or "
        "($vars.approved != true and lower($vars.approved) != 'true')",
    ),
    (
        "${not approved}",
        "$vars.approved in [false, null] or "
        "($vars.approved != true and lower($vars.approved) != 'true')",
    ),
    (
        "${(a > 1) && b}",
        "($vars.a > 1) and ($vars.b == true or "
        "($vars.b not in [false, null] and lower($vars.b) == 'true'))",
    ),
    ("${!(a > 1 || b < 2)}", "not ($vars.a > 1 or $vars.b < 2)"),
    ("${!(x == 'Yes')}", "not ($vars.x == 'Yes' or $vars.x == false)"),
    ("${((a > 1))}", "$vars.a > 1"),
    ("${a > 1 || b < 2 && c != null}", "$vars.a > 1 or $vars.b < 2 and $vars.c != null"),
    # == with a text literal: against a boolean JUEL reads 'Yes' as false
    ("${x == 'a' && y < 3}", "($vars.x == 'a' or $vars.x == false) and $vars.y < 3"),
    ("${x eq 'a' or y ge 3}", "($vars.x == 'a' or $vars.x == false) or $vars.y >= 3"),
    (
        '${vacationApproved == "Reject"}',
        "$vars.vacationApproved == 'Reject' or $vars.vacationApproved == false",
    ),
    ("${x != 'No'}", "$vars.x != 'No' and $vars.x != false"),
    ("${x ne 'TRUE'}", "$vars.x != 'TRUE' and $vars.x != true"),
    # == with a number: JUEL reads text as a number; ours stops on text instead
    ("${input == 1}", "$vars.input + 0 == 1"),
    ("${input == 3 || input == 1}", "$vars.input + 0 == 3 or $vars.input + 0 == 1"),
    ("${2.5 ne x}", "2.5 != $vars.x + 0"),
    ("${loopCounter == 2}", "$loop.index == 2"),
    # == with a boolean literal
    (
        "${x == true}",
        "$vars.x == true or ($vars.x not in [false, null] and lower($vars.x) == 'true')",
    ),
    (
        "${x == false}",
        "$vars.x == false or ($vars.x not in [true, null] and lower($vars.x) != 'true')",
    ),
    # empty: null, "", an empty list or object
    ("${empty list}", "$vars.list == null or len($vars.list) == 0"),
    ("${not empty list}", "$vars.list != null and len($vars.list) > 0"),
    ("${!empty a.items}", "$vars.a.items != null and len($vars.a.items) > 0"),
    # FEEL: = is equality, no coercion; not() is a function; text joins with +
    ("=amount > 1000", "$vars.amount > 1000"),
    ('=status = "done"', "$vars.status == 'done'"),
    ('= status != "done"', "$vars.status != 'done'"),
    ("=x = null", "$vars.x == null"),
    ("=not(done) or retries < 3", "not $vars.done or $vars.retries < 3"),
    ("=not(a and b)", "not ($vars.a and $vars.b)"),
    ("=fraud", "$vars.fraud"),
    ('="RE: " + subject', "'RE: ' + $vars.subject"),
    ("=-x", "-$vars.x"),
    # SpiffWorkflow's Python: == on text and None is exact; True counts as 1
    ("choice == 'No'", "$vars.choice == 'No'"),
    ("x != 'a'", "$vars.x != 'a'"),
    ("x == 5", "$vars.x == 5"),
    ("x == 1", "$vars.x in [1, true]"),
    ("x != 0", "$vars.x not in [0, false]"),
    ("skipParallel == False", "$vars.skipParallel in [false, 0]"),
    ("skipParallel == True", "$vars.skipParallel in [true, 1]"),
    ("x < 2", "$vars.x < 2"),
    ("x is None", "$vars.x == null"),
    ("x is not None", "$vars.x != null"),
    ("x is True", "$vars.x == true"),
    ("a > 5 and b", "$vars.a > 5 and $vars.b"),
    ("not a", "not $vars.a"),
    ("not a > 1", "not ($vars.a > 1)"),
    ("(a or b) and c", "($vars.a or $vars.b) and $vars.c"),
    ("a in ['x', 'y']", "$vars.a in ['x', 'y']"),
    ("a not in ['x', None]", "$vars.a not in ['x', null]"),
    ("'vip' in tags", "'vip' in $vars.tags"),
    ("len(x) > 0", "len($vars.x) > 0"),
    ("a + b == 'xy'", "$vars.a + $vars.b == 'xy'"),
    ("-x * 2 >= 3", "-$vars.x * 2 >= 3"),
    ("true", "true"),
    ('name == "it\'s"', '$vars.name == "it\'s"'),
]

KEPT = [
    # method calls, engine objects, other functions
    '${customer.prop("age").numberValue() >= 21}',
    "${reservationService.showUp()}",
    "${execution.id}",
    '${execution.getVariable("a").toString()}',
    "${execution.getVariable(name)}",
    "${task.assignee == 'a'}",
    "=list contains(x, 1)",
    '=some r in risks satisfies r = "red"',
    "bpmn:getDataObject('approved')",
    "x.startswith('a')",
    "max(a, b) > 1",
    # JUEL coercions ours cannot follow
    "${a == b}",
    "${x + y > 2}",
    "${x == '1'}",
    "${x == ''}",
    "${x == '[a]'}",
    "${(a > 1) == b}",
    "${1 && x}",
    "${x mod 2 == 0}",
    "${a ? b : c}",
    "${items[0] > 1}",
    "${a.in}",
    "${a} and ${b}",
    # FEEL: decimal arithmetic, == is not FEEL, names with spaces, single quotes
    "=a + 1",
    "=a * 2 > 3",
    "=a == 1",
    '=Vacation Approval = "Approved"',
    "='single quotes'",
    # Python: True == 1 between variables or booleans, identity, operators ours lacks
    "a == b",
    "a in b",
    "(a > 1) == 1",
    "x is 5",
    "x % 2 == 0",
    "x // 2",
    "1 < x < 3",
    "a not in b",
    "priority = 'Emergency'",
    "Service Level == 'Premium'",
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
        ("true", "http://www.w3.org/1999/XPath", OTHER),
        ("a == 1", "javascript", OTHER),
    ],
)
def test_dialect_detection(text: str, language: str | None, dialect: str) -> None:
    assert detect_dialect(text, language) == dialect


def test_a_language_we_do_not_read_is_never_translated() -> None:
    # XPath reads `true` as a path to child elements named "true", not as the boolean
    assert translate("true", "http://www.w3.org/1999/XPath") == (
        translate("true", "http://www.w3.org/1999/XPath").__class__("true", False, OTHER)
    )
    assert not translate("x > 1", "groovy").ok


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


# --- semantics: on data the source engine evaluates, ours gives the same value or stops -------

#: Values a process variable can hold (JSON), including texts JUEL would coerce.
VALUES = [None, True, False, 0, 1, 2, 1.0, 2.5, -1, "", "a", "Yes", "yes", "true", "TRUE"]
VALUES += ["false", "No", "1", "01", "2.5", " 1", [], ["x"], {}, {"a": 1}]


class SourceError(Exception):
    """The source engine stops on this data (an exception, or a null condition in Zeebe)."""


def ours(text: str, **variables: object) -> object:
    try:
        return expressions.evaluate(text, {"$vars": variables})
    except expressions.ExpressionError:
        return SourceError  # ours stops with an error naming the expression


def same(a: object, b: object) -> bool:
    """Equal values of the same JSON kind (True is not 1 here)."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def check_exact(
    source: str, reference, language: str | None = None, condition=False, text: str = ""
) -> None:
    """For every value of x (and of y), ours agrees with `reference` or stops with an error."""
    result = translate(source, language)
    assert result.ok, source
    if text:
        result = result.__class__(text, True, result.dialect)
    for x in VALUES:
        for y in VALUES if "y" in source else [None]:
            try:
                expected = reference(x, y)
            except SourceError:
                continue
            got = ours(result.text, x=x, y=y)
            if got is SourceError:
                continue
            if condition:
                expected, got = bool(expected), bool(got)
            assert same(got, expected), (source, result.text, x, y, got, expected)


# JUEL, as the EL 2.2 specification (1.8, 1.9, 1.18) and Camunda's JUEL coerce.
def j_bool(v: object) -> bool:
    if v is None or (isinstance(v, str) and v == ""):
        return False
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return v.lower() == "true"
    raise SourceError


def j_long(v: object) -> int:
    if v is None or v == "":
        return 0
    if isinstance(v, bool | list | dict):
        raise SourceError
    if isinstance(v, int | float):
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"[+-]?\d+", v):
        return int(v)
    raise SourceError


def j_double(v: object) -> float:
    if v is None or v == "":
        return 0.0
    if isinstance(v, bool | list | dict):
        raise SourceError
    try:
        return float(v.strip() if isinstance(v, str) else v)
    except ValueError:
        raise SourceError from None


def j_eq(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is b
    if any(isinstance(v, float) for v in (a, b)):
        return j_double(a) == j_double(b)
    if any(isinstance(v, int) and not isinstance(v, bool) for v in (a, b)):
        return j_long(a) == j_long(b)
    if any(isinstance(v, bool) for v in (a, b)):
        return j_bool(a) == j_bool(b)
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if any(isinstance(v, str) for v in (a, b)):
        return False  # a list's or map's text never equals the literals tested here
    return a == b


def j_gt(a: object, b: object) -> bool:
    if a is None or b is None:
        return False
    if any(isinstance(v, float) for v in (a, b)):
        return j_double(a) > j_double(b)
    if any(isinstance(v, int) and not isinstance(v, bool) for v in (a, b)):
        return j_long(a) > j_long(b)
    raise SourceError


def j_empty(v: object) -> bool:
    return v is None or (isinstance(v, str | list | dict) and len(v) == 0)


def j_plus(a: object, b: object) -> float:
    if any(isinstance(v, float) or (isinstance(v, str) and re.search("[.eE]", v)) for v in (a, b)):
        return j_double(a) + j_double(b)
    return j_long(a) + j_long(b)


JUEL_SEMANTICS = [
    ("${!x}", lambda x, y: not j_bool(x)),
    ("${x && y}", lambda x, y: j_bool(x) and j_bool(y)),
    ("${x || !y}", lambda x, y: j_bool(x) or not j_bool(y)),
    ("${x == 'Yes'}", lambda x, y: j_eq(x, "Yes")),
    ("${x != 'Yes'}", lambda x, y: not j_eq(x, "Yes")),
    ("${x == 'true'}", lambda x, y: j_eq(x, "true")),
    ("${x == 1}", lambda x, y: j_eq(x, 1)),
    ("${x != 1}", lambda x, y: not j_eq(x, 1)),
    ("${x == 2.5}", lambda x, y: j_eq(x, 2.5)),
    ("${x == true}", lambda x, y: j_eq(x, True)),
    ("${x == false}", lambda x, y: j_eq(x, False)),
    ("${x != true}", lambda x, y: not j_eq(x, True)),
    ("${x != false}", lambda x, y: not j_eq(x, False)),
    ("${x == null}", lambda x, y: x is None),
    ("${empty x}", lambda x, y: j_empty(x)),
    ("${not empty x}", lambda x, y: not j_empty(x)),
    ("${x > 1}", lambda x, y: j_gt(x, 1)),
    ("${x + 1 > 2}", lambda x, y: j_gt(j_plus(x, 1), 2)),
    ("${execution.getVariable(\"x\") == 'Yes'}", lambda x, y: j_eq(x, "Yes")),
]


@pytest.mark.parametrize(("source", "reference"), JUEL_SEMANTICS)
def test_juel_translations_are_exact(source: str, reference) -> None:
    check_exact(source, reference)


def test_juel_text_comparison_against_a_boolean_reads_the_text_as_a_boolean() -> None:
    text = translate("${answer == 'Yes'}").text
    assert ours(text, answer=False) is True  # as in Camunda: Boolean.valueOf("Yes") is false
    assert ours(text, answer="Yes") is True
    assert ours(text, answer=True) is False


def test_juel_number_comparison_stops_on_text_where_juel_would_read_a_number() -> None:
    text = translate("${input == 1}").text
    assert ours(text, input=1) is True
    assert ours(text, input=1.0) is True
    assert ours(text, input="1") is SourceError  # JUEL: true; ours: an error, never false


# FEEL (Camunda 8): no coercion; comparing different kinds gives null, which a condition
# turns into an incident, as do non-boolean operands of and, or and not().
def f_eq(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is b
    kinds = {type(a) if not isinstance(a, int | float) or isinstance(a, bool) else float}
    kinds.add(type(b) if not isinstance(b, int | float) or isinstance(b, bool) else float)
    if len(kinds) > 1:
        raise SourceError
    return a == b


def f_bool(v: object) -> bool:
    if not isinstance(v, bool):
        raise SourceError
    return v


def f_gt(a: object, b: object) -> bool:
    if isinstance(a, bool) or not isinstance(a, int | float):
        raise SourceError
    return a > b


def f_join(a: str, b: object) -> str:
    if not isinstance(b, str):
        raise SourceError
    return a + b


FEEL_SEMANTICS = [
    ('=x = "a"', lambda x, y: f_eq(x, "a")),
    ('=x != "a"', lambda x, y: not f_eq(x, "a")),
    ("=x = 1", lambda x, y: f_eq(x, 1)),
    ("=x = null", lambda x, y: x is None),
    ("=not(x)", lambda x, y: not f_bool(x)),
    ("=x and y", lambda x, y: f_bool(x) and f_bool(y)),
    ("=x > 1 or y", lambda x, y: f_gt(x, 1) or f_bool(y)),
    ('="a" + x', lambda x, y: f_join("a", x)),
]


@pytest.mark.parametrize(("source", "reference"), FEEL_SEMANTICS)
def test_feel_translations_are_exact_in_conditions(source: str, reference) -> None:
    check_exact(source, reference)


# SpiffWorkflow evaluates Python itself: the reference is Python's own eval, on test data only.
PYTHON_SEMANTICS = [
    "x == 'Yes'",
    "x != 'Yes'",
    "x == 1",
    "x == 0",
    "x != 1",
    "x == 5",
    "x == 2.5",
    "x == True",
    "x == False",
    "x != True",
    "x is None",
    "x is True",
    "x is not None",
    "x > 1",
    "x in ['a', 'Yes']",
    "x not in ['a', None]",
    "'a' in x",
    "len(x) > 0",
    "not x",
    "x + y == 'ab'",
    "-x < 0",
    "x / 2 > 0.5",
]


@pytest.mark.parametrize("source", PYTHON_SEMANTICS)
def test_python_translations_are_exact(source: str) -> None:
    def reference(x: object, y: object) -> object:
        try:
            return eval(source, {"__builtins__": {"len": len}}, {"x": x, "y": y})  # noqa: S307
        except Exception:
            raise SourceError from None

    check_exact(source, reference, "python")


@pytest.mark.parametrize("source", ["x > 1 and y", "x or not y", "(x or y) and not x"])
def test_python_boolean_operators_agree_as_conditions(source: str) -> None:
    """Python's and/or give an operand, ours true or false: the same truth, which is all that
    a condition reads."""

    def reference(x: object, y: object) -> object:
        try:
            return eval(source, {"__builtins__": {}}, {"x": x, "y": y})  # noqa: S307
        except Exception:
            raise SourceError from None

    check_exact(source, reference, "python", condition=True)


@pytest.mark.parametrize(
    ("source", "naive", "reference"),
    [
        ("${!x}", "not $vars.x", lambda x, y: not j_bool(x)),
        ("${x == 'Yes'}", "$vars.x == 'Yes'", lambda x, y: j_eq(x, "Yes")),
        ("${x == 1}", "$vars.x == 1", lambda x, y: j_eq(x, 1)),
        ("x == 1", "$vars.x == 1", lambda x, y: eval("x == 1", {}, {"x": x})),  # noqa: S307
    ],
)
def test_the_semantic_check_catches_a_naive_translation(source, naive, reference) -> None:
    language = None if source.startswith("$") else "python"
    with pytest.raises(AssertionError):
        check_exact(source, reference, language, text=naive)


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("v += 1", "v = $vars.v + (1)"),
        ("a = 'x'\n\n# note\nb = a", "a = 'x'\n\n# note\nb = $vars.a"),
        ("n -= 2", "n = $vars.n - (2)"),
    ],
)
def test_python_scripts_of_plain_assignments_translate(script: str, expected: str) -> None:
    assert translate_script(script) == Translation(expected, True, "python")


@pytest.mark.parametrize(
    "script",
    [
        "print(x)",
        "x[1] = 2",
        "x == 1",
        "x = 1  # comment",
        "def f():\n    y = 1",
        "for = 1",
        "x = y.strip()",
        "x /= 2",
        "# only a comment",
        "",
    ],
)
def test_other_python_scripts_stay_as_written(script: str) -> None:
    assert translate_script(script) == Translation(script, False, "python")


JAVA_LANGUAGE = "http://www.java.com/java"


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ('= ["ubuntu", "windows", "macos"]', None, "['ubuntu', 'windows', 'macos']"),
        ("= [1, [2, null], true]", None, "[1, [2, null], true]"),
        ('= os = ["a"]', None, "$vars.os == ['a']"),
        ("return amount > 5;", JAVA_LANGUAGE, "$vars.amount > 5"),
        ("return amount > 5;", None, "$vars.amount > 5"),
        ("return x == 5;", JAVA_LANGUAGE, "$vars.x == 5"),
        ("return ok == true;", JAVA_LANGUAGE, "$vars.ok == true"),
        ("return x != null;", JAVA_LANGUAGE, "$vars.x != null"),
        (
            "return a > 1 && !(b < 2) || c;",
            JAVA_LANGUAGE,
            "$vars.a > 1 and not ($vars.b < 2) or $vars.c",
        ),
        ("amount >= 21", JAVA_LANGUAGE, "$vars.amount >= 21"),
    ],
)
def test_feel_lists_and_unambiguous_java_translate(text, language, expected):
    assert translate(text, language) == Translation(expected, True, detect_dialect(text, language))


@pytest.mark.parametrize(
    "text",
    [
        'return name == "x";',  # identity of objects in Java
        "return a == b;",
        "return x + 1 > 2;",  # int arithmetic
        "return x / 2 > 1;",
        'return s.equals("a");',
        "return c == 'a';",  # a char
    ],
)
def test_java_that_is_not_exact_stays_as_written(text):
    assert translate(text, JAVA_LANGUAGE) == Translation(text, False, JAVA)


@pytest.mark.parametrize(
    ("text", "iso"),
    [("1s", "PT1S"), ("2m 30s", "PT2M30S"), ("1d2h", "P1DT2H"), ("500ms", "PT0.5S"),
     ("0s", "PT0S"), ("1.5s", None), ("soon", None), ("", None)],
)  # fmt: skip
def test_jbpm_short_durations(text, iso):
    assert short_duration(text) == iso
