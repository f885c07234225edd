"""An operator fixes an incident and cancels an instance through the operations pages, in Chromium,
with a real worker process running the retried tool."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select, update

from tests.engine import conftest as engine_conftest
from tests.helpers.app import user
from tests.helpers.browser import sign_in, wait_until
from tests.helpers.documents import chain, document, failing_doc, flaky_doc, flow, node, waiting_doc
from tests.helpers.instances import load, start
from tests.helpers.processes import publish_document, published
from tests.helpers.workers import drain
from webapp.models import BulkItem, Process

pytestmark = pytest.mark.browser

# The engine tests' fixtures: an app context for the engine, test tools, worker processes.
engine = engine_conftest.engine
test_tools = engine_conftest.test_tools
workers = engine_conftest.workers

LONG_NAME = "Onboarding of a new supplier with sanctions and bank checks"
RED_NODE = '.djs-element.op-failed[data-element-id="call"]'


def _failed_instance(session) -> int:
    instance_id = start(session, publish_document(flaky_doc("browser", 1), key="payment"))
    drain(session)
    assert load(session, instance_id).status == "failed"
    return instance_id


def _watermark_is_visible(page) -> bool:
    return page.evaluate(
        """() => {
          const link = document.querySelector('.op-viewer a.bjs-powered-by');
          if (!link) return false;
          const box = link.getBoundingClientRect();
          const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
          return box.width > 0 && !!hit && link.contains(hit);
        }"""
    )


def test_operator_retries_a_failed_instance_and_watches_it_complete(
    page, demo, engine, test_tools, workers
):
    instance_id = _failed_instance(engine)
    workers.start(1)
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')

    assert page.locator(RED_NODE).count() == 1, "the failed node is red"
    assert page.get_by_role("alert").filter(has_text="failure number 1").is_visible()
    badge = page.get_by_role("img", name="Failed: flaky: failure number 1")
    badge.hover()
    assert page.locator(".op-tip").filter(has_text="flaky: failure number 1").is_visible()
    assert _watermark_is_visible(page)

    page.get_by_role("button", name="Retry").click()
    page.wait_for_url(f"**/operations/instances/{instance_id}")
    page.locator('#live tr[data-kind="completed"]').wait_for(timeout=30_000)
    assert page.locator("#live .op-status-completed").is_visible()
    kinds = page.locator("#live tr[data-kind]").evaluate_all(
        "rows => rows.map(r => r.dataset.kind)"
    )
    assert kinds[0] == "completed" and "retried" in kinds, "the history, newest first, went live"
    page.locator(RED_NODE).wait_for(state="detached")
    assert page.locator('.djs-element.op-visited[data-element-id="end"]').count() == 1
    assert load(engine, instance_id).status == "completed", workers.logs()


def test_operator_cancels_a_running_instance_from_the_list(page, demo, engine, workers):
    version = published("invoice")
    keep, cancel = start(engine, version), start(engine, version)
    workers.start(1)
    sign_in(page, "operator")
    page.goto("/operations/instances?status=running")
    page.get_by_label(f"Select instance {cancel}").check()
    page.get_by_label("Action").select_option("cancel")
    page.get_by_label("Reason (needed to cancel or suspend)").fill("customer withdrew")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**/operations/bulk/confirm?*")
    page.get_by_role("button", name="Yes, cancel 1 instance").click()
    page.wait_for_url(re.compile(r"/operations/bulk/\d+$"))
    page.locator('#bulk-progress[data-status="done"]').wait_for(timeout=30_000)
    assert page.get_by_text("1 of 1 done").is_visible()
    assert page.locator(f'tr[data-instance="{cancel}"][data-result="ok"]').is_visible()

    assert load(engine, cancel).status == "cancelled", workers.logs()
    assert load(engine, keep).status == "running"
    engine.rollback()
    assert engine.scalar(select(BulkItem.message)) == "Now cancelled."
    page.get_by_role("link", name=f"#{cancel}").click()
    expect(page.locator("#live .op-status-cancelled")).to_be_visible()
    assert (
        page.locator('#live tr[data-kind="cancelled"]')
        .filter(has_text="customer withdrew")
        .is_visible()
    )
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    assert page.locator('.djs-element.op-cancelled[data-element-id="review"]').count() == 1
    assert page.get_by_role("img", name="Stopped here by the cancel (1 token)").is_visible()
    assert page.locator(".djs-element.op-active").count() == 0


def test_operations_pages_fit_a_phone(phone_page, demo, engine):
    instance_id = start(engine, published("invoice"))
    sign_in(phone_page, "operator")
    for path in ("/operations/", "/operations/instances", f"/operations/instances/{instance_id}"):
        phone_page.goto(path)
        assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390, path
    phone_page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    assert phone_page.locator('.djs-element.op-active[data-element-id="review"]').count() == 1


def test_operator_reads_the_heat_view_and_sets_a_retention_policy(page, demo, engine):
    for _ in range(2):
        start(engine, published("invoice"))
    sign_in(page, "operator")
    page.goto("/operations/")
    page.get_by_role("link", name="Heat view").first.click()
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    assert page.locator(".op-heat-label").first.inner_text().startswith("2 waiting")
    assert page.locator('.djs-element.op-active[data-element-id="review"]').count() == 1

    page.get_by_role("link", name="Retention").click()
    days = page.get_by_label("Days for invoice")
    days.fill("soon")
    days.press("Enter")
    expect(page.locator("#errors").filter(has_text="Use a number of days")).to_be_visible()
    page.get_by_label("Days for invoice").fill("90")
    page.get_by_label("Days for invoice").press("Enter")
    row = page.get_by_role("row").filter(has_text="invoice")
    assert "90 days" in row.inner_text()


def _live_polls(page) -> list[str]:
    """The URLs of the requests the page's scripts (htmx) make from now on."""
    polls: list[str] = []

    def seen(request) -> None:
        if request.resource_type in ("fetch", "xhr") and "/instances/" in request.url:
            polls.append(request.url)

    page.on("request", seen)
    return polls


def _moving_instance(session, **kwargs) -> int:
    """Waits 5 s at a timer, then a worker runs a tool, then it waits for alice at Review."""
    doc = chain(
        ("wait", node("timerCatch", "Wait a moment", duration="PT5S")),
        ("calc", node("serviceTask", "Calculate", tool="vars.set", saveTo="calc",
                      inputs={"total": "$input.amount"})),
        ("review", node("userTask", "Review", assignee={"type": "user", "value": "alice"})),
    )  # fmt: skip
    return start(session, publish_document(doc, key="live"), input={"amount": 21}, **kwargs)


def test_live_refresh_keeps_the_opened_panels_open_while_the_instance_moves(
    page, demo, engine, workers
):
    sign_in(page, "operator")  # first: the timer runs from the start, sign-in takes its time
    instance_id = _moving_instance(engine)
    workers.start(1)
    polls = _live_polls(page)
    page.goto(f"/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    assert page.locator('.djs-element.op-active[data-element-id="wait"]').count() == 1
    page.get_by_text("Input ($input)").click()
    page.get_by_text("Node outputs ($nodes)").click()
    variables = page.locator("details").filter(has_text="Variables ($vars)")
    assert variables.evaluate("details => details.open"), "open from the start"

    page.locator('.djs-element.op-active[data-element-id="review"]').wait_for(timeout=30_000)
    opened = page.locator("#live details").evaluate_all("all => all.map(d => d.open)")
    assert opened == [True, True, True], "Variables, Input and Node outputs stayed open"
    assert len(polls) >= 2, "the page refreshed several times while the instance moved"
    wait_until(page, "document.getElementById('live-poll').dataset.live === 'slow'")
    assert '"total": 21' in page.locator("#data-vars").inner_text()
    assert '"calc"' in page.locator("#data-nodes").inner_text()
    assert "assigned to alice" in page.locator("#live-tasks").inner_text()
    assert page.locator('.djs-element.op-visited[data-element-id="calc"]').count() == 1
    assert page.locator('.djs-element.op-active[data-element-id="wait"]').count() == 0
    assert page.locator('#history tr[data-kind="task_created"]').count() == 1
    assert "waiting on people" in page.locator("#live-facts").inner_text()


def test_a_page_whose_tokens_all_wait_on_people_does_not_poll(page, demo, engine):
    instance_id = start(engine, published("invoice"))
    sign_in(page, "operator")
    polls = _live_polls(page)
    page.goto(f"/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    page.wait_for_timeout(5_000)
    assert polls == [], "two and a half fast intervals passed without a request"
    assert page.locator("#live-poll").get_attribute("data-live") == "slow"
    assert "waiting on people" in page.locator("#live").inner_text()


def test_the_requesters_instance_page_keeps_the_input_open_while_it_moves(
    page, demo, engine, workers
):
    sign_in(page, "alice")  # first: the timer runs from the start, sign-in takes its time
    instance_id = _moving_instance(engine, actor=user(engine, "alice"))
    workers.start(1)
    polls = _live_polls(page)
    page.goto(f"/inbox/instances/{instance_id}")
    assert "Wait a moment" in page.locator("#instance-where").inner_text()
    page.get_by_text("Your input").click()

    page.locator(".now-at").filter(has_text="Review").wait_for(timeout=30_000)
    assert len(polls) >= 2, "the page refreshed several times while the instance moved"
    assert page.locator("details.instance-input").evaluate("details => details.open")
    assert "Amount\n21" in page.locator("#instance-input").inner_text()
    assert page.locator('#instance-history tr[data-kind="task_created"]').count() == 1
    wait_until(page, "document.getElementById('instance-poll').dataset.live === 'slow'")


def _fill(page, element_id: str) -> str:
    return page.locator(
        f'.djs-element[data-element-id="{element_id}"] .djs-visual > *'
    ).first.evaluate("shape => getComputedStyle(shape).fill")


def test_a_failed_then_cancelled_instance_stays_red_with_the_reason_on_top(
    page, demo, engine, test_tools
):
    instance_id = _failed_instance(engine)
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.get_by_text("Cancel instance…").click()
    page.get_by_label("Reason").fill("customer withdrew")
    page.get_by_role("button", name=f"Yes, cancel instance {instance_id}").click()
    page.wait_for_url(f"**/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')

    assert page.locator(RED_NODE).count() == 1, "the node that failed stays red"
    assert _fill(page, "call") == "rgb(253, 236, 234)", "red, not the visited green"
    assert _fill(page, "start") == "rgb(227, 242, 227)", "the path before it is green"
    name = "Failed: flaky: failure number 1 (then cancelled)"
    assert page.get_by_role("img", name=name).count() == 1
    outcome = page.locator("#live-outcome")
    text = outcome.inner_text()
    assert "Failed at Call" in text and "Then cancelled" in text and "by operator" in text
    assert "Reason: customer withdrew" in text
    above = outcome.evaluate(
        "box => box.getBoundingClientRect().bottom <= "
        "document.querySelector('.op-viewer').getBoundingClientRect().top"
    )
    assert above, "what happened is shown above the diagram"


def test_operator_sees_names_and_finds_a_process_by_its_name(page, demo, engine):
    instance_id = start(engine, publish_document(failing_doc(), key="pay", partition="hr"))
    drain(engine)
    engine.execute(update(Process).where(Process.key == "pay").values(name="Card payment"))
    engine.commit()
    sign_in(page, "operator")
    page.goto("/operations/")
    incidents = page.locator("section[aria-labelledby=incidents] tbody tr")
    expect(incidents).to_have_count(1)
    expect(incidents).to_contain_text("Card payment")
    expect(incidents).to_contain_text("Human resources")
    expect(incidents).to_contain_text("Charge")
    expect(incidents).to_contain_text("card declined")

    page.goto("/operations/instances")
    page.get_by_label("Process").fill("card PAYMENT")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/operations/instances?*process=card+PAYMENT*")
    rows = page.locator("table.op-instances tbody tr")
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("Card payment")
    expect(rows).to_contain_text("Charge")
    options = page.locator("#process-choices option").evaluate_all(
        "options => options.map(o => o.value)"
    )
    assert "Card payment (pay)" in options

    page.get_by_role("link", name=f"#{instance_id}").click()
    expect(page.locator("#live-jobs tbody tr").first).to_contain_text("Charge")


def test_token_badges_say_how_many_tokens_wait_where(page, demo, engine):
    """A screen reader hears "2 tokens waiting at Review invoice", not a bare "2"; a node without
    a name is named by its id; the page still passes the accessibility audit."""
    from tests.helpers.browser import serious_violations

    alice = {"type": "user", "value": "alice"}
    nodes = {
        "start": node("startEvent", "Start"),
        "split": node("parallelGateway", "Split"),
        "review": node("userTask", "Review\n invoice", assignee=alice),
        "check": node("userTask", "", assignee=alice),
        "join": node("parallelGateway"),
        "end": node("endEvent", "Done"),
    }
    edges = [("start", "split"), ("split", "review"), ("split", "review"), ("split", "check"),
             ("review", "join"), ("check", "join"), ("join", "end")]  # fmt: skip
    doc = document(nodes, {f"f{i}": flow(a, b) for i, (a, b) in enumerate(edges, start=1)})
    instance_id = start(engine, publish_document(doc, key="tokens"))
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')

    expect(page.get_by_role("img", name="2 tokens waiting at Review invoice")).to_be_visible()
    expect(page.get_by_role("img", name="1 token waiting at check")).to_be_visible()
    assert serious_violations(page) == []


def test_retry_comes_back_live_when_the_instance_fails_again(
    page, demo, engine, test_tools, workers
):
    instance_id = start(engine, publish_document(flaky_doc("twice", 2), key="payment"))
    drain(engine)
    workers.start(1)
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.get_by_role("button", name="Retry").click()
    page.wait_for_url(f"**/operations/instances/{instance_id}")
    expect(page.get_by_role("heading", name="Set a variable")).to_be_hidden()
    page.locator("#live").get_by_text("failure number 2").first.wait_for(timeout=30_000)
    retry = page.get_by_role("button", name="Retry")
    expect(retry).to_be_visible()
    expect(page.get_by_role("heading", name="Set a variable")).to_be_visible()
    assert "waiting on people" not in page.locator("#live-facts").inner_text()
    retry.click()
    page.locator("#live .op-status-completed").wait_for(timeout=30_000)
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
    expect(page.get_by_text("Cancel instance…")).to_be_hidden()
    assert load(engine, instance_id).status == "completed", workers.logs()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_zoom_buttons_sit_inside_the_diagram_clear_of_the_legend(
    browser, live_server, demo, engine, width
):
    from tests.helpers.browser import close_context, new_context

    instance_id = start(engine, published("invoice"))
    context = new_context(browser, live_server, width)
    page = context.new_page()
    try:
        sign_in(page, "operator")
        page.goto(f"/operations/instances/{instance_id}")
        page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
        bar = page.get_by_role("toolbar", name="Zoom").bounding_box()
        viewer = page.locator(".op-viewer").bounding_box()
        legend = page.locator(".op-legend").bounding_box()
        assert viewer["x"] <= bar["x"] and bar["x"] + bar["width"] <= viewer["x"] + viewer["width"]
        assert (
            viewer["y"] <= bar["y"] and bar["y"] + bar["height"] <= viewer["y"] + viewer["height"]
        )
        assert bar["y"] + bar["height"] <= legend["y"], "the legend stays readable"
        button = page.get_by_role("button", name="Zoom in")
        assert button.evaluate("b => getComputedStyle(b).position") != "absolute"
        assert button.evaluate("b => b.getBoundingClientRect().height") >= 24
        transform = "document.querySelector('.op-viewer .viewport').getAttribute('transform')"
        before = page.evaluate(transform)
        button.click()
        after = page.evaluate(transform)
        assert before != after, "the button zooms"
    finally:
        close_context(context)


def test_retention_fits_a_phone_and_partitions_read_by_name(phone_page, demo, engine):
    start(engine, published("invoice", partition="finance"))
    publish_document(waiting_doc(), key="supplier_onboarding_with_a_long_key", name=LONG_NAME)
    sign_in(phone_page, "operator")
    phone_page.goto("/operations/retention")
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    days = phone_page.get_by_label("Days for supplier_onboarding_with_a_long_key")
    days.fill("soon")
    days.press("Enter")
    expect(phone_page.locator("#errors")).to_be_visible()
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390, "with the error"
    row = phone_page.get_by_role("row").filter(has_text="supplier_onboarding_with_a_long_key")
    assert LONG_NAME in row.inner_text(), "the process by its name, as on the other pages"

    phone_page.goto("/operations/instances")
    partition = phone_page.get_by_label("Partition")
    options = partition.locator("option").all_inner_texts()
    assert "Finance" in options and "finance" not in options, options
    partition.select_option(label="Finance")
    phone_page.get_by_role("button", name="Filter").click()
    phone_page.wait_for_url("**partition=finance**")
    assert "Finance" in phone_page.get_by_role("row").nth(1).inner_text()


def test_the_instance_list_refreshes_itself_keeping_ticks_focus_filters_and_scroll(
    page, demo, engine
):
    version = published("invoice")
    first = [start(engine, version) for _ in range(3)]
    start(engine, published("other"))
    sign_in(page, "operator")
    page.set_viewport_size({"width": 1280, "height": 500})
    page.goto("/operations/instances?process=invoice")
    page.get_by_label(f"Select instance {first[0]}").check()
    page.get_by_label("Reason (needed to cancel or suspend)").fill("duplicate")
    page.mouse.wheel(0, 400)
    page.get_by_label(f"Select instance {first[1]}").focus()
    scrolled = page.evaluate("window.scrollY")
    assert scrolled > 0

    newest = start(engine, version)
    page.locator(f'#instance-table a[href="/operations/instances/{newest}"]').wait_for(
        timeout=15_000
    )
    assert page.get_by_label(f"Select instance {first[0]}").is_checked()
    assert page.evaluate("document.activeElement.id") == f"pick-{first[1]}"
    assert page.get_by_label("Reason (needed to cancel or suspend)").input_value() == "duplicate"
    assert page.locator("#f-process").input_value() == "invoice"
    assert abs(page.evaluate("window.scrollY") - scrolled) < 60
    assert page.locator("#instance-table tbody tr").count() == 4, "still only invoice"
    page.get_by_label("Select all instances on this page").check()
    assert page.get_by_label(f"Select instance {newest}").is_checked()


def test_the_overview_counts_update_by_themselves(page, demo, engine):
    start(engine, published("invoice"))
    sign_in(page, "operator")
    page.goto("/operations/")
    running = page.locator(".op-count-running .op-count-n")
    expect(running).to_have_text("1")
    page.get_by_text("Numbers per hour").click()
    start(engine, published("invoice"))
    expect(running).to_have_text("2", timeout=15_000)
    assert page.locator("details.op-chart-table").evaluate("d => d.open"), "stays open"
