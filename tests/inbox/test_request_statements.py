"""How many statements a page of the inbox, the badge, the home page and completing a task take:
a fixed few, whatever the number of tasks, roles and partitions; the signed-in user with their
roles, permissions and partitions in one of them."""

from __future__ import annotations

import re

from sqlalchemy import select

from tests.helpers.app import csrf_token
from tests.helpers.inbox import INBOX, open_task, post, titles
from tests.helpers.instances import start_latest
from tests.helpers.statements import statements

PAGES = {
    "assigned to me": INBOX,
    "open for my roles": f"{INBOX}?tab=claimable",
    "a later page": f"{INBOX}?tab=claimable&page=2",
    "search": f"{INBOX}?tab=claimable&q=E",
    "process and due filter": f"{INBOX}?tab=claimable&process=expense&due=none&sort=created",
    "completed by me": f"{INBOX}?tab=done",
    "badge": "/inbox/count",
    "home": "/",
}
# The most statements each takes: the user; the badge's two counts; the list's own count when
# narrowed; the page of tasks, their further candidates and their instances; the scopes of
# their tokens; the processes of the filter; the saved filters.
MOST = {"badge": 2, "home": 2}
MOST_LIST = 9
ACCESS = re.compile(r"\b(user_roles|user_partitions|role_permissions)\b")


def _counts(app, client, monkeypatch) -> dict[str, int]:
    monkeypatch.setitem(app.config, "PAGE_SIZE", 2)
    found = {}
    for label, path in PAGES.items():
        with statements(app) as seen:
            response = client.get(path)
        assert response.status_code == 200, (label, response.status_code)
        found[label] = len(seen.queries)
    return found


def _more_of_everything(app, db_session, username: str) -> None:
    """More open tasks (some offered to the user by name, some to one of the user's roles as a
    further candidate), and three more roles and another partition for the user."""
    from webapp.models import Partition, Role, RolePermission, TaskCandidate, User

    user = db_session.scalar(select(User).where(User.username == username))
    clerk = db_session.scalar(select(Role).where(Role.name == "clerk"))
    for n in range(12):
        instance_id = start_latest(app, "expense", business_key=f"EXP-9{n}")
        task = open_task(db_session, instance_id, "review")
        if n % 3 == 0:
            db_session.add(TaskCandidate(task_id=task.id, user_id=user.id))
        if n % 3 == 1:
            db_session.add(TaskCandidate(task_id=task.id, role_id=clerk.id))
    extra = [
        Role(name=f"extra-{n}-{username}", grants=[RolePermission(permission="tasks.work")])
        for n in range(3)
    ]
    user.roles = [*user.roles, *extra]
    hr = db_session.scalar(select(Partition).where(Partition.key == "hr"))
    user.partitions = [*user.partitions, hr]
    db_session.commit()


def test_the_signed_in_user_comes_with_roles_permissions_and_partitions_in_one_statement(
    users, flows, app
):
    bob = users("bob")
    with statements(app) as seen:
        page = bob.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    access = [s for s in seen.queries if ACCESS.search(s)]
    assert len(access) == 1 and "user_sessions" in access[0]
    assert "Inbox" in page, "bob's clerk and approver roles still grant the inbox"


def test_pages_take_the_same_few_statements_with_more_tasks_roles_and_partitions(
    users, review_tasks, app, db_session, monkeypatch
):
    alice = users("alice")
    before = _counts(app, alice, monkeypatch)
    for label, count in before.items():
        assert count <= MOST.get(label, MOST_LIST), (label, count)
    _more_of_everything(app, db_session, "alice")
    page = alice.get(f"{INBOX}?tab=claimable").get_data(as_text=True)
    assert "(16)" in page, "the new tasks are in the list"
    assert _counts(app, alice, monkeypatch) == before


def test_completing_from_the_page_takes_the_same_few_statements_with_more_roles(
    users, flows, app, db_session
):
    alice = users("alice")
    first, second = (
        open_task(db_session, start_latest(app, "expense", input={"requested": 5}), "review")
        for _ in range(2)
    )
    alice._csrf = csrf_token(alice, f"{INBOX}?tab=claimable")
    counts = []
    for task_id in (first.id, second.id):
        with statements(app) as seen:
            response = post(alice, f"/inbox/tasks/{task_id}", {"amount": "40"})
        assert response.status_code == 303
        late = [s for s in seen.after_commit() if re.match(r"SELECT .* FROM (tasks|users)\b", s)]
        assert len(late) == 1, "one read of the instance's open tasks after the commit, no reload"
        counts.append(len(seen.queries))
        if task_id == first.id:
            _more_of_everything(app, db_session, "alice")
    assert counts[0] == counts[1] <= 12, counts
    landing = alice.get(response.headers["Location"]).get_data(as_text=True)
    assert "Completed “Review expense”." in landing and "Approve expense" in landing
    assert titles(alice.get(INBOX).get_data(as_text=True)).count("Approve expense") == 2


def test_a_narrowed_list_with_nothing_in_it_asks_for_no_page(users, review_tasks, app):
    """Its count says there is nothing: the ordered search for a page, which would read every
    task of the tab to find none, is not made."""
    alice = users("alice")
    with statements(app) as seen:
        page = alice.get(f"{INBOX}?tab=claimable&q=no+such+task").get_data(as_text=True)
    assert "No task matches this filter." in page
    pages = [s for s in seen.queries if s.startswith("SELECT tasks.id, tasks.instance_id")]
    assert pages == []
    with statements(app) as seen:
        page = alice.get(f"{INBOX}?tab=claimable&q=pay").get_data(as_text=True)
    assert sorted(titles(page)) == ["Pay 100% bonus", "Pay rent"]
    assert len([s for s in seen.queries if s.startswith("SELECT tasks.id, tasks.instance_id")]) == 1
