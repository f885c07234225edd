"""What keyboard and screen-reader users rely on: a visible focus ring, red invalid fields of
every kind, and claim buttons that say which task they claim."""

import pytest

from tests.browser.conftest import sign_in

pytestmark = pytest.mark.browser

DANGER = "rgb(180, 35, 24)"
ACCENT = "rgb(31, 95, 191)"


def test_the_focus_ring_is_the_accent_colour_around_a_white_gap(page, demo):
    page.goto("/login")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    shadow = page.evaluate("getComputedStyle(document.activeElement).boxShadow")
    assert "rgb(255, 255, 255)" in shadow and ACCENT in shadow, shadow


def test_invalid_text_inputs_turn_red_like_selects(page, demo):
    sign_in(page, "admin")
    page.goto("/admin/users/new")
    page.get_by_role("button", name="Create user").click()
    invalid = page.locator('input[aria-invalid="true"]').first
    assert invalid.evaluate("e => getComputedStyle(e).borderTopColor") == DANGER


def test_claim_buttons_name_the_instance(page, demo, app):
    from tests.engine.conftest import chain, publish_document
    from tests.inbox.conftest import start, user_task

    with app.app_context():
        publish_document(chain(("ok", user_task("Approve", "role", "approver"))), key="claims")
    start(app, "claims", business_key="PO-7")
    start(app, "claims", business_key="PO-8")
    sign_in(page, "bob")
    page.goto("/inbox/?tab=claimable")
    assert page.get_by_role("button", name="Claim Approve, PO-7").is_visible()
    assert page.get_by_role("button", name="Claim Approve, PO-8").is_visible()


def test_the_approver_sees_the_request_beside_the_form(page, demo, app):
    from tests.engine.conftest import chain, publish_document
    from tests.inbox.conftest import start, user_task

    decision = {"fields": [{"key": "ok", "label": "Approve", "type": "boolean"}]}
    with app.app_context():
        publish_document(
            chain(("approve", user_task("Approve purchase", "user", "bob", decision))),
            key="purchase",
        )
    start(app, "purchase", input={"item": "Laptop", "amount": 1800}, business_key="PO-1")
    sign_in(page, "bob")
    page.get_by_role("link", name="Approve purchase").click()
    context = page.get_by_role("region", name="About this PO-1")
    assert context.get_by_text("Laptop").is_visible()
    assert context.get_by_text("1800").is_visible()


# --- an automated WCAG 2.2 AA audit (axe-core, served from static/vendor like htmx) -----------

AUDITED = {
    "alice": ["/inbox/", "/inbox/?tab=claimable", "/inbox/processes", "/inbox/requests",
              "/account"],
    "operator": ["/operations/", "/operations/instances", "/operations/heat",
                 "/operations/health", "/operations/retention", "/operations/signals",
                 "/operations/schedules"],
    "designer": ["/designer/", "/designer/new", "/designer/import"],
    "admin": ["/", "/admin/", "/admin/users", "/admin/users/new", "/admin/roles",
              "/admin/partitions"],
    None: ["/login"],
}  # fmt: skip
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def _serious_violations(page) -> list[str]:
    page.add_script_tag(url="/static/vendor/axe-core/axe.min.js")
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", AXE_TAGS
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("username", list(AUDITED), ids=lambda u: u or "anonymous")
def test_main_pages_pass_the_accessibility_audit(browser, live_server, demo, app, username, width):
    from tests.browser.conftest import close_context, new_context
    from tests.engine.conftest import chain, publish_document
    from tests.inbox.conftest import start, user_task

    with app.app_context():
        publish_document(chain(("ok", user_task("Review", "role", "clerk"))), key="audit")
    start(app, "audit", business_key="AUD-1")
    context = new_context(browser, live_server, width)
    page = context.new_page()
    try:
        if username:
            sign_in(page, username)
        found = {}
        for path in AUDITED[username]:
            page.goto(path)
            page.wait_for_load_state("networkidle")
            problems = _serious_violations(page)
            if problems:
                found[path] = problems
        assert found == {}, found
    finally:
        close_context(context)


def test_reassigning_and_failed_forms_pass_the_accessibility_audit(page, demo, app):
    from tests.engine.conftest import chain, publish_document
    from tests.inbox.conftest import start, user_task

    form = {"fields": [{"key": "why", "label": "Why", "type": "text", "required": True}]}
    with app.app_context():
        publish_document(chain(("ok", user_task("Review", "user", "alice", form))), key="audit")
        publish_document(chain(("sort", user_task("Sort", "role", "clerk"))), key="sorting")
    start(app, "audit")
    start(app, "sorting", starter="alice")
    sign_in(page, "alice")
    page.goto("/inbox/")
    page.get_by_role("link", name="Review").click()
    page.get_by_role("button", name="Complete").click()
    page.locator("#errors").wait_for()
    assert _serious_violations(page) == []

    page.context.clear_cookies()
    sign_in(page, "operator")
    from sqlalchemy import select

    from webapp.extensions import db
    from webapp.models import Task

    with app.app_context():
        task_id = db.session.scalar(select(Task.id).where(Task.node_id == "sort"))
        db.session.remove()
    page.goto(f"/inbox/tasks/{task_id}")
    assert _serious_violations(page) == []
    page.get_by_label("User").fill("alice")
    page.get_by_role("button", name="Reassign").click()
    page.get_by_role("button", name="Yes, reassign to alice").wait_for()
    assert _serious_violations(page) == []
