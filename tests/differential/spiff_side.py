"""Run a BPMN file in SpiffWorkflow, the oracle: the same inputs, answers and stub results as
Flowdesk gets, timers fired at once, and the outcome read from Spiff's task tree."""

from __future__ import annotations

import copy
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from lxml import etree
from SpiffWorkflow.bpmn.parser.TaskParser import TaskParser
from SpiffWorkflow.bpmn.parser.util import full_tag
from SpiffWorkflow.bpmn.script_engine import PythonScriptEngine
from SpiffWorkflow.bpmn.specs.control import BoundaryEventSplit
from SpiffWorkflow.bpmn.specs.defaults import ScriptTask, ServiceTask
from SpiffWorkflow.bpmn.specs.event_definitions.item_aware_event import ErrorEventDefinition
from SpiffWorkflow.bpmn.specs.event_definitions.message import MessageEventDefinition
from SpiffWorkflow.bpmn.specs.event_definitions.multiple import MultipleEventDefinition
from SpiffWorkflow.bpmn.specs.event_definitions.timer import (
    CycleTimerEventDefinition,
    TimerEventDefinition,
)
from SpiffWorkflow.bpmn.specs.mixins.events.end_event import EndEvent
from SpiffWorkflow.bpmn.specs.mixins.events.event_types import CatchingEvent
from SpiffWorkflow.bpmn.specs.mixins.events.intermediate_event import BoundaryEvent
from SpiffWorkflow.bpmn.specs.mixins.multiinstance_task import LoopTask
from SpiffWorkflow.bpmn.specs.mixins.subworkflow_task import SubWorkflowTask
from SpiffWorkflow.bpmn.util import BpmnEvent
from SpiffWorkflow.bpmn.workflow import BpmnWorkflow
from SpiffWorkflow.camunda.specs.business_rule_task import BusinessRuleTask
from SpiffWorkflow.dmn.engine.DMNEngine import DMNEngine
from SpiffWorkflow.dmn.parser.BpmnDmnParser import BpmnDmnParser
from SpiffWorkflow.exceptions import SpiffWorkflowException, WorkflowException
from SpiffWorkflow.util.task import TaskState

from tests.differential.scenario import MAX_ACTIONS, Outcome, Scenario, Visits

BPMN = "{http://www.omg.org/spec/BPMN/20100524/MODEL}"
CAMUNDA = "{http://camunda.org/schema/1.0/bpmn}"
ZEEBE = "{http://camunda.org/schema/zeebe/1.0}"
SPIFF = "{http://spiffworkflow.org/bpmn/schema/1.0/core}"
# Timer texts that are ISO literals (Camunda writes them bare; Spiff evaluates Python).
_ISO = re.compile(r"^(R\d*/)?(P[0-9WDTHMS.]+|\d{4}-\d{2}-\d{2}[0-9T:.+\-Z]*)(/.*)?$")
_LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)
# Spiff names its own task specs so; a BPMN element with such an id would replace one of them.
_RESERVED = {"Start", "End", "Root"}
_RENAMED = "__bpmn"
_REFERENCES = ("sourceRef", "targetRef", "default", "attachedToRef")


class _StubEngine(PythonScriptEngine):
    """Python for conditions and translated scripts; service tasks (and script tasks the
    scenario does not translate) take the scenario's stub results."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__()
        self.scenario = scenario
        self.visits = Visits()

    def stub(self, task: Any) -> bool:
        node_id = _bpmn_id(task) or ""
        task.data.update(self.scenario.result(node_id, self.visits.next(node_id)))
        return True


class _StubService(ServiceTask):
    def _execute(self, task: Any) -> bool:
        return task.workflow.script_engine.stub(task)


class _ScenarioScript(ScriptTask):
    """Runs the scenario's Python translation of the script; without one, the stub result."""

    def _execute(self, task: Any) -> bool:
        engine = task.workflow.script_engine
        script = engine.scenario.scripts.get(_bpmn_id(task) or "")
        if script is None:
            return engine.stub(task)
        return engine.execute(task, script.python)


class _ScriptParser(TaskParser):
    """A script task, its `<script>` optional (the scenario's translation may replace it)."""

    def create_task(self) -> Any:
        found = self.xpath(".//bpmn:script")
        script = found[0].text if found else None
        return self.spec_class(self.spec, self.bpmn_id, script=script, **self.bpmn_attributes)


class _Requiring:
    """Spiff's engine of a decision and, before it, of each decision it requires (Spiff's own
    business rule task reads one table): each result joins the data the next one reads, as a
    required decision's result is visible to the decision that requires it (DMN 1.3 §6.3)."""

    def __init__(self, engines: list[DMNEngine]) -> None:
        self.engines = engines

    def result(self, task: Any) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for engine in self.engines:
            result = engine.result(task)
            task.data.update(result)
            found.update(result)
        return found


class _DecisionParser(TaskParser):
    """A business rule task, its decision named as any vendor writes it: Camunda's
    `decisionRef`, Zeebe's `calledDecision` (or its DMN worker's `decisionRef` header),
    SpiffArena's `calledDecisionId`."""

    def create_task(self) -> Any:
        engine = self.process_parser.parser.engine(self.get_decision_ref(self.node), self.node)
        return BusinessRuleTask(self.spec, self.bpmn_id, dmnEngine=engine, **self.bpmn_attributes)

    @staticmethod
    def get_decision_ref(node: Any) -> str:
        ref = node.get(f"{CAMUNDA}decisionRef")
        for header in node.iter(f"{ZEEBE}header"):  # Zeebe's DMN job worker
            if header.get("key") == "decisionRef":
                ref = header.get("value")
        for called in node.iter(f"{ZEEBE}calledDecision"):
            ref = called.get("decisionId")
        for called in node.iter(f"{SPIFF}calledDecisionId"):
            ref = (called.text or "").strip()
        return ref or ""


class _Parser(BpmnDmnParser):
    OVERRIDE_PARSER_CLASSES = {
        full_tag("serviceTask"): (TaskParser, _StubService),
        full_tag("scriptTask"): (_ScriptParser, _ScenarioScript),
        full_tag("businessRuleTask"): (_DecisionParser, BusinessRuleTask),
    }

    def __init__(self) -> None:
        super().__init__()
        self.requires: dict[str, list[str]] = {}

    def add_decisions(self, data: bytes) -> None:
        """Read a DMN file one decision at a time (Spiff's DMN parser reads one decision a
        file), keeping which decisions each requires."""
        root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
        namespace = root.tag[: root.tag.index("}") + 1]
        decisions = root.findall(f"{namespace}decision")
        for decision in decisions:
            alone = etree.Element(root.tag, root.attrib, nsmap=root.nsmap)
            alone.append(copy.deepcopy(decision))
            self.add_dmn_xml(alone, filename=decision.get("id"))
            self.requires[decision.get("id", "")] = [
                (required.get("href") or "").removeprefix("#")
                for required in decision.iter(f"{namespace}requiredDecision")
            ]

    def engine(self, decision_id: str, node: Any) -> _Requiring:
        """The engines of the decision's required decisions (depth first), then its own."""
        order: list[str] = []

        def visit(current: str) -> None:
            for required in self.requires.get(current, []):
                if required not in order:
                    visit(required)
            order.append(current)

        visit(decision_id)
        return _Requiring([self.get_engine(name, node) for name in order])


def prepared(xml: bytes, scenario: Scenario) -> etree._Element:
    """The file as Spiff should read it: ids on id-less flows (Spiff drops such flows), the
    scenario's Python conditions, bare ISO timer texts quoted, and no data stores."""
    root = etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True))
    _rename_reserved(root)
    _drop_data_stores(root)
    for number, flow in enumerate(root.iter(f"{BPMN}sequenceFlow")):
        if not flow.get("id"):
            flow.set("id", f"_diff_flow_{number}")
        cond = scenario.conditions.get(flow.get("id", ""))
        if cond is not None and cond.python is not None:
            expression = flow.find(f"{BPMN}conditionExpression")
            if expression is None:
                expression = etree.SubElement(flow, f"{BPMN}conditionExpression")
            expression.text = cond.python
    for definition in root.iter(f"{BPMN}timerEventDefinition"):
        event_id = definition.getparent().get("id", "")
        for child in definition:
            text = (child.text or "").strip()
            python = scenario.timers[event_id].python if event_id in scenario.timers else None
            if python is not None:
                child.text = python
            elif _ISO.match(text):
                child.text = repr(text)
    return root


class Unrunnable(Exception):
    """Spiff cannot load the file's process (it refuses to parse or build it), or would run it
    with other semantics than it says (see `_unsupported`)."""


# Start events of event sub-processes Spiff's parser reads as none starts (it parses message,
# signal, timer and conditional ones only), so the event sub-process would start at once.
_UNREAD_STARTS = ("errorEventDefinition", "escalationEventDefinition", "compensateEventDefinition")
# Starts of event sub-processes Spiff triggers only when the event sub-process is in a process.
_PROCESS_LEVEL_STARTS = ("messageEventDefinition", "signalEventDefinition")


def _unsupported(root: etree._Element, alongside: bool = False) -> str | None:
    """What of the file Spiff 3.2 would silently run wrong: error-, escalation- and compensation-
    started event sub-processes (started at once), interrupting event sub-processes (Spiff
    never reads `isInterrupting`, so every event sub-process runs alongside its scope; allowed
    when `alongside`: the scenario's `spiff_extra` accounts for it), and message- or
    signal-started ones inside a sub-process (Spiff's event manager looks for such triggers in
    the process only, so they never start)."""
    for subprocess in root.iter(f"{BPMN}subProcess"):
        if subprocess.get("triggeredByEvent", "false").strip() != "true":
            continue
        name = subprocess.get("id")
        nested = subprocess.getparent().tag != f"{BPMN}process"
        for start in subprocess.findall(f"{BPMN}startEvent"):
            for definition in _UNREAD_STARTS:
                if start.find(f"{BPMN}{definition}") is not None:
                    return f"event sub-process '{name}' starts on {definition}"
            if start.get("isInterrupting", "true").strip() != "false" and not alongside:
                return f"event sub-process '{name}' is interrupting"
            for definition in _PROCESS_LEVEL_STARTS:
                if nested and start.find(f"{BPMN}{definition}") is not None:
                    return f"event sub-process '{name}' starts on {definition} in a sub-process"
    return None


def _drop_data_stores(root: etree._Element) -> None:
    """Remove data store references and their data associations: Spiff refuses a data store
    without a registered implementation, and neither engine executes one (Flowdesk keeps them
    as documentation only)."""
    stores = {ref.get("id") for ref in root.iter(f"{BPMN}dataStoreReference")}
    associations = (f"{BPMN}dataInputAssociation", f"{BPMN}dataOutputAssociation")
    kinds = (f"{BPMN}dataStore", f"{BPMN}dataStoreReference")
    for element in list(root.iter(*kinds, *associations)):
        ends = {(child.text or "").strip() for child in element}
        if element.tag in kinds or ends & stores:
            parent = element.getparent()
            if parent is not None:
                parent.remove(element)


def _rename_reserved(root: etree._Element) -> None:
    """Rename elements whose ids Spiff reserves (`_bpmn_id` maps them back)."""
    for element in root.iter():
        for attribute in ("id", *_REFERENCES):
            if element.get(attribute) in _RESERVED:
                element.set(attribute, element.get(attribute) + _RENAMED)
        text = (element.text or "").strip()
        if element.tag in (f"{BPMN}incoming", f"{BPMN}outgoing") and text in _RESERVED:
            element.text = text + _RENAMED


def _workflow(
    xml: bytes,
    process_id: str,
    scenario: Scenario,
    called: tuple[bytes, ...],
    decisions: tuple[bytes, ...] = (),
) -> tuple[BpmnWorkflow, set[str]]:
    """The workflow of `process_id`, and the ids of its event sub-processes; the parser also
    reads the `called` files, so that `get_subprocess_specs` finds the processes call
    activities start across files, and the `decisions` (DMN files) its business rule tasks
    evaluate."""
    roots = [prepared(xml, scenario), *(prepared(other, scenario) for other in called)]
    for root in roots:
        reason = _unsupported(root, scenario.spiff_alongside)
        if reason:
            raise Unrunnable(f"Spiff would run it wrong: {reason}")
    try:
        parser = _Parser()
        for dmn_file in decisions:
            parser.add_decisions(dmn_file)
        parser.add_bpmn_xml(roots[0], filename=process_id)
        for number, root in enumerate(roots[1:], 1):
            parser.add_bpmn_xml(root, filename=f"called-{number}")
        spec = parser.get_spec(process_id)
        subprocesses = parser.get_subprocess_specs(process_id)
        workflow = BpmnWorkflow(spec, subprocesses, script_engine=_StubEngine(scenario))
    except SpiffWorkflowException as error:
        raise Unrunnable(str(error)) from error
    return workflow, {
        str(element.get("id")).removesuffix(_RENAMED)
        for root in roots
        for element in root.iter(f"{BPMN}subProcess")
        if element.get("triggeredByEvent", "false").strip() == "true"
    }


def _spec_id(spec: Any) -> str | None:
    bpmn_id = getattr(spec, "bpmn_id", None)
    return bpmn_id.removesuffix(_RENAMED) if isinstance(bpmn_id, str) else None


def _bpmn_id(task: Any) -> str | None:
    return _spec_id(task.task_spec)


def _due(task: Any) -> datetime:
    value = task._get_internal_data("event_value")
    if isinstance(value, dict):
        value = value.get("next")
    try:
        moment = TimerEventDefinition.get_datetime(value)
    except (TypeError, ValueError):
        return _LONG_AGO
    return moment


def _definitions(task: Any) -> list[Any]:
    """The event definitions a waiting task catches: its own, or each of an event-based
    gateway's (Spiff's gateway holds its targets' events and waits for them itself)."""
    definition = getattr(task.task_spec, "event_definition", None)
    if isinstance(definition, MultipleEventDefinition):
        return list(definition.event_definitions)
    return [definition]


def _timer_tasks(workflow: BpmnWorkflow) -> list[Any]:
    found = []
    for task in workflow.get_tasks(state=TaskState.WAITING):
        if any(isinstance(d, TimerEventDefinition) for d in _definitions(task)):
            found.append(task)
    return sorted(found, key=lambda t: (_due(t), _bpmn_id(t) or ""))


def _is_cycle(task: Any) -> bool:
    return isinstance(getattr(task.task_spec, "event_definition", None), CycleTimerEventDefinition)


def _fire(workflow: BpmnWorkflow, task: Any, ticks: Counter[str]) -> None:
    """Make the timer due now, as if its time had come. A cycle's task stays while it ticks
    (and completes once at the end), so its ticks are counted as its completions."""
    past = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    value = task._get_internal_data("event_value")
    if _is_cycle(task):
        if isinstance(value, dict):
            task._set_internal_data(event_value={**value, "next": past})
        ticks[_bpmn_id(task) or ""] += 1
    else:
        task._set_internal_data(event_value=past)
    workflow.refresh_timers()
    workflow.do_engine_steps()


def _message_waiters(workflow: BpmnWorkflow, name: str) -> bool:
    """Whether a waiting task or a message-started event sub-process of the process (Spiff
    keeps those as triggers of its start, not as waiting tasks) catches the message."""
    for task in workflow.get_tasks(state=TaskState.WAITING):
        for definition in _definitions(task):
            if isinstance(definition, MessageEventDefinition) and definition.name == name:
                return True
    for trigger in workflow.spec.start.trigger_specs:
        for start in workflow.subprocess_specs[trigger].bpmn_start_events:
            definition = start.event_definition
            if isinstance(definition, MessageEventDefinition) and definition.name == name:
                return True
    return False


def _resting(task: Any) -> bool:
    """A task where a token rests (not a scope that holds others, not a boundary listener)."""
    spec = task.task_spec
    if isinstance(spec, (SubWorkflowTask, LoopTask, BoundaryEvent)):
        return False
    if isinstance(spec, CatchingEvent) and spec.__class__.__name__ == "StartEvent":
        return False  # an event sub-process waiting for its trigger
    return _bpmn_id(task) is not None


def run(
    xml: bytes,
    process_id: str,
    scenario: Scenario,
    called: tuple[bytes, ...] = (),
    decisions: tuple[bytes, ...] = (),
) -> Outcome:
    """Run the file's process with the scenario (and the `called` files' processes its call
    activities start, and the `decisions` its business rule tasks evaluate); raises Unrunnable
    if Spiff cannot load it."""
    workflow, uncounted = _workflow(xml, process_id, scenario, called, decisions)
    workflow.task_tree.data.update(scenario.input)
    visits = Visits()
    messages = list(scenario.messages)
    fired = 0
    ticks: Counter[str] = Counter()
    try:
        workflow.do_engine_steps()
        for _ in range(MAX_ACTIONS):
            if workflow.is_completed():
                break
            timers = _timer_tasks(workflow) if fired < scenario.timer_limit else []
            if scenario.timers_first and timers:
                fired += 1
                _fire(workflow, timers[0], ticks)
                continue
            if _complete_one(workflow, scenario, visits):
                continue
            if timers:
                fired += 1
                _fire(workflow, timers[0], ticks)
                continue
            if messages and _message_waiters(workflow, messages[0][0]):
                name, payload = messages.pop(0)
                workflow.catch(BpmnEvent(MessageEventDefinition(name), payload))
                workflow.do_engine_steps()
                continue
            break
        else:
            raise AssertionError(f"Spiff: still moving after {MAX_ACTIONS} actions")
    except WorkflowException as error:
        task = getattr(error, "task", None)
        spec = task.task_spec if task is not None else getattr(error, "task_spec", None)
        node_id = _spec_id(spec)
        at = (node_id,) if node_id else ()
        return Outcome(_completed(workflow, ticks, uncounted), "failed", at, str(error)[:300])
    if workflow.is_completed():
        return Outcome(_completed(workflow, ticks, uncounted), "completed")
    live = TaskState.READY | TaskState.WAITING | TaskState.STARTED
    resting = [t for t in workflow.get_tasks(state=live) if _resting(t)]
    return Outcome(
        _completed(workflow, ticks, uncounted),
        "waiting",
        tuple(sorted(_bpmn_id(t) for t in resting)),
    )


def _complete_one(workflow: BpmnWorkflow, scenario: Scenario, visits: Visits) -> bool:
    """Complete the first ready manual task (by node id) the scenario has an answer for."""
    ready = workflow.get_tasks(state=TaskState.READY, manual=True)
    for task in sorted(ready, key=lambda t: _bpmn_id(t) or ""):
        node_id = _bpmn_id(task) or ""
        answer = scenario.answer(node_id, visits.counts[node_id])
        if answer is None:
            continue
        visits.next(node_id)
        task.data.update(answer)
        task.run()
        workflow.do_engine_steps()
        return True
    return False


def _completed(workflow: BpmnWorkflow, ticks: Counter[str], uncounted: set[str]) -> Counter[str]:
    """Completed tasks by node id; a multi-instance activity counts its completed instances
    and a standard loop its runs (not the body that holds them), a cycle timer its ticks, and
    an activity an interrupting boundary event ended does not count (see `_interrupted`). Nor
    does an event sub-process: Spiff runs every trigger of a non-interrupting one in a single
    instance, where BPMN 2.0.2 §10.2.5 starts an instance per trigger (the nodes inside are
    counted).

    The walk asks for every state: asked for completed tasks only, Spiff's iterator does not
    descend below a task that is not finished, such as a running multi-instance body."""
    completed = Counter(
        node_id
        for task in workflow.get_tasks(state=TaskState.ANY_MASK)
        if task.state == TaskState.COMPLETED
        and (node_id := _bpmn_id(task)) is not None
        and not isinstance(task.task_spec, LoopTask)
        and not _is_cycle(task)
        and not _interrupted(task)
        and not _ended_in_error(task)
        and node_id not in uncounted
    )
    return completed + ticks


def _ended_in_error(task: Any) -> bool:
    """Whether `task` is a sub-process or call activity whose process ended at an error end
    event. Spiff completes it and then hands the error on; BPMN 2.0.2 §10.4.3 has the error
    end event terminate the process and the error caught around it, so it never completes."""
    if not isinstance(task.task_spec, SubWorkflowTask):
        return False
    subprocess = task.workflow.top_workflow.subprocesses.get(task.id)
    if subprocess is None:
        return False
    return any(
        isinstance(inner.task_spec, EndEvent)
        and isinstance(inner.task_spec.event_definition, ErrorEventDefinition)
        and inner.state == TaskState.COMPLETED
        for inner in subprocess.get_tasks(state=TaskState.ANY_MASK, skip_subprocesses=True)
    )


def _interrupted(task: Any) -> bool:
    """Whether an interrupting boundary event of `task` fired. Spiff marks a sub-process whose
    error (or escalation) end event threw to its boundary as completed, and then the boundary
    fires; BPMN 2.0.2 §13.5.3 has the event cancel the activity, which so never completes.
    (An activity that did complete closes its boundary events, so none of them can fire after.)"""
    split = task.parent
    if isinstance(task.task_spec, BoundaryEvent) or split is None:
        return False
    if not isinstance(split.task_spec, BoundaryEventSplit):
        return False
    return any(
        isinstance(other.task_spec, BoundaryEvent)
        and other.task_spec.cancel_activity
        and other.state == TaskState.COMPLETED
        for other in split.children
    )
