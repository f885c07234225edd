"""Scenarios over real files of the shared BPMN corpus, imported as Flowdesk reads them: passing
ones walk the paths a modeller expects, a failing one names its step."""

import pytest

from tests.helpers.corpus_files import load
from webapp.engine.scenario_runner import run
from webapp.process.bpmn import import_bpmn
from webapp.process.scenarios import parse

pytestmark = pytest.mark.corpus

GATEWAY = "camunda-bpm-platform/ExclusiveGatewayTest.testDefaultSequenceFlow.bpmn20.xml"
TIMER = "spiffworkflow/timer.bpmn"
SUB_PROCESS = (
    "camunda-bpm-platform/BoundaryTimerNonInterruptingEventTest."
    "testTimerOnEmbeddedSubprocess.bpmn20.xml"
)


@pytest.fixture(autouse=True)
def _tools(app):
    """The app loads the registered tools the runner calls."""


def document(name: str) -> dict:
    return import_bpmn(load(name)).document


@pytest.mark.parametrize(("given", "task"), [(1, "theTask1"), (3, "theTask3"), (7, "theTask2")])
def test_the_exclusive_gateway_file_takes_the_branch_its_input_picks(given, task):
    scenario = {
        "name": f"input {given}",
        "input": {"input": given},
        "actions": [{"do": "complete", "node": task, "data": {}}],
        "expect": {"status": "completed", "reached": [task, "theEnd"]},
    }
    result = run(document(GATEWAY), parse(scenario))
    assert result.passed, result.failure
    others = {"theTask1", "theTask2", "theTask3"} - {task}
    assert not others & result.nodes_walked


def test_the_timer_file_finishes_once_its_timer_is_fired():
    scenario = {
        "name": "fired",
        "actions": [{"do": "timer", "node": "Event_0bxivgz"}],
        "expect": {"status": "completed", "reached": ["Event_03w65sk"]},
    }
    result = run(document(TIMER), parse(scenario))
    assert result.passed, result.failure


def test_the_sub_process_file_runs_its_non_interrupting_timer_beside_the_task():
    scenario = {
        "name": "reminded, then done",
        "actions": [
            {"do": "timer", "node": "BoundaryEvent_1"},
            {"do": "complete", "node": "UserTask_2", "data": {}},
            {"do": "complete", "node": "UserTask_1", "data": {}},
        ],
        "expect": {"status": "completed", "reached": ["EndEvent_2", "EndEvent_5"]},
    }
    result = run(document(SUB_PROCESS), parse(scenario))
    assert result.passed, result.failure


def test_a_scenario_answering_the_branch_not_taken_fails_naming_its_step_and_the_wait():
    scenario = {
        "name": "wrong branch",
        "input": {"input": 1},
        "actions": [{"do": "complete", "node": "theTask3", "data": {}}],
        "expect": {"status": "completed"},
    }
    result = run(document(GATEWAY), parse(scenario))
    assert not result.passed
    assert result.failure is not None and result.failure.step == "actions[0]"
    assert "theTask3" in result.failure.reason
    assert {wait["node"] for wait in result.waits} == {"theTask1"}
