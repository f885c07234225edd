"""Signing in and out, throttling, CSRF, and safe redirects."""

import base64
import statistics
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from tests.helpers.app import csrf_token, login, make_user
from webapp import create_app
from webapp.extensions import db
from webapp.models import LoginFailure, User
from webapp.models.base import utcnow


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


ATTACKER = "203.0.113.5"
USER_ADDRESS = "198.51.100.7"


def sign_in_from(app, address: str, username: str, password: str = "flowdesk-demo", **headers):
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    token = csrf_token(client, "/login")
    return client.post(
        "/login",
        data={"username": username, "password": password, "csrf_token": token},
        headers=headers,
    )


def age_locks(db_session) -> None:
    """Let every current wait run out, as if its time had passed."""
    db_session.execute(update(LoginFailure).values(locked_until=utcnow() - timedelta(seconds=1)))
    db_session.commit()


def test_failures_from_one_address_do_not_lock_the_user_out_elsewhere(app, demo):
    limit = app.config["LOGIN_MAX_FAILURES"]
    for _ in range(limit):
        assert sign_in_from(app, ATTACKER, "bob", "wrong-password").status_code == 401
    locked = sign_in_from(app, ATTACKER, "bob")  # even the right password waits there
    assert locked.status_code == 429
    assert locked.headers["Retry-After"] == "15"
    assert "Too many failed sign-in attempts. Try again in 15 seconds." in locked.get_data(
        as_text=True
    )
    assert sign_in_from(app, USER_ADDRESS, "bob").status_code == 302
    assert sign_in_from(app, ATTACKER, "alice").status_code == 302, "other users are not locked"


def test_each_further_failure_doubles_the_wait_up_to_the_longest(
    app, demo, db_session, monkeypatch
):
    monkeypatch.setitem(app.config, "LOGIN_LOCKOUT_SECONDS", 100)
    for _ in range(app.config["LOGIN_MAX_FAILURES"]):
        sign_in_from(app, ATTACKER, "bob", "wrong-password")
    waits = []
    for _ in range(5):
        waits.append(sign_in_from(app, ATTACKER, "bob", "wrong-password").headers["Retry-After"])
        age_locks(db_session)
        assert sign_in_from(app, ATTACKER, "bob", "wrong-password").status_code == 401
    assert waits == ["15", "30", "60", "100", "100"]
    locked = sign_in_from(app, ATTACKER, "bob")
    assert "Try again in 2 minutes." in locked.get_data(as_text=True)
    age_locks(db_session)
    assert sign_in_from(app, ATTACKER, "bob").status_code == 302
    assert sign_in_from(app, ATTACKER, "bob", "wrong-password").status_code == 401, (
        "a successful sign-in clears the failures"
    )
    assert sign_in_from(app, ATTACKER, "bob").status_code == 302


def test_many_usernames_from_one_address_make_that_address_wait(app, demo, monkeypatch):
    monkeypatch.setitem(app.config, "LOGIN_ADDRESS_MAX_FAILURES", 8)
    for index in range(8):
        response = sign_in_from(app, ATTACKER, f"guess-{index}", "wrong-password")
        assert response.status_code == 401
    locked = sign_in_from(app, ATTACKER, "alice")
    assert locked.status_code == 429
    assert locked.headers["Retry-After"] == "15"
    assert sign_in_from(app, USER_ADDRESS, "alice").status_code == 302


def test_http_basic_is_throttled_per_address_too(app, demo):
    def api(address: str, password: str):
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = address
        return client.get("/api/instances", auth=("bob", password))

    for _ in range(app.config["LOGIN_MAX_FAILURES"]):
        assert api(ATTACKER, "wrong-password").status_code == 401
    locked = api(ATTACKER, "flowdesk-demo")
    assert locked.status_code == 429
    assert locked.headers["Retry-After"] == "15"
    assert locked.get_json()["error"] == "locked"
    assert api(USER_ADDRESS, "flowdesk-demo").status_code == 200


def test_the_message_is_the_same_for_unknown_users(app, client, demo):
    for _ in range(app.config["LOGIN_MAX_FAILURES"]):
        login(client, "ghost", "wrong-password")
    assert login(client, "ghost", "wrong-password").status_code == 429


@pytest.fixture
def proxied_app(app, app_config):
    """The app behind one trusted proxy (the TLS proxy at 10.0.0.2)."""
    proxied = create_app(dict(app_config, TRUSTED_PROXIES=1))
    yield proxied
    with proxied.app_context():
        db.engine.dispose()


def test_behind_a_trusted_proxy_the_forwarded_address_counts(proxied_app, demo):
    proxy = "10.0.0.2"
    for _ in range(proxied_app.config["LOGIN_MAX_FAILURES"]):
        response = sign_in_from(
            proxied_app, proxy, "bob", "wrong-password", **{"X-Forwarded-For": ATTACKER}
        )
        assert response.status_code == 401
    # The proxy appends the address it saw: a client cannot hide behind a forged first entry.
    spoofed = sign_in_from(
        proxied_app, proxy, "bob", **{"X-Forwarded-For": f"{USER_ADDRESS}, {ATTACKER}"}
    )
    assert spoofed.status_code == 429
    user = sign_in_from(proxied_app, proxy, "bob", **{"X-Forwarded-For": USER_ADDRESS})
    assert user.status_code == 302


def test_without_trusted_proxies_forwarded_headers_are_ignored(app, demo):
    assert app.config["TRUSTED_PROXIES"] == 0
    for index in range(app.config["LOGIN_MAX_FAILURES"]):
        forged = {"X-Forwarded-For": f"192.0.2.{index}"}
        assert sign_in_from(app, ATTACKER, "bob", "wrong-password", **forged).status_code == 401
    forged = {"X-Forwarded-For": USER_ADDRESS}
    assert sign_in_from(app, ATTACKER, "bob", **forged).status_code == 429


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


@pytest.fixture
def scrypt_app(app, app_config):
    """The app with the production password hashing (scrypt) and no throttling in the way."""
    production = create_app(
        dict(
            app_config,
            PASSWORD_HASH_METHOD="scrypt",
            LOGIN_MAX_FAILURES=1000,
            LOGIN_ADDRESS_MAX_FAILURES=1000,
        )
    )
    yield production
    with production.app_context():
        db.engine.dispose()


def test_unknown_inactive_and_known_users_cost_the_same_work(scrypt_app, demo):
    """CPU time of this thread (the test client runs the request in it), so other load on the
    machine does not count; medians of several rounds, with generous bounds."""
    with scrypt_app.app_context():
        make_user("carol", [], password="carols-password")
        make_user("dave", [], password="daves-password").active = False
        db.session.commit()
        db.session.remove()
    client = scrypt_app.test_client()
    token = csrf_token(client, "/login")

    def cpu_seconds(username: str) -> float:
        start = time.thread_time()
        response = client.post(
            "/login", data={"username": username, "password": "wrong-guess", "csrf_token": token}
        )
        spent = time.thread_time() - start
        assert response.status_code == 401
        return spent

    samples: dict[str, list[float]] = {"carol": [], "nobody-here": [], "dave": [], "Not Valid!": []}
    cpu_seconds("carol")  # warm up: the first dummy hash is made once per process
    for _ in range(5):
        for username, times in samples.items():
            times.append(cpu_seconds(username))
    known = statistics.median(samples["carol"])
    for username, times in samples.items():
        assert 0.5 * known <= statistics.median(times) <= 2 * known, (username, samples)


def test_a_sign_in_brings_an_old_password_hash_to_the_current_method(scrypt_app, demo, db_session):
    alice = db_session.scalar(select(User).where(User.username == "alice"))
    assert alice.password_hash.startswith("pbkdf2:sha256:1000$")
    assert sign_in_from(scrypt_app, USER_ADDRESS, "alice").status_code == 302
    db_session.expire_all()
    alice = db_session.scalar(select(User).where(User.username == "alice"))
    assert alice.password_hash.startswith("scrypt:")
    assert sign_in_from(scrypt_app, USER_ADDRESS, "alice").status_code == 302


def test_concurrent_failures_are_all_counted_and_never_fail(
    app, demo, db_session, live_server, monkeypatch
):
    """Failed HTTP Basic sign-ins for one username, at once over real HTTP (each request with
    its own database connection, as in separate processes): none is lost, none errs."""
    attempts = 12
    monkeypatch.setitem(app.config, "LOGIN_MAX_FAILURES", attempts + 1)
    credentials = base64.b64encode(b"bob:wrong-password").decode()

    def attempt(_: int) -> int:
        request = urllib.request.Request(  # noqa: S310 - the test's own http:// server
            f"{live_server}/api/instances", headers={"Authorization": f"Basic {credentials}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = list(pool.map(attempt, range(attempts)))
    assert statuses == [401] * attempts
    counts = sorted(db_session.scalars(select(LoginFailure.count)))
    assert counts == [attempts, attempts], "the (bob, address) pair and the address"
