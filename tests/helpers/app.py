"""The app as a user meets it: users, sign-in, CSRF tokens, failed forms, and an emptied
database between tests. Its webapp imports stay inside the functions: conftests import this
module, and importing the app's models that early changes how the suite's workers start."""

from __future__ import annotations

import re
import time

from sqlalchemy import select, text
from sqlalchemy.exc import OperationalError

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


def user(session, username: str):
    from webapp.models import User

    return session.scalar(select(User).where(User.username == username))


def partition_id(session, key: str) -> int:
    from webapp.models import Partition

    return session.scalar(select(Partition.id).where(Partition.key == key))


def empty_database(app) -> None:
    from webapp.extensions import db
    from webapp.infra.queue import redis_connection
    from webapp.services import webhooks

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
        webhooks.none_active()


def _built_in_roles() -> None:
    """Tests start where `db upgrade` leaves a new installation: the built-in roles exist."""
    from webapp.extensions import db
    from webapp.permissions import BUILT_IN_ROLES
    from webapp.services.accounts import ensure_role

    for name, (permissions, description) in BUILT_IN_ROLES.items():
        ensure_role(name, permissions, description)
    db.session.commit()
    db.session.remove()
