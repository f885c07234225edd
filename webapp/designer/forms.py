"""Forms of the designer's pages: new process, import, publish and the outline's edits."""

from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from wtforms import (
    BooleanField,
    HiddenField,
    RadioField,
    SelectField,
    StringField,
    TextAreaField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, InputRequired, Length, Optional, Regexp

from webapp.process.kinds import KINDS

KEY_HINT = "Letters, digits, '.', '-' or '_', starting with a letter or '_'; it never changes."
KEY_RE = r"^[A-Za-z_][A-Za-z0-9_.-]*$"


class NewProcessForm(FlaskForm):
    key = StringField(
        "Key",
        validators=[DataRequired(), Length(max=100), Regexp(KEY_RE, message=KEY_HINT)],
        render_kw={"autocomplete": "off", "spellcheck": "false"},
    )
    name = StringField("Name", validators=[DataRequired(), Length(max=200)])
    partition = SelectField("Partition", validate_choice=True)


class ImportForm(FlaskForm):
    file = FileField("BPMN or JSON file", render_kw={"accept": ".bpmn,.xml,.json"})
    #: The file of a first post, carried (base64) while the person picks one of its processes.
    carried = HiddenField()
    pool = RadioField("Process to import", validate_choice=False)
    key = StringField(
        "Key",
        validators=[Optional(), Length(max=100), Regexp(KEY_RE, message=KEY_HINT)],
        description="Leave empty to use the process id in the file, or a key made from its "
        "name when its tool generated the id (sid-…, _3); you see it before anything is created.",
    )
    name = StringField(
        "Name",
        validators=[Optional(), Length(max=200)],
        description="Leave empty to use the name in the file.",
    )
    partition = SelectField("Partition", validate_choice=True)
    allow_unsupported = BooleanField("Import even if some elements are not supported")


class DraftImportForm(FlaskForm):
    file = FileField("BPMN or JSON file", render_kw={"accept": ".bpmn,.xml,.json"})
    #: The file of a first post, carried (base64) while the person picks one of its processes.
    carried = HiddenField()
    pool = RadioField("Process to import", validate_choice=False)
    revision = HiddenField(validators=[InputRequired()])
    allow_unsupported = BooleanField("Import even if some elements are not supported")


class PublishForm(FlaskForm):
    note = TextAreaField(
        "Change note (required)",
        validators=[DataRequired("Say in a few words what changed."), Length(max=500)],
        render_kw={"rows": 3, "maxlength": 500},
    )
    revision = HiddenField(validators=[InputRequired()])
    override = TextAreaField(
        "Publish anyway because (only when test scenarios fail)",
        validators=[Optional(), Length(max=500)],
        render_kw={"rows": 2, "maxlength": 500},
    )


class ScenarioForm(FlaskForm):
    """One test scenario as JSON (the format is in docs/designer.md, "Test scenarios")."""

    body = TextAreaField(
        "Scenario (JSON)",
        validators=[DataRequired("Write the scenario as JSON.")],
        render_kw={"rows": 18, "spellcheck": "false", "class": "code"},
    )


class RevisionForm(FlaskForm):
    """A form that only carries the draft revision (delete, auto layout)."""

    revision = HiddenField(validators=[InputRequired()])


def kind_choices() -> list[SelectChoice]:
    """Kinds the outline adds: a boundary event is drawn on an activity's border instead."""
    return [
        SelectChoice(name, kind.label) for name, kind in KINDS.items() if name != "boundaryEvent"
    ]


class AddNodeForm(RevisionForm):
    kind = SelectField("Kind", choices=kind_choices(), default="userTask")
    title = StringField("Title", validators=[Optional(), Length(max=200)])
    after = SelectField("Connect from", validate_choice=True, default="")
    parent = SelectField("Inside", validate_choice=True, default="")


class RenameForm(RevisionForm):
    title = StringField("New title", validators=[Optional(), Length(max=200)])


class ProcessSettingsForm(RevisionForm):
    variables_pool = BooleanField("Process variables pool (as in Camunda, Flowable, SpiffWorkflow)")


class ConnectForm(RevisionForm):
    source = SelectField("From", validate_choice=True)
    target = SelectField("To", validate_choice=True)


class PlayForm(FlaskForm):
    """The CSRF token of the play page's steps; the recorded run travels in `played`."""

    played = HiddenField()
