"""Retention deletes exactly the finished instances past their limit, with all they own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, insert, select

from tests.helpers.app import csrf_token, failed_page
from tests.helpers.instances import set_columns, start, start_failed_gate
from tests.helpers.processes import published
from tests.helpers.workers import run_burst
from webapp.models import (
    HistoryEntry,
    Instance,
    Job,
    OutboxMessage,
    Process,
    RetentionPolicy,
    Task,
    Token,
)

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def _finished(session, key: str, status: str, days_ago: float, now: datetime = NOW) -> int:
    instance_id = start(session, published(key))
    ended = now - timedelta(days=days_ago)
    set_columns(session, [instance_id], status=status, ended_at=ended)
    return instance_id


def _policy(session, key: str, days: int | None) -> None:
    process_id = session.scalar(select(Process.id).where(Process.key == key))
    session.add(RetentionPolicy(process_id=process_id, days=days))
    session.commit()


def _owned(session, ids: list[int]) -> dict[str, int]:
    session.rollback()
    return {
        model.__tablename__: session.scalar(
            select(func.count()).select_from(model).where(model.instance_id.in_(ids))
        )
        for model in (HistoryEntry, Token, Task, Job)
    }


def test_retention_deletes_only_what_it_should(app, engine):
    from webapp.services.operations import run_retention
    from webapp.services.operations.retention import preview

    gone = [
        _finished(engine, "default", "completed", 31),
        _finished(engine, "default", "cancelled", 45),
        _finished(engine, "short", "completed", 3),
    ]
    kept = [
        _finished(engine, "default", "completed", 29),
        _finished(engine, "short", "completed", 1),
        _finished(engine, "forever", "completed", 400),
        start(engine, published("default")),
    ]
    old_running = kept[-1]
    set_columns(engine, [old_running], created_at=NOW - timedelta(days=300))
    old_failed = start_failed_gate(engine)
    set_columns(engine, [old_failed], ended_at=NOW - timedelta(days=300))
    kept.append(old_failed)
    _policy(engine, "short", 2)
    _policy(engine, "forever", None)
    engine.execute(insert(OutboxMessage), [{"key": "m1", "instance_id": gone[0], "subject": "s"}])
    engine.commit()
    assert _owned(engine, gone)["history"] > 0 and _owned(engine, gone)["tasks"] == 3

    with app.app_context():
        from webapp.extensions import db

        assert preview(db.session, NOW) == {"default": 2, "short": 1}
        assert run_retention(db.session, NOW, batch=2) == 3
        assert run_retention(db.session, NOW) == 0

    engine.rollback()
    remaining = set(engine.scalars(select(Instance.id)))
    assert remaining == set(kept)
    assert _owned(engine, gone) == {"history": 0, "tokens": 0, "tasks": 0, "jobs": 0}
    assert _owned(engine, kept)["history"] > 0
    assert engine.scalar(select(OutboxMessage.instance_id)) is None, "the e-mail record stays"


def test_the_default_comes_from_the_settings(app, engine):
    from webapp.services.operations import run_retention

    instance_id = _finished(engine, "default", "completed", 8)
    saved = app.config["RETENTION_DAYS"]
    app.config["RETENTION_DAYS"] = 7
    try:
        with app.app_context():
            from webapp.extensions import db

            assert run_retention(db.session, NOW) == 1
    finally:
        app.config["RETENTION_DAYS"] = saved
    engine.rollback()
    assert engine.get(Instance, instance_id) is None


def test_retention_tick_runs_at_most_once_per_interval(app, engine, redis_client):
    from webapp.services.operations import retention_tick

    _finished(engine, "default", "completed", 400)
    assert retention_tick(app, interval=60) == 1
    _finished(engine, "default", "completed", 400)
    assert retention_tick(app, interval=60) is None, "paced by the Redis key"
    engine.rollback()
    assert engine.scalar(select(func.count()).select_from(Instance)) == 1


def test_a_worker_runs_retention_with_its_sweep(app_config, engine):
    """No separate scheduler to set up: `python worker.py` deletes what retention allows."""
    now = datetime.now(UTC)
    old = _finished(engine, "default", "completed", 31, now)
    recent = _finished(engine, "default", "completed", 29, now)
    run_burst(app_config)
    engine.rollback()
    assert engine.get(Instance, old) is None
    assert engine.get(Instance, recent) is not None


def test_the_page_shows_the_next_run_and_saves_a_policy(operator, engine, db_session):
    now = datetime.now(UTC)
    _finished(engine, "invoice", "completed", 10, now)
    _finished(engine, "invoice", "completed", 40, now)
    page = operator.get("/operations/retention").get_data(as_text=True)
    assert "The next run deletes <strong>1</strong> instance." in page
    assert '30 days <span class="hint">(default)</span>' in page

    token = csrf_token(operator, "/operations/retention")
    saved = operator.post("/operations/retention/invoice", data={"days": "5", "csrf_token": token})
    assert saved.status_code == 303
    page = operator.get("/operations/retention").get_data(as_text=True)
    assert "The next run deletes <strong>2</strong> instances." in page

    bad = operator.post("/operations/retention/invoice", data={"days": "-3", "csrf_token": token})
    page = failed_page(operator, bad, "/operations/retention")
    assert "Use a number of days (1-36500)" in page
    assert 'placeholder="default"\n                 value="-3"' in page, "what was typed stays"
    operator.post("/operations/retention/invoice", data={"days": "never", "csrf_token": token})
    db_session.rollback()
    assert db_session.scalar(select(RetentionPolicy.days)) is None
    assert "kept forever" in operator.get("/operations/retention").get_data(as_text=True)
    operator.post("/operations/retention/invoice", data={"days": "", "csrf_token": token})
    db_session.rollback()
    assert db_session.scalar(select(func.count()).select_from(RetentionPolicy)) == 0


def test_zero_days_keeps_forever_as_the_message_and_retention_days_say(
    operator, engine, db_session
):
    _finished(engine, "invoice", "completed", 400)
    token = csrf_token(operator, "/operations/retention")
    page = operator.get("/operations/retention").get_data(as_text=True)
    assert "<code>0</code> or <code>never</code> to keep" in page
    for zero in ("0", "00", " 0 "):
        saved = operator.post(
            "/operations/retention/invoice", data={"days": zero, "csrf_token": token}
        )
        assert saved.status_code == 303, zero
        db_session.rollback()
        assert db_session.scalar(select(RetentionPolicy.days)) is None, zero
        page = operator.get("/operations/retention").get_data(as_text=True)
        assert "The next run deletes <strong>0</strong> instances." in page
    for bad in ("-1", "36501", "0.5", "1e3"):
        response = operator.post(
            "/operations/retention/invoice", data={"days": bad, "csrf_token": token}
        )
        page = failed_page(operator, response, "/operations/retention")
        message = "Use a number of days (1-36500), 0 or &#39;never&#39; to keep them forever"
        assert message in page, bad
    db_session.rollback()
    assert db_session.scalar(select(RetentionPolicy.days)) is None, "nothing saved on bad input"


def test_changing_retention_needs_manage(login_as, engine):
    _finished(engine, "invoice", "completed", 10)
    designer = login_as("designer")
    token = csrf_token(designer, "/operations/retention")
    response = designer.post(
        "/operations/retention/invoice", data={"days": "1", "csrf_token": token}
    )
    assert response.status_code == 403
