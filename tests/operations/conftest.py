"""Operations test helpers: processes that wait, fail or fail once, started through the engine."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import select, update

from tests.engine.conftest import (  # noqa: F401 - fixtures shared with the engine tests
    chain,
    document,
    drain,
    engine,
    flow,
    node,
    publish_document,
    redis_client,
    run_burst,
    test_tools,
    wait_for,
    worker_env,
    workers,
)


def waiting_doc(assignee: str = "alice") -> dict[str, Any]:
    """start -> a user task for `assignee` -> end: instances wait with an open task."""
    return chain(
        ("review", node("userTask", "Review", assignee={"type": "user", "value": assignee}))
    )


def failing_doc() -> dict[str, Any]:
    """start -> the built-in `fail` tool without retries -> end: instances fail at `charge`."""
    return chain(("charge", node("serviceTask", "Charge", tool="fail", retries=0,
                                 inputs={"message": "'card declined'"})))  # fmt: skip


def flaky_doc(name: str, fail_times: int) -> dict[str, Any]:
    """A tool that fails its first `fail_times` calls (across instances), then succeeds."""
    inputs = {"name": repr(name), "fail_times": str(fail_times)}
    return chain(("call", node("serviceTask", "Call", tool="test.flaky", retries=0, inputs=inputs)))


def gate_doc() -> dict[str, Any]:
    """Saves `$vars.check` = {ok: $input.ok}, then a gateway fails (no branch) unless check.ok:
    fixed by setting the variable `check` and retrying. Run its jobs with `drain`."""
    nodes = {
        "start": node("startEvent", "Start"),
        "set": node("serviceTask", "Check", tool="vars.set", retries=0, saveTo="check",
                    inputs={"ok": "$input.ok == true"}),
        "gate": node("exclusiveGateway", "Fixed?"),
        "end": node("endEvent", "Done"),
    }  # fmt: skip
    flows = {
        "f1": flow("start", "set"),
        "f2": flow("set", "gate"),
        "ok": flow("gate", "end", "$vars.check.ok == true"),
    }
    return document(nodes, flows)


def start_failed_gate(session, **kwargs) -> int:
    """An instance of `gate_doc` that failed at its gateway."""
    instance_id = start(session, publish_document(gate_doc(), key="gate", **kwargs))
    drain(session)
    return instance_id


def published(key: str, partition: str | None = None):
    """The latest version of process `key`, publishing a `waiting_doc` process the first time."""
    from webapp.extensions import db
    from webapp.models import Process, ProcessVersion

    found = db.session.scalar(
        select(ProcessVersion)
        .join(Process, Process.id == ProcessVersion.process_id)
        .where(Process.key == key)
        .order_by(ProcessVersion.number.desc())
    )
    return found or publish_document(waiting_doc(), key=key, partition=partition)


def start(session, version, **kwargs) -> int:
    from webapp.engine import steps
    from webapp.services.jobs import commit

    kwargs.setdefault("partition_id", version.process.partition_id)
    result = steps.start_instance(session, version, **kwargs)
    commit(result)
    return result.instance.id


def start_many(session, version, count: int, **kwargs) -> list[int]:
    return [start(session, version, **kwargs) for _ in range(count)]


def user(session, username: str):
    from webapp.models import User

    return session.scalar(select(User).where(User.username == username))


def partition_id(session, key: str) -> int:
    from webapp.models import Partition

    return session.scalar(select(Partition.id).where(Partition.key == key))


def set_columns(session, instance_ids: list[int], **values: Any) -> None:
    """Test set-up only: give instances data or timestamps the engine would take days to make."""
    from webapp.models import Instance

    session.execute(update(Instance).where(Instance.id.in_(instance_ids)).values(**values))
    session.commit()


def load(session, instance_id: int):
    from webapp.models import Instance

    session.rollback()
    return session.get(Instance, instance_id, populate_existing=True)


ROW_ID = re.compile(r'href="/operations/instances/(\d+)"')


def listed_ids(html: str) -> list[int]:
    """Instance ids in the list page's table, in order."""
    return [int(match) for match in ROW_ID.findall(html)]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture
def operator(login_as):
    return login_as("operator")
