"""The panels of the ad-hoc part's kinds apply the config they show: ad-hoc sub-processes,
complex gateways, instantiating receive tasks and event-based gateways, cycle timer catches;
and a bad value is an inline error, not a saved setting."""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.datastructures import MultiDict

from webapp.designer.panels import initial_data, make_form, read_values
from webapp.designer.panels.base import PanelContext, has_errors

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("adHocSubProcess", {}),
    (
        "adHocSubProcess",
        {
            "activate": "$vars.plan",
            "ordering": "sequential",
            "completion": "$vars.done == true",
            "cancelRemaining": False,
        },
    ),
    ("complexGateway", {"activation": "$gateway.arrived >= 2"}),
    ("complexGateway", {}),
    ("receiveTask", {"message": "order", "instantiate": True}),
    ("eventBasedGateway", {"instantiate": True, "gatewayType": "parallel"}),
    ("eventBasedGateway", {"instantiate": True}),
    ("timerCatch", {"cycle": "R3/PT1H"}),
]


@pytest.mark.parametrize(("kind", "config"), CONFIGS)
def test_a_panel_applies_the_config_it_shows(app, kind, config):
    context = PanelContext()
    with app.test_request_context():
        data = initial_data(kind, "node", "Node", config)
        form = make_form(kind, context, formdata=None, data=data)
        values = read_values(form, context)
    assert not has_errors(form), form.errors
    assert values == {"title": "Node", "config": config}


@pytest.mark.parametrize(
    ("kind", "fields", "field"),
    [
        ("timerCatch", {"timer_type": "cycle", "cycle": "every hour"}, "cycle"),
        ("timerCatch", {"timer_type": "cycle", "cycle": ""}, "cycle"),
        ("complexGateway", {"activation": "$gateway.arrived >"}, "activation"),
        ("adHocSubProcess", {"ordering": "parallel", "completion": "a =="}, "completion"),
    ],
)
def test_a_bad_value_is_an_inline_error(app, kind, fields, field):
    context = PanelContext()
    with app.test_request_context():
        data = MultiDict({"title": "Node", "kind": kind, **fields})
        form = make_form(kind, context, formdata=data)
        form.validate()
        read_values(form, context)
    assert form[field].errors
