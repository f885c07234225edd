"""The properties panel for structured processes: multi-instance, call activities, boundary
events, error/escalation/terminate ends, escalation throws and event sub-process starts. Each
field is checked on the server; a refused value names the field and nothing is applied."""

from __future__ import annotations

import json
import re

import pytest
from sqlalchemy import select

from tests.helpers.designer import (
    HX,
    applied,
    html_of,
    incomplete,
    node,
    panel_post,
    refused,
    token,
)
from webapp.models import Partition, Process, User
from webapp.services import processes


def test_each_structured_kind_gets_its_form(designer, pid):
    cases = {
        "subProcess": ["Multi-instance", "No: runs once"],
        "eventSubProcess": ["Its start event says what starts it"],
        "callActivity": ["Process to call", "The latest published version", "Add input",
                         "Multi-instance"],
        "boundaryEvent": ["Reacts to", "Interrupting", "After a duration"],
        "endEvent": ["Ends with", "Terminate"],
        "escalationThrow": ["Escalation code"],
        "userTask": ["Multi-instance"],
        "serviceTask": ["Multi-instance"],
    }  # fmt: skip
    for kind, texts in cases.items():
        html = html_of(designer, pid, kind)
        for text in texts:
            assert text in html, (kind, text)
    assert "Multi-instance" not in html_of(designer, pid, "timerCatch")
    event_start = html_of(designer, pid, "startEvent", scope="event")
    assert "Reacts to" in event_start and "Add field" not in event_start
    assert "Add field" in html_of(designer, pid, "startEvent")


def test_multi_instance_settings_are_shown_and_applied(designer, pid):
    multi = {
        "sequential": True,
        "collection": "$input.reviewers",
        "element": "reviewer",
        "completion": "$loop.completed >= 2",
        "output": "$vars.review.approved",
    }
    html = html_of(designer, pid, "subProcess", {"multiInstance": multi})
    assert re.search(r'<input checked [^>]*value="sequential"', html)
    assert 'value="$input.reviewers"' in html and 'value="$loop.completed &gt;= 2"' in html

    csrf = token(designer, f"/designer/{pid}/")
    event = applied(
        panel_post(
            designer,
            pid,
            node(
                "userTask", "review", assignee_type="role", assignee_role="approver",
                mi_mode="parallel", mi_collection="$input.reviewers", mi_element="reviewer",
                mi_completion="$loop.completed >= 2 and $item != null",
                mi_output="$vars.review",
            ),
            csrf,
        )
    )  # fmt: skip
    assert event["config"]["multiInstance"] == {
        "sequential": False,
        "collection": "$input.reviewers",
        "element": "reviewer",
        "completion": "$loop.completed >= 2 and $item != null",
        "output": "$vars.review",
    }
    once = applied(panel_post(designer, pid, node("serviceTask", mi_mode=""), csrf))
    assert "multiInstance" not in once["config"]
    counted = applied(
        panel_post(
            designer, pid, node("callActivity", called="invoice", mi_mode="sequential",
                                mi_cardinality="len($input.items)"), csrf,
        )
    )  # fmt: skip
    assert counted["config"]["multiInstance"] == {
        "sequential": True,
        "cardinality": "len($input.items)",
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "Enter a collection (a list) or a cardinality"),
        ({"mi_collection": "$input.a", "mi_cardinality": "3"}, "not both"),
        ({"mi_collection": "$input.a", "mi_element": "2nd"}, "Use a plain name"),
        ({"mi_cardinality": "3", "mi_element": "item"}, "needs a collection"),
        ({"mi_collection": "$input.a", "mi_completion": "$loop.completed >="}, "Not a valid"),
        ({"mi_collection": "$loop."}, "Not a valid expression"),
    ],
)
def test_invalid_multi_instance_values_are_refused_naming_the_field(designer, pid, fields, message):
    response = panel_post(designer, pid, node("subProcess", mi_mode="parallel", **fields))
    if not fields:  # only missing: the parallel marker applies, and the panel asks for them
        assert message in incomplete(response)
        return
    html = refused(response)
    assert message in html
    assert "Fix the marked values; nothing was applied." in html


def test_the_live_check_accepts_item_and_loop(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")

    def check(field, text):
        return designer.post(
            f"/designer/{pid}/check-expression?element=review&field={field}",
            data={field: text},
            headers={**HX, "X-CSRFToken": csrf},
        ).get_data(as_text=True)

    assert "Valid expression" in check("mi_completion", "$loop.completed >= $loop.count / 2")
    assert "Valid expression" in check("mi_output", "$item.email")
    assert "Not valid" in check("mi_collection", "$input.reviewers[")
    assert "Empty." in check("mi_cardinality", "")
    shown = html_of(designer, pid, "subProcess", {"multiInstance": {"collection": "$input.a"}})
    assert "check-expression?element=x&amp;field=mi_collection" in shown
    timer = html_of(designer, pid, "timerCatch", {"date": "$input.due"})
    assert "check-expression?element=x&amp;field=date" in timer, "the date is checked as typed"


def test_the_output_hint_and_live_check_say_where_an_instances_result_is(designer, pid):
    """The approval's review saves its result as `review`; made multi-instance, its output
    must read the instance's result as $nodes.review, not $vars.review (saved after all)."""
    shown = html_of(designer, pid, "userTask", {"multiInstance": {"collection": "$input.a"}})
    assert "That instance&#39;s result is $nodes.x: a form field as $nodes.x.approved" in shown
    assert "$vars.review.approved" not in shown
    csrf = token(designer, f"/designer/{pid}/")

    def check(text, **beside):
        data = {"mi_output": text, "mi_collection": "$input.reviewers", "save_to": "review"}
        return designer.post(
            f"/designer/{pid}/check-expression?element=review&field=mi_output",
            data={**data, **beside},
            headers={**HX, "X-CSRFToken": csrf},
        ).get_data(as_text=True)

    trap = check("$vars.review")
    assert "Valid expression" not in trap
    assert "saved only after all instances have finished" in trap
    assert 'class="error"' in trap
    assert "Valid expression" in check("$nodes.review.approved")
    assert "no step in the process saves its result to &#39;later&#39;" in check("$vars.later")
    unsaved = check("$vars.decision", save_to="decision")
    assert "saved only after all instances have finished" in unsaved, (
        "the name typed in the panel counts before it is applied"
    )
    completion = designer.post(
        f"/designer/{pid}/check-expression?element=review&field=mi_completion",
        data={"mi_completion": "$vars.review.approved", "mi_collection": "$input.reviewers"},
        headers={**HX, "X-CSRFToken": csrf},
    ).get_data(as_text=True)
    assert "$loop" in completion and "Valid expression" not in completion


def test_call_activity_lists_the_processes_the_user_may_see(
    designer, pid, make_process, db_session
):
    make_process("payroll", partition="hr")
    make_process("refunds", partition="finance")
    make_process("shared", partition=None)
    secret = Partition(key="legal", name="Legal")
    db_session.add(secret)
    db_session.commit()
    make_process("contracts", partition="legal")
    html = html_of(designer, pid, "callActivity")
    for key in ("invoice", "refunds", "shared"):
        assert f'value="{key}"' in html, key
    assert "contracts" not in html, "a partition the user cannot see"
    assert "payroll" not in html, "another partition: the child would run in the caller's"
    assert "not published yet" in html
    csrf = token(designer, f"/designer/{pid}/")
    for key in ("contracts", "payroll"):
        hidden = refused(panel_post(designer, pid, node("callActivity", called=key), csrf))
        assert f"There is no process &#39;{key}&#39; you can call." in hidden
    assert "Choose the process to call." in incomplete(
        panel_post(designer, pid, node("callActivity", called=""), csrf)
    )


def test_call_activity_binding_and_input_mappings(designer, pid, make_process, db_session):
    actor = db_session.scalar(select(User).where(User.username == "designer"))
    child = db_session.get(Process, make_process("payroll", partition=None))
    processes.publish(child, actor=actor, note="v1")
    db_session.commit()
    csrf = token(designer, f"/designer/{pid}/")
    base = {"called": "payroll", "binding": "version"}
    too_new = refused(panel_post(designer, pid, node("callActivity", **base, version="2"), csrf))
    assert "&#39;payroll&#39; has 1 published version; choose one of 1 to 1." in too_new
    assert "Enter the version number to call." in incomplete(
        panel_post(designer, pid, node("callActivity", **base), csrf)
    )
    assert "Use a version number from 1 up." in refused(
        panel_post(designer, pid, node("callActivity", **base, version="0"), csrf)
    )
    event = applied(
        panel_post(
            designer, pid,
            node("callActivity", **base, version="1", save_to="payroll_result",
                 **{"mappings-0-name": "employee", "mappings-0-expression": "$input.employee",
                    "mappings-1-name": "", "mappings-1-expression": "",
                    "mappings-2-name": "month", "mappings-2-expression": "'2026-12'"}),
            csrf,
        )
    )  # fmt: skip
    assert event["config"] == {
        "process": "payroll",
        "binding": "version",
        "version": 1,
        "inputs": {"employee": "$input.employee", "month": "'2026-12'"},
        "saveTo": "payroll_result",
    }
    bad = refused(
        panel_post(
            designer, pid,
            node("callActivity", called="payroll",
                 **{"mappings-0-name": "1x", "mappings-0-expression": "$input.a",
                    "mappings-1-name": "b", "mappings-1-expression": "$input.(",
                    "mappings-2-name": "c", "mappings-2-expression": ""}),
            csrf,
        )
    )  # fmt: skip
    assert "Name the input with letters" in bad
    assert "Not a valid expression" in bad
    assert "Enter an expression for this input." in bad
    added = designer.post(
        f"/designer/{pid}/panel",
        data=node("callActivity", called="payroll", action="mapping-add"),
        headers={**HX, "X-CSRFToken": csrf},
    ).get_data(as_text=True)
    assert 'name="mappings-0-name"' in added and 'name="mappings-1-name"' not in added


def test_boundary_event_settings(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    original = json.dumps({"attachedTo": "review", "interrupting": True, "event": "timer"})
    html = html_of(designer, pid, "boundaryEvent", {"attachedTo": "review", "event": "timer"})
    assert "Attached to User task &#39;Review&#39;." in html, "named as a person sees it"
    renamed = html_of(
        designer, pid, "boundaryEvent", {"attachedTo": "review"}, host_name="Check offer"
    )
    assert "Attached to User task &#39;Check offer&#39;." in renamed, "the canvas's title wins"

    def boundary(**fields):
        return node("boundaryEvent", original=original, **fields)

    timer = applied(
        panel_post(designer, pid, boundary(event="timer", interrupting="y", duration="P2D"), csrf)
    )
    assert timer["config"] == {
        "attachedTo": "review", "event": "timer", "interrupting": True, "duration": "P2D",
    }  # fmt: skip
    reminder = applied(
        panel_post(designer, pid, boundary(event="timer", timer_type="cycle", cycle="R/P1D"), csrf)
    )
    assert reminder["config"]["cycle"] == "R/P1D"
    assert reminder["config"]["interrupting"] is False
    cycle = refused(
        panel_post(
            designer, pid, boundary(event="timer", timer_type="cycle", cycle="R/P1D",
                                    interrupting="y"), csrf,
        )
    )  # fmt: skip
    assert "A cycle repeats only on a non-interrupting timer" in cycle
    assert "cycle" in refused(
        panel_post(designer, pid, boundary(event="timer", timer_type="cycle", cycle="R/PT0S"), csrf)
    )
    assert "Enter a duration such as PT5M." in incomplete(
        panel_post(designer, pid, boundary(event="timer", interrupting="y"), csrf)
    )
    assert "Enter the name of the message" in incomplete(
        panel_post(designer, pid, boundary(event="message", interrupting="y"), csrf)
    )
    message = applied(
        panel_post(
            designer, pid, boundary(event="message", message="cancelled", interrupting="y",
                                    correlation_key="$input.order", save_to="cancel"), csrf,
        )
    )  # fmt: skip
    assert message["config"] == {
        "attachedTo": "review", "event": "message", "interrupting": True,
        "message": "cancelled", "correlationKey": "$input.order", "saveTo": "cancel",
    }  # fmt: skip
    catch_all = applied(panel_post(designer, pid, boundary(event="error", interrupting="y"), csrf))
    assert catch_all["config"] == {"attachedTo": "review", "event": "error", "interrupting": True}
    assert "An error always interrupts" in refused(
        panel_post(designer, pid, boundary(event="error", code="E1"), csrf)
    )
    escalation = applied(panel_post(designer, pid, boundary(event="escalation", code="LATE"), csrf))
    assert escalation["config"]["code"] == "LATE"
    assert escalation["config"]["interrupting"] is False
    assert "Choose a timer, a message" in refused(
        panel_post(designer, pid, boundary(event="link"), csrf)
    )


def test_end_events_escalation_throws_and_event_sub_process_starts(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    assert applied(panel_post(designer, pid, node("endEvent", event=""), csrf))["config"] == {}
    terminate = applied(panel_post(designer, pid, node("endEvent", event="terminate"), csrf))
    assert terminate["config"] == {"event": "terminate"}
    error = applied(panel_post(designer, pid, node("endEvent", event="error", code="REJ"), csrf))
    assert error["config"] == {"event": "error", "code": "REJ"}
    assert "Enter the code this event throws" in incomplete(
        panel_post(designer, pid, node("endEvent", event="escalation", code="  "), csrf)
    )
    assert "Choose one of the listed ends." in refused(
        panel_post(designer, pid, node("endEvent", event="compensation"), csrf)
    )
    throw = applied(panel_post(designer, pid, node("escalationThrow", code="LATE"), csrf))
    assert throw["config"] == {"code": "LATE"}
    assert "Enter the code this event throws" in incomplete(
        panel_post(designer, pid, node("escalationThrow"), csrf)
    )
    start = applied(
        panel_post(
            designer, pid, node("startEvent", scope="event", event="message", message="cancel",
                                interrupting=""), csrf,
        )
    )  # fmt: skip
    assert start["config"] == {"event": "message", "message": "cancel", "interrupting": False}
    assert 'name="scope" type="hidden" value="event"' in start_html(designer, pid, csrf)


def start_html(client, pid, csrf) -> str:
    """After an apply the panel still shows the event sub-process variant of the start event."""
    response = client.post(
        f"/designer/{pid}/panel",
        data=node("startEvent", scope="event", event="timer", duration="PT1H", interrupting="y"),
        headers={**HX, "X-CSRFToken": csrf},
    )
    assert response.status_code == 200
    return response.get_data(as_text=True)


def test_a_missing_value_shows_once_its_field_is_left_and_never_holds_back_the_rest(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    original = json.dumps({"attachedTo": "review", "interrupting": True, "event": "timer"})
    typed = node("boundaryEvent", original=original, event="timer", timer_type="duration")
    del typed["action"]  # applied as typed, not by the Apply button

    quiet = applied(panel_post(designer, pid, typed, csrf))
    assert quiet["config"]["interrupting"] is False
    assert "duration" not in quiet["config"]
    html = panel_post(designer, pid, typed, csrf).get_data(as_text=True)
    assert "Enter a duration" not in html and 'data-missing-hidden="1"' in html

    left = panel_post(designer, pid, {**typed, "left": "title duration"}, csrf)
    assert "Enter a duration such as PT5M." in left.get_data(as_text=True)
    assert applied(left)["config"]["interrupting"] is False

    wrong = panel_post(designer, pid, {**typed, "duration": "soon"}, csrf)
    assert wrong.status_code == 422, "a value that is there but wrong still holds the apply"
