"""WTForms forms built at runtime from a process form spec: user tasks, start events, previews.

WTForms renders the controls and keeps what was typed; what is valid is decided by the process
library (`forms.coerce_submission`), so the page, the engine and the API agree. `visibleIf` is
evaluated here on the server: a field that other fields depend on re-renders the form via htmx.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from flask_wtf import FlaskForm
from markupsafe import Markup
from wtforms import BooleanField, Field, RadioField, SelectField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.widgets import DateInput, DateTimeLocalInput, EmailInput, NumberInput, URLInput

from webapp.process import expressions, forms
from webapp.web.forms import MultiCheckboxField

FIELDS_ID = "spec-fields"


class DisplayWidget:
    """A read-only value: text, not an input, so nothing is submitted for it."""

    def __call__(self, field: Field, **kwargs: Any) -> Markup:
        return Markup('<p class="display-value" id="{}">{}</p>').format(field.id, field.data or "—")


class DisplayField(Field):
    """A `display` field: shows a value computed from instance data; ignores submissions."""

    widget = DisplayWidget()

    def process_formdata(self, valuelist: list[Any]) -> None:
        return None


@dataclass
class Shown:
    """One visible spec field with its bound WTForms field and the HTML attributes to render."""

    spec: dict[str, Any]
    field: Field
    controls: bool
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return str(self.spec["key"])

    @property
    def type(self) -> str:
        return str(self.spec["type"])

    @property
    def label(self) -> str:
        return forms.field_label(self.spec)

    @property
    def required(self) -> bool:
        return self.spec.get("required") is True and self.type != "display"

    @property
    def help(self) -> str:
        return str(self.spec.get("help") or "")


class SpecForm(FlaskForm):
    """Base of the generated forms; `shown` lists the visible fields in spec order."""

    shown: list[Shown]
    fields_id = FIELDS_ID

    def set_errors(self, errors: Mapping[str, str]) -> None:
        """Show the library's messages (keyed by field key) next to their fields."""
        for item in self.shown:
            message = errors.get(item.key)
            item.field.errors = [message] if message else []
        self._describe()

    def _describe(self) -> None:
        for item in self.shown:
            failed = bool(item.field.errors)
            described = [f"{item.field.id}-help"] if item.help else []
            if failed:
                described.append(f"{item.field.id}-msg")
            item.attrs["aria-invalid"] = "true" if failed else None
            item.attrs["aria-describedby"] = " ".join(described) or None
            item.attrs = {k: v for k, v in item.attrs.items() if v is not None}


def controlling_keys(spec: Any) -> set[str]:
    """Keys of the fields some `visibleIf` reads as `$form.<key>`."""
    keys: set[str] = set()
    for item in forms.iter_fields(spec):
        condition = item.get("visibleIf")
        if not isinstance(condition, str) or not condition.strip():
            continue
        try:
            paths = expressions.parse(condition).paths
        except expressions.ExpressionError:
            continue
        keys.update(path[1] for path in paths if len(path) > 1 and path[0] == "$form")
    return keys


def _initial(spec: Mapping[str, Any], value: Any) -> Any:
    kind = spec["type"]
    if kind == "boolean":
        return value is True
    if kind == "multiselect":
        return [str(item) for item in value] if isinstance(value, list) else []
    if value is None:
        return None
    if kind == "datetime" and isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).strftime("%Y-%m-%dT%H:%M")
        except ValueError:
            return value
    return forms.display_text(value)


def _choices(spec: Mapping[str, Any]) -> list[SelectChoice]:
    return [
        SelectChoice(str(option["value"]), str(option.get("label") or option["value"]))
        for option in spec.get("options") or []
        if isinstance(option, dict) and isinstance(option.get("value"), str)
    ]


def _unbound(spec: Mapping[str, Any], default: Any, context: Mapping[str, Any] | None) -> Any:
    kind = spec["type"]
    common = {"label": forms.field_label(spec), "name": spec["key"], "id": f"field-{spec['key']}"}
    if kind == "display":
        value = forms.display_text(forms.display_value(spec, context))
        return DisplayField(default=value, **common)
    common["default"] = default
    if kind == "textarea":
        return TextAreaField(**common)
    if kind == "boolean":
        return BooleanField(**common)
    if kind == "select":
        choices = [SelectChoice("", "Choose…"), *_choices(spec)]
        return SelectField(choices=choices, validate_choice=False, **common)
    if kind == "radio":
        return RadioField(choices=_choices(spec), validate_choice=False, **common)
    if kind == "multiselect":
        return MultiCheckboxField(choices=_choices(spec), validate_choice=False, **common)
    widgets = {
        "number": NumberInput(step="any"),
        "integer": NumberInput(step=1),
        "date": DateInput(),
        "datetime": DateTimeLocalInput(),
        "email": EmailInput(),
        "url": URLInput(),
    }
    widget = widgets.get(kind)
    return StringField(widget=widget, **common) if widget else StringField(**common)


def _attrs(spec: Mapping[str, Any], controls: bool, refresh_url: str | None) -> dict[str, Any]:
    kind = spec["type"]
    names = {"min": "min", "max": "max", "minLength": "minlength"}
    attrs: dict[str, Any] = {
        html: spec[key] for key, html in names.items() if spec.get(key) is not None
    }
    if forms.max_length(spec) is not None:
        attrs["maxlength"] = forms.max_length(spec)
    if isinstance(spec.get("placeholder"), str) and spec["placeholder"]:
        attrs["placeholder"] = spec["placeholder"]
    if spec.get("required") is True and kind not in ("multiselect", "display"):
        attrs["required"] = True
    if kind == "boolean":
        attrs["value"] = "true"
    if controls and refresh_url:
        attrs.update(
            {
                "hx-post": refresh_url,
                "hx-trigger": "change",
                "hx-target": f"#{FIELDS_ID}",
                "hx-swap": "outerHTML",
                "hx-sync": "closest form:replace",
            }
        )
    return attrs


def build(
    spec: Any,
    context: Mapping[str, Any] | None = None,
    formdata: Any = None,
    *,
    errors: Mapping[str, str] | None = None,
    refresh_url: str | None = None,
) -> SpecForm:
    """A form of the fields visible now: for `formdata` (a submission) or the defaults.

    `refresh_url` is where a change of a controlling field posts the form to re-render it.
    """
    if formdata is not None:
        values, _ = forms.coerce_submission(spec, formdata, context)
        visible = forms.visible_fields(spec, context, values)
    else:
        visible = forms.visible_fields(spec, context)
    defaults = forms.initial_values(spec, context)
    controlling = controlling_keys(spec)
    attributes: dict[str, Any] = {}
    for index, item in enumerate(visible):
        attributes[f"f{index}"] = _unbound(item, _initial(item, defaults.get(item["key"])), context)
    generated = type("GeneratedSpecForm", (SpecForm,), attributes)
    form = generated(formdata=formdata)
    form.shown = [
        Shown(
            item,
            form[f"f{index}"],
            item["key"] in controlling,
            _attrs(item, item["key"] in controlling, refresh_url),
        )
        for index, item in enumerate(visible)
    ]
    form.set_errors(errors or {})
    return form


def refreshes(spec: Any) -> bool:
    """True when some field's visibility depends on other answers."""
    return bool(controlling_keys(spec))


def display_facts(spec: Any, context: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, text) of the spec's `display` fields, evaluated with the instance's data."""
    return [
        (forms.field_label(item), forms.display_text(forms.display_value(item, context)))
        for item in forms.iter_fields(spec)
        if item["type"] == "display"
    ]


def error_summary(
    form: SpecForm | None,
    errors: Mapping[str, str] | None = None,
    others: Iterable[tuple[str, str, str]] = (),
) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Messages and (key, field id, label) triples for the `error_summary` macro: the failed
    fields of `form`, then `others` outside it, then any other message in `errors` unlinked."""
    messages = dict(errors or {})
    fields = []
    for item in form.shown if form is not None else []:
        if item.field.errors:
            messages[item.key] = item.field.errors[0]
            grouped = item.type in ("radio", "multiselect")
            target = f"{item.field.id}-0" if grouped else item.field.id
            fields.append((item.key, target, item.label))
    fields.extend(others)
    known = {key for key, _, _ in fields}
    fields.extend((key, "", "") for key in messages if key not in known)
    return messages, fields
