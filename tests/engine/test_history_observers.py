"""History observers see every entry a step or a person's action writes, in its transaction:
what webhooks and notifications are built on."""

from tests.helpers.documents import chain, node
from tests.helpers.processes import publish_document
from webapp.engine import history, steps
from webapp.extensions import db
from webapp.models.base import utcnow
from webapp.models.statuses import HistoryKind


def test_observers_see_the_rows_of_steps_and_of_actions_in_the_same_transaction(app):
    seen: list[tuple[int, str]] = []

    def observer(conn, rows):
        assert conn.in_transaction()
        seen.extend((row["instance_id"], row["kind"]) for row in rows)

    history.observe(observer)
    history.observe(observer)
    try:
        with app.app_context():
            version = publish_document(chain(("wait", node("timerCatch", duration="PT1H"))))
            result = steps.start_instance(db.session, version)
            db.session.commit()
            instance_id = result.instance.id
            history.append(
                db.session, instance_id, HistoryKind.VARIABLE_SET, actor="ann", now=utcnow()
            )
            db.session.commit()
    finally:
        history.OBSERVERS.remove(observer)
    assert (instance_id, HistoryKind.STARTED) in seen
    assert seen[-1] == (instance_id, HistoryKind.VARIABLE_SET)
    assert len([kind for _, kind in seen if kind == HistoryKind.STARTED]) == 1
