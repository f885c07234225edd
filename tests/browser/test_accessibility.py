"""What keyboard and screen-reader users rely on: a visible focus ring, red invalid fields of
every kind, and claim buttons that say which task they claim."""

import pytest

from tests.browser.conftest import sign_in
from tests.engine import conftest as engine_conftest

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


def _serious_violations(page, within: str = "") -> list[str]:
    """Serious and critical axe findings on the page (or inside the `within` selector)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(url="/static/vendor/axe-core/axe.min.js")
    result = page.evaluate(
        "([tags, within]) => axe.run(within ? document.querySelector(within) : document,"
        " {runOnly: {type: 'tag', values: tags}})",
        [AXE_TAGS, within],
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


engine = engine_conftest.engine
LONG = "Check the supplier's bank account against the sanctions register"


@pytest.mark.parametrize("width", [1280, 390])
def test_instance_version_and_heat_pages_pass_the_accessibility_audit(
    browser, live_server, demo, engine, width
):
    """A failed instance (incident, jobs and tokens tables), a version view and heat per
    process, with names long enough that their tables scroll on a phone."""
    from sqlalchemy import select

    from tests.browser.conftest import close_context, new_context
    from tests.operations.conftest import chain, drain, node, publish_document, start
    from webapp.models import Process

    message = {"message": "'sanctions register unreachable'"}
    failing = chain(
        ("check_supplier_bank_account",
         node("serviceTask", LONG, tool="fail", retries=0, inputs=message)),
    )  # fmt: skip
    failed = start(engine, publish_document(failing, key="supplier_sanctions_check"))
    waiting = chain(("review_every_supplier_account", node(
        "userTask", LONG, assignee={"type": "role", "value": "clerk"})))  # fmt: skip
    start(engine, publish_document(waiting, key="supplier_review"))
    drain(engine)
    process_id = engine.scalar(select(Process.id).where(Process.key == "supplier_review"))
    engine.rollback()
    pages = {
        "operator": [f"/operations/instances/{failed}", "/operations/heat/supplier_review",
                     "/operations/heat/supplier_sanctions_check"],
        "designer": [f"/designer/{process_id}/versions/1"],
    }  # fmt: skip
    context = new_context(browser, live_server, width)
    page = context.new_page()
    try:
        found = {}
        for username, paths in pages.items():
            context.clear_cookies()
            sign_in(page, username)
            for path in paths:
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


# Shapes of the issue-16 panel sections: BPMN type, event definition, and what the panel shows.
NEW_PANELS = [
    ("bpmn:IntermediateCatchEvent", "bpmn:SignalEventDefinition", "Signal name"),
    ("bpmn:IntermediateThrowEvent", "bpmn:SignalEventDefinition", "Add entry"),
    ("bpmn:IntermediateThrowEvent", "bpmn:MessageEventDefinition", "Retries"),
    ("bpmn:IntermediateThrowEvent", "bpmn:LinkEventDefinition", "Link name"),
    ("bpmn:IntermediateThrowEvent", "", "milestone"),
    ("bpmn:EndEvent", "bpmn:SignalEventDefinition", "Payload"),
    ("bpmn:StartEvent", "bpmn:TimerEventDefinition", "Next runs"),
    ("bpmn:StartEvent", "bpmn:MessageEventDefinition", "Message name"),
    ("bpmn:SendTask", "", "Tool"),
    ("bpmn:ReceiveTask", "", "Correlation key"),
    ("bpmn:ScriptTask", "", "Script"),
    ("bpmn:ManualTask", "", "Camunda 8"),
    ("bpmn:InclusiveGateway", "", "every outgoing flow"),
    ("bpmn:EventBasedGateway", "", "carry no conditions"),
]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_designer_panels_of_the_new_elements_pass_the_audit(
    browser, live_server, demo, app, width
):
    from tests.browser.conftest import close_context, new_context
    from tests.browser.test_designer import open_designer, panel_for
    from tests.designer.conftest import approval_document
    from webapp.models import Partition, User
    from webapp.services import processes

    with app.app_context():
        from sqlalchemy import select

        from webapp.extensions import db

        actor = db.session.scalar(select(User).where(User.username == "designer"))
        finance = db.session.scalar(select(Partition).where(Partition.key == "finance"))
        pid = processes.create_process(
            "audit_events", "Audit events", partition_id=finance.id, actor=actor,
            document=approval_document(),
        ).id  # fmt: skip
        db.session.commit()
    context = new_context(browser, live_server, width)
    page = context.new_page()
    try:
        sign_in(page, "designer")
        open_designer(page, pid)
        found = {}
        for index, (kind, definition, text) in enumerate(NEW_PANELS):
            element_id = page.evaluate(
                """([type, definition, index]) => {
                  const factory = modeler.get('elementFactory');
                  const attrs = definition ? {type, eventDefinitionType: definition} : {type};
                  const root = modeler.get('canvas').getRootElement();
                  const shape = modeler.get('modeling').createShape(
                    factory.createShape(attrs), {x: 700 + 60 * index, y: 420}, root);
                  modeler.get('selection').select(shape);
                  return shape.id;
                }""",
                [kind, definition, index],
            )
            panel = panel_for(page, element_id)
            panel.get_by_text(text).first.wait_for()
            problems = _serious_violations(page, "#props")
            if problems:
                found[f"{kind} {definition}"] = problems
        assert found == {}, found
    finally:
        close_context(context)
