"""The properties panel as a modeller uses it: the form builder, and when errors are shown."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import close_context, new_context, sign_in, wait_until
from tests.browser.test_designer import bo, click_shape, open_designer, panel_for
from tests.designer import conftest as designer_fixtures
from tests.designer.conftest import approval_document

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
