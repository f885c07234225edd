"""Fixtures of the differential tests: an app on the suite's database, the stub tool, and the
user who starts instances and works their tasks.

The tables are emptied once per module rather than before every test (on PostgreSQL that costs
about a second a test, most of this suite's time): every run publishes under a process key of its
own and reads only its own instance, so runs cannot see each other's rows. The tests therefore
take `diff_app`, not `app`, which would empty the tables before each of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.differential import flowdesk_side
from tests.helpers.app import empty_database, make_user

_keys = itertools.count(1)


@pytest.fixture(scope="module")
def diff_app(app_config: dict) -> Iterator[object]:
    """The app on the suite's database and Redis, migrated, emptied once; with the stub tool."""
    from flask_migrate import upgrade

    from webapp import create_app

    app = create_app(app_config)
    with app.app_context():
        upgrade()
    empty_database(app)
    flowdesk_side.register_stub_tool()
    yield app
    flowdesk_side.unregister_stub_tool()


@pytest.fixture(scope="module")
def _diff_user(diff_app) -> Iterator[object]:
    from webapp.extensions import db

    with diff_app.app_context():
        user = make_user(
            "diff-user",
            ["tasks.work", "instances.start", "instances.read", "instances.manage"],
            role=flowdesk_side.ROLE,
        )
        db.session.commit()
        yield user.id


@pytest.fixture
def worker(diff_app, _diff_user) -> Iterator[flowdesk_side.Runner]:
    """In an app context: the user holding the role every bound user task is assigned to, and
    a process key of this test's own."""
    from webapp.extensions import db
    from webapp.models import User

    with diff_app.app_context():
        yield flowdesk_side.Runner(db.session.get(User, _diff_user), f"diff-{next(_keys)}")
        db.session.remove()
