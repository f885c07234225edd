"""In Chromium: a user task offered to anyone in the partition plus candidate roles and
users (as an imported task with only candidateGroups/candidateUsers reads) keeps both through a
save and a reload."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import apply, click_shape, open_designer, panel_for, save, sign_in
from tests.helpers.designer import get_process
from tests.helpers.documents import approval_document

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process

ANYONE = "Anyone who works tasks in the partition"


def test_anyone_with_candidate_roles_and_users_survives_save_and_reload(
    page, make_process, db_session
):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel = panel_for(page, "review")
    expect(panel.get_by_label("A user", exact=True)).to_be_checked()
    # Keyboard only: focus the checked radio, move to the first choice of the group.
    panel.get_by_label("A user", exact=True).focus()
    page.keyboard.press("ArrowUp")
    expect(panel.get_by_label(ANYONE)).to_be_checked()
    roles = panel.get_by_label("Also offered to roles", exact=True)
    roles.focus()
    page.keyboard.type("clerk, approver")
    users = panel.get_by_label("Also offered to users", exact=True)
    users.click()
    page.keyboard.type("bob")
    apply(page)
    save(page)
    config = get_process(db_session, pid).draft_document["nodes"]["review"]["config"]
    assert "assignee" not in config
    assert config["candidates"] == {"roles": ["clerk", "approver"], "users": ["bob"]}
    page.reload()
    page.wait_for_selector("#designer[data-ready=true]")
    click_shape(page, "review")
    panel = panel_for(page, "review")
    expect(panel.get_by_label(ANYONE)).to_be_checked()
    expect(panel.get_by_label("Also offered to roles", exact=True)).to_have_value("clerk, approver")
    expect(panel.get_by_label("Also offered to users", exact=True)).to_have_value("bob")
