"""In Chromium: a Signavio file with a generated id is imported under a key made from its name,
shown first with the focus on it; publishing without the required note puts the focus on what
is wrong, and the note field leads there."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.helpers.bpmn import SIGNAVIO
from tests.helpers.browser import serious_violations, sign_in

pytestmark = pytest.mark.browser


def test_the_key_is_confirmed_and_a_refused_publish_focuses_the_note(page, demo, tmp_path):
    upload = tmp_path / "order.bpmn"
    upload.write_bytes(SIGNAVIO.replace(b'isExecutable="false"', b'isExecutable="true"'))
    sign_in(page, "designer")
    page.goto("/designer/import")
    page.get_by_label("BPMN or JSON file").set_input_files(str(upload))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("status")).to_contain_text("order-handling")
    expect(page.get_by_label("Key")).to_be_focused()
    expect(page.get_by_label("Key")).to_have_value("order-handling")
    assert serious_violations(page) == []
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("heading", name="Import report: Order handling")).to_be_visible()

    page.goto(page.url.replace("/import-report", "/publish"))
    expect(page.get_by_text("Change note (required)")).to_be_visible()
    page.get_by_role("button", name="Publish version 1").click()
    summary = page.locator("#errors")
    expect(summary).to_be_focused()
    expect(summary).to_contain_text("Say in a few words what changed.")
    assert serious_violations(page) == []
    summary.get_by_role("link", name="Change note (required)").click()
    expect(page.get_by_label("Change note (required)")).to_be_focused()
    page.get_by_label("Change note (required)").fill("Imported from Signavio")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")
