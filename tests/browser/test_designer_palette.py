"""The designer's palette and replace menu: every palette entry keeps its place, icon and
tooltip and creates its element, by mouse and by keyboard, and the replace menu offers each
element the same targets (`files/replace_menu.json`, one sorted list per element)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import open_designer, palette_click, save, selected, shape_box, sign_in
from tests.helpers.designer import every_kind, get_process

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process
REPLACE_MENUS = Path(__file__).parent / "files" / "replace_menu.json"
BOUNDARY_HINT = " (drop it on the border of a task, sub-process or call activity)"

#: Each palette entry in order: its group, icon, tooltip, and the kind and `event` the element
#: it creates is read as (`None`: bpmn-js's own tools).
PALETTE = [
    ("hand-tool", "tools", "bpmn-icon-hand-tool", "Activate hand tool", None),
    ("lasso-tool", "tools", "bpmn-icon-lasso-tool", "Activate lasso tool", None),
    ("space-tool", "tools", "bpmn-icon-space-tool", "Activate create/remove space tool", None),
    ("global-connect-tool", "tools", "bpmn-icon-connection-multi",
     "Activate global connect tool", None),
    ("tool-separator", "tools", "", "", None),
    ("create.start-event", "event", "bpmn-icon-start-event-none", "Create start event",
     ("startEvent", None)),
    ("create.end-event", "event", "bpmn-icon-end-event-none", "Create end event",
     ("endEvent", None)),
    ("create.adhoc-subprocess", "activity", "bpmn-icon-ad-hoc-subprocess",
     "Create ad-hoc sub-process (its activities run when activated)", ("adHocSubProcess", None)),
    ("create.transaction", "activity", "bpmn-icon-transaction",
     "Create transaction (a sub-process a cancel end undoes)", ("transaction", None)),
    ("create.subprocess-expanded", "activity", "bpmn-icon-subprocess-expanded",
     "Create sub-process (expanded, with its start event)", ("subProcess", None)),
    ("create.event-subprocess", "activity", "bpmn-icon-event-subprocess-expanded",
     "Create event sub-process (started by a timer, message, error or escalation)",
     ("eventSubProcess", None)),
    ("create.user-task", "activity", "bpmn-icon-user-task", "Create user task",
     ("userTask", None)),
    ("create.service-task", "activity", "bpmn-icon-service-task", "Create service task",
     ("serviceTask", None)),
    ("create.call-activity", "activity", "bpmn-icon-call-activity",
     "Create call activity (starts another process)", ("callActivity", None)),
    ("create.send-task", "activity", "bpmn-icon-send-task",
     "Create send task (a tool sends a message)", ("sendTask", None)),
    ("create.receive-task", "activity", "bpmn-icon-receive-task",
     "Create receive task (waits for a message)", ("receiveTask", None)),
    ("create.script-task", "activity", "bpmn-icon-script-task",
     "Create script task (assignments in Flowdesk expressions)", ("scriptTask", None)),
    ("create.manual-task", "activity", "bpmn-icon-manual-task",
     "Create manual task (work outside Flowdesk; passes through)", ("manualTask", None)),
    ("create.business-rule-task", "activity", "bpmn-icon-business-rule-task",
     "Create business rule task (evaluates a published DMN decision)",
     ("businessRuleTask", None)),
    ("create.exclusive-gateway", "gateway", "bpmn-icon-gateway-none", "Create gateway",
     ("exclusiveGateway", None)),
    ("create.parallel-gateway", "gateway", "bpmn-icon-gateway-parallel",
     "Create parallel gateway", ("parallelGateway", None)),
    ("create.inclusive-gateway", "gateway", "bpmn-icon-gateway-or",
     "Create inclusive gateway (takes every flow whose condition holds)",
     ("inclusiveGateway", None)),
    ("create.event-based-gateway", "gateway", "bpmn-icon-gateway-eventbased",
     "Create event-based gateway (the first event after it wins)", ("eventBasedGateway", None)),
    ("create.complex-gateway", "gateway", "bpmn-icon-gateway-complex",
     "Create complex gateway (goes on once its activation condition holds)",
     ("complexGateway", None)),
    ("create.conditional-catch", "intermediate", "bpmn-icon-intermediate-event-catch-condition",
     "Create conditional catch (wait until a condition on the data holds; on an activity's "
     "border: a conditional boundary event)", ("conditionalCatch", None)),
    ("create.timer-catch", "intermediate", "bpmn-icon-intermediate-event-catch-timer",
     "Create timer (wait; on an activity's border: a timer boundary event)",
     ("timerCatch", None)),
    ("create.message-catch", "intermediate", "bpmn-icon-intermediate-event-catch-message",
     "Create message catch (wait for a message; on an activity's border: a message boundary "
     "event)", ("messageCatch", None)),
    ("create.escalation-throw", "intermediate", "bpmn-icon-intermediate-event-throw-escalation",
     "Create escalation (throw; the flow goes on)", ("escalationThrow", None)),
    ("create.signal-catch", "intermediate", "bpmn-icon-intermediate-event-catch-signal",
     "Create signal catch (wait for a signal; on an activity's border: a signal boundary event)",
     ("signalCatch", None)),
    ("create.signal-throw", "intermediate", "bpmn-icon-intermediate-event-throw-signal",
     "Create signal throw (broadcasts a signal; the flow goes on)", ("signalThrow", None)),
    ("create.message-throw", "intermediate", "bpmn-icon-intermediate-event-throw-message",
     "Create message throw (a tool sends a message; the flow goes on)", ("messageThrow", None)),
    ("create.link-throw", "intermediate", "bpmn-icon-intermediate-event-throw-link",
     "Create link throw (jumps to the link catch of the same name)", ("linkThrow", None)),
    ("create.link-catch", "intermediate", "bpmn-icon-intermediate-event-catch-link",
     "Create link catch (where a link throw of the same name continues)", ("linkCatch", None)),
    ("create.milestone", "intermediate", "bpmn-icon-intermediate-event-none",
     "Create milestone (recorded in the history; the flow goes on)", ("milestone", None)),
    ("create.compensation-throw", "intermediate", "bpmn-icon-intermediate-event-throw-compensation",
     "Create compensation throw (undoes completed activities, then goes on)",
     ("compensationThrow", None)),
    ("create.error-boundary", "boundary", "bpmn-icon-intermediate-event-catch-error",
     "Create error boundary event" + BOUNDARY_HINT, ("boundaryEvent", "error")),
    ("create.escalation-boundary", "boundary", "bpmn-icon-intermediate-event-catch-escalation",
     "Create escalation boundary event" + BOUNDARY_HINT, ("boundaryEvent", "escalation")),
    ("create.compensation-boundary", "boundary", "bpmn-icon-intermediate-event-catch-compensation",
     "Create compensation boundary event (connect it to its handler)" + BOUNDARY_HINT,
     ("boundaryEvent", "compensate")),
    ("create.message-start", "start", "bpmn-icon-start-event-message",
     "Create message start event (a message starts the process)", ("startEvent", "message")),
    ("create.timer-start", "start", "bpmn-icon-start-event-timer",
     "Create timer start event (starts the process at a date or on a schedule)",
     ("startEvent", "timer")),
    ("create.signal-start", "start", "bpmn-icon-start-event-signal",
     "Create signal start event (a signal starts the process)", ("startEvent", "signal")),
    ("create.conditional-start", "start", "bpmn-icon-start-event-condition",
     "Create conditional start event (started through the conditions API when its condition "
     "holds)", ("startEvent", "conditional")),
    ("create.error-end", "end", "bpmn-icon-end-event-error", "Create error end event",
     ("endEvent", "error")),
    ("create.escalation-end", "end", "bpmn-icon-end-event-escalation",
     "Create escalation end event", ("endEvent", "escalation")),
    ("create.terminate-end", "end", "bpmn-icon-end-event-terminate",
     "Create terminate end event (ends everything in its scope)", ("endEvent", "terminate")),
    ("create.signal-end", "end", "bpmn-icon-end-event-signal",
     "Create signal end event (broadcasts a signal, then the path ends)", ("endEvent", "signal")),
    ("create.message-end", "end", "bpmn-icon-end-event-message",
     "Create message end event (a tool sends a message, then the path ends)",
     ("endEvent", "message")),
    ("create.compensation-end", "end", "bpmn-icon-end-event-compensation",
     "Create compensation end event (undoes completed activities)", ("endEvent", "compensate")),
]  # fmt: skip
CREATES = {action: made for action, *_, made in PALETTE if made}
CATCHES = {
    "create.timer-catch": "bpmn:TimerEventDefinition",
    "create.message-catch": "bpmn:MessageEventDefinition",
    "create.signal-catch": "bpmn:SignalEventDefinition",
    "create.conditional-catch": "bpmn:ConditionalEventDefinition",
}
ATTACHED_TO = "(id) => modeler.get('elementRegistry').get(id).businessObject.attachedToRef.id"

PALETTE_ENTRIES = """() => {
  const entries = modeler.get('palette').getEntries();
  return Object.keys(entries).map((id) => [id, entries[id].group,
    entries[id].className || '', entries[id].title || '']);
}"""
#: What bpmn-js made: the type and definitions of the new shape and of the shapes inside it.
SHAPE = """(id) => {
  const describe = (element) => {
    const bo = element.businessObject;
    return [bo.$type, (bo.eventDefinitions || []).map((d) => d.$type).join(),
      !!bo.triggeredByEvent, !!(element.children || []).length && !element.collapsed];
  };
  const element = modeler.get('elementRegistry').get(id);
  return [describe(element), ...(element.children || []).filter((c) => !c.waypoints
    && c.type !== 'label').map(describe)];
}"""
REPLACE_MENU = """(id) => {
  const element = modeler.get('elementRegistry').get(id);
  const popup = modeler.get('popupMenu');
  popup.open(element, 'bpmn-replace', {x: 0, y: 0});
  const ids = Array.from(document.querySelectorAll('.djs-popup .entry')).map((e) => e.dataset.id);
  popup.close();
  return ids.sort();
}"""


def host_document() -> dict:
    """One user task for boundary events to go on."""
    task = {"kind": "userTask", "title": "Host", "config": {}}
    task["position"] = {"x": 500, "y": 400, "width": 100, "height": 80}
    return {"format_version": 1, "nodes": {"host": task}, "flows": {}}


def test_every_palette_entry_keeps_its_place_and_creates_its_element(
    page, make_process, db_session
):
    pid = make_process("palette", doc=host_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    assert page.evaluate(PALETTE_ENTRIES) == [list(entry[:4]) for entry in PALETTE]
    shown = page.eval_on_selector_all(".djs-palette .entry", "es => es.map(e => e.dataset.action)")
    assert shown == [entry[0] for entry in PALETTE if entry[0] != "tool-separator"]

    # By mouse: each entry's element dropped on the canvas (a boundary event on the task's
    # border), then taken away again.
    host = shape_box(page, "host")
    canvas = page.locator("#canvas").bounding_box()
    dropped: dict[str, list] = {}
    for action, (kind, _) in CREATES.items():
        if kind == "boundaryEvent":
            x, y = host["x"] + host["width"] / 2, host["y"] + host["height"]
        else:
            x, y = canvas["x"] + 300, canvas["y"] + 150
        element_id = palette_click(page, action, x, y)
        page.keyboard.press("Escape")
        assert element_id not in ("", "host"), action
        dropped[action] = page.evaluate(SHAPE, element_id)
        page.evaluate("modeler.get('commandStack').undo()")
    # A catch dropped on the task's border becomes a boundary event there, and is selected.
    for action, definition in CATCHES.items():
        x, y = host["x"] + host["width"] * 0.3, host["y"] + host["height"]
        element_id = palette_click(page, action, x, y)
        page.keyboard.press("Escape")
        assert page.evaluate(SHAPE, element_id)[0][:2] == ["bpmn:BoundaryEvent", definition]
        assert page.evaluate(ATTACHED_TO, element_id) == "host"
        page.evaluate("modeler.get('commandStack').undo()")

    # By keyboard: each entry adds its element in view (a boundary event on the selected task).
    made: dict[str, str] = {}
    for action, (kind, _) in CREATES.items():
        page.evaluate(
            "(host) => modeler.get('selection').select(host ? "
            "modeler.get('elementRegistry').get('host') : [])",
            kind == "boundaryEvent",
        )
        page.locator(f'.djs-palette .entry[data-action="{action}"]').press("Enter")
        made[action] = selected(page)[0]
    assert {action: page.evaluate(SHAPE, element_id) for action, element_id in made.items()} == (
        dropped
    ), "the same elements as by mouse"
    save(page)
    nodes = get_process(db_session, pid).draft_document["nodes"]
    read = {
        action: (nodes[element_id]["kind"], nodes[element_id]["config"].get("event"))
        for action, element_id in made.items()
    }
    assert read == CREATES
    for scope in ("create.subprocess-expanded", "create.event-subprocess"):
        inside = [node for node in nodes.values() if node.get("parent") == made[scope]]
        assert [node["kind"] for node in inside] == ["startEvent"]


def replace_document() -> dict:
    """An element of every kind, and the places where the menu differs: typed starts and ends,
    a start in a sub-process and in an event sub-process, a non-interrupting boundary event, a
    collapsed sub-process, flows out of a gateway and out of a task."""
    doc = every_kind()
    nodes = doc["nodes"]
    scope = nodes["n_subProcess"]["position"]
    inner = {"x": scope["x"] + 40, "y": scope["y"] + 80}
    event_scope = nodes["n_eventSubProcess"]["position"]
    extra = {
        "n_errorEnd": ("endEvent", {"event": "error"}, None, {"x": 1200, "y": 100}),
        "n_messageEnd": ("endEvent", {"event": "message"}, None, {"x": 1200, "y": 200}),
        "n_timerStart": ("startEvent", {"event": "timer", "cycle": "R/P1D"}, None,
                         {"x": 1200, "y": 300}),
        "n_innerStart": ("startEvent", {}, "n_subProcess", inner),
        "n_eventEnd": ("endEvent", {"event": "error"}, "n_eventSubProcess",
                       {"x": event_scope["x"] + 200, "y": event_scope["y"] + 80}),
        "n_lenient": ("boundaryEvent", {"attachedTo": "n_serviceTask", "event": "message",
                                        "interrupting": False}, None, None),
        "n_collapsed": ("subProcess", {"collapsed": True}, None, {"x": 1200, "y": 420}),
    }  # fmt: skip
    for node_id, (kind, config, parent, position) in extra.items():
        nodes[node_id] = {"kind": kind, "title": "", "config": config}
        if parent:
            nodes[node_id]["parent"] = parent
        if position:
            nodes[node_id]["position"] = position
    service = nodes["n_serviceTask"]["position"]
    nodes["n_lenient"]["position"] = {"x": service["x"] + 32, "y": service["y"] + 62}
    doc["flows"] = {
        "f_gateway": {"source": "n_exclusiveGateway", "target": "n_parallelGateway"},
        "f_task": {"source": "n_serviceTask", "target": "n_manualTask"},
    }
    return doc


def test_the_replace_menu_offers_each_element_the_same_targets(page, make_process):
    doc = replace_document()
    pid = make_process("replace", doc=doc)
    sign_in(page, "designer")
    open_designer(page, pid)
    menus = {
        element_id: page.evaluate(REPLACE_MENU, element_id)
        for element_id in [*doc["nodes"], *doc["flows"]]
    }
    assert menus == json.loads(REPLACE_MENUS.read_text(encoding="utf-8"))
