"""Admin forms; choices for roles and partitions are filled from the database per request."""

from flask_wtf import FlaskForm
from wtforms import BooleanField, PasswordField, SelectField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, Optional, Regexp

from webapp.permissions import PERMISSIONS
from webapp.web.forms import MultiCheckboxField, NewPasswordForm


class UserForm(FlaskForm):
    username = StringField("Username", validators=[DataRequired(), Length(max=64)])
    display_name = StringField("Display name", validators=[Optional(), Length(max=200)])
    email = StringField(
        "E-mail",
        validators=[
            Optional(),
            Length(max=254),
            Regexp(
                r"^[^@\s]+@[^@\s]+\.[^@\s]+$", message="Enter an address like name@example.org."
            ),
        ],
    )
    active = BooleanField("Active", default=True)
    roles = MultiCheckboxField("Roles", coerce=int)
    partitions = MultiCheckboxField("Partitions", coerce=int)


class NewUserForm(UserForm):
    password = PasswordField(
        "Password",
        validators=[DataRequired(), Length(min=8, max=256)],
        render_kw={"autocomplete": "new-password"},
    )


class PasswordForm(NewPasswordForm):
    """An admin sets a user's password."""


class RoleForm(FlaskForm):
    name = StringField(
        "Name",
        validators=[
            DataRequired(),
            Length(max=64),
            Regexp(r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$", message="Letters, digits, spaces, . _ -"),
        ],
    )
    description = TextAreaField("Description", validators=[Optional(), Length(max=500)])
    permissions = MultiCheckboxField(
        "Permissions", choices=[SelectChoice(k, f"{k} — {v}") for k, v in PERMISSIONS.items()]
    )


class PartitionForm(FlaskForm):
    key = StringField(
        "Key",
        validators=[
            DataRequired(),
            Length(max=64),
            Regexp(r"^[a-z0-9][a-z0-9_-]*$", message="Lower-case letters, digits, - and _"),
        ],
    )
    name = StringField("Name", validators=[DataRequired(), Length(max=200)])


class ServiceAccountForm(FlaskForm):
    """A service account: a name, roles and partitions; no password, no e-mail."""

    username = StringField("Username", validators=[DataRequired(), Length(max=64)])
    display_name = StringField("Display name", validators=[Optional(), Length(max=200)])
    active = BooleanField("Active (its tokens work)", default=True)
    roles = MultiCheckboxField("Roles", coerce=int)
    partitions = MultiCheckboxField("Partitions", coerce=int)


class TokenFilterForm(FlaskForm):
    """The token list's filters (a GET form, no CSRF)."""

    owner = StringField("Owner", validators=[Optional(), Length(max=64)])
    kind = SelectField(
        "Kind",
        choices=[
            SelectChoice(value, label)
            for value, label in (("", "Any"), ("personal", "Personal"), ("service", "Service"))
        ],
        validators=[Optional()],
    )
    status = SelectField(
        "Status",
        choices=[
            SelectChoice(value, value.capitalize() or "Any")
            for value in ("", "active", "expired", "revoked")
        ],
        validators=[Optional()],
    )
