"""Saving the canvas: the posted XML becomes the draft, or is refused with nothing changed."""

import json
import re

from tests.helpers.designer import get_process, save_xml, token
from tests.helpers.documents import approval_document, xml_of
from webapp.process.bpmn import import_bpmn
from webapp.process.kinds import KINDS


def test_a_save_stores_the_posted_diagram_and_returns_the_problems(
    designer, make_process, db_session
):
    pid = make_process("invoice", doc=approval_document())
    doc = approval_document(key="invoice", name="Invoice")
    del doc["flows"]["f4"]["default"]
    xml = xml_of(doc).replace("<bpmn:userTask", "<!-- drawn --><bpmn:userTask")
    response = save_xml(designer, pid, xml, revision=1)
    assert response.status_code == 200
    body = response.get_json()
    assert body["revision"] == 2
    codes = {(p["code"], p["element_id"], p["severity"]) for p in body["problems"]}
    assert ("gateway.condition_missing", "ok", "error") in codes
    assert body["unsupported"] == []
    process = get_process(db_session, pid)
    assert process.draft_revision == 2
    assert process.draft_xml == xml
    assert import_bpmn(process.draft_xml).document == process.draft_document
    assert process.draft_problems == [p for p in body["problems"]]
    assert float(re.search(r"save;dur=([\d.]+)", response.headers["Server-Timing"]).group(1)) > 0


def test_a_stale_revision_gets_409_and_changes_nothing(designer, make_process, db_session):
    pid = make_process(doc=approval_document())
    assert save_xml(designer, pid, xml_of(approval_document()), revision=1).status_code == 200
    other = approval_document()
    other["nodes"]["review"]["title"] = "Overwrite?"
    response = save_xml(designer, pid, xml_of(other), revision=1)
    assert response.status_code == 409
    assert response.get_json()["error"] == "draft.stale"
    assert "Reload" in response.get_json()["message"]
    assert response.get_json()["revision"] == 2
    process = get_process(db_session, pid)
    assert process.draft_revision == 2
    assert process.draft_document["nodes"]["review"]["title"] == "Review"


def test_malformed_xml_gets_400_with_the_line(designer, make_process, db_session):
    pid = make_process(doc=approval_document())
    broken = xml_of(approval_document()).replace("</bpmn:process>", "</bpmn:proces>")
    response = save_xml(designer, pid, broken, revision=1)
    body = response.get_json()
    assert response.status_code == 400
    assert body["error"] == "import.malformed"
    assert body["line"] == broken[: broken.index("</bpmn:proces>")].count("\n") + 1
    assert f"line {body['line']}" in body["message"]
    assert get_process(db_session, pid).draft_revision == 1


def test_xml_with_a_dtd_is_refused(designer, make_process, db_session):
    pid = make_process()
    evil = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'
    response = save_xml(designer, pid, evil, revision=1)
    assert response.status_code == 400
    assert "DTD" in response.get_json()["message"]


def test_unsupported_elements_are_listed_and_nothing_is_saved(designer, make_process, db_session):
    pid = make_process(doc=approval_document())
    xml = xml_of(approval_document()).replace(
        "</bpmn:process>", '<bpmn:callChoreography id="Sub_1" name="Inner"/></bpmn:process>'
    )
    response = save_xml(designer, pid, xml, revision=1)
    body = response.get_json()
    assert response.status_code == 422
    assert body["error"] == "import.unsupported"
    assert [(u["id"], u["type"]) for u in body["unsupported"]] == [("Sub_1", "callChoreography")]
    assert "nothing was saved" in body["message"]
    assert get_process(db_session, pid).draft_revision == 1


def test_an_unknown_node_kind_is_refused(designer, make_process, db_session):
    pid = make_process(doc=approval_document())
    doc = approval_document()
    doc["nodes"]["review"]["kind"] = "robotTask"
    response = save_xml(designer, pid, xml_of(doc), revision=1)
    assert response.status_code == 422
    assert "unknown kind 'robotTask'" in response.get_json()["message"]
    assert get_process(db_session, pid).draft_revision == 1


def test_a_save_without_a_revision_or_csrf_token_is_refused(designer, make_process):
    pid = make_process()
    xml = xml_of(approval_document())
    csrf = token(designer, f"/designer/{pid}/")
    no_revision = designer.post(
        f"/designer/{pid}/save",
        data=xml,
        headers={"X-CSRFToken": csrf, "Accept": "application/json"},
    )
    assert no_revision.status_code == 400
    assert no_revision.get_json()["error"] == "revision.missing"
    no_csrf = designer.post(f"/designer/{pid}/save", data=xml, headers={"X-Draft-Revision": "1"})
    assert no_csrf.status_code == 400


def test_another_partition_is_404_and_no_permission_is_403(make_process, user_with, db_session):
    pid = make_process("hr-process", "hr")
    outsider = user_with(["processes.edit"], ["finance"])
    xml = xml_of(approval_document())
    assert save_xml(outsider, pid, xml, revision=1, csrf=token(outsider)).status_code == 404
    assert outsider.get(f"/designer/{pid}/").status_code == 404
    reader = user_with(["instances.read"], ["hr"])
    assert save_xml(reader, pid, xml, revision=1, csrf=token(reader, "/")).status_code == 403
    assert get_process(db_session, pid).draft_revision == 1


def test_a_diagram_naming_another_process_is_stored_under_this_ones_key(
    designer, make_process, db_session
):
    pid = make_process("invoice", doc=approval_document())
    foreign = xml_of({**approval_document(), "key": "other", "name": "Other"})
    assert save_xml(designer, pid, foreign, revision=1).status_code == 200
    process = get_process(db_session, pid)
    assert process.draft_document["key"] == "invoice"
    assert import_bpmn(process.draft_xml).document == process.draft_document


def test_the_editor_page_embeds_the_draft_and_its_problems(designer, make_process):
    pid = make_process(doc=approval_document())
    page = designer.get(f"/designer/{pid}/").get_data(as_text=True)
    assert 'id="draft-xml"' in page and 'id="flowdesk-moddle"' in page
    assert 'data-revision="1"' in page
    assert "bpmn-modeler.production.min.js" in page
    assert "https://flowdesk.dev/schema/bpmn/1.0" in page


def test_the_stored_draft_keeps_node_and_flow_order(designer, make_process, db_session):
    doc = approval_document(key="invoice", name="Invoice")
    doc["nodes"] = {k: doc["nodes"][k] for k in ("rejected", "start", "ok", "review", "done")}
    doc["flows"] = {k: doc["flows"][k] for k in ("f4", "f3", "f2", "f1")}
    pid = make_process("invoice")
    assert save_xml(designer, pid, xml_of(doc), revision=1).status_code == 200
    stored = get_process(db_session, pid).draft_document
    assert list(stored["nodes"]) == ["rejected", "start", "ok", "review", "done"]
    assert list(stored["flows"]) == ["f4", "f3", "f2", "f1"]


def test_the_editor_page_gives_the_canvas_the_kind_table(designer, make_process):
    pid = make_process(doc=approval_document())
    page = designer.get(f"/designer/{pid}/").get_data(as_text=True)
    block = re.search(
        r'<script type="application/json" id="flowdesk-kinds">(.*?)</script>', page, re.S
    )
    assert block is not None
    table = json.loads(block.group(1))
    assert set(table["kinds"]) == set(KINDS)
    assert table["kinds"]["timerCatch"]["type"] == "bpmn:IntermediateCatchEvent"
    assert table["kinds"]["timerCatch"]["event"] == "timer"
    assert table["kinds"]["milestone"]["event"] == ""
    assert table["kinds"]["eventSubProcess"] == {
        "type": "bpmn:SubProcess",
        "role": "task",
        "event": None,
        "marks": {"triggeredByEvent": "true"},
        "messageRef": False,
        "configKeys": ["collapsed"],
        "palette": [
            {
                "action": "event-subprocess",
                "group": "activity",
                "order": 21,
                "icon": "bpmn-icon-event-subprocess-expanded",
                "title": "Create event sub-process (started by a timer, message, error or "
                "escalation)",
                "event": "",
                "startInside": "timer",
            }
        ],
        "replace": ["event-subprocess"],
        "scopedReplace": [],
    }
    assert "non-interrupting-timer-start" in table["kinds"]["startEvent"]["scopedReplace"]
    assert table["definitions"]["escalation"] == "bpmn:EscalationEventDefinition"
    assert table["events"]["end"][0] == ""
    assert "receiveTask" in table["multiInstance"]
