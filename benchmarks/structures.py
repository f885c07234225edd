"""Benchmark: structured processes in the engine's steps (no workers, no Redis round trips).

Prints, on a throw-away database (SQLite, or DATABASE_URL=postgresql://... for a scratch
database on that server):

1. a parallel multi-instance user task over 1,000 elements: the start, each completion
   (median, p95) and the whole run to completion;
2. the cost of one step that enters the next node (completing a task in a loop) in a fresh
   instance and in one with 10,000 history rows, 2,000 finished tokens and 1,000 finished
   child instances (median of many steps each, alternating): they must be about equal;
3. a sub-process nested 10 deep: start to completion.

    .venv/bin/python benchmarks/structures.py [--elements 1000] [--repeats 60]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select, update  # noqa: E402

from tests.helpers.documents import document, flow, node  # noqa: E402
from tests.helpers.scratch import scratch_database  # noqa: E402

SECRET = "benchmark-secret-key-that-is-long-enough-to-pass"
CLERK = {"type": "role", "value": "clerk"}


def _wire(*ids: str) -> dict:
    return {f"w_{a}_{b}": flow(a, b) for a, b in itertools.pairwise(ids)}


def _publish(doc: dict, key: str):
    from webapp.extensions import db
    from webapp.models import Process, ProcessVersion
    from webapp.process import document as documents

    doc = documents.normalize({**doc, "key": key})
    process = Process(key=key, name=key)
    db.session.add(process)
    db.session.flush()
    version = ProcessVersion(
        process_id=process.id,
        number=1,
        document=doc,
        bpmn_xml="",
        content_hash=documents.content_hash(doc),
    )
    db.session.add(version)
    db.session.commit()
    return version


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _complete(task_id: int) -> float:
    from webapp.engine import steps
    from webapp.extensions import db

    began = time.perf_counter()
    steps.complete_task(db.session, task_id, {"ok": True}, actor=None)
    db.session.commit()
    return time.perf_counter() - began


def _open_tasks(instance_id: int) -> list[int]:
    from webapp.extensions import db
    from webapp.models import Task

    return list(
        db.session.scalars(
            select(Task.id)
            .where(Task.instance_id == instance_id, Task.status == "open")
            .order_by(Task.id)
        )
    )


def multi_instance(elements: int) -> None:
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import Instance

    review = node(
        "userTask", assignee=CLERK, saveTo="out", multiInstance={"collection": "$input.items"}
    )
    nodes = {"start": node("startEvent"), "review": review, "end": node("endEvent")}
    version = _publish(document(nodes, _wire("start", "review", "end")), "mi")
    began = time.perf_counter()
    result = steps.start_instance(db.session, version, input={"items": list(range(elements))})
    db.session.commit()
    started = time.perf_counter() - began
    instance_id = result.instance.id
    tasks = _open_tasks(instance_id)
    times = [_complete(task_id) for task_id in tasks]
    total = time.perf_counter() - began
    instance = db.session.get(Instance, instance_id)
    assert instance.status == "completed", instance.status
    assert len(instance.vars["out"]) == elements
    times.sort()
    print(f"parallel multi-instance over {elements:,} user tasks")
    print(f"  start (creates {elements:,} tokens and tasks): {_ms(started)}")
    print(
        f"  one completion: median {_ms(statistics.median(times))}, "
        f"p95 {_ms(times[int(len(times) * 0.95)])}"
    )
    print(f"  start to completed: {total:.1f} s")


def _loop_document() -> dict:
    """A task in a loop (the measured step), after a multi-instance that leaves finished tokens
    and called children behind."""
    nodes = {
        "start": node("startEvent"),
        "many": node("userTask", assignee=CLERK, multiInstance={"cardinality": "$input.n"}),
        "calls": node("callActivity", process="leaf", multiInstance={"cardinality": "$input.n"}),
        "task": node("userTask", assignee=CLERK),
        "again": node("exclusiveGateway"),
        "end": node("endEvent"),
    }
    flows = {**_wire("start", "many", "calls", "task", "again")}
    flows["back"] = flow("again", "task", "true")
    flows["out"] = flow("again", "end", default=True)
    return document(nodes, flows)


def _run_jobs() -> None:
    """Run every pending hand-over job in-process, as a worker would."""
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import Job

    while True:
        rows = db.session.execute(
            select(Job.id, Job.instance_id, Job.kind).where(Job.status == "pending").limit(500)
        ).all()
        db.session.rollback()
        if not rows:
            return
        for job_id, instance_id, kind in rows:
            if kind == "call":
                steps.start_called(db.session, job_id)
            elif kind == "resume":
                steps.resume_from_child(db.session, job_id, instance_id)
            else:
                raise AssertionError(f"unexpected job {kind}")
            db.session.commit()


def step_cost(repeats: int, children: int) -> None:
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import HistoryEntry, Instance, Token

    leaf = {"start": node("startEvent"), "end": node("endEvent")}
    _publish(document(leaf, _wire("start", "end")), "leaf")
    version = _publish(_loop_document(), "loop")

    def begin(n: int) -> int:
        result = steps.start_instance(db.session, version, input={"n": n})
        db.session.commit()
        instance_id = result.instance.id
        for task_id in _open_tasks(instance_id):
            _complete(task_id)
        _run_jobs()
        return instance_id

    fresh = begin(0)
    busy = begin(children)
    # Grow the busy instance's history to 10,000 rows by going round the loop.
    while db.session.scalar(select(func.count()).where(HistoryEntry.instance_id == busy)) < 10_000:
        [task_id] = _open_tasks(busy)
        _complete(task_id)
    # The multi-instance outputs (2 lists of `children` entries) stay in the busy instance's
    # $nodes; clear them so the comparison isolates history, finished tokens and children (the
    # instance row's data is rewritten by each step that records an output, whatever its size).
    db.session.execute(update(Instance).where(Instance.id == busy).values(vars={}, nodes={}))
    db.session.commit()
    counts = {
        name: (
            db.session.scalar(select(func.count()).where(HistoryEntry.instance_id == i)),
            db.session.scalar(
                select(func.count()).where(Token.instance_id == i, Token.status != "waiting")
            ),
            db.session.scalar(select(func.count()).where(Instance.parent_id == i)),
        )
        for name, i in (("fresh", fresh), ("busy", busy))
    }
    timings: dict[str, list[float]] = {"fresh": [], "busy": []}
    for _ in range(repeats):
        for name, instance_id in (("fresh", fresh), ("busy", busy)):
            [task_id] = _open_tasks(instance_id)
            timings[name].append(_complete(task_id))
    print("one step entering the next node (complete a task, loop back to it)")
    for name in ("fresh", "busy"):
        history_rows, finished, child_count = counts[name]
        print(
            f"  {name}: {history_rows:,} history rows, {finished:,} finished tokens, "
            f"{child_count:,} called children: median {_ms(statistics.median(timings[name]))}"
        )


def nested(depth: int) -> None:
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import Instance

    nodes: dict = {"start": node("startEvent")}
    flows: dict = {}
    outer = None
    for level in range(depth):
        sub = f"s{level}"
        nodes[sub] = {**node("subProcess"), **({"parent": outer} if outer else {})}
        outer = sub
    for level in range(depth):
        sub = f"s{level}"
        nodes[f"{sub}_start"] = {**node("startEvent"), "parent": sub}
        nodes[f"{sub}_end"] = {**node("endEvent"), "parent": sub}
        inner = [f"s{level + 1}"] if level < depth - 1 else [f"{sub}_task"]
        if level == depth - 1:
            nodes[f"{sub}_task"] = {**node("userTask", assignee=CLERK), "parent": sub}
        flows.update(_wire(f"{sub}_start", *inner, f"{sub}_end"))
    nodes["end"] = node("endEvent")
    flows.update(_wire("start", "s0", "end"))
    version = _publish(document(nodes, flows), "nested")
    began = time.perf_counter()
    result = steps.start_instance(db.session, version)
    db.session.commit()
    [task_id] = _open_tasks(result.instance.id)
    last = _complete(task_id)
    total = time.perf_counter() - began
    assert db.session.get(Instance, result.instance.id).status == "completed"
    print(
        f"sub-processes nested {depth} deep: start to completed {_ms(total)} "
        f"(the last step, leaving all {depth} scopes: {_ms(last)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=60)
    args = parser.parse_args()
    server = os.environ.get("DATABASE_URL")
    from flask_migrate import upgrade

    from webapp import create_app
    from webapp.extensions import db

    with (
        tempfile.TemporaryDirectory(prefix="flowdesk-bench-") as tmp,
        scratch_database(server, Path(tmp), "flowdesk_bench") as url,
    ):
        app = create_app({"SQLALCHEMY_DATABASE_URI": url, "SECRET_KEY": SECRET, "REDIS_URL": None})
        with app.app_context():
            upgrade(directory=str(ROOT / "migrations"))
            print(f"database: {db.engine.dialect.name}")
            multi_instance(args.elements)
            step_cost(args.repeats, args.elements)
            nested(10)
            db.session.remove()
            db.engine.dispose()


if __name__ == "__main__":
    main()
