"""Panels of compensation: the compensation throw, and the compensation settings an end event
shares with it (which activity it undoes, whether it waits for the handlers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wtforms import BooleanField, StringField
from wtforms.validators import Length, Optional

from webapp.designer.panels.base import PanelContext, PanelForm, as_text
from webapp.process.document import is_valid_id


class CompensationFields:
    """Which activity a compensation throw undoes (empty: all of its scope), and whether the
    flow waits for the handlers."""

    activity = StringField(
        "Activity to compensate (its id)",
        validators=[Optional(), Length(max=255)],
        description="Empty undoes every completed activity of this scope, newest first.",
    )
    wait_for_completion = BooleanField("Wait for the handlers", default=True)


def compensation_data(config: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "activity": as_text(config.get("activity")),
        "wait_for_completion": config.get("waitForCompletion") is not False,
    }


def read_compensation(form: Any, config: dict[str, Any]) -> None:
    """The activity (an element id) and `waitForCompletion` (kept only when false)."""
    config.pop("activity", None)
    config.pop("waitForCompletion", None)
    activity = (form.activity.data or "").strip()
    if activity and not is_valid_id(activity):
        form.activity.errors.append("Enter the id of an activity, such as Activity_1.")
    elif activity:
        config["activity"] = activity
    if not form.wait_for_completion.data:
        config["waitForCompletion"] = False


class CompensationThrowPanel(CompensationFields, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return compensation_data(config)

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        read_compensation(self, config)
