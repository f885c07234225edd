"""Differential tests of inclusive and event-based gateways: the hand-made files in `files/` and
the corpus files that use them, in Flowdesk and in SpiffWorkflow.

Until the BPMN reader reads these gateways (the library's part of issue 16), Flowdesk gets each
file through a shim: the gateways are read as exclusive gateways (which keeps their conditions
and default flow), then given back their own kind before the document is bound and published.
Once the reader accepts a file, `test_files.py` and `test_corpus.py` run it and its run here
is skipped: the shim then has nothing left to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from tests.differential import flowdesk_side
from tests.differential.harness import BPMN, oracle, precheck
from tests.differential.scenario import difference
from tests.differential.scenarios import scenarios_for
from tests.process.test_bpmn_corpus import CORPUS
from webapp.process.bpmn import import_bpmn
from webapp.services import processes

FOLDER = Path(__file__).resolve().parent / "files"
SHIMMED = ("inclusiveGateway", "eventBasedGateway")
HAND_MADE = ("inclusive-split-join", "inclusive-nested", "inclusive-loop", "event-gateway")
CORPUS_FILES = (
    "spiffworkflow/inclusive_gateway.bpmn",
    "spiffworkflow/event-gateway.bpmn",
    "spiffworkflow/Parallel-Join-Long-Inclusive.bpmn20.xml",
    "camunda-bpm-platform/InclusiveGatewayTest.testDefaultSequenceFlow.bpmn20.xml",
)


def _read(name: str) -> bytes | None:
    if name.startswith("files/"):
        return (FOLDER / name.removeprefix("files/")).read_bytes()
    return (CORPUS / name).read_bytes() if CORPUS is not None else None


def shimmed_document(xml: bytes) -> dict[str, Any]:
    """Flowdesk's document of the file, its inclusive and event-based gateways read through
    exclusive ones; a file with anything else the reader refuses fails the run."""
    root = etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True))
    kinds = {}
    for kind in SHIMMED:
        for element in root.iter(f"{BPMN}{kind}"):
            kinds[element.get("id")] = kind
            element.tag = f"{BPMN}exclusiveGateway"
    result = import_bpmn(etree.tostring(root))
    assert not result.unsupported, [item.type for item in result.unsupported]
    document = result.document
    for node_id, kind in kinds.items():
        document["nodes"][node_id]["kind"] = kind
    return document


PARAMS = [
    pytest.param(name, index, id=f"{name}#{index}")
    for name in (*(f"files/{stem}.bpmn" for stem in HAND_MADE), *CORPUS_FILES)
    for index in range(len(scenarios_for(name)[0]))
]


@pytest.mark.parametrize(("name", "index"), PARAMS)
def test_gateway_file_runs_alike_in_flowdesk_and_spiff(name: str, index: int, worker) -> None:
    xml = _read(name)
    if xml is None:
        pytest.skip("no corpus")
    scenario = scenarios_for(name)[0][index]
    if precheck(xml, scenario) is None:
        pytest.skip("the reader reads the file: test_files.py or test_corpus.py runs it")
    document = flowdesk_side.bind(shimmed_document(xml), scenario)
    process = processes.create_process(
        worker.key, worker.key, partition_id=None, actor=None, document=document
    )
    version = processes.publish(process, actor=None)
    spiff = oracle(xml, scenario)
    flowdesk = flowdesk_side.run(version, scenario, worker.user)
    assert spiff is not None
    differs = difference(flowdesk, spiff)
    assert not differs, f"the engines disagree ({scenario.note or 'no note'}):\n{differs}"
    if scenario.expect is not None:
        assert (flowdesk.state, flowdesk.at) == scenario.expect, flowdesk
