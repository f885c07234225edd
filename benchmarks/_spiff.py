"""SpiffWorkflow as `versus_spiff.py` drives it: one process parses the BPMN, runs each instance
and writes Spiff's serializer JSON to a table after every engine step (one transaction each).

An engine step is one Spiff task run (`do_engine_steps`' `did_complete_task` hook, the hook
SpiffArena saves in), its internal Start/EndJoin/End tasks included; `persist="bpmn"` saves
only after tasks of BPMN elements. A user completes a task, and a timer fires, on a workflow
read back from the table, as a server without state in memory would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from SpiffWorkflow.bpmn.parser.BpmnParser import BpmnParser
from SpiffWorkflow.bpmn.parser.TaskParser import TaskParser
from SpiffWorkflow.bpmn.parser.util import full_tag
from SpiffWorkflow.bpmn.script_engine import PythonScriptEngine
from SpiffWorkflow.bpmn.serializer.config import DEFAULT_CONFIG
from SpiffWorkflow.bpmn.serializer.default.task_spec import BpmnTaskSpecConverter
from SpiffWorkflow.bpmn.serializer.workflow import BpmnWorkflowSerializer
from SpiffWorkflow.bpmn.specs.defaults import ServiceTask
from SpiffWorkflow.bpmn.specs.event_definitions.timer import TimerEventDefinition
from SpiffWorkflow.bpmn.workflow import BpmnWorkflow
from SpiffWorkflow.util.task import TaskState
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, Text, select
from sqlalchemy.engine import Engine

from tests.differential.scenario import Cond, Scenario
from tests.differential.spiff_side import prepared

metadata = MetaData()
#: Spiff's state, one row an instance (the table a SpiffArena-like server would keep).
workflows = Table(
    "spiff_workflows",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("status", String(16), nullable=False),
    Column("due_at", DateTime(timezone=True), nullable=True),
    Column("state", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Work:
    """A service task's stand-in work, as `bench.echo` does: evaluate the inputs (Python
    translations of the Flowdesk expressions) and keep them under `save_to` (if any)."""

    inputs: dict[str, str]
    save_to: str | None = None


class _Engine(PythonScriptEngine):
    def __init__(self, work: dict[str, Work]) -> None:
        super().__init__()
        self.work = work


class StandInService(ServiceTask):
    """A service task doing the stand-in work its engine holds for its BPMN id."""

    def _execute(self, task: Any) -> bool:
        engine = task.workflow.script_engine
        work = engine.work.get(self.bpmn_id)
        if work is not None:
            result = {name: engine.evaluate(task, expr) for name, expr in work.inputs.items()}
            if work.save_to:
                task.data[work.save_to] = result
        return True


class _Parser(BpmnParser):
    OVERRIDE_PARSER_CLASSES = {full_tag("serviceTask"): (TaskParser, StandInService)}


@dataclass
class SpiffProcess:
    """A BPMN file parsed once, with the Python its conditions and service tasks need."""

    xml: bytes
    process_id: str
    conditions: dict[str, str]
    work: dict[str, Work]
    spec: Any = None
    subprocess_specs: Any = None
    serializer: BpmnWorkflowSerializer = field(
        default_factory=lambda: BpmnWorkflowSerializer(
            BpmnWorkflowSerializer.configure(
                {**DEFAULT_CONFIG, StandInService: BpmnTaskSpecConverter}
            )
        )
    )

    def __post_init__(self) -> None:
        scenario = Scenario(conditions={k: Cond(python=v) for k, v in self.conditions.items()})
        parser = _Parser()
        parser.add_bpmn_xml(prepared(self.xml, scenario), filename=self.process_id)
        self.spec = parser.get_spec(self.process_id)
        self.subprocess_specs = parser.get_subprocess_specs(self.process_id)


class SpiffRunner:
    """Runs instances of one process in this process, saving after every engine step."""

    def __init__(self, process: SpiffProcess, engine: Engine, *, persist: str = "task") -> None:
        self.process = process
        self.engine = engine
        self.script_engine = _Engine(process.work)
        self.persist = persist
        self.steps = 0  # transactions written

    def _status(self, workflow: BpmnWorkflow) -> tuple[str, datetime | None]:
        if workflow.is_completed():
            return "completed", None
        due = [
            TimerEventDefinition.get_datetime(task._get_internal_data("event_value"))
            for task in workflow.get_tasks(state=TaskState.WAITING)
            if isinstance(getattr(task.task_spec, "event_definition", None), TimerEventDefinition)
        ]
        return "waiting", min(due) if due else None

    def _save(self, row_id: int, workflow: BpmnWorkflow) -> None:
        status, due = self._status(workflow)
        state = self.process.serializer.serialize_json(workflow)
        with self.engine.begin() as conn:
            conn.execute(
                workflows.update()
                .where(workflows.c.id == row_id)
                .values(status=status, due_at=due, state=state, updated_at=_now())
            )
        self.steps += 1

    def _hook(self, row_id: int, workflow: BpmnWorkflow) -> Callable[[Any], None]:
        def saved(task: Any) -> None:
            if self.persist == "task" or getattr(task.task_spec, "bpmn_id", None):
                self._save(row_id, workflow)

        return saved

    def start(self, data: dict[str, Any]) -> int:
        """A new instance run until it waits or ends; its row id."""
        workflow = BpmnWorkflow(
            self.process.spec, self.process.subprocess_specs, script_engine=self.script_engine
        )
        workflow.task_tree.data.update(data)
        now = _now()
        with self.engine.begin() as conn:
            row_id = conn.execute(
                workflows.insert()
                .values(
                    status="running",
                    state=self.process.serializer.serialize_json(workflow),
                    created_at=now,
                    updated_at=now,
                )
                .returning(workflows.c.id)
            ).scalar_one()
        self.steps += 1
        workflow.do_engine_steps(did_complete_task=self._hook(row_id, workflow))
        return row_id

    def _load(self, row_id: int) -> BpmnWorkflow:
        with self.engine.connect() as conn:
            state = conn.execute(
                select(workflows.c.state).where(workflows.c.id == row_id)
            ).scalar_one()
        workflow = self.process.serializer.deserialize_json(state)
        workflow.script_engine = self.script_engine
        return workflow

    def complete_task(self, row_id: int, answer: dict[str, Any]) -> bool:
        """Complete the instance's ready user task (read back from the table); False if none."""
        workflow = self._load(row_id)
        ready = workflow.get_tasks(state=TaskState.READY, manual=True)
        if not ready:
            return False
        task = ready[0]
        task.data.update(answer)
        task.run()
        self._save(row_id, workflow)
        workflow.do_engine_steps(did_complete_task=self._hook(row_id, workflow))
        return True

    def fire_due_timers(self) -> int:
        """Run every waiting instance whose timer is due; how many."""
        with self.engine.connect() as conn:
            due = list(
                conn.execute(
                    select(workflows.c.id).where(
                        workflows.c.status == "waiting", workflows.c.due_at <= _now()
                    )
                ).scalars()
            )
        for row_id in due:
            workflow = self._load(row_id)
            workflow.refresh_timers()
            workflow.do_engine_steps(did_complete_task=self._hook(row_id, workflow))
        return len(due)

    def completed_between(self, first: int, last: int) -> int:
        with self.engine.connect() as conn:
            return len(
                conn.execute(
                    select(workflows.c.id).where(
                        workflows.c.id.between(first, last), workflows.c.status == "completed"
                    )
                ).all()
            )
