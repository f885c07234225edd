"""An operator pauses and resumes a timer start's schedule on the Schedules page, on a phone."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.engine.timer_start_docs import iso, soon, timed
from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.processes import publish_document
from webapp.extensions import db
from webapp.models.schedules import Schedule
from webapp.services import schedules

pytestmark = pytest.mark.browser


def _paused(app) -> bool:
    with app.app_context():
        paused = db.session.scalar(select(Schedule.paused))
        db.session.remove()
    return bool(paused)


def test_operator_pauses_and_resumes_a_schedule_on_a_phone(phone_page, demo, app):
    page = phone_page
    with app.app_context():
        publish_document(
            timed("nightly", cycle="30 2 * * MON-FRI", timezone="Europe/Berlin"), key="payroll"
        )
    sign_in(page, "operator")
    page.goto("/operations/")
    page.get_by_role("navigation", name="Operations").get_by_role("link", name="Schedules").click()
    row = page.get_by_role("row").filter(has_text="payroll")
    expect(row).to_contain_text("30 2 * * MON-FRI (Europe/Berlin)")
    expect(row).to_contain_text("02:30:00 Europe/Berlin")
    expect(row.get_by_text("active")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert serious_violations(page) == []

    row.get_by_role("button", name="Pause the schedule of payroll (nightly)").click()
    expect(row.get_by_text("paused", exact=True)).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("Schedule paused.")
    assert _paused(app)
    assert serious_violations(page) == []

    row.get_by_role("button", name="Resume the schedule of payroll (nightly)").click()
    expect(row.get_by_text("active")).to_be_visible()
    assert not _paused(app)
    page.reload()
    expect(page.get_by_role("row").filter(has_text="payroll").get_by_text("active")).to_be_visible()


def test_a_failed_start_shows_its_reason_in_the_row_on_a_phone(phone_page, demo, app):
    page = phone_page
    begin = soon()
    with app.app_context():
        publish_document(timed("tick", cycle=f"R/{iso(begin)}/PT1H"), key="digest")
        row = db.session.scalar(select(Schedule))
        # A start event the version no longer has makes the due start fail.
        row.node_id = "gone"
        db.session.commit()
        assert schedules.run_due(now=begin) == 0
        db.session.remove()
    sign_in(page, "operator")
    page.goto("/operations/schedules")
    shown = page.get_by_role("row").filter(has_text="digest")
    expect(shown).to_contain_text("'gone' is no start event of the process")
    expect(shown.get_by_text("active")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert serious_violations(page) == []
