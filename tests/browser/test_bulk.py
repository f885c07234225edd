"""An operator selects instances for a bulk cancel in Chromium: select-all, a refused submit that
keeps the ticks, and the "Cancel N instances?" confirmation; and the same without JavaScript."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import sign_in
from tests.helpers.instances import start
from tests.helpers.processes import published
from webapp.models import BulkItem, BulkOperation

pytestmark = pytest.mark.browser

engine = engine_conftest.engine
test_tools = engine_conftest.test_tools


def _row_box(page, instance_id: int):
    return page.get_by_label(f"Select instance {instance_id}", exact=True)


def _operations(engine) -> int:
    engine.rollback()
    return engine.scalar(select(func.count()).select_from(BulkOperation))


def test_select_all_a_refused_cancel_keeps_the_ticks_and_a_cancel_is_confirmed(page, demo, engine):
    version = published("invoice")
    ids = [start(engine, version) for _ in range(3)]
    sign_in(page, "operator")
    page.goto("/operations/instances?process=invoice")
    action = page.get_by_label("Action")
    assert action.input_value() == "", "no action, least of all Cancel, is chosen by default"

    select_all = page.get_by_label("Select all instances on this page")
    select_all.check()
    for instance_id in ids:
        expect(_row_box(page, instance_id)).to_be_checked()
    _row_box(page, ids[0]).uncheck()
    assert page.evaluate("document.querySelector('[data-select-all]').indeterminate")

    action.select_option("cancel")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**/operations/instances?process=invoice&failed=*")
    summary = page.get_by_role("alert").filter(has_text="Say why these instances are cancelled.")
    expect(summary).to_be_visible()
    expect(summary).to_be_focused()
    expect(_row_box(page, ids[0])).not_to_be_checked()
    for instance_id in ids[1:]:
        expect(_row_box(page, instance_id)).to_be_checked()
    assert action.input_value() == "cancel"
    page.reload()
    expect(_row_box(page, ids[1])).to_be_checked()

    page.get_by_label("Reason (needed to cancel or suspend)").fill("sent twice")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**/operations/bulk/confirm?*")
    expect(page.get_by_role("heading", name="Cancel 2 instances?")).to_be_visible()
    page.get_by_role("link", name="No, go back").click()
    page.wait_for_url("**/operations/instances?*")
    expect(_row_box(page, ids[0])).not_to_be_checked()
    expect(_row_box(page, ids[2])).to_be_checked()
    assert _operations(engine) == 0, "nothing happens before the confirmation"

    page.get_by_role("button", name="Apply").click()
    page.get_by_role("button", name="Yes, cancel 2 instances").click()
    page.wait_for_url(re.compile(r"/operations/bulk/\d+$"))
    assert _operations(engine) == 1
    chosen = engine.scalars(select(BulkItem.instance_id).order_by(BulkItem.instance_id)).all()
    assert chosen == sorted(ids[1:])


def test_bulk_cancel_works_without_javascript(browser, live_server, demo, engine):
    version = published("invoice")
    ids = [start(engine, version) for _ in range(2)]
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        sign_in(page, "operator")
        page.goto("/operations/instances?process=invoice")
        expect(page.get_by_label("Select all instances on this page")).to_be_hidden()
        _row_box(page, ids[0]).check()
        page.get_by_label("Action").select_option("cancel")
        page.get_by_label("Reason (needed to cancel or suspend)").fill("test")
        page.get_by_role("button", name="Apply").click()
        expect(page.get_by_role("heading", name="Cancel 1 instance?")).to_be_visible()
        page.get_by_role("button", name="Yes, cancel 1 instance").click()
        page.wait_for_url(re.compile(r"/operations/bulk/\d+$"))
        assert _operations(engine) == 1
    finally:
        context.close()
