"""A form post that fails lands on the page's own GET address: reloading it shows the same
error (no 405, nothing posted again), and the focus is on the error, not at the top."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import sign_in
from tests.helpers.instances import load, start_failed_gate

pytestmark = pytest.mark.browser

engine = engine_conftest.engine
test_tools = engine_conftest.test_tools


def _focused_alert_text(page) -> str:
    """The text of the focused element when it is an alert (the error summary), else ''."""
    return page.evaluate(
        "() => document.activeElement && document.activeElement.getAttribute('role') === 'alert'"
        " ? document.activeElement.innerText : ''"
    )


def _wait_for_focused_alert(page, message: str) -> None:
    """Chromium moves focus to an `autofocus` element at its next rendering update, which on a busy
    machine can come just after the load event: wait for it rather than read it once."""
    page.wait_for_function(
        "(message) => document.activeElement"
        " && document.activeElement.getAttribute('role') === 'alert'"
        " && document.activeElement.innerText.includes(message)",
        arg=message,
        timeout=5000,
    )
    assert message in _focused_alert_text(page)


def _reload_keeps_the_error(page, message: str) -> None:
    _wait_for_focused_alert(page, message)
    response = page.reload()
    assert response is not None and response.status == 200, "a reload is a GET of the page"
    assert response.request.method == "GET"
    expect(page.get_by_role("alert").filter(has_text=message)).to_be_visible()
    _wait_for_focused_alert(page, message)


def test_an_invalid_variable_stays_on_the_page_through_a_reload(page, demo, engine):
    instance_id = start_failed_gate(engine)
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.get_by_label("Name", exact=True).fill("check")
    page.get_by_label("Value (JSON)").fill("{not json")
    page.get_by_role("button", name="Set variable").click()
    page.wait_for_url(f"**/operations/instances/{instance_id}?failed=*")

    _reload_keeps_the_error(page, "Not valid JSON")
    assert page.get_by_label("Value (JSON)").input_value() == "{not json", "what was typed stays"
    summary = page.locator("#errors")
    box = summary.bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"], "scrolled into view"
    summary.get_by_role("link", name="Value (JSON)").click()
    expect(page.get_by_label("Value (JSON)")).to_be_focused()
    assert load(engine, instance_id).vars == {"check": {"ok": False}}, "nothing was set"


def test_a_filter_saved_without_a_name_survives_a_reload(page, demo):
    sign_in(page, "alice")
    page.goto("/inbox/?tab=claimable")
    page.get_by_label("Save this filter as").fill("   ")
    page.get_by_role("button", name="Save filter").click()
    page.wait_for_url("**/inbox/?tab=claimable&*failed=*")
    _reload_keeps_the_error(page, "Give the filter a name.")


def test_a_bad_retention_survives_a_reload(page, demo, engine):
    start_failed_gate(engine)
    sign_in(page, "operator")
    page.goto("/operations/retention")
    page.get_by_label("Days for gate").fill("-1")
    page.get_by_role("button", name="Save").click()
    page.wait_for_url("**/operations/retention?failed=*")
    _reload_keeps_the_error(page, "Use a number of days (1-36500)")
    assert page.get_by_label("Days for gate").input_value() == "-1"
