"""Upgrading to 0018 gives every pending job due later its wake time, so the workers' clocks
deliver the timers and retries an older release had scheduled in RQ."""

from datetime import timedelta

from flask_migrate import downgrade, upgrade
from sqlalchemy import select, update

from tests.helpers.documents import chain, node
from tests.helpers.processes import publish_document
from webapp import create_app
from webapp.engine import steps
from webapp.extensions import db
from webapp.models import Job
from webapp.models.base import utcnow


def test_pending_jobs_due_later_get_their_wake_time_on_upgrade(app_config, fresh_database_url):
    fresh = create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=fresh_database_url))
    with fresh.app_context():
        upgrade()
        version = publish_document(chain(("wait", node("timerCatch", duration="PT1H"))))
        later, due, done = (steps.start_instance(db.session, version) for _ in range(3))
        db.session.commit()
        ids = [result.jobs[0].id for result in (later, due, done)]
        past = utcnow() - timedelta(minutes=1)
        db.session.execute(update(Job).where(Job.id == ids[1]).values(due_at=past))
        db.session.execute(update(Job).where(Job.id == ids[2]).values(status="done"))
        db.session.commit()
        db.session.remove()
        downgrade(revision="0017_inbox_search_trigrams")
        upgrade()
        rows = db.session.execute(select(Job.id, Job.wake_at, Job.due_at).order_by(Job.id)).all()
        assert [(row.id, row.wake_at) for row in rows] == [
            (ids[0], rows[0].due_at),
            (ids[1], None),
            (ids[2], None),
        ]
        db.session.remove()
        downgrade(revision="base")
        db.engine.dispose()
