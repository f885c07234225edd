"""Differential tests against SpiffWorkflow on every file of the shared BPMN corpus: each file
Flowdesk imports and publishes runs in both engines with the same inputs; the completed nodes
(with repeats) and the end state must agree. Files the importer refuses are skipped with its
reason, so the list widens by itself as Flowdesk learns more of BPMN."""

from __future__ import annotations

import pytest

from tests.differential.harness import compare, oracle, precheck
from tests.differential.scenario import Scenario
from tests.differential.scenarios import scenarios_for
from tests.helpers.corpus_files import CORPUS, ENTRIES, NO_CORPUS


def _called(scenario: Scenario) -> tuple[bytes, ...]:
    assert CORPUS is not None
    return tuple((CORPUS / name).read_bytes() for name in scenario.called)


def _params(name: str) -> list[object]:
    """One test per scenario of the file; skipped at once (no database set up) when the file
    cannot run at all."""
    assert CORPUS is not None
    xml = (CORPUS / name).read_bytes()
    found = []
    for index, scenario in enumerate(scenarios_for(name)[0]):
        reason = precheck(xml, scenario, _called(scenario))
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        found.append(pytest.param(name, index, id=f"{name}#{index}", marks=marks))
    return found


FILES = [param for name, _ in ENTRIES for param in _params(name)] or [
    pytest.param("", 0, marks=NO_CORPUS)
]


@pytest.mark.parametrize(("name", "index"), FILES)
def test_corpus_file_runs_alike_in_flowdesk_and_spiff(name: str, index: int, worker) -> None:
    assert CORPUS is not None
    scenarios, known = scenarios_for(name)
    scenario = scenarios[index]
    xml = (CORPUS / name).read_bytes()
    compare(xml, scenario, worker, known=known, called=_called(scenario))


SPIFF_CHECKED = [
    pytest.param(name, index, id=f"{name}#{index}")
    for name, _ in ENTRIES
    for index, scenario in enumerate(scenarios_for(name)[0])
    if scenario.expect is not None
]


@pytest.mark.parametrize(("name", "index"), SPIFF_CHECKED or [pytest.param("", 0, marks=NO_CORPUS)])
def test_spiff_ends_where_the_scenario_expects(name: str, index: int) -> None:
    """The oracle and the table agree with the spec even while Flowdesk cannot run the file."""
    assert CORPUS is not None
    scenario = scenarios_for(name)[0][index]
    outcome = oracle((CORPUS / name).read_bytes(), scenario, _called(scenario))
    if outcome is not None:
        assert (outcome.state, outcome.at) == scenario.expect, outcome


#: Corpus files with inclusive and event-based gateways: the importer reads them, so they run.
GATEWAY_FILES = (
    "spiffworkflow/inclusive_gateway.bpmn",
    "spiffworkflow/event-gateway.bpmn",
    "spiffworkflow/Parallel-Join-Long-Inclusive.bpmn20.xml",
    "camunda-bpm-platform/InclusiveGatewayTest.testDefaultSequenceFlow.bpmn20.xml",
)


@pytest.mark.parametrize("name", GATEWAY_FILES)
def test_the_gateway_files_run_rather_than_skip(name: str, corpus_present) -> None:
    xml = (corpus_present / name).read_bytes()
    scenarios = scenarios_for(name)[0]
    assert scenarios
    for scenario in scenarios:
        assert precheck(xml, scenario, _called(scenario)) is None
