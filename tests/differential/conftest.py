"""Fixtures of the differential tests: the stub tool, and the user who starts instances and
works their tasks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import make_user
from tests.differential import flowdesk_side


@pytest.fixture(scope="module")
def stub_tool() -> Iterator[None]:
    flowdesk_side.register_stub_tool()
    yield
    flowdesk_side.unregister_stub_tool()


@pytest.fixture
def worker(app, stub_tool) -> Iterator[flowdesk_side.Runner]:
    """In an app context: a user holding the role every bound user task is assigned to."""
    from webapp.extensions import db

    with app.app_context():
        user = make_user(
            "diff-user",
            ["tasks.work", "instances.start", "instances.read", "instances.manage"],
            role=flowdesk_side.ROLE,
        )
        db.session.commit()
        yield flowdesk_side.Runner(user, "diff")
        db.session.remove()
