"""A user picks notification choices on the account page by clicking, at desktop and phone
widths; the page stays accessible and does not scroll sideways."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import serious_violations, sign_in
from webapp.models import User
from webapp.services import notifications

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("fixture", ["page", "phone_page"])
def test_a_user_picks_a_digest_and_turns_a_kind_off(request, fixture, demo, db_session):
    page = request.getfixturevalue(fixture)
    sign_in(page, "bob")
    page.goto("/account")
    assigned = page.get_by_label("A task is assigned to you")
    expect(assigned).to_have_value("default")
    assigned.select_option(label="Daily digest")
    page.get_by_label("Your request failed").select_option(label="None")
    page.get_by_role("button", name="Save notification choices").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_text("Notification choices saved.")).to_be_visible()
    expect(page.get_by_label("A task is assigned to you")).to_have_value("digest")
    expect(page.get_by_label("Your request failed")).to_have_value("none")
    assert serious_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    bob = db_session.scalar(select(User.id).where(User.username == "bob"))
    assert notifications.own_choices(db_session, bob) == {
        "assigned": "digest",
        "request_failed": "none",
    }


def test_a_wrong_address_is_named_next_to_its_field(page, demo):
    sign_in(page, "bob")
    page.goto("/account")
    page.get_by_label("E-mail address").fill("bob at example")
    page.get_by_role("button", name="Save address").click()
    expect(page.get_by_text("Enter an address like name@example.org.").first).to_be_visible()
    expect(page.get_by_label("E-mail address")).to_have_value("bob at example")
    expect(page.get_by_label("E-mail address")).to_have_attribute("aria-invalid", "true")
