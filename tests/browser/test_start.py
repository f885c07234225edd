"""Alice starts published processes from the Start page and watches them run."""

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import sign_in
from tests.helpers.documents import FORM, chain, node
from tests.helpers.processes import publish_document
from tests.helpers.workers import run_burst

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
    assert page.get_by_role("heading", name="Waiting for").is_visible()
    assert page.locator(".now-at").inner_text().startswith("Review")
    assert page.locator(".now-at").get_by_role("link").count() == 0, "a task for approvers"
    page.get_by_text("Your input").click()
    inputs = page.locator("#instance-input")
    expect(inputs.get_by_text("Amount")).to_be_visible()
    expect(inputs.get_by_text("Food", exact=True)).to_be_visible()
    assert "{" not in inputs.inner_text()


def test_alice_starts_a_process_and_sees_it_complete(page, processes, app_config):
    sign_in(page, "alice")
    page.goto("/inbox/processes")
    page.get_by_role("button", name="Start quick").click()
    page.wait_for_url("**/inbox/instances/*")
    assert page.locator("#instance-status").inner_text() == "Running"
    run_burst(app_config)
    expect(page.locator("#instance-status")).to_have_text("Completed", timeout=15_000)
    steps = page.locator("#instance-history")
    expect(steps.get_by_role("cell", name="Completed", exact=True)).to_be_visible()
    expect(steps.get_by_role("cell", name="Started", exact=True)).to_be_visible()
    assert "tool attempt" not in steps.inner_text() and "entered" not in steps.inner_text()


def test_a_requester_follows_a_request_at_phone_width(phone_page, processes, app):
    """The requester's page at 390 px: what it waits for, the steps so far, readable input."""
    from tests.helpers.browser import serious_violations

    sign_in(phone_page, "alice")
    phone_page.goto("/inbox/processes/expense/start")
    phone_page.get_by_label("Amount").fill("250")
    phone_page.get_by_role("button", name="Start", exact=True).click()
    phone_page.wait_for_url("**/inbox/instances/*")
    expect(phone_page.get_by_role("heading", name="Steps so far")).to_be_visible()
    expect(phone_page.locator("#instance-history")).to_contain_text("Waiting for Review")
    summary = phone_page.get_by_text("Your input")
    summary.focus()
    phone_page.keyboard.press("Enter")
    expect(phone_page.locator("#instance-input").get_by_text("250")).to_be_visible()
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    assert serious_violations(phone_page) == []
    phone_page.goto("/inbox/requests")
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390


def test_the_start_page_fits_a_phone(phone_page, processes):
    sign_in(phone_page, "alice")
    phone_page.goto("/inbox/processes")
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
