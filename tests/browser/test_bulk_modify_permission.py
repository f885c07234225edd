"""A user holding instances.modify but not instances.manage suspends instances in bulk from the
list by clicking and typing, on a phone: the form offers only the actions the user may use."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.engine import conftest as engine_conftest
from tests.helpers.app import TEST_PASSWORD, make_user
from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.instances import load, start
from tests.helpers.processes import published
from webapp.services.operations import bulk

pytestmark = pytest.mark.browser

engine = engine_conftest.engine


def test_a_modifier_suspends_in_bulk_on_a_phone(phone_page, data_app, demo, engine):
    page = phone_page
    version = published("held-orders")
    ids = [start(engine, version) for _ in range(2)]
    with data_app.app_context():
        make_user("holder", ["instances.read", "instances.modify"], role="holder")
    sign_in(page, "holder", TEST_PASSWORD)
    page.goto("/operations/instances?process=held-orders")
    action = page.get_by_label("Action")
    offered = action.locator("option").evaluate_all("options => options.map(o => o.value)")
    assert "cancel" not in offered and "retry" not in offered
    assert {"suspend", "resume", "migrate"} <= set(offered)
    for instance_id in ids:
        page.get_by_label(f"Select instance {instance_id}", exact=True).check()
    action.select_option("suspend")
    page.get_by_label("Reason (needed to suspend)").fill("wrong tax rate")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**/operations/bulk/confirm?*")
    page.get_by_role("button", name="Yes, suspend 2 instances").click()
    page.wait_for_url("**/operations/bulk/*")
    expect(page.get_by_role("button", name="Resume")).to_be_visible()  # its action's permission
    operation_id = int(page.url.rsplit("/", 1)[1])
    with data_app.app_context():
        bulk.run(operation_id)  # the worker's part
    expect(page.locator("#bulk-progress")).to_contain_text("2 of 2 done · 2 ok")
    assert serious_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    engine.rollback()
    assert all(load(engine, instance_id).suspend_reason == "wrong tax rate" for instance_id in ids)
