"""BPMN import and export of the later gateways, events and task types: inclusive and event-based
gateways, signal, message, link and none throw events, process-level starts, send, receive,
script and manual tasks; vendor settings; what stays refused."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from tests.helpers.bpmn import bpmn_schema, codes, definitions, events_document
from tests.helpers.requirements import moddle_node
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.bpmn.namespaces import BPMN, CAMUNDA, ZEEBE, q
from webapp.process.document import canonical_json, normalize
from webapp.process.validation import validate

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    return bpmn_schema()


def exported(doc: dict[str, Any]) -> etree._Element:
    return etree.fromstring(export_bpmn(doc).encode())


def by_id(root: etree._Element, element_id: str) -> etree._Element:
    found = root.find(f".//*[@id='{element_id}']")
    assert found is not None, element_id
    return found


def local(element: etree._Element) -> str:
    return etree.QName(element).localname


# --- export and round trip --------------------------------------------------------------------


def test_events_document_is_valid() -> None:
    assert validate(events_document()) == []


def test_events_document_roundtrips_identically(schema: etree.XMLSchema) -> None:
    doc = events_document()
    xml = export_bpmn(doc)
    assert schema.validate(etree.fromstring(xml.encode())), schema.error_log.last_error
    back = import_bpmn(xml)
    assert back.unsupported == []
    assert canonical_json(back.document) == canonical_json(normalize(doc))
    assert export_bpmn(back.document) == xml


def test_export_writes_standard_bpmn_for_every_new_element() -> None:
    root = exported(events_document())
    tags = {node_id: local(by_id(root, node_id)) for node_id in events_document()["nodes"]}
    assert tags["split"] == "inclusiveGateway" and tags["race"] == "eventBasedGateway"
    assert tags["calc"] == "scriptTask" and tags["sign"] == "manualTask"
    assert tags["send"] == "sendTask" and tags["doc"] == "receiveTask"
    for node_id in ("tell", "noted", "jump", "shout"):
        assert tags[node_id] == "intermediateThrowEvent", node_id
    for node_id in ("abort", "land"):
        assert tags[node_id] == "intermediateCatchEvent", node_id
    assert by_id(root, "split").get("default") == "f2"
    script = by_id(root, "calc")
    assert script.get("scriptFormat") == "flowdesk"
    assert (
        script.findtext(q(BPMN, "script")) == events_document()["nodes"]["calc"]["config"]["script"]
    )
    signals = {s.get("id"): s.get("name") for s in root.iter(q(BPMN, "signal"))}
    assert set(signals.values()) == {"abort", "done", "finished", "stop", "alarm"}
    messages = {m.get("id"): m.get("name") for m in root.iter(q(BPMN, "message"))}
    assert messages[by_id(root, "send").get("messageRef")] == "request"
    assert messages[by_id(root, "doc").get("messageRef")] == "doc"

    def definition(node_id: str) -> etree._Element:
        found = [c for c in by_id(root, node_id) if local(c).endswith("EventDefinition")]
        assert len(found) == 1, node_id
        return found[0]

    assert signals[definition("abort").get("signalRef")] == "abort"
    assert signals[definition("stop").get("signalRef")] == "stop"
    assert signals[definition("alarm").get("signalRef")] == "alarm"
    assert messages[definition("tell").get("messageRef")] == "told"
    assert messages[definition("late").get("messageRef")] == "late"
    assert messages[definition("ordered").get("messageRef")] == "order"
    assert definition("jump").get("name") == definition("land").get("name") == "next"
    assert local(definition("end")) == "signalEventDefinition"
    assert not [c for c in by_id(root, "noted") if local(c).endswith("EventDefinition")]
    assert definition("daily").findtext(q(BPMN, "timeCycle")) == "0 8 * * MON-FRI"
    assert definition("once").findtext(q(BPMN, "timeDate")) == "2027-01-01T08:00:00Z"
    assert by_id(root, "stop").get("cancelActivity") == "false"


def test_moddle_reads_the_new_elements_without_warnings(tmp_path: Path) -> None:
    node = moddle_node()
    path = tmp_path / "events.bpmn"
    path.write_text(export_bpmn(events_document()), encoding="utf-8")
    script = REPO / "tests/process/moddle_read.mjs"
    extension = REPO / "static/js/flowdesk-moddle.json"
    output = subprocess.run(
        [node, str(script), str(extension), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert output.returncode == 0, output.stdout + output.stderr


def test_awkward_values_survive_the_roundtrip() -> None:
    doc = events_document()
    nodes = doc["nodes"]
    nodes["calc"]["config"]["script"] = "  a = 1 < 2 & true\r\nb = 'x]]>'\n\n"
    nodes["calc"]["config"]["language"] = "Groovy"
    nodes["sign"]["config"]["multiInstance"] = {"cardinality": "2"}
    nodes["abort"]["config"]["signal"] = " padded "
    nodes["shout"]["config"]["signal"] = ""
    nodes["jump"]["config"]["link"] = "\x01odd"
    nodes["land"]["config"] = {}
    nodes["doc"]["config"]["message"] = ["not", "text"]
    nodes["send"]["config"]["message"] = "a message & more"
    nodes["daily"]["config"]["cycle"] = "'R/PT1H'"
    nodes["once"]["config"]["date"] = " 2027-01-01 "
    nodes["hourly"]["config"] = {"event": "timer", "cycle": "0 0 9 * * ?"}
    nodes["ordered"]["config"]["interrupting"] = False
    nodes["alarm"]["config"]["signal"] = 42
    nodes["end"]["config"]["payload"] = {"x": 1}
    nodes["race"]["config"] = {"eventGatewayType": "Parallel"}
    doc["flows"]["f7"]["condition"] = "$input.x"
    back = import_bpmn(export_bpmn(doc))
    assert back.unsupported == []
    assert canonical_json(back.document) == canonical_json(normalize(doc))


def test_a_script_without_language_stays_without_one() -> None:
    doc = events_document()
    del doc["nodes"]["calc"]["config"]["language"]
    back = import_bpmn(export_bpmn(doc))
    assert back.document["nodes"]["calc"]["config"] == normalize(doc)["nodes"]["calc"]["config"]


_KEYS = ["signal", "payload", "link", "script", "language", "message", "correlationKey", "tool",
         "inputs", "saveTo", "event", "cycle", "date", "timezone", "interrupting",
         "multiInstance"]  # fmt: skip
_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=12)
    | st.sampled_from(["signal", "message", "timer", "flowdesk", "groovy", "R/P1D",
                       "0 8 * * *", " x ", "a = 1"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=2),
    max_leaves=4,
)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(
    changes=st.lists(
        st.tuples(st.sampled_from(sorted(events_document()["nodes"])), st.sampled_from(_KEYS),
                  _VALUE),
        min_size=1, max_size=4,
    )
)  # fmt: skip
def test_arbitrary_event_config_roundtrips(changes: list[tuple[str, str, Any]]) -> None:
    doc = events_document()
    for node_id, key, value in changes:
        doc["nodes"][node_id]["config"][key] = value
    back = import_bpmn(export_bpmn(doc))
    assert back.unsupported == []
    assert canonical_json(back.document) == canonical_json(normalize(doc))


# --- import from other tools ------------------------------------------------------------------

GATEWAYS = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}inclusiveGateway id="or" default="other"/>
    <{p}eventBasedGateway id="race" eventGatewayType="Exclusive"/>
    <{p}intermediateCatchEvent id="sig"><{p}signalEventDefinition signalRef="Sig_1"/>
    </{p}intermediateCatchEvent>
    <{p}intermediateCatchEvent id="unnamed"><{p}signalEventDefinition signalRef="Sig_2"/>
    </{p}intermediateCatchEvent>
    <{p}intermediateCatchEvent id="lost"><{p}signalEventDefinition signalRef="nowhere"/>
    </{p}intermediateCatchEvent>
    <{p}receiveTask id="recv" messageRef="Msg_1"/>
    <{p}intermediateThrowEvent id="shout"><{p}signalEventDefinition signalRef="Sig_1"/>
    </{p}intermediateThrowEvent>
    <{p}intermediateThrowEvent id="note" name="Half way"/>
    <{p}intermediateThrowEvent id="jump"><{p}linkEventDefinition name="L"/>
    </{p}intermediateThrowEvent>
    <{p}intermediateCatchEvent id="land" name="Old style"><{p}linkEventDefinition/>
    </{p}intermediateCatchEvent>
    <{p}manualTask id="by_hand"/>
    <{p}endEvent id="e_sig"><{p}signalEventDefinition signalRef="Sig_2"/></{p}endEvent>
    <{p}sequenceFlow id="a" sourceRef="s" targetRef="or"/>
    <{p}sequenceFlow id="b" sourceRef="or" targetRef="race">
      <{p}conditionExpression>${{x &gt; 1}}</{p}conditionExpression>
    </{p}sequenceFlow>
    <{p}sequenceFlow id="other" sourceRef="or" targetRef="note"/>
  </{p}process>
  <{p}signal id="Sig_1" name="alarm"/>
  <{p}signal id="Sig_2"/>
  <{p}message id="Msg_1" name="document"/>
"""


def test_gateways_signals_links_and_milestones_import() -> None:
    result = import_bpmn(definitions(GATEWAYS))
    nodes = result.document["nodes"]
    kinds = {node_id: node["kind"] for node_id, node in nodes.items()}
    assert kinds == {
        "s": "startEvent",
        "or": "inclusiveGateway",
        "race": "eventBasedGateway",
        "sig": "signalCatch",
        "unnamed": "signalCatch",
        "lost": "signalCatch",
        "recv": "receiveTask",
        "shout": "signalThrow",
        "note": "milestone",
        "jump": "linkThrow",
        "land": "linkCatch",
        "by_hand": "manualTask",
        "e_sig": "endEvent",
    }
    config = {node_id: node["config"] for node_id, node in nodes.items()}
    assert config["sig"] == {"signal": "alarm"}
    assert config["unnamed"] == {"signal": "Sig_2"}  # a signal without a name: its id
    assert config["lost"] == {}
    assert config["recv"] == {"message": "document", "correlationKey": "$instance.businessKey"}
    assert config["shout"] == {"signal": "alarm"}
    assert config["jump"] == {"link": "L"} and config["land"] == {"link": "Old style"}
    assert config["e_sig"] == {"event": "signal", "signal": "Sig_2"}
    flows = result.document["flows"]
    assert flows["b"]["condition"] == "$vars.x > 1" and flows["other"]["default"] is True
    assert {"import.signal_missing", "import.correlation_business_key"} <= codes(result)
    assert result.unsupported == []


STARTS = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="by_hand"/>
    <{p}startEvent id="cron"><{p}timerEventDefinition>
      <{p}timeCycle>0 0 9 * * ?</{p}timeCycle></{p}timerEventDefinition></{p}startEvent>
    <{p}startEvent id="iso"><{p}timerEventDefinition>
      <{p}timeCycle>R3/2027-01-01T08:00:00Z/P1D</{p}timeCycle></{p}timerEventDefinition>
    </{p}startEvent>
    <{p}startEvent id="once"><{p}timerEventDefinition>
      <{p}timeDate>2027-01-01T08:00:00Z</{p}timeDate></{p}timerEventDefinition></{p}startEvent>
    <{p}startEvent id="odd"><{p}timerEventDefinition>
      <{p}timeCycle>${{cycle}}</{p}timeCycle></{p}timerEventDefinition></{p}startEvent>
    <{p}startEvent id="msg"><{p}messageEventDefinition messageRef="M"/></{p}startEvent>
    <{p}startEvent id="sig"><{p}signalEventDefinition signalRef="S"/></{p}startEvent>
    <{p}startEvent id="cond"><{p}conditionalEventDefinition/></{p}startEvent>
    <{p}subProcess id="sub">
      <{p}startEvent id="inner"><{p}signalEventDefinition signalRef="S"/></{p}startEvent>
    </{p}subProcess>
    <{p}subProcess id="esp" triggeredByEvent="true">
      <{p}startEvent id="esp_start" isInterrupting="false">
        <{p}signalEventDefinition signalRef="S"/></{p}startEvent>
    </{p}subProcess>
    <{p}userTask id="t"/>
    <{p}boundaryEvent id="b" attachedToRef="t"><{p}signalEventDefinition signalRef="S"/>
    </{p}boundaryEvent>
  </{p}process>
  <{p}message id="M" name="order"/>
  <{p}signal id="S" name="alarm"/>
"""


def test_process_level_starts_and_signal_events_import() -> None:
    result = import_bpmn(definitions(STARTS))
    config = {node_id: node["config"] for node_id, node in result.document["nodes"].items()}
    assert config["by_hand"] == {}
    assert config["cron"] == {"event": "timer", "cycle": "0 9 * * *"}
    assert config["iso"] == {"event": "timer", "cycle": "R3/2027-01-01T08:00:00Z/P1D"}
    assert config["once"] == {"event": "timer", "date": "2027-01-01T08:00:00Z"}
    assert config["odd"] == {"event": "timer", "cycle": "${cycle}"}
    assert config["msg"] == {"event": "message", "message": "order"}
    assert config["sig"] == {"event": "signal", "signal": "alarm"}
    assert config["esp_start"] == {"event": "signal", "signal": "alarm", "interrupting": False}
    assert config["b"] == {"attachedTo": "t", "event": "signal", "signal": "alarm"}
    assert "import.timer_untranslated" in codes(result)
    listed = {(u.id, u.type) for u in result.unsupported}
    assert listed == {("inner", "startEvent[signal]")}
    assert config["cond"] == {"event": "conditional"}
    assert "import.condition_missing" in codes(result)
    assert all(u.line for u in result.unsupported)


VENDOR_TASKS = """
  <{p}process id="p" isExecutable="true">
    <{p}sendTask id="c7" camunda:type="external" camunda:topic="mailer" messageRef="M"/>
    <{p}sendTask id="c8"><{p}extensionElements>
      <zeebe:taskDefinition type="sms" retries="5"/>
      <zeebe:ioMapping><zeebe:input source="=phone" target="to"/></zeebe:ioMapping>
    </{p}extensionElements></{p}sendTask>
    <{p}intermediateThrowEvent id="throw"><{p}extensionElements>
      <zeebe:taskDefinition type="publish"/></{p}extensionElements>
      <{p}messageEventDefinition messageRef="M"/></{p}intermediateThrowEvent>
    <{p}endEvent id="end"><{p}extensionElements>
      <zeebe:taskDefinition type="publish"/></{p}extensionElements>
      <{p}messageEventDefinition messageRef="M"/></{p}endEvent>
    <{p}scriptTask id="juel" scriptFormat="juel" camunda:resultVariable="sum">
      <{p}script>${{a * b}}</{p}script></{p}scriptTask>
    <{p}scriptTask id="groovy" scriptFormat="Groovy" camunda:resultVariable="out">
      <{p}script><![CDATA[  def x = a < b
  out = x ]]></{p}script></{p}scriptTask>
    <{p}scriptTask id="feel"><{p}extensionElements>
      <zeebe:script expression="=&quot;Total &quot; + label" resultVariable="total"/>
    </{p}extensionElements></{p}scriptTask>
    <{p}scriptTask id="spiff"><{p}script>x = 1</{p}script></{p}scriptTask>
    <{p}scriptTask id="ours" scriptFormat="flowdesk"><{p}script>a = 1</{p}script></{p}scriptTask>
  </{p}process>
  <{p}message id="M" name="note"/>
"""


def test_vendor_tool_and_script_settings_map() -> None:
    extra = f'xmlns:camunda="{CAMUNDA}" xmlns:zeebe="{ZEEBE}"'
    result = import_bpmn(definitions(VENDOR_TASKS, extra_ns=extra))
    config = {node_id: dict(node["config"]) for node_id, node in result.document["nodes"].items()}
    assert config["c8"].pop("origin")["vendor"] == "zeebe", "its input mapping, for export"
    external = {"vendor": "camunda", "type": "external"}
    assert config["c7"] == {"tool": "mailer", "message": "note", "implementation": external}
    assert config["c8"] == {
        "tool": "sms",
        "retries": 5,
        "inputs": {"to": "$vars.phone"},
        "implementation": {"vendor": "zeebe"},
    }
    zeebe = {"implementation": {"vendor": "zeebe"}}
    assert config["throw"] == {"tool": "publish", "message": "note", **zeebe}
    assert config["end"] == {"event": "message", "tool": "publish", "message": "note", **zeebe}
    assert config["juel"] == {"language": "flowdesk", "script": "sum = $vars.a * $vars.b"}
    assert config["groovy"] == {
        "language": "groovy",
        "script": "  def x = a < b\n  out = x ",
        "resultVariable": "out",
    }
    assert config["feel"] == {"language": "flowdesk", "script": "total = 'Total ' + $vars.label"}
    assert config["spiff"] == {"language": "unspecified", "script": "x = 1"}
    assert config["ours"] == {"language": "flowdesk", "script": "a = 1"}
    assert "import.script_language" in codes(result)
    assert result.unsupported == []


def test_camunda_8_correlation_keys_come_from_the_message() -> None:
    body = """<{p}process id="p" isExecutable="true">
      <{p}startEvent id="start"><{p}messageEventDefinition messageRef="M"/></{p}startEvent>
      <{p}receiveTask id="wait" messageRef="M"/>
      <{p}intermediateCatchEvent id="catch"><{p}messageEventDefinition messageRef="M"/>
      </{p}intermediateCatchEvent>
      <{p}intermediateCatchEvent id="odd"><{p}messageEventDefinition messageRef="N"/>
      </{p}intermediateCatchEvent>
    </{p}process>
    <{p}message id="M" name="doc"><{p}extensionElements>
      <zeebe:subscription correlationKey="= order.id"/></{p}extensionElements></{p}message>
    <{p}message id="N" name="other"><{p}extensionElements>
      <zeebe:subscription correlationKey="=lookup(x)"/></{p}extensionElements></{p}message>"""
    result = import_bpmn(definitions(body, extra_ns=f'xmlns:zeebe="{ZEEBE}"'))
    config = {node_id: node["config"] for node_id, node in result.document["nodes"].items()}
    assert config["start"] == {"event": "message", "message": "doc"}
    assert config["wait"] == {"message": "doc", "correlationKey": "$vars.order.id"}
    assert config["catch"] == {"message": "doc", "correlationKey": "$vars.order.id"}
    assert config["odd"] == {"message": "other", "correlationKey": "=lookup(x)"}
    assert "import.correlation_key" not in codes(result)
    assert "import.expression_untranslated" in codes(result)


def test_a_spiffworkflow_script_without_format_is_python() -> None:
    """Python that is only plain assignments with exactly translatable expressions becomes
    Flowdesk's script; anything else stays Python (a publish error naming the language)."""
    spiff = 'xmlns:spiffworkflow="http://spiffworkflow.org/bpmn/schema/1.0/core"'

    def imported(script: str) -> dict:
        body = f"""<{{p}}process id="p"><{{p}}scriptTask id="s"><{{p}}script>{script}</{{p}}script>
          </{{p}}scriptTask></{{p}}process>"""
        return import_bpmn(definitions(body, extra_ns=spiff)).document["nodes"]["s"]["config"]

    assert imported("x = 1\ntotal += x") == {
        "language": "flowdesk",
        "script": "x = 1\ntotal = $vars.total + ($vars.x)",
    }
    assert imported("print(x)") == {"language": "python", "script": "print(x)"}
    assert imported("x = 1\ndel(y)") == {"language": "python", "script": "x = 1\ndel(y)"}


def test_a_message_catch_without_a_key_correlates_on_the_business_key() -> None:
    """Camunda 7 models carry no correlation key (its API correlates on the business key), nor
    do other tools' (their hosts address one instance); a Camunda 8 catch must say its key, and
    a file Flowdesk wrote keeps what its config says."""
    body = """<{p}process id="P" isExecutable="true">
      <{p}startEvent id="start"/>
      <{p}sequenceFlow id="f1" sourceRef="start" targetRef="catch"/>
      <{p}intermediateCatchEvent id="catch"><{p}messageEventDefinition messageRef="M"/>
      </{p}intermediateCatchEvent>
      <{p}sequenceFlow id="f2" sourceRef="catch" targetRef="recv"/>
      <{p}receiveTask id="recv" messageRef="M"/>
      <{p}sequenceFlow id="f3" sourceRef="recv" targetRef="end"/>
      <{p}endEvent id="end"/>
    </{p}process>
    <{p}message id="M" name="doc"/>"""
    camunda7 = import_bpmn(definitions(body, extra_ns=f'xmlns:camunda="{CAMUNDA}"'))
    nodes = camunda7.document["nodes"]
    assert nodes["catch"]["config"]["correlationKey"] == "$instance.businessKey"
    assert nodes["recv"]["config"]["correlationKey"] == "$instance.businessKey"
    assert "import.correlation_business_key" in codes(camunda7)
    assert "import.correlation_key" not in codes(camunda7)
    assert [p for p in validate(camunda7.document) if p.severity == "error"] == []
    plain = import_bpmn(definitions(body))
    assert plain.document["nodes"]["catch"]["config"]["correlationKey"] == "$instance.businessKey"
    document = plain.document
    document["nodes"]["catch"]["config"].pop("correlationKey")  # removed in Flowdesk
    again = import_bpmn(export_bpmn(document))
    assert "correlationKey" not in again.document["nodes"]["catch"]["config"]
    zeebe = import_bpmn(
        definitions(body, extra_ns=f'xmlns:camunda="{CAMUNDA}" xmlns:zeebe="{ZEEBE}"')
    )
    assert "correlationKey" not in zeebe.document["nodes"]["catch"]["config"]


def test_instance_paths_name_only_the_business_key() -> None:
    doc = events_document()
    doc["nodes"]["reply"]["config"]["correlationKey"] = "$instance.businessKey"
    assert not [p for p in validate(doc) if p.element_id == "reply" and p.severity == "error"]
    doc["nodes"]["reply"]["config"]["correlationKey"] = "$instance.id"
    [problem] = [p for p in validate(doc) if p.element_id == "reply" and p.severity == "error"]
    assert problem.code == "expression.reference" and "$instance has businessKey" in problem.message


def test_a_message_event_without_a_message_is_named_by_itself() -> None:
    """SpiffWorkflow reads a message event with no messageRef as the message of its own name;
    without a name it stays a message nobody named."""
    body = """<{p}process id="P" isExecutable="true">
      <{p}intermediateCatchEvent id="named" name="Test Message"><{p}messageEventDefinition/>
      </{p}intermediateCatchEvent>
      <{p}intermediateCatchEvent id="nameless"><{p}messageEventDefinition/>
      </{p}intermediateCatchEvent>
    </{p}process>"""
    result = import_bpmn(definitions(body))
    nodes = result.document["nodes"]
    assert nodes["named"]["config"]["message"] == "Test Message"
    assert "message" not in nodes["nameless"]["config"]
    assert {"import.message_by_name", "import.message_missing"} <= codes(result)
    again = import_bpmn(export_bpmn(result.document))
    assert again.document["nodes"]["named"]["config"] == nodes["named"]["config"]


def test_import_warnings_name_the_element_as_people_see_it() -> None:
    body = """<{p}process id="p" isExecutable="true">
      <{p}startEvent id="StartEvent_1"/>
      <{p}userTask id="Activity_13vyd1g" name="Review"/>
      <{p}boundaryEvent id="Event_0ab1" attachedToRef="Activity_13vyd1g">
        <{p}timerEventDefinition/>
      </{p}boundaryEvent>
      <{p}endEvent id="Event_1"/>
      <{p}sequenceFlow id="f1" sourceRef="StartEvent_1" targetRef="Activity_13vyd1g"/>
      <{p}sequenceFlow id="f2" sourceRef="Activity_13vyd1g" targetRef="Event_1"/>
    </{p}process>"""
    result = import_bpmn(definitions(body))
    empty = [w for w in result.warnings if w.code == "import.timer_empty"]
    assert [w.message for w in empty] == [
        "The timer boundary event on 'Review': Timer has no duration or date"
    ]
    assert empty[0].element_id == "Event_0ab1"
