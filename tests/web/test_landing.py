"""Where people land after signing in, the home page's counts, and the favicon."""

from __future__ import annotations

import pytest

from tests.helpers.app import csrf_token


def _sign_in(client, username: str, next_path: str = ""):
    data = {"csrf_token": csrf_token(client), "username": username, "password": "flowdesk-demo"}
    return client.post(f"/login{next_path}", data=data)


@pytest.mark.parametrize(
    ("username", "landing"),
    [
        ("alice", "/inbox/"),
        ("bob", "/inbox/"),
        ("designer", "/designer/"),
        ("operator", "/operations/"),
        ("admin", "/"),
    ],
)
def test_people_land_where_they_work(app, demo, username, landing):
    client = app.test_client()
    signed_in = _sign_in(client, username)
    assert (signed_in.status_code, signed_in.headers["Location"]) == (302, landing)
    assert client.get("/login").headers["Location"] == landing, "signed in: no login page"


def test_a_next_page_still_wins(app, demo):
    signed_in = _sign_in(app.test_client(), "alice", "?next=/inbox/processes")
    assert signed_in.headers["Location"] == "/inbox/processes"


def test_the_home_page_counts_what_waits_in_each_area(app, demo):
    from tests.helpers.documents import chain
    from tests.helpers.inbox import user_task
    from tests.helpers.instances import start_latest
    from tests.helpers.processes import publish_document

    with app.app_context():
        publish_document(chain(("ok", user_task("Check", "role", "approver"))), key="count")
    for _ in range(2):
        start_latest(app, "count")
    bob, operator = app.test_client(), app.test_client()
    _sign_in(bob, "bob")
    _sign_in(operator, "operator")
    assert "0 assigned to you, 2 open for your roles" in bob.get("/").get_data(as_text=True)
    assert "2 running, 0 failed" in operator.get("/").get_data(as_text=True)


def test_the_favicon_is_served(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
    assert 'rel="icon"' in client.get("/login").get_data(as_text=True)
