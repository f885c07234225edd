"""Real worker processes learn a task from the step that made it and mail its assignee once,
however many workers run the notification pass."""

from __future__ import annotations

import time

from sqlalchemy import select

from tests.helpers.documents import chain, node
from tests.helpers.notifications import mails_to, start_as
from tests.helpers.processes import publish_document
from tests.helpers.workers import FAST, wait_for
from webapp.extensions import db
from webapp.models import Task
from webapp.models.notifications import Notification


def test_workers_mail_the_assignee_of_a_task_a_worker_step_made_once(app, people, workers):
    with app.app_context():
        ann = {"type": "user", "value": "ann"}
        doc = chain(
            ("wait", node("timerCatch", duration="PT1S")),
            ("check", node("userTask", "Check", assignee=ann)),
        )
        version = publish_document(doc, key="later")
        instance_id = start_as(version.id)
        workers.start(2, NOTIFY_INTERVAL=0.3, **FAST)

        def mailed():
            return mails_to("ann@example.org")

        [mail] = wait_for(mailed, timeout=60, what="the assignee's mail")
        task_id = db.session.scalar(select(Task.id).where(Task.instance_id == instance_id))
        assert f"http://127.0.0.1:5000/inbox/tasks/{task_id}" in mail.body
        time.sleep(1.5)  # more passes of both workers
        assert len(mails_to("ann@example.org")) == 1, workers.logs()
        assert db.session.scalars(select(Notification.status)).all() == ["sent"]
