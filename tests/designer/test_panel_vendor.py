"""The panel shows the settings of another engine an imported node keeps (form reference, Java
implementation, due and follow-up dates) and applying the panel keeps them."""

import json

from tests.helpers.designer import applied, panel_get, panel_post, user_task


def test_an_imported_user_task_shows_its_form_reference_and_dates(designer, pid):
    config = {
        "formRef": {"vendor": "camunda", "formKey": "embedded:app:forms/approve.html"},
        "dueDate": {"vendor": "camunda", "value": "${dateTime().plusWeeks(1).toDate()}"},
        "followUpDate": {"vendor": "camunda", "value": "P1D"},
    }
    html = panel_get(
        designer, pid, id="review", kind="userTask", name="Review", config=json.dumps(config)
    ).get_data(as_text=True)
    assert "Imported from Camunda 7" in html
    assert "<code>embedded:app:forms/approve.html</code>" in html
    assert "Its fields are not in the file" in html
    assert "Follow-up date <code>P1D</code>" in html
    assert "Due date <code>${dateTime().plusWeeks(1).toDate()}</code>" in html
    event = applied(panel_post(designer, pid, user_task(original=json.dumps(config))))
    assert {k: event["config"][k] for k in config} == config, "applying keeps the references"


def test_a_java_implementation_asks_for_a_tool(designer, pid):
    config = {"implementation": {"vendor": "flowable", "class": "org.example.Archive"}}
    html = panel_get(
        designer, pid, id="archive", kind="serviceTask", name="Archive", config=json.dumps(config)
    ).get_data(as_text=True)
    assert "Imported from Flowable" in html
    assert "Java implementation (class) <code>org.example.Archive</code>" in html
    assert "Flowdesk needs a tool" in html


def test_a_plain_node_shows_no_imported_settings(designer, pid):
    html = panel_get(designer, pid, id="review", kind="userTask", name="R", config="{}")
    assert "vendor-settings" not in html.get_data(as_text=True)


def test_an_imported_task_says_its_settings_are_written_back(designer, pid):
    config = {"origin": {"vendor": "camunda", "assignment": {"assignee": "demo"}}}
    html = panel_get(
        designer, pid, id="review", kind="userTask", name="Review", config=json.dumps(config)
    ).get_data(as_text=True)
    assert "Imported from Camunda 7" in html
    assert "the assignment and form fields set here are written back in Camunda 7" in html
    event = applied(panel_post(designer, pid, user_task(original=json.dumps(config))))
    assert event["config"]["origin"] == config["origin"], "applying keeps what the file said"
