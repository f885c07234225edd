"""Call activities are checked against the processes the draft's partition may call: saving shows
the problem on the element, publishing refuses it."""

from __future__ import annotations

from typing import Any

from tests.helpers.designer import get_process, publish, publish_now, save_xml, versions
from webapp.process.bpmn import export_bpmn
from webapp.services import processes


def caller(**call: Any) -> dict[str, Any]:
    """start -> call activity -> end."""
    return {
        "format_version": 1,
        "nodes": {
            "start": {"kind": "startEvent"},
            "ship": {"kind": "callActivity", "title": "Ship", "config": call},
            "end": {"kind": "endEvent"},
        },
        "flows": {
            "f1": {"source": "start", "target": "ship"},
            "f2": {"source": "ship", "target": "end"},
        },
    }


def callee() -> dict[str, Any]:
    return {
        "format_version": 1,
        "nodes": {"s": {"kind": "startEvent"}, "e": {"kind": "endEvent"}},
        "flows": {"f": {"source": "s", "target": "e"}},
    }


def call_problems(db_session, process_id: int) -> list[tuple[str, str, str]]:
    process = get_process(db_session, process_id)
    return [
        (p["severity"], p["code"], p["element_id"])
        for p in process.draft_problems
        if p["code"].startswith("call.")
    ]


def resave(db_session, process_id: int) -> None:
    process = get_process(db_session, process_id)
    processes.save_draft(
        process, process.draft_document, base_revision=process.draft_revision, actor=None
    )
    db_session.commit()


def test_an_unknown_called_process_is_an_error_and_blocks_publishing(
    designer, make_process, db_session
):
    pid = make_process("order-flow", doc=caller(process="shipping"))
    assert call_problems(db_session, pid) == [("error", "call.process_unknown", "ship")]
    page = designer.get(f"/designer/{pid}/publish").get_data(as_text=True)
    assert "calls process &#39;shipping&#39;, which is not published" in page
    response = publish(designer, pid)
    assert response.status_code == 422
    assert versions(db_session, pid) == []


def test_a_published_process_of_the_same_partition_or_none_can_be_called(
    designer, make_process, db_session
):
    pid = make_process("order-flow", doc=caller(process="shipping"))
    shipping = make_process("shipping", doc=callee())
    assert call_problems(db_session, pid) == [("error", "call.process_unknown", "ship")]
    resave(db_session, pid)  # a draft is not enough: it must be published
    assert call_problems(db_session, pid) == [("error", "call.process_unknown", "ship")]
    publish_now(db_session, shipping)
    resave(db_session, pid)
    assert call_problems(db_session, pid) == []
    revision = get_process(db_session, pid).draft_revision
    assert publish(designer, pid, revision=revision).status_code == 302
    assert len(versions(db_session, pid)) == 1
    shared = make_process("labels", partition=None, doc=callee())
    publish_now(db_session, shared)
    other = make_process("order-flow-2", doc=caller(process="labels"))
    assert call_problems(db_session, other) == []


def test_processes_of_another_partition_cannot_be_called(make_process, db_session):
    hr = make_process("hiring", partition="hr", doc=callee())
    publish_now(db_session, hr)
    pid = make_process("order-flow", doc=caller(process="hiring"))
    assert call_problems(db_session, pid) == [("error", "call.process_unknown", "ship")]
    finance = make_process("billing", doc=callee())
    publish_now(db_session, finance)
    open_process = make_process("open-flow", partition=None, doc=caller(process="billing"))
    assert call_problems(db_session, open_process) == [("error", "call.process_unknown", "ship")]


def test_a_pinned_version_must_exist(make_process, db_session):
    shipping = make_process("shipping", doc=callee())
    publish_now(db_session, shipping)
    pid = make_process("order-flow", doc=caller(process="shipping", binding="version", version=2))
    assert call_problems(db_session, pid) == [("error", "call.version_unknown", "ship")]
    process = get_process(db_session, pid)
    doc = caller(process="shipping", binding="version", version=1)
    processes.save_draft(process, doc, base_revision=process.draft_revision, actor=None)
    db_session.commit()
    assert call_problems(db_session, pid) == []


def test_a_call_cycle_warns_but_publishes(designer, make_process, db_session):
    pid = make_process("order-flow", doc=callee())
    publish_now(db_session, pid)
    shipping = make_process("shipping", doc=caller(process="order-flow"))
    assert call_problems(db_session, shipping) == []
    publish_now(db_session, shipping)
    process = get_process(db_session, pid)
    processes.save_draft(
        process, caller(process="shipping"), base_revision=process.draft_revision, actor=None
    )
    db_session.commit()
    assert call_problems(db_session, pid) == [("warning", "call.cycle", "ship")]
    revision = get_process(db_session, pid).draft_revision
    assert publish(designer, pid, revision=revision).status_code == 302
    assert len(versions(db_session, pid)) == 2


def test_the_canvas_save_reports_the_unknown_process_on_the_element(
    designer, make_process, db_session
):
    pid = make_process("order-flow", doc=caller(process="shipping"))
    xml = export_bpmn(caller(process="nowhere"))
    response = save_xml(designer, pid, xml, revision=1)
    assert response.status_code == 200
    problems = response.get_json()["problems"]
    assert {(p["code"], p["element_id"]) for p in problems} >= {("call.process_unknown", "ship")}


def test_an_info_is_shown_as_a_note_and_does_not_block_publishing(
    designer, make_process, db_session
):
    doc = callee()
    doc["nodes"]["work"] = {"kind": "serviceTask", "title": "Work", "config": {"tool": "noop"}}
    doc["nodes"]["failed"] = {
        "kind": "boundaryEvent",
        "title": "Failed",
        "config": {"attachedTo": "work", "event": "error", "code": "E1"},
    }
    doc["flows"] = {
        "f1": {"source": "s", "target": "work"},
        "f2": {"source": "work", "target": "e"},
        "f3": {"source": "failed", "target": "e"},
    }
    pid = make_process("order-flow", doc=doc)
    [problem] = get_process(db_session, pid).draft_problems
    assert (problem["severity"], problem["code"]) == ("info", "error.never_thrown")
    page = designer.get(f"/designer/{pid}/publish").get_data(as_text=True)
    assert '<span class="severity">Note</span>' in page
    assert publish(designer, pid).status_code == 302
