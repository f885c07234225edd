"""Importing .bpmn/.json files as new processes or drafts; nothing is saved half-way."""

import html
import json
import re
import time

from sqlalchemy import func, select

from tests.helpers.bpmn import KEPT_FILE
from tests.helpers.designer import finance, get_process, save_xml, token, upload
from tests.helpers.documents import approval_document, xml_of
from tests.helpers.layout_shapes import bpmn_file, fan
from webapp.models import Partition, Process


def count(db_session):
    return db_session.scalar(select(func.count(Process.id)))


def test_import_a_bpmn_file_as_a_new_process(designer, db_session):
    xml = xml_of(approval_document(key="imported", name="Imported process")).encode()
    response = upload(designer, "/designer/import", xml, partition=finance(db_session))
    process = db_session.scalar(select(Process).where(Process.key == "imported"))
    assert response.status_code == 302
    assert response.headers["Location"] == f"/designer/{process.id}/import-report"
    assert process.name == "Imported process"
    assert set(process.draft_document["nodes"]) == set(approval_document()["nodes"])
    page = designer.get(response.headers["Location"]).get_data(as_text=True)
    assert "Imported 5 nodes and 4 flows" in page


def test_import_a_json_export_with_a_new_key(designer, db_session):
    doc = json.dumps(approval_document(key="x")).encode()
    response = upload(
        designer,
        "/designer/import",
        doc,
        "p.json",
        key="copy",
        name="Copy",
        partition=finance(db_session),
    )
    assert response.status_code == 302
    assert db_session.scalar(select(Process.name).where(Process.key == "copy")) == "Copy"


def test_malformed_and_unsafe_files_are_refused_with_the_line(designer, db_session):
    cases = [
        (b'<?xml version="1.0"?>\n<bpmn:definitions xmlns:bpmn="x">\n<a></b>', 400, "line 3"),
        (b'<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>', 400, "DTD"),
        (b"<root/>", 400, "Not a BPMN 2.0 file"),
        (b'{"nodes": {"a": {"kind": "robotTask"}}}', 422, "unknown kind"),
        (b'{"nodes": ', 422, "Invalid JSON at line 1"),
        (b"", 400, "The file is empty"),
    ]
    for content, status, message in cases:
        response = upload(designer, "/designer/import", content, partition=finance(db_session))
        assert response.status_code == status, content
        assert message in response.get_data(as_text=True), (content, message)
    no_file = designer.post(
        "/designer/import", data={"csrf_token": token(designer), "partition": finance(db_session)}
    )
    assert no_file.status_code == 422
    assert "Choose a .bpmn file." in no_file.get_data(as_text=True)
    assert count(db_session) == 0


def test_unsupported_elements_are_listed_and_imported_only_when_allowed(designer, db_session):
    xml = xml_of(approval_document(key="partial")).replace(
        "</bpmn:process>", '<bpmn:callChoreography id="Sub_1"/></bpmn:process>'
    )
    refused = upload(designer, "/designer/import", xml.encode(), partition=finance(db_session))
    assert refused.status_code == 422
    html = refused.get_data(as_text=True)
    assert "<code>callChoreography</code> <code>Sub_1</code>" in html
    assert "nothing was saved" in html
    assert count(db_session) == 0
    allowed = upload(
        designer,
        "/designer/import",
        xml.encode(),
        partition=finance(db_session),
        allow_unsupported="y",
    )
    assert allowed.status_code == 302
    page = designer.get(allowed.headers["Location"]).get_data(as_text=True)
    assert "Left out: callChoreography &#39;Sub_1&#39;" in page


def test_an_import_with_a_taken_key_creates_nothing(designer, make_process, db_session):
    make_process("invoice")
    xml = xml_of(approval_document(key="invoice")).encode()
    response = upload(designer, "/designer/import", xml, partition=finance(db_session))
    assert response.status_code == 422
    assert "exists" in response.get_data(as_text=True)
    assert count(db_session) == 1


def test_import_a_file_as_the_new_draft_of_a_process(designer, make_process, db_session):
    pid = make_process()
    doc = approval_document()
    doc["nodes"]["review"]["title"] = "From the file"
    path = f"/designer/{pid}/import"
    stale = upload(designer, path, xml_of(doc).encode(), revision="0")
    assert stale.status_code == 409
    assert get_process(db_session, pid).draft_revision == 1
    response = upload(designer, path, xml_of(doc).encode(), revision="1")
    assert response.status_code == 302
    process = get_process(db_session, pid)
    assert process.draft_revision == 2
    assert process.draft_document["nodes"]["review"]["title"] == "From the file"
    assert process.draft_document["key"] == "invoice"
    bad = upload(designer, path, b"<broken", revision="2")
    assert bad.status_code == 400
    assert get_process(db_session, pid).draft_revision == 2


def test_imports_are_partition_scoped(user_with, make_process, db_session):
    pid = make_process("hr-process", "hr")
    outsider = user_with(["processes.edit"], ["finance"])
    assert outsider.get(f"/designer/{pid}/import").status_code == 404
    hr = db_session.scalar(select(Partition.id).where(Partition.key == "hr"))
    xml = xml_of(approval_document(key="elsewhere")).encode()
    assert upload(outsider, "/designer/import", xml, partition=hr).status_code == 422
    assert db_session.scalar(select(Process).where(Process.key == "elsewhere")) is None


def test_modelling_only_elements_are_imported_kept_and_given_to_the_viewer(designer, db_session):
    response = upload(
        designer, "/designer/import", KEPT_FILE.encode(), partition=finance(db_session)
    )
    assert response.status_code == 302, response.get_data(as_text=True)
    process = db_session.scalar(select(Process).where(Process.key == "orders"))
    assert [item["tag"] for item in process.draft_document["kept"]["process"]][-3:] == [
        "textAnnotation",
        "association",
        "group",
    ]
    page = designer.get(response.headers["Location"]).get_data(as_text=True)
    assert "Left out" not in page
    for drawn in ('bpmnElement="Note"', 'bpmnElement="LaneSales"', 'bpmnElement="StoreRef"'):
        assert drawn in process.draft_xml
    xml = designer.get(f"/designer/{process.id}/draft.bpmn").get_data(as_text=True)
    assert "Checked within a day &amp; logged" in xml and 'bpmnElement="SalesGroup"' in xml


def test_empty_processes_and_duplicate_ids_are_refused_saying_why(designer, db_session):
    empty = (
        KEPT_FILE.split("<semantic:process")[0]
        + '<semantic:process id="empty"/>\n</semantic:definitions>'
    )
    duplicate = KEPT_FILE.replace('<semantic:endEvent id="done"', '<semantic:endEvent id="check"')
    line = duplicate.splitlines().index(
        next(x for x in duplicate.splitlines() if 'endEvent id="check"' in x)
    )
    cases = [
        (empty, f"line {empty.count(chr(10))}", "Process &#39;empty&#39; has no flow nodes"),
        (duplicate, f"line {line + 1}", "The id &#39;check&#39; is used by more than one"),
    ]
    for content, where, message in cases:
        response = upload(
            designer, "/designer/import", content.encode(), partition=finance(db_session)
        )
        html = response.get_data(as_text=True)
        assert response.status_code == 400
        assert message in html and where in html, (message, where)
    assert count(db_session) == 0


CAMUNDA_FILE = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
  xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="x">
  <bpmn:process id="leave" name="Leave" isExecutable="true">
    <bpmn:startEvent id="s"/>
    <bpmn:userTask id="approve" name="Approve" camunda:assignee="demo"/>
    <bpmn:endEvent id="e"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="approve"/>
    <bpmn:sequenceFlow id="f2" sourceRef="approve" targetRef="e"/>
  </bpmn:process>
</bpmn:definitions>"""


def test_an_assignment_edited_in_the_designer_reaches_the_exported_camunda_file(
    designer, db_session
):
    """Import a Camunda 7 file, change the task's assignee in the panel (the canvas then posts
    its XML with only `<flowdesk:config>` changed), save, export: Camunda's attributes say it."""
    upload(designer, "/designer/import", CAMUNDA_FILE.encode(), partition=finance(db_session))
    process = db_session.scalar(select(Process).where(Process.key == "leave"))
    exported = designer.get(f"/designer/{process.id}/draft.bpmn").get_data(as_text=True)
    assert 'camunda:assignee="demo"' in exported, "an untouched import exports as it came"
    config = process.draft_document["nodes"]["approve"]["config"]
    edited = dict(config, assignee={"type": "role", "value": "accounting"})
    blob = re.search(r"<flowdesk:config>(.*?)</flowdesk:config>", exported).group(1)
    assert json.loads(html.unescape(blob)) == config
    canvas = exported.replace(blob, html.escape(json.dumps(edited), quote=False))
    saved = save_xml(designer, process.id, canvas, revision=process.draft_revision)
    assert saved.status_code == 200, saved.get_data(as_text=True)
    db_session.refresh(process)
    assert process.draft_document["nodes"]["approve"]["config"]["assignee"]["value"] == "accounting"
    exported = designer.get(f"/designer/{process.id}/draft.bpmn").get_data(as_text=True)
    assert 'camunda:candidateGroups="accounting"' in exported
    assert "camunda:assignee" not in exported, "the value edited away is not written"


def test_a_wide_fan_out_without_diagram_imports_in_bounded_time(designer, db_session):
    """A file with no diagram data is laid out on import: a 1,000-way parallel split once tied
    up the web worker for minutes (the layout's work is bounded now)."""
    xml = bpmn_file(fan(1000)).encode()
    began = time.perf_counter()
    response = upload(designer, "/designer/import", xml, key="wide", partition=finance(db_session))
    seconds = time.perf_counter() - began
    assert response.status_code == 302
    assert seconds < 20, f"took {seconds:.1f} s"
    process = db_session.scalar(select(Process).where(Process.key == "wide"))
    nodes = process.draft_document["nodes"]
    assert len(nodes) == 1004 and all("position" in node for node in nodes.values())
    assert all(len(f["waypoints"]) >= 2 for f in process.draft_document["flows"].values())
