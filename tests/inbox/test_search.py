"""Search finds a task by any part of its title or its instance's business key, ignoring case, in
every tab and with the other filters; on PostgreSQL through the trigram indexes (migration 0017)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.dialects import postgresql

from tests.helpers.inbox import INBOX, open_task, post, rename, titles
from tests.helpers.instances import start_latest


@pytest.fixture
def keyed_tasks(app, flows, db_session):
    """Clerk tasks of two processes with titles and business keys that share no substring but
    the ones searched for."""
    made = {}
    for key, business_key, title in [
        ("expense", "INV-2026-0042", "Check the quarterly invoice"),
        ("expense", "ACME-77", "Approve travel"),
        ("hr", "CAND-2026-9", "Screen the invoice clerk"),
    ]:
        task = open_task(db_session, start_latest(app, key, business_key=business_key))
        rename(db_session, task.id, title)
        made[title] = task.id
    return made


def test_search_matches_the_middle_of_a_title_or_business_key_ignoring_case(users, keyed_tasks):
    alice = users("alice")

    def found(query: str, tab: str = "claimable") -> list[str]:
        return sorted(titles(alice.get(f"{INBOX}?tab={tab}&{query}").get_data(as_text=True)))

    assert found("q=QUARTERLY") == ["Check the quarterly invoice"]
    assert found("q=nvoic") == ["Check the quarterly invoice"], "hr is not alice's partition"
    assert found("q=26-00") == ["Check the quarterly invoice"]
    assert found("q=cme-7") == ["Approve travel"]
    assert found("q=2026") == ["Check the quarterly invoice"]
    assert found("q=invoice&process=expense") == ["Check the quarterly invoice"]
    assert found("q=acme&process=expense&sort=created") == ["Approve travel"]
    assert found("q=acme&process=hr") == []
    assert found("q=travel", tab="mine") == []


def test_search_in_my_tasks_and_completed_ones(users, keyed_tasks):
    bob = users("bob")
    task_id = keyed_tasks["Approve travel"]
    assert post(bob, f"/inbox/tasks/{task_id}/claim").status_code == 303
    assert titles(bob.get(f"{INBOX}?q=ACME").get_data(as_text=True)) == ["Approve travel"]
    assert post(bob, f"/inbox/tasks/{task_id}", {"amount": "40"}).status_code == 303
    done = bob.get(f"{INBOX}?tab=done&q=cme-77").get_data(as_text=True)
    assert titles(done) == ["Approve travel"]
    assert titles(bob.get(f"{INBOX}?tab=done&q=travel&process=hr").get_data(as_text=True)) == []


def _copy(session, model, source: int, count: int, values: dict[str, str]) -> None:
    """`count` copies of row `source` of `model`'s table, numbered from 1,000,001 (`g` is the
    copy's number in `values`' SQL)."""
    table = model.__table__
    names = [c.name for c in table.columns if c.name != "id"]
    chosen = ", ".join(values.get(name, f"t.{name}") for name in names)
    session.execute(
        text(
            f"INSERT INTO {table.name} (id, {', '.join(names)}) SELECT 1000000 + g, {chosen} "
            f"FROM {table.name} t, generate_series(1, :n) g WHERE t.id = :source"
        ),
        {"n": count, "source": source},
    )


def test_postgresql_searches_through_the_trigram_indexes(app, flows, db_session):
    """Among 3,000 open tasks, searching "open for my roles" for a word in one title reads the
    trigram indexes of titles and business keys, with the process filter or without."""
    from webapp.models import Instance, Task, Token, User
    from webapp.services import tasks

    if db_session.get_bind().dialect.name != "postgresql":
        pytest.skip("SQLite keeps LIKE, which no index helps with a leading wildcard")
    task = open_task(db_session, start_latest(app, "expense", business_key="EXP-1"), "review")
    new = "1000000 + g"
    _copy(db_session, Instance, task.instance_id, 3000, {"business_key": "'EXP-' || g"})
    _copy(db_session, Token, task.token_id, 3000, {"instance_id": new})
    copied = {"instance_id": new, "token_id": new, "title": "'Review expense ' || g"}
    _copy(db_session, Task, task.id, 3000, copied)
    db_session.commit()
    with db_session.get_bind().connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.execute(text("VACUUM ANALYZE tasks, instances"))  # as autovacuum would
    user = db_session.scalar(select(User).where(User.username == "alice"))
    for process in ("", "expense"):
        query = tasks.inbox_query(user, tab="claimable", q="quarterly", process=process)
        sql = query.limit(25).compile(
            dialect=postgresql.psycopg.dialect(), compile_kwargs={"literal_binds": True}
        )
        explain = text(f"EXPLAIN {sql}".replace("%%", "%"))
        plan = "\n".join(db_session.execute(explain).scalars())
        assert "ix_tasks_title_trgm" in plan and "ix_instances_business_key_trgm" in plan, plan
    assert db_session.scalar(select(func.count(Task.id))) == 3001
