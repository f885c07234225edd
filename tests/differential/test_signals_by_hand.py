"""The signal files of `files/` run in Flowdesk from documents written by hand, against Spiff
reading the files, until Flowdesk's BPMN importer reads signal events (another branch of issue
16): then `test_files.py` runs the files themselves and this module can go."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.differential import flowdesk_side
from tests.differential.harness import difference, oracle
from tests.differential.scenarios import scenarios_for
from tests.engine.documents import document, flow, node
from tests.engine.unchecked import publish_unchecked

FOLDER = Path(__file__).resolve().parent / "files"


def _throw_catch() -> dict:
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "wait": node("signalCatch", "Go?", signal="go"),
        "prepare": node("userTask", "Prepare"),
        "throw": node("signalThrow", "Go!", signal="go"),
        "join": node("parallelGateway"),
        "end": node("endEvent"),
    }
    pairs = [("start", "split"), ("split", "wait"), ("split", "prepare"), ("prepare", "throw"),
             ("wait", "join"), ("throw", "join"), ("join", "end")]  # fmt: skip
    return document(nodes, {f"f{i}": flow(a, b) for i, (a, b) in enumerate(pairs, 1)})


def _boundary() -> dict:
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "work": node("userTask", "Work"),
        "work_end": node("endEvent"),
        "stopped": node("boundaryEvent", attachedTo="work", event="signal", signal="stop"),
        "stopped_end": node("endEvent"),
        "decide": node("userTask", "Decide"),
        "stop": node("signalThrow", "Stop", signal="stop"),
        "announce": node("endEvent", event="signal", signal="done"),
    }
    pairs = [("start", "split"), ("split", "work"), ("split", "decide"), ("work", "work_end"),
             ("stopped", "stopped_end"), ("decide", "stop"), ("stop", "announce")]  # fmt: skip
    return document(nodes, {f"f{i}": flow(a, b) for i, (a, b) in enumerate(pairs, 1)})


@pytest.mark.parametrize(
    ("name", "build", "caught"),
    [
        ("signal-throw-catch.bpmn", _throw_catch, "wait"),
        ("signal-boundary.bpmn", _boundary, "stopped_end"),
    ],
)
def test_a_signal_file_runs_alike_in_flowdesk_and_spiff(name, build, caught, worker) -> None:
    [scenario], _ = scenarios_for(f"files/{name}")
    xml = (FOLDER / name).read_bytes()
    version = publish_unchecked(flowdesk_side.bind(build(), scenario), key=worker.key)
    flowdesk = flowdesk_side.run(version, scenario, worker.user)
    spiff = oracle(xml, scenario)
    assert spiff is not None
    assert not difference(flowdesk, spiff), difference(flowdesk, spiff)
    assert (flowdesk.state, flowdesk.at) == scenario.expect
    assert flowdesk.completed[caught] == 1, flowdesk
