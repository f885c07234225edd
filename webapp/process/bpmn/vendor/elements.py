"""The settings of start events and user tasks, gathered from the families that make them up."""

from __future__ import annotations

from typing import Any

from lxml import etree

from .assignment import assignment_of
from .common import Warn, warn_listeners
from .dates import due_dates
from .forms import form_config
from .origin import origin_config


def start_event_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """The start form of a start event, and the reference of an external one."""
    config = form_config(element, warn)
    config.update(origin_config(element, form=True))
    warn_listeners(element, warn)
    return config


def user_task_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """Assignee, form and due date of a user task."""
    config: dict[str, Any] = {}
    assignee, candidates = assignment_of(element, warn)
    if assignee:
        config["assignee"] = assignee
    if candidates:
        config["candidates"] = candidates
    config.update(form_config(element, warn))
    config.update(due_dates(element, warn))
    config.update(origin_config(element, assignment=True, form=True))
    warn_listeners(element, warn)
    return config
