"""The account page's personal tokens and the admin area's service accounts and token list."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from tests.engine.conftest import published  # noqa: F401 - shared fixture
from tests.helpers.app import csrf_token, login
from webapp.models import ApiToken, LoginFailure, Partition, Role, User
from webapp.services import accounts, api_tokens


def _shown_token(page: str) -> str:
    return re.search(r'id="new-token"[^>]*value="([^"]+)"', page)[1]


def _make_on_account_page(client, name="laptop", scopes=("read",)):
    token = csrf_token(client, "/account")
    return client.post(
        "/account/tokens",
        data={"csrf_token": token, "name": name, "scopes": list(scopes), "expires": "30"},
    )


def test_a_user_makes_a_token_shown_once_and_uses_it(login_as, db_session):
    client = login_as("alice")
    made = _make_on_account_page(client, scopes=("read", "start"))
    assert made.status_code == 200
    text = _shown_token(made.get_data(as_text=True))
    assert text.startswith("fdp_")
    row = db_session.scalars(select(ApiToken)).one()
    assert (row.name, row.scopes, row.user.username) == ("laptop", "read start", "alice")
    assert row.expires_at is not None
    again = client.get("/account").get_data(as_text=True)
    assert "laptop" in again and text not in again and text[16:] not in again
    fresh = client.application.test_client()
    used = fresh.get("/api/instances", headers={"Authorization": f"Bearer {text}"})
    assert used.status_code == 200
    assert "never" in client.get("/account").get_data(as_text=True)  # expiry column "Last used"


def test_bad_token_input_names_the_field_and_saves_nothing(login_as, db_session):
    client = login_as("alice")
    no_scope = _make_on_account_page(client, scopes=())
    assert no_scope.status_code == 422
    assert "Pick at least one scope." in no_scope.get_data(as_text=True)
    wrong = _make_on_account_page(client, scopes=("root",))
    assert wrong.status_code == 422
    no_name = _make_on_account_page(client, name="  ")
    assert no_name.status_code == 422
    assert db_session.scalar(select(func.count()).select_from(ApiToken)) == 0
    no_csrf = client.post("/account/tokens", data={"name": "x", "scopes": ["read"]})
    assert no_csrf.status_code == 400
    assert db_session.scalar(select(func.count()).select_from(ApiToken)) == 0


def test_a_user_revokes_only_their_own_tokens(login_as, db_session, app):
    bob = accounts.find_user("bob")
    bobs, _ = api_tokens.create_token(bob, "bobs", ["read"], 0, created_by=bob)
    client = login_as("alice")
    _make_on_account_page(client)
    mine = db_session.scalars(select(ApiToken).where(ApiToken.name == "laptop")).one()
    token = csrf_token(client, "/account")
    other = client.post(f"/account/tokens/{bobs.id}/revoke", data={"csrf_token": token})
    assert other.status_code == 404
    revoked = client.post(f"/account/tokens/{mine.id}/revoke", data={"csrf_token": token})
    assert revoked.status_code == 302
    db_session.expire_all()
    assert db_session.get(ApiToken, mine.id).revoked_at is not None
    assert db_session.get(ApiToken, bobs.id).revoked_at is None
    assert "revoked" in client.get("/account").get_data(as_text=True)


def test_admin_makes_a_service_account_and_its_token(login_as, db_session):
    client = login_as("admin")
    token = csrf_token(client, "/admin/service-accounts/new")
    clerk = db_session.scalar(select(Role.id).where(Role.name == "clerk"))
    finance = db_session.scalar(select(Partition.id).where(Partition.key == "finance"))
    made = client.post(
        "/admin/service-accounts/new",
        data={
            "csrf_token": token,
            "username": "erp-sync",
            "display_name": "ERP",
            "roles": [str(clerk)],
            "partitions": [str(finance)],
        },
    )
    assert made.status_code == 302
    robot = db_session.scalar(select(User).where(User.username == "erp-sync"))
    assert robot.service_account and not robot.password_hash
    assert [p.key for p in robot.partitions] == ["finance"]
    page = client.post(
        f"/admin/service-accounts/{robot.id}/tokens",
        data={"csrf_token": token, "name": "erp", "scopes": ["start", "read"], "expires": "0"},
    )
    assert page.status_code == 200
    text = _shown_token(page.get_data(as_text=True))
    assert text.startswith("fds_")
    assert "erp-sync" not in client.get("/admin/users").get_data(as_text=True)
    listed = client.get("/admin/service-accounts").get_data(as_text=True)
    assert "erp-sync" in listed
    # deactivating stops its tokens
    saved = client.post(
        f"/admin/service-accounts/{robot.id}",
        data={"csrf_token": token, "username": "erp-sync", "roles": [str(clerk)]},
    )
    assert saved.status_code == 302
    refused = client.get("/api/instances", headers={"Authorization": f"Bearer {text}"})
    assert (refused.status_code, refused.json["message"]) == (401, "token's account deactivated")


def test_a_service_account_cannot_sign_in_or_get_a_password(login_as, db_session, client):
    robot = api_tokens.create_service_account("erp-sync", roles=[], partitions=[])
    assert login(client, "erp-sync", "").status_code != 302
    assert login(client, "erp-sync", "anything-at-all").status_code == 401
    admin = login_as("admin")
    token = csrf_token(admin, "/admin/users")
    refused = admin.post(
        f"/admin/users/{robot.id}/password",
        data={"csrf_token": token, "password": "a-good-password", "confirm": "a-good-password"},
    )
    assert refused.status_code == 404
    assert (
        admin.get(f"/admin/users/{robot.id}")
        .headers["Location"]
        .endswith(f"/admin/service-accounts/{robot.id}")
    )


def test_admin_lists_filters_and_revokes_every_token(login_as, db_session):
    alice = accounts.find_user("alice")
    robot = api_tokens.create_service_account("erp-sync", roles=[], partitions=[])
    mine, _ = api_tokens.create_token(alice, "alices", ["read"], 0, created_by=alice)
    api_tokens.create_token(robot, "robots", ["read"], 0, created_by=alice)
    old, _ = api_tokens.create_token(alice, "old-one", ["read"], 0, created_by=alice)
    api_tokens.revoke(old)
    client = login_as("admin")
    everything = client.get("/admin/tokens").get_data(as_text=True)
    assert all(name in everything for name in ("alices", "robots", "old-one"))
    service = client.get("/admin/tokens?kind=service").get_data(as_text=True)
    assert "robots" in service and "alices" not in service
    revoked = client.get("/admin/tokens?status=revoked").get_data(as_text=True)
    assert "old-one" in revoked and "alices" not in revoked
    by_owner = client.get("/admin/tokens?owner=ali&status=active").get_data(as_text=True)
    assert "alices" in by_owner and "old-one" not in by_owner and "robots" not in by_owner
    assert client.get("/admin/tokens?kind=nonsense&page=x").status_code == 200
    token = csrf_token(client, "/admin/tokens")
    done = client.post(f"/admin/tokens/{mine.id}/revoke", data={"csrf_token": token})
    assert done.status_code == 302
    db_session.expire_all()
    assert db_session.get(ApiToken, mine.id).revoked_at is not None
    assert client.post("/admin/tokens/999999/revoke", data={"csrf_token": token}).status_code == 404


def test_admin_token_list_is_paginated(login_as, db_session):
    alice = accounts.find_user("alice")
    for number in range(30):
        api_tokens.create_token(alice, f"t{number:02}", ["read"], 0, created_by=alice)
    client = login_as("admin")
    first = client.get("/admin/tokens").get_data(as_text=True)
    assert "t29" in first and "t00" not in first and "Page 1 of 2" in first
    second = client.get("/admin/tokens?page=2").get_data(as_text=True)
    assert "t00" in second


def test_token_pages_need_admin(login_as, db_session):
    client = login_as("alice")
    assert client.get("/admin/tokens").status_code == 403
    assert client.get("/admin/service-accounts").status_code == 403
    assert db_session.scalar(select(func.count()).select_from(LoginFailure)) == 0


@pytest.mark.usefixtures("published")
def test_pages_name_the_token_an_instance_was_started_with(login_as, db_session):
    operator = accounts.find_user("operator")
    _, text = api_tokens.create_token(operator, "deploy-bot", ["start"], 0, created_by=operator)
    client = login_as("operator")
    started = client.application.test_client().post(
        "/api/instances", json={"process_key": "open"}, headers={"Authorization": f"Bearer {text}"}
    )
    assert started.status_code == 201
    instance = started.json["id"]
    detail = client.get(f"/operations/instances/{instance}").get_data(as_text=True)
    assert "(token: deploy-bot)" in detail
    steps = client.get(f"/inbox/instances/{instance}").get_data(as_text=True)
    assert "(token: deploy-bot)" in steps


def test_revoking_on_a_service_account_page_returns_to_it(login_as, db_session):
    robot = api_tokens.create_service_account("erp-sync", roles=[], partitions=[])
    client = login_as("admin")
    token = csrf_token(client, f"/admin/service-accounts/{robot.id}")
    page = client.post(
        f"/admin/service-accounts/{robot.id}/tokens",
        data={"csrf_token": token, "name": "erp", "scopes": ["read"], "expires": "30"},
    ).get_data(as_text=True)
    back = re.search(r'name="back" value="([^"]+)"', page)[1]
    row = db_session.scalars(select(ApiToken)).one()
    done = client.post(f"/admin/tokens/{row.id}/revoke", data={"csrf_token": token, "back": back})
    assert done.headers["Location"].endswith(f"/admin/service-accounts/{robot.id}")
    assert client.get(done.headers["Location"]).status_code == 200
    api_tokens.create_token(robot, "second", ["read"], 30, created_by=robot)
    filtered = client.get("/admin/tokens?status=active").get_data(as_text=True)
    assert 'name="back" value="/admin/tokens?status=active"' in filtered
