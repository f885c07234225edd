"""Play a test scenario on a draft with the real engine steps, in a throw-away database.

Every run gets its own in-memory SQLite database with the app's schema: the draft is stored
there as a version, one instance starts and each action is one engine step. Nothing reaches
the real tables, no mail leaves, tools are stubbed (safe tools run for real) and timers fire
on the scenario's own clock, which jumps to their due time instead of sleeping. A call
activity starts the version of the called process the engine would pick (copied in from the
caller's `Called` look-up), whose waits the actions answer like the draft's own. `upto` plays
only the first actions and skips the expectations, for a view that shows the state so far.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import create_engine, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from webapp.engine import activation, calls, signals, steps, store
from webapp.engine.calls import Call, Outcome
from webapp.engine.errors import EngineError
from webapp.engine.scenario_decisions import Decided, copy_decisions, no_decisions
from webapp.engine.tools import get as get_tool
from webapp.extensions import db
from webapp.infra.database import memory_engine
from webapp.models import HistoryEntry, Instance, Job, Process, ProcessVersion, Task, Token
from webapp.models.statuses import (
    LIVE_TOKEN,
    HistoryKind,
    InstanceStatus,
    JobStatus,
    TaskStatus,
    TokenStatus,
)
from webapp.process.document import content_hash, plain_start
from webapp.process.expressions import ExpressionError, evaluate
from webapp.process.forms import as_submission, coerce_submission
from webapp.process.scenarios import Action, Scenario, problems_against

# The scenario clock starts here, so runs are repeatable whatever the day.
EPOCH = datetime(2030, 1, 1, tzinfo=UTC)
# Mail tools answer as sent without sending anything.
MAIL_TOOLS = frozenset({"email.send"})
# Steps the runner takes on its own after an action (safe tools, due timers) at most.
SETTLE_LIMIT = 1000
# The published version a call activity starts: (key, number or None for the latest) to
# (number, document), or None when there is none.
Called = Callable[[str, int | None], tuple[int, Mapping[str, Any]] | None]


def _none_called(key: str, number: int | None) -> None:
    return None


_copying = threading.Lock()


@lru_cache(maxsize=1)
def _schema() -> sqlite3.Connection:
    """An in-memory database with the app's tables, made once a process and copied per run."""
    template = sqlite3.connect(":memory:", check_same_thread=False)
    engine = create_engine("sqlite://", creator=lambda: template, poolclass=StaticPool)
    db.metadata.create_all(engine)
    return template


def scratch_engine() -> Engine:
    """A new private in-memory database holding the app's (empty) tables."""
    engine = memory_engine()
    connection = engine.raw_connection()
    try:
        target = connection.driver_connection
        if not isinstance(target, sqlite3.Connection):
            raise TypeError("the scratch database must be SQLite")
        with _copying:
            _schema().backup(target)
    finally:
        connection.close()
    return engine


@dataclass
class Failure:
    """Where a scenario failed (`actions[2]`, `expect.status`, ...) and why."""

    step: str
    reason: str


@dataclass
class RunResult:
    """A run: pass or fail, the first failing step, the state there and what was walked."""

    name: str
    passed: bool
    failure: Failure | None
    status: str
    waits: list[dict[str, Any]] = field(default_factory=list)
    variables: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    nodes_walked: set[str] = field(default_factory=set)
    flows_walked: set[str] = field(default_factory=set)
    actions_played: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "failure": vars(self.failure) if self.failure else None,
            "status": self.status,
            "waits": self.waits,
            "variables": self.variables,
            "outputs": self.outputs,
            "nodes_walked": sorted(self.nodes_walked),
            "flows_walked": sorted(self.flows_walked),
            "actions_played": self.actions_played,
        }


class _Stop(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _answered_alone(tool: str) -> bool:
    """Whether the runner answers a call of `tool` itself (a safe or a mail tool)."""
    registered = get_tool(tool)
    return tool in MAIL_TOOLS or (registered is not None and registered.safe)


def _answer(call: Call) -> Outcome:
    """Safe tools run for real, mail tools pretend to send; others are not stubbed."""
    if call.tool in MAIL_TOOLS:
        return Outcome(True, output={"sent": False, "note": "scenario run: no mail sent"})
    if _answered_alone(call.tool):
        return calls.invoke(call, {})
    message = f"no output was given for the tool '{call.tool}'"
    return Outcome(False, code="not_stubbed", message=message, retryable=False)


def _checked(spec: Any, data: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """The data coerced by the form as the inbox would; a refusal names each field."""
    values, errors = coerce_submission(spec, as_submission(data, spec), context)
    if errors:
        listed = "; ".join(f"{key}: {message}" for key, message in errors.items())
        raise _Stop(f"the form refuses the data: {listed}")
    return values


class _Run:
    """One scenario on one scratch database."""

    def __init__(
        self,
        document: Mapping[str, Any],
        session: Session,
        called: Called,
        decided: Decided = no_decisions,
    ) -> None:
        self.session = session
        self.now = EPOCH
        self.called = called
        self.decided = decided
        self.key = str(document.get("key") or "scenario")
        process = Process(key=self.key, name="scenario")
        session.add(process)
        session.flush()
        self.version = ProcessVersion(
            process_id=process.id,
            number=1,
            document=dict(document),
            bpmn_xml="",
            content_hash=content_hash(document),
        )
        session.add(self.version)
        copy_decisions(session, document, decided)
        session.commit()
        self.instance_id = 0

    def start(self, data: dict[str, Any]) -> None:
        start = plain_start(self.version.document)
        spec = ((start or {}).get("config") or {}).get("form")
        if spec:
            data = {**data, **_checked(spec, data, {})}
        result = steps.start_instance(
            self.session, self.version, input=data, via="scenario", now=self.now
        )
        self.session.commit()
        self.instance_id = store.saved_id(result.instance.id)
        self.settle()

    def _pending(self, kind: str, node: str | None = None) -> list[Job]:
        """Pending jobs of the draft's instance and of the children its calls started."""
        query = select(Job).where(Job.kind == kind, Job.status == JobStatus.PENDING)
        if node is not None:
            query = query.where(Job.node_id == node)
        return list(self.session.scalars(query.order_by(Job.due_at, Job.id)))

    def _run_tool(self, job: Job, run: Callable[[Call], Outcome]) -> None:
        steps.run_inline_tool(self.session, job.id, job.instance_id, run, now=self.now)
        self.session.commit()

    def settle(self) -> None:
        """Take the steps nobody has to answer: safe and mail tools, timers due now."""
        for _ in range(SETTLE_LIMIT):
            self.session.expire_all()
            moved = False
            for job in self._pending("tool"):
                if job.due_at > self.now:
                    continue
                if _answered_alone(job.tool or ""):
                    self._run_tool(job, _answer)
                    moved = True
                    break
            if not moved:
                due = [job for job in self._pending("timer") if job.due_at <= self.now]
                if due:
                    steps.fire_timer(self.session, due[0].id, due[0].instance_id, now=self.now)
                    self.session.commit()
                    moved = True
            if not moved:
                moved = self._hand_over()
            if not moved:
                return
        raise _Stop(f"the process still moved after {SETTLE_LIMIT} automatic steps")

    def _hand_over(self) -> bool:
        """Take one step between a caller and its child: start, resume or cancel a call."""
        jobs = self._pending("call") + self._pending("resume") + self._pending("cancel")
        if not jobs:
            return False
        job = jobs[0]
        if job.kind == "call":
            self._copy_called(job)
            steps.start_called(self.session, job.id, now=self.now)
        elif job.kind == "resume":
            steps.resume_from_child(self.session, job.id, job.instance_id, now=self.now)
        else:
            steps.cancel_called(self.session, job.id, job.instance_id, now=self.now)
        self.session.commit()
        return True

    def _copy_called(self, job: Job) -> None:
        """Copy the version a call starts into the scratch database; a call whose process has
        no such published version fails the scenario naming the call activity. The draft's own
        key calls the draft."""
        key = job.tool or ""
        number = (job.inputs or {}).get("version")
        if key == self.key:
            return
        found = self.called(key, number)
        if found is None:
            wanted = f"version {number} of " if number else ""
            raise _Stop(f"the call activity '{job.node_id}' calls {wanted}the process '{key}', "
                        "which is not published")  # fmt: skip
        published, document = found
        process = self.session.scalar(select(Process).where(Process.key == key))
        if process is None:
            process = Process(key=key, name=key)
            self.session.add(process)
            self.session.flush()
        exists = self.session.scalar(
            select(ProcessVersion.id).where(
                ProcessVersion.process_id == process.id, ProcessVersion.number == published
            )
        )
        if exists is None:
            self.session.add(
                ProcessVersion(
                    process_id=process.id,
                    number=published,
                    document=dict(document),
                    bpmn_xml="",
                    content_hash=content_hash(document),
                )
            )
            copy_decisions(self.session, document, self.decided)
        self.session.flush()

    def play(self, action: Action) -> None:
        handler = getattr(self, f"_do_{action.do}")
        handler(action)
        self.settle()

    def _open_task(self, node: str) -> Task:
        task = self.session.scalar(
            select(Task)
            .where(Task.node_id == node, Task.status == TaskStatus.OPEN)
            .order_by(Task.id)
            .limit(1)
        )
        if task is None:
            raise _Stop(f"no open task at '{node}'; {self.where()}")
        return task

    def where(self) -> str:
        waits = self.waits()
        if not waits:
            return f"the instance is {self.instance().status}"
        return "it waits at " + ", ".join(sorted({w["node"] for w in waits}))

    def _do_complete(self, action: Action) -> None:
        task = self._open_task(action.node)
        values = action.data
        if task.form:
            instance = self.instance(task.instance_id)
            context = {"$input": instance.input, "$vars": instance.vars, "$nodes": instance.nodes}
            values = _checked(task.form, values, context)
        steps.complete_task(self.session, task.id, values, actor=None, now=self.now)
        self.session.commit()

    def _do_error(self, action: Action) -> None:
        task = self._open_task(action.node)
        steps.report_from_task(
            self.session, task.id, "error", action.code, actor=None, now=self.now
        )
        self.session.commit()

    def _do_tool(self, action: Action) -> None:
        jobs = self._pending("tool", action.node)
        if not jobs:
            raise _Stop(f"no tool call waits at '{action.node}'; {self.where()}")
        if action.error:
            code = str(action.error.get("code"))
            message = str(action.error.get("message") or code)
            business = bool(action.error.get("business"))
            outcome = Outcome(False, code=code, message=message, retryable=False,
                              bpmn_error=business)  # fmt: skip
        else:
            outcome = Outcome(True, output=action.output)
        self.now = max(self.now, jobs[0].due_at)
        target = jobs[0].id

        def run(call: Call) -> Outcome:
            if call.job_id == target:
                return outcome
            return _answer(call)

        self._run_tool(jobs[0], run)

    def _do_timer(self, action: Action) -> None:
        jobs = self._pending("timer", action.node)
        if not jobs:
            raise _Stop(f"no timer waits at '{action.node}'; {self.where()}")
        self.now = max(self.now, jobs[0].due_at)
        steps.fire_timer(self.session, jobs[0].id, jobs[0].instance_id, now=self.now)
        self.session.commit()

    def _do_activate(self, action: Action) -> None:
        """Start an activity of the running ad-hoc sub-process it sits in, as a person does."""
        nodes = self.version.document.get("nodes") or {}
        scope_node = (nodes.get(action.node) or {}).get("parent")
        scope = self.session.scalar(
            select(Token)
            .where(Token.node_id == scope_node, Token.status == TokenStatus.WAITING)
            .order_by(Token.id)
            .limit(1)
        )
        if scope is None:
            raise _Stop(f"no ad-hoc sub-process runs around '{action.node}'; {self.where()}")
        activation.activate(
            self.session, scope.instance_id, scope.id, action.node, actor=None, now=self.now
        )
        self.session.commit()

    def _do_message(self, action: Action) -> None:
        applied = False
        for instance_id in self._running():
            result = steps.deliver_message(
                self.session, instance_id, action.name, action.key, action.payload, now=self.now
            )
            self.session.commit()
            if result.applied:
                applied = True
                break
        if not applied:
            raise _Stop(f"nothing waits for message '{action.name}' ({action.key!r}); "
                        f"{self.where()}")  # fmt: skip

    def _do_signal(self, action: Action) -> None:
        conn = self.session.connection()
        ref = signals.record(
            conn, name=action.name, payload=action.payload or {}, partition_id=None, now=self.now
        )
        self.session.commit()
        signals.claim_broadcast(self.session, ref.id, self.now)
        self.session.commit()
        batches = signals.plan(self.session, ref.id, 500, self.now)
        self.session.commit()
        woke = False
        for batch_ref in batches:
            batch = signals.claim_batch(self.session, batch_ref.id, self.now, 60.0)
            self.session.commit()
            if batch is None or batch.kind == "start":
                continue
            for instance_id in self._running():
                result = signals.deliver(self.session, batch, instance_id, self.now)
                self.session.commit()
                woke = woke or result.applied
            signals.finish_batch(self.session, batch, self.now)
            self.session.commit()
        if not woke:
            raise _Stop(f"nothing waits for signal '{action.name}'; {self.where()}")

    def _running(self) -> list[int]:
        """The draft's instance, then the children its calls started, while they run."""
        children = self.session.scalars(
            select(Instance.id)
            .where(Instance.id != self.instance_id, Instance.status == InstanceStatus.RUNNING)
            .order_by(Instance.id)
        )
        return [self.instance_id, *children]

    def instance(self, instance_id: int | None = None) -> Instance:
        self.session.expire_all()
        instance = self.session.get(Instance, instance_id or self.instance_id)
        if instance is None:
            raise _Stop("the instance did not start")
        return instance

    def waits(self) -> list[dict[str, Any]]:
        tokens = self.session.scalars(
            select(Token).where(Token.status.in_(LIVE_TOKEN)).order_by(Token.id)
        )
        out = [{"node": t.node_id, "token": t.id, "status": t.status} for t in tokens]
        tasks = self.session.scalars(
            select(Task).where(Task.status == TaskStatus.OPEN).order_by(Task.id)
        )
        for task in tasks:
            out.append({"node": task.node_id, "task": task.id, "title": task.title,
                        "form": task.form})  # fmt: skip
        for job in self._pending("tool") + self._pending("timer"):
            out.append({"node": job.node_id, "job": job.kind, "due": job.due_at.isoformat()})
        return out

    def history(self) -> list[HistoryEntry]:
        return list(
            self.session.scalars(
                select(HistoryEntry)
                .where(HistoryEntry.instance_id == self.instance_id)
                .order_by(HistoryEntry.id)
            )
        )


def _status(instance: Instance) -> str:
    return instance.status


def _expectations(scenario: Scenario, run: _Run, result: RunResult) -> Failure | None:
    expect = scenario.expect
    if expect.status:
        unfinished = expect.status in (TokenStatus.WAITING, InstanceStatus.RUNNING)
        wanted = InstanceStatus.RUNNING if unfinished else expect.status
        if result.status != wanted:
            detail = f"; {run.where()}" if result.status == InstanceStatus.RUNNING else ""
            error = (run.instance().error or {}).get("message")
            detail += f"; {error}" if error else ""
            reason = f"expected {expect.status}, got {result.status}{detail}"
            return Failure("expect.status", reason)
    for node in expect.reached:
        if node not in result.nodes_walked:
            return Failure("expect.reached", f"'{node}' was not reached")
    for node in expect.not_reached:
        if node in result.nodes_walked:
            return Failure("expect.not_reached", f"'{node}' was reached")
    instance = run.instance()
    context = {"$input": instance.input, "$vars": instance.vars, "$nodes": instance.nodes}
    for expression, wanted in expect.values.items():
        try:
            got = evaluate(expression, context, now=run.now)
        except ExpressionError as error:
            return Failure(f"expect.values[{expression!r}]", str(error))
        if got != wanted:
            return Failure(f"expect.values[{expression!r}]", f"expected {wanted!r}, got {got!r}")
    return None


def _fill(run: _Run, result: RunResult) -> None:
    if not run.instance_id:
        return
    instance = run.instance()
    result.status = _status(instance)
    result.variables = dict(instance.vars or {})
    result.outputs = dict(instance.nodes or {})
    result.waits = run.waits()
    for entry in run.history():
        result.history.append({"kind": entry.kind, "node": entry.node_id, **(entry.details or {})})
        if entry.kind == HistoryKind.ENTERED and entry.node_id:
            result.nodes_walked.add(entry.node_id)
            flow = (entry.details or {}).get("flow")
            if flow:
                result.flows_walked.add(flow)


def run(
    document: Mapping[str, Any],
    scenario: Scenario,
    *,
    upto: int | None = None,
    called: Called = _none_called,
    decided: Decided = no_decisions,
) -> RunResult:
    """Play `scenario` on `document` (a draft) and check its expectations; with `upto`, play
    only the first `upto` actions and check nothing; `called` finds the versions call
    activities start, `decided` the decisions business rule tasks evaluate. Never raises for a
    scenario that does not fit: the result names the failing step."""
    result = RunResult(scenario.name, False, None, "not started")
    stale = problems_against(scenario, document)
    if stale:
        where, _, reason = stale[0].partition(": ")
        result.failure = Failure(where, reason)
        return result
    engine = scratch_engine()
    session = Session(engine, expire_on_commit=True)
    try:
        play = _Run(document, session, called, decided)
        actions = scenario.actions if upto is None else scenario.actions[:upto]
        step = "input"
        try:
            play.start(scenario.input)
            for index, action in enumerate(actions):
                step = f"actions[{index}]"
                play.play(action)
                result.actions_played = index + 1
        except _Stop as stop:
            result.failure = Failure(step, stop.reason)
        except EngineError as error:
            session.rollback()
            result.failure = Failure(step, error.message)
        except (ValueError, LookupError) as error:  # a draft the engine cannot read
            session.rollback()
            result.failure = Failure(step, f"the draft cannot run: {error}")
        _fill(play, result)
        if result.failure is None and upto is None and play.instance_id:
            result.failure = _expectations(scenario, play, result)
        result.passed = result.failure is None
        return result
    finally:
        session.close()
        engine.dispose()
