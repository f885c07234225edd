"""Signing in and out, throttling, CSRF, and safe redirects."""

from sqlalchemy import select

from tests.conftest import csrf_token, login
from webapp.models import User


def test_login_page_renders_a_labelled_form(client):
    page = client.get("/login").get_data(as_text=True)
    assert '<label for="username">Username</label>' in page
    assert '<label for="password">Password</label>' in page
    assert 'name="csrf_token"' in page


def test_pages_need_sign_in(client, demo):
    response = client.get("/admin/users")
    assert response.status_code == 302
    assert "/login?next=%2Fadmin%2Fusers" in response.headers["Location"]


def test_login_then_logout(client, demo):
    response = login(client, "alice")
    assert response.status_code == 302
    assert "Alice Clerk" in client.get("/").get_data(as_text=True)
    token = csrf_token(client, "/")
    response = client.post("/logout", data={"csrf_token": token})
    assert response.status_code == 302
    assert client.get("/").status_code == 302


def test_wrong_password_and_unknown_user_get_the_same_message(client, demo):
    wrong = login(client, "alice", "not-her-password")
    unknown = login(client, "nobody", "whatever-password")
    assert wrong.status_code == unknown.status_code == 401
    assert "Invalid username or password." in wrong.get_data(as_text=True)
    assert "Invalid username or password." in unknown.get_data(as_text=True)


def test_login_redirects_only_to_local_paths(client, demo):
    token = csrf_token(client, "/login")
    for target, expected in [
        ("/admin/users", "/admin/users"),
        ("https://evil.example/", "/"),
        ("//evil.example/x", "/"),
    ]:
        client.get("/")  # keep the session
        response = client.post(
            f"/login?next={target}",
            data={"username": "admin", "password": "flowdesk-demo", "csrf_token": token},
        )
        assert response.status_code == 302
        assert response.headers["Location"] == expected
        client.post("/logout", data={"csrf_token": csrf_token(client, "/")})
        token = csrf_token(client, "/login")


def test_throttling_locks_after_repeated_failures(app, client, demo):
    limit = app.config["LOGIN_MAX_FAILURES"]
    for _ in range(limit):
        assert login(client, "bob", "wrong-password").status_code == 401
    locked = login(client, "bob")  # even the right password is refused while locked
    assert locked.status_code == 429
    assert "Too many failed sign-in attempts. Try again in 15 minutes." in locked.get_data(
        as_text=True
    )
    # Another user from the same address is not locked out by bob's failures.
    assert login(client, "alice").status_code == 302


def test_throttling_message_is_the_same_for_unknown_users(app, client, demo):
    for _ in range(app.config["LOGIN_MAX_FAILURES"]):
        login(client, "ghost", "wrong-password")
    assert login(client, "ghost", "wrong-password").status_code == 429


def test_inactive_user_cannot_sign_in(app, client, demo, db_session):
    user = db_session.scalar(select(User).where(User.username == "alice"))
    user.active = False
    db_session.commit()
    assert login(client, "alice").status_code == 401


def test_post_without_csrf_token_is_rejected_and_changes_nothing(app, login_as, db_session):
    client = login_as("admin")
    response = client.post(
        "/admin/users/new", data={"username": "mallory", "password": "long-enough-password"}
    )
    assert response.status_code == 400
    assert "security token" in response.get_data(as_text=True)
    assert db_session.scalar(select(User).where(User.username == "mallory")) is None


def test_logout_without_csrf_token_keeps_the_session(login_as):
    client = login_as("alice")
    assert client.post("/logout").status_code == 400
    assert client.get("/").status_code == 200


def test_session_cookie_flags(client, demo):
    response = login(client, "alice")
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if c.startswith("session="))
    assert "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie
