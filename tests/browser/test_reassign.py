"""An operator reassigns a task from the instance page, confirming a user outside its role."""

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import sign_in
from tests.helpers.documents import chain, node
from tests.helpers.instances import start_latest
from tests.helpers.processes import publish_document

pytestmark = pytest.mark.browser


@pytest.fixture
def sorting(app, demo):
    with app.app_context():
        sort = node("userTask", "Sort the post", assignee={"type": "role", "value": "clerk"})
        publish_document(chain(("sort", sort)), key="post")


def _history(app, instance_id: int) -> list[dict]:
    from webapp.extensions import db
    from webapp.models import HistoryEntry

    with app.app_context():
        rows = db.session.scalars(
            select(HistoryEntry.details).where(
                HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "task_reassigned"
            )
        ).all()
        db.session.remove()
        return list(rows)


def test_an_operator_reassigns_outside_the_role_after_confirming(page, sorting, app):
    instance_id = start_latest(app, "post", starter="alice")
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    tasks = page.locator("#live-tasks")
    tasks.get_by_role("link", name="Reassign Sort the post").click()
    page.wait_for_url(re.compile(r".*/inbox/tasks/\d+/reassign$"))
    options = page.locator("#eligible-users option")
    assert options.evaluate_all("els => els.map(e => e.value)") == ["bob"]

    page.get_by_label("User").fill("admin")
    page.get_by_label("Note for the history").fill("Holiday cover")
    page.get_by_role("button", name="Reassign").click()
    page.get_by_text("Ada Admin does not hold the role clerk.").wait_for()
    expect(page.locator("#confirm-reassign")).to_be_focused()
    assert _history(app, instance_id) == [], "nothing changes before the yes"

    page.get_by_role("button", name="Yes, reassign to admin").click()
    expect(page.get_by_text("Reassigned the task.")).to_be_visible()
    expect(page.locator(".task-facts")).to_contain_text("Ada Admin")
    assert _history(app, instance_id)[0]["confirmed"] == "no_role"

    page.locator(".crumbs").get_by_role("link", name=f"Instance {instance_id}").click()
    page.wait_for_url(f"**/operations/instances/{instance_id}")
    expect(page.locator("#live-tasks")).to_contain_text("assigned to admin")
    page.locator("#live-tasks").get_by_role("link", name="Sort the post", exact=True).click()
    page.wait_for_url(re.compile(r".*/inbox/tasks/\d+$"))
    expect(page.get_by_role("heading", name="Sort the post")).to_be_visible()
