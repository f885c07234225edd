"""The operator's reassignment form (the task forms themselves are generated: `formgen`)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from sqlalchemy import select
from wtforms import SelectField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import Length, Optional

from webapp.extensions import db
from webapp.models import Role


class ReassignForm(FlaskForm):
    """Give a task to a user, or offer it to a role; the note goes into the history."""

    username = StringField(
        "User",
        validators=[Optional(), Length(max=64)],
        description="A username; the task becomes theirs.",
    )
    role = SelectField("Or offer it to a role", choices=[], validate_choice=False)
    note = TextAreaField("Note for the history", validators=[Optional(), Length(max=500)])

    def fill_roles(self) -> None:
        roles = db.session.scalars(select(Role).order_by(Role.name))
        self.role.choices = [SelectChoice("", "—")] + [
            SelectChoice(role.name, role.name)
            for role in roles
            if role.permissions & {"tasks.work", "admin"}
        ]
