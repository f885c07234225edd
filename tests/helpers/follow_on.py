"""Documents and reads for the follow-on tests: tools that record their calls, a parallel split
after a first tool, and reading one node's job."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.documents import document, flow, node
from webapp.models import Job


def record(name: str, config: dict | None = None, **inputs: str) -> dict:
    """A service task calling the test tool that records each call under `name`."""
    inputs = {"name": f"'{name}'", **inputs}
    return node("serviceTask", tool="test.record", inputs=inputs, **(config or {}))


def job_at(engine, node_id: str) -> Job:
    """The job row of `node_id`, read afresh."""
    engine.rollback()
    return engine.scalar(select(Job).where(Job.node_id == node_id))


def wired(nodes: dict, *pairs: tuple[str, str]) -> dict:
    """A document of `nodes` with a flow for each (source, target) pair."""
    return document(nodes, {f"f{i}": flow(s, t) for i, (s, t) in enumerate(pairs)})


def split_after_pre(sleep: str = "0") -> dict:
    """start -> pre -> split -> a, b (tools with side effects, taking `sleep` s) -> join -> end."""
    nodes = {
        "start": node("startEvent"),
        "pre": record("pre"),
        "split": node("parallelGateway"),
        "a": record("a", sleep=sleep),
        "b": record("b", sleep=sleep),
        "join": node("parallelGateway"),
        "end": node("endEvent"),
    }
    pairs = (
        ("start", "pre"),
        ("pre", "split"),
        ("split", "a"),
        ("split", "b"),
        ("a", "join"),
        ("b", "join"),
        ("join", "end"),
    )
    return wired(nodes, *pairs)
