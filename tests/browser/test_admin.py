"""An admin edits a user in Chromium: the form shows what the user holds and saving keeps it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import sign_in
from webapp.models import User

pytestmark = pytest.mark.browser


def test_admin_adds_a_role_and_the_other_memberships_stay(page, demo, db_session):
    sign_in(page, "admin")
    page.goto("/admin/users")
    page.get_by_role("link", name="bob", exact=True).click()
    page.wait_for_url("**/admin/users/*")
    roles = page.get_by_role("group", name="Roles")
    partitions = page.get_by_role("group", name="Partitions")
    expect(roles.get_by_role("checkbox", name="approver", exact=True)).to_be_checked()
    expect(roles.get_by_role("checkbox", name="clerk", exact=True)).to_be_checked()
    expect(roles.get_by_role("checkbox", name="operator", exact=True)).not_to_be_checked()
    expect(partitions.get_by_role("checkbox", name="Finance (finance)")).to_be_checked()
    expect(page.get_by_role("checkbox", name="Active")).to_be_checked()

    roles.get_by_role("checkbox", name="operator", exact=True).check()
    page.get_by_role("button", name="Save").click()
    page.wait_for_url("**/admin/users")
    expect(page.get_by_text("User bob saved.")).to_be_visible()

    db_session.expire_all()
    bob = db_session.scalar(select(User).where(User.username == "bob"))
    assert sorted(r.name for r in bob.roles) == ["approver", "clerk", "operator"]
    assert [p.key for p in bob.partitions] == ["finance"]
    assert bob.active

    page.goto(f"/admin/users/{bob.id}")
    expect(roles.get_by_role("checkbox", name="operator", exact=True)).to_be_checked()
    expect(partitions.get_by_role("checkbox", name="Finance (finance)")).to_be_checked()
