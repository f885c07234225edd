"""Sign-ins as server-side sessions: remember-me cookies that are Secure, new per sign-in, and
that stop working on sign-out, sign-out everywhere, password change or reset, and deactivation."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.helpers.app import CSRF, csrf_token
from webapp import create_app
from webapp.config import load_config
from webapp.extensions import db
from webapp.models import User

REMEMBER = "remember_token"


def sign_in(app, username: str, password: str = "flowdesk-demo", *, remember: bool = True):
    """A new browser (test client) signed in as `username`."""
    client = app.test_client()
    data = {"username": username, "password": password, "csrf_token": csrf_token(client)}
    if remember:
        data["remember"] = "y"
    response = client.post("/login", data=data)
    assert response.status_code == 302, response.get_data(as_text=True)
    return client


def cookie(client, name: str) -> str:
    found = client.get_cookie(name)
    assert found is not None, f"no {name} cookie"
    return found.value


def signed_in(app, **cookies: str) -> bool:
    """Whether a fresh browser holding only these cookies gets the home page."""
    client = app.test_client()
    for name, value in cookies.items():
        client.set_cookie(name, value)
    return client.get("/").status_code == 200


def stolen(client) -> dict[str, dict[str, str]]:
    """The session cookie and the remember-me cookie of `client`, each alone."""
    return {
        "session": {"session": cookie(client, "session")},
        "remember": {REMEMBER: cookie(client, REMEMBER)},
    }


def assert_ended(app, cookies: dict[str, dict[str, str]]) -> None:
    for kind, jar in cookies.items():
        assert not signed_in(app, **jar), f"the {kind} cookie still signs in"


def test_remember_cookie_is_secure_httponly_and_lax_with_the_session_cookie(app, demo, app_config):
    secure = create_app(dict(app_config, SESSION_COOKIE_SECURE=True))
    client = secure.test_client()
    page = client.get("/login", base_url="https://localhost").get_data(as_text=True)
    token = CSRF.search(page).group(1)
    response = client.post(
        "/login",
        base_url="https://localhost",
        headers={"Referer": "https://localhost/login"},
        data={
            "username": "alice",
            "password": "flowdesk-demo",
            "remember": "y",
            "csrf_token": token,
        },
    )
    assert response.status_code == 302
    cookies = response.headers.getlist("Set-Cookie")
    remember = next(c for c in cookies if c.startswith(f"{REMEMBER}="))
    session = next(c for c in cookies if c.startswith("session="))
    for flag in ("Secure", "HttpOnly", "SameSite=Lax"):
        assert flag in remember, remember
        assert flag in session, session
    with secure.app_context():
        db.engine.dispose()


def test_remember_cookie_follows_session_cookie_secure_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_COOKIE_SECURE", "1")
    assert load_config(tmp_path)["REMEMBER_COOKIE_SECURE"] is True
    monkeypatch.setenv("SESSION_COOKIE_SECURE", "0")
    assert load_config(tmp_path)["REMEMBER_COOKIE_SECURE"] is False


def test_each_sign_in_gets_new_cookies_and_keeps_other_devices_signed_in(app, demo):
    laptop = sign_in(app, "alice")
    phone = sign_in(app, "alice")
    assert cookie(laptop, REMEMBER) != cookie(phone, REMEMBER)
    assert cookie(laptop, "session") != cookie(phone, "session")
    assert laptop.get("/").status_code == phone.get("/").status_code == 200
    for jar in (*stolen(laptop).values(), *stolen(phone).values()):
        assert signed_in(app, **jar), "each cookie alone signs in while its sign-in lasts"


def test_sign_out_ends_this_sign_in_and_its_remember_cookie_only(app, demo):
    laptop = sign_in(app, "alice")
    phone = sign_in(app, "alice")
    copies = stolen(laptop)
    response = laptop.post("/logout", data={"csrf_token": csrf_token(laptop, "/")})
    assert response.status_code == 302
    assert laptop.get("/").status_code == 302
    assert_ended(app, copies)
    assert phone.get("/").status_code == 200, "signing out on one device keeps the others"


def test_sign_out_everywhere_ends_every_sign_in(app, demo):
    laptop = sign_in(app, "alice")
    phone = sign_in(app, "alice", remember=False)
    tablet = sign_in(app, "alice")
    other_user = sign_in(app, "bob")
    copies = {**stolen(tablet), "phone session": {"session": cookie(phone, "session")}}
    page = laptop.get("/account").get_data(as_text=True)
    assert "You are signed in on 3 browsers" in page
    response = laptop.post(
        "/account/sign-out-everywhere", data={"csrf_token": csrf_token(laptop, "/account")}
    )
    assert response.status_code == 302
    assert response.headers["Location"] == "/login"
    for client in (laptop, phone, tablet):
        assert client.get("/").status_code == 302
    assert_ended(app, copies)
    assert other_user.get("/").status_code == 200


def test_sign_out_everywhere_needs_the_csrf_token(app, demo):
    laptop = sign_in(app, "alice")
    assert laptop.post("/account/sign-out-everywhere").status_code == 400
    assert laptop.get("/").status_code == 200


def test_changing_the_password_ends_other_sign_ins_and_renews_this_one(app, demo):
    laptop = sign_in(app, "alice")
    phone = sign_in(app, "alice")
    old_laptop = stolen(laptop)
    copies = stolen(phone)
    token = csrf_token(laptop, "/account")

    wrong = laptop.post(
        "/account/password",
        data={
            "csrf_token": token,
            "current_password": "not-it",
            "password": "a-new-password",
            "confirm": "a-new-password",
        },
    )
    assert wrong.status_code == 422
    assert "This is not your current password." in wrong.get_data(as_text=True)
    differ = laptop.post(
        "/account/password",
        data={
            "csrf_token": token,
            "current_password": "flowdesk-demo",
            "password": "a-new-password",
            "confirm": "another",
        },
    )
    assert differ.status_code == 422
    assert "The passwords differ." in differ.get_data(as_text=True)
    assert phone.get("/").status_code == 200, "a refused change ends nothing"

    changed = laptop.post(
        "/account/password",
        data={
            "csrf_token": token,
            "current_password": "flowdesk-demo",
            "password": "a-new-password",
            "confirm": "a-new-password",
        },
    )
    assert changed.status_code == 302
    assert laptop.get("/").status_code == 200, "the browser that changed it stays signed in"
    assert cookie(laptop, REMEMBER) != old_laptop["remember"][REMEMBER]
    assert signed_in(app, **{REMEMBER: cookie(laptop, REMEMBER)})
    assert phone.get("/").status_code == 302
    assert_ended(app, copies)
    assert_ended(app, old_laptop)
    sign_in(app, "alice", "a-new-password")


def test_an_admin_password_reset_ends_every_sign_in(app, demo, db_session, login_as):
    alice = sign_in(app, "alice")
    copies = stolen(alice)
    admin = login_as("admin")
    alice_id = db_session.scalar(select(User.id).where(User.username == "alice"))
    response = admin.post(
        f"/admin/users/{alice_id}/password",
        data={
            "csrf_token": csrf_token(admin, f"/admin/users/{alice_id}"),
            "password": "reset-by-admin",
            "confirm": "reset-by-admin",
        },
    )
    assert response.status_code == 200
    assert alice.get("/").status_code == 302
    assert_ended(app, copies)


def test_deactivating_ends_every_sign_in_for_good(app, demo, db_session, login_as):
    alice = sign_in(app, "alice")
    copies = stolen(alice)
    admin = login_as("admin")
    alice_id = db_session.scalar(select(User.id).where(User.username == "alice"))

    def save(active: bool) -> None:
        data = {
            "csrf_token": csrf_token(admin, f"/admin/users/{alice_id}"),
            "username": "alice",
            "display_name": "Alice Clerk",
        }
        if active:
            data["active"] = "y"
        assert admin.post(f"/admin/users/{alice_id}", data=data).status_code == 302

    save(active=False)
    assert alice.get("/").status_code == 302
    save(active=True)
    assert alice.get("/").status_code == 302, "reactivating does not revive old sign-ins"
    assert_ended(app, copies)
    sign_in(app, "alice")


@pytest.mark.parametrize(
    "user_id",
    ["1", "1:", "1:nope", "x:y", "99999999999999999999:abc", "\u00b2:abc", ":", ""],
)
def test_forged_or_old_style_ids_sign_nobody_in(app, demo, user_id):
    from webapp.services.accounts import session_user

    with app.app_context():
        assert session_user(user_id) is None
