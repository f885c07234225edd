"""An imported file's text annotation, lane, group and data store are drawn in the designer and
survive a save (modelling-only elements are kept)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.bpmn import KEPT_FILE
from tests.helpers.browser import save, sign_in
from webapp.models import Process

pytestmark = pytest.mark.browser


def shape(page, element_id: str):
    return page.locator(f".djs-element[data-element-id={element_id}]")


def test_imported_annotation_and_lane_are_drawn_and_survive_a_save(
    page, demo, db_session, tmp_path
):
    path = tmp_path / "orders.bpmn"
    path.write_text(KEPT_FILE, encoding="utf-8")
    sign_in(page, "designer")
    page.goto("/designer/")
    page.get_by_role("link", name="Import BPMN").click()
    page.get_by_label("BPMN or JSON file").set_input_files(str(path))
    page.get_by_role("button", name="Import").click()
    kept = page.get_by_role("region", name="Kept as documentation only")
    expect(kept).to_contain_text("1 text annotation")
    page.get_by_role("link", name="Diagram").click()
    page.wait_for_selector("#designer[data-ready=true]")
    for element_id in ("Note", "LaneSales", "LaneOps", "SalesGroup", "StoreRef", "OrderRef"):
        expect(shape(page, element_id)).to_be_visible()
    expect(shape(page, "Note")).to_contain_text("Checked within a day & logged")
    expect(shape(page, "LaneSales")).to_contain_text("Sales")
    shape(page, "Note").click()
    expect(page.locator("#props")).to_contain_text("is a text annotation: documentation")
    page.evaluate(
        "modeler.get('commandStack').execute('element.updateLabel', "
        "{element: modeler.get('elementRegistry').get('check'), newLabel: 'Check it'})"
    )
    save(page)
    db_session.rollback()
    process = db_session.scalar(select(Process).where(Process.key == "orders"))
    assert process.draft_document["nodes"]["check"]["title"] == "Check it"
    kept = [item["tag"] for item in process.draft_document["kept"]["process"]]
    assert {"laneSet", "textAnnotation", "group", "dataStoreReference"} <= set(kept)
    page.reload()
    page.wait_for_selector("#designer[data-ready=true]")
    expect(shape(page, "Note")).to_contain_text("Checked within a day & logged")
    expect(shape(page, "LaneOps")).to_be_visible()
