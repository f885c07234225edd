"""An operator moves a token to another task from the instance page, in Chromium: picks the node,
types the reason, previews, applies; and the page works on a phone."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.documents import CLERK, document, node, wire
from tests.helpers.instances import open_tasks, start
from tests.helpers.processes import publish_document
from webapp.models import Token

pytestmark = pytest.mark.browser

engine = engine_conftest.engine
PAGE_OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


def _waiting_instance(session) -> tuple[int, int]:
    nodes = {
        "start": node("startEvent"),
        "a": node("userTask", "First check", assignee=CLERK),
        "b": node("userTask", "Second check", assignee=CLERK),
        "end": node("endEvent"),
    }
    version = publish_document(document(nodes, wire("start", "a", "b", "end")), key="checks")
    instance_id = start(session, version)
    session.rollback()
    token = session.scalar(select(Token.id).where(Token.instance_id == instance_id))
    return instance_id, token


def test_operator_moves_a_token_by_clicking_and_typing(page, demo, engine):
    instance_id, token = _waiting_instance(engine)
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.get_by_role("link", name="Move tokens").click()
    expect(page.get_by_role("heading", name="Live tokens")).to_be_visible()
    page.get_by_label(f"Move token {token} at First check to").select_option(
        label="Second check (user task; b)"
    )
    page.get_by_label("Reason").fill("The first check was done by phone.")
    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#preview")
    expect(preview.get_by_role("heading", name="Preview: what Apply will do")).to_be_visible()
    expect(preview.locator("h3:has-text('Tasks withdrawn') + ul")).to_contain_text("First check")
    expect(preview.locator("h3:has-text('Tasks created') + ul")).to_contain_text("Second check")
    expect(page.get_by_label(f"Move token {token} at First check to")).to_have_value("b")
    assert serious_violations(page) == []
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["a"], (
        "a preview changes nothing"
    )
    page.get_by_role("button", name="Apply").click()
    expect(page.get_by_text(f"The tokens of instance {instance_id} were changed.")).to_be_visible()
    expect(page.locator('tr[data-kind="modified"]')).to_contain_text("First check → Second check")
    expect(page.locator('tr[data-kind="modified"]')).to_contain_text("operator")
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["b"]


def test_the_page_fits_a_phone_and_names_a_bad_variable(phone_page, demo, engine):
    page = phone_page
    instance_id, _ = _waiting_instance(engine)
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}/modify")
    assert page.evaluate(PAGE_OVERFLOW) <= 0
    page.get_by_label("Variable 1 name").fill("amount")
    page.get_by_label("Variable 1 value (JSON)").fill("12,00")
    page.get_by_role("button", name="Preview").click()
    summary = page.locator("#errors")
    expect(summary).to_contain_text("Variable 1 (amount)")
    summary.get_by_role("link").first.click()
    expect(page.get_by_label("Variable 1 value (JSON)")).to_be_focused()
    assert page.evaluate(PAGE_OVERFLOW) <= 0
    assert serious_violations(page) == []
