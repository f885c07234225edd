"""The designer by keyboard: the palette's entries are named buttons in the tab order that create
their shape with Enter, and the canvas shows where the focus is."""

from __future__ import annotations

import pytest

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import (
    clashes,
    click_shape,
    close_context,
    new_context,
    open_designer,
    panel_for,
    selected,
    sign_in,
    wait_until,
)
from tests.helpers.documents import approval_document, gateway_document

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process

FOCUSED = """() => {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  return {
    palette: !!el.closest('.djs-palette'),
    canvas: el.matches('.djs-container > svg'),
    role: el.getAttribute('role'),
    name: el.getAttribute('aria-label') || '',
    action: el.dataset ? el.dataset.action || '' : '',
    ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
  };
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_tab_reaches_every_palette_entry_by_name_and_the_canvas_shows_focus(
    browser, live_server, make_process, width
):
    pid = make_process(doc=approval_document())
    context = new_context(browser, live_server, width, 844)
    page = context.new_page()
    sign_in(page, "designer")
    open_designer(page, pid)
    entries = page.eval_on_selector_all(
        ".djs-palette .entry", "es => es.map(e => e.dataset.action)"
    )
    page.locator("#save-button").focus()
    stops = []
    for _ in range(120):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUSED)
        inside = stop["palette"] or stop["canvas"]
        if stops and (stops[-1]["palette"] or stops[-1]["canvas"]) and not inside:
            break
        stops.append(stop)
    palette = [s for s in stops if s["palette"]]
    assert [s["action"] for s in palette] == entries, "every entry, in order, one tab stop each"
    assert all(s["role"] == "button" and s["name"] and s["ring"] for s in palette)
    canvas = [s for s in stops if s["canvas"]]
    assert len(canvas) == 1 and canvas[0]["ring"], "the focused canvas shows a focus ring"
    assert canvas[0]["name"].startswith("Process diagram")
    close_context(context)


def test_enter_on_a_palette_entry_appends_to_the_selection_or_adds_in_view(page, make_process):
    pid = make_process(doc=gateway_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "ok")
    page.locator('.djs-palette .entry[data-action="create.user-task"]').press("Enter")
    task = selected(page)[0]
    assert task != "ok"
    assert page.evaluate(
        f"modeler.get('elementRegistry').get('{task}').incoming.map(f => f.source.id)"
    ) == ["ok"]
    panel_for(page, task)
    assert clashes(page) == []

    page.keyboard.press("Escape")
    page.evaluate("modeler.get('selection').select([])")
    entry = page.locator('.djs-palette .entry[data-action="create.subprocess-expanded"]')
    entry.focus()
    page.keyboard.press(" ")
    scope = selected(page)[0]
    assert page.evaluate(f"modeler.get('elementRegistry').get('{scope}').type") == "bpmn:SubProcess"
    starts = page.evaluate(
        f"modeler.get('elementRegistry').get('{scope}').children.map(c => c.type)"
    )
    assert starts.count("bpmn:StartEvent") == 1
    assert clashes(page) == []
    assert page.evaluate("document.activeElement.dataset.action") == "create.subprocess-expanded"

    boundary = page.locator('.djs-palette .entry[data-action="create.error-boundary"]')
    boundary.press("Enter")
    error = selected(page)[0]
    assert page.evaluate(f"modeler.get('elementRegistry').get('{error}').host.id") == scope

    page.evaluate("modeler.get('selection').select([])")
    boundary.press("Enter")
    wait_until(page, "document.getElementById('save-status').textContent.includes('Select a task')")
