"""Missing values in the properties panel: one rule for when the panel says a value is missing.

A required value left empty is marked with `Missing`. It is shown only once the user has left
that field or pressed Apply, and on the canvas it never keeps the panel's other values from
being applied: the element may stay incomplete meanwhile (the Problems list names it too).
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from typing import Any

from wtforms import FieldList, FormField


class Missing(str):
    """An inline error saying a required value is empty (not that a value is wrong)."""


def leaf_fields(form: Any) -> Iterator[Any]:
    """Every field of `form`, with the fields of its nested rows instead of the rows."""
    for item in form:
        if isinstance(item, FieldList):
            for entry in item.entries:
                yield from leaf_fields([entry])
        elif isinstance(item, FormField):
            yield from leaf_fields(item.form)
        else:
            yield item


def blocking(form: Any) -> bool:
    """Any error besides missing values: a value that is there but would not work."""
    if form.form_errors:
        return True
    return any(not isinstance(e, Missing) for f in leaf_fields(form) for e in f.errors)


def defer(form: Any, shown: Container[str] | None) -> int:
    """Take the missing-value errors off the fields not named in `shown` (None shows them all);
    returns how many were taken off."""
    taken = 0
    for field in leaf_fields(form):
        kept = [
            e
            for e in field.errors
            if shown is None or not isinstance(e, Missing) or field.name in shown
        ]
        taken += len(field.errors) - len(kept)
        field.errors = kept
    return taken


def missing_by_field(form: Any) -> dict[str, list[str]]:
    """The missing-value errors still on `form`, by field name."""
    found: dict[str, list[str]] = {}
    for field in leaf_fields(form):
        errors: list[str] = [e for e in field.errors if isinstance(e, Missing)]
        if errors:
            found[field.name] = errors
    return found


def row_prefix(name: str) -> str:
    """ "Field 2 " for an input of the form builder's second row, else "" (summary labels)."""
    head, _, rest = name.partition("-")
    number, _, _ = rest.partition("-")
    return f"Field {int(number) + 1} " if head == "fields" and number.isdigit() else ""


def summary(form: Any) -> list[tuple[str, str, str]]:
    """(input id, label, message) for every error still on `form`, in the panel's order."""
    return [
        (field.id, row_prefix(field.name) + field.label.text, str(error))
        for field in leaf_fields(form)
        if field.type not in ("CSRFTokenField", "HiddenField")
        for error in field.errors
    ]


def focus_first_error(form: Any) -> str | None:
    """Mark the first input holding an error to take keyboard focus when shown; its id."""
    for field in leaf_fields(form):
        if field.errors and field.type not in ("CSRFTokenField", "HiddenField"):
            field.render_kw = {**(field.render_kw or {}), "autofocus": True}
            return str(field.id)
    return None
