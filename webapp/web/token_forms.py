"""Forms for API tokens, shared by the account page and the admin area."""

from flask_wtf import FlaskForm
from wtforms import SelectField, StringField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length

from webapp.services.api_tokens import EXPIRY_DAYS, NAME_LENGTH, SCOPES
from webapp.web.forms import MultiCheckboxField

EXPIRY_LABELS = {30: "30 days", 90: "90 days", 365: "1 year", 0: "Never"}


class TokenForm(FlaskForm):
    """A new token: its name, what it may do and how long it lasts."""

    name = StringField(
        "Token name",
        validators=[DataRequired(), Length(max=NAME_LENGTH)],
        render_kw={"placeholder": "deploy-bot", "autocomplete": "off"},
    )
    scopes = MultiCheckboxField(
        "Scopes", choices=[SelectChoice(k, f"{k} — {v}") for k, v in SCOPES.items()]
    )
    expires = SelectField(
        "Expires after",
        coerce=int,
        default=90,
        choices=[SelectChoice(days, EXPIRY_LABELS[days]) for days in EXPIRY_DAYS],
    )


class RevokeForm(FlaskForm):
    """Empty form: revoking is a POST with a CSRF token."""
