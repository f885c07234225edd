"""Notification test set-up: people with and without addresses, roles, and processes that
wait at a task (for a user, for a role, with a due time), fail, or end at once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.app import make_user
from tests.helpers.documents import chain, failing_doc, node
from tests.helpers.processes import publish_document
from tests.helpers.workers import Workers

ADDRESSES = {"ann": "ann@example.org", "ben": "ben@example.org", "cid": "", "dee": "dee@x.org"}


@pytest.fixture
def people(app) -> dict[str, int]:
    """ann and ben (with addresses) and cid (without) hold the role `checker`; dee has an
    address and another role."""
    from webapp.extensions import db

    with app.app_context():
        ids = {}
        for name, email in ADDRESSES.items():
            user = make_user(name, ["tasks.work"], role="checker" if name != "dee" else "other")
            user.email = email
            ids[name] = user.id
        db.session.commit()
        db.session.remove()
    return ids


def task_doc(kind: str, value: str, **config: str) -> dict:
    assignee = {"type": kind, "value": value}
    return chain(("check", node("userTask", "Check", assignee=assignee, **config)))


@pytest.fixture
def processes(app, people) -> Iterator[dict]:
    from webapp.extensions import db

    with app.app_context():
        versions = {
            "for_ann": publish_document(task_doc("user", "ann"), key="for-ann").id,
            "for_role": publish_document(task_doc("role", "checker"), key="for-role").id,
            "due": publish_document(task_doc("user", "ann", dueIn="PT2H"), key="due").id,
            "fails": publish_document(failing_doc(), key="fails").id,
            "ends": publish_document(chain(), key="ends").id,
        }
        db.session.remove()
    yield versions


@pytest.fixture
def workers(app, app_config, tmp_path) -> Iterator[Workers]:
    group = Workers(app_config, tmp_path)
    yield group
    group.stop_all()
