"""A person reports an error from a task in Chromium, instead of completing it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.documents import nested_document, payable_document
from tests.helpers.instances import start_latest
from tests.helpers.processes import publish_document
from webapp.extensions import db
from webapp.models import Instance, Task

pytestmark = pytest.mark.browser


@pytest.fixture
def payable(app, demo):
    """Process "pay": a task whose boundary events catch a reported error or escalation."""
    with app.app_context():
        publish_document(payable_document(), key="pay")
    return True


@pytest.fixture
def nested(app, demo):
    """Process "nested": a task in a sub-process, with catchers on the task, the sub-process and
    the process."""
    with app.app_context():
        publish_document(nested_document(), key="nested")
    return True


def test_an_error_reported_from_the_task_page_ends_it_and_moves_the_instance(
    page,
    payable,
    app,
):
    instance_id = start_latest(app, "pay")
    with app.app_context():
        task_id = db.session.scalar(
            select(Task.id).where(Task.instance_id == instance_id, Task.node_id == "pay")
        )
    sign_in(page, "bob")
    page.goto(f"/inbox/tasks/{task_id}")
    report = page.get_by_role("region", name="Report instead of completing")
    expect(report).to_be_visible()
    assert serious_violations(page) == []
    choice = report.get_by_label("Amount unclear (error unclear)")
    choice.focus()
    page.keyboard.press("Space")
    expect(choice).to_be_checked()
    report.get_by_role("button", name="Report").click()
    expect(page.get_by_text("Reported from “Pay invoice”.")).to_be_visible()
    with app.app_context():
        status = db.session.scalar(select(Task.status).where(Task.id == task_id))
        instance = db.session.get(Instance, instance_id)
        assert status == "completed"
        assert instance.status == "completed", "the error boundary led to its end"


def test_a_task_in_a_sub_process_offers_the_errors_around_it_at_phone_width(
    phone_page,
    nested,
    app,
):
    """The error boundary sits on the sub-process, not the task: the report panel still offers
    it, it works by keyboard at 390 px, and the sub-process ends by its boundary."""
    instance_id = start_latest(app, "nested")
    with app.app_context():
        task_id = db.session.scalar(
            select(Task.id).where(Task.instance_id == instance_id, Task.node_id == "check")
        )
        db.session.remove()
    sign_in(phone_page, "bob")
    phone_page.goto(f"/inbox/tasks/{task_id}")
    report = phone_page.get_by_role("region", name="Report instead of completing")
    expect(report).to_be_visible()
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    assert serious_violations(phone_page) == []
    choice = report.get_by_label("Offer invalid (error invalid, on Review)")
    report.get_by_role("radio").first.focus()
    while not choice.is_checked():
        phone_page.keyboard.press("ArrowDown")
    phone_page.keyboard.press("Tab")
    expect(report.get_by_role("button", name="Report")).to_be_focused()
    phone_page.keyboard.press("Enter")
    expect(phone_page.get_by_text("Reported from “Check offer”.")).to_be_visible()
    with app.app_context():
        assert db.session.get(Instance, instance_id).status == "completed"
        db.session.remove()
