"""Shared fixtures: a real database (SQLite file, or PostgreSQL from DATABASE_URL) built by the
migrations, a real Redis (embedded redis-server unless REDIS_URL), and the app on top of them."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import requirements
from tests.helpers.app import TEST_PASSWORD, empty_database, login, make_user
from tests.helpers.scratch import is_postgres, scratch_database

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
    from webapp.infra.redis_server import EmbeddedRedis

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
        # This process changes webhooks only through the service, which refreshes its list: no
        # re-read in the middle of a test that counts a step's statements.
        "WEBHOOK_REFRESH": 3600.0,
    }


@pytest.fixture(scope="session")
def app(app_config: dict):
    from flask_migrate import upgrade

    from webapp import create_app

    app = create_app(app_config)
    with app.app_context():
        upgrade()
    return app


@pytest.fixture(autouse=True)
def _isolated_state(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests that use the app start from a new installation's tables (built-in roles only) and
    an empty Redis."""
    if "app" not in request.fixturenames:
        yield
        return
    app = request.getfixturevalue("app")
    empty_database(app)
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
    from webapp.cli.demo import seed_demo
    from webapp.extensions import db

    with data_app.app_context():
        counts = seed_demo()
        db.session.remove()
        return counts


@pytest.fixture
def client(app):
    return app.test_client()


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
