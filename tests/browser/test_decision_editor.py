"""In Chromium, at 1280 and 390 pixels: a modeller imports a corpus DMN file, edits a cell and
sees the UNIQUE overlap named, fixes it, tries inputs and sees the matched rule, keeps them as an
example row, publishes, changes a rule, publishes again and compares the two versions."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.dmn_corpus import dmn_corpus_dir

pytestmark = pytest.mark.browser

OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
FILE = "spiffworkflow/dmn__data__unique_hit.dmn"


def _saved(page, action) -> None:
    """Do `action` (an edit of the table) and wait until its post has answered."""
    with page.expect_response(lambda r: r.request.method == "POST" and "/edit" in r.url):
        action()


def _tab(page, name: str) -> None:
    """Open one of the model's tabs and wait until its scripts are running."""
    page.get_by_role("link", name=name, exact=True).click()
    page.wait_for_load_state("load")


def _audited(page) -> None:
    assert page.evaluate(OVERFLOW) <= 0
    assert serious_violations(page) == []


@pytest.mark.parametrize("size", ["page", "phone_page"])
def test_import_edit_try_keep_publish_and_compare(request, size, demo):
    folder = dmn_corpus_dir()
    if folder is None:
        pytest.skip("the DMN corpus is missing")
    page = request.getfixturevalue(size)
    sign_in(page, "designer")
    page.goto("/designer/")
    page.get_by_role("link", name="Decisions").click()
    page.get_by_role("link", name="Import DMN").click()
    page.get_by_label("DMN file").set_input_files(str(folder / FILE))
    page.get_by_role("button", name="Import").click()
    # A SpiffWorkflow (Python) table runs by first match there, so it is read as FIRST.
    expect(page.locator(".flashes")).to_contain_text("Imported DRD: 1 problem (0 blocking")
    _audited(page)

    _tab(page, "Table")
    policy = page.get_by_label("Hit policy")
    expect(policy).to_have_value("FIRST")
    _saved(page, lambda: policy.select_option("UNIQUE"))
    expect(page.get_by_label("Hit policy")).to_have_value("UNIQUE")
    cell = page.get_by_label('Rule 2, Input "name"', exact=True)
    expect(cell).to_have_value('"Mo"')
    _saved(page, lambda: cell.fill('"Larry"'))
    status = page.locator("#editor-status")
    expect(status).to_contain_text("rules 1 and 2")
    expect(page.locator("#rule-flag-1")).to_contain_text("problem")
    expect(cell).to_be_focused()
    _audited(page)
    _saved(page, lambda: cell.fill('"Mo"'))
    expect(status).to_contain_text("No problems.")
    expect(page.locator("#rule-flag-1")).to_be_empty()

    _tab(page, "Test")
    page.get_by_label('Input "name"').fill("Curly")
    page.get_by_role("button", name="Try", exact=True).click()
    expect(page.locator("#try-matched")).to_have_text("Matched rule 3.")
    expect(page.locator("#try-result-value")).to_have_text("3")
    expect(page.locator("#try-rule-3")).to_contain_text("matched")
    _audited(page)
    page.get_by_label("Name (optional)").fill("Curly is three")
    page.get_by_role("button", name="Add example row").click()
    expect(page.locator("#example-1")).to_contain_text("passes")

    _tab(page, "Versions")
    page.get_by_label("Change note").fill("first")
    page.get_by_role("button", name="Publish").click()
    expect(page.locator(".flashes")).to_contain_text("as version 1")

    _tab(page, "Table")
    output = page.get_by_label('Rule 4, Output "result" (output)', exact=True)
    _saved(page, lambda: output.fill("40"))
    expect(page.locator("#editor-status")).to_contain_text("No problems.")
    _tab(page, "Versions")
    page.get_by_role("button", name="Publish").click()
    expect(page.locator(".flashes")).to_contain_text("as version 2")
    _audited(page)
    page.get_by_label("From").select_option("1")
    page.get_by_label("To").select_option("2")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#changes")).to_contain_text("rule 4")
    expect(page.locator("#changes")).to_contain_text("→ 40")
    _audited(page)


@pytest.mark.parametrize("size", ["page", "phone_page"])
def test_a_failing_example_refuses_publish_by_name(request, size, demo):
    folder = dmn_corpus_dir()
    if folder is None:
        pytest.skip("the DMN corpus is missing")
    page = request.getfixturevalue(size)
    sign_in(page, "designer")
    page.goto("/designer/decisions/import")
    page.get_by_label("DMN file").set_input_files(str(folder / FILE))
    page.get_by_role("button", name="Import").click()
    _tab(page, "Test")
    page.get_by_label('Input "name"').fill("Shemp")
    page.get_by_role("button", name="Try", exact=True).click()
    page.get_by_label("Expected result (JSON)").fill("5")
    page.get_by_label("Name (optional)").fill("Shemp is five")
    page.get_by_role("button", name="Add example row").click()
    expect(page.locator("#example-1")).to_contain_text("fails")
    _tab(page, "Versions")
    page.get_by_role("button", name="Publish").click()
    refusal = page.locator("#publish-refusal")
    expect(refusal).to_contain_text("Example rows fail on this draft: Shemp is five.")
    expect(refusal).to_be_focused()
    _audited(page)


def test_rules_are_added_filled_and_moved_with_the_keyboard(page, demo):
    folder = dmn_corpus_dir()
    if folder is None:
        pytest.skip("the DMN corpus is missing")
    sign_in(page, "designer")
    page.goto("/designer/decisions/import")
    page.get_by_label("DMN file").set_input_files(str(folder / FILE))
    page.get_by_role("button", name="Import").click()
    _tab(page, "Table")
    page.get_by_role("button", name="Add a rule").focus()
    _saved(page, lambda: page.keyboard.press("Enter"))
    new_cell = page.get_by_label('Rule 5, Input "name"', exact=True)
    expect(new_cell).to_be_focused()
    _saved(page, lambda: page.keyboard.type('"Moe"'))
    page.keyboard.press("Tab")
    expect(page.get_by_label('Rule 5, Output "result" (output)', exact=True)).to_be_focused()
    _saved(page, lambda: page.keyboard.type("5"))
    page.get_by_role("button", name="Move rule 5 up").focus()
    _saved(page, lambda: page.keyboard.press("Enter"))
    expect(page.get_by_role("button", name="Move rule 4 up")).to_be_focused()
    expect(page.get_by_label('Rule 4, Input "name"', exact=True)).to_have_value('"Moe"')
    expect(page.locator("#editor-status")).to_contain_text("No problems.")
