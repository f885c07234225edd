"""Liveness and readiness endpoints for load balancers, with a real database and Redis."""

from __future__ import annotations

import socket

from webapp import create_app


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_liveness_and_readiness_when_everything_answers(client):
    for path in ("/livez", "/healthz"):
        assert client.get(path).json == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json == {"status": "ok", "database": "ok", "redis": "ok"}


def test_readiness_names_redis_when_it_is_down(app_config):
    app = create_app({**app_config, "REDIS_URL": f"redis://127.0.0.1:{_closed_port()}/0"})
    client = app.test_client()
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json == {"status": "unavailable", "database": "ok", "redis": "unavailable"}
    assert client.get("/livez").status_code == 200, "a live process is not restarted for it"


def test_readiness_names_the_database_when_it_is_down(app_config, tmp_path):
    gone = f"sqlite:///{tmp_path / 'no-such-folder' / 'flowdesk.sqlite3'}"
    if app_config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql"):
        gone = f"postgresql://postgres@127.0.0.1:{_closed_port()}/flowdesk"
    app = create_app({**app_config, "SQLALCHEMY_DATABASE_URI": gone})
    ready = app.test_client().get("/readyz")
    assert ready.status_code == 503
    assert ready.json == {"status": "unavailable", "database": "unavailable", "redis": "ok"}
