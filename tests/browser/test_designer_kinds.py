"""The canvas reads each element's kind from the server's kind table, as the BPMN reader does:
an element of every kind, selected in Chromium, opens the panel of that kind."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import open_designer, panel_for, sign_in
from tests.helpers.designer import every_kind
from webapp.process.kinds import KINDS

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process


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
