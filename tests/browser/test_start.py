"""Alice starts published processes from the Start page and watches them run."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import sign_in
from tests.engine.conftest import FORM, chain, node, publish_document, run_burst

pytestmark = pytest.mark.browser


@pytest.fixture
def processes(app, demo):
    with app.app_context():
        review = (
            "review",
            node("userTask", "Review", assignee={"type": "role", "value": "approver"}),
        )
        expense = chain(review)
        expense["nodes"]["start"]["config"]["form"] = FORM
        publish_document(expense, key="expense")
        publish_document(chain(("check", node("serviceTask", "Check", tool="noop"))), key="quick")


def test_alice_starts_a_process_with_a_start_form(page, processes):
    sign_in(page, "alice")
    page.goto("/inbox/processes")
    page.get_by_role("link", name="Start expense…").click()
    page.get_by_label("Amount").fill("0")
    page.get_by_role("button", name="Start", exact=True).click()
    assert page.locator("#field-amount-msg").inner_text() == "Amount must be at least 1"
    page.get_by_label("Amount").fill("250")
    assert page.get_by_label("Venue").count() == 0
    page.get_by_label("Kind").select_option("food")
    page.get_by_label("Venue").fill("Canteen")  # appears once Food is chosen (htmx refresh)
    assert page.get_by_label("Amount").input_value() == "250", "the refresh keeps typed values"
    page.get_by_label("Business key").fill("EXP-1")
    page.get_by_role("button", name="Start", exact=True).click()
    page.wait_for_url("**/inbox/instances/*")
    assert page.locator("#instance-status").inner_text() == "Running"
    assert page.get_by_role("heading", name="Now at").is_visible()
    assert page.locator(".now-at").inner_text().startswith("Review")


def test_alice_starts_a_process_and_sees_it_complete(page, processes, app_config):
    sign_in(page, "alice")
    page.goto("/inbox/processes")
    page.get_by_role("button", name="Start quick").click()
    page.wait_for_url("**/inbox/instances/*")
    assert page.locator("#instance-status").inner_text() == "Running"
    run_burst(app_config)
    expect(page.locator("#instance-status")).to_have_text("Completed", timeout=15_000)
    assert page.get_by_role("cell", name="tool attempt (ok)").is_visible()


def test_the_start_page_fits_a_phone(phone_page, processes):
    sign_in(phone_page, "alice")
    phone_page.goto("/inbox/processes")
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
