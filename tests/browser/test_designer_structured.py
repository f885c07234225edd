"""Structured processes in the designer, drawn like a person in Chromium: a sub-process with a
user task inside, a timer boundary event attached by dropping it on the sub-process's border, a
multi-instance task set up in the panel, publishing; drill-down into collapsed sub-processes and
back with the breadcrumb, in the editor and on the version page; problems on nested elements."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import (
    CLICK_TRAP_MS,
    apply,
    bo,
    connect,
    open_designer,
    pad,
    palette_click,
    panel_for,
    pick,
    save_settled,
    screenshot,
    selected,
    shape_box,
    sign_in,
    wait_selected,
    wait_until,
)
from tests.helpers.designer import get_process
from tests.helpers.documents import approval_document
from webapp.models import Process, ProcessVersion, User
from webapp.services import processes

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process


def choose_role(page, role: str) -> None:
    """Assign the selected task to a role as quickly as a person can: the role is picked while
    the answer to the switch's own apply may still be on its way (it must not reset the role)."""
    panel = page.locator("#props")
    panel.get_by_label("Everyone with a role").check()
    page.wait_for_selector("#props select[name=assignee_role]")
    panel.get_by_label("Role", exact=True).select_option(role)
    apply(page)


def wait_applied(page, element_id: str, text: str) -> None:
    """Wait until the element's settings hold `text` (an earlier apply may say Applied first)."""
    wait_until(
        page,
        f"(modeler.get('elementRegistry').get('{element_id}').businessObject.extensionElements"
        f" || {{values: []}}).values.some(v => (v.body || '').includes('{text}'))",
    )


def test_draw_a_sub_process_with_a_boundary_timer_and_a_multi_instance_review(
    page, demo, db_session
):
    sign_in(page, "designer")
    page.goto("/designer/")
    page.get_by_role("link", name="New process").click()
    page.get_by_label("Key").fill("review_cycle")
    page.get_by_label("Name").fill("Review cycle")
    page.get_by_label("Partition").select_option(label="Finance")
    page.get_by_role("button", name="Create and open the designer").click()
    page.wait_for_selector("#designer[data-ready=true]")

    entry = page.locator('.djs-palette .entry[data-action="create.subprocess-expanded"]')
    assert "sub-process" in entry.get_attribute("aria-label")
    names = page.eval_on_selector_all(
        ".djs-palette .entry[data-action]",
        "es => es.map(e => [e.dataset.action, e.getAttribute('aria-label'), e.title])",
    )
    for action, label, title in names:
        assert label and label == title, action
    boundary = page.locator('.djs-palette .entry[data-action="create.error-boundary"]')
    assert "border of a task" in boundary.get_attribute("title")
    pick(page, "end")
    pad(page, "delete")
    start = shape_box(page, "start")
    scope = palette_click(
        page, "create.subprocess-expanded", start["x"] + 330, start["y"] + start["height"] / 2
    )
    assert bo(page, scope, "bo.$type") == "bpmn:SubProcess"
    page.keyboard.press("Escape")
    connect(page, "start", scope)
    pick(page, scope)
    outer_end = pad(page, "append.end-event")
    page.keyboard.press("Escape")

    inner_start = page.evaluate(
        f"modeler.get('elementRegistry').filter(e => e.parent && e.parent.id === '{scope}'"
        " && e.type === 'bpmn:StartEvent').map(e => e.id)[0]"
    )
    pick(page, inner_start)
    review = pad(page, "append.user-task")
    inner_end = pad(page, "append.end-event")
    page.keyboard.press("Escape")
    for element_id in (review, inner_end):
        assert bo(page, element_id, "bo.$parent.id") == scope

    # The timer from the palette, dropped on the sub-process's bottom border, becomes a
    # boundary event attached to it.
    box = shape_box(page, scope)
    timer = palette_click(
        page, "create.timer-catch", box["x"] + box["width"] * 0.3, box["y"] + box["height"]
    )
    assert bo(page, timer, "bo.$type") == "bpmn:BoundaryEvent"
    assert bo(page, timer, "bo.attachedToRef.id") == scope
    page.keyboard.press("Escape")
    pick(page, timer)
    escalate = pad(page, "append.user-task")
    late_end = pad(page, "append.end-event")
    page.keyboard.press("Escape")

    leaving = page.evaluate(
        "modeler.get('elementRegistry').filter(e => e.type === 'bpmn:SequenceFlow'"
        f" && e.businessObject.sourceRef.id === '{review}').map(e => e.id)[0]"
    )
    line = page.locator(f'.djs-connection[data-element-id="{leaving}"]').bounding_box()
    page.mouse.click(line["x"] + line["width"] / 2, line["y"] + line["height"] / 2)
    wait_selected(page, leaving)
    pad(page, "delete")  # the inner end is now cut off: an error inside the sub-process
    save_settled(page)
    nested = page.locator(f".djs-element.problem-error[data-element-id='{inner_end}']")
    assert nested.count() == 1
    ending = page.locator(f".djs-element.problem-warning[data-element-id='{review}']")
    assert ending.count() == 1, "a task with no way on ends its path there: a warning"
    connect(page, review, inner_end)
    pick(page, timer)
    panel = panel_for(page, timer)
    assert panel.get_by_label("Interrupting").is_checked()
    panel.get_by_label("Duration", exact=True).fill("P2D")
    apply(page)
    assert bo(page, timer, "bo.eventDefinitions[0].timeDuration.body") == "P2D"

    pick(page, review)
    panel = panel_for(page, review)
    panel.get_by_label("Title").fill("Review")
    apply(page)
    wait_until(
        page, f"modeler.get('elementRegistry').get('{review}').businessObject.name === 'Review'"
    )
    choose_role(page, "approver")
    wait_applied(page, review, "approver")
    panel.get_by_label("Parallel: all instances at once").check()
    collection = page.locator("#props").get_by_label("Collection (expression)")
    collection.wait_for()
    collection.fill("$input.reviewers[")
    page.wait_for_selector("#mi_collection-check .error")
    collection.fill("$input.reviewers")
    page.wait_for_selector("#mi_collection-check:has-text('Valid expression')")
    panel.get_by_label("Element variable").fill("reviewer")
    completion = panel.get_by_label("Completion condition")
    completion.fill("$loop.completed >= 2")
    page.wait_for_selector("#mi_completion-check:has-text('Valid expression')")
    apply(page)
    wait_applied(page, review, "reviewer")
    wait_applied(page, review, "approver")
    assert bo(page, review, "bo.loopCharacteristics.$type") == (
        "bpmn:MultiInstanceLoopCharacteristics"
    )
    assert bo(page, review, "bo.loopCharacteristics.isSequential") is False
    assert page.locator(f'.djs-shape[data-element-id="{review}"] .djs-visual path').count() > 1

    pick(page, escalate)
    panel = panel_for(page, escalate)
    panel.get_by_label("Title").fill("Chase the reviewers")
    panel.get_by_label("A user").check()
    panel.get_by_label("User", exact=True).select_option("alice")
    apply(page)
    wait_applied(page, escalate, "alice")
    save_settled(page)
    screenshot(page, "designer-structured-1280.png")
    assert page.locator("#problem-summary").inner_text() == "No problems found.", page.locator(
        "#problem-list"
    ).inner_text()

    page.click("#publish-link")
    page.get_by_label("Change note").fill("Reviews with a deadline")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")

    process_id = db_session.scalar(select(Process.id).where(Process.key == "review_cycle"))
    version = db_session.scalar(
        select(ProcessVersion).where(ProcessVersion.process_id == process_id)
    )
    nodes = version.document["nodes"]
    assert nodes[scope]["kind"] == "subProcess" and "parent" not in nodes[scope]
    assert {nodes[n].get("parent") for n in (inner_start, review, inner_end)} == {scope}
    assert nodes[timer]["kind"] == "boundaryEvent"
    assert nodes[timer]["config"]["attachedTo"] == scope
    assert nodes[timer]["config"]["event"] == "timer"
    assert nodes[timer]["config"]["duration"] == "P2D"
    assert nodes[timer]["config"].get("interrupting", True) is True
    assert nodes[review]["config"]["multiInstance"] == {
        "sequential": False,
        "collection": "$input.reviewers",
        "element": "reviewer",
        "completion": "$loop.completed >= 2",
    }
    assert "parent" not in nodes[escalate] and "parent" not in nodes[outer_end]
    assert late_end in nodes

    # Run it and watch it in operations: three reviews inside the sub-process, two are enough.
    token = page.locator("input[name=csrf_token]").first.get_attribute("value")
    started = page.request.post(
        "/api/instances",
        data={"process_key": "review_cycle", "input": {"reviewers": ["ann", "bob", "cy"]}},
        headers={"X-CSRFToken": token},
    )
    assert started.status == 201, started.text()
    instance_id = started.json()["id"]
    page.goto(f"/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    assert page.get_by_role("img", name="Multi-instance: 0 of 3 done").is_visible()
    active = '.djs-element.op-active[data-element-id="{}"]'
    assert page.locator(active.format(review)).count() == 1, "the reviews inside the scope"
    assert page.locator(active.format(scope)).count() == 1
    from webapp.engine import steps
    from webapp.models import Task
    from webapp.services.jobs import commit

    db_session.rollback()
    tasks = db_session.scalars(
        select(Task).where(Task.instance_id == instance_id).order_by(Task.id)
    ).all()
    assert len(tasks) == 3 and all(t.title == "Review" for t in tasks)
    for task in tasks[:2]:
        commit(steps.complete_task(db_session, task.id, {}, actor=None))
    page.reload()
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    assert page.locator(".op-status-completed").first.is_visible()
    assert page.locator(f'.djs-element.op-visited[data-element-id="{outer_end}"]').count() == 1
    assert page.locator(f'.djs-element.op-visited[data-element-id="{escalate}"]').count() == 0


def collapsed_document() -> dict:
    """start -> a collapsed sub-process (start -> check -> end) -> end."""
    return {
        "format_version": 1,
        "nodes": {
            "start": {"kind": "startEvent", "title": "Start", "position": {"x": 100, "y": 100}},
            "checks": {
                "kind": "subProcess",
                "title": "Checks",
                "config": {"collapsed": True},
                "position": {"x": 200, "y": 78},
            },
            "c_start": {"kind": "startEvent", "parent": "checks", "position": {"x": 100, "y": 100}},
            "c_check": {
                "kind": "userTask",
                "title": "Check the figures",
                "parent": "checks",
                "config": {"assignee": {"type": "role", "value": "clerk"}},
                "position": {"x": 200, "y": 78},
            },
            "c_end": {"kind": "endEvent", "parent": "checks", "position": {"x": 360, "y": 100}},
            "done": {"kind": "endEvent", "title": "Done", "position": {"x": 360, "y": 100}},
        },
        "flows": {
            "f1": {"source": "start", "target": "checks"},
            "f2": {"source": "checks", "target": "done"},
            "c1": {"source": "c_start", "target": "c_check"},
            "c2": {"source": "c_check", "target": "c_end"},
        },
    }


def drill_into(page, element_id: str) -> None:
    page.locator(f'.djs-overlays[data-container-id="{element_id}"] .bjs-drilldown').click()
    page.wait_for_selector(".bjs-breadcrumbs-shown .bjs-breadcrumbs li >> nth=1")


def test_drill_down_and_back_with_problems_marked_inside(page, make_process, db_session):
    doc = collapsed_document()
    doc["nodes"]["c_check"]["config"] = {"assignee": {"type": "role", "value": "no-such-role"}}
    pid = make_process(doc=doc)
    sign_in(page, "designer")
    open_designer(page, pid)
    root = "modeler.get('canvas').getRootElement().id"
    main_root = page.evaluate(root)
    assert page.locator(".djs-element.problem-error[data-element-id='checks']").count() == 1
    assert "Inside:" in page.locator(".problem-badge.problem-error").first.get_attribute("title")

    drill_into(page, "checks")
    assert page.evaluate(root) == "checks_plane"
    assert page.locator(".bjs-breadcrumbs li").nth(1).inner_text() == "Checks"
    marked = page.locator(".djs-element.problem-error[data-element-id='c_check']")
    assert marked.is_visible()
    page.locator(".bjs-breadcrumbs a.bjs-crumb").first.click()
    wait_until(page, f"{root} === '{main_root}'")

    page.locator("#problem-list button[data-element=c_check]").click()
    wait_selected(page, "c_check")
    assert page.evaluate(root) == "checks_plane"
    panel_for(page, "c_check")
    choose_role(page, "clerk")
    wait_applied(page, "c_check", "clerk")
    save_settled(page)
    assert page.locator("#problem-summary").inner_text() == "No problems found.", page.locator(
        "#problem-list"
    ).inner_text()
    assert page.locator(".djs-element.problem-error").count() == 0
    stored = get_process(db_session, pid).draft_document
    assert stored["nodes"]["checks"]["config"].get("collapsed") is True
    assert stored["nodes"]["c_check"]["parent"] == "checks"


def test_the_version_page_drills_down_too(page, make_process, db_session):
    pid = make_process(doc=collapsed_document())
    actor = db_session.scalar(select(User).where(User.username == "designer"))
    processes.publish(db_session.get(Process, pid), actor=actor, note="v1")
    db_session.commit()
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/versions/1")
    page.wait_for_selector("[data-viewer][data-ready=true]")
    drill_into(page, "checks")
    assert page.locator('.djs-shape[data-element-id="c_check"]').is_visible()
    page.locator(".bjs-breadcrumbs a.bjs-crumb").first.click()
    page.wait_for_selector('.djs-shape[data-element-id="checks"]', state="visible")


def test_replace_menu_event_sub_process_and_multi_instance_marker(page, make_process, db_session):
    pid = make_process(doc=approval_document())
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, "designer")
    open_designer(page, pid)

    pick(page, "rejected")
    pad(page, "replace")
    page.click('.djs-popup .entry[data-id="replace-with-error-end"]')
    page.wait_for_timeout(CLICK_TRAP_MS)
    rejected = selected(page)[0]
    panel = panel_for(page, rejected)
    assert panel.get_by_label("Ends with").input_value() == "error"
    panel.get_by_label("Code").fill("REJECTED")
    apply(page)
    wait_until(
        page,
        f"(modeler.get('elementRegistry').get('{rejected}').businessObject.eventDefinitions[0]"
        ".errorRef || {}).errorCode === 'REJECTED'",
    )

    canvas = page.locator("#canvas").bounding_box()
    count = "modeler.get('elementRegistry').filter(e => e.type === 'bpmn:BoundaryEvent').length"
    palette_click(page, "create.error-boundary", canvas["x"] + 600, canvas["y"] + 60)
    page.keyboard.press("Escape")
    assert page.evaluate(count) == 0, "an error boundary event goes only on an activity's border"
    box = shape_box(page, "review")
    caught = palette_click(
        page, "create.error-boundary", box["x"] + box["width"] / 2, box["y"] + box["height"]
    )
    assert bo(page, caught, "bo.attachedToRef.id") == "review"
    page.keyboard.press("Escape")
    pick(page, caught)
    save_settled(page)  # marks the boundary event: it has no flow out yet
    assert page.locator(f".djs-element.problem-error[data-element-id='{caught}']").count() == 1
    pad(page, "delete")
    scope = palette_click(
        page, "create.event-subprocess", canvas["x"] + 420, canvas["y"] + canvas["height"] - 130
    )
    assert bo(page, scope, "bo.triggeredByEvent") is True
    page.keyboard.press("Escape")
    start = page.evaluate(
        f"modeler.get('elementRegistry').filter(e => e.parent && e.parent.id === '{scope}'"
        " && e.type === 'bpmn:StartEvent').map(e => e.id)[0]"
    )
    pick(page, start)
    panel = panel_for(page, start)
    panel.get_by_label("Reacts to").select_option("message")
    page.wait_for_selector("#props input[name=message]")
    panel.get_by_label("Message name").fill("cancel")
    panel.get_by_label("Interrupting").uncheck()
    apply(page)
    wait_until(
        page,
        f"modeler.get('elementRegistry').get('{start}').businessObject.isInterrupting === false",
    )
    assert bo(page, start, "bo.eventDefinitions[0].$type") == "bpmn:MessageEventDefinition"
    assert bo(page, start, "bo.eventDefinitions[0].messageRef.name") == "cancel"

    pick(page, "review")
    pad(page, "replace")
    page.click('.djs-popup .entry[data-id="toggle-sequential-mi"]')
    wait_until(
        page,
        "(modeler.get('elementRegistry').get('review').businessObject.loopCharacteristics || {})"
        ".isSequential === true",
    )
    page.keyboard.press("Escape")
    pick(page, "review")
    panel = panel_for(page, "review")
    page.wait_for_selector("#props input[name=mi_mode][value=sequential]:checked")
    panel.get_by_label("Collection (expression)").fill("$input.reviewers")
    apply(page)
    wait_applied(page, "review", "reviewers")
    pad(page, "replace")
    page.click('.djs-popup .entry[data-id="toggle-sequential-mi"]')
    wait_until(
        page, "!modeler.get('elementRegistry').get('review').businessObject.loopCharacteristics"
    )
    page.keyboard.press("Escape")
    save_settled(page)
    doc = get_process(db_session, pid).draft_document
    assert doc["nodes"][rejected]["config"] == {"event": "error", "code": "REJECTED"}
    assert doc["nodes"][scope]["kind"] == "eventSubProcess"
    assert doc["nodes"][start]["parent"] == scope
    assert doc["nodes"][start]["config"] == {
        "event": "message",
        "message": "cancel",
        "interrupting": False,
    }
    assert "multiInstance" not in doc["nodes"]["review"]["config"], "the marker's settings go too"
    assert errors == [], "saving after deleting a marked element works"


def test_structured_designer_pages_pass_the_accessibility_audit(page, make_process):
    from tests.helpers.browser import serious_violations

    doc = collapsed_document()
    doc["nodes"]["c_check"]["config"]["multiInstance"] = {"collection": "$input.items"}
    doc["nodes"]["call"] = {
        "kind": "callActivity",
        "title": "Pay",
        "config": {"process": "invoice", "inputs": {"amount": "$input.amount"}},
        "position": {"x": 700, "y": 320},
    }
    pid = make_process(doc=doc)
    sign_in(page, "designer")
    open_designer(page, pid)
    pick(page, "call")
    panel_for(page, "call")
    assert serious_violations(page) == []
    drill_into(page, "checks")
    pick(page, "c_check")
    page.wait_for_selector("#props #multi-instance input[name=mi_collection]")
    assert serious_violations(page) == []
    page.goto(f"/designer/{pid}/outline")
    assert page.get_by_role("list", name="Inside Checks").is_visible()
    assert serious_violations(page) == []


def test_the_panel_names_a_boundary_events_activity_and_checks_an_output_as_typed(
    page, make_process
):
    """The issue's review: a timer on it says which activity it is on by name, and making the
    review multi-instance, an output of `$vars.review` is refused as typed (it would save
    nulls) while the hint's `$nodes.review.approved` is valid."""
    doc = approval_document()
    doc["nodes"]["late"] = {
        "kind": "boundaryEvent", "title": "",
        "config": {"attachedTo": "review", "event": "timer", "duration": "P1D"},
        "position": {"x": 240, "y": 140},
    }  # fmt: skip
    doc["flows"]["f5"] = {"source": "late", "target": "rejected"}
    pid = make_process(doc=doc)
    sign_in(page, "designer")
    open_designer(page, pid)
    pick(page, "late")
    panel = panel_for(page, "late")
    assert panel.get_by_text("Attached to User task 'Review'.").count() == 1
    assert panel.get_by_text("review", exact=True).count() == 0, "no bare id"

    pick(page, "review")
    panel = panel_for(page, "review")
    panel.get_by_label("Parallel: all instances at once").check()
    collection = page.locator("#props").get_by_label("Collection (expression)")
    collection.wait_for()
    collection.fill("$input.reviewers")
    page.wait_for_selector("#mi_collection-check:has-text('Valid expression')")
    hint = page.locator("#mi_output-hint")
    assert "$nodes.review.approved" in hint.inner_text()
    output = panel.get_by_label("Output of each instance (expression)")
    output.fill("$vars.review")
    page.wait_for_selector("#mi_output-check .error:has-text('after all instances')")
    assert "$nodes.review" in page.locator("#mi_output-check").inner_text()
    output.fill("$nodes.review.approved")
    page.wait_for_selector("#mi_output-check:has-text('Valid expression')")
