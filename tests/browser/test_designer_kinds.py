"""The canvas reads each element's kind from the server's kind table, as the BPMN reader does:
an element of every kind, selected in Chromium, opens the panel of that kind."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import sign_in
from tests.browser.test_designer import open_designer, panel_for
from tests.designer import conftest as designer_fixtures
from webapp.process.kinds import KINDS

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process

#: The config a kind needs to be written as its own element (a boundary event needs a host and
#: an event; an event sub-process start an event).
CONFIGS = {
    "boundaryEvent": {"attachedTo": "n_userTask", "event": "timer", "duration": "PT1H"},
    "timerCatch": {"duration": "PT5M"},
}


def every_kind() -> dict:
    nodes: dict = {}
    for index, kind in enumerate(k for k in KINDS if k != "eventSubProcess"):
        nodes[f"n_{kind}"] = {
            "kind": kind,
            "title": "",
            "config": dict(CONFIGS.get(kind, {})),
            "position": {"x": 80 + (index % 6) * 180, "y": 80 + (index // 6) * 160},
        }
    host = nodes["n_userTask"]["position"]
    nodes["n_boundaryEvent"]["position"] = {"x": host["x"] + 32, "y": host["y"] + 62}
    nodes["n_eventSubProcess"] = {
        "kind": "eventSubProcess",
        "title": "",
        "config": {},
        "position": {"x": 80, "y": 760, "width": 350, "height": 200},
    }
    nodes["n_eventStart"] = {
        "kind": "startEvent",
        "title": "",
        "parent": "n_eventSubProcess",
        "config": {"event": "timer", "duration": "PT1H"},
        "position": {"x": 120, "y": 840},
    }
    return {"format_version": 1, "nodes": nodes, "flows": {}}


def test_every_kind_opens_its_own_panel(page, make_process):
    doc = every_kind()
    pid = make_process("kinds", doc=doc)
    sign_in(page, "designer")
    open_designer(page, pid)
    for node_id, node in doc["nodes"].items():
        page.evaluate(
            "(id) => modeler.get('selection').select(modeler.get('elementRegistry').get(id))",
            node_id,
        )
        panel = panel_for(page, node_id)
        expect(panel.locator(".panel-title")).to_contain_text(KINDS[node["kind"]].label)
