"""Every page of every area works under the Content-Security-Policy: no violation is reported,
every response carries the policy, and the diagrams really draw. The browser refuses inline
script, inline style and being framed."""

from __future__ import annotations

import re
import threading

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import (
    apply,
    bo,
    click_shape,
    new_context,
    open_designer,
    pad,
    panel_for,
    sign_in,
)
from tests.helpers.documents import FORM, approval_document, failing_doc
from tests.helpers.instances import start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.models import Process, Task

pytestmark = pytest.mark.browser

engine = engine_conftest.engine

POLICY_HEADERS = ("content-security-policy", "x-content-type-options", "x-frame-options")


@pytest.fixture
def world(demo, engine) -> dict[str, int]:
    """expense (finance, two versions, a start form with a visibleIf field, a task for alice) with
    one running instance, and charge (finance) with one failed instance."""
    doc = approval_document()
    doc["nodes"]["start"]["config"] = {"form": FORM}
    publish_document(doc, key="expense", partition="finance")
    doc["nodes"]["review"]["title"] = "Review the claim"
    version = publish_document(doc, key="expense", partition="finance")
    running = start(engine, version, business_key="EXP-7")
    failed = start(engine, publish_document(failing_doc(), key="charge", partition="finance"))
    drain(engine)
    task = engine.scalar(select(Task.id).where(Task.instance_id == running))
    process = engine.scalar(select(Process.id).where(Process.key == "expense"))
    engine.rollback()
    return {"process": process, "running": running, "failed": failed, "task": task}


@pytest.fixture
def visit(browser, live_server):
    """Open a signed-in context per user; after the test, fail on any CSP violation and on any
    response from the app that came without the security headers."""
    contexts = []

    def open_as(username: str | None):
        context = new_context(browser, live_server)
        context.unprotected = []

        def check(response) -> None:
            if response.url.startswith(live_server):
                missing = [h for h in POLICY_HEADERS if h not in response.headers]
                if missing:
                    context.unprotected.append(f"{response.url}: no {', '.join(missing)}")

        context.on("response", check)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        if username:
            sign_in(page, username)
        return page

    yield open_as
    problems = [line for c in contexts for line in c.csp_violations + c.unprotected]
    for context in contexts:
        context.close()
    assert not problems, "policy violations or unprotected responses:\n" + "\n".join(problems)


def assert_drawn(page, container: str) -> None:
    """The bpmn-js diagram in `container` is an SVG with shapes in it."""
    assert page.locator(f"{container} svg").count() > 0, container
    assert page.locator(f"{container} .djs-shape").count() > 2, container


def test_designer_pages_work_under_the_policy(visit, world):
    pid = world["process"]
    page = visit("designer")
    page.goto("/designer/")
    page.get_by_label("Search").fill("exp")
    page.wait_for_url(re.compile(r".*q=exp.*"))
    page.goto("/designer/new")
    page.goto("/designer/import")
    open_designer(page, pid)
    assert_drawn(page, "#canvas")

    click_shape(page, "review")
    panel = panel_for(page, "review")
    panel.get_by_label("Title").fill("Review the expense")
    panel.get_by_role("button", name="Add field").click()
    page.wait_for_selector("#fields-1-key")
    panel.locator("#fields-1-key").fill("note")
    panel.locator("#fields-1-label").fill("Note")
    expect(page.locator("#form-preview").get_by_label("Note")).to_be_visible()
    apply(page)
    assert bo(page, "review", "bo.name") == "Review the expense"

    shape = page.locator('.djs-shape[data-element-id="done"]').bounding_box()
    page.mouse.dblclick(shape["x"] + shape["width"] / 2, shape["y"] + shape["height"] / 2)
    page.locator(".djs-direct-editing-parent").wait_for()
    page.keyboard.press("Control+A")
    page.keyboard.type("Paid")
    page.mouse.click(shape["x"] + 400, shape["y"] + 300)
    assert bo(page, "done", "bo.name") == "Paid"

    click_shape(page, "review")
    assert pad(page, "append.user-task")
    page.keyboard.press("Escape")
    rejected = page.locator('.djs-shape[data-element-id="rejected"]').bounding_box()
    x, y = rejected["x"] + rejected["width"] / 2, rejected["y"] + rejected["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 30, y + 40, steps=5)
    page.mouse.up()
    page.click('.djs-palette .entry[data-action="lasso-tool"]')
    page.mouse.move(x - 200, y - 200)
    page.mouse.down()
    page.mouse.move(x + 80, y + 80, steps=5)
    page.mouse.up()
    assert len(page.evaluate("modeler.get('selection').get()")) > 1
    page.click('.djs-context-pad .entry[data-action="align-elements"]')
    icon = page.locator('.djs-popup .entry[data-id="align-elements-left"] svg rect').first
    assert icon.evaluate("e => getComputedStyle(e).stroke") != "none", "the icon is drawn"
    page.click('.djs-popup .entry[data-id="align-elements-left"]')
    page.click("#canvas .bjs-powered-by")
    page.locator(".bjs-powered-by-lightbox").wait_for()
    page.mouse.click(5, 5)
    page.click("#save-button")
    page.wait_for_selector("#save-status[data-tone=ok]")

    page.goto(f"/designer/{pid}/outline")
    page.goto(f"/designer/{pid}/outline/review")
    page.goto(f"/designer/{pid}/publish")
    page.goto(f"/designer/{pid}/import")
    page.goto(f"/designer/{pid}/import-report")
    page.goto(f"/designer/{pid}/versions")
    page.goto(f"/designer/{pid}/versions/2")
    page.wait_for_selector("[data-viewer=version-xml][data-ready=true]")
    assert_drawn(page, "[data-viewer=version-xml]")
    page.goto(f"/designer/{pid}/compare")
    for side in ("old-diagram", "new-diagram"):
        page.wait_for_selector(f"[data-viewer={side}][data-ready=true]")
        assert_drawn(page, f"[data-viewer={side}]")


def test_inbox_and_start_pages_work_under_the_policy(visit, world):
    page = visit("alice")
    expect(page.locator("#inbox-count")).to_have_text("1")
    page.goto("/inbox/")
    page.get_by_label("Search").fill("review")
    page.wait_for_url(re.compile(r".*q=review.*"))
    page.goto(f"/inbox/tasks/{world['task']}")
    page.get_by_label("Approve?").check()
    page.goto("/inbox/processes")
    page.get_by_role("link", name="Start expense…").click()
    page.get_by_label("Amount").fill("250")
    page.get_by_label("Kind").select_option("food")
    page.get_by_label("Venue").fill("Canteen")  # shown by the visibleIf refresh (htmx)
    page.get_by_role("button", name="Start", exact=True).click()
    page.wait_for_url("**/inbox/tasks/*")  # alice's own first task of the new instance
    expect(page.get_by_role("region", name=re.compile(r"^About this"))).to_contain_text("250")


def test_operations_pages_work_under_the_policy(visit, world):
    page = visit("operator")
    page.goto("/operations/")
    page.goto("/operations/instances")
    page.goto("/operations/instances?status=failed")
    for instance in (world["running"], world["failed"]):
        page.goto(f"/operations/instances/{instance}")
        page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
        assert_drawn(page, "[data-instance-viewer]")
    assert page.locator(".djs-element.op-failed").count() == 1
    page.goto("/operations/heat")
    page.goto("/operations/heat/expense")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    assert_drawn(page, "[data-instance-viewer]")
    page.goto("/operations/health")
    page.goto("/operations/retention")
    page.goto("/operations/instances?status=failed")
    page.get_by_label(f"Select instance {world['failed']}").check()
    page.get_by_label("Action").select_option("retry")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**/operations/bulk/confirm?*")
    page.get_by_role("button", name="Yes, retry 1 instance").click()
    page.wait_for_url(re.compile(r"/operations/bulk/\d+$"))
    page.goto("/operations/instances/999999999")  # the styled 404 page
    assert page.get_by_text("Not found").first.is_visible()


def test_admin_sign_in_and_error_pages_work_under_the_policy(visit, world):
    anonymous = visit(None)
    anonymous.goto("/login")
    anonymous.get_by_label("Username").fill("alice")
    anonymous.get_by_label("Password").fill("wrong")
    anonymous.keyboard.press("Enter")
    expect(anonymous.get_by_role("alert")).to_be_visible()
    anonymous.goto("/no-such-page")
    assert anonymous.get_by_text("Not found").first.is_visible()

    clerk = visit("alice")
    clerk.goto("/admin/")
    assert clerk.get_by_text("Not allowed").first.is_visible()

    page = visit("admin")
    for path in ("/", "/admin/", "/admin/users/new", "/admin/roles", "/admin/partitions",
                 "/admin/users"):  # fmt: skip
        page.goto(path)
    page.get_by_label("Search users").fill("bob")
    expect(page.locator("#users-table")).not_to_contain_text("alice")
    page.get_by_role("link", name="bob", exact=True).click()
    page.wait_for_url("**/admin/users/*")
    page.goto("/admin/roles")
    page.get_by_role("link", name="clerk", exact=True).click()
    page.wait_for_url("**/admin/roles/*")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login")


PROBE = """() => new Promise((resolve) => {
  const seen = [];
  document.addEventListener('securitypolicyviolation', (e) => seen.push(e.effectiveDirective));
  const script = document.createElement('script');
  script.textContent = 'window.inlineScriptRan = true';
  document.head.append(script);
  const box = document.createElement('div');
  box.innerHTML = '<p id="styled" style="color: rgb(255, 0, 0)">x</p>';
  document.body.append(box);
  const color = getComputedStyle(document.getElementById('styled')).color;
  setTimeout(() => resolve({ran: !!window.inlineScriptRan, color, seen}), 100);
})"""


@pytest.fixture
def framing_site(live_server):
    """Another origin (localhost instead of 127.0.0.1) whose page frames the app's login page."""
    from werkzeug.serving import make_server

    def host(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/html")])
        return [f'<iframe src="{live_server}/login"></iframe>'.encode()]

    server = make_server("127.0.0.1", 0, host, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_port}/"
    server.shutdown()


def test_the_browser_refuses_inline_script_inline_style_and_framing(
    browser, live_server, demo, framing_site
):
    context = new_context(browser, live_server)
    page = context.new_page()
    response = page.goto("/login")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    result = page.evaluate(PROBE)
    assert result["ran"] is False
    assert result["color"] != "rgb(255, 0, 0)"
    assert sorted(result["seen"]) == ["script-src-elem", "style-src-attr"]
    reported = "\n".join(context.csp_violations)
    assert "script-src-elem" in reported and "style-src-attr" in reported, "the watch sees them"

    page.goto(framing_site)
    page.wait_for_load_state("load")
    frame = page.frames[1]
    assert frame.url != f"{live_server}/login"
    assert any("frame-ancestors 'none'" in text for text in context.csp_violations)
    context.close()
