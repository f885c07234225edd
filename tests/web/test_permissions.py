"""The permission helper and the route matrix: 403 without a permission, 200 with it."""

import pytest
from sqlalchemy import select

from tests.helpers.app import login, make_user
from webapp.models import Partition, Role, User
from webapp.permissions import PERMISSIONS, can, partition_filter, visible_partition_ids

# (path, permission it needs). Each later area adds its routes here.
ROUTES = [
    ("/admin/", "admin"),
    ("/admin/users", "admin"),
    ("/admin/users/new", "admin"),
    ("/admin/roles", "admin"),
    ("/admin/partitions", "admin"),
    ("/admin/webhooks", "admin"),
    ("/designer/", "processes.edit"),
    ("/designer/new", "processes.edit"),
    ("/designer/import", "processes.edit"),
    ("/inbox/", "tasks.work"),
    ("/inbox/?tab=claimable", "tasks.work"),
    ("/inbox/count", "tasks.work"),
    ("/inbox/processes", "instances.start"),
    ("/operations/", "instances.read"),
    ("/operations/instances", "instances.read"),
    ("/operations/instances?status=failed&data=%24vars.amount+%3E+1000", "instances.read"),
    ("/operations/heat", "instances.read"),
    ("/operations/health", "instances.read"),
    ("/operations/retention", "instances.read"),
]


def _user_with(db_session, permissions: list[str], partitions: list[str] = ()) -> User:
    name = f"role-{len(permissions)}-{sorted(permissions)[0].replace('.', '-')}"
    return make_user(f"user-{name}", permissions, partitions, role=name)


@pytest.mark.parametrize(("path", "permission"), ROUTES)
def test_route_needs_its_permission(app, client, demo, db_session, path, permission):
    others = [p for p in PERMISSIONS if p not in (permission, "admin")]
    without = _user_with(db_session, others)
    with_it = _user_with(db_session, [permission])
    assert login(client, without.username, "password-123").status_code == 302
    assert client.get(path).status_code == 403
    client.get("/")  # same client: sign in as the other user
    fresh = app.test_client()
    assert login(fresh, with_it.username, "password-123").status_code == 302
    assert fresh.get(path).status_code == 200


def test_navigation_shows_only_permitted_areas(login_as):
    admin_page = login_as("admin").get("/").get_data(as_text=True)
    assert 'href="/admin/"' in admin_page


def test_navigation_hides_admin_from_clerks(app, demo):
    client = app.test_client()
    login(client, "alice")
    page = client.get("/").get_data(as_text=True)
    assert 'href="/admin/"' not in page


def test_who_may_start_but_has_no_inbox_gets_a_start_entry(app, demo):
    def nav(username: str) -> str:
        client = app.test_client()
        login(client, username)
        page = client.get("/").get_data(as_text=True)
        return page[page.index('<nav aria-label="Main">') : page.index("</nav>")]

    operator = nav("operator")
    assert '<a href="/inbox/processes">Start</a>' in operator and 'href="/inbox/"' not in operator
    alice = nav("alice")
    assert 'href="/inbox/"' in alice and 'href="/inbox/processes"' not in alice, "her inbox has it"


def test_can_scopes_objects_by_partition(app, demo, db_session):
    alice = db_session.scalar(select(User).where(User.username == "alice"))
    admin = db_session.scalar(select(User).where(User.username == "admin"))
    finance = db_session.scalar(select(Partition).where(Partition.key == "finance"))
    hr = db_session.scalar(select(Partition).where(Partition.key == "hr"))
    assert can(alice, "tasks.work", finance.id)
    assert not can(alice, "tasks.work", hr.id), "alice is not in HR"
    assert can(alice, "tasks.work", None), "objects in no partition are open to holders"
    assert not can(alice, "instances.manage", finance.id), "alice lacks the permission"
    assert can(admin, "instances.manage", hr.id), "admin implies everything"
    assert visible_partition_ids(alice) == {finance.id}
    assert visible_partition_ids(admin) is None
    with pytest.raises(ValueError, match="unknown permission"):
        can(alice, "processes.delete")


def test_partition_filter_hides_other_partitions(app, demo, db_session):
    alice = db_session.scalar(select(User).where(User.username == "alice"))
    rows = db_session.scalars(
        select(Partition.key).where(partition_filter(Partition.id, alice))
    ).all()
    assert rows == ["finance"]


def test_inactive_or_anonymous_users_can_do_nothing(app, demo, db_session):
    from flask_login import AnonymousUserMixin

    assert not can(AnonymousUserMixin(), "tasks.work")
    bob = db_session.scalar(select(User).where(User.username == "bob"))
    bob.active = False
    assert not can(bob, "tasks.work")


def test_roles_grant_the_permissions_listed(app, demo, db_session):
    designer = db_session.scalar(select(Role).where(Role.name == "designer"))
    assert designer.permissions == {
        "processes.edit",
        "processes.publish",
        "instances.start",
        "instances.read",
    }
