"""What people receive by mail, in the outbox (no SMTP set up): assignments and role offers,
due soon and overdue, the requester's completed and failed requests; once each."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from tests.helpers.notifications import mails_to as _mails
from tests.helpers.notifications import notify, smtp_server
from tests.helpers.notifications import start_as as _start
from tests.helpers.workers import drain
from webapp.engine import steps
from webapp.extensions import db
from webapp.models import Instance, Task, User
from webapp.models.base import utcnow
from webapp.models.notifications import Notification
from webapp.services import tasks


def _task_of(instance_id: int) -> Task:
    found = db.session.scalar(select(Task).where(Task.instance_id == instance_id))
    assert found is not None
    return found


def test_a_task_assigned_to_someone_mails_them_once_with_a_link_to_the_task(app, processes):
    with app.app_context():
        instance_id = _start(processes["for_ann"])
        task_id = _task_of(instance_id).id
        notify(app.config)
        notify(app.config)
        [mail] = _mails("ann@example.org")
        assert mail.recipients == ["ann@example.org"]
        assert "Assigned to you" in mail.subject and "Check" in mail.subject
        assert f"http://127.0.0.1:5000/inbox/tasks/{task_id}" in mail.body
        assert _mails("ben@example.org") == []


def test_a_task_offered_to_a_role_mails_each_member_with_an_address(app, processes):
    with app.app_context():
        instance_id = _start(processes["for_role"])
        notify(app.config)
        for name in ("ann", "ben"):
            [mail] = _mails(f"{name}@example.org")
            assert "Offered to your role" in mail.subject
            assert f"/inbox/tasks/{_task_of(instance_id).id}" in mail.body
        assert _mails("dee@x.org") == []
        cid = db.session.scalar(select(User.id).where(User.username == "cid"))
        assert db.session.scalar(select(Notification).where(Notification.user_id == cid)) is None


def test_delivering_again_after_a_crash_before_it_was_noted_sends_no_second_mail(app, processes):
    with app.app_context():
        _start(processes["for_ann"])
        notify(app.config)
        # A worker that mailed and died before noting it: the row is pending again.
        db.session.execute(update(Notification).values(status="pending", claimed_until=None))
        db.session.commit()
        notify(app.config)
        assert len(_mails("ann@example.org")) == 1
        assert db.session.scalars(select(Notification.status)).all() == ["sent"]


def test_a_task_completed_before_the_mail_goes_out_is_not_mailed(app, processes):
    with app.app_context():
        instance_id = _start(processes["for_ann"])
        ann = db.session.scalar(select(User).where(User.username == "ann"))
        tasks.complete(ann, _task_of(instance_id).id, {})
        notify(app.config)
        assert _mails("ann@example.org") == []
        row = db.session.scalar(select(Notification).where(Notification.kind == "assigned"))
        assert (row.status, row.reason) == ("skipped", "the task is closed")


def test_a_task_cancelled_with_its_instance_before_the_mail_goes_out_is_not_mailed(app, processes):
    with app.app_context():
        instance_id = _start(processes["for_role"])
        steps.cancel_instance(db.session, instance_id, reason="withdrawn")
        db.session.commit()
        notify(app.config)
        assert _mails("ann@example.org") == [] and _mails("ben@example.org") == []
        reasons = set(db.session.scalars(select(Notification.reason)))
        assert reasons == {"the task is closed"}


def test_a_task_claimed_before_the_offer_goes_out_is_not_offered_any_more(app, processes):
    with app.app_context():
        instance_id = _start(processes["for_role"])
        ann = db.session.scalar(select(User).where(User.username == "ann"))
        tasks.claim(ann, _task_of(instance_id).id)
        notify(app.config)
        assert _mails("ben@example.org") == []


def test_reassigning_a_task_mails_the_new_assignee_or_the_new_role(app, processes, demo):
    with app.app_context():
        first = _start(processes["for_ann"], starter="admin")
        second = _start(processes["for_ann"], starter="admin")
        notify(app.config)
        admin = db.session.scalar(select(User).where(User.username == "admin"))
        tasks.reassign(admin, _task_of(first).id, username="dee", confirmed="no_role")
        tasks.reassign(admin, _task_of(second).id, role="checker")
        notify(app.config)
        [mail] = _mails("dee@x.org")
        assert "Assigned to you" in mail.subject
        assert f"/inbox/tasks/{_task_of(first).id}" in mail.body
        [offer] = _mails("ben@example.org")
        assert "Offered to your role" in offer.subject
        assert f"/inbox/tasks/{_task_of(second).id}" in offer.body


def test_due_soon_and_overdue_are_mailed_once_each(app, processes):
    with app.app_context():
        instance_id = _start(processes["due"])
        now = utcnow()
        for _ in range(2):
            notify(app.config, now)
        assert [m.subject.split(":")[0] for m in _mails("ann@example.org")] == [
            "Assigned to you",
            "Due soon",
        ]
        later = now + timedelta(hours=3)
        for _ in range(2):
            notify(app.config, later)
        subjects = [m.subject.split(":")[0] for m in _mails("ann@example.org")]
        assert subjects == ["Assigned to you", "Due soon", "Overdue"]
        assert str(_task_of(instance_id).id) in _mails("ann@example.org")[-1].body


def test_the_requester_is_mailed_when_the_request_completes(app, processes):
    with app.app_context():
        instance_id = _start(processes["ends"], starter="ben")
        notify(app.config)
        [mail] = _mails("ben@example.org")
        assert mail.subject == "Your request completed: REQ-1"
        assert f"http://127.0.0.1:5000/inbox/instances/{instance_id}" in mail.body


def test_the_requester_is_mailed_when_the_request_fails(app, processes):
    with app.app_context():
        instance_id = _start(processes["fails"], starter="ben")
        drain(db.session)
        assert db.session.get(Instance, instance_id).status == "failed"
        notify(app.config)
        [mail] = _mails("ben@example.org")
        assert mail.subject.startswith("Your request failed: REQ-1")
        assert f"/inbox/instances/{instance_id}" in mail.body


def test_by_smtp_a_repeated_delivery_carries_the_same_message_id(app, processes):
    with app.app_context(), smtp_server() as server:
        port = server.server_address[1]
        config = dict(app.config, SMTP_HOST="127.0.0.1", SMTP_PORT=port, SMTP_STARTTLS=False)
        _start(processes["for_ann"])
        notify(dict(config, SMTP_PORT=1))  # the server cannot be reached: tried again later
        row = db.session.scalar(select(Notification))
        assert (row.status, row.attempts) == ("pending", 1)
        notify(config, utcnow() + timedelta(minutes=2))
        db.session.execute(update(Notification).values(status="pending", claimed_until=None))
        db.session.commit()
        notify(config, utcnow() + timedelta(minutes=4))
        first, again = server.messages
        ids = [line for line in first.splitlines() if line.startswith("Message-ID:")]
        assert ids and ids[0] in again.splitlines()
        assert "To: ann@example.org" in first and "/inbox/tasks/" in first
        assert _mails("ann@example.org") == []


def test_notification_mails_are_not_listed_as_the_processes_own_e_mails(app, processes):
    with app.app_context():
        _start(processes["for_ann"])
        notify(app.config)
        [mail] = _mails("ann@example.org")
        assert mail.instance_id is None
