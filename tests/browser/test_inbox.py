"""Alice works a task through its generated form; Bob claims a role task from under her."""

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import close_context, new_context, sign_in
from tests.helpers.documents import chain, node
from tests.helpers.inbox import INBOX
from tests.helpers.instances import start_latest
from tests.helpers.processes import publish_document

pytestmark = pytest.mark.browser

FORM = {
    "fields": [
        {"key": "amount", "label": "Amount", "type": "number", "required": True, "min": 1},
        {"key": "reason", "label": "Reason", "type": "text", "required": True,
         "visibleIf": "$form.amount > 100"},
    ]
}  # fmt: skip


@pytest.fixture
def processes(app, demo):
    with app.app_context():
        review = node(
            "userTask", "Review expense", assignee={"type": "user", "value": "alice"}, form=FORM
        )
        approve = node(
            "userTask", "Approve expense", assignee={"type": "role", "value": "approver"}
        )
        publish_document(chain(("review", review), ("approve", approve)), key="expense")
        sort = node("userTask", "Sort the post", assignee={"type": "role", "value": "clerk"})
        publish_document(chain(("sort", sort)), key="post")


def _task_status(app, instance_id: int, node_id: str) -> str | None:
    from webapp.extensions import db
    from webapp.models import Task

    with app.app_context():
        status = db.session.scalar(
            select(Task.status).where(Task.instance_id == instance_id, Task.node_id == node_id)
        )
        db.session.remove()
        return status


def test_alice_fixes_an_invalid_value_and_completes_her_task(page, processes, app):
    instance_id = start_latest(app, "expense", business_key="EXP-42")
    sign_in(page, "alice")
    expect(page.locator("#inbox-count")).to_have_text("1")
    page.get_by_role("link", name="1 open task").click()
    page.get_by_role("link", name="Review expense").click()
    expect(page.get_by_text("EXP-42")).to_be_visible()

    page.get_by_label("Amount").fill("0")
    page.get_by_role("button", name="Complete").click()
    error = page.locator("#field-amount-msg")
    error.wait_for()
    assert error.inner_text() == "Amount must be at least 1"
    assert page.get_by_label("Amount").get_attribute("aria-invalid") == "true"
    assert _task_status(app, instance_id, "review") == "open"

    page.get_by_label("Amount").fill("250")
    page.get_by_label("Amount").press("Tab")
    page.get_by_label("Reason").fill("Team dinner")
    page.get_by_role("button", name="Complete").click()
    page.wait_for_url(re.compile(r".*/inbox/(tasks)?$"))
    assert page.get_by_text(
        f"Completed “Review expense”. Instance {instance_id} moved on to: Approve expense."
    ).is_visible()
    assert _task_status(app, instance_id, "review") == "completed"
    assert _task_status(app, instance_id, "approve") == "open"


def test_bob_claims_a_role_task_and_it_leaves_alices_list(
    page, browser, live_server, processes, app
):
    start_latest(app, "post")
    sign_in(page, "alice")
    page.goto(f"{INBOX}?tab=claimable")
    assert page.get_by_role("link", name="Sort the post").is_visible()

    context = new_context(browser, live_server)
    try:
        bob = context.new_page()
        sign_in(bob, "bob")
        bob.goto(f"{INBOX}?tab=claimable")
        bob.get_by_role("button", name="Claim Sort the post").click()
        bob.wait_for_url("**/inbox/tasks/*")
        assert bob.get_by_text("“Sort the post” is now yours.").is_visible()
        assert bob.get_by_role("button", name="Release to clerk").is_visible()
    finally:
        close_context(context)

    page.reload()
    assert page.get_by_role("link", name="Sort the post").count() == 0
    assert page.get_by_text("No task is waiting for your roles.").is_visible()


def test_the_inbox_fits_a_phone(phone_page, processes, app):
    start_latest(app, "expense", business_key="EXP-1")
    sign_in(phone_page, "alice")
    phone_page.goto(INBOX)
    assert phone_page.get_by_role("link", name="Review expense").is_visible()
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    phone_page.get_by_role("link", name="Review expense").click()
    expect(phone_page.get_by_label("Amount")).to_be_visible()
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390


def test_filters_live_in_the_url_and_can_be_saved(page, processes, app):
    start_latest(app, "post")
    start_latest(app, "expense", business_key="EXP-9")
    sign_in(page, "alice")
    page.goto(f"{INBOX}?tab=claimable")
    page.get_by_label("Search").fill("sort")
    page.wait_for_url(re.compile(r".*q=sort.*"))
    expect(page.get_by_role("link", name="Sort the post")).to_be_visible()
    mine = page.get_by_role("navigation", name="Task lists").get_by_role("link", name="Assigned")
    expect(mine).to_have_attribute("href", re.compile(r".*q=sort.*"))
    page.get_by_label("Save this filter as").fill("Post to sort")
    page.get_by_role("button", name="Save filter").click()
    expect(page.get_by_text("Saved the filter “Post to sort”.")).to_be_visible()
    page.goto(INBOX)
    page.get_by_role("link", name="Post to sort").click()
    expect(page.get_by_label("Search")).to_have_value("sort")
    expect(page.get_by_role("link", name="Sort the post")).to_be_visible()
    page.get_by_label("Due").select_option("overdue")
    page.wait_for_url(re.compile(r".*due=overdue.*"))
    expect(page.get_by_text("No task matches this filter.")).to_be_visible()


def test_the_list_and_tab_counts_follow_the_badge(page, demo, app):
    """A task that arrives while the inbox is open shows up when the badge next refreshes."""
    from playwright.sync_api import expect

    from tests.helpers.documents import chain
    from tests.helpers.inbox import user_task
    from tests.helpers.instances import start_latest
    from tests.helpers.processes import publish_document

    with app.app_context():
        publish_document(chain(("ok", user_task("Check order", "role", "approver"))), key="live")
    start_latest(app, "live", business_key="ORD-1")
    sign_in(page, "bob")
    page.goto("/inbox/?tab=claimable")
    expect(page.get_by_role("link", name="Check order")).to_have_count(1)
    # The badge's own first load must be in: htmx drops a request on an element while one is
    # in flight, so an early refresh below would be lost, as a real one would until the next.
    expect(page.locator("#inbox-count")).to_have_attribute("data-counts", re.compile(r"\d+,1"))
    start_latest(app, "live", business_key="ORD-2")
    page.evaluate("htmx.ajax('GET', '/inbox/count', {target: '#inbox-count', swap: 'outerHTML'})")
    expect(page.get_by_role("link", name="Check order")).to_have_count(2)
    tabs = page.get_by_role("navigation", name="Task lists")
    expect(tabs.get_by_role("link", name="Open for my roles 2")).to_be_visible()


def test_a_requester_follows_their_request(page, demo, app):
    from tests.helpers.inbox import user_task

    with app.app_context():
        publish_document(chain(("ok", user_task("Approve trip", "role", "approver"))), key="trip")
    sign_in(page, "alice")
    page.goto("/inbox/processes")
    page.get_by_label("Business key").first.fill("TRIP-3")
    page.get_by_role("button", name="Start").first.click()
    page.goto("/inbox/")
    page.get_by_role("link", name="My requests").click()
    row = page.get_by_role("row").filter(has_text="TRIP-3")
    expect(row.get_by_text("running")).to_be_visible()
    expect(row.get_by_text("Approve trip")).to_be_visible()


def _review_left(app) -> bool:
    """Whether the purchase request's Review sub-process has completed."""
    from webapp.extensions import db
    from webapp.models import HistoryEntry, Instance

    with app.app_context():
        left = db.session.scalar(
            select(HistoryEntry.id)
            .join(Instance, Instance.id == HistoryEntry.instance_id)
            .where(
                Instance.business_key == "PUR-2001",
                HistoryEntry.kind == "left",
                HistoryEntry.node_id == "review",
            )
        )
        db.session.remove()
        return left is not None


def test_each_reviewer_works_their_own_instance_of_a_multi_instance_review(
    browser, live_server, demo, app
):
    """The demo purchase request asks alice and bob, each in a task of their own that names
    them; the review inside the sub-process ends when both answered."""
    from webapp.cli.demo_processes import seed_demo_processes
    from webapp.extensions import db

    with app.app_context():
        seed_demo_processes()
        db.session.remove()
    for number, user in enumerate(("alice", "bob"), start=1):
        context = new_context(browser, live_server)
        try:
            page = context.new_page()
            sign_in(page, user)
            page.goto(INBOX)
            link = page.get_by_role("link", name=re.compile(rf"Review offer — reviewer: {user} \("))
            expect(link).to_be_visible()
            link.click()
            expect(page.locator(".task-scope")).to_have_text("Review")
            expect(page.locator(".task-element")).to_contain_text(f"reviewer: {user}")
            page.get_by_label("Yes").check()
            page.get_by_role("button", name="Complete").click()
            page.wait_for_url(re.compile(r".*/inbox/(tasks)?$"))
            expect(page.get_by_text(re.compile("Completed “Review offer"))).to_be_visible()
            expect(page.get_by_role("link", name=re.compile("Review offer"))).to_have_count(0)
            assert _review_left(app) is (number == 2)
        finally:
            close_context(context)


def test_an_invalid_completion_after_claiming_drops_the_claim_message(page, demo, app):
    """The flash of the claim belongs to the page before: once the form comes back with an
    error, only the error is shown (and focused)."""
    from tests.helpers.inbox import user_task

    with app.app_context():
        publish_document(
            chain(("count", user_task("Count the stock", "role", "clerk", FORM))), key="stock"
        )
    start_latest(app, "stock")
    sign_in(page, "alice")
    page.goto(f"{INBOX}?tab=claimable")
    page.get_by_role("button", name=re.compile("Claim Count the stock")).click()
    page.wait_for_url("**/inbox/tasks/*")
    expect(page.get_by_text("“Count the stock” is now yours.")).to_be_visible()
    page.get_by_label("Amount").fill("0")
    page.get_by_role("button", name="Complete").click()
    expect(page.locator("#field-amount-msg")).to_have_text("Amount must be at least 1")
    expect(page.get_by_text("is now yours")).to_have_count(0)
    expect(page.locator(".error-summary, [role=alert]").first).to_be_focused()


@pytest.mark.parametrize("width", [1280, 390])
def test_start_a_process_and_my_requests_are_two_separate_links(browser, live_server, demo, width):
    context = new_context(browser, live_server, width=width)
    try:
        page = context.new_page()
        sign_in(page, "alice")
        page.goto(INBOX)
        links = page.get_by_role("navigation", name="Requests").get_by_role("link")
        expect(links).to_have_text(["Start a process", "My requests"])
        first, second = (links.nth(i).bounding_box() for i in (0, 1))
        same_line = abs(first["y"] - second["y"]) < first["height"] / 2
        gap = (
            second["x"] - (first["x"] + first["width"])
            if same_line
            else second["y"] - (first["y"] + first["height"])
        )
        assert gap >= (24 if same_line else 0), f"only {gap}px between the two links"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        links.nth(0).focus()
        page.keyboard.press("Tab")
        expect(links.nth(1)).to_be_focused()
    finally:
        close_context(context)


def test_the_request_panel_reads_at_phone_width(phone_page, demo, app):
    """Nested request data reads as nested facts, without JSON and without sideways scrolling."""
    from tests.helpers.browser import serious_violations
    from tests.helpers.inbox import user_task

    with app.app_context():
        publish_document(chain(("pick", user_task("Pick a vendor", "user", "alice"))), key="pick")
    offers = [
        {"vendor": "Acme Office Supplies International", "unit_price": 12.5, "delivery_days": 3},
        {"vendor": "Bolt", "unit_price": 9, "notes": "x" * 120},
    ]
    start_latest(app, "pick", input={"quotes": {"offers": offers}}, business_key="Q-7")
    sign_in(phone_page, "alice")
    phone_page.goto(INBOX)
    phone_page.get_by_role("link", name="Pick a vendor").click()
    panel = phone_page.get_by_role("region", name="About this Q-7")
    expect(panel.get_by_text("Unit price").first).to_be_visible()
    expect(panel.get_by_text("Acme Office Supplies International")).to_be_visible()
    assert "{" not in panel.inner_text() and "unit_price" not in panel.inner_text()
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    assert serious_violations(phone_page) == []


def test_a_failed_request_says_it_waits_for_an_operator_not_for_people(page, demo, app):
    from tests.helpers.workers import drain
    from webapp.extensions import db

    failing = chain(("charge", node("serviceTask", "Charge", tool="fail", retries=0,
                                    inputs={"message": "'card declined'"})))  # fmt: skip
    with app.app_context():
        publish_document(failing, key="charge", name="Charge card")
    failed = start_latest(app, "charge", business_key="CARD-1", starter="alice")
    with app.app_context():
        drain(db.session)
        db.session.remove()
    sign_in(page, "alice")
    page.goto(f"/inbox/instances/{failed}")
    status = page.locator("#instance-summary dd").first
    expect(status).to_contain_text("Failed")
    expect(status).to_contain_text("waiting for an operator to retry or cancel it")
    expect(status).not_to_contain_text("waiting on people")
