"""Run a BPMN file in Flowdesk through its services: import, bind, publish, start, then complete
tasks through the task service, run stub tools on the engine's inline (pure) path, fire timers
with the engine's step at their due time; read the outcome from history and tokens.

Binding is what a modeller does after importing a file from another tool, and what the file
leaves to the engine's configuration: every user task goes to the test role (with form fields
for the answers the scenario gives), every service task calls the stub tool, a message catch
without a correlation key gets a fixed one, and the scenario's conditions and timers replace
the imported ones where the file's expressions cannot run here.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from tests.differential.scenario import MAX_ACTIONS, Outcome, Scenario, Visits
from webapp import tools
from webapp.engine import steps
from webapp.engine.dispatch import ENTRY_POINTS
from webapp.engine.runtime import entry_point
from webapp.extensions import db
from webapp.models import HistoryEntry, Instance, Job, MessageSubscription, Task, Token, User
from webapp.models.base import utcnow
from webapp.process.forms import iter_fields
from webapp.services import instances, jobs, processes, tasks
from webapp.tools import ToolCall

ROLE = "diff-worker"
STUB_TOOL = "diff.stub"
CORRELATION = "diff"
# Nodes where no token rests for long: scopes holding other tokens, and boundary listeners.
NOT_RESTING = {"subProcess", "callActivity", "eventSubProcess", "boundaryEvent"}
_FIELD_TYPES = {bool: "boolean", int: "integer", float: "number", str: "text"}


class _Stubs:
    """The scenario the stub tool answers from while a run is going on (runs are sequential)."""

    scenario: Scenario = Scenario()
    visits: Visits = Visits()

    @classmethod
    def call(cls, inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
        return dict(cls.scenario.result(call.node_id, cls.visits.next(call.node_id)))


def register_stub_tool() -> None:
    tools.tool(STUB_TOOL, pure=True, any_inputs=True, description="Differential test stub")(
        _Stubs.call
    )


def unregister_stub_tool() -> None:
    tools._REGISTRY.pop(STUB_TOOL, None)


def _answers(scenario: Scenario, node_id: str) -> list[dict[str, Any]]:
    given = scenario.answers.get(node_id, [])
    return [given] if isinstance(given, dict) else list(given)


def bind(doc: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    """The imported document made runnable with the scenario's bindings (see the module doc)."""
    doc = copy.deepcopy(doc)
    for node_id, node in doc["nodes"].items():
        config = node.get("config") or {}
        node["config"] = config
        kind = node["kind"]
        if kind == "userTask":
            config["assignee"] = {"type": "role", "value": ROLE}
            form = config.get("form") or {"fields": []}
            known = {field["key"] for field in iter_fields(form)}
            for answer in _answers(scenario, node_id):
                for key, value in answer.items():
                    if key not in known and type(value) in _FIELD_TYPES:
                        known.add(key)
                        form["fields"].append(
                            {"key": key, "label": key, "type": _FIELD_TYPES[type(value)]}
                        )
            if form["fields"]:
                config["form"] = form
        elif kind == "serviceTask":
            config.update(tool=STUB_TOOL, inputs={}, retries=0)
        elif kind == "messageCatch" and not config.get("correlationKey"):
            config["correlationKey"] = f"'{CORRELATION}'"
        config.update(scenario.bind.get(node_id, {}))
        if node_id in scenario.timers:
            for name in ("duration", "date"):
                config.pop(name, None)
            config.update(scenario.timers[node_id].flowdesk)
    for flow_id, flow in doc["flows"].items():
        cond = scenario.conditions.get(flow_id)
        if cond is not None and cond.flowdesk is not None:
            flow["condition"] = cond.flowdesk
    return doc


@dataclass(frozen=True)
class Runner:
    """Who starts instances and works their tasks, and the process key to publish under."""

    user: User
    key: str


def publish(xml: bytes, scenario: Scenario, key: str):
    """Import (raises ImportRefused), bind and publish (raises ProcessError) the file."""
    process, _ = processes.create_imported(key, "", xml, partition_id=None, actor=None)
    processes.edit_draft(
        process,
        lambda doc: bind(doc, scenario),
        base_revision=process.draft_revision,
        actor=None,
    )
    return processes.publish(process, actor=None)


def run(version, scenario: Scenario, user: User) -> Outcome:
    """Start an instance of `version` as `user` and drive it like the Spiff side."""
    _Stubs.scenario, _Stubs.visits = scenario, Visits()
    instance_id = instances.start(user, version, input=dict(scenario.input)).id
    visits = Visits()
    messages = list(scenario.messages)
    fired = 0
    for _ in range(MAX_ACTIONS):
        _settle(instance_id)
        if _status(instance_id) != "running":
            break
        timers = _timer_jobs(instance_id) if fired < scenario.timer_limit else []
        if scenario.timers_first and timers:
            fired += 1
            _fire(timers[0])
            continue
        if _complete_one(instance_id, scenario, visits, user):
            continue
        if timers:
            fired += 1
            _fire(timers[0])
            continue
        if messages and _waits_for(instance_id, messages[0][0]):
            name, payload = messages.pop(0)
            body = {"name": name, "correlation_key": CORRELATION, "payload": payload}
            instances.deliver_message(user, body)
            continue
        break
    else:
        raise AssertionError(f"Flowdesk: still moving after {MAX_ACTIONS} actions")
    _settle(instance_id)
    return _outcome(instance_id, version.document)


def _settle(instance_id: int) -> None:
    """Run every due job other than timers in-process, as a worker would, until none is left."""
    for _ in range(500):
        db.session.rollback()
        due = db.session.execute(
            select(Job.id, Job.kind, Job.tool)
            .where(
                Job.instance_id == instance_id,
                Job.status == "pending",
                Job.kind != "timer",
                Job.due_at <= utcnow(),
            )
            .order_by(Job.id)
        ).first()
        db.session.rollback()
        if due is None:
            return
        name = ENTRY_POINTS[entry_point(due.kind, due.tool)].rsplit(".", 1)[1]
        getattr(jobs, name)(due.id, instance_id)
    raise AssertionError("Flowdesk: jobs kept coming")


def _status(instance_id: int) -> str:
    db.session.rollback()
    return db.session.scalar(select(Instance.status).where(Instance.id == instance_id)) or ""


def _timer_jobs(instance_id: int) -> list[Job]:
    db.session.rollback()
    return list(
        db.session.scalars(
            select(Job)
            .where(Job.instance_id == instance_id, Job.kind == "timer", Job.status == "pending")
            .order_by(Job.due_at, Job.node_id, Job.id)
        )
    )


def _fire(job: Job) -> None:
    """The engine's timer step, run at the timer's due time (in the future)."""
    job_id, instance_id, due_at = job.id, job.instance_id, job.due_at
    db.session.rollback()
    result = steps.fire_timer(db.session, job_id, instance_id, now=max(due_at, utcnow()))
    jobs.commit(result)


def _as_form(answer: dict[str, Any]) -> dict[str, str]:
    """The answer as a browser would post it."""
    posted = {}
    for key, value in answer.items():
        posted[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return posted


def _complete_one(instance_id: int, scenario: Scenario, visits: Visits, user: User) -> bool:
    """Complete the first open task (by node id) the scenario has an answer for."""
    db.session.rollback()
    open_tasks = db.session.execute(
        select(Task.id, Task.node_id)
        .where(Task.instance_id == instance_id, Task.status == "open")
        .order_by(Task.node_id, Task.id)
    ).all()
    db.session.rollback()
    for task_id, node_id in open_tasks:
        answer = scenario.answer(node_id, visits.counts[node_id])
        if answer is None:
            continue
        visits.next(node_id)
        tasks.complete(user, task_id, _as_form(answer))
        return True
    return False


def _waits_for(instance_id: int, name: str) -> bool:
    db.session.rollback()
    found = db.session.scalar(
        select(MessageSubscription.id).where(
            MessageSubscription.instance_id == instance_id, MessageSubscription.name == name
        )
    )
    return found is not None


def _completions(rows: Any, kinds: dict[str, str]) -> Counter[str]:
    """Nodes a token entered and then left (or ended at, for end events), once per visit: a
    split's extra tokens leave without entering, and a join's merged tokens never leave."""
    completed: Counter[str] = Counter()
    inside: dict[int | None, str] = {}
    for kind, node_id, token_id in rows:
        if kind == "entered" and node_id is not None:
            inside[token_id] = node_id
            if kinds.get(node_id) == "endEvent":
                completed[node_id] += 1
        elif kind == "left" and inside.get(token_id) == node_id:
            completed[node_id] += 1
            del inside[token_id]
    return completed


def _outcome(instance_id: int, document: dict[str, Any]) -> Outcome:
    db.session.rollback()
    kinds = {node_id: node["kind"] for node_id, node in document["nodes"].items()}
    instance = db.session.get(Instance, instance_id, populate_existing=True)
    rows = db.session.execute(
        select(HistoryEntry.kind, HistoryEntry.node_id, HistoryEntry.token_id)
        .where(HistoryEntry.instance_id == instance_id)
        .order_by(HistoryEntry.id)
    ).all()
    completed = _completions(rows, kinds)
    if instance.status == "completed":
        return Outcome(completed, "completed")
    if instance.status == "failed":
        error = instance.error or {}
        detail = f"{error.get('code')}: {error.get('message')}"
        return Outcome(completed, "failed", (str(error.get("node")),), detail)
    tokens = db.session.scalars(
        select(Token.node_id).where(
            Token.instance_id == instance_id, Token.status.in_(("active", "waiting"))
        )
    ).all()
    resting = sorted(n for n in tokens if kinds.get(n) not in NOT_RESTING)
    return Outcome(
        completed, instance.status if instance.status != "running" else "waiting", tuple(resting)
    )
