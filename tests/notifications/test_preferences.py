"""Each user's choice per kind (immediately, daily digest, none) and the admin's defaults for
users who made no choice; the digest is one mail a day listing what accumulated."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from tests.helpers.notifications import mails_to as _mails
from tests.helpers.notifications import start_as as _start
from webapp.extensions import db
from webapp.models import User
from webapp.models.notifications import Notification
from webapp.services import notifications


def _id(name: str) -> int:
    user_id = db.session.scalar(select(User.id).where(User.username == name))
    assert user_id is not None
    return user_id


def test_none_sends_nothing_for_that_kind_only(app, processes):
    with app.app_context():
        notifications.set_preferences(db.session, _id("ann"), {"assigned": "none"})
        _start(processes["for_ann"])
        _start(processes["for_role"])
        notifications.tick(db.session, app.config, datetime.now(UTC))
        assert [m.subject.split(":")[0] for m in _mails("ann@example.org")] == [
            "Offered to your role"
        ]
        row = db.session.scalar(select(Notification).where(Notification.kind == "assigned"))
        assert (row.status, row.reason) == ("skipped", "turned off in the preferences")


def test_the_digest_is_one_mail_a_day_listing_what_accumulated(app, processes):
    config = dict(app.config, NOTIFY_DIGEST_HOUR=7)
    today = datetime.now(UTC).replace(hour=6, minute=0, second=0, microsecond=0)
    with app.app_context():
        notifications.set_preferences(
            db.session, _id("ann"), {"assigned": "digest", "offered": "digest"}
        )
        for version in ("for_ann", "for_ann", "for_role"):
            _start(processes[version])
        notifications.tick(db.session, config, today)
        assert _mails("ann@example.org") == []
        for minutes in (30, 90, 150):  # from 7:00 on, several passes
            notifications.tick(db.session, config, today + timedelta(hours=1, minutes=minutes))
        [digest] = _mails("ann@example.org")
        assert digest.subject == f"Your Flowdesk digest of {today.date()}: 3 items"
        assert digest.body.count("http://127.0.0.1:5000/inbox/tasks/") == 3
        assert "Offered to your role" in digest.body and "Assigned to you" in digest.body
        # What comes after today's digest waits for tomorrow's.
        _start(processes["for_ann"])
        notifications.tick(db.session, config, today + timedelta(hours=5))
        assert len(_mails("ann@example.org")) == 1
        notifications.tick(db.session, config, today + timedelta(days=1, hours=2))
        later = _mails("ann@example.org")
        assert len(later) == 2 and later[1].subject.endswith(": 1 item")


def test_admin_defaults_apply_to_users_without_their_own_choice(app, processes):
    with app.app_context():
        notifications.set_defaults(db.session, {"offered": "none"})
        notifications.set_preferences(db.session, _id("ben"), {"offered": "immediately"})
        _start(processes["for_role"])
        notifications.tick(db.session, app.config, datetime.now(UTC))
        assert _mails("ann@example.org") == []
        assert len(_mails("ben@example.org")) == 1
        assert notifications.defaults(db.session)["offered"] == "none"
        assert notifications.own_choices(db.session, _id("ben")) == {"offered": "immediately"}


def test_choosing_the_default_again_drops_the_own_choice(app, people):
    with app.app_context():
        notifications.set_preferences(db.session, people["ann"], {"overdue": "digest"})
        notifications.set_preferences(db.session, people["ann"], {"overdue": "default"})
        assert notifications.own_choices(db.session, people["ann"]) == {}


@pytest.mark.parametrize(
    ("choices", "message"),
    [({"weekly": "none"}, "no notification kind 'weekly'"), ({"overdue": "hourly"}, "choose")],
)
def test_unknown_kinds_and_modes_are_refused_and_nothing_is_kept(app, people, choices, message):
    with app.app_context():
        with pytest.raises(notifications.PreferenceError, match=message):
            notifications.set_preferences(db.session, people["ann"], choices)
        with pytest.raises(notifications.PreferenceError):
            notifications.set_defaults(db.session, {"overdue": "default"})
        assert notifications.own_choices(db.session, people["ann"]) == {}
