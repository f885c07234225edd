"""The `"variables": "pool"` document setting: validation severities, refusal of other values,
and the BPMN import (set for other tools' files) and round trip."""

from __future__ import annotations

import pytest

from tests.helpers.corpus_files import CORPUS
from tests.helpers.documents import chain, node
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.document import DocumentError, canonical_json, normalize
from webapp.process.validation import validate

FORM = {"fields": [{"key": "amount", "label": "Amount", "type": "number"}]}
CLERK = {"type": "role", "value": "clerk"}


def _gated(*before: tuple[str, dict], pool: bool = True, start_form: dict | None = None) -> dict:
    """start -> before... -> a gateway whose flow reads `$vars.amount` -> end / other end."""
    doc = chain(*before, ("gw", node("exclusiveGateway")))
    doc["nodes"]["other"] = {**node("endEvent"), "position": {"x": 0, "y": 300}}
    flows = doc["flows"]
    last = list(flows)[-1]
    flows[last]["condition"] = "$vars.amount > 100"
    flows["f_other"] = {"source": "gw", "target": "other", "condition": None, "default": True}
    if start_form is not None:
        doc["nodes"]["start"]["config"]["form"] = start_form
    if pool:
        doc["variables"] = "pool"
    return doc


def _reference(doc: dict) -> list[tuple[str, str]]:
    return [(p.severity, p.message) for p in validate(doc) if p.code == "expression.reference"]


def test_without_the_setting_an_unwritten_variable_is_an_error() -> None:
    (problem,) = _reference(_gated(pool=False))
    assert problem[0] == "error"


def test_in_the_pool_a_start_without_a_form_may_bring_it_a_warning_naming_it() -> None:
    ((severity, message),) = _reference(_gated())
    assert severity == "warning"
    assert "'amount'" in message


@pytest.mark.parametrize(
    "before",
    [
        ("review", node("userTask", "Review", assignee=CLERK)),
        ("call", node("serviceTask", "Call", tool="noop")),
        ("paid", node("messageCatch", message="m", correlationKey="'k'")),
        ("go", node("signalCatch", signal="go")),
    ],
    ids=["form-less task", "tool", "message", "signal"],
)
def test_in_the_pool_an_unknown_output_before_it_makes_it_a_warning(before) -> None:
    ((severity, _),) = _reference(_gated(before, start_form={"fields": []}))
    assert severity == "warning"


def test_in_the_pool_form_fields_provide_variables() -> None:
    assert _reference(_gated(start_form=FORM)) == []
    review = ("review", node("userTask", "Review", assignee=CLERK, form=FORM))
    assert _reference(_gated(review, start_form={"fields": []})) == []


def test_in_the_pool_nothing_unknown_before_it_keeps_the_error() -> None:
    other = {"fields": [{"key": "other", "label": "Other", "type": "number"}]}
    # A start form that does not ask for it, and a tool whose result goes to `saveTo` only.
    saved = ("call", node("serviceTask", "Call", tool="noop", saveTo="result"))
    ((severity, message),) = _reference(_gated(saved, start_form=other))
    assert severity == "error"
    assert "'amount'" in message


@pytest.mark.parametrize("value", ["Pool", "", 1, True, ["pool"]])
def test_another_value_of_the_setting_is_refused_naming_it(value) -> None:
    doc = {**chain(), "variables": value}
    with pytest.raises(DocumentError) as caught:
        normalize(doc)
    assert caught.value.field == "variables"
    (problem,) = validate(doc)
    assert (problem.code, problem.severity) == ("document.invalid", "error")


FOREIGN = b"""<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="t"
    exporter="Camunda Modeler" exporterVersion="5.0.0">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="s"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="gw"/>
    <bpmn:exclusiveGateway id="gw" default="f3"/>
    <bpmn:sequenceFlow id="f2" sourceRef="gw" targetRef="big">
      <bpmn:conditionExpression>${amount &gt; 100}</bpmn:conditionExpression>
    </bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="f3" sourceRef="gw" targetRef="small"/>
    <bpmn:endEvent id="big"/>
    <bpmn:endEvent id="small"/>
  </bpmn:process>
</bpmn:definitions>"""


def test_a_file_of_another_tool_imports_with_the_pool_and_publishes() -> None:
    document = import_bpmn(FOREIGN).document
    assert document["variables"] == "pool"
    assert document["flows"]["f2"]["condition"] == "$vars.amount > 100"
    assert [p for p in validate(document) if p.severity == "error"] == []


def test_the_setting_round_trips_and_its_absence_too() -> None:
    document = import_bpmn(FOREIGN).document
    exported = export_bpmn(document)
    assert "&quot;variables&quot;:&quot;pool&quot;" in exported or '"variables":"pool"' in exported
    again = import_bpmn(exported).document
    assert canonical_json(again) == canonical_json(document)
    plain = {k: v for k, v in document.items() if k != "variables"}
    assert "variables" not in import_bpmn(export_bpmn(plain)).document


def _event_sub_process(start_config: dict) -> dict:
    doc = chain(("work", node("userTask", "Work", assignee=CLERK)))
    doc["nodes"]["start"]["config"] = start_config
    doc["nodes"]["esp"] = {**node("eventSubProcess"), "position": {"x": 0, "y": 300}}
    key = {"event": "message", "message": "cancel", "correlationKey": "$vars.id"}
    for node_id, spec in (("c_start", node("startEvent", **key)), ("c_end", node("endEvent"))):
        doc["nodes"][node_id] = {**spec, "parent": "esp", "position": {"x": 50, "y": 350}}
    doc["flows"]["c1"] = {"source": "c_start", "target": "c_end"}
    doc["variables"] = "pool"
    return doc


def test_the_start_input_of_the_pool_is_there_for_an_event_sub_process_start() -> None:
    id_form = {"form": {"fields": [{"key": "id", "label": "Id", "type": "text"}]}}
    assert _reference(_event_sub_process(id_form)) == []
    ((severity, _),) = _reference(_event_sub_process({}))
    assert severity == "warning"
    other = {"form": {"fields": [{"key": "other", "label": "Other", "type": "text"}]}}
    ((severity, _),) = _reference(_event_sub_process(other))
    assert severity == "error"


#: Corpus files whose publish `expression.reference` blocked before the pool (benchmarks/
#: corpus_publishable.py: 8 files published as imported then, 11 with the pool).
BLOCKED_BY_REFERENCES = [
    "camunda-bpm-examples/camunda-testing-job-announcement-publication.bpmn",
    "camunda-bpm-examples/camunda-testing-job-announcement.bpmn",
    "camunda-bpm-examples/invokeRestService.bpmn",
    "camunda-bpm-examples/loan-granting.bpmn",
    "camunda-bpm-platform/ExclusiveGatewayTest.testBigLoop.bpmn",
    "camunda-bpm-platform/ExclusiveGatewayTest.testDefaultSequenceFlow.bpmn20.xml",
    "camunda-bpm-platform/InclusiveGatewayTest.testDefaultSequenceFlow.bpmn20.xml",
    "camunda-bpm-platform/ScriptTaskTest.testSetScriptResultToProcessVariable.bpmn20.xml",
    "camunda-bpm-platform/reviewInvoice.bpmn",
    "flowable-examples/Table_Reservation_v1.bpmn20.xml",
    "flowable-examples/VacationRequest.bpmn20.xml",
    "flowable-examples/Vacation_request.bpmn20.xml",
    "flowable-examples/test-process.bpmn20.xml",
    "flowable-examples/timer.bpmn20.xml",
    "miwg-test-suite/reference/C.9.1.bpmn",
    "miwg-test-suite/reference/C.9.2.bpmn",
    "spiffworkflow/Parallel-Join-Long-Inclusive.bpmn20.xml",
    "spiffworkflow/Parallel-Then-Exclusive-No-Inclusive.bpmn20.xml",
    "spiffworkflow/Timer-Intermediate.bpmn20.xml",
    "spiffworkflow/exclusive_gateway_no_default.bpmn",
    "spiffworkflow/gateway_loop_input.bpmn",
    "spiffworkflow/inclusive_gateway.bpmn",
    "spiffworkflow/lanes.bpmn",
    "spiffworkflow/timer-date-start.bpmn",
    "spiffworkflow/timer-non-interrupt-boundary.bpmn",
    "spiffworkflow/token_trial_parallel_simple.bpmn",
]


@pytest.mark.corpus
@pytest.mark.parametrize("name", BLOCKED_BY_REFERENCES)
def test_a_corpus_file_reading_process_variables_is_no_longer_blocked_by_them(name: str) -> None:
    assert CORPUS is not None
    document = import_bpmn((CORPUS / name).read_bytes()).document
    assert document["variables"] == "pool"
    blocking = [p for p in validate(document) if p.code == "expression.reference"]
    assert [p for p in blocking if p.severity == "error"] == []
