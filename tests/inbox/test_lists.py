"""The inbox lists: tabs, filters kept in the URL, search, order, pages, overdue marks, the
navigation badge and saved filters."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from sqlalchemy import select, update

from tests.helpers.app import failed_page
from tests.helpers.inbox import INBOX, htmx, open_task, post, titles
from tests.helpers.instances import start_latest
from webapp.models import SavedFilter, Task
from webapp.models.base import utcnow


def set_due(db_session, task_id: int, due: datetime | float | None) -> None:
    """Set a task's due time: a datetime, or hours from now."""
    if isinstance(due, int | float):
        due = utcnow() + timedelta(hours=due)
    db_session.execute(update(Task).where(Task.id == task_id).values(due_at=due))
    db_session.commit()


def test_tabs_show_mine_claimable_and_done(users, flows, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    alice = users("alice")
    assert "Nothing is assigned to you right now." in alice.get(INBOX).get_data(as_text=True)
    claimable = alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    assert titles(claimable) == ["Review expense"] and "role clerk" in claimable
    assert f'action="/inbox/tasks/{review.id}/claim"' in claimable
    assert post(alice, f"/inbox/tasks/{review.id}/claim").status_code == 303
    assert titles(alice.get(INBOX).get_data(as_text=True)) == ["Review expense"]
    assert titles(alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)) == []
    post(alice, f"/inbox/tasks/{review.id}", {"amount": "5"})
    done = alice.get(f"{INBOX}?tab=done").get_data(as_text=True)
    assert titles(done) == ["Review expense"]
    assert titles(alice.get(INBOX).get_data(as_text=True)) == ["Approve expense"]


def test_lists_are_scoped_by_partition_and_role(users, flows, app):
    for key in ("expense", "fin", "hr", "direct"):
        start_latest(app, key)
    alice, bob = users("alice"), users("bob")
    assert titles(alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)) == [
        "Review expense"
    ], "alice: a clerk in finance (no approver role, not in hr)"
    assert sorted(titles(bob.get(f"{INBOX}?tab=claimable").get_data(as_text=True))) == [
        "Check invoice",
        "Review expense",
    ], "bob: clerk and approver in finance"
    assert titles(bob.get(INBOX).get_data(as_text=True)) == ["Sign contract"]
    assert users("operator").get(INBOX).status_code == 403, "operators do not work tasks"


def test_search_covers_title_and_business_key(users, review_tasks):
    alice = users("alice")
    found = alice.get(f"{INBOX}?tab=claimable&q=ORDER").get_data(as_text=True)
    assert titles(found) == ["Order chairs", "Order desks"]
    assert titles(alice.get(f"{INBOX}?tab=claimable&q=exp-2").get_data(as_text=True)) == [
        "Order chairs"
    ]
    assert titles(alice.get(f"{INBOX}?tab=claimable&q=100%25").get_data(as_text=True)) == [
        "Pay 100% bonus"
    ], "a % in the search is a literal character, not a wildcard"
    assert titles(alice.get(f"{INBOX}?tab=claimable&q=_").get_data(as_text=True)) == []
    none = alice.get(f"{INBOX}?tab=claimable&q=nothing+like+this").get_data(as_text=True)
    assert "No task matches this filter." in none


def test_due_filters_and_overdue_marks(users, review_tasks, db_session):
    now = utcnow()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    end_of_today = midnight + timedelta(days=1)
    end_of_week = midnight + timedelta(days=7 - now.weekday())
    late, today, week, later = review_tasks
    set_due(db_session, late, -2)
    set_due(db_session, today, end_of_today - (end_of_today - now) / 2)
    set_due(db_session, week, end_of_week - (end_of_week - now) / 4)
    set_due(db_session, later, end_of_week + timedelta(hours=1))
    alice = users("alice")

    def listed(due: str) -> list[str]:
        return titles(alice.get(f"{INBOX}?tab=claimable&due={due}").get_data(as_text=True))

    assert listed("overdue") == ["Pay rent"]
    sunday = ["Order chairs"] if now.weekday() == 6 else []
    assert listed("today") == ["Pay 100% bonus", *sunday]
    assert listed("week")[-1] == "Order chairs" and "Pay rent" not in listed("week")
    assert "Order desks" not in listed("week")
    assert listed("none") == []
    set_due(db_session, later, None)
    assert listed("none") == ["Order desks"]
    page = alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    assert page.count('class="is-overdue"') == 1
    assert re.search(r'class="is-overdue">\s*<td data-label="Task">\s*<a[^>]*>Pay rent', page)
    assert titles(page)[-1] == "Order desks", "tasks without a due time come last"
    task_page = alice.get(f"/inbox/tasks/{late}").get_data(as_text=True)
    assert '<span class="overdue">Overdue</span>' in task_page


def test_process_filter_and_order(users, flows, app, db_session):
    first = open_task(db_session, start_latest(app, "expense"), "review")
    hr_like = open_task(db_session, start_latest(app, "fin"))
    second = open_task(db_session, start_latest(app, "expense"), "review")
    set_due(db_session, second.id, 1)
    set_due(db_session, first.id, 5)
    bob = users("bob")
    by_due = bob.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    assert re.findall(r"/inbox/tasks/(\d+)\"", by_due)[:3] == [
        str(second.id),
        str(first.id),
        str(hr_like.id),
    ]
    newest = bob.get(f"{INBOX}?tab=claimable&sort=created").get_data(as_text=True)
    assert re.findall(r"/inbox/tasks/(\d+)\"", newest)[:3] == [
        str(second.id),
        str(hr_like.id),
        str(first.id),
    ]
    only_fin = bob.get(f"{INBOX}?tab=claimable&process=fin").get_data(as_text=True)
    assert titles(only_fin) == ["Check invoice"]
    assert '<option value="fin" selected>fin</option>' in only_fin


def test_pages_links_and_bad_arguments(users, review_tasks, app, monkeypatch):
    monkeypatch.setitem(app.config, "PAGE_SIZE", 3)
    alice = users("alice")
    first = alice.get(f"{INBOX}?tab=claimable&q=exp").get_data(as_text=True)
    assert "Page 1 of 2 (4)" in first and len(titles(first)) == 3
    assert f'href="{INBOX}?page=2&amp;tab=claimable&amp;q=exp" rel="next"' in first
    second = alice.get(f"{INBOX}?tab=claimable&q=exp&page=2").get_data(as_text=True)
    assert len(titles(second)) == 1 and "Page 2 of 2 (4)" in second
    assert f'href="{INBOX}?tab=done&amp;q=exp"' in first, "tabs keep the search"
    odd = alice.get(f"{INBOX}?tab=nope&due=someday&sort=x&page=zz&q=" + "a" * 300)
    text = odd.get_data(as_text=True)
    assert odd.status_code == 200
    assert "Unknown tab &#39;nope&#39; was ignored." in text
    assert "Unknown due &#39;someday&#39; was ignored." in text
    assert "The search was cut to 200 characters." in text


def test_the_list_fragment_for_htmx(users, review_tasks):
    response = users("alice").get(f"{INBOX}?tab=claimable&q=pay", headers=htmx("task-list"))
    fragment = response.get_data(as_text=True)
    assert fragment.lstrip().startswith('<section id="task-list"') and "<html" not in fragment
    assert titles(fragment) == ["Pay 100% bonus", "Pay rent"] or titles(fragment) == [
        "Pay rent",
        "Pay 100% bonus",
    ]
    assert '<input type="hidden" name="q" value="pay">' in fragment, "save keeps the filter"


def test_the_count_badge(users, flows, app, db_session):
    alice = users("alice")
    page = alice.get("/").get_data(as_text=True)
    assert 'id="inbox-count" hx-get="/inbox/count" hx-trigger="load"' in page
    assert ">0</a>" in alice.get("/inbox/count").get_data(as_text=True)
    review = open_task(db_session, start_latest(app, "expense"), "review")
    start_latest(app, "expense")
    badge = alice.get("/inbox/count").get_data(as_text=True)
    assert 'title="0 assigned to you, 2 open for your roles">2</a>' in badge
    assert f'href="{INBOX}"' in badge and 'aria-label="2 open tasks"' in badge
    assert 'hx-trigger="every 60s"' in badge
    post(alice, f"/inbox/tasks/{review.id}/claim")
    badge = alice.get("/inbox/count").get_data(as_text=True)
    assert 'title="1 assigned to you, 1 open for your roles">2</a>' in badge
    assert users("operator").get("/inbox/count").status_code == 403
    assert 'id="inbox-count"' not in users("operator").get("/").get_data(as_text=True)


def test_saved_filters(users, review_tasks, db_session):
    alice = users("alice")
    response = post(
        alice,
        "/inbox/filters",
        {"name": "  Late  orders ", "tab": "claimable", "q": "order", "due": "overdue"},
    )
    assert response.status_code == 303
    assert response.headers["Location"] == f"{INBOX}?tab=claimable&due=overdue&q=order"
    saved = db_session.scalar(select(SavedFilter))
    assert (saved.name, saved.query) == ("Late orders", "tab=claimable&due=overdue&q=order")
    page = alice.get(INBOX).get_data(as_text=True)
    link = f'<a href="{INBOX}?tab=claimable&amp;due=overdue&amp;q=order">Late orders</a>'
    assert link in page
    post(alice, "/inbox/filters", {"name": "Late orders", "tab": "done"})
    assert db_session.scalar(select(SavedFilter.query)) == "tab=done", "same name replaces"
    assert len(db_session.scalars(select(SavedFilter)).all()) == 1

    bob = users("bob")
    assert "Late orders" not in bob.get(INBOX).get_data(as_text=True)
    assert post(bob, f"/inbox/filters/{saved.id}/delete").status_code == 404
    empty = post(alice, "/inbox/filters", {"name": "  ", "tab": "claimable"})
    page = failed_page(alice, empty, INBOX)
    assert 'id="filter-name-msg">Give the filter a name.</p>' in page
    assert empty.headers["Location"].startswith(f"{INBOX}?tab=claimable&"), "the same filter"
    assert post(alice, f"/inbox/filters/{saved.id}/delete").status_code == 303
    assert db_session.scalar(select(SavedFilter)) is None


def test_saved_filters_are_limited(users, review_tasks, db_session, demo):
    from webapp.services.saved_filters import MAX_FILTERS

    alice = users("alice")
    for n in range(MAX_FILTERS):
        assert post(alice, "/inbox/filters", {"name": f"f{n}"}).status_code == 303
    refused = post(alice, "/inbox/filters", {"name": "one more", "q": "x"})
    page = failed_page(alice, refused, INBOX)
    assert f"at most {MAX_FILTERS} filters" in page
    assert 'name="name" maxlength="100" value="one more"' in page, "the typed name stays"
    long = post(alice, "/inbox/filters", {"name": "x" * 101})
    failed_page(alice, long, INBOX)
