"""Sign-in form."""

from flask_wtf import FlaskForm
from wtforms import BooleanField, PasswordField, StringField
from wtforms.validators import DataRequired, Length


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
