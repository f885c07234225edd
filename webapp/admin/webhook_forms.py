"""The form an admin registers a webhook with; the service checks the values again."""

from flask_wtf import FlaskForm
from wtforms import DecimalField, SelectField, StringField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, NumberRange, Optional

from webapp.services.webhooks import EVENTS
from webapp.web.forms import MultiCheckboxField


class WebhookForm(FlaskForm):
    url = StringField(
        "URL",
        validators=[DataRequired(message="Give the address to send events to."), Length(max=2000)],
        render_kw={"type": "url", "inputmode": "url", "autocomplete": "off"},
    )
    description = StringField("Description", validators=[Optional(), Length(max=200)])
    events = MultiCheckboxField(
        "Events",
        choices=[SelectChoice(event, event) for event in EVENTS],
        validators=[DataRequired(message="Choose at least one event type.")],
    )
    process_key = StringField("Only process (key)", validators=[Optional(), Length(max=100)])
    partition = SelectField("Only partition", validators=[Optional()])


class RotateForm(FlaskForm):
    overlap_hours = DecimalField(
        "Old secret keeps signing for (hours)",
        default=24,
        places=None,
        validators=[NumberRange(min=0, max=168, message="Use 0 to 168 hours.")],
    )
