"""The admin area: users, passwords, roles and partitions, with bad input handled."""

import re

from sqlalchemy import select

from tests.helpers.app import csrf_token, login
from webapp.models import Partition, Role, User


def _ids(db_session, model, column, names):
    return [str(db_session.scalar(select(model.id).where(column == n))) for n in names]


def test_create_user_with_roles_and_partitions(login_as, db_session):
    client = login_as("admin")
    token = csrf_token(client, "/admin/users/new")
    response = client.post(
        "/admin/users/new",
        data={
            "csrf_token": token,
            "username": "Carol",
            "display_name": "Carol Clerk",
            "email": "carol@example.org",
            "password": "a-good-password",
            "active": "y",
            "roles": _ids(db_session, Role, Role.name, ["clerk"]),
            "partitions": _ids(db_session, Partition, Partition.key, ["hr"]),
        },
    )
    assert response.status_code == 302
    carol = db_session.scalar(select(User).where(User.username == "carol"))
    assert [r.name for r in carol.roles] == ["clerk"]
    assert [p.key for p in carol.partitions] == ["hr"]
    fresh = client.application.test_client()
    assert login(fresh, "carol", "a-good-password").status_code == 302


def test_bad_user_input_gets_field_messages_and_saves_nothing(login_as, db_session):
    client = login_as("admin")
    token = csrf_token(client, "/admin/users/new")
    response = client.post(
        "/admin/users/new",
        data={
            "csrf_token": token,
            "username": "alice",
            "email": "not-an-address",
            "password": "short",
        },
    )
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "Enter an address like name@example.org." in page
    assert "Field must be between 8 and 256 characters long." in page
    summary = page.split('id="errors" role="alert" tabindex="-1" autofocus>')[1].split("</div>")[0]
    assert '<a href="#email">E-mail</a>: Enter an address like name@example.org.' in summary
    assert '<a href="#password">' in summary and summary.count("<li>") == 2
    email = re.search(r'<input[^>]*name="email"[^>]*>', page)[0]
    assert 'aria-invalid="true"' in email and 'aria-describedby="email-msg"' in email
    blank = client.get("/admin/users/new").get_data(as_text=True)
    assert "aria-invalid" not in blank and '"None"' not in blank, "valid fields: no error state"
    response = client.post(
        "/admin/users/new",
        data={"csrf_token": token, "username": "alice", "password": "long-enough-1"},
    )
    assert response.status_code == 422
    assert "The username &#39;alice&#39; is taken." in response.get_data(as_text=True)
    response = client.post(
        "/admin/users/new",
        data={"csrf_token": token, "username": "<script>x", "password": "long-enough-1"},
    )
    assert response.status_code == 422
    assert "<script>x" not in response.get_data(as_text=True)
    assert db_session.scalar(select(User).where(User.username == "<script>x")) is None


def test_edit_user_roles_and_deactivate(login_as, db_session):
    client = login_as("admin")
    bob = db_session.scalar(select(User).where(User.username == "bob"))
    token = csrf_token(client, f"/admin/users/{bob.id}")
    response = client.post(
        f"/admin/users/{bob.id}",
        data={
            "csrf_token": token,
            "username": "bob",
            "display_name": "Robert",
            "roles": _ids(db_session, Role, Role.name, ["approver"]),
            "partitions": [],
        },
    )
    assert response.status_code == 302
    db_session.expire_all()
    bob = db_session.get(User, bob.id)
    assert bob.display_name == "Robert"
    assert bob.active is False, "an unticked Active box deactivates"
    assert [r.name for r in bob.roles] == ["approver"]
    assert bob.partitions == []


def _ticked(page: str, name: str) -> list[str]:
    """The values of the checked `name` checkboxes in a rendered form."""
    boxes = re.findall(rf'<input[^>]*name="{name}"[^>]*>', page)
    return [re.search(r'value="([^"]*)"', box)[1] for box in boxes if " checked" in box]


def test_edit_user_shows_current_memberships_and_keeps_them_when_one_is_added(login_as, db_session):
    client = login_as("admin")
    bob = db_session.scalar(select(User).where(User.username == "bob"))
    page = client.get(f"/admin/users/{bob.id}").get_data(as_text=True)
    roles = _ids(db_session, Role, Role.name, ["approver", "clerk"])
    finance = _ids(db_session, Partition, Partition.key, ["finance"])
    assert sorted(_ticked(page, "roles")) == sorted(roles), "bob's roles are ticked"
    assert _ticked(page, "partitions") == finance, "bob's partition is ticked"
    assert 'name="active"' in page and _ticked(page, "active") == ["y"]

    operator = _ids(db_session, Role, Role.name, ["operator"])
    response = client.post(
        f"/admin/users/{bob.id}",
        data={
            "csrf_token": csrf_token(client, f"/admin/users/{bob.id}"),
            "username": "bob",
            "display_name": "Bob Approver",
            "active": "y",
            "roles": _ticked(page, "roles") + operator,
            "partitions": _ticked(page, "partitions"),
        },
    )
    assert response.status_code == 302
    db_session.expire_all()
    bob = db_session.get(User, bob.id)
    assert sorted(r.name for r in bob.roles) == ["approver", "clerk", "operator"]
    assert [p.key for p in bob.partitions] == ["finance"]
    assert bob.active is True


def test_reset_password_through_htmx_fragment(login_as, db_session):
    client = login_as("admin")
    alice = db_session.scalar(select(User).where(User.username == "alice"))
    token = csrf_token(client, f"/admin/users/{alice.id}")
    bad = client.post(
        f"/admin/users/{alice.id}/password",
        headers={"HX-Request": "true"},
        data={"csrf_token": token, "password": "new-password-1", "confirm": "x"},
    )
    assert bad.status_code == 422
    assert "The passwords differ." in bad.get_data(as_text=True)
    assert 'error-summary" id="errors"' in bad.get_data(as_text=True)
    assert '<a href="#confirm">' in bad.get_data(as_text=True)
    good = client.post(
        f"/admin/users/{alice.id}/password",
        headers={"HX-Request": "true"},
        data={"csrf_token": token, "password": "new-password-1", "confirm": "new-password-1"},
    )
    assert good.status_code == 200
    assert "Password changed for alice." in good.get_data(as_text=True)
    assert login(client.application.test_client(), "alice", "new-password-1").status_code == 302


def test_user_search_returns_the_table_fragment_for_htmx(login_as):
    client = login_as("admin")
    full = client.get("/admin/users?q=ali").get_data(as_text=True)
    assert "<html" in full and "alice" in full and "bob" not in full
    fragment = client.get(
        "/admin/users?q=bob", headers={"HX-Request": "true", "HX-Target": "div#users-table"}
    ).get_data(as_text=True)
    assert "<html" not in fragment and "bob" in fragment


def test_roles_and_partitions(login_as, db_session):
    client = login_as("admin")
    token = csrf_token(client, "/admin/roles")
    response = client.post(
        "/admin/roles",
        data={"csrf_token": token, "name": "auditor", "permissions": ["instances.read"]},
    )
    assert response.status_code == 302
    auditor = db_session.scalar(select(Role).where(Role.name == "auditor"))
    assert auditor.permissions == {"instances.read"}
    dup = client.post("/admin/roles", data={"csrf_token": token, "name": "auditor"})
    assert dup.status_code == 422
    bogus = client.post(
        "/admin/roles", data={"csrf_token": token, "name": "x", "permissions": ["root"]}
    )
    assert bogus.status_code == 422
    response = client.post(
        "/admin/partitions", data={"csrf_token": token, "key": "sales", "name": "Sales"}
    )
    assert response.status_code == 302
    bad = client.post(
        "/admin/partitions", data={"csrf_token": token, "key": "Bad Key", "name": "X"}
    )
    assert bad.status_code == 422
    assert "Lower-case letters, digits, - and _" in bad.get_data(as_text=True)


def test_error_pages_are_styled(login_as):
    client = login_as("admin")
    response = client.get("/admin/users/999999")
    assert response.status_code == 404
    assert "Not found" in response.get_data(as_text=True)
    api = client.get("/api/nothing", headers={"Accept": "application/json"})
    assert api.status_code == 404
    assert api.get_json()["status"] == 404
