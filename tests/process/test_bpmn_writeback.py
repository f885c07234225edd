"""Export writes user-task assignment, Camunda/Flowable form fields and Camunda input parameters
back in the dialect the file came with: verbatim while untouched, the current values after an
edit in Flowdesk where the vendor's form says them exactly, and nothing (never a wrong value)
where it cannot."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from tests.helpers.bpmn import CAMUNDA, FLOWABLE, ZEEBE, element, same_after_round_trip, wrap
from tests.helpers.corpus_files import CORPUS
from tests.helpers.requirements import moddle_node
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.bpmn.kept import to_data
from webapp.process.bpmn.vendor import refreshed_xml
from webapp.process.document import canonical_json, normalize

ACTIVITI = "http://activiti.org/bpmn"
BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"
FLOWDESK = "https://flowdesk.dev/schema/bpmn/1.0"


def performer(tag: str, text: str) -> str:
    return (
        f"<{{p}}{tag}><{{p}}resourceAssignmentExpression><{{p}}formalExpression>{text}"
        f"</{{p}}formalExpression></{{p}}resourceAssignmentExpression></{{p}}{tag}>"
    )


#: One user task per dialect, with the vendor's assignment as its file wrote it.
TASKS = {
    "camunda": '<{p}userTask id="t" camunda:assignee="demo" camunda:candidateGroups="sales, ops" '
    'camunda:candidateUsers="kermit"/>',
    "flowable": '<{p}userTask id="t" flowable:assignee="${initiator}" '
    'flowable:candidateGroups="ops"/>',
    "activiti": '<{p}userTask id="t" activiti:candidateGroups="management"/>',
    "zeebe": '<{p}userTask id="t"><{p}extensionElements><zeebe:assignmentDefinition '
    'assignee="=boss" candidateGroups="clerks"/></{p}extensionElements></{p}userTask>',
    "potentialOwner": '<{p}userTask id="t">'
    + performer("potentialOwner", "group(sales), user(kermit)")
    + "</{p}userTask>",
    "humanPerformer": '<{p}userTask id="t">'
    + performer("humanPerformer", "fozzie")
    + "</{p}userTask>",
}


def vendor_xml(task: str) -> str:
    xml = wrap(task)
    return xml.replace("<bpmn:definitions ", f'<bpmn:definitions xmlns:activiti="{ACTIVITI}" ', 1)


def assignment(exported: str) -> dict[str, str]:
    """The vendor's assignment of task `t` in an exported file, as attribute -> text."""
    task = element(exported, "t")
    found = {
        f"{prefix}:{name}": task.get(f"{{{uri}}}{name}")
        for prefix, uri in (("camunda", CAMUNDA), ("flowable", FLOWABLE), ("activiti", ACTIVITI))
        for name in ("assignee", "candidateGroups", "candidateUsers")
        if task.get(f"{{{uri}}}{name}") is not None
    }
    for definition in task.iter(f"{{{ZEEBE}}}assignmentDefinition"):
        found.update({f"zeebe:{name}": value for name, value in definition.attrib.items()})
    for local in ("potentialOwner", "humanPerformer"):
        for item in task.iter(f"{{{BPMN}}}{local}"):
            found[local] = "".join(item.itertext()).strip()
    return found


AS_WRITTEN = {
    "camunda": {
        "camunda:assignee": "demo",
        "camunda:candidateGroups": "sales, ops",
        "camunda:candidateUsers": "kermit",
    },
    "flowable": {"flowable:assignee": "${initiator}", "flowable:candidateGroups": "ops"},
    "activiti": {"activiti:candidateGroups": "management"},
    "zeebe": {"zeebe:assignee": "=boss", "zeebe:candidateGroups": "clerks"},
    "potentialOwner": {"potentialOwner": "group(sales), user(kermit)"},
    "humanPerformer": {"humanPerformer": "fozzie"},
}


@pytest.mark.parametrize("dialect", list(TASKS))
def test_an_untouched_assignment_is_written_back_as_the_file_had_it(dialect: str) -> None:
    document = import_bpmn(vendor_xml(TASKS[dialect])).document
    assert document["nodes"]["t"]["config"]["assignee"], "import maps it"
    exported = same_after_round_trip(document)
    assert assignment(exported) == AS_WRITTEN[dialect]


def edited(dialect: str, **config: Any) -> tuple[dict[str, Any], str]:
    """Import the dialect's task, set `config` on it as the panel would, export."""
    document = import_bpmn(vendor_xml(TASKS[dialect])).document
    task = document["nodes"]["t"]["config"]
    for key, value in config.items():
        if value is None:
            task.pop(key, None)
        else:
            task[key] = value
    return document, export_bpmn(document)


def reads_back(document: dict[str, Any], exported: str) -> None:
    """The export reads back as the edited document, and exports the same again."""
    again = import_bpmn(exported).document
    assert canonical_json(normalize(again)["nodes"]["t"]["config"]) == canonical_json(
        normalize(document)["nodes"]["t"]["config"]
    )
    assert export_bpmn(again) == exported


ROLE_AND_USER = {
    "assignee": {"type": "role", "value": "finance"},
    "candidates": {"users": ["ann", "bob"]},
}
EDITED = {
    "camunda": {"camunda:candidateGroups": "finance", "camunda:candidateUsers": "ann,bob"},
    "flowable": {"flowable:candidateGroups": "finance", "flowable:candidateUsers": "ann,bob"},
    "activiti": {"activiti:candidateGroups": "finance", "activiti:candidateUsers": "ann,bob"},
    "zeebe": {"zeebe:candidateGroups": "finance", "zeebe:candidateUsers": "ann,bob"},
    "potentialOwner": {"potentialOwner": "group(finance), user(ann), user(bob)"},
    "humanPerformer": {"potentialOwner": "group(finance), user(ann), user(bob)"},
}


@pytest.mark.parametrize("dialect", list(TASKS))
def test_an_edited_assignment_is_written_in_the_files_dialect(dialect: str) -> None:
    document, exported = edited(dialect, **ROLE_AND_USER)
    assert assignment(exported) == EDITED[dialect], "the current values, not the imported ones"
    reads_back(document, exported)


@pytest.mark.parametrize(
    ("dialect", "written"),
    [
        ("camunda", {"camunda:assignee": "${manager.id}"}),
        ("flowable", {"flowable:assignee": "${manager.id}"}),
        ("zeebe", {"zeebe:assignee": "=manager.id"}),
        ("humanPerformer", {"humanPerformer": "${manager.id}"}),
    ],
)
def test_an_expression_assignee_is_translated_back_when_exact(
    dialect: str, written: dict[str, str]
) -> None:
    value = {"type": "expression", "value": "$vars.manager.id"}
    document, exported = edited(dialect, assignee=value, candidates=None)
    assert assignment(exported) == written
    reads_back(document, exported)


@pytest.mark.parametrize("dialect", list(TASKS))
@pytest.mark.parametrize(
    "assignee",
    [
        {"type": "expression", "value": "$vars.a + $vars.b"},
        {"type": "expression", "value": "$start.manager"},
        {"type": "role", "value": "sales, north"},  # a comma splits a vendor's list
        {"type": "user", "value": "${not.a.name}"},  # a vendor would read an expression
    ],
)
def test_what_a_vendor_cannot_say_exactly_stays_only_in_flowdesk_config(
    dialect: str, assignee: dict[str, str]
) -> None:
    document, exported = edited(dialect, assignee=assignee, candidates=None)
    assert assignment(exported) == {}, "neither a wrong value nor the stale imported one"
    config = json.loads(element(exported, "t").findtext(f".//{{{FLOWDESK}}}config"))
    assert config["assignee"] == assignee
    reads_back(document, exported)


@pytest.mark.parametrize("dialect", list(TASKS))
def test_a_deleted_assignment_is_not_written_back(dialect: str) -> None:
    document, exported = edited(dialect, assignee=None, candidates=None)
    assert assignment(exported) == {}
    reads_back(document, exported)


def test_a_canvas_save_of_an_export_reads_the_assignment_from_flowdesk_config() -> None:
    """The designer's canvas posts back the XML it was given: after the panel removes the
    assignee, the vendor attributes on the canvas are stale and must not bring it back."""
    document = import_bpmn(vendor_xml(TASKS["camunda"])).document
    exported = export_bpmn(document)
    root = etree.fromstring(exported.encode())
    blob = element(exported, "t").findtext(f".//{{{FLOWDESK}}}config")
    config = json.loads(blob)
    del config["assignee"], config["candidates"]
    for node in root.iter(f"{{{FLOWDESK}}}config"):
        if node.text == blob:
            node.text = json.dumps(config)
    canvas = etree.tostring(root, encoding="unicode")
    assert assignment(canvas) == AS_WRITTEN["camunda"], "the canvas's copy is stale"
    again = import_bpmn(canvas).document
    assert "assignee" not in again["nodes"]["t"]["config"]
    assert "candidates" not in again["nodes"]["t"]["config"]
    assert assignment(export_bpmn(again)) == {}
    refreshed = refreshed_xml(canvas, again)
    assert refreshed is not None and assignment(refreshed) == {}, "a save makes it current"
    assert import_bpmn(refreshed).document == again
    assert refreshed_xml(refreshed, again) is None
    assert refreshed_xml(exported, document) is None, "an untouched export is left as it is"


def test_a_task_added_in_flowdesk_uses_the_one_vendor_of_the_document() -> None:
    xml = wrap('<{p}userTask id="t" camunda:formKey="embedded:x.html"/><{p}userTask id="u"/>')
    document = import_bpmn(xml).document
    document["nodes"]["u"]["config"]["assignee"] = {"type": "role", "value": "ops"}
    exported = export_bpmn(document)
    assert element(exported, "u").get(f"{{{CAMUNDA}}}candidateGroups") == "ops"
    plain = copy.deepcopy(document)
    del plain["nodes"]["t"]["config"]["formRef"]
    exported = export_bpmn(plain)
    assert element(exported, "u").get(f"{{{CAMUNDA}}}candidateGroups") is None, "no vendor"


def test_a_flowdesk_document_gets_no_vendor_attributes() -> None:
    from tests.helpers.bpmn import full_document

    exported = export_bpmn(full_document())
    for namespace in (CAMUNDA, FLOWABLE, ACTIVITI, ZEEBE):
        assert f"{{{namespace}}}" not in json.dumps(
            [dict(e.attrib) for e in etree.fromstring(exported.encode()).iter()]
        )
        assert namespace not in exported


# --- forms --------------------------------------------------------------------------------------

CAMUNDA_FORM = """<{p}userTask id="t" camunda:assignee="demo"><{p}extensionElements>
  <camunda:formData>
    <camunda:formField id="amount" label="Amount" type="long" defaultValue="5">
      <camunda:validation><camunda:constraint name="required"/>
        <camunda:constraint name="min" config="1"/></camunda:validation>
    </camunda:formField>
    <camunda:formField id="note" label="Note" type="string"/>
  </camunda:formData></{p}extensionElements></{p}userTask>"""
FLOWABLE_FORM = """<{p}userTask id="t" flowable:assignee="kermit"><{p}extensionElements>
  <flowable:formProperty id="days" name="Days" type="long" required="true"/>
  <flowable:formProperty id="kind" name="Kind" type="enum">
    <flowable:value id="a" name="Annual"/><flowable:value id="s" name="Sick"/>
  </flowable:formProperty></{p}extensionElements></{p}userTask>"""


def form_of(exported: str) -> list[etree._Element]:
    task = element(exported, "t")
    return [
        child
        for container in task.iter(f"{{{BPMN}}}extensionElements")
        for child in container
        if etree.QName(child).localname in ("formData", "formProperty")
    ]


def fields(xml: str) -> list[dict[str, Any]]:
    return import_bpmn(xml).document["nodes"]["t"]["config"]["form"]["fields"]


@pytest.mark.parametrize("task", [CAMUNDA_FORM, FLOWABLE_FORM])
def test_an_untouched_form_is_written_back_verbatim(task: str) -> None:
    document = import_bpmn(wrap(task)).document
    exported = same_after_round_trip(document)
    source = wrap(task)
    assert [to_data(e) for e in form_of(exported)] == [to_data(e) for e in form_of(source)]
    assert form_of(exported)


def test_an_edited_camunda_form_is_written_as_form_data() -> None:
    document = import_bpmn(wrap(CAMUNDA_FORM)).document
    form = document["nodes"]["t"]["config"]["form"]["fields"]
    form[0]["max"] = 100  # the editor's shape: no `required: False`, no label when empty
    form[1] = {"key": "note", "type": "text", "required": True, "help": "Why?", "maxLength": 80}
    form.append({"key": "when", "type": "date"})
    form.append({"key": "ok", "type": "boolean", "default": True})
    form.append({"key": "kind", "label": "Kind", "type": "select", "options": [
        {"value": "a", "label": "A"}, {"value": "b", "label": "b"}]})  # fmt: skip
    exported = export_bpmn(document)
    [data] = form_of(exported)
    assert [(f.get("id"), f.get("type")) for f in data] == [
        ("amount", "long"),
        ("note", "string"),
        ("when", "date"),
        ("ok", "boolean"),
        ("kind", "enum"),
    ]
    constraints = {
        (f.get("id"), c.get("name"), c.get("config"))
        for f in data
        for c in f.iter(f"{{{CAMUNDA}}}constraint")
    }
    assert constraints == {
        ("amount", "required", None),
        ("amount", "min", "1"),
        ("amount", "max", "100"),
        ("note", "required", None),
        ("note", "maxlength", "80"),
    }
    assert fields(exported) == fields(export_bpmn(import_bpmn(exported).document))
    imported_again = import_bpmn(exported.replace(FLOWDESK, "urn:not-flowdesk")).document
    assert imported_again["nodes"]["t"]["config"]["form"]["fields"][1] == {
        "key": "note", "label": "note", "type": "text", "required": True, "help": "Why?",
        "maxLength": 80,
    }, "Camunda's form alone says the edited field"  # fmt: skip
    reads_back(document, exported)


def test_an_edited_flowable_form_is_written_as_form_properties() -> None:
    document = import_bpmn(wrap(FLOWABLE_FORM)).document
    form = document["nodes"]["t"]["config"]["form"]["fields"]
    form[0]["required"] = False
    form[1]["options"].append({"value": "p", "label": "Parental"})
    form.append({"key": "from", "label": "From", "type": "date", "default": "2027-01-01"})
    exported = export_bpmn(document)
    written = form_of(exported)
    assert [(p.get("id"), p.get("type"), p.get("required")) for p in written] == [
        ("days", "long", None),
        ("kind", "enum", None),
        ("from", "date", None),
    ]
    assert [v.get("id") for v in written[1]] == ["a", "s", "p"]
    assert written[2].get("default") == "2027-01-01"
    reads_back(document, exported)


@pytest.mark.parametrize(
    "field",
    [
        {"key": "rate", "type": "number"},  # Camunda 7 has no decimal field type
        {"key": "text", "type": "textarea"},
        {"key": "n", "type": "integer", "default": {"expr": "$vars.n"}},
        {"key": "s", "type": "text", "placeholder": "Type here"},
    ],
)
def test_a_form_a_vendor_cannot_say_exactly_is_not_written_at_all(field: dict[str, Any]) -> None:
    document = import_bpmn(wrap(CAMUNDA_FORM)).document
    document["nodes"]["t"]["config"]["form"]["fields"].append(field)
    exported = export_bpmn(document)
    assert form_of(exported) == [], "neither part of it nor the stale imported form"
    reads_back(document, exported)


def test_a_deleted_form_is_not_written_back() -> None:
    document = import_bpmn(wrap(CAMUNDA_FORM)).document
    del document["nodes"]["t"]["config"]["form"]
    exported = export_bpmn(document)
    assert form_of(exported) == []
    reads_back(document, exported)


# --- tool inputs --------------------------------------------------------------------------------

SERVICE = """<{p}serviceTask id="t" camunda:type="external" camunda:topic="crm">
  <{p}extensionElements><camunda:inputOutput>
    <camunda:inputParameter name="customer">${customerId}</camunda:inputParameter>
    <camunda:inputParameter name="mode">fast</camunda:inputParameter>
    <camunda:inputParameter name="map"><camunda:map><camunda:entry key="a">1</camunda:entry>
    </camunda:map></camunda:inputParameter>
    <camunda:outputParameter name="crm">${response}</camunda:outputParameter>
  </camunda:inputOutput></{p}extensionElements></{p}serviceTask>"""


def parameters(exported: str) -> list[tuple[str, str | None, str | None]]:
    return [
        (etree.QName(p).localname, p.get("name"), p.text if not len(p) else "<nested>")
        for p in element(exported, "t").iterfind(f".//{{{CAMUNDA}}}inputOutput/*")
    ]


def test_untouched_inputs_are_written_back_verbatim() -> None:
    document = import_bpmn(wrap(SERVICE)).document
    assert parameters(same_after_round_trip(document)) == [
        ("inputParameter", "customer", "${customerId}"),
        ("inputParameter", "mode", "fast"),
        ("inputParameter", "map", "<nested>"),
        ("outputParameter", "crm", "${response}"),
    ], "even the map import could not read"


def test_edited_inputs_are_written_as_input_parameters() -> None:
    document = import_bpmn(wrap(SERVICE)).document
    document["nodes"]["t"]["config"]["inputs"] = {
        "customer": "$vars.order.customer",
        "mode": "'slow'",
        "note": '"it\'s"',
    }
    exported = export_bpmn(document)
    assert parameters(exported) == [
        ("inputParameter", "customer", "${order.customer}"),
        ("inputParameter", "mode", "slow"),
        ("inputParameter", "note", "it's"),
        ("outputParameter", "crm", "${response}"),
    ], "the output still says saveTo: kept"
    reads_back(document, exported)
    document["nodes"]["t"]["config"]["saveTo"] = "other"
    exported = export_bpmn(document)
    assert [p[1] for p in parameters(exported)] == ["customer", "mode", "note"]
    reads_back(document, exported)


def test_inputs_a_vendor_cannot_say_exactly_are_not_written() -> None:
    document = import_bpmn(wrap(SERVICE)).document
    document["nodes"]["t"]["config"]["inputs"] = {"total": "$vars.a + 1"}
    exported = export_bpmn(document)
    assert parameters(exported) == []
    reads_back(document, exported)


# --- the exported file --------------------------------------------------------------------------


def everything_edited() -> str:
    tasks = [
        TASKS[d].replace('id="t"', f'id="{d}"') for d in ("camunda", "zeebe", "potentialOwner")
    ]
    xml = wrap("".join(tasks) + CAMUNDA_FORM.replace('id="t"', 'id="form"'))
    document = import_bpmn(xml).document
    for node_id in ("camunda", "zeebe", "potentialOwner"):
        document["nodes"][node_id]["config"].update(copy.deepcopy(ROLE_AND_USER))
    document["nodes"]["form"]["config"]["form"]["fields"].append({"key": "x", "type": "date"})
    return export_bpmn(document)


def test_an_edited_export_is_schema_valid() -> None:
    from tests.helpers.bpmn import bpmn_schema

    schema = bpmn_schema()
    assert schema.validate(etree.fromstring(everything_edited().encode())), schema.error_log


def test_an_edited_export_is_bpmn_moddle_clean(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    node = moddle_node()
    path = tmp_path / "edited.bpmn"
    path.write_text(everything_edited(), encoding="utf-8")
    output = subprocess.run(
        [
            node,
            str(repo / "tests/process/moddle_read.mjs"),
            str(repo / "static/js/flowdesk-moddle.json"),
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert output.returncode == 0, output.stdout + output.stderr
    assert json.loads(output.stdout) == {str(path): []}


# --- the corpus ---------------------------------------------------------------------------------

_ASSIGNING = ("assignee", "candidateGroups", "candidateUsers")


def vendor_assignments(root: etree._Element) -> dict[str, dict[str, str]]:
    """Every user task's vendor assignment attributes and elements, by task id."""
    found: dict[str, dict[str, str]] = {}
    for task in root.iter(f"{{{BPMN}}}userTask"):
        values = {
            str(name): str(value)
            for name, value in task.attrib.items()
            if etree.QName(name).localname in _ASSIGNING and etree.QName(name).namespace
        }
        for definition in task.iter(f"{{{ZEEBE}}}assignmentDefinition"):
            values.update({f"zeebe:{k}": v for k, v in definition.attrib.items()})
        for local in ("potentialOwner", "humanPerformer"):
            for item in task.iterfind(f"{{{BPMN}}}{local}"):
                values[local] = json.dumps(to_data(item), sort_keys=True)
        if values:
            found[str(task.get("id"))] = values
    return found


@pytest.mark.corpus
def test_corpus_assignments_come_back_as_the_files_wrote_them() -> None:
    """Every corpus file that imports: each user task's vendor assignment is exported as the
    source file had it (namespaces aside: the export declares its own prefixes)."""
    assert CORPUS is not None
    checked = 0
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".bpmn", ".xml") or not path.is_file():
            continue
        try:
            result = import_bpmn(path.read_bytes())
        except ValueError:
            continue
        source = vendor_assignments(etree.fromstring(path.read_bytes()))
        kept = {k: v for k, v in source.items() if k in result.document["nodes"]}
        if not kept:
            continue
        exported = vendor_assignments(etree.fromstring(export_bpmn(result.document).encode()))
        assert exported == kept, path
        checked += 1
    assert checked >= 8, checked


ZEEBE_SERVICE = """<{p}serviceTask id="t"><{p}extensionElements>
  <zeebe:taskDefinition type="mailer"/>
  <zeebe:ioMapping>
    <zeebe:input source="=order.email" target="to"/>
    <zeebe:input source="Welcome" target="subject"/>
    <zeebe:input source="=upper case(name)" target="title"/>
    <zeebe:output source="=messageId" target="messageId"/>
  </zeebe:ioMapping></{p}extensionElements></{p}serviceTask>"""


def zeebe_io(exported: str) -> list[tuple[str, str | None, str | None]]:
    return [
        (etree.QName(p).localname, p.get("target"), p.get("source"))
        for p in element(exported, "t").iterfind(f".//{{{ZEEBE}}}ioMapping/*")
    ]


def test_zeebe_inputs_are_written_back_verbatim_then_as_edited() -> None:
    document = import_bpmn(wrap(ZEEBE_SERVICE)).document
    written = [
        ("input", "to", "=order.email"),
        ("input", "subject", "Welcome"),
        ("input", "title", "=upper case(name)"),
        ("output", "messageId", "=messageId"),
    ]
    assert zeebe_io(same_after_round_trip(document)) == written, "FEEL import cannot read: kept"
    document["nodes"]["t"]["config"]["inputs"] = {"to": "$vars.customer.email", "subject": "'Hi'"}
    exported = export_bpmn(document)
    assert zeebe_io(exported) == [
        ("input", "subject", "Hi"),
        ("input", "to", "=customer.email"),
        ("output", "messageId", "=messageId"),
    ]
    reads_back(document, exported)


def test_candidate_expressions_are_written_back_where_the_dialect_says_them() -> None:
    """Camunda splits a candidate list and evaluates each part; Zeebe takes one FEEL
    expression for the whole list, which a list beside it cannot join, so it gets nothing."""
    candidates = {"roles": ["sales"], "rolesFrom": "$vars.extra", "usersFrom": "$vars.who"}
    config = {"assignee": {"type": "user", "value": "kermit"}, "candidates": candidates}
    document, exported = edited("camunda", **config)
    assert assignment(exported) == {
        "camunda:assignee": "kermit",
        "camunda:candidateGroups": "sales,${extra}",
        "camunda:candidateUsers": "${who}",
    }
    reads_back(document, exported)
    _, exported = edited("zeebe", **config)
    assert "zeebe:candidateGroups" not in assignment(exported)
