"""A step's fixed costs: quick parallel calls leased in one statement and their outcomes read with
the tokens in one; the rows a step inserts into a table go in one statement on SQLite too, each
row keeping its own id."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import event, select

from tests.helpers.documents import document, flow, node
from tests.helpers.follow_on import job_at, split_after_pre
from tests.helpers.instances import load, start
from tests.helpers.processes import publish_document
from webapp.engine import steps
from webapp.extensions import db
from webapp.models import Job, Token
from webapp.services import jobs
from webapp.services.jobs import engine_queue


@contextmanager
def statements() -> Iterator[list[str]]:
    """The SQL statements sent to the database meanwhile, one entry per execution."""
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        seen.append(" ".join(statement.split()))

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", record)


def _count(seen: list[str], start: str) -> int:
    return sum(1 for statement in seen if statement.startswith(start))


@pytest.fixture
def quick_branches(monkeypatch):
    """A worker that has seen the branches' tool answer quickly, so it keeps both."""
    monkeypatch.setattr(
        jobs, "_call_seconds", {("test.record", "a"): 0.001, ("test.record", "b"): 0.001}
    )


@pytest.mark.usefixtures("quick_branches")
def test_quick_parallel_calls_are_leased_in_one_statement_and_applied_with_one_read(
    engine, test_tools, redis_client
):
    version = publish_document(split_after_pre())
    instance_id = start(engine, version)
    redis_client.delete(engine_queue().key)
    pre = job_at(engine, "pre")
    delivery = (pre.id, instance_id, pre.timeout)  # as RQ delivers it
    engine.rollback()
    with statements() as seen:
        assert jobs.run_tool(*delivery) == "applied"
    assert load(engine, instance_id).status == "completed"
    # pre's own lease, then a and b together in the step that made them due.
    assert _count(seen, "UPDATE jobs SET attempt") == 2
    # Each step reads its tokens with the jobs it applies; no other read of the jobs.
    assert _count(seen, "SELECT jobs.") == 0
    engine.rollback()
    branches = engine.scalars(
        select(Job).where(Job.instance_id == instance_id, Job.node_id.in_(("a", "b")))
    ).all()
    assert [(job.status, job.attempt) for job in branches] == [("done", 1), ("done", 1)]
    assert engine.scalar(select(Job.status).where(Job.id == delivery[0])) == "done"


BRANCHES = ("a", "b", "c", "d")


def _four_branches() -> dict:
    """start -> split -> four tool branches -> join -> end."""
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        **{
            name: node("serviceTask", tool="test.record", inputs={"name": f"'{name}'"})
            for name in BRANCHES
        },
        "join": node("parallelGateway"),
        "end": node("endEvent"),
    }
    pairs = [("start", "split"), *(("split", n) for n in BRANCHES)]
    pairs += [*((n, "join") for n in BRANCHES), ("join", "end")]
    return document(nodes, {f"f{i}": flow(s, t) for i, (s, t) in enumerate(pairs)})


def test_leasing_several_jobs_takes_only_those_due_pending_and_free(engine, test_tools):
    instance_id = start(engine, publish_document(_four_branches()))
    engine.rollback()
    made = engine.scalars(select(Job).where(Job.instance_id == instance_id)).all()
    ids = {job.node_id: job.id for job in made}
    engine.rollback()
    first = steps.lease_tool_jobs(engine, [(ids["a"], 30.0)], lease_grace=10)
    engine.commit()
    assert list(first) == [ids["a"]]
    with statements() as seen:
        leased = steps.lease_tool_jobs(
            engine, [(ids[n], 30.0) for n in BRANCHES[1:]] + [(ids["a"], 30.0)], lease_grace=10
        )
        engine.commit()
    assert _count(seen, "UPDATE jobs SET attempt") == 1
    assert sorted(leased) == sorted(ids[n] for n in BRANCHES[1:]), "a is leased already"
    assert {(call.node_id, call.attempt) for call in leased.values()} == {
        ("b", 1),
        ("c", 1),
        ("d", 1),
    }
    slower = steps.lease_tool_jobs(engine, [(ids["b"], 5.0), (ids["c"], 60.0)], lease_grace=10)
    engine.commit()
    assert slower == {}, "a leased job is not leased twice"


def test_one_step_inserts_its_new_tokens_and_jobs_in_one_statement_each(engine, test_tools):
    """A split into four tool branches: the tokens and the four jobs, each job on its own
    token, each written in one statement."""
    version = publish_document(_four_branches())
    with statements() as seen:
        instance_id = start(engine, version)
    assert _count(seen, "INSERT INTO tokens") == 1
    assert _count(seen, "INSERT INTO jobs") == 1
    engine.rollback()
    tokens = {
        token.id: token
        for token in engine.scalars(select(Token).where(Token.instance_id == instance_id))
    }
    made = engine.scalars(select(Job).where(Job.instance_id == instance_id)).all()
    assert sorted(job.node_id for job in made) == list(BRANCHES)
    for job in made:
        assert tokens[job.token_id].node_id == job.node_id
        assert job.key.startswith(f"{job.token_id}:{job.node_id}:")
    assert load(engine, instance_id).status == "running"
