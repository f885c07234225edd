"""What keyboard and screen-reader users rely on: a visible focus ring, red invalid fields of
every kind, and claim buttons that say which task they claim."""

import pytest

from tests.browser.conftest import sign_in

pytestmark = pytest.mark.browser

DANGER = "rgb(180, 35, 24)"
ACCENT = "rgb(31, 95, 191)"


def test_the_focus_ring_is_the_accent_colour_around_a_white_gap(page, demo):
    page.goto("/login")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    shadow = page.evaluate("getComputedStyle(document.activeElement).boxShadow")
    assert "rgb(255, 255, 255)" in shadow and ACCENT in shadow, shadow


def test_invalid_text_inputs_turn_red_like_selects(page, demo):
    sign_in(page, "admin")
    page.goto("/admin/users/new")
    page.get_by_role("button", name="Create user").click()
    invalid = page.locator('input[aria-invalid="true"]').first
    assert invalid.evaluate("e => getComputedStyle(e).borderTopColor") == DANGER


def test_claim_buttons_name_the_instance(page, demo, app):
    from tests.engine.conftest import chain, publish_document
    from tests.inbox.conftest import start, user_task

    with app.app_context():
        publish_document(chain(("ok", user_task("Approve", "role", "approver"))), key="claims")
    start(app, "claims", business_key="PO-7")
    start(app, "claims", business_key="PO-8")
    sign_in(page, "bob")
    page.goto("/inbox/?tab=claimable")
    assert page.get_by_role("button", name="Claim Approve, PO-7").is_visible()
    assert page.get_by_role("button", name="Claim Approve, PO-8").is_visible()


def test_the_approver_sees_the_request_beside_the_form(page, demo, app):
    from tests.engine.conftest import chain, publish_document
    from tests.inbox.conftest import start, user_task

    decision = {"fields": [{"key": "ok", "label": "Approve", "type": "boolean"}]}
    with app.app_context():
        publish_document(
            chain(("approve", user_task("Approve purchase", "user", "bob", decision))),
            key="purchase",
        )
    start(app, "purchase", input={"item": "Laptop", "amount": 1800}, business_key="PO-1")
    sign_in(page, "bob")
    page.get_by_role("link", name="Approve purchase").click()
    context = page.get_by_role("region", name="About this PO-1")
    assert context.get_by_text("Laptop").is_visible()
    assert context.get_by_text("1800").is_visible()
