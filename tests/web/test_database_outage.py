"""A database outage answers 503 with Retry-After (a styled page, JSON for the API), and the same
app serves again as soon as the database is back."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from tests.db_proxy import proxied
from tests.engine.conftest import published  # noqa: F401 - shared fixture
from tests.helpers.app import csrf_token, login
from tests.helpers.http import basic
from tests.helpers.scratch import is_postgres
from webapp import create_app
from webapp.models import Instance

START = {"process_key": "open"}


@pytest.fixture
def outage_app(app, app_config, database_url, request):
    """An app on the suite's PostgreSQL database through a proxy the test can cut."""
    if not is_postgres(database_url):
        pytest.skip("PostgreSQL only: SQLite's outage is a held lock (see below)")
    request.getfixturevalue("published")
    with proxied(database_url) as (proxy, url):
        yield proxy, create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=url))


def assert_styled_503(response) -> str:
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    page = response.get_data(as_text=True)
    assert response.mimetype == "text/html"
    assert "css/app.css" in page and 'class="topbar"' in page, "the styled layout"
    assert "Database unavailable" in page and "Try again in a few seconds" in page
    return page


def test_pages_and_api_answer_503_while_postgresql_is_down_and_recover(outage_app):
    proxy, app = outage_app
    client = app.test_client()
    assert login(client, "operator").status_code == 302
    assert client.get("/operations/").status_code == 200
    api = app.test_client()
    assert api.get("/api/instances", headers=basic("operator")).status_code == 200

    proxy.cut()
    page = assert_styled_503(client.get("/operations/"))
    assert "Nothing was saved." in page
    assert "Sign out" not in page, "rendered without looking the user up"
    assert_styled_503(client.get("/"))
    missing = client.get("/no/such/page")
    assert missing.status_code == 404, "a page that needs no data keeps its own status"
    assert 'class="topbar"' in missing.get_data(as_text=True)
    for response in (
        api.get("/api/instances", headers=basic("operator")),
        api.post("/api/instances", headers=basic("operator"), json={"process_key": "expense"}),
    ):
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "5"
        assert response.json["error"] == "database_unavailable"
        assert "Try again in a few seconds" in response.json["message"]

    proxy.restore()
    assert client.get("/operations/").status_code == 200, "the first request after the outage"
    assert api.get("/api/instances", headers=basic("operator")).status_code == 200
    started = api.post("/api/instances", headers=basic("operator"), json=START)
    assert started.status_code == 201, started.json


def test_connections_dropped_while_the_app_was_idle_are_replaced_unseen(outage_app):
    """The database restarts between two requests: the pooled connections are dead, yet the next
    request is served (each is checked before use) instead of failing once per connection."""
    proxy, app = outage_app
    client = app.test_client()
    assert login(client, "operator").status_code == 302
    assert client.get("/operations/").status_code == 200
    proxy.cut()
    proxy.restore()
    assert client.get("/operations/").status_code == 200


@pytest.mark.usefixtures("published")
def test_a_sqlite_write_lock_held_too_long_answers_503_then_writes_go_through(
    app, app_config, database_url
):
    """SQLite's outage: another process holds the write lock past the busy timeout."""
    if is_postgres(database_url):
        pytest.skip("SQLite only")
    busy = create_app(dict(app_config, SQLITE_BUSY_TIMEOUT=0.2))
    client = busy.test_client()
    assert login(client, "operator").status_code == 302
    holder = sqlite3.connect(make_url(database_url).database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        page = assert_styled_503(login(busy.test_client(), "operator"))
        assert "Nothing was saved." in page
        response = client.post(
            "/api/instances",
            json=START,
            headers=basic("operator"),
        )
        assert (response.status_code, response.json["error"]) == (503, "database_unavailable")
        assert response.headers["Retry-After"] == "5"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    started = client.post("/api/instances", json=START, headers=basic("operator"))
    assert started.status_code == 201, started.json


def test_a_sqlite_file_that_cannot_be_opened_answers_503_until_it_is_back(
    app_config, fresh_database_url, tmp_path
):
    if is_postgres(fresh_database_url):
        pytest.skip("SQLite only")
    from flask_migrate import upgrade
    from sqlalchemy.pool import NullPool

    folder = tmp_path / "data"
    folder.mkdir()
    url = f"sqlite:///{folder / 'flowdesk.sqlite3'}"
    # Without a pool every request opens the file, as each new process or connection does.
    app = create_app(
        dict(
            app_config,
            SQLALCHEMY_DATABASE_URI=url,
            SQLALCHEMY_ENGINE_OPTIONS={"poolclass": NullPool},
        )
    )
    with app.app_context():
        upgrade()
    client = app.test_client()
    assert client.get("/api/instances", headers=basic("nobody")).status_code == 401
    folder.rename(tmp_path / "moved")
    try:
        gone = client.get("/api/instances", headers=basic("nobody"))
        assert (gone.status_code, gone.json["error"]) == (503, "database_unavailable")
        assert gone.headers["Retry-After"] == "5"
        assert_styled_503(login(client, "nobody"))
    finally:
        (tmp_path / "moved").rename(folder)
    assert client.get("/api/instances", headers=basic("nobody")).status_code == 401


def test_a_start_form_whose_commit_answer_is_lost_says_the_outcome_is_unknown(
    outage_app, db_session
):
    """The instance was started, but the page cannot know it and must not say otherwise."""
    proxy, app = outage_app
    client = app.test_client()
    assert login(client, "operator").status_code == 302
    token = csrf_token(client, "/inbox/processes/open/start")
    proxy.lose_commit_reply(after=b"INSERT INTO instances")
    response = client.post(
        "/inbox/processes/open/start", data={"csrf_token": token, "business_key": "FORM-1"}
    )
    page = assert_styled_503(response)
    assert "the outcome is unknown" in page and "may or may not have been saved" in page
    assert "nothing was saved" not in page.lower()
    assert proxy.commit_done.wait(10)
    started = select(func.count()).where(Instance.business_key == "FORM-1")
    assert db_session.scalar(started) == 1


@pytest.fixture
def worker_db_app(app, app_config, database_url):
    """An app whose pool pings a connection only after it sat idle 0.3 s, as a worker's does
    (after WORKER_PING_AFTER_IDLE), through a proxy the test can cut."""
    if not is_postgres(database_url):
        pytest.skip("PostgreSQL only: SQLite has no connections to lose")
    with proxied(database_url) as (proxy, url):
        config = dict(app_config, SQLALCHEMY_DATABASE_URI=url, DB_PING_AFTER_IDLE=0.3)
        yield proxy, create_app(config)


def _pings(app, monkeypatch) -> list[int]:
    from webapp.extensions import db

    with app.app_context():
        dialect = db.engine.dialect
    pings: list[int] = []
    original = dialect.do_ping

    def counted(dbapi_connection):
        pings.append(1)
        return original(dbapi_connection)

    monkeypatch.setattr(dialect, "do_ping", counted)
    return pings


def _count_instances(app) -> int:
    from webapp.extensions import db

    with app.app_context():
        try:
            return db.session.scalar(select(func.count(Instance.id)))
        finally:
            db.session.remove()


def test_a_worker_pool_pings_only_connections_that_sat_idle(worker_db_app, monkeypatch):
    """Steps in quick succession reuse their connection without a round trip to check it; one
    idle longer than DB_PING_AFTER_IDLE is checked, and replaced when the database dropped it."""
    import time

    proxy, app = worker_db_app
    pings = _pings(app, monkeypatch)
    for _ in range(5):
        assert _count_instances(app) == 0
    assert len(pings) == 0, "a connection used a moment ago is not pinged"

    time.sleep(0.4)
    assert _count_instances(app) == 0
    assert len(pings) == 1, "one idle past the threshold is"

    proxy.cut()
    proxy.restore()
    time.sleep(0.4)
    assert _count_instances(app) == 0, "the dropped connection was replaced unseen"
    assert len(pings) == 2
