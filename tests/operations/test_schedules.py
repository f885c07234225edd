"""The operations Schedules page: lists timer starts with their runs, pauses and resumes them,
within the user's permissions and partitions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from tests.engine.timer_start_docs import iso, soon, timed
from tests.helpers.app import csrf_token, login, make_user
from tests.helpers.processes import publish_document
from webapp.models import Process, ProcessVersion
from webapp.models.schedules import Schedule
from webapp.services import schedules

PAGE = "/operations/schedules"


@pytest.fixture
def people(app, demo, db_session):
    made = {
        "nobody": (["tasks.work"], ["finance"]),
        "reader": (["instances.read"], ["finance"]),
        "manager": (["instances.read", "instances.manage"], ["finance"]),
        "hr_manager": (["instances.read", "instances.manage"], ["hr"]),
    }
    for name, (permissions, partitions) in made.items():
        make_user(name, permissions, partitions)

    def client_for(name: str):
        client = app.test_client()
        assert login(client, name, "password-123").status_code == 302
        return client

    return client_for


@pytest.fixture
def nightly(db_session, people) -> int:
    """A finance process starting at 02:00 Berlin time, and an open one every hour."""
    publish_document(
        timed("nightly", cycle="0 2 * * *", timezone="Europe/Berlin"),
        key="payroll",
        partition="finance",
    )
    publish_document(timed("hourly", cycle="R/PT1H"), key="digest")
    return db_session.scalar(select(Schedule.id).where(Schedule.node_id == "nightly"))


def _paused(db_session, schedule_id: int) -> bool:
    db_session.rollback()
    return db_session.get(Schedule, schedule_id, populate_existing=True).paused


def test_the_page_lists_schedules_with_their_next_runs(people, nightly):
    page = people("manager").get(PAGE)
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "payroll" in text and "digest" in text
    assert "0 2 * * * (Europe/Berlin)" in text and "R/PT1H (UTC)" in text
    assert "02:00:00 Europe/Berlin)" in text, "the next runs on the schedule's own clock"
    assert text.count("Pause</button>") == 2
    assert 'aria-current="page">Schedules' in text


def test_pause_and_resume_with_a_form_and_with_htmx(people, nightly, db_session):
    manager = people("manager")
    token = csrf_token(manager, PAGE)
    path = f"{PAGE}/{nightly}/pause"
    assert manager.post(path).status_code == 400, "no CSRF token"
    assert not _paused(db_session, nightly)
    done = manager.post(path, data={"csrf_token": token})
    assert done.status_code == 303 and done.headers["Location"].endswith(f"{PAGE}?page=1")
    assert _paused(db_session, nightly)
    text = manager.get(PAGE).get_data(as_text=True)
    assert "paused</span>" in text and "Resume</button>" in text
    assert "none while paused" in text

    fragment = manager.post(
        f"{PAGE}/{nightly}/resume",
        data={"csrf_token": token},
        headers={"HX-Request": "true", "HX-Target": f"schedule-{nightly}"},
    )
    assert fragment.status_code == 200
    row = fragment.get_data(as_text=True)
    assert row.lstrip().startswith(f'<tr id="schedule-{nightly}">')
    assert "Schedule resumed." in row and "Pause</button>" in row
    assert not _paused(db_session, nightly)


def test_changes_need_instances_manage_in_the_schedule_partition(people, nightly, db_session):
    assert people("nobody").get(PAGE).status_code == 403
    reader = people("reader")
    text = reader.get(PAGE).get_data(as_text=True)
    assert "payroll" in text and "Pause</button>" not in text
    token = csrf_token(reader, PAGE)
    assert reader.post(f"{PAGE}/{nightly}/pause", data={"csrf_token": token}).status_code == 403
    other = people("hr_manager")
    text = other.get(PAGE).get_data(as_text=True)
    assert "payroll" not in text and "digest" in text
    token = csrf_token(other, PAGE)
    assert other.post(f"{PAGE}/{nightly}/pause", data={"csrf_token": token}).status_code == 404
    manager = people("manager")
    token = csrf_token(manager, PAGE)
    for missing in (nightly + 1000, 2**31, 10**20):
        response = manager.post(f"{PAGE}/{missing}/pause", data={"csrf_token": token})
        assert response.status_code == 404
    assert not _paused(db_session, nightly)


def test_the_list_is_paginated(people, db_session):
    for number in range(27):
        publish_document(timed(cycle="R/PT1H"), key=f"p{number:02d}")
    manager = people("manager")
    first = manager.get(PAGE).get_data(as_text=True)
    assert "Page 1 of 2 (27)" in first and "p24" in first and "p25" not in first
    second = manager.get(
        f"{PAGE}?page=2", headers={"HX-Request": "true", "HX-Target": "schedules-table"}
    ).get_data(as_text=True)
    assert second.lstrip().startswith('<div id="schedules-table">')
    assert "p25" in second and "p26" in second and "p00" not in second


def test_a_failed_start_is_shown_until_a_later_run_starts(people, db_session):
    begin = soon()
    publish_document(timed("tick", cycle=f"R/{iso(begin)}/PT1S"), key="digest")
    row = db_session.scalar(select(Schedule).where(Schedule.node_id == "tick"))
    # A start event the version no longer has makes the start fail when the schedule is due.
    row.node_id = "gone"
    db_session.commit()
    assert schedules.run_due(now=begin) == 0
    db_session.expire_all()
    failed = db_session.get(Schedule, row.id)
    assert failed.last_error and "gone" in failed.last_error
    assert failed.next_run_at == begin + timedelta(seconds=1), "the next run moved on"
    html = people("manager").get(PAGE).get_data(as_text=True)
    assert f'<p class="error">{failed.last_error}' in html.replace("&#39;", "'")
    failed.node_id = "tick"
    db_session.commit()
    assert schedules.run_due(now=begin + timedelta(seconds=1)) == 1
    db_session.expire_all()
    recovered = db_session.get(Schedule, row.id)
    assert recovered.last_error is None and recovered.last_instance_id is not None
    assert recovered.next_run_at == begin + timedelta(seconds=2)
    assert 'class="error"' not in people("manager").get(PAGE).get_data(as_text=True)


@pytest.mark.parametrize(
    ("title", "named"),
    [("", "the untitled timer start event"), ("Nightly", "Start event 'Nightly'")],
)
def test_a_timer_start_that_does_not_parse_is_named_as_people_see_it(
    people, db_session, title, named
):
    publish_document(timed("tick", cycle="R/PT1H"), key="bad")
    process = db_session.scalars(select(Process).where(Process.key == "bad")).one()
    doc = timed("tick", cycle="every so often")
    doc["nodes"]["tick"]["title"] = title
    with pytest.raises(schedules.InvalidTimerStart) as raised:
        schedules.move_on_publish(process, ProcessVersion(process_id=process.id, document=doc))
    assert raised.value.node_id == "tick"
    assert raised.value.message.startswith(f"{named}: ")
    assert "'tick'" not in str(raised.value)
