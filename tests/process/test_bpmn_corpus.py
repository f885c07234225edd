"""Import, validate, export and re-import every file of the shared BPMN corpus.

The corpus lives outside the repository (read-only, never copied in); tests/helpers/corpus.py
finds it (`FLOWDESK_BPMN_CORPUS`, beside the checkout or its main worktree, /work/shared).
Its MANIFEST.md table says which files use only the subset of BPMN we support.
"""

from __future__ import annotations

import pytest
from lxml import etree

from tests.helpers.bpmn import bpmn_schema
from tests.helpers.corpus_files import (
    CORPUS,
    ENTRIES,
    EVENT_FILES,
    MODELLING_TYPES,
    NO_CORPUS,
    check_roundtrip,
    load,
)
from webapp.process.bpmn import BpmnImportError, export_bpmn, import_bpmn
from webapp.process.bpmn.namespaces import BPMN
from webapp.process.validation import Problem, validate

#: Unsupported entries that describe other pools of the file, not the imported process itself.


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    return bpmn_schema()


#: Files beyond the subset that use sub-processes, call activities, multi-instance, boundary,
#: error, escalation or terminate events and nothing else Flowdesk cannot run.
STRUCTURED = {
    "miwg-test-suite/reference/A.3.0.bpmn",
    "miwg-test-suite/bpmn-io-18.6.1/A.3.0-export.bpmn",
    "spiffworkflow/timer-cycle.bpmn",
    "spiffworkflow/boundary_timer_on_task.bpmn",
    "spiffworkflow/timer-non-interrupt-boundary.bpmn",
    "spiffworkflow/exclusive_gateway_no_default.bpmn",
    "spiffworkflow/lanes.bpmn",
    "spiffworkflow/parallel_multiinstance_cardinality.bpmn",
    "spiffworkflow/Approvals.bpmn",
    "spiffworkflow/call_activity_end_event.bpmn",
    "spiffworkflow/Message-Non-Interrupt.bpmn20.xml",
    "spiffworkflow/subWorkflowComplex.bpmn",
    "camunda-bpm-platform/BoundaryTimerEventTest.testMultipleTimersOnUserTask.bpmn20.xml",
    "camunda-bpm-platform/BoundaryTimerNonInterruptingEventTest.testTimerOnEmbeddedSubprocess"
    ".bpmn20.xml",
    "camunda-bpm-platform/UserTaskTest.testComplexScenarioWithSubprocessesAndParallelGateways.bpmn",
    "camunda-bpm-examples/invoicePayment.bpmn",
    "camunda-bpm-examples/camunda-testing-job-announcement.bpmn",
    "bpmn-js-examples/nested-subprocesses.bpmn",
    "flowable-examples/timer.bpmn20.xml",
    "flowable-examples/my-process.bpmn20.xml",
}

#: Those later kinds and events: a file of EVENT_FILES uses at least one of them.
NEW_KINDS = {
    "inclusiveGateway",
    "eventBasedGateway",
    "signalCatch",
    "signalThrow",
    "messageThrow",
    "linkThrow",
    "linkCatch",
    "milestone",
    "sendTask",
    "receiveTask",
    "scriptTask",
    "manualTask",
}
#: Files that were refused for modelling-only elements (data objects and stores, data
#: associations, ioSpecification, property) before the importer kept them and now import
#: completely, with the elements they keep as documentation only.
POOLS = {"collaboration", "participant", "messageFlow", "process"}
MODELLING_ONLY = {
    "miwg-test-suite/reference/A.2.1.bpmn": {"ioSpecification"},
    "miwg-test-suite/reference/C.4.0.bpmn": {
        "dataStore",
        "dataStoreReference",
        "dataInputAssociation",
        "dataOutputAssociation",
        "ioSpecification",
        "laneSet",
    },
    "miwg-test-suite/reference/C.5.0.bpmn": {
        "dataObject",
        "dataObjectReference",
        "dataStoreReference",
        "dataInputAssociation",
        "dataOutputAssociation",
        "ioSpecification",
        "laneSet",
    },
    # potentialOwner with a resourceRef: the resource's name becomes the task's role.
    "miwg-test-suite/reference/C.1.1.bpmn": {"potentialOwner", "resource", "ioSpecification"},
    "miwg-test-suite/reference/C.3.0.bpmn": {"potentialOwner", "resource"},
    "camunda-bpm-platform/TaskCandidateTest.testMixedCandidateUserAndGroup.bpmn20.xml": {
        "potentialOwner"
    },
    # Collaborations: the other pools, their processes and the message flows are kept.
    "miwg-test-suite/reference/A.4.0.bpmn": POOLS,
    "miwg-test-suite/reference/A.4.1.bpmn": POOLS,
    "miwg-test-suite/reference/B.1.0.bpmn": POOLS,
    "miwg-test-suite/reference/C.1.0.bpmn": POOLS,
    "miwg-test-suite/reference/C.2.0.bpmn": POOLS,
    "spiffworkflow/collaboration.bpmn": POOLS,
    "bpmn-js-examples/pizza-collaboration.bpmn": POOLS,
    "spiffworkflow/data_object.bpmn": {
        "dataObject",
        "dataObjectReference",
        "dataInputAssociation",
        "dataOutputAssociation",
        "property",
    },
}
#: Files once refused for their business rule tasks, with the decision each task names (None:
#: the file names none, which publishing then asks for).
DECISION_FILES = {
    "camunda-bpm-platform/invoice.v2.bpmn": {"assignApprover": "invoice-assign-approver"},
    "miwg-test-suite/reference/C.9.0.bpmn": {
        "BusinessRuleTask_CheckApplicationAutomatically": "risk_check"
    },
    "miwg-test-suite/reference/C.8.0.bpmn": {
        "_1a818a94-ba6f-413b-a7e8-6f8fd2a11e32": "_9ba1b7b0-c84d-484f-9203-3792edc6dcbd"
    },
    "miwg-test-suite/reference/C.8.1.bpmn": {
        "_1a818a94-ba6f-413b-a7e8-6f8fd2a11e32": "_9ba1b7b0-c84d-484f-9203-3792edc6dcbd"
    },
    "miwg-test-suite/reference/C.7.0.bpmn": {"_eae674ce-4d6e-48ac-819c-c79e0868e40d": None},
}
#: Files with compensation or transactions (and nothing else Flowdesk cannot run).
COMPENSATION_FILES = {
    "miwg-test-suite/reference/C.6.0.bpmn",
    "spiffworkflow/transaction.bpmn",
}
#: Files that were refused for conditional events and standard loops until Flowdesk ran them.
CONDITION_FILES = {
    "camunda-bpm-examples/order-handling.bpmn",
    "miwg-test-suite/reference/B.2.0.bpmn",
    "miwg-test-suite/bpmn-io-18.6.1/B.2.0-export.bpmn",
}

KITCHEN_SINK = "bpmn-js-examples/kitchen-sink.bpmn"

SUBSET = [name for name, subset in ENTRIES if subset]


def params(names: list[str]) -> list[object]:
    return list(names) if names else [pytest.param("", marks=NO_CORPUS)]


@pytest.mark.corpus
def test_manifest_lists_every_corpus_file() -> None:
    assert CORPUS is not None
    on_disk = {
        str(path.relative_to(CORPUS))
        for path in CORPUS.rglob("*")
        if path.is_file() and path.name != "MANIFEST.md" and not path.name.startswith(".")
    }
    listed = {name for name, _ in ENTRIES}
    assert listed <= on_disk
    assert len(listed) == len(ENTRIES) >= 99
    assert len(SUBSET) >= 40


@pytest.mark.parametrize("name", params(SUBSET))
def test_subset_file_imports_completely_and_roundtrips(name: str, schema: etree.XMLSchema) -> None:
    result = import_bpmn(load(name))
    own = result.unsupported
    assert own == [], own
    assert result.document["nodes"]
    problems = validate(result.document)
    assert all(isinstance(problem, Problem) for problem in problems)
    check_roundtrip(result, schema)


@pytest.mark.parametrize("name", params(sorted(STRUCTURED) if CORPUS else []))
def test_structured_file_imports_completely_and_roundtrips(
    name: str, schema: etree.XMLSchema
) -> None:
    result = import_bpmn(load(name))
    own = result.unsupported
    assert own == [], own
    nodes = result.document["nodes"]
    structured = {"subProcess", "eventSubProcess", "callActivity", "boundaryEvent"}
    assert any(
        n["kind"] in structured or n["config"].get("event") or "multiInstance" in n["config"]
        for n in nodes.values()
    )
    for node in nodes.values():
        assert node.get("parent") is None or nodes[node["parent"]]["kind"] in (
            "subProcess",
            "eventSubProcess",
        )
    validate(result.document)
    check_roundtrip(result, schema)


@pytest.mark.parametrize("name", params(sorted(EVENT_FILES) if CORPUS else []))
def test_gateway_and_event_file_imports_completely_and_roundtrips(
    name: str, schema: etree.XMLSchema
) -> None:
    result = import_bpmn(load(name))
    own = result.unsupported
    assert own == [], own
    nodes = result.document["nodes"].values()
    new_events = {"signal", "message", "timer"}
    assert any(
        n["kind"] in NEW_KINDS
        or (n["kind"] == "startEvent" and "parent" not in n and n["config"].get("event"))
        or (n["kind"] in ("boundaryEvent", "endEvent") and n["config"].get("event") in new_events)
        for n in nodes
    )
    validate(result.document)
    check_roundtrip(result, schema)


@pytest.mark.parametrize("name", params(sorted(DECISION_FILES) if CORPUS else []))
def test_business_rule_task_file_imports_completely_naming_its_decisions(
    name: str, schema: etree.XMLSchema
) -> None:
    result = import_bpmn(load(name))
    assert result.unsupported == []
    tasks = {
        node_id: node["config"].get("decision")
        for node_id, node in result.document["nodes"].items()
        if node["kind"] == "businessRuleTask"
    }
    assert tasks == DECISION_FILES[name]
    missing = {p.element_id for p in validate(result.document) if p.code == "config.missing"}
    assert {node_id for node_id, decision in tasks.items() if decision is None} <= missing
    check_roundtrip(result, schema)


def kept_tags(document: dict[str, object]) -> set[str]:
    """The BPMN elements an imported document keeps as documentation only (outermost ones)."""
    kept = document.get("kept") or {}
    assert isinstance(kept, dict)
    items = [*kept.get("definitions", []), *kept.get("process", [])]
    nodes = document["nodes"]
    assert isinstance(nodes, dict)
    items += [item for node in nodes.values() for item in node.get("kept", [])]
    found = set()
    stack = list(items)
    while stack:
        item = stack.pop()
        found.add(item["tag"])
        stack.extend(item.get("children", []))
    return found


@pytest.mark.parametrize("name", params(sorted(MODELLING_ONLY) if CORPUS else []))
def test_file_with_modelling_only_elements_imports_and_keeps_them(
    name: str, schema: etree.XMLSchema
) -> None:
    result = import_bpmn(load(name))
    own = result.unsupported
    assert own == [], own
    assert MODELLING_ONLY[name] <= kept_tags(result.document)
    validate(result.document)
    check_roundtrip(result, schema)
    exported = etree.fromstring(export_bpmn(result.document).encode())
    for tag in MODELLING_ONLY[name]:
        assert next(exported.iter(f"{{{BPMN}}}{tag}"), None) is not None, tag


@pytest.mark.parametrize("name", params([name for name, _ in ENTRIES]))
def test_no_file_lists_a_modelling_only_element_as_unsupported(name: str) -> None:
    try:
        result = import_bpmn(load(name))
    except BpmnImportError:
        return
    assert not [u for u in result.unsupported if u.type in MODELLING_TYPES]
    assert not [w for w in result.warnings if w.code == "import.artifact"]


@pytest.mark.corpus
def test_no_corpus_file_is_refused_for_an_element() -> None:
    """Every element of the corpus is one Flowdesk runs, or keeps as modelling only."""
    assert CORPUS is not None
    refused = {
        name: sorted({u.type for u in import_bpmn(load(name)).unsupported}) for name, _ in ENTRIES
    }
    assert {name: types for name, types in refused.items() if types} == {}


@pytest.mark.parametrize("name", params(sorted(COMPENSATION_FILES) if CORPUS else []))
def test_compensation_file_imports_completely_and_roundtrips(
    name: str, schema: etree.XMLSchema
) -> None:
    result = import_bpmn(load(name))
    assert result.unsupported == []
    nodes = result.document["nodes"].values()
    assert any(
        n["kind"] in ("transaction", "compensationThrow")
        or n["config"].get("event") in ("compensate", "cancel")
        for n in nodes
    )
    validate(result.document)
    check_roundtrip(result, schema)


@pytest.mark.parametrize("name", params(sorted(CONDITION_FILES) if CORPUS else []))
def test_condition_files_import_their_conditional_events_and_loops(
    name: str, schema: etree.XMLSchema
) -> None:
    result = import_bpmn(load(name))
    assert result.unsupported == []
    nodes = result.document["nodes"].values()
    assert any(
        n["kind"] == "conditionalCatch"
        or n["config"].get("event") == "conditional"
        or n["config"].get("loop")
        for n in nodes
    )
    validate(result.document)
    check_roundtrip(result, schema)


@pytest.mark.corpus
def test_kitchen_sink_imports_every_element_as_its_kind(schema: etree.XMLSchema) -> None:
    """bpmn-js's kitchen sink draws one of nearly every element: each is read as its kind."""
    if CORPUS is None:
        pytest.skip("no corpus")
    result = import_bpmn(load(KITCHEN_SINK))
    assert result.unsupported == []
    nodes = result.document["nodes"].values()
    kinds = {n["kind"] for n in nodes}
    assert {"conditionalCatch", "businessRuleTask", "complexGateway"} <= kinds
    events = {n["config"].get("event") for n in nodes if n["kind"] == "boundaryEvent"}
    assert {"conditional", "compensate", "cancel"} <= events
    check_roundtrip(result, schema)
