"""Properties-panel forms, one per element kind (`PANELS`), and their conversion to and from
node config: `initial_data` fills a form from an element, `read_values` reads a submission back.

Each panel class loads its fields from a node's config (`load`) and dumps a valid submission back
into it (`dump`), adding inline errors for values that would not work; config keys a kind does not
edit are kept. The classes live by family: `tasks`, `events`, `structure`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from wtforms.fields.choices import SelectChoice

from webapp.designer.panels.base import FLOW, PanelContext, PanelForm, original_values
from webapp.designer.panels.compensation import CompensationThrowPanel
from webapp.designer.panels.events import (
    BoundaryPanel,
    ConditionalCatchPanel,
    EndEventPanel,
    EscalationThrowPanel,
    LinkPanel,
    MessagePanel,
    MessageThrowPanel,
    SignalCatchPanel,
    SignalThrowPanel,
    StartEventPanel,
    TimerPanel,
    process_start_choices,
)
from webapp.designer.panels.fields import ToolFields, input_rows
from webapp.designer.panels.structure import (
    AdHocSubProcessPanel,
    CallActivityPanel,
    ComplexGatewayPanel,
    EventGatewayPanel,
    FlowPanel,
    PlainPanel,
    SubProcessPanel,
)
from webapp.designer.panels.tasks import (
    BusinessRuleTaskPanel,
    ManualTaskPanel,
    ReceiveTaskPanel,
    ScriptTaskPanel,
    SendTaskPanel,
    ServiceTaskPanel,
    UserTaskPanel,
)
from webapp.process.bpmn.writer import xml_safe

PANELS: dict[str, type[PanelForm]] = {
    "startEvent": StartEventPanel,
    "endEvent": EndEventPanel,
    "userTask": UserTaskPanel,
    "serviceTask": ServiceTaskPanel,
    "sendTask": SendTaskPanel,
    "receiveTask": ReceiveTaskPanel,
    "scriptTask": ScriptTaskPanel,
    "manualTask": ManualTaskPanel,
    "exclusiveGateway": PlainPanel,
    "parallelGateway": PlainPanel,
    "inclusiveGateway": PlainPanel,
    "eventBasedGateway": EventGatewayPanel,
    "complexGateway": ComplexGatewayPanel,
    "adHocSubProcess": AdHocSubProcessPanel,
    "timerCatch": TimerPanel,
    "messageCatch": MessagePanel,
    "signalCatch": SignalCatchPanel,
    "conditionalCatch": ConditionalCatchPanel,
    "signalThrow": SignalThrowPanel,
    "messageThrow": MessageThrowPanel,
    "linkThrow": LinkPanel,
    "linkCatch": LinkPanel,
    "milestone": PlainPanel,
    "subProcess": SubProcessPanel,
    "eventSubProcess": PlainPanel,
    "callActivity": CallActivityPanel,
    "boundaryEvent": BoundaryPanel,
    "escalationThrow": EscalationThrowPanel,
    "businessRuleTask": BusinessRuleTaskPanel,
    # Compensation and transactions.
    "compensationThrow": CompensationThrowPanel,
    "transaction": SubProcessPanel,
    FLOW: FlowPanel,
}


def make_form(kind: str, context: PanelContext, **kwargs: Any) -> PanelForm:
    """A panel form for `kind` with its database choices filled in.

    A stored value that is no longer offered (a user who left the partition, a removed tool)
    stays selectable so opening and applying the panel does not lose it; nothing else is added.
    """
    form = PANELS[kind](**kwargs)
    stored = original_values(form)
    if isinstance(form, UserTaskPanel):
        assignee = stored["assignee"] if isinstance(stored.get("assignee"), dict) else {}
        kept = {assignee.get("type"): assignee.get("value")}
        form.assignee_user.choices = _with_current(
            [SelectChoice("", "— choose a user —"), *context.users], kept.get("user")
        )
        form.assignee_role.choices = _with_current(
            [SelectChoice("", "— choose a role —"), *context.roles], kept.get("role")
        )
    if isinstance(form, CallActivityPanel):
        form.called.choices = _with_current(
            [SelectChoice("", "— choose a process —"), *context.processes], stored.get("process")
        )
    if isinstance(form, BusinessRuleTaskPanel):
        form.known_decisions = list(context.decisions)
    if isinstance(form, ToolFields):
        tools = [SelectChoice(name, name) for name in context.tools]
        form.tool.choices = _with_current(
            [SelectChoice("", "— choose a tool —"), *tools], stored.get("tool")
        )
    if isinstance(form, StartEventPanel) and form.scope.data != "event":
        process_start_choices(form, stored, fresh=kwargs.get("formdata", True) is None)
    return form


def _with_current(choices: list[SelectChoice], current: Any) -> list[SelectChoice]:
    """Keep a stored value selectable even when it is no longer offered (so it is not lost)."""
    if current and current not in {c.value for c in choices}:
        choices.append(SelectChoice(str(current), f"{current} (not available here)"))
    return choices


def initial_data(kind: str, element_id: str, title: str, values: Mapping[str, Any]) -> dict:
    """Form data for an element: `values` is a node's config, or a flow's condition/default."""
    return {
        "element_id": element_id,
        "kind": kind,
        "title": title,
        "original": json.dumps(dict(values), sort_keys=True),
        **PANELS[kind].load(values),
    }


def with_tool_inputs(data: dict[str, Any], context: PanelContext) -> dict[str, Any]:
    """One input row per input the chosen tool declares (for the kinds that call a tool)."""
    panel = PANELS.get(data.get("kind") or "")
    tool_panel = panel is not None and issubclass(panel, ToolFields)
    if tool_panel and isinstance(data.get("inputs"), list):
        data["inputs"] = input_rows(context.tools.get(data.get("tool") or ""), data["inputs"])
    return data


def read_values(form: PanelForm, context: PanelContext) -> dict[str, Any]:
    """The submitted element as {"title", "config"} (nodes) or {"title", "condition", "default"}.

    Adds inline errors to `form` for values that would not work; check `has_errors` afterwards.
    """
    title = (form.title.data or "").strip()
    if not xml_safe(title):
        form.title.errors.append("The title contains control characters; remove them.")
    return form.read(title, context)
