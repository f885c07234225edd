"""The properties panel: a form per element kind, refreshed by editor actions, applied only when
valid (422 with inline errors otherwise), and sent back to the canvas in `HX-Trigger`."""

import json
import re
from html import unescape

import pytest

from tests.helpers.designer import HX, applied, panel_get, panel_post, token, user_task
from tests.helpers.documents import approval_document
from webapp.process.bpmn import export_bpmn


def test_each_kind_gets_its_form(designer, pid):
    cases = {
        "userTask": ["Assign to", "Due in", "Add field"],
        "serviceTask": ["Tool", "Retries", "Backoff", "Timeout"],
        "timerCatch": ["For a duration", "Until a date"],
        "messageCatch": ["Message name", "Correlation key"],
        "startEvent": ["Add field", "$input"],
        "endEvent": ["Ends with"],
        "exclusiveGateway": ["no settings besides its title"],
        "parallelGateway": ["no settings besides its title"],
    }
    for kind, texts in cases.items():
        html = panel_get(designer, pid, id="x", kind=kind, name="X", config="{}").get_data(
            as_text=True
        )
        for text in texts:
            assert text in html, (kind, text)
    flow = panel_get(
        designer, pid, id="f3", kind="sequenceFlow", condition="$x == 1", default="0",
        source_kind="exclusiveGateway",
    ).get_data(as_text=True)  # fmt: skip
    assert 'value="$x == 1"' in flow and "Default flow" in flow


def test_the_form_shows_the_elements_current_values(designer, pid):
    config = approval_document()["nodes"]["review"]["config"]
    html = panel_get(
        designer, pid, id="review", kind="userTask", name="Review", config=json.dumps(config)
    ).get_data(as_text=True)
    assert 'value="Review"' in html
    assert '<option selected value="alice">' in html
    assert 'value="approved"' in html and 'value="review"' in html
    assert "Preview" in html and "Approve?" in html


def test_empty_selection_unknown_kind_and_bad_config(designer, pid):
    assert "3 elements are selected" in panel_get(designer, pid, count=3).get_data(as_text=True)
    other = panel_get(designer, pid, id="Sub_1", kind="", type="SubProcess")
    assert other.status_code == 200
    assert "SubProcess Flowdesk does not run" in other.get_data(as_text=True)
    note = panel_get(designer, pid, id="Note", kind="", type="TextAnnotation")
    assert "This element is a text annotation: documentation only" in note.get_data(as_text=True)
    named = panel_get(designer, pid, id="TextAnnotation_0x", kind="", type="TextAnnotation",
                      name="Why")  # fmt: skip
    shown = named.get_data(as_text=True)
    assert "&#39;Why&#39; is a text annotation" in shown and "TextAnnotation_0x" not in shown
    assert "saving is refused" not in note.get_data(as_text=True)
    bad = panel_get(designer, pid, id="review", kind="userTask", config="{not json")
    assert bad.status_code == 400
    assert "could not be read" in bad.get_data(as_text=True)


def test_a_valid_user_task_is_applied_via_hx_trigger(designer, pid):
    data = user_task(
        title="Approve",
        due_in="P2D",
        save_to="approval",
        original=json.dumps({"future": 1, "form": {"fields": []}}),
        **{
            "fields-0-key": "amount",
            "fields-0-label": "Amount",
            "fields-0-type": "number",
            "fields-0-required": "y",
            "fields-0-min": "0",
            "fields-0-max": "1000.5",
            "fields-0-default": "10",
            "fields-1-key": "kind",
            "fields-1-type": "select",
            "fields-1-options": "a | Option A\nb",
        },
    )
    event = applied(panel_post(designer, pid, data))
    assert event["target"] == "#canvas" and event["id"] == "review"
    assert event["title"] == "Approve"
    assert event["config"] == {
        "future": 1,
        "assignee": {"type": "user", "value": "alice"},
        "dueIn": "P2D",
        "saveTo": "approval",
        "form": {
            "fields": [
                {"key": "amount", "label": "Amount", "type": "number", "required": True,
                 "min": 0, "max": 1000.5, "default": 10},
                {"key": "kind", "type": "select",
                 "options": [{"value": "a", "label": "Option A"}, {"value": "b", "label": "b"}]},
            ]
        },
    }  # fmt: skip


def test_a_user_task_for_anyone_stores_no_assignee(designer, pid):
    """The default: open to everyone who may work tasks in the partition."""
    html = panel_get(designer, pid, id="t", kind="userTask", name="T", config="{}").get_data(
        as_text=True
    )
    assert 'checked id="assignee_type-0" name="assignee_type" type="radio" value="anyone"' in html
    assert "open to everyone who may work tasks" in html
    stored = {"assignee": {"type": "user", "value": "alice"}, "dueIn": "P1D"}
    event = applied(
        panel_post(
            designer,
            pid,
            user_task(assignee_type="anyone", original=json.dumps(stored), due_in="P1D"),
        )
    )
    assert event["config"] == {"dueIn": "P1D"}


def test_a_user_task_is_also_offered_to_more_roles_and_users(designer, pid):
    stored = {"candidates": {"roles": ["accounting"]}}
    html = panel_get(
        designer, pid, id="t", kind="userTask", name="T", config=json.dumps(stored)
    ).get_data(as_text=True)
    assert 'value="accounting"' in html and "Also offered to users" in html
    event = applied(
        panel_post(
            designer,
            pid,
            user_task(
                original=json.dumps(stored),
                candidate_roles="accounting, approver, clerk, approver",
                candidate_users="bob",
            ),
        )
    )
    assert event["config"]["candidates"] == {
        "roles": ["accounting", "approver", "clerk"],
        "users": ["bob"],
    }, "an imported role kept as it was; duplicates once"
    refused = panel_post(designer, pid, user_task(candidate_roles="nope", candidate_users="ghost"))
    assert refused.status_code == 422
    text = refused.get_data(as_text=True)
    assert "Not a known role: nope." in text and "Not a known user: ghost." in text


def test_a_user_task_takes_candidates_from_expressions(designer, pid):
    stored = {"candidates": {"rolesFrom": "$vars.approverGroups"}}
    html = panel_get(
        designer, pid, id="t", kind="userTask", name="T", config=json.dumps(stored)
    ).get_data(as_text=True)
    assert 'value="$vars.approverGroups"' in html and "Also offered to roles from" in html
    event = applied(
        panel_post(
            designer,
            pid,
            user_task(
                original=json.dumps(stored),
                candidate_roles_from="$vars.approverGroups",
                candidate_users_from="$input.reviewers",
            ),
        )
    )
    assert event["config"]["candidates"] == {
        "rolesFrom": "$vars.approverGroups",
        "usersFrom": "$input.reviewers",
    }
    refused = panel_post(designer, pid, user_task(candidate_users_from="$input.x =="))
    assert refused.status_code == 422
    assert "Not a valid expression" in refused.get_data(as_text=True)


def test_invalid_values_get_inline_errors_422_and_no_apply(designer, pid):
    cases = [
        ({"due_in": "tomorrow"}, "must start with"),
        ({"save_to": "two words"}, "Use a plain name"),
        ({"assignee_type": "expression", "assignee_expression": "$input.x =="},
         "Not a valid expression"),
        ({"assignee_user": "mallory"}, "Choose one of the listed names"),
        ({"title": "bad\x01title"}, "control characters"),
        ({"fields-0-key": "a", "fields-0-type": "text",
          "fields-1-key": "a", "fields-1-type": "text"}, "used twice"),
        ({"fields-0-key": "n", "fields-0-type": "number", "fields-0-min": "lots"},
         "must be a number"),
        ({"fields-0-key": "t", "fields-0-type": "text", "fields-0-pattern": "(a+)+"}, "very slow"),
    ]  # fmt: skip
    csrf = token(designer, f"/designer/{pid}/")
    for fields, message in cases:
        response = panel_post(designer, pid, user_task(**fields), csrf)
        html = response.get_data(as_text=True)
        assert response.status_code == 422, fields
        assert "HX-Trigger" not in response.headers, fields
        assert "nothing was applied" in html, fields
        assert message in html, (fields, message)


def test_form_editor_actions_refresh_without_applying(designer, pid):
    rows = {
        "fields-0-key": "first", "fields-0-type": "text",
        "fields-1-key": "second", "fields-1-type": "text",
    }  # fmt: skip
    csrf = token(designer, f"/designer/{pid}/")

    def keys(action):
        response = panel_post(designer, pid, user_task(action=action, **rows), csrf)
        assert response.status_code == 200 and "HX-Trigger" not in response.headers
        html = response.get_data(as_text=True)
        return [k for k in ("first", "second", "field3") if f'value="{k}"' in html], html

    assert keys("field-add")[0] == ["first", "second", "field3"]
    assert keys("field-remove-0")[0] == ["second"]
    _, html = keys("field-down-0")
    assert html.index('value="second"') < html.index('value="first"')
    _, html = keys("field-up-1")
    assert html.index('value="second"') < html.index('value="first"')
    _, html = keys("refresh")
    assert html.index('value="first"') < html.index('value="second"')


def test_changing_a_field_type_shows_its_own_settings(designer, pid):
    data = user_task(action="refresh", **{"fields-0-key": "n", "fields-0-type": "number"})
    html = panel_post(designer, pid, data).get_data(as_text=True)
    assert 'name="fields-0-min"' in html and 'name="fields-0-options"' not in html
    data = user_task(action="refresh", **{"fields-0-key": "n", "fields-0-type": "radio"})
    html = panel_post(designer, pid, data).get_data(as_text=True)
    assert 'name="fields-0-options"' in html and 'name="fields-0-min"' not in html


def test_service_task_tool_picker_inputs_and_numbers(designer, pid):
    base = {"element_id": "call", "kind": "serviceTask", "original": "{}", "title": "Call"}
    html = panel_post(designer, pid, {**base, "tool": "fail", "action": "refresh"}).get_data(
        as_text=True
    )
    assert 'value="message"' in html and "Why it fails" in html
    event = applied(
        panel_post(
            designer,
            pid,
            {**base, "tool": "fail", "inputs-0-name": "message", "inputs-0-expression": "'boom'",
             "retries": "0", "backoff": "1.5", "timeout": "10", "save_to": "result",
             "action": "apply"},
        )
    )  # fmt: skip
    assert event["config"] == {
        "tool": "fail",
        "inputs": {"message": "'boom'"},
        "saveTo": "result",
        "retries": 0,
        "backoff": 1.5,
        "timeout": 10,
    }
    csrf = token(designer, f"/designer/{pid}/")
    for fields, message in [
        ({"tool": "no.such.tool"}, "no tool called"),
        ({"tool": "fail", "retries": "-1"}, "from 0 to 100"),
        ({"tool": "fail", "backoff": "0"}, "seconds above 0"),
        ({"tool": "fail", "timeout": "soon"}, "Not a valid float"),
        (
            {"tool": "fail", "inputs-0-name": "message", "inputs-0-expression": "'open"},
            "Not a valid",
        ),
    ]:
        response = panel_post(designer, pid, {**base, "action": "apply", **fields}, csrf)
        assert response.status_code == 422, fields
        assert message in response.get_data(as_text=True), fields


def test_a_tool_that_takes_any_inputs_gets_named_inputs_added(designer, pid):
    base = {"element_id": "call", "kind": "serviceTask", "original": "{}", "title": "Set"}
    first = panel_post(designer, pid, {**base, "tool": "vars.set", "action": "refresh"})
    assert "takes inputs of any name" in first.get_data(as_text=True)
    added = panel_post(designer, pid, {**base, "tool": "vars.set", "action": "input-add"})
    html = added.get_data(as_text=True)
    assert "Name of the new input" in html and 'name="inputs-0-name"' in html
    row = {"inputs-0-name": "large", "inputs-0-expression": "$input.n > 5"}
    event = applied(panel_post(designer, pid, {**base, "tool": "vars.set", **row}))
    assert event["config"]["inputs"] == {"large": "$input.n > 5"}
    bad = {"inputs-0-name": "2 big", "inputs-0-expression": "1"}
    refused = panel_post(designer, pid, {**base, "tool": "vars.set", "action": "apply", **bad})
    assert refused.status_code == 422
    assert "Name the input with letters" in refused.get_data(as_text=True)


def test_a_flow_condition_default_and_checks(designer, pid):
    base = {"element_id": "f3", "kind": "sequenceFlow", "original": "{}", "title": "",
            "source_kind": "exclusiveGateway", "action": "apply"}  # fmt: skip
    event = applied(panel_post(designer, pid, {**base, "condition": "$input.amount > 10"}))
    assert (event["condition"], event["default"]) == ("$input.amount > 10", False)
    response = panel_post(
        designer, pid, {**base, "condition": "$input.amount > 10", "default": "y"}
    )
    event = applied(response)
    assert (event["condition"], event["default"]) == (None, True)
    assert "condition was removed" in response.get_data(as_text=True)
    bad = panel_post(designer, pid, {**base, "condition": "$input.amount >"})
    assert bad.status_code == 422 and "Not a valid expression" in bad.get_data(as_text=True)
    from_task = applied(
        panel_post(designer, pid, {**base, "source_kind": "userTask", "default": "y"})
    )
    assert from_task["default"] is False


def test_a_default_flow_offers_no_condition_and_ignores_one_posted(designer, pid):
    html = panel_get(
        designer, pid, id="f3", kind="sequenceFlow", condition="$x == 1", default="1",
        source_kind="exclusiveGateway",
    ).get_data(as_text=True)  # fmt: skip
    assert 'id="condition"' not in html, "no condition field on a default flow"
    assert "A default flow takes no condition" in html
    assert "its condition is removed when applied" in html
    base = {"element_id": "f3", "kind": "sequenceFlow", "original": "{}", "title": "",
            "source_kind": "exclusiveGateway", "default": "y", "action": "apply"}  # fmt: skip
    for condition in ("$input.amount > 10", "$input.amount >"):
        response = panel_post(designer, pid, {**base, "condition": condition})
        event = applied(response)
        assert (event["condition"], event["default"]) == (None, True)
        html = response.get_data(as_text=True)
        assert "condition was removed" in html and 'name="condition"' not in html
    plain = panel_post(designer, pid, base)
    assert applied(plain)["condition"] is None
    assert "Applied." in plain.get_data(as_text=True)
    assert "condition was removed" not in plain.get_data(as_text=True)


def test_timer_and_message_settings(designer, pid):
    timer = {"element_id": "t", "kind": "timerCatch", "original": "{}", "title": "Wait",
             "action": "apply"}  # fmt: skip
    event = applied(
        panel_post(designer, pid, {**timer, "timer_type": "duration", "duration": "PT5M"})
    )
    assert event["config"] == {"duration": "PT5M"}
    event = applied(
        panel_post(
            designer, pid, {**timer, "timer_type": "date", "date": "$input.due", "duration": "PT5M"}
        )
    )
    assert event["config"] == {"date": "$input.due"}
    for fields, message, status in [
        ({"timer_type": "duration", "duration": ""}, "Enter a duration", 200),
        ({"timer_type": "duration", "duration": "P1M"}, "not supported", 422),
        ({"timer_type": "date", "date": ""}, "Enter an expression", 200),
    ]:
        response = panel_post(designer, pid, {**timer, **fields})
        assert response.status_code == status, fields
        assert message in response.get_data(as_text=True), fields
    message = {
        "element_id": "m",
        "kind": "messageCatch",
        "original": "{}",
        "title": "Wait",
        "message": "paid",
        "correlation_key": "$input.orderId",
        "action": "apply",
    }
    assert applied(panel_post(designer, pid, message))["config"] == {
        "message": "paid",
        "correlationKey": "$input.orderId",
    }
    response = panel_post(designer, pid, {**message, "correlation_key": "$input."})
    assert response.status_code == 422


def test_the_user_picker_offers_the_processes_partition_and_keeps_a_stored_value(
    designer, make_process
):
    hr = make_process("hr-process", "hr")
    config = {"assignee": {"type": "user", "value": "alice"}}
    html = panel_get(
        designer, hr, id="t", kind="userTask", name="T", config=json.dumps(config)
    ).get_data(as_text=True)
    assert "(designer)" in html and "(operator)" in html
    assert "Alice Clerk (alice)" not in html
    assert "alice (not available here)" in html
    roles = panel_post(designer, hr, user_task(action="refresh", assignee_type="role")).get_data(
        as_text=True
    )
    assert 'value="approver"' in roles and 'name="assignee_role"' in roles


def test_preview_and_expression_check(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    preview = designer.post(
        f"/designer/{pid}/panel/preview",
        data=user_task(
            **{"fields-0-key": "when", "fields-0-label": "When?", "fields-0-type": "date"}
        ),
        headers={**HX, "X-CSRFToken": csrf},
    ).get_data(as_text=True)
    assert 'type="date"' in preview and "When?" in preview

    def check(text):
        return designer.post(
            "/designer/check-expression?field=condition",
            data={"condition": text},
            headers={**HX, "X-CSRFToken": csrf},
        ).get_data(as_text=True)

    assert "Not valid: unexpected end of expression" in check("$input.a ==")
    assert "Valid expression" in check("$input.a == 1")
    assert "No condition" in check("  ")


def test_the_condition_check_reports_data_no_step_saves(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")

    def check(text, **extra):
        return designer.post(
            f"/designer/{pid}/check-expression?element=f3&field=condition",
            data={"condition": text, **extra},
            headers={**HX, "X-CSRFToken": csrf},
        ).get_data(as_text=True)

    typo = check("$vars.aproval.approved")
    assert "Valid expression" not in typo
    assert "no step in the process saves its result to &#39;aproval&#39;" in typo
    assert "Valid expression" in check("$vars.review.approved")
    assert "there is no node &#39;nowhere&#39;" in check("$nodes.nowhere.x == 1")

    drawn = approval_document()
    drawn["nodes"]["review"]["config"]["saveTo"] = "aproval"
    canvas = export_bpmn(drawn)
    assert "Valid expression" in check("$vars.aproval.approved", canvas_xml=canvas), (
        "the diagram as drawn, not yet saved, is what counts"
    )


def test_panel_routes_are_partition_scoped_and_need_the_permission(make_process, user_with):
    hr = make_process("hr-process", "hr")
    outsider = user_with(["processes.edit"], ["finance"])
    assert panel_get(outsider, hr, id="x", kind="endEvent").status_code == 404
    assert panel_post(outsider, hr, user_task(), token(outsider)).status_code == 404
    reader = user_with(["tasks.work"], ["hr"])
    assert panel_get(reader, hr, id="x", kind="endEvent").status_code == 403


def test_an_unknown_kind_posted_is_refused(designer, pid):
    response = panel_post(designer, pid, {"kind": "robotTask", "element_id": "x"})
    assert response.status_code == 422
    assert "Unknown kind" in response.get_data(as_text=True)


def test_the_form_builder_says_what_an_empty_max_length_means(designer, pid):
    config = json.dumps(
        {"form": {"fields": [{"key": "note", "label": "Note", "type": "textarea"}]}}
    )
    page = panel_get(designer, pid, id="review", kind="userTask", config=config)
    assert "Empty: at most 10,000 characters." in page.get_data(as_text=True)


def messages_under(html: str, input_id: str) -> list[str]:
    """The error messages the panel shows under one input."""
    return re.findall(rf'<p class="error" id="{input_id}-msg">([^<]*)</p>', unescape(html))


ROW_PROBLEMS = [
    ({"fields-0-type": "number", "fields-0-min": "10", "fields-0-max": "1"},
     "max", "min is greater than max"),
    ({"fields-0-type": "number", "fields-0-min": "lots"}, "min", "Minimum 'lots' must be a number"),
    ({"fields-0-type": "radio", "fields-0-options": "a\nb\na"}, "options", "'a' is listed twice"),
    ({"fields-0-type": "text", "fields-0-min_length": "5", "fields-0-max_length": "2"},
     "max_length", "minLength is greater than maxLength"),
    ({"fields-0-type": "text", "fields-0-max_length": "many"}, "max_length", "whole number"),
    ({"fields-0-type": "text", "fields-0-pattern": "(a+)+"}, "pattern", "very slow"),
    ({"fields-0-type": "number", "fields-0-default": "x"}, "default", "does not fit"),
    ({"fields-0-type": "number", "fields-0-min": "5", "fields-0-default": "1"},
     "default", "the default is invalid"),
    ({"fields-0-type": "text", "fields-0-visible_if": "$form.x =="},
     "visible_if", "not a valid expression"),
]  # fmt: skip


@pytest.mark.parametrize(("row", "input_name", "fragment"), ROW_PROBLEMS)
def test_a_form_field_problem_is_shown_under_the_input_to_change(
    designer, pid, row, input_name, fragment
):
    data = user_task(**{"fields-0-key": "amount", **row})
    response = panel_post(designer, pid, data)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    under = messages_under(html, f"fields-0-{input_name}")
    assert any(fragment in message for message in under), (under, html)
    assert messages_under(html, "fields-0-key") == [], "nothing lands under the key"
    summary = unescape(html[html.index('id="panel-errors"') :])
    assert f'<a href="#fields-0-{input_name}">Field 1 ' in summary
    focused = re.search(r"<(?:input|textarea)[^>]*\bautofocus[^>]*>", html)
    assert focused and f'id="fields-0-{input_name}"' in focused.group(0)


def test_key_problems_stay_under_the_key_and_the_summary_lists_every_row(designer, pid):
    data = user_task(**{
        "fields-0-key": "a", "fields-0-type": "text",
        "fields-1-key": "a", "fields-1-type": "text",
        "fields-2-key": "n", "fields-2-type": "number", "fields-2-min": "3", "fields-2-max": "2",
    })  # fmt: skip
    html = panel_post(designer, pid, data).get_data(as_text=True)
    assert messages_under(html, "fields-1-key") == ["Field key 'a' is used twice"]
    assert messages_under(html, "fields-2-max") == ["Field 'n': min is greater than max"]
    summary = unescape(html[html.index('id="panel-errors"') :])
    assert summary.index('href="#fields-1-key"') < summary.index('href="#fields-2-max"')
    assert re.search(r'<input[^>]*\bautofocus[^>]*id="fields-1-key"', html)


def test_typing_a_wrong_value_does_not_move_focus(designer, pid):
    data = user_task(**{"fields-0-key": "n", "fields-0-type": "number", "fields-0-min": "x"})
    del data["action"]  # applied as typed, not by the Apply button
    response = panel_post(designer, pid, data)
    assert response.status_code == 422
    assert "autofocus" not in response.get_data(as_text=True)


def test_a_task_with_form_fields_keeps_its_multi_instance_settings(designer, pid):
    rows = {"fields-0-key": "approved", "fields-0-label": "Approve?", "fields-0-type": "boolean"}
    data = user_task(mi_mode="parallel", mi_collection="$input.reviewers", **rows)
    event = applied(panel_post(designer, pid, data))
    assert event["config"]["multiInstance"]["collection"] == "$input.reviewers"
    assert event["config"]["form"]["fields"][0]["key"] == "approved"
