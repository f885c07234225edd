"""The designer in Chromium: the real palette, context pad and properties panel, saving,
problem markers, publishing, comparing, the outline view, conflicts and both page widths."""

from __future__ import annotations

from itertools import pairwise

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import (
    CLICK_TRAP_MS,
    apply,
    bo,
    click_flow,
    click_shape,
    close_context,
    new_context,
    open_designer,
    pad,
    panel_for,
    save,
    screenshot,
    selected,
    sign_in,
    wait_selected,
    wait_until,
)
from tests.helpers.designer import get_process
from tests.helpers.documents import approval_document
from webapp.models import Process, ProcessVersion
from webapp.process.bpmn import export_bpmn

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process


def test_draw_configure_save_publish_edit_and_compare(page, demo, db_session):
    sign_in(page, "designer")
    page.goto("/designer/")
    page.get_by_role("link", name="New process").click()
    page.get_by_label("Key").fill("expense")
    page.get_by_label("Name").fill("Expense claim")
    page.get_by_label("Partition").select_option(label="Finance")
    page.get_by_role("button", name="Create and open the designer").click()
    page.wait_for_selector("#designer[data-ready=true]")

    click_shape(page, "end")
    pad(page, "delete")
    click_shape(page, "start")
    task = pad(page, "append.user-task")
    gateway = pad(page, "append.gateway")
    approved = pad(page, "append.end-event")
    page.keyboard.press("Escape")
    click_shape(page, gateway)
    rejected = pad(page, "append.end-event")
    page.keyboard.press("Escape")
    types = (
        bo(page, task, "bo.$type"),
        bo(page, gateway, "bo.$type"),
        bo(page, rejected, "bo.$type"),
    )
    assert types == ("bpmn:UserTask", "bpmn:ExclusiveGateway", "bpmn:EndEvent")
    assert approved != rejected

    click_shape(page, task)
    panel = panel_for(page, task)
    panel.get_by_label("Title").fill("Approve claim")
    panel.get_by_label("A user").check()
    panel.get_by_label("User", exact=True).select_option("alice")
    panel.get_by_label("Save the result as").fill("review")
    for index, (key, label, kind) in enumerate(
        [("approved", "Approve?", "boolean"), ("comment", "Comment", "textarea")]
    ):
        panel.get_by_role("button", name="Add field").click()
        page.wait_for_selector(f"#fields-{index}-key")
        panel.locator(f"#fields-{index}-key").fill(key)
        panel.locator(f"#fields-{index}-label").fill(label)
        panel.locator(f"#fields-{index}-type").select_option(kind)
        page.wait_for_selector(
            f"#fields-{index}-type option[value={kind}][selected]", state="attached"
        )
    assert page.locator("#form-preview").get_by_label("Approve?").is_visible()
    apply(page)
    assert bo(page, task, "bo.name") == "Approve claim"
    config = bo(page, task, "JSON.parse(bo.extensionElements.values[0].body)")
    assert config["assignee"] == {"type": "user", "value": "alice"}
    assert [f["key"] for f in config["form"]["fields"]] == ["approved", "comment"]

    flows = page.evaluate(
        f"modeler.get('elementRegistry').get('{gateway}').outgoing.map(e => e.id)"
    )
    for flow, text in zip(
        flows, ["$vars.review.approved == true", "$vars.review.approved == false"]
    ):
        click_flow(page, flow)
        condition = panel_for(page, flow).get_by_label("Condition", exact=True)
        condition.fill("$vars.review.approved ==")
        page.wait_for_selector("#condition-check .error")
        condition.fill(text)
        page.wait_for_selector("#condition-check:has-text('Valid expression')")
        apply(page)
    save(page)
    marker = f".djs-element.problem-warning[data-element-id='{gateway}']"
    page.wait_for_selector(marker)
    assert "no default flow" in page.locator("#problem-list").inner_text()
    screenshot(page, "designer-warning-1280.png")

    page.locator("#problem-list button").first.click()
    wait_selected(page, gateway)
    click_flow(page, flows[1], at=0.85)  # clear of the selected gateway's context pad
    panel_for(page, flows[1]).get_by_label("Default flow").check()
    apply(page, "condition was removed")
    save(page)
    assert page.locator(marker).count() == 0
    assert page.locator("#problem-summary").inner_text() == "No problems found."

    page.click("#publish-link")
    page.get_by_label("Change note").fill("First version")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")
    assert page.get_by_role("link", name="v1", exact=True).is_visible()

    process_id = db_session.scalar(select(Process.id).where(Process.key == "expense"))
    stored = get_process(db_session, process_id).draft_document
    assert stored["nodes"][task]["config"]["form"]["fields"][1]["type"] == "textarea"
    assert stored["flows"][flows[1]]["default"] is True
    assert stored["nodes"][task]["position"]["x"] > stored["nodes"]["start"]["position"]["x"]

    open_designer(page, process_id)
    click_shape(page, task)
    panel_for(page, task).get_by_label("Title").fill("Approve the claim")
    apply(page)
    save(page)
    page.click("#publish-link")
    page.get_by_label("Change note").fill("Clearer title")
    page.get_by_role("button", name="Publish version 2").click()
    page.wait_for_url("**/versions")
    page.get_by_role("link", name="with v1").click()
    page.wait_for_selector("[data-viewer=new-diagram][data-ready=true]")
    changed = page.locator(f"#diff-list li[data-element='{task}']")
    assert changed.get_attribute("data-status") == "changed"
    assert "Approve the claim" in changed.inner_text()
    assert (
        page.locator(
            f"[data-viewer=new-diagram] .djs-element.diff-changed[data-element-id='{task}']"
        ).count()
        == 1
    )
    screenshot(page, "designer-compare-1280.png", full_page=True)
    versions = db_session.scalars(
        select(ProcessVersion.number).where(ProcessVersion.process_id == process_id)
    ).all()
    assert sorted(versions) == [1, 2]


def test_palette_timer_and_message_settings_survive_a_reload(page, make_process, db_session):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    created = {}
    for action in ("create.timer-catch", "create.message-catch"):
        page.click(f'.djs-palette .entry[data-action="{action}"]')
        box = page.locator("#canvas").bounding_box()
        x, y = box["x"] + 300 + 120 * len(created), box["y"] + box["height"] - 120
        page.mouse.move(x - 40, y - 40, steps=4)
        page.mouse.move(x, y, steps=4)
        page.mouse.click(x, y)
        page.wait_for_timeout(CLICK_TRAP_MS)
        page.keyboard.press("Escape")
        created[action] = selected(page)[0]
    timer, message = created["create.timer-catch"], created["create.message-catch"]
    click_shape(page, timer)
    panel_for(page, timer).get_by_label("Duration", exact=True).fill("PT5M")
    apply(page)
    duration = (
        f"modeler.get('elementRegistry').get('{timer}')"
        ".businessObject.eventDefinitions[0].timeDuration"
    )
    assert page.evaluate(f"{duration}.body") == "PT5M"
    page.evaluate("modeler.get('commandStack').undo()")
    assert page.evaluate(f"{duration} === undefined"), "one undo reverts the whole apply"
    page.evaluate("modeler.get('commandStack').redo()")
    click_shape(page, message)
    panel = panel_for(page, message)
    panel.get_by_label("Message name").fill("payment-received")
    panel.get_by_label("Correlation key (expression)").fill("$input.orderId")
    apply(page)
    save(page)
    doc = get_process(db_session, pid).draft_document
    assert doc["nodes"][timer]["config"] == {"duration": "PT5M"}
    assert doc["nodes"][message]["config"] == {
        "message": "payment-received",
        "correlationKey": "$input.orderId",
    }
    page.reload()
    page.wait_for_selector("#designer[data-ready=true]")
    click_shape(page, timer)
    assert panel_for(page, timer).get_by_label("Duration", exact=True).input_value() == "PT5M"
    click_shape(page, message)
    assert panel_for(page, message).get_by_label("Message name").input_value() == "payment-received"


def test_only_supported_kinds_are_offered(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    palette = set(
        page.eval_on_selector_all(".djs-palette .entry", "es => es.map(e => e.dataset.action)")
    )
    assert palette - {None} == {
        "hand-tool", "lasso-tool", "space-tool", "global-connect-tool", "create.start-event",
        "create.end-event", "create.exclusive-gateway", "create.user-task", "create.service-task",
        "create.parallel-gateway", "create.timer-catch", "create.message-catch",
        "create.subprocess-expanded", "create.event-subprocess", "create.call-activity",
        "create.error-boundary", "create.escalation-boundary", "create.escalation-throw",
        "create.error-end", "create.escalation-end", "create.terminate-end",
        "create.signal-end", "create.message-end", "create.message-start", "create.timer-start",
        "create.signal-start", "create.signal-catch", "create.signal-throw",
        "create.message-throw", "create.link-throw", "create.link-catch", "create.milestone",
        "create.inclusive-gateway", "create.event-based-gateway", "create.send-task",
        "create.receive-task", "create.script-task", "create.manual-task",
        "create.business-rule-task", "create.adhoc-subprocess", "create.transaction",
        "create.complex-gateway", "create.conditional-catch", "create.conditional-start",
        "create.compensation-throw", "create.compensation-boundary", "create.compensation-end",
    }  # fmt: skip
    click_shape(page, "review")
    actions = set(
        page.eval_on_selector_all(".djs-context-pad .entry", "es => es.map(e => e.dataset.action)")
    )
    assert {
        "append.user-task",
        "append.gateway",
        "append.end-event",
        "connect",
        "replace",
    } <= actions
    assert (
        not {"append.append-task", "append.text-annotation", "append.intermediate-event"} & actions
    )
    pad(page, "replace")
    entries = page.eval_on_selector_all(".djs-popup .entry", "es => es.map(e => e.dataset.id)")
    assert set(entries) == {
        "replace-with-service-task", "replace-with-call-activity",
        "replace-with-collapsed-subprocess", "replace-with-expanded-subprocess",
        "replace-with-send-task", "replace-with-receive-task", "replace-with-script-task",
        "replace-with-manual-task", "replace-with-rule-task", "replace-with-ad-hoc-subprocess",
        "toggle-parallel-mi", "toggle-sequential-mi",
    }  # fmt: skip
    page.keyboard.press("Escape")


def test_auto_layout_and_moved_shapes_keep_their_positions(page, make_process, db_session):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    page.evaluate(
        "(() => { const r = modeler.get('elementRegistry');"
        " modeler.get('modeling').moveElements([r.get('done')], {x: 40, y: 200}); })()"
    )
    save(page)
    doc = get_process(db_session, pid).draft_document
    assert doc["nodes"]["done"]["position"]["y"] == 300
    assert len(doc["flows"]["f3"]["waypoints"]) >= 2, "a re-routed flow keeps its drawn route"
    assert doc["flows"]["f1"]["waypoints"] == [], "untouched generated routes stay generated"
    revision = int(page.get_attribute("#designer", "data-revision"))
    page.click("#layout-button")
    page.wait_for_selector("#save-status:has-text('Laid out and saved')")
    assert int(page.get_attribute("#designer", "data-revision")) == revision + 1
    doc = get_process(db_session, pid).draft_document
    assert doc["nodes"]["done"]["position"]["y"] != 300


def test_invalid_panel_values_are_shown_and_not_applied(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel = panel_for(page, "review")
    panel.get_by_label("Due in").fill("tomorrow")
    panel.get_by_role("button", name="Apply").click()
    page.wait_for_selector("#panel-status:has-text('nothing was applied')")
    assert "must start with 'P'" in panel.inner_text()
    assert bo(page, "review", "JSON.parse(bo.extensionElements.values[0].body).dueIn") is None


def test_a_second_tab_gets_a_conflict_instead_of_overwriting(page, make_process, db_session):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    other = page.context.new_page()
    open_designer(other, pid)
    click_shape(other, "review")
    panel_for(other, "review").get_by_label("Title").fill("Edited in tab two")
    apply(other)
    save(other)

    click_shape(page, "done")
    panel_for(page, "done").get_by_label("Title").fill("Edited in tab one")
    apply(page)
    page.click("#save-button")
    page.wait_for_selector("#conflict:not([hidden])")
    assert "saved by someone else" in page.locator("#conflict").inner_text()
    doc = get_process(db_session, pid).draft_document
    assert doc["nodes"]["review"]["title"] == "Edited in tab two"
    assert doc["nodes"]["done"]["title"] == "Done"
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#conflict-reload")
    page.wait_for_selector("#designer[data-ready=true]")
    assert bo(page, "review", "bo.name") == "Edited in tab two"
    other.close()


def test_leaving_with_unsaved_edits_asks_first(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel_for(page, "review").get_by_label("Title").fill("Unsaved")
    apply(page)
    dialogs = []

    def dismiss(dialog):
        dialogs.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.click("a[href='/designer/']")
    page.wait_for_timeout(300)
    assert dialogs == ["beforeunload"]
    assert page.url.endswith(f"/designer/{pid}/")
    save(page)  # leave no autosave running into the next test's table cleanup


def test_outline_alone_builds_a_process(page, demo, db_session):
    sign_in(page, "designer")
    page.goto("/designer/new")
    page.get_by_label("Key").fill("leave")
    page.get_by_label("Name").fill("Leave request")
    page.get_by_label("Partition").select_option(label="Finance")
    page.get_by_role("button", name="Create and open the designer").click()
    page.wait_for_selector("#designer[data-ready=true]")
    page.get_by_role("link", name="Outline").click()

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete the flow Start → End").click()
    page.wait_for_selector("#node-flow_1", state="detached")
    page.get_by_label("Kind").select_option("userTask")
    page.get_by_label("Title", exact=True).fill("Approve leave")
    page.get_by_label("Connect from").select_option("start")
    page.get_by_role("button", name="Add node").click()
    expect(page.get_by_text("User task 'Approve leave' added.")).to_be_visible()
    page.get_by_label("From", exact=True).select_option("userTask_1")
    page.get_by_label("To", exact=True).select_option("end")
    page.get_by_role("button", name="Connect", exact=True).click()
    page.get_by_label("New title for End").fill("Decided")
    page.get_by_label("New title for End").press("Enter")
    assert page.get_by_text("renamed to 'Decided'").is_visible()

    page.get_by_role("link", name="Settings… of Approve leave").click()
    page.get_by_label("A user").check()
    page.get_by_label("User", exact=True).select_option("alice")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**/outline#node-userTask_1")
    assert page.get_by_text("No problems found.").is_visible()

    process_id = db_session.scalar(select(Process.id).where(Process.key == "leave"))
    doc = get_process(db_session, process_id).draft_document
    assert set(doc["nodes"]) == {"start", "end", "userTask_1"}
    assert doc["nodes"]["end"]["title"] == "Decided"
    assert doc["nodes"]["userTask_1"]["config"]["assignee"] == {"type": "user", "value": "alice"}
    assert {(f["source"], f["target"]) for f in doc["flows"].values()} == {
        ("start", "userTask_1"),
        ("userTask_1", "end"),
    }
    page.get_by_role("button", name="Auto layout").click()
    page.get_by_role("link", name="Diagram").click()
    page.wait_for_selector("#designer[data-ready=true]")
    assert page.locator(".djs-shape[data-element-id=userTask_1]").is_visible()


def _watermark_visible(page) -> bool:
    return page.evaluate(
        """(() => {
          const link = document.querySelector('.bjs-powered-by');
          link.scrollIntoView({ block: 'center', inline: 'center' });
          const r = link.getBoundingClientRect();
          const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return !!hit && (hit === link || link.contains(hit));
        })()"""
    )


@pytest.mark.parametrize("width", [1280, 390])
def test_designer_layout_at_desktop_and_phone_width(browser, live_server, make_process, width):
    pid = make_process(doc=approval_document())
    context = new_context(browser, live_server, width, 844)
    page = context.new_page()
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel_for(page, "review")
    page.evaluate("window.scrollTo(0, 0)")
    assert _watermark_visible(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"designer-{width}.png", full_page=True)
    page.goto(f"/designer/{pid}/outline")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"outline-{width}.png", full_page=True)
    close_context(context)


def test_a_bpmn_file_is_imported_through_the_page(page, demo, db_session, tmp_path):
    broken = tmp_path / "broken.bpmn"
    broken.write_text('<?xml version="1.0"?>\n<definitions>\n  <process>\n</definitions>')
    good = tmp_path / "approval.bpmn"
    good.write_text(export_bpmn(approval_document()))
    sign_in(page, "designer")
    page.goto("/designer/")
    page.get_by_role("link", name="Import BPMN").click()
    page.get_by_label("BPMN or JSON file").set_input_files(str(broken))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_text("line 4").first).to_be_visible()  # the refusal names the line
    assert db_session.scalar(select(Process)) is None, "nothing saved"
    page.get_by_label("BPMN or JSON file").set_input_files(str(good))
    page.get_by_label("Key").fill("imported")
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("heading", name="Import report: imported")).to_be_visible()
    assert page.get_by_text("Imported").first.is_visible()
    expect(page.get_by_text("Nothing: the draft can be published as it is.")).to_be_visible()
    page.get_by_role("link", name="Diagram").click()
    page.wait_for_selector("#designer[data-ready=true]")
    assert page.locator(".djs-shape[data-element-id=review]").is_visible()
    db_session.rollback()
    assert db_session.scalar(select(Process.key)) == "imported"


def wait_named(page, element_id: str, name: str) -> None:
    element = f"modeler.get('elementRegistry').get('{element_id}')"
    wait_until(page, f"{element}.businessObject.name === '{name}'")


def status_text(page) -> str:
    return page.locator("#save-status").inner_text()


def test_panel_edits_apply_as_you_type_and_when_another_element_is_selected(
    page, make_process, db_session
):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "done")
    panel_for(page, "done").get_by_label("Title").fill("Finished")
    assert "Saved" not in status_text(page), "unapplied edits are not reported as saved"
    wait_named(page, "done", "Finished")
    page.evaluate("modeler.get('commandStack').undo()")
    assert bo(page, "done", "bo.name") == "Done", "one undo step per field change"
    page.evaluate("modeler.get('commandStack').redo()")

    click_shape(page, "review")
    panel = panel_for(page, "review")
    panel.get_by_label("Title").fill("Typed and left at once")
    panel.get_by_label("Due in").fill("P2D")
    click_shape(page, "start")
    panel_for(page, "start")
    assert bo(page, "review", "bo.name") == "Typed and left at once"
    assert bo(page, "review", "JSON.parse(bo.extensionElements.values[0].body).dueIn") == "P2D"
    save(page)
    doc = get_process(db_session, pid).draft_document
    assert doc["nodes"]["review"]["title"] == "Typed and left at once"
    assert doc["nodes"]["review"]["config"]["dueIn"] == "P2D"
    assert doc["nodes"]["done"]["title"] == "Finished"


def test_an_invalid_panel_value_is_kept_until_the_user_discards_it(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel_for(page, "review").get_by_label("Due in").fill("tomorrow")
    page.wait_for_selector("#panel-status:has-text('nothing was applied')")
    assert "not valid" in status_text(page)
    dialogs: list[str] = []

    def answer(accept: bool):
        def handle(dialog):
            dialogs.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()

        return handle

    page.once("dialog", answer(False))
    box = page.locator('.djs-shape[data-element-id="done"]').bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_until(page, "document.activeElement && document.activeElement.id === 'due_in'")
    assert "not valid" in dialogs[0]
    assert selected(page) == ["review"], "the panel's element stays selected"
    assert page.locator("#props-form input[name=element_id]").input_value() == "review"
    assert page.get_by_label("Due in").input_value() == "tomorrow"
    assert bo(page, "review", "JSON.parse(bo.extensionElements.values[0].body).dueIn") is None

    page.once("dialog", answer(True))
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    panel_for(page, "done")
    assert len(dialogs) == 2
    assert bo(page, "review", "JSON.parse(bo.extensionElements.values[0].body).dueIn") is None


def test_leaving_right_after_typing_in_the_panel_asks_and_keeps_the_edit(
    page, make_process, db_session
):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel_for(page, "review").get_by_label("Title").fill("Not lost")
    dialogs = []

    def dismiss(dialog):
        dialogs.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.click("a[href='/designer/']")
    wait_named(page, "review", "Not lost")
    assert dialogs == ["beforeunload"]
    save(page)
    assert get_process(db_session, pid).draft_document["nodes"]["review"]["title"] == "Not lost"
    page.click("a[href='/designer/']")
    page.wait_for_url("**/designer/")
    assert dialogs == ["beforeunload"], "nothing unapplied or unsaved: no prompt"


def test_a_default_flow_shows_why_it_has_no_condition(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_flow(page, "f4")
    panel = panel_for(page, "f4")
    assert panel.locator("#condition").count() == 0
    assert "A default flow takes no condition" in panel.locator("#default-note").inner_text()
    click_flow(page, "f3", at=0.85)  # clear of the segment it shares with f4
    panel = panel_for(page, "f3")
    assert panel.get_by_label("Condition", exact=True).is_visible()
    panel.get_by_label("Default flow").check()
    page.wait_for_selector("#panel-status:has-text('condition was removed')")
    assert panel.locator("[name=condition]").count() == 0, "not even hidden: it was removed"
    assert panel.locator("#default-note").is_visible()
    assert bo(page, "f3", "bo.conditionExpression === undefined")
    assert bo(page, "f3", "bo.sourceRef.default && bo.sourceRef.default.id") == "f3"


UNCOVERED = """(selector) => {
  const el = selector ? document.querySelector(selector) : document.activeElement;
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  if (hit && (hit === el || el.contains(hit))) return '';
  const what = el.id || el.name || el.textContent.trim();
  return `${what} is under ${hit ? hit.outerHTML.slice(0, 80) : 'nothing'}`;
}"""


def test_every_panel_field_is_reachable_and_the_apply_status_stays_in_view(page, make_process):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel = panel_for(page, "review")
    panel.get_by_label("Title").focus()
    covered = []
    for _ in range(80):
        if not page.evaluate("document.querySelector('#props-form:focus-within')"):
            break
        covered.append(page.evaluate(UNCOVERED, None))
        page.keyboard.press("Tab")
    assert [c for c in covered if c] == [], "a focused field is hidden under the Apply bar"
    assert len(covered) > 8

    last = page.locator("#props-form input[type=text]:visible").last
    last.focus()
    last.press("End")
    last.press_sequentially(" (yes/no)")
    page.wait_for_selector("#panel-status:has-text('Applied')")
    assert page.evaluate(UNCOVERED, "#panel-status") == "", "the status is in view"
    assert page.evaluate(UNCOVERED, None) == "", "the field typed in is in view"
    apply_button = panel.get_by_role("button", name="Apply")
    apply_button.focus()
    assert page.evaluate(UNCOVERED, None) == "", "Apply stays reachable from the keyboard"


def test_outline_and_compare_show_names_not_ids(page, make_process, db_session):
    from webapp.services import processes

    doc = approval_document()
    doc["nodes"]["ok"]["title"] = ""
    pid = make_process(doc=doc)
    process = get_process(db_session, pid)
    processes.publish(process, actor=None, note="one")
    db_session.commit()
    doc["nodes"]["review"]["config"]["dueIn"] = "P1D"
    process = get_process(db_session, pid)
    processes.save_draft(process, doc, base_revision=process.draft_revision, actor=None)
    processes.publish(process, actor=None, note="two")
    db_session.commit()

    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/outline")
    review = page.locator("#node-review .links")
    assert " ".join(review.inner_text().split()).startswith(
        "From: Start start · To: Exclusive gateway"
    )
    page.get_by_label("New title for Review").fill("Check budget")
    page.get_by_label("New title for Review").press("Enter")
    assert page.get_by_text("'Review' renamed to 'Check budget'.").is_visible()

    page.goto(f"/designer/{pid}/compare?a=1&b=2")
    changed = page.locator('[data-element="review"] tbody tr')
    assert changed.first.locator("td").first.inner_text() == "Due in config.dueIn"


NO_DIAGRAM = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="x">
  <process id="routing" isExecutable="true">
    <startEvent id="start" name="Claim in" />
    <exclusiveGateway id="amount" name="Amount?" />
    <userTask id="small" name="Pay out" />
    <userTask id="usual" name="Check claim" />
    <userTask id="large" name="Ask expert" />
    <exclusiveGateway id="merge" />
    <endEvent id="done" name="Done" />
    <sequenceFlow id="f_in" sourceRef="start" targetRef="amount" />
    <sequenceFlow id="f_small" name="under 100" sourceRef="amount" targetRef="small" />
    <sequenceFlow id="f_usual" name="100 to 5000" sourceRef="amount" targetRef="usual" />
    <sequenceFlow id="f_large" name="over 5000" sourceRef="amount" targetRef="large" />
    <sequenceFlow id="m_small" sourceRef="small" targetRef="merge" />
    <sequenceFlow id="m_usual" sourceRef="usual" targetRef="merge" />
    <sequenceFlow id="m_large" sourceRef="large" targetRef="merge" />
    <sequenceFlow id="f_out" sourceRef="merge" targetRef="done" />
  </process>
</definitions>
"""

DRAWN_ROUTES = """ids => ids.map(id => {
  const flow = modeler.get('elementRegistry').get(id);
  const label = flow.label;
  return {id, points: flow.waypoints.map(p => [p.x, p.y]),
          label: label ? [label.x + label.width / 2, label.y + label.height / 2] : null};
})"""


def _shares(first: list[list[float]], second: list[list[float]]) -> bool:
    """Tell whether two drawn routes run along a common stretch (level or upright)."""
    for a, b in pairwise(first):
        for c, d in pairwise(second):
            for axis in (0, 1):
                across = 1 - axis
                line_up = max(abs(a[across] - b[across]), abs(c[across] - d[across]))
                if line_up < 0.5 and abs(a[across] - c[across]) < 0.5:
                    low = max(min(a[axis], b[axis]), min(c[axis], d[axis]))
                    if min(max(a[axis], b[axis]), max(c[axis], d[axis])) - low > 0.5:
                        return True
    return False


def _gap(point: list[float], line: list[list[float]]) -> float:
    best = float("inf")
    for (ax, ay), (bx, by) in pairwise(line):
        nx = min(max(point[0], min(ax, bx)), max(ax, bx))
        ny = min(max(point[1], min(ay, by)), max(ay, by))
        best = min(best, ((point[0] - nx) ** 2 + (point[1] - ny) ** 2) ** 0.5)
    return best


def _assert_own_routes(page) -> None:
    exits = page.evaluate(DRAWN_ROUTES, ["f_small", "f_usual", "f_large"])
    joins = page.evaluate(DRAWN_ROUTES, ["m_small", "m_usual", "m_large"])
    for group in (exits, joins):
        for a, b in [(0, 1), (0, 2), (1, 2)]:
            assert not _shares(group[a]["points"], group[b]["points"]), (group[a], group[b])
    assert len({tuple(flow["points"][0]) for flow in exits}) == 3, "three exits, three starts"
    assert len({tuple(flow["points"][1]) for flow in exits}) == 3, "they part at once"
    fork = exits[0]["points"][0]
    for flow in exits:
        mine = _gap(flow["label"], flow["points"])
        assert mine < 20, f"{flow['id']}'s name is by its route"
        assert all(_gap(flow["label"], o["points"]) > mine for o in exits if o is not flow)
        assert _gap(flow["label"], [fork, fork]) > 30, f"{flow['id']}'s name is not at the fork"


def test_an_imported_file_without_diagram_gives_each_exit_its_own_route(
    page, demo, db_session, tmp_path
):
    """As drawn by bpmn-js: after the import's automatic layout and again
    after the Auto layout button, the gateway's three exits (and the three flows into the
    merge) leave on their own routes, each name beside its own route."""
    source = tmp_path / "routing.bpmn"
    source.write_text(NO_DIAGRAM)
    sign_in(page, "designer")
    page.goto("/designer/import")
    page.get_by_label("BPMN or JSON file").set_input_files(str(source))
    page.get_by_label("Key").fill("routing")
    page.get_by_role("button", name="Import").click()
    page.get_by_role("link", name="Diagram").click()
    page.wait_for_selector("#designer[data-ready=true]")
    _assert_own_routes(page)

    page.click("#layout-button")
    page.wait_for_selector("#save-status:has-text('Laid out and saved')")
    wait_until(page, "modeler.get('elementRegistry').get('f_small').waypoints.length > 1")
    _assert_own_routes(page)
    screenshot(page, "designer-auto-layout-routes.png")
