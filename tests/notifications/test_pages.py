"""The account page (own address and choices) and the admin's defaults page: CSRF, messages
that name what is wrong, nothing kept from a refused form, permission checks."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.app import TEST_PASSWORD, csrf_token, login
from webapp.extensions import db
from webapp.models import User
from webapp.services import notifications

ALL_IMMEDIATELY = dict.fromkeys(notifications.KINDS, "immediately")


def _signed_in(app, username: str, password: str = TEST_PASSWORD):
    client = app.test_client()
    assert login(client, username, password).status_code == 302
    return client


def test_a_user_sets_their_address_and_choices_on_the_account_page(app, people, db_session):
    client = _signed_in(app, "ann")
    page = client.get("/account").get_data(as_text=True)
    assert 'value="ann@example.org"' in page
    assert "As the admin set it (Immediately)" in page
    token = csrf_token(client, "/account")
    saved = client.post("/account/email", data={"csrf_token": token, "email": "ann@new.org"})
    assert saved.status_code == 302
    choices = {"assigned": "digest", "offered": "none"}
    choices |= {kind: "default" for kind in notifications.KINDS if kind not in choices}
    saved = client.post("/account/notifications", data={"csrf_token": token, **choices})
    assert saved.status_code == 302
    page = client.get("/account").get_data(as_text=True)
    assert "Notification choices saved." in page
    assert db_session.scalar(select(User.email).where(User.id == people["ann"])) == "ann@new.org"
    own = notifications.own_choices(db_session, people["ann"])
    assert own == {"assigned": "digest", "offered": "none"}


def test_bad_values_on_the_account_page_are_named_and_nothing_is_kept(app, people, db_session):
    client = _signed_in(app, "ann")
    token = csrf_token(client, "/account")
    bad = client.post("/account/email", data={"csrf_token": token, "email": "not an address"})
    assert bad.status_code == 422
    assert "Enter an address like name@example.org." in bad.get_data(as_text=True)
    bad = client.post(
        "/account/notifications", data={"csrf_token": token, **ALL_IMMEDIATELY, "overdue": "x"}
    )
    assert bad.status_code == 422
    text = bad.get_data(as_text=True)
    assert "Choose one of the listed options." in text and "A task of yours is overdue" in text
    assert notifications.own_choices(db_session, people["ann"]) == {}
    assert db_session.scalar(select(User.email).where(User.id == people["ann"])) == (
        "ann@example.org"
    )
    no_token = client.post("/account/notifications", data=ALL_IMMEDIATELY)
    assert no_token.status_code == 400
    assert notifications.own_choices(db_session, people["ann"]) == {}


def test_an_admin_sets_the_defaults_and_users_see_them(app, demo, people, db_session):
    admin = _signed_in(app, "admin", "flowdesk-demo")
    page = admin.get("/admin/notifications")
    assert page.status_code == 200 and "Notification defaults" in page.get_data(as_text=True)
    token = csrf_token(admin, "/admin/notifications")
    wrong = admin.post(
        "/admin/notifications", data={"csrf_token": token, **ALL_IMMEDIATELY, "offered": "default"}
    )
    assert wrong.status_code == 422
    assert "Choose one of the listed options." in wrong.get_data(as_text=True)
    assert notifications.defaults(db_session)["offered"] == "immediately"
    saved = admin.post(
        "/admin/notifications", data={"csrf_token": token, **ALL_IMMEDIATELY, "offered": "digest"}
    )
    assert saved.status_code == 302
    assert notifications.defaults(db_session)["offered"] == "digest"
    assert admin.post("/admin/notifications", data=ALL_IMMEDIATELY).status_code == 400
    ann = _signed_in(app, "ann")
    assert "As the admin set it (Daily digest)" in ann.get("/account").get_data(as_text=True)


def test_only_admins_reach_the_defaults_page(app, people):
    client = _signed_in(app, "ann")
    assert client.get("/admin/notifications").status_code == 403
    with app.app_context():
        assert db.session.scalar(select(User.id).where(User.username == "ann"))
