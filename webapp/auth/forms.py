"""Sign-in, sign-out and account forms."""

from flask_wtf import FlaskForm
from wtforms import BooleanField, PasswordField, StringField
from wtforms.validators import DataRequired, Length

from webapp.web.forms import NewPasswordForm


class LoginForm(FlaskForm):
    username = StringField(
        "Username",
        validators=[DataRequired(), Length(max=64)],
        render_kw={"autocomplete": "username", "autofocus": True},
    )
    password = PasswordField(
        "Password",
        validators=[DataRequired(), Length(max=256)],
        render_kw={"autocomplete": "current-password"},
    )
    remember = BooleanField("Keep me signed in")


class LogoutForm(FlaskForm):
    """Empty form: sign-out is a POST so it carries a CSRF token."""


class PasswordChangeForm(NewPasswordForm):
    """A user changes their own password: the current one proves it is them."""

    current_password = PasswordField(
        "Current password",
        validators=[DataRequired(), Length(max=256)],
        render_kw={"autocomplete": "current-password"},
    )


class SignOutEverywhereForm(FlaskForm):
    """Empty form: ends every sign-in of the user, as a POST with a CSRF token."""
