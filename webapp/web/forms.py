"""Form pieces shared by several areas."""

from flask_wtf import FlaskForm
from wtforms import PasswordField, SelectMultipleField, widgets
from wtforms.validators import DataRequired, EqualTo, Length


class MultiCheckboxField(SelectMultipleField):
    """A multiple choice shown as a list of labelled checkboxes (keyboard friendly)."""

    widget = widgets.ListWidget(prefix_label=False)
    option_widget = widgets.CheckboxInput()


class NewPasswordForm(FlaskForm):
    """A new password typed twice: an admin's reset and a user's own change."""

    password = PasswordField(
        "New password",
        validators=[DataRequired(), Length(min=8, max=256)],
        render_kw={"autocomplete": "new-password"},
    )
    confirm = PasswordField(
        "Repeat it",
        validators=[EqualTo("password", "The passwords differ.")],
        render_kw={"autocomplete": "new-password"},
    )
