"""Tests for form specs: spec validation, coercion of each field type, visibility."""

from __future__ import annotations

from typing import Any

import pytest

from webapp.process.forms import (
    FIELD_TYPES,
    coerce_submission,
    display_value,
    initial_values,
    pattern_problem,
    validate_form_spec,
    visible_fields,
)


def form(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"fields": list(fields)}


def field(key: str, type_: str, **extra: Any) -> dict[str, Any]:
    return {"key": key, "label": key.replace("_", " ").capitalize(), "type": type_, **extra}


def submit(spec_field: dict[str, Any], raw: Any, context: Any = None) -> tuple[dict, dict]:
    data = {} if raw is None else {spec_field["key"]: raw}
    return coerce_submission(form(spec_field), data, context)


def value_of(spec_field: dict[str, Any], raw: Any) -> Any:
    values, errors = submit(spec_field, raw)
    assert errors == {}
    return values[spec_field["key"]]


def error_of(spec_field: dict[str, Any], raw: Any) -> str:
    values, errors = submit(spec_field, raw)
    assert spec_field["key"] not in values
    return errors[spec_field["key"]]


# --- the type table -----------------------------------------------------------------------------


def test_field_type_table() -> None:
    assert set(FIELD_TYPES) == {
        "text",
        "textarea",
        "number",
        "integer",
        "boolean",
        "date",
        "datetime",
        "email",
        "url",
        "select",
        "multiselect",
        "radio",
        "display",
    }
    assert FIELD_TYPES["integer"].attributes == {"min", "max"}
    assert FIELD_TYPES["email"].attributes == {"minLength", "maxLength", "pattern"}
    assert FIELD_TYPES["multiselect"].multiple and FIELD_TYPES["multiselect"].has_options
    assert FIELD_TYPES["boolean"].html_input == "checkbox"
    assert FIELD_TYPES["display"].html_input is None


# --- coercion and checks, per type --------------------------------------------------------------


def test_text_strips_and_checks_lengths_and_pattern() -> None:
    name = field("name", "text", minLength=2, maxLength=5, pattern="[A-Z][a-z]*")
    assert value_of(name, "  Ann ") == "Ann"
    assert value_of(name, "Al") == "Al"
    assert value_of(name, "Alice") == "Alice"
    assert error_of(name, "A") == "Name must be at least 2 characters"
    assert error_of(name, "Annabel") == "Name must be at most 5 characters"
    assert error_of(name, "ann") == "Name does not match the required format"


def test_empty_optional_field_is_none_and_required_field_errors() -> None:
    assert value_of(field("name", "text"), "   ") is None
    assert value_of(field("name", "text"), None) is None
    assert error_of(field("name", "text", required=True), "") == "Name is required"
    assert error_of(field("name", "text", required=True), None) == "Name is required"


def test_textarea_keeps_surrounding_whitespace() -> None:
    assert value_of(field("notes", "textarea"), "  line 1\nline 2\n") == "  line 1\nline 2\n"
    assert value_of(field("notes", "textarea"), " \n ") is None


@pytest.mark.parametrize(("type_", "default"), [("text", 500), ("url", 2000), ("textarea", 10_000)])
def test_text_fields_without_a_max_length_take_their_type_s_default(type_, default) -> None:
    value = "x" * default if type_ != "url" else None
    if value is not None:
        assert value_of(field("notes", type_), value) == value
    too_long = "x" * (default + 1)
    if type_ == "url":
        too_long = "https://" + "x" * default
    assert (
        error_of(field("notes", type_), too_long) == f"Notes must be at most {default} characters"
    )
    assert value_of(field("notes", "text", maxLength=2000), "y" * 1500) == "y" * 1500


def test_overlong_values_are_rejected() -> None:
    assert "longer than" in error_of(field("notes", "textarea"), "x" * 20_001)


def test_number() -> None:
    amount = field("amount", "number", min=0, max=100)
    assert value_of(amount, "12.5") == 12.5
    assert value_of(amount, "7") == 7.0
    assert isinstance(value_of(amount, "7"), float)
    assert value_of(amount, "0") == 0.0
    assert value_of(amount, "100") == 100.0
    assert error_of(amount, "-1") == "Amount must be at least 0"
    assert error_of(amount, "100.5") == "Amount must be at most 100"
    for bad in ("abc", "1_000", "nan", "inf", "1e999", "1,5"):
        assert error_of(amount, bad) == "Amount must be a number", bad


def test_integer() -> None:
    count = field("count", "integer", min=1, max=10)
    assert value_of(count, " 3 ") == 3
    assert isinstance(value_of(count, "3"), int)
    assert error_of(count, "3.5") == "Count must be a whole number"
    assert error_of(count, "1e3") == "Count must be a whole number"
    assert value_of(count, "1") == 1
    assert value_of(count, "10") == 10
    assert error_of(count, "0") == "Count must be at least 1"
    assert error_of(count, "11") == "Count must be at most 10"


@pytest.mark.parametrize("raw", ["on", "true", "1", "yes", "YES", ["false", "on"]])
def test_boolean_true(raw: Any) -> None:
    assert value_of(field("agree", "boolean"), raw) is True


@pytest.mark.parametrize("raw", [None, "", "off", "false", "0", "no"])
def test_boolean_false(raw: Any) -> None:
    assert value_of(field("agree", "boolean"), raw) is False


def test_boolean_errors() -> None:
    assert error_of(field("agree", "boolean"), "maybe") == "Agree must be yes or no"
    assert error_of(field("agree", "boolean", required=True), None) == "Agree must be checked"
    assert value_of(field("agree", "boolean", required=True), "on") is True


def test_date() -> None:
    due = field("due", "date", min="2024-01-01", max="2024-12-31")
    assert value_of(due, "2024-02-29") == "2024-02-29"
    assert error_of(due, "2023-02-29") == "Due must be a date (YYYY-MM-DD)"
    assert error_of(due, "01/02/2024") == "Due must be a date (YYYY-MM-DD)"
    assert error_of(due, "20240101") == "Due must be a date (YYYY-MM-DD)"
    assert value_of(due, "2024-01-01") == "2024-01-01"
    assert value_of(due, "2024-12-31") == "2024-12-31"
    assert error_of(due, "2023-12-31") == "Due must be on or after 2024-01-01"
    assert error_of(due, "2025-01-01") == "Due must be on or before 2024-12-31"


def test_datetime() -> None:
    meeting = field("meeting", "datetime")
    assert value_of(meeting, "2024-05-01T10:30") == "2024-05-01T10:30:00"
    assert value_of(meeting, "2024-05-01T10:30:15Z") == "2024-05-01T10:30:15+00:00"
    assert value_of(meeting, "2024-05-01 10:30+02:00") == "2024-05-01T10:30:00+02:00"
    for bad in ("2024-05-01", "2024-05-01T25:00", "tomorrow"):
        assert error_of(meeting, bad).startswith("Meeting must be a date and time"), bad


def test_email() -> None:
    email = field("email", "email", maxLength=20)
    assert value_of(email, " ann@example.com ") == "ann@example.com"
    for bad in ("ann", "ann@example", "a b@example.com", "ann@@example.com", "ann@.com"):
        assert error_of(email, bad) == "Email must be a valid email address", bad
    assert error_of(email, "someone.long@example.com") == "Email must be at most 20 characters"


def test_url() -> None:
    site = field("site", "url")
    assert value_of(site, "https://example.com/a?b=1") == "https://example.com/a?b=1"
    for bad in (
        "example.com",
        "ftp://example.com",
        "javascript:alert(1)",
        "https://",
        "http://a b",
    ):
        assert error_of(site, bad).startswith("Site must be a valid web address"), bad


OPTIONS = [{"value": "red", "label": "Red"}, {"value": "blue", "label": "Blue"}]


@pytest.mark.parametrize("type_", ["select", "radio"])
def test_single_choice(type_: str) -> None:
    colour = field("colour", type_, options=OPTIONS, required=True)
    assert value_of(colour, "blue") == "blue"
    assert value_of(colour, ["red", "blue"]) == "blue"
    assert error_of(colour, "green") == "Colour must be one of the listed options"
    assert error_of(colour, "") == "Colour is required"


def test_multiselect() -> None:
    colours = field("colours", "multiselect", options=OPTIONS)
    assert value_of(colours, ["blue", "red", "blue", ""]) == ["blue", "red"]
    assert value_of(colours, "red") == ["red"]
    assert value_of(colours, None) == []
    assert error_of(colours, ["red", "green"]) == "Colours must only contain listed options"
    required = dict(colours, required=True)
    assert error_of(required, []) == "Colours is required"


def test_display_fields_are_never_submitted() -> None:
    shown = field("total", "display", value="$input.amount")
    other = field("note", "text")
    values, errors = coerce_submission(form(shown, other), {"total": "999", "note": "x"})
    assert values == {"note": "x"}
    assert errors == {}


def test_label_falls_back_to_key() -> None:
    _, errors = coerce_submission(form({"key": "amount", "type": "number", "required": True}), {})
    assert errors == {"amount": "amount is required"}


def test_all_errors_are_reported_at_once() -> None:
    spec = form(field("a", "integer", required=True), field("b", "email"), field("c", "text"))
    values, errors = coerce_submission(spec, {"b": "nope", "c": "ok"})
    assert values == {"c": "ok"}
    assert errors == {"a": "A is required", "b": "B must be a valid email address"}


# --- visibility ---------------------------------------------------------------------------------


def test_hidden_fields_are_neither_required_nor_returned() -> None:
    reason = field("reason", "text", required=True, visibleIf="$input.amount > 1000")
    spec = form(field("name", "text"), reason)
    small = {"$input": {"amount": 10}}
    values, errors = coerce_submission(spec, {"name": "x", "reason": "typed anyway"}, small)
    assert (values, errors) == ({"name": "x"}, {})
    big = {"$input": {"amount": 5000}}
    values, errors = coerce_submission(spec, {"name": "x"}, big)
    assert errors == {"reason": "Reason is required"}


def test_condition_that_fails_to_evaluate_hides_the_field() -> None:
    spec = form(field("reason", "text", required=True, visibleIf="$input.amount > 1000"))
    assert coerce_submission(spec, {}, {"$input": {}}) == ({}, {})
    assert visible_fields(spec, {"$input": {"amount": "lots"}}) == []


def test_visible_fields_uses_instance_data() -> None:
    hidden = field("b", "text", visibleIf="$vars.review.ok == false")
    spec = form(field("a", "text"), hidden, field("c", "display", value="$input.x"))
    keys = [f["key"] for f in visible_fields(spec, {"$vars": {"review": {"ok": True}}})]
    assert keys == ["a", "c"]
    keys = [f["key"] for f in visible_fields(spec, {"$vars": {"review": {"ok": False}}})]
    assert keys == ["a", "b", "c"]


def test_visibility_can_depend_on_other_fields() -> None:
    kind = field("kind", "select", options=OPTIONS)
    shade = field("shade", "text", required=True, visibleIf="$form.kind == 'red'")
    spec = form(kind, shade)
    assert coerce_submission(spec, {"kind": "blue"}) == ({"kind": "blue"}, {})
    assert coerce_submission(spec, {"kind": "red"})[1] == {"shade": "Shade is required"}
    assert [f["key"] for f in visible_fields(spec, None, {"kind": "red"})] == ["kind", "shade"]
    assert [f["key"] for f in visible_fields(spec, None, {"kind": "blue"})] == ["kind"]


def test_hidden_field_value_is_removed_for_later_conditions() -> None:
    spec = form(
        field("a", "boolean"),
        field("b", "text", visibleIf="$form.a"),
        field("c", "text", required=True, visibleIf="$form.b == 'x'"),
    )
    assert coerce_submission(spec, {"b": "x"}) == ({"a": False}, {})
    assert coerce_submission(spec, {"a": "on", "b": "x"})[1] == {"c": "C is required"}


def test_initial_values_and_display_value() -> None:
    spec = form(
        field("n", "number", default=5),
        field("who", "text", default={"expr": "$input.user"}),
        field("bad", "text", default={"expr": "$input.x + 1"}),
        field("shown", "display", value="upper($input.user)"),
    )
    context = {"$input": {"user": "ann"}}
    assert initial_values(spec, context) == {"n": 5, "who": "ann", "bad": None}
    assert display_value(spec["fields"][3], context) == "ANN"
    assert display_value({"type": "display", "value": "$input.x + 1"}, context) is None


# --- spec validation ----------------------------------------------------------------------------


def test_valid_spec_has_no_problems() -> None:
    spec = form(
        field("amount", "number", required=True, min=0, max=100000, default=10, help="Net"),
        field("code", "text", pattern="[A-Z]{3}-\\d+", minLength=3, maxLength=20),
        field("colour", "radio", options=OPTIONS, default="red"),
        field("due", "date", min="2024-01-01"),
        field("tags", "multiselect", options=OPTIONS, default=["red"]),
        field("total", "display", value="$input.amount"),
        field("note", "textarea", visibleIf="$input.amount > 10", minLength=None),
    )
    assert validate_form_spec(spec) == []
    assert validate_form_spec(None) == []
    assert validate_form_spec({}) == []


@pytest.mark.parametrize(
    ("spec_field", "key", "fragment"),
    [
        (field("amount", "money"), "amount", "unknown type 'money'"),
        ({"key": "bad key", "type": "text"}, None, "Field 1 needs a key"),
        (field("amount", "number", min="0"), "amount", "min must be a number"),
        (field("amount", "number", min=5, max=1), "amount", "min is greater than max"),
        (field("due", "date", max="31.12.2024"), "due", "max must be a date"),
        (field("name", "text", min=1), "name", "min does not apply to text fields"),
        (field("n", "number", pattern="x"), "n", "pattern does not apply"),
        (field("name", "text", minLength=-1), "name", "minLength must be a whole number"),
        (field("name", "text", minLength=5, maxLength=2), "name", "minLength is greater"),
        (field("name", "text", pattern="("), "name", "not a valid regular expression"),
        (field("name", "text", pattern="a" * 501), "name", "longer than 500"),
        (field("name", "text", pattern="(a+)+$"), "name", "repeats a repeated group"),
        (field("c", "select"), "c", "needs a list of options"),
        (field("c", "select", options=[{"value": "a"}, {"value": "a"}]), "c", "listed twice"),
        (field("c", "radio", options=[{"label": "A"}]), "c", "needs a string value"),
        (field("t", "display"), "t", "needs a value expression"),
        (field("n", "number", default="5"), "n", "does not match the field type"),
        (field("n", "integer", default=2.5), "n", "does not match the field type"),
        (field("n", "number", default=-1, min=0), "n", "must be at least 0"),
        (field("c", "select", options=OPTIONS, default="green"), "c", "listed options"),
        (field("e", "email", default="nope"), "e", "valid email address"),
        (field("n", "text", default={"expression": "$input.a"}), "n", "computed default"),
        (field("n", "text", required="yes"), "n", "required must be true or false"),
        (field("n", "text", label=3), "n", "label must be a string"),
    ],
)
def test_spec_problems(spec_field: dict[str, Any], key: str | None, fragment: str) -> None:
    problems = validate_form_spec(form(spec_field))
    assert len(problems) == 1, problems
    assert problems[0].key == key
    assert problems[0].code == "form.invalid"
    assert fragment in problems[0].message


def test_spec_structure_problems() -> None:
    assert validate_form_spec([])[0].message == "The form must be an object with a list of fields"
    assert validate_form_spec({"fields": {}})[0].message == "The form's fields must be a list"
    assert validate_form_spec(form("x"))[0].message == "Field 1 must be an object"
    assert "more than 200" in validate_form_spec(form(*[{}] * 201))[0].message
    duplicate = validate_form_spec(form(field("a", "text"), field("a", "number")))
    assert [(p.key, p.message) for p in duplicate] == [("a", "Field key 'a' is used twice")]
    for reserved in ("csrf_token", "business_key", "refresh"):
        problems = validate_form_spec(form(field(reserved, "text")))
        assert [p.key for p in problems] == [reserved]
        assert "reserved" in problems[0].message


def test_expression_syntax_problems_have_their_own_code() -> None:
    spec = form(
        field("a", "text", visibleIf="$input.x =="),
        field("b", "display", value="len("),
        field("c", "text", default={"expr": "$input.y +"}),
    )
    problems = validate_form_spec(spec)
    assert [(p.key, p.code) for p in problems] == [
        ("a", "expression.syntax"),
        ("b", "expression.syntax"),
        ("c", "expression.syntax"),
    ]
    assert "visibleIf is not a valid expression" in problems[0].message


def test_pattern_problem() -> None:
    assert pattern_problem("[0-9]{4}") is None
    assert pattern_problem("[+-]?\\d+(\\.\\d+)?") is None
    assert pattern_problem("(\\w+\\s?)*") is not None
    assert pattern_problem("(a*)+") is not None
    assert pattern_problem(5) == "pattern must be a string"


def test_broken_spec_does_not_crash_coercion() -> None:
    spec = {"fields": ["x", {"key": "a", "type": "nope"}, field("b", "text", pattern="(")]}
    assert coerce_submission(spec, {"a": "1", "b": "((("}) == ({"b": "((("}, {})
    assert coerce_submission(None, {"a": "1"}) == ({}, {})


def test_multidict_style_submission() -> None:
    class MultiDict(dict):
        def getlist(self, key: str) -> list[str]:
            return list(self.get(key, []))

    spec = form(field("colours", "multiselect", options=OPTIONS), field("agree", "boolean"))
    raw = MultiDict(colours=["red", "blue"], agree=["off", "on"])
    assert coerce_submission(spec, raw) == ({"colours": ["red", "blue"], "agree": True}, {})


@pytest.mark.parametrize(
    ("field", "attribute"),
    [
        ({"key": "n", "type": "number", "min": 5, "max": 1}, "max"),
        ({"key": "n", "type": "number", "min": "x"}, "min"),
        ({"key": "c", "type": "radio", "options": [{"value": "a"}, {"value": "a"}]}, "options"),
        ({"key": "c", "type": "radio", "options": [{"value": 3}]}, "options"),
        ({"key": "t", "type": "text", "minLength": 4, "maxLength": 2}, "maxLength"),
        ({"key": "t", "type": "text", "pattern": "("}, "pattern"),
        ({"key": "t", "type": "text", "label": 3}, "label"),
        ({"key": "t", "type": "text", "min": 1}, "min"),
        ({"key": "t", "type": "text", "visibleIf": "$form.x =="}, "visibleIf"),
        ({"key": "n", "type": "number", "default": "x"}, "default"),
        ({"key": "t", "type": "colour"}, "type"),
        ({"key": "2x", "type": "text"}, "key"),
    ],
)
def test_each_spec_problem_says_which_field_and_attribute(
    field: dict[str, Any], attribute: str
) -> None:
    spec = {"fields": [{"key": "first", "type": "text"}, field]}
    problems = validate_form_spec(spec)
    assert [(p.index, p.attribute) for p in problems] == [(1, attribute)]
