"""The overview, the heat view and worker health."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from tests.helpers.documents import failing_doc
from tests.helpers.instances import set_columns, start_failed_gate, start_many
from tests.helpers.processes import publish_document, published
from tests.helpers.workers import drain, wait_for
from webapp.models import Task, Token


def test_the_overview_counts_incidents_and_overdue_tasks(operator, engine):
    waiting = start_many(engine, published("invoice", "finance"), 3)
    start_many(engine, publish_document(failing_doc(), key="pay"), 2)
    drain(engine)
    start_failed_gate(engine)
    set_columns(engine, waiting[:1], status="completed")
    engine.execute(
        update(Task)
        .where(Task.instance_id == waiting[1])
        .values(due_at=datetime.now(UTC) - timedelta(hours=5))
    )
    engine.commit()

    page = operator.get("/operations/").get_data(as_text=True)
    counts = {s: n for n, s in re.findall(r'op-count-n">([\d,]+)</span> <span>(\w+)', page)}
    assert counts == {"running": "2", "completed": "1", "failed": "3", "cancelled": "0"}
    incidents = re.findall(
        r"<tr>\s*<td>(.*?)</td>\s*<td>(.*?)</td>\s*<td>(.*?)</td>\s*<td><a[^>]*>(\d+)</a>",
        page[page.index('id="incidents"') : page.index('id="last-day"')],
    )
    assert [(node, count) for _, node, _, count in incidents] == [
        ('Charge <span class="hint"><code>charge</code></span>', "2"),
        ('Fixed? <span class="hint"><code>gate</code></span>', "1"),
    ], "nodes by their titles, the ids as secondary detail"
    assert incidents[0][2].startswith("card declined "), "the error message, then its code"
    assert "<code>failed</code>" in incidents[0][2]
    assert "status=failed" in page and "error_node=charge" in page and "error_code=failed" in page
    assert 'Overdue tasks <span class="badge" id="overview-overdue-count">1</span>' in page
    assert f"#{waiting[1]}" in page
    late = engine.scalar(select(Task.id).where(Task.instance_id == waiting[1]))
    assert f'href="/inbox/tasks/{late}"' in page, "the operator can open the late task"
    assert f'href="/inbox/tasks/{late}/reassign"' in page, "and hand it to someone else"
    assert operator.get(f"/inbox/tasks/{late}/reassign").status_code == 200
    assert "Instances started, completed and failed per hour" in page


def test_incident_links_list_exactly_that_group(operator, engine):
    start_many(engine, publish_document(failing_doc(), key="pay"), 2)
    drain(engine)
    start_failed_gate(engine)
    page = operator.get(
        "/operations/instances?process=pay&status=failed&error_node=charge&error_code=failed"
    ).get_data(as_text=True)
    assert len(re.findall(r'href="/operations/instances/(\d+)"', page)) == 2


def test_the_chart_counts_the_last_day_by_hour(app, engine, demo):
    from webapp.models import User
    from webapp.services.operations.overview import last_day

    ids = start_many(engine, published("invoice"), 3)
    now = datetime(2026, 7, 1, 15, 30, tzinfo=UTC)
    set_columns(engine, ids, created_at=now - timedelta(hours=2))
    set_columns(engine, ids[:1], status="completed", ended_at=now - timedelta(minutes=20))
    set_columns(engine, ids[1:2], created_at=now - timedelta(days=2))
    with app.app_context():
        from webapp.extensions import db

        admin = db.session.scalar(select(User).where(User.username == "admin"))
        hours = last_day(admin, now)
    assert len(hours) == 24 and hours[-1].label == "15:00"
    assert [(h.label, h.started, h.completed) for h in hours if h.started or h.completed] == [
        ("13:00", 2, 0),
        ("15:00", 0, 1),
    ]


def test_the_heat_view_shows_waiting_counts_and_times(operator, engine):
    version = published("invoice")
    ids = start_many(engine, version, 3)
    now = datetime.now(UTC)
    for instance_id, minutes in zip(ids, (10, 30, 600), strict=True):
        engine.execute(
            update(Token)
            .where(Token.instance_id == instance_id, Token.status == "waiting")
            .values(updated_at=now - timedelta(minutes=minutes))
        )
    engine.commit()
    page = operator.get("/operations/heat/invoice").get_data(as_text=True)
    assert (
        '<td>Review <span class="hint"><code>review</code></span></td>'
        "<td>3</td><td>30m</td><td>10h</td><td>0</td>"
    ) in page
    assert '"review": {"failed": 0, "longest": "10h", "median": "30m", "waiting": 3}' in page
    assert operator.get("/operations/heat/nothing").status_code == 404


def test_health_warns_when_no_worker_is_alive_and_lists_live_ones(operator, workers):
    page = operator.get("/operations/health").get_data(as_text=True)
    assert "No worker is alive." in page
    workers.start(1)
    page = wait_for(
        lambda: (
            (p := operator.get("/operations/health").get_data(as_text=True))
            and "No worker is alive." not in p
            and p
        ),
        timeout=30,
        what="the worker to register",
    )
    assert '<span class="op-count-n">1</span> workers alive' in page
    assert re.search(r"Last heartbeat.*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page, re.S)
