"""bpmn-js opens Flowdesk's export of a structured process without warnings, draws collapsed
sub-processes on planes of their own, and what it saves back imports to the same document."""

from __future__ import annotations

import pytest

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import open_designer, save, sign_in
from tests.helpers.designer import get_process
from tests.helpers.documents import doc_without_calls
from webapp.process.bpmn import export_bpmn
from webapp.process.document import canonical_json

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process


def test_bpmn_js_reads_and_saves_a_structured_process_unchanged(page, make_process, db_session):
    doc = doc_without_calls()
    doc["nodes"]["late"]["config"]["interrupting"] = True  # defaults bpmn-js does not write
    doc["nodes"]["p_task"]["config"]["multiInstance"]["sequential"] = False
    pid = make_process("order-flow", doc=doc)
    before = get_process(db_session, pid).draft_document
    sign_in(page, "designer")
    open_designer(page, pid)
    warnings = page.evaluate(
        "async (xml) => (await modeler.importXML(xml)).warnings.map((w) => w.message)",
        export_bpmn(before),
    )
    assert warnings == []
    registry = "modeler.get('elementRegistry')"
    assert page.evaluate(f"{registry}.get('review').collapsed === false")
    assert page.evaluate(f"{registry}.get('pack').collapsed === true")
    assert page.evaluate(f"{registry}.get('p_task').parent.id") == "pack_plane"
    assert page.evaluate(f"{registry}.get('remind').host.id") == "r_check"
    assert page.evaluate(f"{registry}.get('r_check').parent.id") == "review"
    page.evaluate("modeler.get('commandStack').execute('element.updateLabel', "
                  f"{{element: {registry}.get('end'), newLabel: 'Done'}})")  # fmt: skip
    save(page)
    after = get_process(db_session, pid).draft_document
    assert after["nodes"]["end"]["title"] == "Done"
    after["nodes"]["end"]["title"] = before["nodes"]["end"]["title"]
    assert canonical_json(after) == canonical_json(before)


def test_bpmn_js_reads_and_saves_gateways_events_and_task_types_unchanged(
    page, make_process, db_session
):
    """Gateways, signal/message/link/none events, event starts and the new task types come
    back from bpmn-js as they went in."""
    from tests.helpers.bpmn import events_document

    pid = make_process("events", doc=events_document())
    before = get_process(db_session, pid).draft_document
    sign_in(page, "designer")
    open_designer(page, pid)
    warnings = page.evaluate(
        "async (xml) => (await modeler.importXML(xml)).warnings.map((w) => w.message)",
        export_bpmn(before),
    )
    assert warnings == []
    registry = "modeler.get('elementRegistry')"
    assert page.evaluate(f"{registry}.get('race').type") == "bpmn:EventBasedGateway"
    assert page.evaluate(f"{registry}.get('calc').businessObject.scriptFormat") == "flowdesk"
    page.evaluate("modeler.get('commandStack').execute('element.updateLabel', "
                  f"{{element: {registry}.get('got'), newLabel: 'Received'}})")  # fmt: skip
    save(page)
    after = get_process(db_session, pid).draft_document
    assert after["nodes"]["got"]["title"] == "Received"
    after["nodes"]["got"]["title"] = before["nodes"]["got"]["title"]
    assert canonical_json(after) == canonical_json(before)
