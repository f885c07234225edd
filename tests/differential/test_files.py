"""Differential tests on the hand-made BPMN files in `files/`: flat edge cases, each structured
element (sub-processes, boundary timers, errors, escalations, terminate ends, multi-instance)
and the later task types and events (script, send, receive and manual tasks, link, message
and none throw events). Files Flowdesk's importer refuses are skipped with its reason until
support lands."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from tests.differential.harness import compare, oracle, precheck
from tests.differential.scenario import Scenario
from tests.differential.scenarios import scenarios_for
from tests.helpers.bpmn import bpmn_schema

FOLDER = Path(__file__).resolve().parent / "files"


def _read(name: str) -> bytes:
    return (FOLDER / name.removeprefix("files/")).read_bytes()


def _called(scenario: Scenario) -> tuple[bytes, ...]:
    return tuple(_read(name) for name in scenario.called)


def _params(path: Path) -> list[object]:
    name = f"files/{path.name}"
    xml = path.read_bytes()
    found = []
    for index, scenario in enumerate(scenarios_for(name)[0]):
        reason = precheck(xml, scenario, _called(scenario))
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        found.append(pytest.param(name, index, id=f"{path.stem}#{index}", marks=marks))
    return found


FILES = [param for path in sorted(FOLDER.glob("*.bpmn")) for param in _params(path)]


def test_every_hand_made_file_is_valid_bpmn_with_a_scenario() -> None:
    schema = bpmn_schema()
    paths = sorted(FOLDER.glob("*.bpmn"))
    assert paths
    for path in paths:
        assert scenarios_for(f"files/{path.name}")[1], f"{path.name} has no scenario"
        assert schema.validate(etree.parse(str(path))), (path.name, schema.error_log.last_error)


SPIFF_CHECKED = [
    pytest.param(name, index, id=f"{name.removeprefix('files/')}#{index}")
    for name in sorted(f"files/{path.name}" for path in FOLDER.glob("*.bpmn"))
    for index, scenario in enumerate(scenarios_for(name)[0])
    if scenario.expect is not None
]


@pytest.mark.parametrize(("name", "index"), SPIFF_CHECKED)
def test_spiff_ends_where_the_scenario_expects(name: str, index: int) -> None:
    """The oracle and the table agree with the spec even while Flowdesk cannot run the file."""
    scenario = scenarios_for(name)[0][index]
    outcome = oracle(_read(name), scenario, _called(scenario))
    if outcome is not None:
        assert (outcome.state, outcome.at) == scenario.expect, outcome


@pytest.mark.parametrize(("name", "index"), FILES)
def test_file_runs_alike_in_flowdesk_and_spiff(name: str, index: int, worker) -> None:
    scenarios, known = scenarios_for(name)
    scenario = scenarios[index]
    compare(_read(name), scenario, worker, known=known, called=_called(scenario))


@pytest.mark.parametrize(
    "stem", ["inclusive-split-join", "inclusive-nested", "inclusive-loop", "event-gateway"]
)
def test_the_gateway_files_run_rather_than_skip(stem: str) -> None:
    name = f"files/{stem}.bpmn"
    scenarios = scenarios_for(name)[0]
    assert scenarios
    for scenario in scenarios:
        assert precheck(_read(name), scenario, _called(scenario)) is None
