"""The properties panel as a modeller uses it: the form builder, and when errors are shown."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import (
    bo,
    click_shape,
    close_context,
    new_context,
    open_designer,
    panel_for,
    sign_in,
    wait_until,
)
from tests.helpers.documents import approval_document

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process

LONG_LABEL = "What are we buying, for which project, and why does it have to be now?"
SHOWN_WHOLE = """(id) => {
  const box = document.getElementById(id);
  return box.scrollWidth <= box.clientWidth && box.scrollHeight <= box.clientHeight + 1;
}"""


def config(page, element_id: str):
    return bo(page, element_id, "JSON.parse(bo.extensionElements.values[0].body)")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_long_field_label_is_shown_whole(browser, live_server, make_process, width):
    pid = make_process(doc=approval_document())
    context = new_context(browser, live_server, width, 844)
    page = context.new_page()
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel = panel_for(page, "review")
    panel.get_by_role("button", name="Add field").click()
    label = panel.locator("#fields-1-label")
    label.fill(LONG_LABEL)
    assert page.evaluate(SHOWN_WHOLE, "fields-1-label"), "the label's text is not cut off"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    wait_until(page, "!document.getElementById('save-status').textContent.includes('not applied')")
    assert config(page, "review")["form"]["fields"][1]["label"] == LONG_LABEL
    expect(page.locator("#form-preview")).to_contain_text(LONG_LABEL)
    close_context(context)


def timer_document() -> dict:
    """The approval process with a new timer on the review's border: no duration yet."""
    doc = approval_document()
    doc["nodes"]["late"] = {
        "kind": "boundaryEvent",
        "title": "Late",
        "config": {"attachedTo": "review", "event": "timer"},
        "position": {"x": 250, "y": 140},
    }
    doc["nodes"]["chase"] = {"kind": "endEvent", "title": "Chase", "position": {"x": 330, "y": 240}}
    doc["flows"]["f5"] = {"source": "late", "target": "chase"}
    return doc


def errors(panel) -> list[str]:
    return panel.locator(".error").all_inner_texts()


def settled(page) -> None:
    wait_until(page, "!document.getElementById('save-status').textContent.includes('not applied')")


def test_unticking_interrupting_applies_before_the_duration_is_given(page, make_process):
    pid = make_process(doc=timer_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "late")
    panel = panel_for(page, "late")
    assert errors(panel) == []
    panel.get_by_label("Interrupting").uncheck()
    wait_until(
        page, "modeler.get('elementRegistry').get('late').businessObject.cancelActivity === false"
    )
    settled(page)
    assert errors(panel) == [], "nothing is reported missing before the user got to it"
    assert "nothing was applied" not in panel.locator("#panel-status").inner_text()

    panel.get_by_label("Duration", exact=True).focus()
    page.keyboard.press("Tab")
    expect(panel.locator(".error")).to_have_text(["Enter a duration such as PT5M."])
    assert bo(page, "late", "bo.cancelActivity") is False, "the edit is kept"
    panel.get_by_label("Duration", exact=True).fill("PT1H")
    wait_until(
        page,
        "modeler.get('elementRegistry').get('late').businessObject"
        ".eventDefinitions[0].timeDuration !== undefined",
    )
    expect(panel.locator(".error")).to_have_count(0)


def test_parallel_multi_instance_waits_for_its_collection(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel = panel_for(page, "review")
    panel.locator("#multi-instance").get_by_label("Parallel").check()
    panel.get_by_label("Collection").wait_for()
    wait_until(
        page, "!!modeler.get('elementRegistry').get('review').businessObject.loopCharacteristics"
    )
    settled(page)
    assert errors(panel) == [], "the collection cannot have been typed yet"

    panel.get_by_role("button", name="Apply").click()
    expect(panel.locator("#multi-instance .error")).to_have_text(
        ["Enter a collection (a list) or a cardinality (a number of instances)."]
    )
    expect(panel.locator("#panel-status")).to_contain_text("Applied")
    panel.get_by_label("Collection").fill("$input.reviewers")
    wait_until(
        page,
        "(JSON.parse(modeler.get('elementRegistry').get('review').businessObject"
        ".extensionElements.values.find(v => v.$type === 'flowdesk:config').body)"
        ".multiInstance || {}).collection === '$input.reviewers'",
    )
    expect(panel.locator(".error")).to_have_count(0)


def test_a_choice_field_asks_for_its_options_under_options_once_left(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel = panel_for(page, "review")
    panel.get_by_role("button", name="Add field").click()
    panel.locator("#fields-1-key").fill("colours")
    panel.locator("#fields-1-type").select_option("multiselect")
    panel.locator("#fields-1-options").wait_for()
    wait_until(
        page,
        "JSON.parse(modeler.get('elementRegistry').get('review').businessObject"
        ".extensionElements.values[0].body).form.fields.length === 2",
    )
    settled(page)
    assert errors(panel) == [], "no error before the options could be typed"

    panel.locator("#fields-1-options").focus()
    page.keyboard.press("Tab")
    options = panel.locator("#fields-1-options").locator("xpath=..")
    expect(options.locator(".error")).to_have_text(
        ["Enter the options to choose from, one per line."]
    )
    expect(panel.locator("#fields-1-key").locator("xpath=..").locator(".error")).to_have_count(0)
    panel.locator("#fields-1-options").fill("red\ngreen")
    wait_until(
        page,
        "(JSON.parse(modeler.get('elementRegistry').get('review').businessObject"
        ".extensionElements.values[0].body).form.fields[1].options || []).length === 2",
    )
    expect(panel.locator(".error")).to_have_count(0)


@pytest.mark.parametrize("width", [1280, 390])
def test_form_field_problems_show_under_their_inputs_and_apply_focuses_the_first(
    browser, live_server, make_process, width
):
    pid = make_process(doc=approval_document())
    context = new_context(browser, live_server, width, 844)
    page = context.new_page()
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel = panel_for(page, "review")
    panel.get_by_role("button", name="Add field").click()
    panel.locator("#fields-1-type").select_option("radio")
    panel.locator("#fields-1-options").wait_for()
    panel.locator("#fields-1-options").fill("red\nblue\nred")
    panel.get_by_role("button", name="Add field").click()
    panel.locator("#fields-2-type").select_option("number")
    panel.locator("#field-row-2").get_by_text("More settings").click()
    panel.locator("#fields-2-min").wait_for()
    panel.locator("#fields-2-min").fill("10")
    panel.locator("#fields-2-max").fill("1")
    panel.get_by_role("button", name="Apply").click()
    summary = panel.locator("#panel-errors")
    summary.wait_for()

    expect(panel.locator("#fields-1-options-msg")).to_contain_text("'red' is listed twice")
    expect(panel.locator("#fields-2-max-msg")).to_contain_text("min is greater than max")
    for key in ("fields-0-key", "fields-1-key", "fields-2-key"):
        expect(panel.locator(f"#{key}-msg")).to_have_count(0)
    wait_until(page, "document.activeElement.id === 'fields-1-options'")

    summary.get_by_role("link", name="Field 3 Maximum").click()
    wait_until(page, "document.activeElement.id === 'fields-2-max'")
    page.keyboard.press("Control+A")
    page.keyboard.type("100")
    panel.locator("#fields-1-options").fill("red\nblue")
    panel.get_by_role("button", name="Apply").click()
    expect(panel.locator("#panel-errors")).to_have_count(0)
    assert config(page, "review")["form"]["fields"][2]["max"] == 100
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    close_context(context)
