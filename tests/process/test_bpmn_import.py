"""Import of BPMN files written by other tools: safety, namespaces, mapping and what is reported."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.helpers.bpmn import CAMUNDA, codes, definitions
from webapp.process.bpmn import BpmnImportError, ImportResult, export_bpmn, import_bpmn
from webapp.process.validation import validate

SIMPLE_PROCESS = """
  <{p}process id="p1" name="Simple" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}userTask id="t" name="Do it"/>
    <{p}endEvent id="e"/>
    <{p}sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
    <{p}sequenceFlow id="f2" sourceRef="t" targetRef="e"/>
  </{p}process>
"""


def camunda(body: str) -> ImportResult:
    return import_bpmn(definitions(body, extra_ns=f'xmlns:camunda="{CAMUNDA}"'))


@pytest.mark.parametrize("prefix", ["bpmn", "b", "semantic", ""])
def test_elements_are_matched_by_namespace_not_prefix(prefix: str) -> None:
    result = import_bpmn(definitions(SIMPLE_PROCESS, prefix))
    doc = result.document
    assert doc["key"] == "p1" and doc["name"] == "Simple"
    assert list(doc["nodes"]) == ["s", "t", "e"]
    assert [n["kind"] for n in doc["nodes"].values()] == ["startEvent", "userTask", "endEvent"]
    assert doc["nodes"]["t"]["title"] == "Do it"
    assert list(doc["flows"]) == ["f1", "f2"]
    assert result.unsupported == []


def test_elements_in_other_namespaces_are_not_bpmn() -> None:
    body = SIMPLE_PROCESS.replace(
        '<{p}endEvent id="e"/>',
        '<{p}endEvent id="e"/><bpmn:userTask xmlns:bpmn="urn:other" id="fake"/>',
    )
    result = import_bpmn(definitions(body, "b"))
    assert list(result.document["nodes"]) == ["s", "t", "e"]
    assert result.unsupported == []


def test_text_and_bytes_input_are_equivalent() -> None:
    text = definitions(SIMPLE_PROCESS).replace("UTF-8", "ISO-8859-1").replace("Do it", "Prüfen")
    assert import_bpmn(text).document["nodes"]["t"]["title"] == "Prüfen"
    assert import_bpmn(text.encode("latin-1")).document["nodes"]["t"]["title"] == "Prüfen"


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol9 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
]>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="x">
  <process id="p"><startEvent id="s" name="&lol9;"/></process>
</definitions>"""

XXE = """<?xml version="1.0"?>
<!DOCTYPE definitions [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="x">
  <process id="p"><startEvent id="s" name="&xxe;"/></process>
</definitions>"""

EXTERNAL_DTD = """<?xml version="1.0"?>
<!DOCTYPE definitions SYSTEM "http://attacker.invalid/evil.dtd">
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="x"/>"""


@pytest.mark.parametrize("text", [BILLION_LAUGHS, XXE, EXTERNAL_DTD], ids=["laughs", "xxe", "dtd"])
def test_dtds_and_entities_are_refused(text: str) -> None:
    with pytest.raises(BpmnImportError, match="DTD or XML entities") as info:
        import_bpmn(text)
    assert info.value.line == 2
    assert "root:" not in info.value.message and "lol" not in info.value.message


def test_size_limit() -> None:
    text = definitions(SIMPLE_PROCESS)
    with pytest.raises(BpmnImportError, match="limit"):
        import_bpmn(text, max_bytes=100)
    assert import_bpmn(text, max_bytes=len(text.encode())).document["nodes"]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('<?xml version="1.0"?>\n<definitions>\n  <process>\n</definitions>', 4),
        ("<definitions>\n\n<a b='1' b='2'/></definitions>", 3),
        ("\n\nnot xml at all", 3),
    ],
)
def test_malformed_xml_names_the_line(text: str, line: int) -> None:
    with pytest.raises(BpmnImportError, match=f"line {line}") as info:
        import_bpmn(text)
    assert info.value.line == line


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ('<definitions xmlns="http://www.omg.org/spec/DMN/20180521/MODEL/"/>', "Not a BPMN"),
        (definitions(""), "no BPMN process"),
    ],
)
def test_files_that_are_not_processes(text: str, message: str) -> None:
    with pytest.raises(BpmnImportError, match=message):
        import_bpmn(text)


UNSUPPORTED = """
  <{p}process id="p" isExecutable="true">
    <{p}laneSet id="ls"><{p}lane id="lane"><{p}flowNodeRef>s</{p}flowNodeRef></{p}lane></{p}laneSet>
    <{p}startEvent id="s"/>
    <{p}transaction id="sub"><{p}startEvent id="inner"/></{p}transaction>
    <{p}boundaryEvent id="b" attachedToRef="sub"><{p}conditionalEventDefinition/>
    </{p}boundaryEvent>
    <{p}complexGateway id="ig"/>
    <{p}intermediateThrowEvent id="throw"><{p}compensateEventDefinition/>
    </{p}intermediateThrowEvent>
    <{p}intermediateCatchEvent id="cycle"><{p}timerEventDefinition>
      <{p}timeCycle>R3/PT1H</{p}timeCycle></{p}timerEventDefinition></{p}intermediateCatchEvent>
    <{p}userTask id="loop"><{p}standardLoopCharacteristics/></{p}userTask>
    <{p}endEvent id="e"><{p}compensateEventDefinition/></{p}endEvent>
    <{p}adHocSubProcess id="adhoc"/>
    <{p}eventBasedGateway id="starter" instantiate="true"/>
    <{p}eventBasedGateway id="both" eventGatewayType="Parallel"/>
    <{p}serviceTask id="undo" isForCompensation="true"/>
    <{p}intermediateCatchEvent id="when"><{p}conditionalEventDefinition/>
    </{p}intermediateCatchEvent>
    <{p}dataObject id="data"/>
    <{p}textAnnotation id="note"><{p}text>hi</{p}text></{p}textAnnotation>
    <{p}sequenceFlow id="f1" sourceRef="s" targetRef="sub"/>
    <{p}sequenceFlow id="f2" sourceRef="sub" targetRef="ig"/>
    <{p}sequenceFlow id="f3" sourceRef="s" targetRef="e"/>
  </{p}process>
"""


def test_unsupported_elements_are_listed_with_id_type_and_line() -> None:
    result = import_bpmn(definitions(UNSUPPORTED))
    listed = {(u.id, u.type) for u in result.unsupported}
    assert listed == {("both", "eventBasedGateway[Parallel]")}
    assert all(u.line and u.line > 1 for u in result.unsupported)
    assert list(result.document["nodes"]) == [
        "s",
        "sub",
        "inner",
        "b",
        "ig",
        "throw",
        "cycle",
        "loop",
        "e",
        "adhoc",
        "starter",
        "undo",
        "when",
    ]
    assert list(result.document["flows"]) == ["f1", "f2", "f3"]
    assert "import.artifact" not in codes(result)
    assert "lane" not in result.document["nodes"]
    kept = [item["tag"] for item in result.document["kept"]["process"]]
    assert kept == ["laneSet", "dataObject", "textAnnotation"]


def test_every_flow_node_and_flow_is_either_imported_or_reported() -> None:
    result = import_bpmn(definitions(UNSUPPORTED))
    reported = {u.id for u in result.unsupported}
    for element_id in (
        "s",
        "sub",
        "b",
        "ig",
        "throw",
        "cycle",
        "loop",
        "e",
        "adhoc",
        "starter",
        "both",
        "undo",
        "when",
        "f1",
        "f2",
        "f3",
    ):
        imported = element_id in result.document["nodes"] or element_id in result.document["flows"]
        assert imported or element_id in reported, element_id


COLLABORATION = """
  <{p}collaboration id="c">
    <{p}participant id="pool_a" name="Pool A" processRef="a"/>
    <{p}participant id="pool_b" processRef="b"/>
    <{p}messageFlow id="mf" sourceRef="s1" targetRef="s2"/>
    <{p}messageFlow id="gone" sourceRef="t" targetRef="s2"/>
  </{p}collaboration>
  <{p}process id="a" isExecutable="false"><{p}startEvent id="s1"/></{p}process>
  <{p}process id="b" isExecutable="true"><{p}startEvent id="s2"/></{p}process>
  <{p}process id="c2" isExecutable="true"/>
"""


def test_collaboration_imports_the_executable_process_and_keeps_the_others() -> None:
    """The other pools, their processes and the message flows are kept as they are (a message
    flow whose end is nowhere is dropped); the pool of the imported process points at it
    under whatever key it is exported with."""
    result = import_bpmn(definitions(COLLABORATION))
    assert result.document["key"] == "b"
    assert list(result.document["nodes"]) == ["s2"]
    assert result.unsupported == []
    kept = result.document["kept"]
    assert kept["pool"] == "pool_b"
    tags = [(item["tag"], item["attrs"]["id"]) for item in kept["definitions"]]
    assert tags == [("collaboration", "c"), ("process", "a"), ("process", "c2")]
    collaboration = kept["definitions"][0]["children"]
    assert [child["attrs"]["id"] for child in collaboration] == ["pool_a", "pool_b", "mf"]
    assert "processRef" not in collaboration[1]["attrs"]
    renamed = {**result.document, "key": "orders"}
    xml = export_bpmn(renamed)
    assert 'id="pool_b" processRef="orders"' in xml and 'processRef="a"' in xml
    assert import_bpmn(xml).document == renamed


def test_process_id_picks_another_process() -> None:
    result = import_bpmn(definitions(COLLABORATION), process_id="a")
    assert result.document["key"] == "a"
    assert result.document["name"] == "Pool A"
    assert list(result.document["nodes"]) == ["s1"]
    with pytest.raises(BpmnImportError, match=r"No process with id 'zz'.*a, b, c2"):
        import_bpmn(definitions(COLLABORATION), process_id="zz")


def test_tasks_without_behaviour_become_user_tasks_with_a_warning() -> None:
    body = """<{p}process id="p"><{p}task id="a"/><{p}manualTask id="b"/>
      <{p}scriptTask id="c" scriptFormat="python"><{p}script>print(x)</{p}script></{p}scriptTask>
    </{p}process>"""
    result = import_bpmn(definitions(body))
    kinds = {k: n["kind"] for k, n in result.document["nodes"].items()}
    assert kinds == {"a": "userTask", "b": "manualTask", "c": "scriptTask"}
    assert result.document["nodes"]["c"]["config"] == {"language": "python", "script": "print(x)"}
    assert {"import.task_as_user_task", "import.script_language"} <= codes(result)
    assert result.unsupported == []


def test_conditions_defaults_and_missing_flow_ids() -> None:
    body = """<{p}process id="p" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
      <{p}startEvent id="s"/><{p}exclusiveGateway id="g" default="other"/>
      <{p}endEvent id="e"/>
      <{p}sequenceFlow sourceRef="s" targetRef="g"/>
      <{p}sequenceFlow id="big" name="big" sourceRef="g" targetRef="e">
        <{p}conditionExpression xsi:type="{p}tFormalExpression"
          ><![CDATA[${{amount > 1000}}]]></{p}conditionExpression>
      </{p}sequenceFlow>
      <{p}sequenceFlow id="odd" sourceRef="g" targetRef="e">
        <{p}conditionExpression>${{bean.check(x)}}</{p}conditionExpression>
      </{p}sequenceFlow>
      <{p}sequenceFlow id="other" sourceRef="g" targetRef="e"/>
    </{p}process>"""
    result = import_bpmn(definitions(body))
    flows = result.document["flows"]
    assert list(flows) == ["Flow_s_g", "big", "odd", "other"]
    assert flows["big"]["condition"] == "$vars.amount > 1000"
    assert flows["big"]["title"] == "big"
    assert flows["odd"]["condition"] == "${bean.check(x)}"
    assert flows["other"]["default"] is True
    assert "import.condition_untranslated" in codes(result)
    problems = [p for p in validate(result.document) if p.element_id == "odd"]
    assert any(p.code == "expression.foreign" and p.severity == "error" for p in problems)


def test_camunda_assignment_and_forms() -> None:
    body = """<{p}process id="p">
      <{p}startEvent id="s"><{p}extensionElements><camunda:formData>
        <camunda:formField id="amount" label="Amount" type="long" defaultValue="5">
          <camunda:validation><camunda:constraint name="required"/>
            <camunda:constraint name="min" config="1"/></camunda:validation>
        </camunda:formField>
        <camunda:formField id="kind" label="Kind" type="enum">
          <camunda:value id="a" name="Option A"/><camunda:value id="b" name="Option B"/>
        </camunda:formField>
        <camunda:formField id="when" type="customType"/>
      </camunda:formData></{p}extensionElements></{p}startEvent>
      <{p}userTask id="u1" camunda:assignee="demo" camunda:dueDate="P2D"/>
      <{p}userTask id="u2" camunda:candidateGroups="management, sales"/>
      <{p}userTask id="u3" camunda:assignee="${{initiator}}" camunda:formKey="embedded:x.html"/>
    </{p}process>"""
    nodes = camunda(body).document["nodes"]
    fields = nodes["s"]["config"]["form"]["fields"]
    assert fields[0] == {"key": "amount", "label": "Amount", "type": "integer", "required": True,
                         "default": 5, "min": 1}  # fmt: skip
    assert fields[1]["options"] == [{"value": "a", "label": "Option A"},
                                    {"value": "b", "label": "Option B"}]  # fmt: skip
    assert fields[2]["type"] == "text"
    assert nodes["u1"]["config"].pop("origin") == {
        "vendor": "camunda",
        "assignment": {"assignee": "demo"},
    }, "the assignment as written, for export"
    assert nodes["u2"]["config"].pop("origin")["assignment"] == {
        "candidateGroups": "management, sales"
    }
    assert nodes["u3"]["config"].pop("origin")["assignment"] == {"assignee": "${initiator}"}
    assert nodes["u1"]["config"] == {"assignee": {"type": "user", "value": "demo"}, "dueIn": "P2D"}
    assert nodes["u2"]["config"] == {
        "assignee": {"type": "role", "value": "management"},
        "candidates": {"roles": ["sales"]},
    }
    assert nodes["u3"]["config"] == {
        "assignee": {"type": "expression", "value": "$vars.initiator"},
        "formRef": {"vendor": "camunda", "formKey": "embedded:x.html"},
    }
    assert {"import.form_ref", "import.form_lossy"} <= codes(camunda(body))


def test_standard_performers_become_assignees() -> None:
    """potentialOwner / humanPerformer: `user(x)` / `group(x)` items (candidates of a potential
    owner), a plain name (a group for a potential owner, the assignee for a performer), an
    expression, or a resourceRef's resource name. The elements are kept and written back, not
    listed as unsupported."""

    def owner(tag: str, text: str) -> str:
        return (
            f"<bpmn:{tag}><bpmn:resourceAssignmentExpression><bpmn:formalExpression>{text}"
            f"</bpmn:formalExpression></bpmn:resourceAssignmentExpression></bpmn:{tag}>"
        )

    tasks = {
        "mixed": owner("potentialOwner", "user(kermit), group(sales)"),
        "group": owner("potentialOwner", "management"),
        "user": owner("humanPerformer", "fozzie"),
        "expr": owner("potentialOwner", "${{boss}}"),
        "ref": "<bpmn:potentialOwner><bpmn:resourceRef>R1</bpmn:resourceRef></bpmn:potentialOwner>",
    }
    body = '<bpmn:resource id="R1" name="Approver"/><bpmn:process id="p">'
    body += "".join(f'<bpmn:userTask id="{i}">{xml}</bpmn:userTask>' for i, xml in tasks.items())
    body += "</bpmn:process>"
    result = import_bpmn(definitions(body))
    nodes = result.document["nodes"]
    assert nodes["mixed"]["config"]["candidates"] == {"users": ["kermit"]}
    assert {node_id: node["config"].get("assignee") for node_id, node in nodes.items()} == {
        "mixed": {"type": "role", "value": "sales"},
        "group": {"type": "role", "value": "management"},
        "user": {"type": "user", "value": "fozzie"},
        "expr": {"type": "expression", "value": "$vars.boss"},
        "ref": {"type": "role", "value": "Approver"},
    }
    assert not result.unsupported
    assert not [w for w in result.warnings if w.code == "import.assignee_lossy"]
    again = import_bpmn(export_bpmn(result.document))
    assert again.document == result.document


def test_camunda_assignee_candidate_users_and_groups_all_count() -> None:
    """As Camunda reads them: the assignee holds the task; candidate groups and users may take
    it when it is released. Without an assignee the first group (else user) is its role."""
    body = """<{p}process id="p">
      <{p}userTask id="all" camunda:assignee="demo" camunda:candidateUsers="kermit, fozzie"
        camunda:candidateGroups="management,sales"/>
      <{p}userTask id="groups" camunda:candidateUsers="kermit" camunda:candidateGroups="ops"/>
      <{p}userTask id="users" camunda:candidateUsers="kermit,fozzie"/>
    </{p}process>"""
    result = camunda(body)
    nodes = copy.deepcopy(result.document["nodes"])
    for node in nodes.values():
        node["config"].pop("origin", None)
    assert nodes["all"]["config"] == {
        "assignee": {"type": "user", "value": "demo"},
        "candidates": {"roles": ["management", "sales"], "users": ["kermit", "fozzie"]},
    }
    assert nodes["groups"]["config"] == {
        "assignee": {"type": "role", "value": "ops"},
        "candidates": {"users": ["kermit"]},
    }
    assert nodes["users"]["config"] == {
        "assignee": {"type": "user", "value": "kermit"},
        "candidates": {"users": ["fozzie"]},
    }
    assert "import.assignee_lossy" not in codes(result)
    assert import_bpmn(export_bpmn(result.document)).document == result.document


@pytest.mark.parametrize("vendor", ["http://flowable.org/bpmn", "http://activiti.org/bpmn"])
def test_flowable_and_activiti_attributes(vendor: str) -> None:
    body = """<{p}process id="p">
      <{p}userTask id="u" v:assignee="kermit"/><{p}userTask id="g" v:candidateGroups="ops"/>
      <{p}serviceTask id="t" v:class="org.Example" v:resultVariable="out"/></{p}process>"""
    result = import_bpmn(definitions(body, extra_ns=f'xmlns:v="{vendor}"'))
    nodes = result.document["nodes"]
    assert nodes["u"]["config"]["assignee"] == {"type": "user", "value": "kermit"}
    assert nodes["g"]["config"]["assignee"] == {"type": "role", "value": "ops"}
    name = vendor.rpartition("/")[0].rpartition("/")[2].removesuffix(".org")
    assert nodes["t"]["config"] == {
        "saveTo": "out",
        "implementation": {"vendor": name, "class": "org.Example"},
    }
    assert "import.service_implementation" in codes(result)


def test_timers_and_messages() -> None:
    body = """<{p}process id="p">
      <{p}intermediateCatchEvent id="d"><{p}timerEventDefinition>
        <{p}timeDuration>PT10M</{p}timeDuration></{p}timerEventDefinition></{p}intermediateCatchEvent>
      <{p}intermediateCatchEvent id="q"><{p}timerEventDefinition>
        <{p}timeDuration>"PT1S"</{p}timeDuration></{p}timerEventDefinition></{p}intermediateCatchEvent>
      <{p}intermediateCatchEvent id="at"><{p}timerEventDefinition>
        <{p}timeDate>2030-01-01T09:00:00Z</{p}timeDate></{p}timerEventDefinition></{p}intermediateCatchEvent>
      <{p}intermediateCatchEvent id="var"><{p}timerEventDefinition>
        <{p}timeDate>${{dueDate}}</{p}timeDate></{p}timerEventDefinition></{p}intermediateCatchEvent>
      <{p}intermediateCatchEvent id="m">
        <{p}messageEventDefinition messageRef="msg1"/></{p}intermediateCatchEvent>
      <{p}intermediateCatchEvent id="m2"><{p}messageEventDefinition/></{p}intermediateCatchEvent>
    </{p}process>
    <{p}message id="msg1" name="invoiceReceived"/>"""
    result = import_bpmn(definitions(body))
    configs = {k: n["config"] for k, n in result.document["nodes"].items()}
    assert configs == {
        "d": {"duration": "PT10M"},
        "q": {"duration": "PT1S"},
        "at": {"date": "'2030-01-01T09:00:00Z'"},
        "var": {"date": "$vars.dueDate"},
        "m": {"message": "invoiceReceived", "correlationKey": "$instance.businessKey"},
        "m2": {},
    }
    assert {"import.correlation_business_key", "import.message_missing"} <= codes(result)
    assert "import.correlation_key" in codes(result), "m2 has neither a message nor a key"


def test_spiffworkflow_service_task() -> None:
    spiff = "http://spiffworkflow.org/bpmn/schema/1.0/core"
    body = """<{p}process id="p"><{p}serviceTask id="t"><{p}extensionElements>
      <s:serviceTaskOperator id="weather/CurrentTemp" resultVariable="weather">
        <s:parameters><s:parameter id="zip" type="int" value="22980"/>
          <s:parameter id="key" type="str" value="'secret'"/></s:parameters>
        <s:retry retries="4" backoff_base="1.5"/>
      </s:serviceTaskOperator></{p}extensionElements></{p}serviceTask></{p}process>"""
    result = import_bpmn(definitions(body, extra_ns=f'xmlns:s="{spiff}"'))
    assert result.document["nodes"]["t"]["config"] == {
        "tool": "weather/CurrentTemp",
        "inputs": {"zip": "22980", "key": "'secret'"},
        "saveTo": "weather",
        "retries": 4,
        "backoff": 1.5,
    }


def test_unreadable_flowdesk_extension_gives_a_warning() -> None:
    body = """<{p}process id="p"><{p}userTask id="t"><{p}extensionElements>
      <fd:config>{{not json</fd:config><fd:node>[1]</fd:node></{p}extensionElements>
    </{p}userTask></{p}process>"""
    ns = 'xmlns:fd="https://flowdesk.dev/schema/bpmn/1.0"'
    result = import_bpmn(definitions(body, extra_ns=ns))
    assert result.document["nodes"]["t"]["config"] == {}
    assert [w.code for w in result.warnings].count("import.extension_invalid") == 2


def test_diagram_positions_and_waypoints_are_read() -> None:
    body = (
        SIMPLE_PROCESS
        + """
    <bpmndi:BPMNDiagram><bpmndi:BPMNPlane bpmnElement="p1">
      <bpmndi:BPMNShape bpmnElement="s">
        <dc:Bounds x="10" y="20.5" width="36" height="36"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape bpmnElement="t">
        <dc:Bounds x="100" y="0" width="120" height="80"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape bpmnElement="e">
        <dc:Bounds x="300" y="20" width="36" height="36"/></bpmndi:BPMNShape>
      <bpmndi:BPMNEdge bpmnElement="f1">
        <di:waypoint x="46" y="38"/><di:waypoint x="100" y="40"/></bpmndi:BPMNEdge>
    </bpmndi:BPMNPlane></bpmndi:BPMNDiagram>"""
    )
    ns = (
        'xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI" '
        'xmlns:dc="http://www.omg.org/spec/DD/20100524/DC" '
        'xmlns:di="http://www.omg.org/spec/DD/20100524/DI"'
    )
    result = import_bpmn(definitions(body, extra_ns=ns))
    nodes, flows = result.document["nodes"], result.document["flows"]
    assert nodes["s"]["position"] == {"x": 10, "y": 20.5, "width": 36, "height": 36}
    assert nodes["t"]["position"] == {"x": 100, "y": 0, "width": 120, "height": 80}
    assert flows["f1"]["waypoints"] == [{"x": 46, "y": 38}, {"x": 100, "y": 40}]
    assert flows["f2"]["waypoints"] == []
    assert not codes(result) & {"import.auto_layout", "import.missing_shape"}


def test_file_without_diagram_is_laid_out() -> None:
    result = import_bpmn(definitions(SIMPLE_PROCESS))
    positions: list[dict[str, Any]] = [n["position"] for n in result.document["nodes"].values()]
    assert [p["x"] for p in positions] == sorted(p["x"] for p in positions)
    assert "import.auto_layout" in codes(result)


def test_candidate_expressions_give_candidates_when_the_task_is_created() -> None:
    """Camunda evaluates `candidateGroups="${groups}"` to group names when it creates the task;
    so do `rolesFrom` and `usersFrom`, and the literal names beside them stay names."""
    body = """<{p}process id="p">
      <{p}userTask id="g" camunda:candidateGroups="${{approverGroups}}"/>
      <{p}userTask id="mixed" camunda:assignee="demo"
        camunda:candidateGroups="sales, ${{extraGroups}}" camunda:candidateUsers="${{reviewers}}"/>
    </{p}process>"""
    result = camunda(body)
    nodes = result.document["nodes"]
    for node in nodes.values():
        node["config"].pop("origin", None)  # what the file wrote, for the export
    assert nodes["g"]["config"] == {"candidates": {"rolesFrom": "$vars.approverGroups"}}
    assert nodes["mixed"]["config"] == {
        "assignee": {"type": "user", "value": "demo"},
        "candidates": {
            "roles": ["sales"],
            "rolesFrom": "$vars.extraGroups",
            "usersFrom": "$vars.reviewers",
        },
    }
    assert "import.assignee_lossy" not in codes(result)
