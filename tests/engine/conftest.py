"""Engine test helpers: documents, publishing, running jobs in-process, real worker processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.app import make_user
from tests.helpers.documents import FORM, chain, node
from tests.helpers.processes import publish_document
from tests.helpers.workers import Workers
from webapp.infra.redis_server import EmbeddedRedis


@pytest.fixture
def published(app, demo):
    """Processes: open (no partition, waits at a task), finance, hr, a start form, a message,
    and one that fails; and `finance-op`, an operator in finance only."""
    with app.app_context():
        make_user(
            "finance-op",
            ["instances.read", "instances.manage"],
            ["finance"],
            role="manager",
            password="flowdesk-demo",
        )
        wait = (
            "review",
            node("userTask", "Review", assignee={"type": "role", "value": "approver"}),
        )
        publish_document(chain(wait), key="open")
        publish_document(chain(wait), key="fin", partition="finance")
        publish_document(chain(wait), key="hr-only", partition="hr")
        form = chain(wait)
        form["nodes"]["start"]["config"]["form"] = FORM
        publish_document(form, key="form")
        publish_document(
            chain(("paid", node("messageCatch", message="paid", correlationKey="$input.order"))),
            key="msg",
        )
        publish_document(chain(("boom", node("serviceTask", tool="fail", retries=0))), key="fail")
    return True


@pytest.fixture
def engine(app):
    """An app context for calling the engine in-process; yields the session."""
    from webapp.extensions import db

    with app.app_context():
        yield db.session
        db.session.remove()


@pytest.fixture
def test_tools() -> Iterator[None]:
    from tests.engine import tools_for_tests

    tools_for_tests.register()
    yield
    tools_for_tests.unregister()


@pytest.fixture
def redis_client(app):
    from webapp.infra.queue import redis_connection

    return redis_connection(app)


@pytest.fixture
def workers(app, app_config, tmp_path) -> Iterator[Workers]:
    group = Workers(app_config, tmp_path)
    yield group
    group.stop_all()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    """A Redis server of the test's own, which it may stop and start."""
    server = EmbeddedRedis(tmp_path / "redis")
    server.ensure_running()
    yield server
    server.stop()
