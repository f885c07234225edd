"""Test scenarios of a process: keep them, play them on its draft, and the coverage they give.

Saving reads the JSON and checks it against the draft, so a problem names its step; each
change is one transaction of its own. Runs never write: the runner has its own database.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from webapp.engine.scenario_runner import Failure, RunResult, run
from webapp.extensions import db
from webapp.infra.database import transactional
from webapp.models import Process, ProcessVersion, TestScenario, User
from webapp.models.base import utcnow
from webapp.process import document as documents
from webapp.process.bpmn import BpmnImportError, import_bpmn
from webapp.process.scenarios import Scenario, ScenarioError, check, node_count, parse
from webapp.services import decision_links

# How many scenarios one process may keep.
SCENARIO_LIMIT = 200
# The most characters one scenario's JSON may have.
TEXT_LIMIT = 100_000


class ScenarioRefused(Exception):
    """A scenario that was not saved: every problem, each naming its step."""

    status = 422

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Coverage:
    """The draft's nodes and flows that some scenario walked, and how many it has."""

    nodes: frozenset[str]
    flows: frozenset[str]
    total: int
    flow_total: int

    @property
    def walked(self) -> int:
        return len(self.nodes)

    @property
    def flows_walked(self) -> int:
        return len(self.flows)

    @property
    def percent(self) -> int:
        return _share(self.walked, self.total)

    @property
    def flow_percent(self) -> int:
        return _share(self.flows_walked, self.flow_total)

    def as_dict(self) -> dict[str, Any]:
        return {"nodes": sorted(self.nodes), "flows": sorted(self.flows),
                "total": self.total, "flow_total": self.flow_total}  # fmt: skip


def _share(part: int, whole: int) -> int:
    return round(100 * part / whole) if whole else 0


def draft_document(process: Process) -> dict[str, Any]:
    return process.draft_document or documents.new_document(process.key, process.name)


def scenarios_of(process_id: int) -> list[TestScenario]:
    return list(
        db.session.scalars(
            select(TestScenario)
            .where(TestScenario.process_id == process_id)
            .order_by(TestScenario.position, TestScenario.id)
        )
    )


def read_text(text: str) -> Any:
    """The JSON of a scenario; ScenarioRefused naming the line and column when it is not JSON."""
    if len(text) > TEXT_LIMIT:
        raise ScenarioRefused([f"scenario: at most {TEXT_LIMIT:,} characters"])
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ScenarioRefused(
            [f"scenario: not JSON at line {error.lineno}, column {error.colno}: {error.msg}"]
        ) from None


def checked(process: Process, raw: Any) -> Scenario:
    try:
        return check(raw, draft_document(process))
    except ScenarioError as error:
        raise ScenarioRefused(error.problems) from None


@transactional
def save(
    process: Process, text: str, *, actor: User | None, scenario_id: int | None = None
) -> TestScenario:
    """Add a scenario (or replace `scenario_id`'s) from its JSON, checked against the draft."""
    scenario = checked(process, read_text(text))
    row = None
    if scenario_id is not None:
        row = db.session.get(TestScenario, scenario_id)
        if row is None or row.process_id != process.id:
            raise ScenarioRefused([f"scenario {scenario_id}: no such scenario of this process"])
    same_name = db.session.scalar(
        select(TestScenario.id).where(
            TestScenario.process_id == process.id, TestScenario.name == scenario.name
        )
    )
    if same_name is not None and (row is None or same_name != row.id):
        raise ScenarioRefused([f"scenario.name: another scenario is named '{scenario.name}'"])
    if row is None:
        count = db.session.scalar(
            select(func.count(TestScenario.id)).where(TestScenario.process_id == process.id)
        )
        if (count or 0) >= SCENARIO_LIMIT:
            raise ScenarioRefused([f"scenario: a process keeps at most {SCENARIO_LIMIT}"])
        row = TestScenario(process_id=process.id, position=(count or 0))
        db.session.add(row)
    row.name = scenario.name
    row.body = scenario.as_dict()
    row.updated_by_id = actor.id if actor is not None else None
    row.updated_at = utcnow()
    db.session.flush()
    return row


@transactional
def delete(process: Process, scenario_id: int) -> bool:
    row = db.session.get(TestScenario, scenario_id)
    if row is None or row.process_id != process.id:
        return False
    db.session.delete(row)
    return True


def store_all(process: Process, bodies: Iterable[Any], *, actor: User | None) -> int:
    """Replace the process's scenarios by `bodies` (an import), in the caller's transaction:
    all are read first, and nothing changes when one is refused; how many were stored."""
    parsed: list[Scenario] = []
    problems: list[str] = []
    for index, body in enumerate(bodies):
        try:
            parsed.append(parse(body))
        except ScenarioError as error:
            problems += [f"scenarios[{index}] {problem}" for problem in error.problems]
    names = [scenario.name for scenario in parsed]
    if len(set(names)) != len(names):
        problems.append("scenarios: two scenarios have the same name")
    if len(parsed) > SCENARIO_LIMIT:
        problems.append(f"scenarios: a process keeps at most {SCENARIO_LIMIT}")
    if problems:
        raise ScenarioRefused(problems)
    for row in scenarios_of(process.id):
        db.session.delete(row)
    db.session.flush()
    for position, scenario in enumerate(parsed):
        db.session.add(
            TestScenario(
                process_id=process.id,
                name=scenario.name,
                position=position,
                body=scenario.as_dict(),
                updated_by_id=actor.id if actor is not None else None,
                updated_at=utcnow(),
            )
        )
    return len(parsed)


replace_all = transactional(store_all)


def read_export(data: bytes) -> tuple[dict[str, Any], list[Any]]:
    """The document and the scenarios of an exported JSON or BPMN file (ScenarioRefused saying
    why not)."""
    try:
        if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
            document = import_bpmn(data).document
        else:
            document = documents.from_json(data)
    except documents.DocumentError as error:
        raise ScenarioRefused([f"file: {error}"]) from None
    except BpmnImportError as error:
        line = f" (line {error.line})" if error.line else ""
        raise ScenarioRefused([f"file{line}: {error.message}"]) from None
    bodies = document.pop("scenarios", None) or []
    if not isinstance(bodies, list):
        raise ScenarioRefused(["scenarios: a list is required"])
    return document, bodies


def exported(process_id: int) -> list[dict[str, Any]]:
    """The scenarios as they go into the JSON export of the process."""
    return [row.body for row in scenarios_of(process_id)]


def published(key: str, number: int | None) -> tuple[int, Mapping[str, Any]] | None:
    """The version of `key` a call activity starts (the latest unless `number`), as the engine
    picks it, for a scenario's scratch database."""
    query = (
        select(ProcessVersion.number, ProcessVersion.document)
        .join(Process, Process.id == ProcessVersion.process_id)
        .where(Process.key == key)
    )
    if number is not None:
        query = query.where(ProcessVersion.number == number)
    found = db.session.execute(query.order_by(ProcessVersion.number.desc()).limit(1)).first()
    return None if found is None else (found.number, found.document)


def run_body(
    document: Mapping[str, Any], body: Any, name: str = "", partition_id: int | None = None
) -> RunResult:
    """Play one stored or exported scenario (of a process in `partition_id`, whose published
    decisions its business rule tasks evaluate); one that no longer reads fails naming why."""
    try:
        scenario = parse(body)
    except ScenarioError as error:
        where, _, reason = error.problems[0].partition(": ")
        return RunResult(name or "(unnamed)", False, Failure(where, reason), "not started")
    return run(
        document, scenario, called=published, decided=decision_links.decided_in(partition_id)
    )


def run_all(process: Process, only: int | None = None) -> list[tuple[TestScenario, RunResult]]:
    """Play every scenario of the process (or only the one with id `only`) on its draft."""
    document = draft_document(process)
    return [
        (row, run_body(document, row.body, row.name, process.partition_id))
        for row in scenarios_of(process.id)
        if only is None or row.id == only
    ]


def coverage(document: Mapping[str, Any], results: Iterable[RunResult]) -> Coverage:
    nodes = set((document.get("nodes") or {}).keys())
    flows = set((document.get("flows") or {}).keys())
    walked: set[str] = set()
    walked_flows: set[str] = set()
    for result in results:
        walked |= result.nodes_walked
        walked_flows |= result.flows_walked
    return Coverage(
        frozenset(walked & nodes), frozenset(walked_flows & flows), node_count(document), len(flows)
    )


def _coverage_key(process: Process) -> str:
    """What the kept coverage depends on: the draft and every scenario, in order."""
    bodies = [row.body for row in scenarios_of(process.id)]
    text = documents.canonical_json({"draft": draft_document(process), "scenarios": bodies})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def keep_coverage(process: Process, results: Iterable[RunResult]) -> Coverage:
    """Keep the coverage of a run of every scenario with the draft, so pages need not rerun
    (in the caller's transaction)."""
    found = coverage(draft_document(process), results)
    process.scenario_coverage = {"key": _coverage_key(process), **found.as_dict()}
    return found


remember_coverage = transactional(keep_coverage)


def kept_coverage(process: Process) -> Coverage | None:
    """The coverage of the last run of every scenario; None once the draft or a scenario changed
    since (or when none ran, or the process has no scenarios)."""
    kept = process.scenario_coverage
    if not kept or kept.get("key") != _coverage_key(process) or not scenarios_of(process.id):
        return None
    return Coverage(
        frozenset(kept.get("nodes") or ()),
        frozenset(kept.get("flows") or ()),
        int(kept.get("total") or 0),
        int(kept.get("flow_total") or 0),
    )


def failing(process: Process) -> list[tuple[TestScenario, RunResult]]:
    """The scenarios that fail on the draft (the publish gate); the run's coverage is kept."""
    runs = run_all(process)
    keep_coverage(process, [result for _, result in runs])
    return [(row, result) for row, result in runs if not result.passed]
