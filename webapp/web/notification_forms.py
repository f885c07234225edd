"""The notification preference form: one choice per kind, for a user (with "as the admin set
it") on the account page and for the admin's defaults."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import SelectField, StringField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import Length, Optional, Regexp, ValidationError

from webapp.services.notifications import KINDS, MODES

NOT_A_CHOICE = "Choose one of the listed options."


class ChoiceField(SelectField):
    """A select whose refusal of a value that is not among its options says what to do."""

    def pre_validate(self, form: FlaskForm) -> None:
        if self.data not in {choice.value for choice in self.choices or []}:
            raise ValidationError(NOT_A_CHOICE)


class EmailForm(FlaskForm):
    """A user's own e-mail address, where notifications go."""

    email = StringField(
        "E-mail address",
        validators=[
            Optional(),
            Length(max=254),
            Regexp(
                r"^[^@\s<>,;]+@[^@\s<>,;.]+(\.[^@\s<>,;.]+)+$",
                message="Enter an address like name@example.org.",
            ),
        ],
        render_kw={"autocomplete": "email"},
    )


def preferences_form(defaults: dict[str, str] | None) -> type[FlaskForm]:
    """A form class with a select per kind; given the admin's `defaults`, each select also
    offers "as the admin set it" (value "default")."""
    fields: dict[str, ChoiceField] = {}
    for kind, label in KINDS.items():
        choices = [SelectChoice(mode, text) for mode, text in MODES.items()]
        if defaults is not None:
            own = SelectChoice("default", f"As the admin set it ({MODES[defaults[kind]]})")
            choices.insert(0, own)
        fields[kind] = ChoiceField(label, choices=choices)
    return type("PreferencesForm", (FlaskForm,), fields)
