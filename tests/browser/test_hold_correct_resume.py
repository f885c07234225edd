"""Hold, correct, resume in Chromium: an operator suspends an instance, moves its token to the
next task while it is suspended (the new task waits), and resumes it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.documents import CLERK, document, node, wire
from tests.helpers.instances import load, open_tasks, start
from tests.helpers.processes import publish_document
from webapp.engine import EngineError, steps
from webapp.models import Token

pytestmark = pytest.mark.browser

engine = engine_conftest.engine


def test_suspend_move_a_token_and_resume_by_clicking_and_typing(page, demo, engine):
    nodes = {
        "start": node("startEvent"),
        "a": node("userTask", "First check", assignee=CLERK),
        "b": node("userTask", "Second check", assignee=CLERK),
        "end": node("endEvent"),
    }
    version = publish_document(document(nodes, wire("start", "a", "b", "end")), key="held")
    instance_id = start(engine, version)
    engine.rollback()
    token = engine.scalar(select(Token.id).where(Token.instance_id == instance_id))
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.get_by_text("Suspend instance…").click()
    page.get_by_label("Why it is suspended").fill("the first check was wrong")
    page.get_by_role("button", name=f"Yes, suspend instance {instance_id}").click()
    expect(page.locator("#suspension").get_by_role("heading", name="Suspended")).to_be_visible()

    page.get_by_role("link", name="Move tokens").click()
    page.get_by_label(f"Move token {token} at First check to").select_option(
        label="Second check (user task; b)"
    )
    page.get_by_label("Reason").fill("skip the wrong check")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#preview h3:has-text('Tasks created') + ul")).to_contain_text(
        "Second check"
    )
    page.get_by_role("button", name="Apply").click()
    expect(page.get_by_text(f"The tokens of instance {instance_id} were changed.")).to_be_visible()
    expect(page.locator("#suspension").get_by_role("heading", name="Suspended")).to_be_visible()
    assert serious_violations(page) == []
    [task] = open_tasks(engine, instance_id)
    assert task.node_id == "b"
    with pytest.raises(EngineError):
        steps.complete_task(engine, task.id, {}, actor=None)
    engine.rollback()

    page.get_by_role("button", name=f"Resume instance {instance_id}").click()
    expect(page.get_by_text("Suspend instance…")).to_be_visible()
    assert load(engine, instance_id).suspended_at is None
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["b"]
