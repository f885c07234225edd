"""Run a BPMN file in Flowdesk through its services: import, bind, publish, start, then complete
tasks through the task service, run stub tools on the engine's inline (pure) path, fire timers
with the engine's step at their due time; read the outcome from history and tokens.

Binding is what a modeller does after importing a file from another tool, and what the file
leaves to the engine's configuration: every user task goes to the test role (with form fields
for the answers the scenario gives), every service task, send task, message throw and message
end calls the stub tool, a message catch or receive task without a correlation key gets a fixed
one, and the scenario's conditions, timers and scripts replace the imported ones where the
file's expressions cannot run here.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import current_app
from sqlalchemy import select

from tests.differential.scenario import MAX_ACTIONS, Outcome, Scenario, Visits
from tests.engine.broadcasts import broadcast_round
from webapp.engine import calls, definitions, steps, tools
from webapp.engine.runtime import StepResult
from webapp.engine.tools import ToolCall
from webapp.extensions import db
from webapp.models import (
    DecisionModel,
    HistoryEntry,
    Instance,
    Job,
    MessageSubscription,
    ProcessVersion,
    Task,
    Token,
    User,
)
from webapp.models.base import utcnow
from webapp.process.bpmn import import_bpmn
from webapp.process.forms import iter_fields
from webapp.services import decisions as decisions_service
from webapp.services import instances, jobs, processes, tasks
from webapp.services.messages import deliver_message

ROLE = "diff-worker"
STUB_TOOL = "diff.stub"
CORRELATION = "diff"
# Nodes where no token rests for long: scopes holding other tokens, and boundary listeners.
NOT_RESTING = {"subProcess", "callActivity", "eventSubProcess", "boundaryEvent"}
# What calls a tool (a message throw or end sends its message through one): the stub tool here.
TOOL_KINDS = ("serviceTask", "sendTask", "messageThrow")
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


def bind(
    doc: dict[str, Any], scenario: Scenario, called: dict[str, str] | None = None
) -> dict[str, Any]:
    """The imported document made runnable with the scenario's bindings (see the module doc);
    `called` maps the process ids call activities name to the keys they were published under."""
    doc = copy.deepcopy(doc)
    for node_id, node in doc["nodes"].items():
        config = node.get("config") or {}
        node["config"] = config
        kind = node["kind"]
        if kind == "userTask":
            config["assignee"] = {"type": "role", "value": ROLE}
            config.pop("candidates", None)  # mapped groups: the test role stands in for them
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
        elif kind in TOOL_KINDS or (kind == "endEvent" and config.get("event") == "message"):
            config.update(tool=STUB_TOOL, inputs={}, retries=0)
        elif kind == "scriptTask" and node_id in scenario.scripts:
            config.update(language="flowdesk", script=scenario.scripts[node_id].flowdesk)
        elif kind == "scriptTask":
            # An untranslated script returns the scenario's `results`, as Spiff's stub does.
            node["kind"] = "serviceTask"
            config.pop("script", None)
            config.pop("language", None)
            config.update(tool=STUB_TOOL, inputs={}, retries=0)
        elif kind in ("messageCatch", "receiveTask") or config.get("event") == "message":
            config.setdefault("correlationKey", f"'{CORRELATION}'")
        elif kind == "callActivity" and called and config.get("process") in called:
            config["process"] = called[config["process"]]
        for key, value in scenario.bind.get(node_id, {}).items():
            if isinstance(value, dict) and isinstance(config.get(key), dict):
                config[key] = {**config[key], **value}
            else:
                config[key] = value
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


def publish(
    xml: bytes,
    scenario: Scenario,
    key: str,
    called: tuple[bytes, ...] = (),
    decisions: tuple[bytes, ...] = (),
):
    """Import (raises ImportRefused), bind and publish (raises ProcessError) the file, after
    the DMN files its business rule tasks evaluate and the files whose processes its call
    activities start (each under a key of its own)."""
    for name, dmn_file in zip(scenario.decisions, decisions, strict=True):
        _publish_decisions(dmn_file, "diff-dmn-" + name.removeprefix("files/").split(".")[0])
    keys: dict[str, str] = {}
    for number, other in enumerate(called, 1):
        process_id = str(import_bpmn(other).document.get("key") or "")
        _publish(other, scenario, f"{key}-called-{number}", keys)
        keys[process_id] = f"{key}-called-{number}"
    return _publish(xml, scenario, key, keys)


def _publish_decisions(dmn_file: bytes, key: str) -> None:
    """Import and publish a DMN file once per module's database (runs share its decisions)."""
    if db.session.scalar(select(DecisionModel.id).where(DecisionModel.key == key)) is None:
        model, _ = decisions_service.import_new(dmn_file, key=key, partition_id=None, actor=None)
        decisions_service.publish(model, actor=None)


def _publish(xml: bytes, scenario: Scenario, key: str, called: dict[str, str]):
    process, _ = processes.create_imported(key, "", xml, partition_id=None, actor=None)
    processes.edit_draft(
        process,
        lambda doc: bind(doc, scenario, called),
        base_revision=process.draft_revision,
        actor=None,
    )
    return processes.publish(process, actor=None)


def run(version, scenario: Scenario, user: User) -> Outcome:
    """Start an instance of `version` as `user` and drive it like the Spiff side."""
    _Stubs.scenario, _Stubs.visits = scenario, Visits()
    if definitions.for_version(version).start is None:
        # Only message, timer or signal starts: nothing starts it by hand, as a Spiff workflow
        # waits at such a start event with nothing completed.
        return Outcome(Counter(), "waiting")
    instance_id = instances.start(
        user, version, input=dict(scenario.input), business_key=CORRELATION
    ).id
    visits = Visits()
    messages = list(scenario.messages)
    fired = 0
    clock = utcnow()
    for _ in range(MAX_ACTIONS):
        _settle(instance_id, clock)
        if _status(instance_id) != "running":
            break
        timers = _timer_jobs(instance_id) if fired < scenario.timer_limit else []
        if scenario.timers_first and timers:
            fired += 1
            clock = _fire(timers[0], clock)
            continue
        if _complete_one(instance_id, scenario, visits, user):
            continue
        if timers:
            fired += 1
            clock = _fire(timers[0], clock)
            continue
        if messages and _waits_for(instance_id, messages[0][0]):
            name, payload = messages.pop(0)
            body = {"name": name, "correlation_key": CORRELATION, "payload": payload}
            deliver_message(user, body)
            continue
        break
    else:
        raise AssertionError(f"Flowdesk: still moving after {MAX_ACTIONS} actions")
    _settle(instance_id, clock)
    return _outcome(instance_id)


def _settle(instance_id: int, clock: datetime) -> None:
    """Run every job other than timers due by `clock` in-process, as a worker would, until none
    is left: the instance's and its called children's (their jobs start, resume and cancel
    them). `clock` is the run's time, the due time of the last timer fired (its step makes the
    jobs that follow due then)."""
    for _ in range(500):
        now = max(clock, utcnow())
        db.session.rollback()
        family = _family(instance_id)
        due = db.session.execute(
            select(Job.id, Job.kind, Job.instance_id)
            .where(
                Job.instance_id.in_(family),
                Job.status == "pending",
                Job.kind != "timer",
                Job.due_at <= now,
            )
            .order_by(Job.id)
        ).first()
        db.session.rollback()
        if due is None:
            if broadcast_round(db.session):  # signals thrown: deliver them, as workers would
                continue
            return
        result = _STEPS[due.kind](due.id, due.instance_id, now)
        if result is None:
            db.session.commit()
        else:
            jobs.commit(result)
    raise AssertionError("Flowdesk: jobs kept coming")


def _inline(job_id: int, instance_id: int, now: datetime) -> StepResult:
    config = current_app.config
    run = lambda call: calls.invoke(call, config)  # noqa: E731
    return steps.run_inline_tool(db.session, job_id, instance_id, run, now=now)


# The engine step each kind of job runs (the stub tool is pure, so tool jobs run inline).
_STEPS: dict[str, Callable[[int, int, datetime], StepResult | None]] = {
    "tool": _inline,
    "call": lambda job_id, _, now: steps.start_called(db.session, job_id, now=now),
    "resume": lambda job_id, instance_id, now: steps.resume_from_child(
        db.session, job_id, instance_id, now=now
    ),
    "cancel": lambda job_id, instance_id, now: steps.cancel_called(
        db.session, job_id, instance_id, now=now
    ),
}


def _family(instance_id: int) -> list[int]:
    """The instance and every instance its call activities started, directly or further down."""
    found = [instance_id]
    level = [instance_id]
    while level:
        level = list(db.session.scalars(select(Instance.id).where(Instance.parent_id.in_(level))))
        found.extend(level)
    return found


def _status(instance_id: int) -> str:
    db.session.rollback()
    return db.session.scalar(select(Instance.status).where(Instance.id == instance_id)) or ""


def _timer_jobs(instance_id: int) -> list[Job]:
    db.session.rollback()
    family = _family(instance_id)
    return list(
        db.session.scalars(
            select(Job)
            .where(Job.instance_id.in_(family), Job.kind == "timer", Job.status == "pending")
            .order_by(Job.due_at, Job.node_id, Job.id)
        )
    )


def _fire(job: Job, clock: datetime) -> datetime:
    """The engine's timer step, run at the timer's due time (in the future); returns the run's
    time after it (the jobs the step creates are due then)."""
    job_id, instance_id = job.id, job.instance_id
    now = max(job.due_at, clock, utcnow())
    db.session.rollback()
    result = steps.fire_timer(db.session, job_id, instance_id, now=now)
    jobs.commit(result)
    return now


def _as_form(answer: dict[str, Any]) -> dict[str, str]:
    """The answer as a browser would post it."""
    posted = {}
    for key, value in answer.items():
        posted[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return posted


def _complete_one(instance_id: int, scenario: Scenario, visits: Visits, user: User) -> bool:
    """Complete the first open task (by node id) the scenario has an answer for."""
    db.session.rollback()
    family = _family(instance_id)
    open_tasks = db.session.execute(
        select(Task.id, Task.node_id)
        .where(Task.instance_id.in_(family), Task.status == "open")
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
            MessageSubscription.instance_id.in_(_family(instance_id)),
            MessageSubscription.name == name,
        )
    )
    return found is not None


def _completions(rows: Any, document: dict[str, Any]) -> Counter[str]:
    """Nodes a token entered and then left (or ended at, for end events), once per visit: a
    split's extra tokens leave without entering, a join's merged tokens and an interrupted
    host never leave. A multi-instance activity counts its completed instances
    (`instance_completed`), not the body that held them (`multi_instance`), and a standard loop
    its runs (`loop`), as Spiff does.

    Each `entered` row names the scope the node runs in; it must be the node's `parent`."""
    nodes = document["nodes"]
    completed: Counter[str] = Counter()
    inside: dict[int | None, str] = {}
    for kind, node_id, token_id, details in rows:
        if kind == "entered" and node_id is not None:
            scope = (details or {}).get("scope")
            assert scope == nodes[node_id].get("parent"), (node_id, "entered in", scope)
            inside[token_id] = node_id
            if nodes[node_id]["kind"] == "endEvent":
                completed[node_id] += 1
        elif kind == "left" and inside.get(token_id) == node_id:
            # Spiff runs every trigger of a non-interrupting event sub-process in one instance,
            # so neither side counts the event sub-process itself: the nodes inside compare.
            if nodes[node_id]["kind"] != "eventSubProcess":
                completed[node_id] += 1
            del inside[token_id]
        elif kind == "multi_instance":
            inside.pop(token_id, None)
        elif kind == "instance_completed":
            completed[node_id] += 1
        elif kind == "loop":
            # A standard loop's run ended (`runs` so far; 0: tested before, it never ran).
            if (details or {}).get("runs"):
                completed[node_id] += 1
            inside.pop(token_id, None)
    return completed


def _outcome(instance_id: int) -> Outcome:
    """The root instance's end state; the nodes completed in it and in the instances its call
    activities started (Spiff's task tree holds those too), and where their tokens rest."""
    db.session.rollback()
    instance = db.session.get(Instance, instance_id, populate_existing=True)
    completed: Counter[str] = Counter()
    resting: list[str] = []
    for member in _family(instance_id):
        document = db.session.scalar(
            select(ProcessVersion.document)
            .join(Instance, Instance.version_id == ProcessVersion.id)
            .where(Instance.id == member)
        )
        rows = db.session.execute(
            select(
                HistoryEntry.kind, HistoryEntry.node_id, HistoryEntry.token_id, HistoryEntry.details
            )
            .where(HistoryEntry.instance_id == member)
            .order_by(HistoryEntry.id)
        ).all()
        completed += _completions(rows, document)
        tokens = db.session.scalars(
            select(Token.node_id).where(
                Token.instance_id == member, Token.status.in_(("active", "waiting"))
            )
        ).all()
        kinds = {node_id: node["kind"] for node_id, node in document["nodes"].items()}
        resting.extend(n for n in tokens if kinds.get(n) not in NOT_RESTING)
    if instance.status == "completed":
        return Outcome(completed, "completed")
    if instance.status == "failed":
        error = instance.error or {}
        detail = f"{error.get('code')}: {error.get('message')}"
        return Outcome(completed, "failed", (str(error.get("node")),), detail)
    status = instance.status if instance.status != "running" else "waiting"
    return Outcome(completed, status, tuple(sorted(resting)))
