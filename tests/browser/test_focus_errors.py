"""A failed form moves focus to a summary of its errors, whose links lead to each field."""

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import sign_in
from tests.helpers.documents import FORM, chain, node
from tests.helpers.instances import start_latest
from tests.helpers.processes import publish_document

pytestmark = pytest.mark.browser

TASK_FORM = {
    "fields": [
        {"key": "amount", "label": "Amount", "type": "number", "required": True, "min": 1},
        {"key": "reason", "label": "Reason", "type": "text", "required": True},
    ]
}

ACTIVE = "document.activeElement.id"


@pytest.fixture
def processes(app, demo):
    with app.app_context():
        alice = {"type": "user", "value": "alice"}
        review = node("userTask", "Review expense", assignee=alice, form=TASK_FORM)
        publish_document(chain(("review", review)), key="claim")
        first = ("first", node("userTask", "Look", assignee={"type": "role", "value": "approver"}))
        expense = chain(first)
        expense["nodes"]["start"]["config"]["form"] = FORM
        publish_document(expense, key="expense")


def test_a_task_form_swapped_in_with_errors_focuses_its_summary(page, processes, app):
    start_latest(app, "claim")
    sign_in(page, "alice")
    page.goto("/inbox/")
    page.get_by_role("link", name="Review expense").click()
    page.get_by_label("Amount").fill("0")
    page.get_by_role("button", name="Complete").click()
    summary = page.locator("#errors")
    summary.wait_for()
    expect(summary.locator("li")).to_have_text(["Amount must be at least 1", "Reason is required"])
    expect(page.locator("#errors")).to_be_focused()  # the summary, not <body>

    summary.get_by_role("link", name="Reason").click()
    assert page.evaluate(ACTIVE) == "field-reason"
    page.keyboard.type("Team dinner")
    page.get_by_label("Amount").fill("12")
    page.get_by_role("button", name="Complete").click()
    page.wait_for_url(re.compile(r".*/inbox/(tasks)?$"))
    expect(page.locator("#errors")).to_have_count(0)


def test_a_second_failure_focuses_the_new_summary_and_a_fix_clears_it(page, processes, app):
    start_latest(app, "claim")
    sign_in(page, "alice")
    page.goto("/inbox/")
    page.get_by_role("link", name="Review expense").click()
    page.get_by_role("button", name="Complete").click()
    page.locator("#errors").wait_for()
    expect(page.locator("#errors")).to_be_focused()
    page.get_by_label("Reason").fill("Taxi")
    page.get_by_role("button", name="Complete").click()
    expect(page.locator("#errors li")).to_have_count(1)
    expect(page.locator("#errors")).to_contain_text("Amount is required")
    expect(page.locator("#errors")).to_be_focused()


def test_a_start_form_with_errors_focuses_its_summary(page, processes):
    sign_in(page, "alice")
    page.goto("/inbox/processes/expense/start")
    page.get_by_label("Amount").fill("0")
    page.get_by_label("Business key").fill("x" * 200 + "y")
    page.get_by_role("button", name="Start", exact=True).click()
    summary = page.locator("#errors")
    summary.wait_for()
    expect(summary).to_contain_text("Amount must be at least 1")
    expect(page.locator("#errors")).to_be_focused()
    summary.get_by_role("link", name="Amount").click()
    assert page.evaluate(ACTIVE) == "field-amount"


def test_a_start_form_summary_names_each_label_once(page, app, demo):
    with app.app_context():
        buying = {"key": "what", "label": "What are we buying?", "type": "text", "required": True}
        process = chain(
            ("first", node("userTask", "Look", assignee={"type": "role", "value": "approver"}))
        )
        process["nodes"]["start"]["config"]["form"] = {"fields": [buying]}
        publish_document(process, key="purchase")
    sign_in(page, "alice")
    page.goto("/inbox/processes/purchase/start")
    page.get_by_role("button", name="Start", exact=True).click()
    summary = page.locator("#errors")
    summary.wait_for()
    expect(summary.locator("li")).to_have_text(["What are we buying? is required"])
    summary.get_by_role("link", name="What are we buying? is required").click()
    assert page.evaluate(ACTIVE) == "field-what"


def test_an_admin_password_reset_with_errors_focuses_its_summary(page, demo):
    sign_in(page, "admin")
    page.goto("/admin/users")
    page.get_by_role("link", name="alice").first.click()
    form = page.locator("#password-form")
    form.get_by_label("New password").fill("new-password-1")
    form.get_by_label("Repeat it").fill("other-password")
    form.get_by_role("button", name="Set password").click()
    summary = form.locator("#errors")
    summary.wait_for()
    expect(summary).to_contain_text("The passwords differ.")
    expect(page.locator("#errors")).to_be_focused()
    summary.get_by_role("link").first.click()
    assert page.evaluate(ACTIVE) == "confirm"
