"""Forms from process form specs (start events, user tasks): HTML inputs, submitted values, errors.

The spec language lives in `webapp.process.forms`; this module turns a spec into labelled,
keyboard-friendly HTML controls (no JavaScript) and reads a submission back through
`coerce_submission`, so a start form and a task form validate the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from webapp.process import forms

CHECKED = frozenset({"on", "true", "1", "yes"})


@dataclass
class FieldView:
    """One field ready to render: the current text (or choices), the error and the options."""

    key: str
    type: str
    label: str
    required: bool = False
    help: str = ""
    error: str | None = None
    value: str = ""
    chosen: list[str] = field(default_factory=list)
    options: list[tuple[str, str]] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"field-{self.key}"


def _text(value: Any) -> str:
    if value is None or value is False:
        return ""
    if value is True:
        return "true"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _attrs(spec: Mapping[str, Any]) -> dict[str, Any]:
    names = {"min": "min", "max": "max", "minLength": "minlength", "maxLength": "maxlength"}
    attrs = {html: spec[key] for key, html in names.items() if spec.get(key) is not None}
    if spec["type"] == "number":
        attrs["step"] = "any"
    return attrs


def field_views(
    spec: Any,
    context: Mapping[str, Any] | None = None,
    raw: Mapping[str, Any] | None = None,
    errors: Mapping[str, str] | None = None,
) -> list[FieldView]:
    """The fields to show: defaults on first display, the submitted text after a submission."""
    errors = errors or {}
    if raw is None:
        typed = forms.initial_values(spec, context)
        current = {key: _text(value) for key, value in typed.items()}
        lists = {key: value for key, value in typed.items() if isinstance(value, list)}
        shown = forms.visible_fields(spec, context)
    else:
        values, _ = forms.coerce_submission(spec, raw, context)
        current = {key: _last(raw, key) for key in _keys(spec)}
        lists = {key: _all(raw, key) for key in _keys(spec)}
        shown = forms.visible_fields(spec, context, values)
    views = []
    for item in shown:
        key = str(item.get("key"))
        kind = item["type"]
        view = FieldView(
            key=key,
            type=kind,
            label=forms.field_label(item),
            required=item.get("required") is True,
            help=str(item.get("help") or ""),
            error=errors.get(key),
            value=current.get(key, ""),
            chosen=[str(v) for v in lists.get(key) or []],
            options=[
                (str(o.get("value")), str(o.get("label") or o.get("value")))
                for o in item.get("options") or []
                if isinstance(o, dict)
            ],
            attrs=_attrs(item),
        )
        if kind == "display":
            view.value = _text(forms.display_value(item, context))
        views.append(view)
    return views


def _keys(spec: Any) -> list[str]:
    return [str(f.get("key")) for f in forms.iter_fields(spec)]


def _all(raw: Mapping[str, Any], key: str) -> list[str]:
    if hasattr(raw, "getlist"):
        return list(raw.getlist(key))
    value = raw.get(key)
    return list(value) if isinstance(value, list) else ([] if value is None else [value])


def _last(raw: Mapping[str, Any], key: str) -> str:
    values = _all(raw, key)
    return str(values[-1]) if values else ""


def read_submission(
    spec: Any, raw: Mapping[str, Any], context: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Coerce and check a submitted form: `(values, errors)` keyed by field key."""
    return forms.coerce_submission(spec, raw, context)


def depends_on_form(spec: Any) -> bool:
    """True when a field's visibility depends on other answers (the page offers a refresh)."""
    return any("$form" in str(f.get("visibleIf") or "") for f in forms.iter_fields(spec))


# --- HTML ------------------------------------------------------------------------------------


def _attributes(pairs: Mapping[str, Any]) -> Markup:
    parts = []
    for name, value in pairs.items():
        if value is None or value is False:
            continue
        if value is True:
            parts.append(Markup(" {}").format(name))
        else:
            parts.append(Markup(' {}="{}"').format(name, value))
    return Markup("").join(parts)


def _control(view: FieldView) -> Markup:
    described = f"{view.id}-msg" if view.error else (f"{view.id}-help" if view.help else None)
    common = {
        "id": view.id,
        "name": view.key,
        "required": view.required,
        "aria-invalid": "true" if view.error else None,
        "aria-describedby": described,
    }
    kind = view.type
    if kind == "textarea":
        return Markup("<textarea{}>{}</textarea>").format(
            _attributes({**common, **view.attrs}), view.value
        )
    if kind == "select":
        options = [Markup('<option value=""></option>')] if not view.required else []
        options += [
            Markup('<option value="{}"{}>{}</option>').format(
                value, Markup(" selected") if value == view.value else "", label
            )
            for value, label in view.options
        ]
        return Markup("<select{}>{}</select>").format(_attributes(common), Markup("").join(options))
    html_type = forms.FIELD_TYPES[kind].html_input or "text"
    return Markup("<input{}>").format(
        _attributes({**common, "type": html_type, "value": view.value, **view.attrs})
    )


def _choices(view: FieldView) -> Markup:
    multiple = view.type == "multiselect"
    items = []
    for index, (value, label) in enumerate(view.options):
        checked = value in view.chosen if multiple else value == view.value
        item_id = f"{view.id}-{index}"
        attrs = {
            "id": item_id,
            "type": "checkbox" if multiple else "radio",
            "name": view.key,
            "value": value,
            "checked": checked,
            "required": view.required and not multiple,
        }
        items.append(
            Markup('<li><input{}> <label for="{}">{}</label></li>').format(
                _attributes(attrs), item_id, label
            )
        )
    return Markup('<fieldset{}><legend>{}{}</legend><ul class="checks">{}</ul></fieldset>').format(
        _attributes({"aria-describedby": f"{view.id}-msg" if view.error else None}),
        view.label,
        Markup(" *") if view.required else "",
        Markup("").join(items),
    )


def render_field(view: FieldView) -> Markup:
    """One field with its label, help text and error message."""
    css = "field has-error" if view.error else "field"
    help_text = error = Markup("")
    if view.help:
        help_text = Markup('<p class="hint" id="{}-help">{}</p>').format(view.id, view.help)
    if view.error:
        error = Markup('<p class="error" id="{}-msg">{}</p>').format(view.id, view.error)
    if view.type == "display":
        body = Markup('<span class="label">{}</span><p class="display-value">{}</p>').format(
            view.label, view.value or "—"
        )
    elif view.type == "boolean":
        checked = view.value.strip().lower() in CHECKED
        box = _attributes(
            {
                "id": view.id,
                "type": "checkbox",
                "name": view.key,
                "value": "true",
                "checked": checked,
                "required": view.required,
                "aria-invalid": "true" if view.error else None,
            }
        )
        body = Markup('<label class="check"><input{}> {}</label>').format(box, view.label)
    elif view.type in ("radio", "multiselect"):
        body = _choices(view)
    else:
        body = Markup('<label for="{}">{}{}</label>{}').format(
            view.id, view.label, Markup(" *") if view.required else "", _control(view)
        )
    return Markup('<div class="{}">{}{}{}</div>').format(css, body, help_text, error)


def render_fields(views: list[FieldView]) -> Markup:
    return Markup("\n").join(render_field(view) for view in views)
