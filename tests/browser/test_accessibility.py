"""What keyboard and screen-reader users rely on: a visible focus ring, red invalid fields of
every kind, and claim buttons that say which task they claim."""

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import serious_violations, sign_in

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
    from tests.helpers.documents import chain
    from tests.helpers.inbox import user_task
    from tests.helpers.instances import start_latest
    from tests.helpers.processes import publish_document

    with app.app_context():
        publish_document(chain(("ok", user_task("Approve", "role", "approver"))), key="claims")
    start_latest(app, "claims", business_key="PO-7")
    start_latest(app, "claims", business_key="PO-8")
    sign_in(page, "bob")
    page.goto("/inbox/?tab=claimable")
    assert page.get_by_role("button", name="Claim Approve, PO-7").is_visible()
    assert page.get_by_role("button", name="Claim Approve, PO-8").is_visible()


def test_the_approver_sees_the_request_beside_the_form(page, demo, app):
    from tests.helpers.documents import chain
    from tests.helpers.inbox import user_task
    from tests.helpers.instances import start_latest
    from tests.helpers.processes import publish_document

    decision = {"fields": [{"key": "ok", "label": "Approve", "type": "boolean"}]}
    with app.app_context():
        publish_document(
            chain(("approve", user_task("Approve purchase", "user", "bob", decision))),
            key="purchase",
        )
    start_latest(app, "purchase", input={"item": "Laptop", "amount": 1800}, business_key="PO-1")
    sign_in(page, "bob")
    page.get_by_role("link", name="Approve purchase").click()
    context = page.get_by_role("region", name="About this PO-1")
    assert context.get_by_text("Laptop").is_visible()
    assert context.get_by_text("1800").is_visible()


# --- an automated WCAG 2.2 AA audit (axe-core, served from static/vendor like htmx) -----------


engine = engine_conftest.engine
LONG = "Check the supplier's bank account against the sanctions register"


@pytest.mark.parametrize("width", [1280, 390])
def test_instance_version_and_heat_pages_pass_the_accessibility_audit(
    browser, live_server, demo, engine, width
):
    """A failed instance (incident, jobs and tokens tables), a version view and heat per
    process, with names long enough that their tables scroll on a phone."""
    from sqlalchemy import select

    from tests.helpers.browser import close_context, new_context
    from tests.helpers.documents import chain, node
    from tests.helpers.instances import start
    from tests.helpers.processes import publish_document
    from tests.helpers.workers import drain
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
                problems = serious_violations(page)
                if problems:
                    found[path] = problems
        assert found == {}, found
    finally:
        close_context(context)


def test_reassigning_and_failed_forms_pass_the_accessibility_audit(page, demo, app):
    from tests.helpers.documents import chain
    from tests.helpers.inbox import user_task
    from tests.helpers.instances import start_latest
    from tests.helpers.processes import publish_document

    form = {"fields": [{"key": "why", "label": "Why", "type": "text", "required": True}]}
    with app.app_context():
        publish_document(chain(("ok", user_task("Review", "user", "alice", form))), key="audit")
        publish_document(chain(("sort", user_task("Sort", "role", "clerk"))), key="sorting")
    start_latest(app, "audit")
    start_latest(app, "sorting", starter="alice")
    sign_in(page, "alice")
    page.goto("/inbox/")
    page.get_by_role("link", name="Review").click()
    page.get_by_role("button", name="Complete").click()
    page.locator("#errors").wait_for()
    assert serious_violations(page) == []

    page.context.clear_cookies()
    sign_in(page, "operator")
    from sqlalchemy import select

    from webapp.extensions import db
    from webapp.models import Task

    with app.app_context():
        task_id = db.session.scalar(select(Task.id).where(Task.node_id == "sort"))
        db.session.remove()
    page.goto(f"/inbox/tasks/{task_id}")
    assert serious_violations(page) == []
    page.get_by_label("User").fill("alice")
    page.get_by_role("button", name="Reassign").click()
    page.get_by_role("button", name="Yes, reassign to alice").wait_for()
    assert serious_violations(page) == []


# Shapes of the panel sections for the later gateways, events and task types: BPMN type, event
# definition, and what the panel shows.
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
    ("bpmn:BusinessRuleTask", "", "A rule must match"),
    # Compensation and transactions.
    ("bpmn:IntermediateThrowEvent", "bpmn:CompensateEventDefinition", "Activity to compensate"),
    ("bpmn:EndEvent", "bpmn:CompensateEventDefinition", "Wait for the handlers"),
    ("bpmn:Transaction", "", "A cancel end event inside"),
    ("bpmn:IntermediateCatchEvent", "bpmn:ConditionalEventDefinition", "Only when these"),
    ("bpmn:StartEvent", "bpmn:ConditionalEventDefinition", "when this condition holds"),
    ("bpmn:ComplexGateway", "", "Activation condition"),
    ("bpmn:AdHocSubProcess", "", "Activities to activate when it starts"),
]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_designer_panels_of_the_new_elements_pass_the_audit(
    browser, live_server, demo, app, width
):
    from tests.helpers.browser import close_context, new_context, open_designer, panel_for
    from tests.helpers.documents import approval_document
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
            problems = serious_violations(page, "#props")
            if problems:
                found[f"{kind} {definition}"] = problems
        assert found == {}, found
    finally:
        close_context(context)


# --- every page a user can reach, in the states that matter, at a phone's and a desk's width ---

# Wide content may only scroll inside a focusable scroll box; the page itself never does.
PAGE_OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"

# Interactive elements a keyboard user cannot reach or cannot see focused: each is focused in
# turn (after a Tab, so the browser shows focus as it does for the keyboard).
UNFOCUSABLE = """() => {
  const visible = (e) => e.checkVisibility({visibilityProperty: true});
  const control = 'a[href], button, input, select, textarea';
  const found = [];
  const items = document.querySelectorAll(
    `${control}, summary, [tabindex]`);
  for (const e of items) {
    if (!visible(e) || e.disabled || e.closest('.djs-container, [inert]')) continue;
    const text = (e.textContent || e.name || '').trim().slice(0, 30);
    const name = `${e.tagName.toLowerCase()}#${e.id || ''} ${text}`;
    if (e.tabIndex < 0) {
      if (e.matches(control)) found.push(`not tabbable: ${name}`);
      continue;
    }
    e.focus({preventScroll: true});
    if (document.activeElement !== e) { found.push(`takes no focus: ${name}`); continue; }
    const style = getComputedStyle(e);
    const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
    if (style.boxShadow === 'none' && !outline) found.push(`no focus ring: ${name}`);
  }
  document.activeElement.blur();
  return found;
}"""

# A table's box scrolls wherever the table is wider than the screen: there it must take the
# focus (arrow keys scroll it) and say what it holds.
UNNAMED_SCROLL_BOXES = """[...document.querySelectorAll('.table-wrap')]
  .filter(e => e.tabIndex < 0 || e.getAttribute('role') !== 'region'
               || !(e.getAttribute('aria-label') || e.getAttribute('aria-labelledby')))
  .map(e => e.textContent.trim().slice(0, 40))"""


def _page_findings(page, width: int) -> list[str]:
    """Serious axe findings, sideways page scroll at a phone's width, and unreachable or
    invisibly focused controls."""
    problems = serious_violations(page)
    if width <= 390:
        overflow = page.evaluate(PAGE_OVERFLOW)
        if overflow > 0:
            problems.append(f"the page scrolls sideways by {overflow}px")
    page.keyboard.press("Tab")
    problems += page.evaluate(UNFOCUSABLE)
    problems += [f"a scroll box the keyboard cannot reach or that has no name: {box}"
                 for box in page.evaluate(UNNAMED_SCROLL_BOXES)]  # fmt: skip
    return problems


# A name without spaces, as imported files often have: it wraps instead of widening the page.
UNBROKEN = "charge_the_card_then_check_the_supplier_account_against_the_register"


# The error pages the audit reaches on purpose, and the status each answers with.
ERROR_PAGES = {("alice", "/admin/"): 403, ("alice", "/no-such-page"): 404}


def _audit_decisions() -> int:
    """A decision model with a blocking problem, an example row and one published version."""
    from tests.helpers.decisions import DISCOUNT_DMN
    from webapp.services import decisions

    model, _ = decisions.import_new(DISCOUNT_DMN, partition_id=None, actor=None)
    decisions.add_example(model, "discount", {"amount": 5, "tier": None}, 0, base_revision=1,
                          actor=None)  # fmt: skip
    decisions.publish(model, actor=None)
    decisions.edit_draft(model, "cell", "discount", {"rule": 0, "side": "input", "column": 0,
                         "text": "<<"}, base_revision=2, actor=None)  # fmt: skip
    return model.id


def _audit_world(app) -> dict:
    """Processes, instances and tasks that put each page in a state worth auditing: a task with
    a required field, a start form, a failed request, two pages of tasks, two published versions."""
    from sqlalchemy import select

    from tests.helpers.documents import FORM, chain, node
    from tests.helpers.inbox import user_task
    from tests.helpers.instances import start_latest
    from tests.helpers.processes import publish_document
    from tests.helpers.workers import drain
    from webapp.extensions import db
    from webapp.models import Process, Task
    from webapp.services import accounts, api_tokens

    form = {"fields": [{"key": "why", "label": "Why", "type": "text", "required": True}]}
    with app.app_context():
        publish_document(chain(("ok", user_task(LONG, "user", "alice", form))), key="audit",
                         name=LONG)  # fmt: skip
        publish_document(chain(("ok", user_task(f"{LONG} again", "user", "alice", form))),
                         key="audit", name=LONG)  # fmt: skip
        started = chain(("sort", user_task("Sort", "role", "clerk")))
        started["nodes"]["start"]["config"]["form"] = FORM
        publish_document(started, key="expense", name="Expense claim")
        failing = chain(("charge", node("serviceTask", "Charge", tool="fail", retries=0,
                                        inputs={"message": "'card declined'"})))  # fmt: skip
        publish_document(failing, key=UNBROKEN, name=UNBROKEN)
        accounts.ensure_partition("supplier_sanctions", LONG)
        db.session.commit()
        robot = api_tokens.create_service_account(UNBROKEN[:64], roles=[], partitions=[])
        api_tokens.create_token(robot, LONG[:64], ["read"], 30, created_by=robot)
        robot_id = robot.id
        decision_model = _audit_decisions()
    for number in range(6):
        start_latest(app, "audit", business_key=f"AUD-{number}", starter="alice")
    failed = start_latest(app, UNBROKEN, business_key=f"CARD-{UNBROKEN}", starter="alice")
    with app.app_context():
        drain(db.session)
        task = db.session.scalar(select(Task.id).where(Task.node_id == "ok").limit(1))
        process = db.session.scalar(select(Process.id).where(Process.key == "audit"))
        unbroken = db.session.scalar(select(Process.id).where(Process.key == UNBROKEN))
        db.session.remove()
    return {"decisions": decision_model, "task": task, "process": process, "failed": failed,
            "unbroken": unbroken,
            "robot": robot_id}  # fmt: skip


# A file from another tool naming a user Flowdesk does not know: its import report asks for one.
GHOST = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="http://x">
  <bpmn:process id="leave" name="Leave request" isExecutable="true">
    <bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="ok"/>
    <bpmn:userTask id="ok" name="Approve leave" camunda:assignee="ghost"/>
    <bpmn:sequenceFlow id="f2" sourceRef="ok" targetRef="e"/><bpmn:endEvent id="e"/>
  </bpmn:process>
</bpmn:definitions>"""


def _import_ghost(page) -> list[str]:
    """Import GHOST: the page is then that process's import report with a user to settle."""
    upload = {"name": "leave.bpmn", "mimeType": "text/xml", "buffer": GHOST.encode()}
    page.get_by_label("BPMN or JSON file").set_input_files(upload)
    page.get_by_role("button", name="Import").click()
    page.wait_for_url("**/import-report")
    return []


def _reference_drawn(page) -> list[str]:
    """Wait for the API reference to be drawn, and open two of its operations."""
    page.locator(".opblock").first.wait_for()
    for name in ("start_instance", "get_instance"):
        page.locator(f"#operations-instances-{name} .opblock-summary-control").click()
    page.locator(".opblock-body").nth(1).wait_for()
    return []


def _confirmed(page) -> list[str]:
    """Say yes on a confirmation page: the page is then the progress of what was confirmed."""
    page.get_by_role("button", name="Yes").click()
    page.wait_for_url(re.compile(r".*/(bulk|signals)/\d+$"))
    return []


def _played(page) -> list[str]:
    """Start the draft on the play page, then send its task's form empty."""
    page.get_by_role("button", name="Start the draft").click()
    page.get_by_role("button", name=re.compile("^Complete")).first.wait_for(timeout=5_000)
    return _sent_empty(page, "Complete")


def _sent_empty(page, button: str) -> list[str]:
    """Send the form of `button` empty, as a person who forgot the required fields would; a
    finding unless an error summary (or alert) then names what is wrong."""
    send = page.get_by_role("button", name=button).first
    send.evaluate("b => { b.form.noValidate = true; }")
    send.click()
    try:
        page.locator("[role=alert]").first.wait_for(timeout=5_000)
    except PlaywrightTimeout:
        return ["no error summary after sending it empty"]
    return []


@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_passes_the_audit_fits_a_phone_and_shows_focus(
    browser, live_server, demo, app, width, monkeypatch
):
    monkeypatch.setitem(app.config, "PAGE_SIZE", 4)  # the task list and requests get page 2
    from tests.helpers.browser import close_context, new_context

    world = _audit_world(app)
    pid, task, failed = world["process"], world["task"], world["failed"]
    inbox, start_page = f"/inbox/tasks/{task}", "/inbox/processes/expense/start"
    designer = f"/designer/{pid}"
    decisions = f"/designer/decisions/{world['decisions']}"
    visits = {
        None: ["/login", ("/login", "Sign in"), ("/api/docs", _reference_drawn)],
        "alice": ["/inbox/", "/inbox/?page=2", "/inbox/?tab=claimable", "/inbox/?q=no-such-task",
                  inbox, (inbox, "Complete"), "/inbox/processes", start_page,
                  (start_page, "Start"), "/inbox/requests", "/inbox/requests?page=2",
                  f"/inbox/instances/{failed}", "/account", ("/account", "Change password"),
                  ("/account", "Create token"),
                  "/admin/", "/no-such-page"],
        "admin": ["/", "/admin/", "/admin/users", "/admin/users/new",
                  ("/admin/users/new", "Create user"), "/admin/users/1", "/admin/roles",
                  ("/admin/roles", "Create role"), "/admin/roles/1", "/admin/partitions",
                  ("/admin/partitions", "Create partition"), ("/admin/users/2", "Set password"),
                  "/admin/tokens", "/admin/tokens?status=revoked", "/admin/service-accounts",
                  "/admin/service-accounts/new",
                  ("/admin/service-accounts/new", "Create service account"),
                  f"/admin/service-accounts/{world['robot']}",
                  (f"/admin/service-accounts/{world['robot']}", "Create token"),
                  "/admin/webhooks", ("/admin/webhooks", "Register webhook"),
                  "/admin/notifications"],
        "designer": ["/designer/", "/designer/new", ("/designer/new", "Create"),
                     "/designer/import", ("/designer/import", "Import"),
                     ("/designer/import", _import_ghost), f"{designer}/",
                     f"{designer}/versions", f"{designer}/versions/1", f"{designer}/compare",
                     f"{designer}/import", f"{designer}/import-report", f"{designer}/outline",
                     f"{designer}/outline/ok", f"{designer}/publish", f"{designer}/scenarios",
                     (f"{designer}/scenarios", "Save the scenario"), f"{designer}/play",
                     f"{designer}/scenarios/new",
                     (f"{designer}/scenarios/new", "Save the scenario"),
                     (f"{designer}/play", _played),
                     f"/designer/{world['unbroken']}/", f"/designer/{world['unbroken']}/versions",
                     "/designer/decisions/", "/designer/decisions/import",
                     ("/designer/decisions/import", "Import"), decisions,
                     f"{decisions}/test", f"{decisions}/versions", f"{decisions}/report",
                     f"{decisions}/import", f"{decisions}/compare?old=1&new=draft"],
        "operator": ["/operations/", "/operations/instances",
                     "/operations/instances?state=nothing", f"/operations/instances/{failed}",
                     "/operations/heat", "/operations/heat/audit", f"/operations/heat/{UNBROKEN}",
                     "/operations/health", "/operations/processes/audit/versions",
                     "/operations/retention", "/operations/signals", "/operations/schedules",
                     "/operations/signals/confirm?name=audit-go",
                     ("/operations/signals/confirm?name=audit-go", _confirmed),
                     f"/operations/instances/{failed}/modify",
                     (f"/operations/instances/{failed}/modify", "Preview"),
                     f"/operations/bulk/confirm?action=cancel&reason=audit&ids={failed}",
                     (f"/operations/bulk/confirm?action=cancel&reason=audit&ids={failed}",
                      _confirmed)],
    }  # fmt: skip
    context = new_context(browser, live_server, width)
    page = context.new_page()
    try:
        found = {}
        for username, paths in visits.items():
            context.clear_cookies()
            if username:
                sign_in(page, username)
            for visit in paths:
                path, action = visit if isinstance(visit, tuple) else (visit, None)
                response = page.goto(path)
                wanted = ERROR_PAGES.get((username, path), 200)
                problems = [] if response.status == wanted else [f"answered {response.status}"]
                if callable(action):
                    problems += action(page)
                elif action:
                    problems += _sent_empty(page, action)
                problems += _page_findings(page, width)
                if problems:
                    done = getattr(action, "__name__", action or "")
                    found[f"{username} {path} {done}"] = problems
        assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())
    finally:
        close_context(context)
