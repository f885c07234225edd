"""A person signs in through the page and sees the areas their role opens."""

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import sign_in

pytestmark = pytest.mark.browser


def test_admin_signs_in_and_sees_admin_navigation(page, demo):
    sign_in(page, "admin")
    nav = page.get_by_role("navigation", name="Main")
    assert nav.get_by_role("link", name="Admin").is_visible()
    page.get_by_role("link", name="Admin").first.click()
    page.get_by_role("link", name="Users").first.click()
    expect(page.get_by_role("cell", name="alice", exact=True)).to_be_visible()


def test_clerk_sees_no_admin_and_can_sign_out(page, demo):
    sign_in(page, "alice")
    assert page.get_by_role("heading", name="Inbox").is_visible(), "a clerk lands in the inbox"
    assert (
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Admin").count() == 0
    )
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login")
    assert page.get_by_text("You are signed out.").is_visible()


def test_wrong_password_shows_a_message(page, demo):
    page.goto("/login")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("wrong")
    page.keyboard.press("Enter")
    assert page.get_by_role("alert").inner_text().strip() == "Invalid username or password."


def test_admin_search_updates_the_table_with_htmx(page, demo):
    sign_in(page, "admin")
    page.goto("/admin/users")
    page.get_by_label("Search users").fill("bob")
    expect(page.locator("#users-table")).not_to_contain_text("alice")
    expect(page.get_by_role("cell", name="bob", exact=True)).to_be_visible()
    assert "q=bob" in page.url


def test_login_page_fits_a_phone(phone_page, demo):
    phone_page.goto("/login")
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    sign_in(phone_page, "admin")
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390


def test_account_page_signs_out_everywhere(page, demo):
    sign_in(page, "alice")
    page.get_by_role("link", name="Alice Clerk").click()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    assert page.get_by_text("You are signed in on 1 browser").is_visible()
    page.get_by_role("button", name="Sign out everywhere").click()
    page.wait_for_url("**/login")
    assert page.get_by_text("You are signed out on every device.").is_visible()
    page.goto("/")
    page.wait_for_url("**/login?next=%2F")
