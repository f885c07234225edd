"""The API reference page: Swagger UI, served by Flowdesk under its CSP, draws every operation
of the served document; readable signed out and on a phone, with a clean accessibility audit."""

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import close_context, new_context, serious_violations, sign_in

pytestmark = pytest.mark.browser

PAGE_OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


def test_the_reference_lists_every_operation_without_signing_in(page, demo, client):
    """Every browser test fails on a CSP violation, so this also proves the renderer runs under
    the policy (no inline script or style, nothing from another site)."""
    operations = sum(len(ops) for ops in client.get("/api/openapi.json").json["paths"].values())
    page.goto("/api/docs")
    expect(page.get_by_role("heading", name="API reference")).to_be_visible()
    expect(page.locator(".opblock")).to_have_count(operations)
    expect(page.get_by_text("/api/instances/{instance_id}/history").first).to_be_visible()
    assert page.get_by_role("link", name="/api/openapi.json").first.is_visible()


def test_a_signed_in_operator_opens_an_operation_and_tries_it(page, demo):
    sign_in(page, "operator")
    page.goto("/api/docs")
    operation = page.locator("#operations-instances-list_instances")
    operation.locator(".opblock-summary-control").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.get_by_role("button", name="Execute").click()
    answer = operation.locator(".live-responses-table tbody .response-col_status")
    expect(answer).to_have_text("200")
    expect(operation.locator(".live-responses-table tbody")).to_contain_text('"total"')


def test_a_change_tried_from_the_page_passes_the_csrf_check(page, demo):
    """POSTs signed in by cookie need the page's CSRF token; the page sends it, so the API
    answers about the instance (none has this id), not about a missing token."""
    sign_in(page, "operator")
    page.goto("/api/docs")
    operation = page.locator("#operations-instances-retry_instance")
    operation.locator(".opblock-summary-control").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.get_by_placeholder("instance_id").fill("999999")
    operation.get_by_role("button", name="Execute").click()
    answer = operation.locator(".live-responses-table tbody")
    expect(answer.locator(".response-col_status")).to_have_text("404")
    expect(answer).to_contain_text('"not_found"')


@pytest.mark.parametrize("width", [1280, 390])
def test_the_reference_fits_a_phone_and_passes_the_audit(browser, live_server, demo, width):
    context = new_context(browser, live_server, width)
    page = context.new_page()
    try:
        page.goto("/api/docs")
        for name in ("start_instance", "get_instance"):
            page.locator(f"#operations-instances-{name} .opblock-summary-control").click()
        expect(page.locator(".opblock-body")).to_have_count(2)
        assert page.evaluate(PAGE_OVERFLOW) <= 0
        assert serious_violations(page) == []
    finally:
        close_context(context)
