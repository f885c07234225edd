"""Each panel class loads a node's config into its form and dumps the form back into the same
config: what the panel shows is what it applies, kind by kind."""

from __future__ import annotations

from typing import Any

import pytest
from wtforms.fields.choices import SelectChoice

from webapp.designer.panel_forms import (
    FLOW,
    PANELS,
    PanelContext,
    has_errors,
    initial_data,
    make_form,
    read_values,
)

CONFIGS: dict[str, dict[str, Any]] = {
    "userTask": {
        "assignee": {"type": "role", "value": "approver"},
        "dueIn": "PT4H",
        "saveTo": "review",
        "multiInstance": {"sequential": False, "collection": "$input.items"},
    },
    "serviceTask": {
        "tool": "http.request",
        "inputs": {},
        "retries": 3,
        "backoff": 2,
        "timeout": 30,
    },
    "timerCatch": {"duration": "PT5M"},
    "messageCatch": {"message": "paid", "correlationKey": "$input.id", "saveTo": "payment"},
    "signalThrow": {"signal": "go", "payload": {"amount": "$input.amount"}},
    "linkThrow": {"link": "Next"},
    "escalationThrow": {"code": "LATE"},
    "endEvent": {"event": "error", "code": "E1"},
    "boundaryEvent": {
        "attachedTo": "review",
        "event": "timer",
        "interrupting": True,
        "duration": "PT1H",
    },
    "scriptTask": {"language": "flowdesk", "script": "total = 1"},
    "callActivity": {"process": "invoice", "binding": "latest", "inputs": {"a": "$input.a"}},
    "subProcess": {"multiInstance": {"sequential": True, "cardinality": "3"}},
    "exclusiveGateway": {},
    "startEvent": {},
}


@pytest.mark.parametrize("kind", sorted(CONFIGS))
def test_a_panel_applies_the_config_it_shows(app, kind):
    context = PanelContext(roles=[SelectChoice("approver", "approver")])
    config = CONFIGS[kind]
    with app.test_request_context():
        data = initial_data(kind, "node", "Node", config)
        form = make_form(kind, context, formdata=None, data=data)
        values = read_values(form, context)
    assert not has_errors(form), form.errors
    assert values == {"title": "Node", "config": config}


def test_a_flow_panel_applies_its_condition_and_default(app):
    context = PanelContext()
    shown = {"condition": "$input.amount > 5", "default": False, "source_kind": "exclusiveGateway"}
    with app.test_request_context():
        form = make_form(FLOW, context, formdata=None, data=initial_data(FLOW, "f", "", shown))
        values = read_values(form, context)
    assert values == {"title": "", "condition": "$input.amount > 5", "default": False}


def test_every_kind_has_a_panel_class_that_loads_a_config():
    for kind, panel in PANELS.items():
        assert isinstance(panel.load({}), dict), kind


def test_the_canvas_says_where_a_start_or_boundary_event_sits_and_other_kinds_ignore_it():
    args = {"scope": "event", "host_name": "Review", "other": "x"}
    assert PANELS["startEvent"].placement(args) == {"scope": "event"}
    assert PANELS["startEvent"].placement({"scope": "nonsense"}) == {"scope": ""}
    assert PANELS["boundaryEvent"].placement(args) == {"host_name": "Review"}
    others = [kind for kind in PANELS if kind not in ("startEvent", "boundaryEvent")]
    assert all(PANELS[kind].placement(args) == {} for kind in others)


def test_the_form_after_an_apply_keeps_where_the_event_sits_and_the_assignee_choice(app):
    context = PanelContext()
    shown = {
        "startEvent": ({"scope": "event"}, {"scope": "event"}),
        "boundaryEvent": ({"host_name": "Review"}, {"host_name": "Review"}),
        "userTask": ({"assignee_type": "role"}, {"assignee_type": "role"}),
        "manualTask": ({}, {}),
    }
    with app.test_request_context():
        for kind, (state, kept) in shown.items():
            data = {**initial_data(kind, "n", "", {}), **state}
            form = make_form(kind, context, formdata=None, data=data)
            assert form.kept_state(initial_data(kind, "n", "", {})) == kept, kind
