"""The shared BPMN corpus's files: its MANIFEST.md entries, the files beyond the supported
subset, reading one and checking its export against the schema."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import etree

from tests.helpers.corpus import corpus_dir
from webapp.process.bpmn import ImportResult, export_bpmn, import_bpmn
from webapp.process.document import canonical_json


def manifest(corpus: Path) -> list[tuple[str, bool]]:
    """(file, in subset) for every row of the MANIFEST.md table of files."""
    rows: list[tuple[str, bool]] = []
    columns: list[str] = []
    for line in (corpus / "MANIFEST.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if "file (in corpus)" in cells and "subset" in cells:
            columns = cells
        elif columns and len(cells) == len(columns) and cells[0].isdigit():
            name = cells[columns.index("file (in corpus)")].strip("`")
            rows.append((name, cells[columns.index("subset")].startswith("yes")))
        elif columns and not line.startswith("|"):
            columns = []
    return rows


#: Files beyond those that Flowdesk runs completely with the later kinds: inclusive and event-based
#: gateways, signal, message, link and none throw events, timer/message/signal starts, send,
#: receive, script and manual tasks.
EVENT_FILES = {
    "miwg-test-suite/reference/C.9.1.bpmn",
    "miwg-test-suite/reference/C.9.2.bpmn",
    "spiffworkflow/timer-cycle-start.bpmn",
    "spiffworkflow/inclusive_gateway.bpmn",
    "spiffworkflow/event-gateway.bpmn",
    "spiffworkflow/event-subprocess.bpmn",
    "spiffworkflow/Parallel-Join-Long-Inclusive.bpmn20.xml",
    "camunda-bpm-platform/InclusiveGatewayTest.testDefaultSequenceFlow.bpmn20.xml",
    "camunda-bpm-platform/EventBasedGatewayTest.testCatchSignalAndMessageAndTimer.bpmn20.xml",
    "camunda-bpm-examples/loan-granting.bpmn",
    "bpmn-js-examples/transaction-boundaries.bpmn",
    "bpmn-js-examples/sample.bpmn",
    "flowable-examples/Vacation_request.bpmn20.xml",
}


#: Files that import completely with ad-hoc sub-processes, complex gateways and the other
#: elements of that part (`tests/process/test_adhoc_corpus.py`).
ADHOC_FILES = {
    "camunda-platform-tutorials/AI Email Support Agent.bpmn",
}


#: BPMN elements that carry no behaviour: never listed as unsupported in any file.
MODELLING_TYPES = {
    "dataObject",
    "dataObjectReference",
    "dataStore",
    "dataStoreReference",
    "dataInput",
    "dataOutput",
    "dataInputAssociation",
    "dataOutputAssociation",
    "inputSet",
    "outputSet",
    "ioSpecification",
    "property",
    "textAnnotation",
    "association",
    "group",
    "category",
    "laneSet",
    "lane",
    "resource",
    "collaboration",
    "participant",
    "messageFlow",
    "resourceRole",
    "performer",
    "humanPerformer",
    "potentialOwner",
}


CORPUS = corpus_dir()


ENTRIES = manifest(CORPUS) if CORPUS else []


#: On the one placeholder test of an empty list: skips it, or fails it when the corpus is required.
NO_CORPUS = pytest.mark.corpus


def load(name: str) -> bytes:
    assert CORPUS is not None
    return (CORPUS / name).read_bytes()


def check_roundtrip(result: ImportResult, schema: etree.XMLSchema) -> None:
    exported = export_bpmn(result.document)
    assert schema.validate(etree.fromstring(exported.encode())), schema.error_log.last_error
    again = import_bpmn(exported)
    assert again.unsupported == []
    assert canonical_json(again.document) == canonical_json(result.document)
    assert export_bpmn(again.document) == exported
