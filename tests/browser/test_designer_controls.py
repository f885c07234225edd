"""Designer polish in Chromium: publish and outline safeguards, the live condition check, zoom
controls and tooltips, label and flow clicks, and room for appended shapes."""

from __future__ import annotations

import copy

import pytest

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import (
    click_flow,
    click_shape,
    open_designer,
    pad,
    panel_for,
    sign_in,
    wait_selected,
    wait_until,
)
from tests.helpers.designer import get_process
from tests.helpers.documents import approval_document
from webapp.services import processes

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process


def test_publish_says_up_front_when_nothing_changed(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/publish")
    page.get_by_label("Change note").fill("First")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")
    page.goto(f"/designer/{pid}/publish")
    assert page.get_by_text("the draft is the same as version 1").is_visible()
    assert page.get_by_role("button", name="Publish version 2").count() == 0
    assert page.get_by_role("link", name="Open the designer").is_visible()


def test_outline_connect_defaults_apart_and_delete_asks_first(page, make_process, db_session):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/outline")
    source = page.get_by_label("From", exact=True).input_value()
    target = page.get_by_label("To", exact=True).input_value()
    assert source and target and source != target

    questions = []

    def dismiss(dialog):
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.get_by_role("button", name="Delete Review").click()
    assert questions == ["Delete “Review” and its flows?"]
    assert "review" in get_process(db_session, pid).draft_document["nodes"]

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete Review").click()
    page.wait_for_selector("#node-review", state="detached")
    db_session.expire_all()
    assert "review" not in get_process(db_session, pid).draft_document["nodes"]


def test_the_condition_check_names_data_that_no_step_saves(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_flow(page, "f3", at=0.85)
    panel = panel_for(page, "f3")
    condition = panel.get_by_label("Condition", exact=True)
    condition.fill("")
    condition.press_sequentially("$vars.aproval.approved")
    check = page.locator("#condition-check")
    wait_until(page, "document.getElementById('condition-check').textContent.includes('aproval')")
    assert "no step in the process saves its result to 'aproval'" in check.inner_text()
    assert "Valid expression" not in check.inner_text()
    condition.fill("")
    condition.press_sequentially("$vars.review.approved")
    wait_until(page, "document.getElementById('condition-check').textContent.includes('Valid')")


def publish_two_versions(db_session, pid: int) -> None:
    """v1 as given, v2 with the review task renamed and moved (through the service)."""
    process = get_process(db_session, pid)
    processes.publish(process, actor=None, note="First")
    doc = copy.deepcopy(process.draft_document)
    doc["nodes"]["review"]["title"] = "Review the claim"
    doc["nodes"]["review"]["position"]["y"] += 40
    processes.save_draft(process, doc, base_revision=process.draft_revision, actor=None)
    processes.publish(process, actor=None, note="Second")
    db_session.commit()


ZOOM = "window.viewers['{}'].get('canvas').zoom()"
SHAPES_INSIDE = """([selector, margin]) => {
  const box = document.querySelector(selector).getBoundingClientRect();
  const out = [];
  document.querySelectorAll(`${selector} .djs-shape`).forEach((shape) => {
    const r = shape.getBoundingClientRect();
    if (r.left < box.left + margin || r.right > box.right - margin
        || r.top < box.top + margin || r.bottom > box.bottom - margin) {
      out.push(shape.dataset.elementId);
    }
  });
  return out;
}"""


def test_designer_zoom_buttons_and_palette_tooltips(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    zoom = "modeler.get('canvas').zoom()"
    start = page.evaluate(zoom)
    page.get_by_role("button", name="Zoom in").click()
    assert page.evaluate(zoom) > start * 1.1
    page.get_by_role("button", name="Zoom out").click()
    page.get_by_role("button", name="Zoom out").click()
    assert page.evaluate(zoom) < start
    page.get_by_role("button", name="Reset zoom to 100 %").click()
    assert abs(page.evaluate(zoom) - 1) < 0.01
    for _ in range(4):
        page.get_by_role("button", name="Zoom in").click()
    page.get_by_role("button", name="Fit the diagram").click()
    assert page.evaluate(SHAPES_INSIDE, ["#canvas", 8]) == []
    palette_right = page.locator(".djs-palette").bounding_box()
    start_box = page.locator('.djs-shape[data-element-id="start"]').bounding_box()
    assert start_box["x"] > palette_right["x"] + palette_right["width"], "clear of the palette"

    user_task = page.locator('.djs-palette .entry[data-action="create.user-task"]')
    assert user_task.get_attribute("title") == "Create user task"
    assert user_task.get_attribute("aria-label") == "Create user task"
    unnamed = page.evaluate(
        "Array.from(document.querySelectorAll('.djs-palette .entry'))"
        ".filter(e => !e.getAttribute('title') || !e.getAttribute('aria-label')).length"
    )
    assert unnamed == 0


def test_version_and_compare_views_fit_with_room_and_zoom(page, make_process, db_session):
    pid = make_process(doc=approval_document())
    publish_two_versions(db_session, pid)
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/versions/1")
    page.wait_for_selector("[data-viewer=version-xml][data-ready=true]")
    before = page.evaluate(ZOOM.format("version-xml"))
    page.get_by_role("button", name="Zoom in").click()
    assert page.evaluate(ZOOM.format("version-xml")) > before
    page.get_by_role("button", name="Fit the diagram").click()
    assert page.evaluate(SHAPES_INSIDE, ["[data-viewer=version-xml]", 8]) == []

    page.goto(f"/designer/{pid}/compare")
    for side in ("old-diagram", "new-diagram"):
        page.wait_for_selector(f"[data-viewer={side}][data-ready=true]")
        cropped = page.evaluate(SHAPES_INSIDE, [f"[data-viewer={side}]", 8])
        assert cropped == [], f"{side}: {cropped} touch or cross the edge"
        zoom_in = page.locator(f"[data-viewer={side}]").get_by_role("button", name="Zoom in")
        before = page.evaluate(ZOOM.format(side))
        zoom_in.click()
        assert page.evaluate(ZOOM.format(side)) > before
    differences = page.locator("main").inner_text()
    assert "Review the claim" in differences
    assert page.locator(".djs-connection.diff-moved").count() == 0, (
        "the flows only followed the moved task"
    )


LABEL_CENTRE = """(id) => {
  const label = modeler.get('elementRegistry').get(id).label;
  const r = document.querySelector(`.djs-element[data-element-id="${label.id}"]`)
    .getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2};
}"""

BESIDE_FLOW = """([id, units]) => {
  const canvas = modeler.get('canvas');
  const flow = modeler.get('elementRegistry').get(id);
  const box = canvas.viewbox();
  const rect = canvas.getContainer().getBoundingClientRect();
  let best = null, longest = -1;
  for (let i = 0; i < flow.waypoints.length - 1; i++) {
    const a = flow.waypoints[i], b = flow.waypoints[i + 1];
    const length = Math.hypot(b.x - a.x, b.y - a.y);
    if (length > longest) { longest = length; best = [a, b, length]; }
  }
  const [a, b, length] = best;
  const x = a.x + (b.x - a.x) * 0.3 - (b.y - a.y) / length * units;
  const y = a.y + (b.y - a.y) * 0.3 + (b.x - a.x) / length * units;
  return {x: rect.left + (x - box.x) * box.scale, y: rect.top + (y - box.y) * box.scale};
}"""


def test_clicking_a_label_selects_its_element_and_flows_are_easy_to_hit(page, make_process):
    doc = approval_document()
    doc["flows"]["f3"]["title"] = "Approved"
    pid = make_process(doc=doc)
    sign_in(page, "designer")
    open_designer(page, pid)
    page.get_by_role("button", name="Reset zoom to 100 %").click()
    for element_id in ("ok", "start", "f3"):
        page.get_by_role("button", name="Fit the diagram").click()
        point = page.evaluate(LABEL_CENTRE, element_id)
        page.mouse.click(point["x"], point["y"])
        wait_selected(page, element_id)
        panel_for(page, element_id)
        page.mouse.click(5, 5)  # outside the canvas: nothing selected afterwards
        page.keyboard.press("Escape")

    page.get_by_role("button", name="Reset zoom to 100 %").click()
    click_shape(page, "review")
    point = page.evaluate(BESIDE_FLOW, ["f1", 11])
    page.mouse.click(point["x"], point["y"])
    wait_selected(page, "f1")
    panel_for(page, "f1")


def diagram_box(page, element_id: str) -> dict:
    return page.evaluate(
        f"(() => {{ const e = modeler.get('elementRegistry').get('{element_id}'); "
        "return {x: e.x, y: e.y, width: e.width, height: e.height}; })()"
    )


def test_appended_shapes_land_clear_of_the_context_pad(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    page.get_by_role("button", name="Reset zoom to 100 %").click()
    click_shape(page, "ok")
    scale = page.evaluate("modeler.get('canvas').zoom()")
    context_pad = page.locator(".djs-context-pad").bounding_box()
    gateway = page.locator('.djs-shape[data-element-id="ok"] .djs-visual').bounding_box()
    pad_reach = (context_pad["x"] + context_pad["width"] - gateway["x"] - gateway["width"]) / scale
    source = diagram_box(page, "ok")
    first = pad(page, "append.user-task")
    assert first and first != "ok"
    box = diagram_box(page, first)
    gap = box["x"] - (source["x"] + source["width"])
    assert gap >= pad_reach + 10, f"under the context pad: {gap} <= {pad_reach}"
    assert gap >= 100

    click_shape(page, "ok")
    second = pad(page, "append.service-task")
    other = diagram_box(page, second)
    apart = (
        other["y"] >= box["y"] + box["height"] + 20 or box["y"] >= other["y"] + other["height"] + 20
    )
    assert apart, "a second append from the same shape does not sit on the first"
    for node in ("done", "rejected"):
        fixed = diagram_box(page, node)
        for placed in (box, other):
            assert (
                placed["x"] >= fixed["x"] + fixed["width"] + 20
                or placed["y"] >= fixed["y"] + fixed["height"] + 20
                or fixed["y"] >= placed["y"] + placed["height"] + 20
            ), f"an appended shape sits on {node}"
