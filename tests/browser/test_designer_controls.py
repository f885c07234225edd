"""Designer polish in Chromium: publish and outline safeguards, the live condition check, zoom
controls and tooltips, label and flow clicks, and room for appended shapes."""

from __future__ import annotations

import pytest

from tests.browser.conftest import sign_in, wait_until
from tests.browser.test_designer import click_flow, open_designer, panel_for
from tests.designer import conftest as designer_fixtures
from tests.designer.conftest import approval_document, get_process

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process


def test_publish_says_up_front_when_nothing_changed(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/publish")
    page.get_by_label("Change note").fill("First")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")
    page.goto(f"/designer/{pid}/publish")
    assert page.get_by_text("the draft is the same as version 1").is_visible()
    assert page.get_by_role("button", name="Publish version 2").count() == 0
    assert page.get_by_role("link", name="Open the designer").is_visible()


def test_outline_connect_defaults_apart_and_delete_asks_first(page, make_process, db_session):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/outline")
    source = page.get_by_label("From", exact=True).input_value()
    target = page.get_by_label("To", exact=True).input_value()
    assert source and target and source != target

    questions = []

    def dismiss(dialog):
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.get_by_role("button", name="Delete Review").click()
    assert questions == ["Delete “Review” and its flows?"]
    assert "review" in get_process(db_session, pid).draft_document["nodes"]

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete Review").click()
    page.wait_for_selector("#node-review", state="detached")
    db_session.expire_all()
    assert "review" not in get_process(db_session, pid).draft_document["nodes"]


def test_the_condition_check_names_data_that_no_step_saves(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_flow(page, "f3", at=0.85)
    panel = panel_for(page, "f3")
    condition = panel.get_by_label("Condition", exact=True)
    condition.fill("")
    condition.press_sequentially("$vars.aproval.approved")
    check = page.locator("#condition-check")
    wait_until(page, "document.getElementById('condition-check').textContent.includes('aproval')")
    assert "no step in the process saves its result to 'aproval'" in check.inner_text()
    assert "Valid expression" not in check.inner_text()
    condition.fill("")
    condition.press_sequentially("$vars.review.approved")
    wait_until(page, "document.getElementById('condition-check').textContent.includes('Valid')")
