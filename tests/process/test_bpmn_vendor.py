"""Vendor settings mapped on BPMN import (forms, service implementations, retries, outputs, dates)
and written back on export in their vendor's own form, the round trip staying identical."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from tests.helpers.bpmn import (
    CAMUNDA,
    FLOWABLE,
    ZEEBE,
    codes,
    element,
    same_after_round_trip,
    wrap,
)
from tests.helpers.corpus_files import CORPUS
from tests.helpers.requirements import moddle_node
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.bpmn.vendor import iso_duration, iso_seconds
from webapp.process.tools import ToolSpec
from webapp.process.validation import validate


def config_of(xml: str, node: str) -> dict[str, Any]:
    return import_bpmn(xml).document["nodes"][node]["config"]


def kept_attributes(document: dict[str, Any], node: str) -> dict[str, str]:
    """The other vendors' attributes the node keeps verbatim (not the mapped ones)."""
    items = document["nodes"][node].get("kept", [])
    return next((item["attrs"] for item in items if item["tag"] == "@attributes"), {})


# --- forms --------------------------------------------------------------------------------------


def test_camunda_form_field_validation_enum_default_properties_and_read_only() -> None:
    xml = wrap("""<{p}userTask id="t"><{p}extensionElements><camunda:formData>
        <camunda:formField id="name" label="Name" type="string" defaultValue="Ann">
          <camunda:properties><camunda:property id="description" value="Your name"/>
          </camunda:properties>
          <camunda:validation><camunda:constraint name="required"/>
            <camunda:constraint name="minlength" config="2"/>
            <camunda:constraint name="maxlength" config="40"/></camunda:validation>
        </camunda:formField>
        <camunda:formField id="days" label="Days" type="long">
          <camunda:validation><camunda:constraint name="min" config="1"/>
            <camunda:constraint name="max" config="30.5"/></camunda:validation>
        </camunda:formField>
        <camunda:formField id="kind" label="Kind" type="enum" defaultValue="b">
          <camunda:value id="a" name="Annual"/><camunda:value id="b" name="Sick"/>
        </camunda:formField>
        <camunda:formField id="total" label="Total" type="double">
          <camunda:validation><camunda:constraint name="readonly"/></camunda:validation>
        </camunda:formField>
      </camunda:formData></{p}extensionElements></{p}userTask>""")
    fields = config_of(xml, "t")["form"]["fields"]
    assert fields == [
        {"key": "name", "label": "Name", "type": "text", "required": True, "default": "Ann",
         "help": "Your name", "minLength": 2, "maxLength": 40},
        {"key": "days", "label": "Days", "type": "integer", "required": False, "min": 1,
         "max": 30.5},
        {"key": "kind", "label": "Kind", "type": "select", "required": False, "default": "b",
         "options": [{"value": "a", "label": "Annual"}, {"value": "b", "label": "Sick"}]},
        {"key": "total", "label": "Total", "type": "display", "value": "$vars.total"},
    ]  # fmt: skip
    document = import_bpmn(xml).document
    assert not [p for p in validate(document) if p.code == "form.invalid"]
    exported = same_after_round_trip(document)
    written = element(exported, "t").find(f".//{{{CAMUNDA}}}formData")
    assert written is not None and len(written) == 4, "the vendor's form is written back as it was"
    assert written[3].get("type") == "double", "verbatim, even what import read only in part"


def test_flowable_form_properties() -> None:
    xml = wrap("""<{p}userTask id="t"><{p}extensionElements>
        <flowable:formProperty id="days" name="Days" type="long" required="true"
          variable="nrOfDays"/>
        <flowable:formProperty id="start" name="Start" type="date" datePattern="dd-MM-yyyy"/>
        <flowable:formProperty id="type" name="Type" type="enum" default="sick">
          <flowable:value id="annual" name="Annual"/><flowable:value id="sick" name="Sick"/>
        </flowable:formProperty>
        <flowable:formProperty id="who" name="Employee" expression="${employeeName}"
          writable="false"/>
        <flowable:formProperty id="note" name="Note" expression="${motivation}"/>
        <flowable:formProperty id="secret" readable="false"/>
      </{p}extensionElements></{p}userTask>""")
    result = import_bpmn(xml)
    fields = result.document["nodes"]["t"]["config"]["form"]["fields"]
    assert fields == [
        {"key": "nrOfDays", "label": "Days", "type": "integer", "required": True},
        {"key": "start", "label": "Start", "type": "date", "required": False},
        {"key": "type", "label": "Type", "type": "select", "required": False, "default": "sick",
         "options": [{"value": "annual", "label": "Annual"}, {"value": "sick", "label": "Sick"}]},
        {"key": "who", "label": "Employee", "type": "display", "value": "$vars.employeeName"},
        {"key": "note", "label": "Note", "type": "text", "required": False,
         "default": {"expr": "$vars.motivation"}},
    ]  # fmt: skip
    assert "import.form_lossy" in codes(result), "the date pattern is reported"
    same_after_round_trip(result.document)


@pytest.mark.parametrize(
    ("attribute", "vendor"), [("camunda:formKey", "camunda"), ("flowable:formKey", "flowable")]
)
def test_an_external_form_is_kept_as_a_reference_and_written_back(
    attribute: str, vendor: str
) -> None:
    xml = wrap(f'<{{p}}userTask id="t" {attribute}="embedded:app:forms/check.html"/>')
    result = import_bpmn(xml)
    config = result.document["nodes"]["t"]["config"]
    assert config == {"formRef": {"vendor": vendor, "formKey": "embedded:app:forms/check.html"}}
    assert "import.form_ref" in codes(result)
    assert not [p for p in validate(result.document) if p.code == "config.unknown_key"]
    assert kept_attributes(result.document, "t") == {}, "mapped, so not kept verbatim"
    exported = same_after_round_trip(result.document)
    namespace = {"camunda": CAMUNDA, "flowable": FLOWABLE}[vendor]
    assert element(exported, "t").get(f"{{{namespace}}}formKey") == "embedded:app:forms/check.html"
    document = json.loads(json.dumps(result.document))
    del document["nodes"]["t"]["config"]["formRef"]
    again = import_bpmn(export_bpmn(document)).document
    assert "formRef" not in again["nodes"]["t"]["config"], "a deleted reference stays deleted"


@pytest.mark.parametrize("attribute", ["formKey", "formId", "externalReference"])
def test_a_zeebe_form_link_is_kept_and_written_back(attribute: str) -> None:
    xml = wrap(
        f'<{{p}}userTask id="t"><{{p}}extensionElements><zeebe:formDefinition {attribute}="f-1"/>'
        "</{p}extensionElements></{p}userTask>"
    )
    document = import_bpmn(xml).document
    assert document["nodes"]["t"]["config"] == {"formRef": {"vendor": "zeebe", attribute: "f-1"}}
    exported = same_after_round_trip(document)
    link = element(exported, "t").find(f".//{{{ZEEBE}}}formDefinition")
    assert link is not None and link.get(attribute) == "f-1"


def test_a_camunda_forms_reference_keeps_its_binding() -> None:
    xml = wrap(
        '<{p}userTask id="t" camunda:formRef="invoice-form" camunda:formRefBinding="version" '
        'camunda:formRefVersion="3"/>'
    )
    document = import_bpmn(xml).document
    assert document["nodes"]["t"]["config"]["formRef"] == {
        "vendor": "camunda",
        "formRef": "invoice-form",
        "formRefBinding": "version",
        "formRefVersion": "3",
    }
    exported = same_after_round_trip(document)
    task = element(exported, "t")
    assert task.get(f"{{{CAMUNDA}}}formRef") == "invoice-form"
    assert task.get(f"{{{CAMUNDA}}}formRefVersion") == "3"
    assert kept_attributes(document, "t") == {}


EMBEDDED = {
    "components": [
        {"text": "# Check the claim", "type": "text", "id": "Field_0"},
        {"label": "Name", "type": "textfield", "id": "Field_1", "key": "name",
         "validate": {"required": True, "minLength": 2, "maxLength": 50},
         "description": "As on the card"},
        {"label": "Amount", "type": "number", "id": "Field_2", "key": "amount",
         "validate": {"min": 0, "max": 1000}, "decimalDigits": 0},
        {"label": "Approved", "type": "checkbox", "id": "Field_3", "key": "approved",
         "defaultValue": False},
        {"label": "Reason", "type": "select", "id": "Field_4", "key": "reason",
         "values": [{"label": "Late", "value": "late"}, {"label": "Other", "value": "other"}]},
        {"label": "Channel", "type": "radio", "id": "Field_5", "key": "channel",
         "values": [{"label": "Mail", "value": "mail"}]},
        {"label": "Notes", "type": "textarea", "id": "Field_6", "key": "notes"},
        {"label": "When", "type": "datetime", "id": "Field_7", "key": "when",
         "subtype": "date", "dateLabel": "Date"},
    ],
    "type": "default",
}  # fmt: skip


def zeebe_form(schema: dict[str, Any]) -> str:
    text = json.dumps(schema).replace("&", "&amp;").replace("<", "&lt;")
    embedded = f'<{{p}}extensionElements><zeebe:userTaskForm id="userTaskForm_1">{text}'
    embedded += "</zeebe:userTaskForm></{p}extensionElements>"
    return wrap(
        '<{p}userTask id="t"><{p}extensionElements>'
        '<zeebe:formDefinition formKey="camunda-forms:bpmn:userTaskForm_1"/>'
        "</{p}extensionElements></{p}userTask>",
        embedded,
    )


def test_a_camunda_8_embedded_form_becomes_fields_when_the_conversion_is_exact() -> None:
    result = import_bpmn(zeebe_form(EMBEDDED))
    config = result.document["nodes"]["t"]["config"]
    assert config["formRef"] == {"vendor": "zeebe", "formKey": "camunda-forms:bpmn:userTaskForm_1"}
    assert config["form"]["fields"] == [
        {"key": "name", "label": "Name", "type": "text", "required": True, "minLength": 2,
         "maxLength": 50, "help": "As on the card"},
        {"key": "amount", "label": "Amount", "type": "integer", "required": False, "min": 0,
         "max": 1000},
        {"key": "approved", "label": "Approved", "type": "boolean", "required": False,
         "default": False},
        {"key": "reason", "label": "Reason", "type": "select", "required": False,
         "options": [{"value": "late", "label": "Late"}, {"value": "other", "label": "Other"}]},
        {"key": "channel", "label": "Channel", "type": "radio", "required": False,
         "options": [{"value": "mail", "label": "Mail"}]},
        {"key": "notes", "label": "Notes", "type": "textarea", "required": False},
        {"key": "when", "label": "When", "type": "date", "required": False},
    ]  # fmt: skip
    assert "import.form_ref" not in codes(result)
    assert not [p for p in validate(result.document) if p.code == "form.invalid"]
    document = result.document
    same_after_round_trip(document)
    del document["nodes"]["t"]["config"]["form"]
    again = import_bpmn(export_bpmn(document)).document
    assert "form" not in again["nodes"]["t"]["config"], "a deleted form is not rebuilt"


@pytest.mark.parametrize(
    "change",
    [
        {"conditional": {"hide": "=x"}},
        {"valuesKey": "reasons"},
        {"key": "a.b"},
        {"validate": {"pattern": "[a-z]+"}},
        {"type": "taglist"},
    ],
)
def test_an_embedded_form_that_does_not_convert_exactly_stays_a_reference(
    change: dict[str, Any],
) -> None:
    schema = json.loads(json.dumps(EMBEDDED))
    schema["components"][4].update(change)
    result = import_bpmn(zeebe_form(schema))
    config = result.document["nodes"]["t"]["config"]
    assert "form" not in config and config["formRef"]["vendor"] == "zeebe"
    assert {"import.form_lossy", "import.form_ref"} <= codes(result)


# --- service tasks ------------------------------------------------------------------------------


def test_camunda_external_task_topic_and_retry_cycle() -> None:
    xml = wrap("""<{p}serviceTask id="t" camunda:type="external" camunda:topic="crm-sync">
      <{p}extensionElements><camunda:failedJobRetryTimeCycle>R5/PT5M</camunda:failedJobRetryTimeCycle>
      <camunda:inputOutput>
        <camunda:inputParameter name="customer">${customerId}</camunda:inputParameter>
        <camunda:outputParameter name="crm">${response}</camunda:outputParameter>
      </camunda:inputOutput>
      </{p}extensionElements></{p}serviceTask>""")
    result = import_bpmn(xml)
    config = dict(result.document["nodes"]["t"]["config"])
    assert config.pop("origin")["io"]["tag"] == f"{{{CAMUNDA}}}inputOutput"
    assert config == {
        "tool": "crm-sync",
        "implementation": {"vendor": "camunda", "type": "external"},
        "retries": 5,
        "backoff": 300.0,
        "inputs": {"customer": "$vars.customerId"},
        "saveTo": "crm",
    }
    assert "import.retry" in codes(result), "later waits double: reported"
    problems = validate(result.document, tools={})
    unknown = [p for p in problems if p.code == "tool.unknown"]
    assert len(unknown) == 1 and "'crm-sync'" in unknown[0].message
    assert "docs/engine.md#writing-a-tool" in unknown[0].message
    tools = {"crm-sync": ToolSpec("crm-sync", any_inputs=True)}
    assert not [p for p in validate(result.document, tools=tools) if p.code.startswith("tool.")]
    exported = same_after_round_trip(result.document)
    task = element(exported, "t")
    assert task.get(f"{{{CAMUNDA}}}type") == "external"
    assert task.get(f"{{{CAMUNDA}}}topic") == "crm-sync"
    assert task.findtext(f".//{{{CAMUNDA}}}failedJobRetryTimeCycle") == "R5/PT5M"
    parameters = task.findall(f".//{{{CAMUNDA}}}inputOutput/*")
    assert [(p.get("name"), p.text) for p in parameters] == [
        ("customer", "${customerId}"),
        ("crm", "${response}"),
    ]


def test_a_list_of_retry_waits_gives_their_count_and_the_first() -> None:
    xml = wrap("""<{p}serviceTask id="t" camunda:type="external" camunda:topic="x">
      <{p}extensionElements><camunda:failedJobRetryTimeCycle>PT10M,PT17M,PT20M</camunda:failedJobRetryTimeCycle>
      </{p}extensionElements></{p}serviceTask>""")
    config = config_of(xml, "t")
    assert (config["retries"], config["backoff"]) == (3, 600.0)
    bad = xml.replace("PT10M,PT17M,PT20M", "R3/P1M")
    assert "retries" not in config_of(bad, "t")


def test_zeebe_task_definition_with_retries_and_output_mapping() -> None:
    xml = wrap("""<{p}serviceTask id="t"><{p}extensionElements>
      <zeebe:taskDefinition type="payment" retries="4"/>
      <zeebe:ioMapping><zeebe:input source="=amount" target="amount"/>
        <zeebe:output source="=paymentId" target="paymentId"/></zeebe:ioMapping>
      </{p}extensionElements></{p}serviceTask>""")
    config = config_of(xml, "t")
    assert config.pop("origin")["io"]["tag"] == f"{{{ZEEBE}}}ioMapping", "kept for export"
    assert config == {
        "tool": "payment",
        "implementation": {"vendor": "zeebe"},
        "retries": 4,
        "inputs": {"amount": "$vars.amount"},
    }
    assert "import.output_lossy" not in codes(import_bpmn(xml)), "the pool merges paymentId"
    exported = same_after_round_trip(import_bpmn(xml).document)
    definition = element(exported, "t").find(f".//{{{ZEEBE}}}taskDefinition")
    assert definition is not None
    assert (definition.get("type"), definition.get("retries")) == ("payment", "4")


@pytest.mark.parametrize(
    "output",
    [
        '<zeebe:output source="=result.id + 1" target="next"/>',
        '<zeebe:output source="=result" target="payment"/>',
        '<zeebe:output source="=id" target="paymentId"/>',
    ],
)
def test_an_output_mapping_that_is_not_a_plain_copy_is_reported(output: str) -> None:
    xml = wrap(f"""<{{p}}serviceTask id="t"><{{p}}extensionElements>
      <zeebe:taskDefinition type="payment"/><zeebe:ioMapping>{output}</zeebe:ioMapping>
      </{{p}}extensionElements></{{p}}serviceTask>""")
    result = import_bpmn(xml)
    assert "saveTo" not in result.document["nodes"]["t"]["config"]
    assert "import.output_lossy" in codes(result)


def test_a_copy_under_its_own_name_is_reported_when_the_result_is_saved_whole() -> None:
    xml = wrap("""<{p}serviceTask id="t" camunda:type="external" camunda:topic="x"
      camunda:resultVariable="all"><{p}extensionElements><camunda:inputOutput>
      <camunda:outputParameter name="id">${id}</camunda:outputParameter>
      </camunda:inputOutput></{p}extensionElements></{p}serviceTask>""")
    result = import_bpmn(xml)
    assert result.document["nodes"]["t"]["config"]["saveTo"] == "all"
    assert "import.output_lossy" in codes(result)


@pytest.mark.parametrize("attribute", ["class", "delegateExpression", "expression"])
def test_a_java_implementation_is_kept_shown_and_asks_for_a_tool(attribute: str) -> None:
    value = "org.example.Archive" if attribute == "class" else "${archiver}"
    task = f'<{{p}}serviceTask id="t" camunda:{attribute}="{value}" camunda:resultVariable="r"/>'
    xml = wrap(task)
    result = import_bpmn(xml)
    config = result.document["nodes"]["t"]["config"]
    assert config == {"implementation": {"vendor": "camunda", attribute: value}, "saveTo": "r"}
    assert "import.service_implementation" in codes(result)
    missing = [p for p in validate(result.document, tools={}) if p.code == "tool.missing"]
    assert len(missing) == 1 and value in missing[0].message
    assert "docs/engine.md#writing-a-tool" in missing[0].message
    exported = same_after_round_trip(result.document)
    assert element(exported, "t").get(f"{{{CAMUNDA}}}{attribute}") == value


# --- due dates ----------------------------------------------------------------------------------


def test_due_and_follow_up_dates() -> None:
    xml = wrap(
        '<{p}userTask id="a" camunda:dueDate="PT4H" camunda:followUpDate="P1D"/>'
        '<{p}userTask id="b" camunda:dueDate="${dateTime().plusWeeks(1).toDate()}"/>'
        '<{p}userTask id="c" flowable:dueDate="2027-01-01T10:00:00Z"/>'
    )
    result = import_bpmn(xml)
    nodes = result.document["nodes"]
    assert nodes["a"]["config"] == {
        "dueIn": "PT4H",
        "followUpDate": {"vendor": "camunda", "value": "P1D"},
    }
    expression = "${dateTime().plusWeeks(1).toDate()}"
    assert nodes["b"]["config"] == {"dueDate": {"vendor": "camunda", "value": expression}}
    date = "2027-01-01T10:00:00Z"
    assert nodes["c"]["config"] == {"dueDate": {"vendor": "flowable", "value": date}}
    assert "import.due_date" in codes(result)
    assert not [p for p in validate(result.document) if p.code == "config.unknown_key"]
    exported = same_after_round_trip(result.document)
    assert element(exported, "a").get(f"{{{CAMUNDA}}}followUpDate") == "P1D"
    assert element(exported, "b").get(f"{{{CAMUNDA}}}dueDate") == expression
    assert element(exported, "c").get(f"{{{FLOWABLE}}}dueDate") == "2027-01-01T10:00:00Z"


def test_zeebe_task_schedule_dates_are_kept_and_written_back() -> None:
    xml = wrap(
        '<{p}userTask id="t"><{p}extensionElements>'
        '<zeebe:taskSchedule dueDate="=now() + duration(&quot;P2D&quot;)" '
        'followUpDate="2027-03-01T09:00:00Z"/></{p}extensionElements></{p}userTask>'
    )
    document = import_bpmn(xml).document
    assert document["nodes"]["t"]["config"] == {
        "dueDate": {"vendor": "zeebe", "value": '=now() + duration("P2D")'},
        "followUpDate": {"vendor": "zeebe", "value": "2027-03-01T09:00:00Z"},
    }
    exported = same_after_round_trip(document)
    schedule = element(exported, "t").find(f".//{{{ZEEBE}}}taskSchedule")
    assert schedule is not None and schedule.get("followUpDate") == "2027-03-01T09:00:00Z"


@pytest.mark.parametrize(
    ("text", "seconds"), [("PT5M", 300), ("PT1H30M", 5400), ("P1DT1S", 86401), ("PT1.5S", 1.5)]
)
def test_iso_durations_both_ways(text: str, seconds: float) -> None:
    assert iso_seconds(text) == seconds
    assert iso_seconds(iso_duration(seconds)) == seconds


# --- corpus -------------------------------------------------------------------------------------

needs_corpus = pytest.mark.corpus


def corpus_document(name: str) -> dict[str, Any]:
    assert CORPUS is not None
    return import_bpmn(Path(CORPUS, name).read_bytes()).document


@needs_corpus
@pytest.mark.parametrize(
    ("name", "node", "expected"),
    [
        ("camunda-bpm-examples/invoicePayment.bpmn", "StartEvent_1",
         {"vendor": "camunda", "formKey": "embedded:app:start-form.html"}),
        ("flowable-examples/VacationRequest.bpmn20.xml", "handleRequest",
         {"vendor": "flowable", "formKey": "handle-vacation-request"}),
        ("miwg-test-suite/reference/C.8.0.bpmn", "_79523269-7444-4b01-90e9-e23957a9d020",
         {"vendor": "zeebe", "formKey": "camunda-forms:bpmn:userTaskForm_1m306cp"}),
    ],
)  # fmt: skip
def test_corpus_form_references(name: str, node: str, expected: dict[str, str]) -> None:
    document = corpus_document(name)
    assert document["nodes"][node]["config"]["formRef"] == expected
    same_after_round_trip(document)


@needs_corpus
def test_corpus_camunda_form_data_with_its_reference() -> None:
    document = corpus_document("spiffworkflow/lanes.bpmn")
    config = document["nodes"]["Activity_A1"]["config"]
    assert config["formRef"] == {"vendor": "camunda", "formKey": "Feature Request"}
    assert [field["key"] for field in config["form"]["fields"]] == ["NewBPMNFeautre"]
    same_after_round_trip(document)


@needs_corpus
def test_corpus_camunda_8_embedded_form_becomes_fields() -> None:
    assert CORPUS is not None
    result = import_bpmn(Path(CORPUS, "miwg-test-suite/reference/C.9.2.bpmn").read_bytes())
    config = result.document["nodes"]["UserTask_DecideOnApplication"]["config"]
    assert config["formRef"]["formKey"] == "camunda-forms:bpmn:userTaskForm_2s8lq02"
    keys = [(field["key"], field["type"]) for field in config["form"]["fields"]]
    assert keys == [
        ("applicationNumber", "text"),
        ("applicantName", "text"),
        ("age", "number"),
        ("employment", "text"),
        ("category", "text"),
        ("priceIndication", "text"),
        ("approved", "boolean"),
    ]
    lossy = [w.message for w in result.warnings if w.code == "import.form_lossy"]
    assert any("static text" in message for message in lossy)
    same_after_round_trip(result.document)


@needs_corpus
def test_corpus_service_implementations() -> None:
    loans = corpus_document("camunda-bpm-examples/loan-granting.bpmn")
    assert loans["nodes"]["Task_1lvjtd4"]["config"]["tool"] == "creditScoreChecker"
    invoice = corpus_document("camunda-bpm-platform/invoice.v2.bpmn")
    archive = invoice["nodes"]["ServiceTask_1"]["config"]["implementation"]
    assert archive == {
        "vendor": "camunda",
        "class": "org.camunda.bpm.example.invoice.service.ArchiveInvoiceService",
    }
    due = invoice["nodes"]["approveInvoice"]["config"]["dueDate"]
    assert due == {"vendor": "camunda", "value": "${dateTime().plusWeeks(1).toDate()}"}
    onboarding = corpus_document("miwg-test-suite/reference/C.9.0.bpmn")
    assert onboarding["nodes"]["ServiceTask_GetCreditScore"]["config"]["tool"] == "calculateScore"
    for document in (loans, invoice, onboarding):
        same_after_round_trip(document)


# --- the exported file --------------------------------------------------------------------------

EVERYTHING = (
    '<{p}userTask id="a" camunda:formKey="embedded:x.html" camunda:followUpDate="P1D" '
    'camunda:dueDate="${later}"/>'
    '<{p}userTask id="b"><{p}extensionElements><zeebe:formDefinition formId="f"/>'
    "</{p}extensionElements></{p}userTask>"
    '<{p}serviceTask id="c" camunda:type="external" camunda:topic="crm"><{p}extensionElements>'
    "<camunda:failedJobRetryTimeCycle>R2/PT1M</camunda:failedJobRetryTimeCycle>"
    "</{p}extensionElements></{p}serviceTask>"
    '<{p}serviceTask id="d" flowable:delegateExpression="${archiver}"/>'
    '<{p}serviceTask id="f"><{p}extensionElements><zeebe:taskDefinition type="pay" retries="2"/>'
    "</{p}extensionElements></{p}serviceTask>"
)


def test_the_export_is_schema_valid_and_declares_the_vendor_prefixes() -> None:
    from tests.helpers.bpmn import bpmn_schema

    exported = same_after_round_trip(import_bpmn(wrap(EVERYTHING)).document)
    root = etree.fromstring(exported.encode())
    schema = bpmn_schema()
    assert schema.validate(root), schema.error_log.last_error
    assert {root.nsmap.get(p) for p in ("camunda", "zeebe", "flowable")} == {
        CAMUNDA,
        ZEEBE,
        FLOWABLE,
    }


def test_moddle_reads_the_vendor_settings_without_warnings(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    node = moddle_node()
    path = tmp_path / "vendor.bpmn"
    path.write_text(export_bpmn(import_bpmn(wrap(EVERYTHING)).document), encoding="utf-8")
    script = repo / "tests/process/moddle_read.mjs"
    moddle = repo / "static/js/flowdesk-moddle.json"
    output = subprocess.run(
        [node, str(script), str(moddle), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert output.returncode == 0, output.stdout + output.stderr
    assert json.loads(output.stdout) == {str(path): []}


def test_settings_of_an_event_that_calls_no_tool_are_kept_verbatim() -> None:
    xml = wrap(
        '<{p}intermediateThrowEvent id="t" camunda:asyncBefore="true" camunda:class="x.Y">'
        "<{p}extensionElements><camunda:failedJobRetryTimeCycle>R1/PT1M"
        "</camunda:failedJobRetryTimeCycle></{p}extensionElements></{p}intermediateThrowEvent>"
    )
    document = import_bpmn(xml).document
    assert "implementation" not in document["nodes"]["t"]["config"]
    assert kept_attributes(document, "t") == {
        f"{{{CAMUNDA}}}asyncBefore": "true",
        f"{{{CAMUNDA}}}class": "x.Y",
    }
    exported = same_after_round_trip(document)
    assert element(exported, "t").findtext(f".//{{{CAMUNDA}}}failedJobRetryTimeCycle") == "R1/PT1M"
