"""An operator suspends an instance from its page with a reason, sees who, when and why in the
header and the diagram, and resumes it; and suspends a version from its versions page, at 1280
and 390 pixels, by keyboard too."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.instances import history, load, start
from tests.helpers.processes import published
from webapp.services.operations import bulk

pytestmark = pytest.mark.browser

engine = engine_conftest.engine


def test_suspend_and_resume_an_instance_by_clicking_and_typing(page, demo, engine):
    instance_id = start(engine, published("invoice"))
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.get_by_text("Suspend instance…").click()
    page.get_by_label("Why it is suspended").fill("waiting for the auditor")
    page.get_by_role("button", name=f"Yes, suspend instance {instance_id}").click()

    banner = page.locator("#suspension")
    expect(banner.get_by_role("heading", name="Suspended")).to_be_visible()
    expect(banner).to_contain_text("by operator")
    expect(banner).to_contain_text("Reason: waiting for the auditor")
    expect(page.locator(".op-diagram-suspended")).to_contain_text("suspended")
    expect(page.locator("[data-instance-viewer]")).to_have_attribute(
        "aria-label", re.compile("suspended")
    )
    assert serious_violations(page) == []
    assert load(engine, instance_id).suspend_reason == "waiting for the auditor"

    page.get_by_label("Note (optional)").fill("auditor done")
    resume = page.get_by_role("button", name=f"Resume instance {instance_id}")
    resume.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_text("Suspend instance…")).to_be_visible()
    expect(page.locator("#suspension")).to_have_count(0)
    kinds = [kind for kind, _ in history(engine, instance_id)]
    assert kinds.index("suspended") < kinds.index("resumed")
    assert load(engine, instance_id).suspended_at is None


def test_suspend_a_version_and_filter_its_suspended_instances_on_a_phone(
    phone_page, data_app, demo, engine
):
    page = phone_page
    version = published("invoice")
    ids = [start(engine, version) for _ in range(2)]
    sign_in(page, "operator")
    page.goto("/operations/processes/invoice/versions")
    page.get_by_text(f"Suspend v{version.number}…").click()
    page.get_by_label("Reason").fill("wrong tax rate")
    page.get_by_label("Suspend its 2 running instances too").check()
    page.get_by_role("button", name=f"Yes, suspend v{version.number}").click()
    page.wait_for_url("**/operations/bulk/*")
    with data_app.app_context():
        bulk.run(int(page.url.rsplit("/", 1)[1]))  # the worker's part
    expect(page.locator("#bulk-progress")).to_contain_text("2 of 2 done · 2 ok")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.goto("/operations/processes/invoice/versions")
    expect(page.locator("table.op-versions")).to_contain_text("wrong tax rate")
    assert serious_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.goto("/operations/instances?suspended=1&process=invoice")
    expect(page.get_by_label("Suspended", exact=True)).to_have_value("1")
    for instance_id in ids:
        expect(page.get_by_role("link", name=f"#{instance_id}", exact=True)).to_be_visible()
    page.goto("/operations/instances?suspended=0&process=invoice")
    expect(page.get_by_label("Suspended", exact=True)).to_have_value("0")
    for instance_id in ids:
        expect(page.get_by_role("link", name=f"#{instance_id}", exact=True)).to_have_count(0)
