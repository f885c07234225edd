"""Designer pages open a draft with sub-processes, boundary events and call activities."""

from __future__ import annotations

import copy

from tests.helpers.bpmn import structured_document
from tests.helpers.designer import get_process, publish_now
from tests.helpers.documents import doc_without_calls
from webapp.process.bpmn import import_bpmn
from webapp.services import processes


def test_editor_outline_publish_and_diff_pages_open_a_structured_draft(
    designer, make_process, db_session
):
    doc = structured_document()
    doc["nodes"]["ot_end"]["config"]["code"] = "LATE"
    doc["nodes"]["p_task"]["config"].update(tool="noop", inputs={})
    publish_now(db_session, make_process("shipping", doc=doc_without_calls()))
    doc["nodes"]["call"]["config"]["version"] = 1
    pid = make_process("order-flow", doc=doc)
    process = get_process(db_session, pid)
    assert [p for p in process.draft_problems if p["severity"] == "error"] == []
    assert import_bpmn(process.draft_xml).document == process.draft_document
    for path in ("/", "/outline", "/publish", "/versions"):
        response = designer.get(f"/designer/{pid}{path}")
        assert response.status_code == 200, path
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    assert "Review" in page and "Ship" in page
    publish_now(db_session, pid)
    process = get_process(db_session, pid)
    changed = copy.deepcopy(process.draft_document)
    changed["nodes"]["r_check"]["title"] = "Check twice"
    processes.save_draft(process, changed, base_revision=process.draft_revision, actor=None)
    db_session.commit()
    publish_now(db_session, pid)
    compare = designer.get(f"/designer/{pid}/compare?a=1&b=2")
    assert compare.status_code == 200
    assert "r_check" in compare.get_data(as_text=True)
    for node_id in ("review", "call", "remind", "oc_start", "r_check"):
        response = designer.get(f"/designer/{pid}/outline/{node_id}")
        assert response.status_code < 500, node_id


def test_the_panel_and_outline_edit_structured_settings(designer, make_process, db_session):
    pid = make_process("order-flow", doc=doc_without_calls())
    page = designer.get(f"/designer/{pid}/panel?id=review&kind=subProcess")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "Sub-process" in text and "Multi-instance" in text and "does not run" not in text
    page = designer.get(f"/designer/{pid}/outline/review")
    assert page.status_code == 200
    assert "Multi-instance" in page.get_data(as_text=True)
