"""Shared fixtures: a real database (SQLite file, or PostgreSQL from DATABASE_URL) built by the
migrations, a real Redis (embedded redis-server unless REDIS_URL), and the app on top of them."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from tests.helpers import requirements
from tests.helpers.scratch import is_postgres, scratch_database

ROOT = Path(__file__).resolve().parent.parent
TEST_SECRET = "test-secret-key-that-is-long-enough-for-production-checks"


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("db")
    with scratch_database(os.environ.get("DATABASE_URL"), folder, "flowdesk_test") as url:
        yield url


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    from webapp.redis_server import EmbeddedRedis

    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    server.ensure_running()
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def app_config(database_url: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": database_url,
        "REDIS_URL": redis_url,
        "SECRET_KEY": TEST_SECRET,
        "INSTANCE_PATH": str(tmp_path_factory.mktemp("instance")),
        "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
        "RQ_QUEUE": "flowdesk-test",
    }


@pytest.fixture(scope="session")
def app(app_config: dict):
    from flask_migrate import upgrade

    from webapp import create_app

    app = create_app(app_config)
    with app.app_context():
        upgrade()
    return app


def _clean(app) -> None:
    from webapp.extensions import db
    from webapp.queue import redis_connection

    with app.app_context():
        db.session.remove()
        tables = [t for t in reversed(db.metadata.sorted_tables)]
        # A request or worker thread left over from the previous test (a browser's last poll)
        # may still hold a table: PostgreSQL then picks the TRUNCATE as a deadlock victim.
        for attempt in range(5):
            try:
                with db.engine.begin() as conn:
                    if conn.dialect.name == "postgresql":
                        names = ", ".join(f'"{t.name}"' for t in tables)
                        conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
                    else:
                        for table in tables:
                            conn.execute(table.delete())
                break
            except OperationalError:
                if attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))
        redis_connection(app).flushdb()
        _built_in_roles()


def _built_in_roles() -> None:
    """Tests start where `db upgrade` leaves a new installation: the built-in roles exist."""
    from webapp.extensions import db
    from webapp.permissions import BUILT_IN_ROLES
    from webapp.services.accounts import ensure_role

    for name, (permissions, description) in BUILT_IN_ROLES.items():
        ensure_role(name, permissions, description)
    db.session.commit()
    db.session.remove()


@pytest.fixture(autouse=True)
def _isolated_state(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests that use the app start from a new installation's tables (built-in roles only) and
    an empty Redis."""
    if "app" not in request.fixturenames:
        yield
        return
    app = request.getfixturevalue("app")
    _clean(app)
    yield


@pytest.fixture(scope="session")
def data_app(app, app_config: dict):
    """A second app on the same database for test set-up and checks.

    Requests made through `app` while a `data_app` context is open push their own app context,
    so nothing (such as Flask-Login's cached user in `g`) leaks between requests.
    """
    from webapp import create_app

    # Each statement of the test's own session commits at once (SQLite), so its reads always
    # see what the requests under test wrote; PostgreSQL's READ COMMITTED already does.
    options = {"execution_options": {"sqlite_begin": "AUTOCOMMIT"}}
    return create_app(dict(app_config, SQLALCHEMY_ENGINE_OPTIONS=options))


@pytest.fixture
def db_session(data_app):
    from webapp.extensions import db

    with data_app.app_context():
        yield db.session
        db.session.remove()


@pytest.fixture
def demo(data_app) -> dict[str, int]:
    from webapp.extensions import db
    from webapp.services.demo import seed_demo

    with data_app.app_context():
        counts = seed_demo()
        db.session.remove()
        return counts


@pytest.fixture
def client(app):
    return app.test_client()


def worker_env(app_config: dict, **settings: object) -> dict[str, str]:
    """The environment a `python worker.py` process needs to join the suite's database and Redis,
    plus `settings` (such as SWEEP_GRACE) as environment variables."""
    env = dict(
        os.environ,
        DATABASE_URL=app_config["SQLALCHEMY_DATABASE_URI"],
        REDIS_URL=app_config["REDIS_URL"],
        SECRET_KEY=app_config["SECRET_KEY"],
        RQ_QUEUE=app_config["RQ_QUEUE"],
        FLOWDESK_ENV="testing",
        PYTHONPATH=str(ROOT),
    )
    env.update({key: str(value) for key, value in settings.items()})
    return env


TEST_PASSWORD = "password-123"


def make_user(
    username: str,
    permissions: list[str],
    partitions: tuple[str, ...] | list[str] = (),
    *,
    role: str | None = None,
    password: str = TEST_PASSWORD,
):
    """A committed user holding `permissions` (through the role `role`, by default named after
    the user) in the partitions with these keys; needs an app context."""
    from sqlalchemy import select

    from webapp.extensions import db
    from webapp.models import Partition
    from webapp.services import accounts

    granted = accounts.ensure_role(role or f"role-{username}", permissions)
    found = [db.session.scalar(select(Partition).where(Partition.key == k)) for k in partitions]
    assert all(found), f"unknown partition in {partitions}"
    return accounts.create_user(username, password, roles=[granted], partitions=found)


CSRF = re.compile(r'name="csrf_token"[^>]*?value="([^"]+)"')


def csrf_token(client, path: str = "/login") -> str:
    """Fetch a page and read its CSRF token, as a browser would."""
    response = client.get(path)
    match = CSRF.search(response.get_data(as_text=True))
    assert match, f"no CSRF token on {path} (status {response.status_code})"
    return match.group(1)


def failed_page(client, response, path: str, status: int = 200) -> str:
    """A failed form post: a 303 back to the GET page `path` (so a reload never re-posts); that
    page, fetched twice as a reload would, shows the same focused message. Returns its text."""
    assert response.status_code == 303, response.get_data(as_text=True)[-2000:]
    location = response.headers["Location"]
    assert re.fullmatch(rf"{re.escape(path)}\?(.*&)?failed=[\w-]+", location), location
    page = client.get(location)
    assert page.status_code == status
    text = page.get_data(as_text=True)
    alert = re.compile(r'<div [^>]*role="alert" tabindex="-1" autofocus>.*?</div>', re.S)
    assert alert.search(text), "the message is in an alert that takes the focus"
    reloaded = client.get(location).get_data(as_text=True)
    assert alert.findall(reloaded) == alert.findall(text), "a reload shows the same message"
    return text


def login(client, username: str, password: str = "flowdesk-demo"):
    token = csrf_token(client, "/login")
    return client.post(
        "/login", data={"username": username, "password": password, "csrf_token": token}
    )


@pytest.fixture
def login_as(client, demo):
    def sign_in(username: str):
        response = login(client, username)
        assert response.status_code == 302, response.get_data(as_text=True)
        return client

    return sign_in


@pytest.fixture
def user_with(app, db_session, demo):
    """A signed-in client for a new user holding `permissions` in `partitions`."""

    def make(permissions: list[str], partitions: tuple[str, ...] | list[str] = ()):
        name = "-".join(p.replace(".", "") for p in permissions) + "-" + "-".join(partitions)
        user = make_user(f"u-{name}"[:64], permissions, partitions, role=f"r-{name}"[:64])
        client = app.test_client()
        assert login(client, user.username, TEST_PASSWORD).status_code == 302
        return client

    return make


@pytest.fixture(scope="session")
def live_server(app):
    """The app served over real HTTP on a free loopback port, in a thread."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture
def fresh_database_url(database_url: str, tmp_path: Path) -> Iterator[str]:
    """A second, empty database of the same kind as the suite's."""
    server = os.environ.get("DATABASE_URL") if is_postgres(database_url) else None
    with scratch_database(server, tmp_path, "flowdesk_fresh") as url:
        yield url


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `corpus` skips without the shared BPMN corpus (fails when it is required)."""
    if item.get_closest_marker("corpus") is not None:
        requirements.needs_corpus()


@pytest.fixture
def corpus_present() -> Path:
    """The shared BPMN corpus; skips the test without one (fails with FLOWDESK_REQUIRE_CORPUS=1)."""
    return requirements.needs_corpus()
