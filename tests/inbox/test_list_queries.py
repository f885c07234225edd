"""What the inbox list asks the database: one count per list, and only what a row shows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event, select

from tests.helpers.inbox import INBOX, open_task, titles
from tests.helpers.instances import start_latest
from webapp.models import TaskCandidate, User


@contextmanager
def statements(app) -> Iterator[list[str]]:
    """The SQL statements run while the block runs, whitespace folded."""
    from webapp.extensions import db

    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        seen.append(" ".join(statement.split()))

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def task_counts(seen: list[str]) -> list[str]:
    """Each count of tasks (one statement may take several)."""
    return [count for s in seen if "tasks" in s for count in re.findall(r"\bcount\(", s)]


def test_an_unfiltered_tab_is_counted_once(users, review_tasks, app, monkeypatch):
    monkeypatch.setitem(app.config, "PAGE_SIZE", 3)
    alice = users("alice")
    with statements(app) as seen:
        page = alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    assert "Page 1 of 2 (4)" in page and len(titles(page)) == 3
    assert 'data-counts="0,4"' in page
    assert len(task_counts(seen)) == 2, "the badge's two counts serve the tab's pages too"
    with statements(app) as seen:
        page = alice.get(f"{INBOX}?tab=claimable&page=2").get_data(as_text=True)
    assert "Page 2 of 2 (4)" in page and len(titles(page)) == 1
    assert len(task_counts(seen)) == 2
    with statements(app) as seen:
        page = alice.get(f"{INBOX}?tab=claimable&q=pay").get_data(as_text=True)
    assert sorted(titles(page)) == ["Pay 100% bonus", "Pay rent"]
    assert len(task_counts(seen)) == 3, "a narrowed list counts its own rows"
    with statements(app) as seen:
        page = alice.get(f"{INBOX}?tab=done").get_data(as_text=True)
    assert "You have not completed a task yet." in page
    assert len(task_counts(seen)) == 3


def test_rows_load_only_what_they_show(users, flows, app, db_session):
    """Offered to several users: the row names them without loading their roles, partitions or
    permissions, and the instance's variables stay in the database."""
    task = open_task(db_session, start_latest(app, "expense", business_key="EXP-77"), "review")
    for username in ("bob", "designer", "operator"):
        user = db_session.scalar(select(User).where(User.username == username))
        db_session.add(TaskCandidate(task_id=task.id, user_id=user.id))
    db_session.commit()
    alice = users("alice")
    with statements(app) as seen:
        page = alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    assert titles(page) == ["Review expense"] and "EXP-77" in page
    assert "role clerk and users bob, designer, operator" in page
    access = [s for s in seen if "user_roles" in s or "user_partitions" in s]
    assert len(access) == 1, "only the signed-in user's, read with the user in one statement"
    assert not [s for s in seen if "instances.vars" in s or "instances.nodes" in s]


def test_a_page_of_tasks_takes_a_fixed_number_of_queries(users, review_tasks, app, db_session):
    """The candidate role of each row comes with the list itself, the instances of the whole
    page in one more statement; the number of statements does not grow with the rows."""
    alice = users("alice")
    with statements(app) as seen:
        page = alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    assert len(titles(page)) == 4 and "EXP-3" in page and "role clerk" in page
    assert len([s for s in seen if s.startswith("SELECT instances.")]) == 1
    assert not [s for s in seen if s.startswith("SELECT roles.")]
    few = len(seen)
    for n in range(4, 10):
        start_latest(app, "expense", business_key=f"EXP-{n}")
    with statements(app) as seen:
        page = alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    assert len(titles(page)) == 10 and "EXP-9" in page
    assert len(seen) == few
