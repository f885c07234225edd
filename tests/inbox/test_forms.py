"""Task forms generated from form specs: every field type's validation through the task page,
`visibleIf` on the server (and its htmx refresh), and how the generated controls render."""

from __future__ import annotations

import re

import pytest
from werkzeug.datastructures import MultiDict

from tests.helpers.documents import chain
from tests.helpers.inbox import htmx, kinds, open_task, post, user_task
from tests.helpers.instances import start_latest
from tests.helpers.processes import publish_document

OPTIONS = [{"value": "red", "label": "Red"}, {"value": "blue", "label": "Blue"}]
ALL_TYPES = {
    "fields": [
        {"key": "name", "label": "Name", "type": "text", "required": True,
         "minLength": 2, "maxLength": 10, "pattern": "[A-Z][a-z]+", "help": "Capitalised"},
        {"key": "notes", "label": "Notes", "type": "textarea", "maxLength": 20,
         "placeholder": "Anything else?"},
        {"key": "amount", "label": "Amount", "type": "number", "min": 1, "max": 100},
        {"key": "count", "label": "Count", "type": "integer", "min": 0, "max": 5},
        {"key": "agree", "label": "Agree", "type": "boolean", "required": True},
        {"key": "day", "label": "Day", "type": "date", "min": "2026-01-01", "max": "2026-12-31"},
        {"key": "at", "label": "At", "type": "datetime"},
        {"key": "mail", "label": "Mail", "type": "email"},
        {"key": "site", "label": "Site", "type": "url"},
        {"key": "color", "label": "Color", "type": "select", "options": OPTIONS},
        {"key": "tags", "label": "Tags", "type": "multiselect",
         "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]},
        {"key": "size", "label": "Size", "type": "radio", "required": True,
         "options": [{"value": "s", "label": "Small"}, {"value": "m", "label": "Medium"}]},
        {"key": "info", "label": "Info", "type": "display", "value": "upper($input.info)"},
    ]
}  # fmt: skip

VALID = [
    ("name", "Ada"),
    ("notes", "  two lines\nhere "),
    ("amount", "12.5"),
    ("count", "3"),
    ("agree", "true"),
    ("day", "2026-05-01"),
    ("at", "2026-05-01T10:30"),
    ("mail", "ada@example.org"),
    ("site", "https://example.org/x"),
    ("color", "red"),
    ("tags", "a"),
    ("tags", "b"),
    ("size", "m"),
]

CASES = [
    ("name", None, "Name is required"),
    ("name", "A", "Name must be at least 2 characters"),
    ("name", "Abcdefghijk", "Name must be at most 10 characters"),
    ("name", "ada", "Name does not match the required format"),
    ("notes", "x" * 21, "Notes must be at most 20 characters"),
    ("amount", "abc", "Amount must be a number"),
    ("amount", "0", "Amount must be at least 1"),
    ("amount", "100.5", "Amount must be at most 100"),
    ("count", "1.5", "Count must be a whole number"),
    ("count", "6", "Count must be at most 5"),
    ("agree", None, "Agree must be checked"),
    ("day", "2025-12-31", "Day must be on or after 2026-01-01"),
    ("day", "31/12/2026", "Day must be a date (YYYY-MM-DD)"),
    ("at", "tomorrow", "At must be a date and time (YYYY-MM-DDTHH:MM)"),
    ("mail", "not-an-address", "Mail must be a valid email address"),
    ("site", "ftp://example.org", "Site must be a valid web address starting with http"),
    ("color", "purple", "Color must be one of the listed options"),
    ("tags", "zzz", "Tags must only contain listed options"),
    ("size", None, "Size is required"),
]


@pytest.fixture
def every_type(app, flows, db_session):
    """An instance waiting at a task for alice whose form has every field type."""
    with app.app_context():
        publish_document(
            chain(("fill", user_task("Fill in", "user", "alice", ALL_TYPES, saveTo="filled"))),
            key="types",
        )
    instance_id = start_latest(app, "types", input={"info": "shown <b>safely</b>"})
    return open_task(db_session, instance_id)


def _submission(key: str, value: str | None) -> list[tuple[str, str]]:
    kept = [(k, v) for k, v in VALID if k != key]
    return kept if value is None else [*kept, (key, value)]


@pytest.mark.parametrize(("key", "value", "message"), CASES)
def test_each_field_type_is_checked_inline(users, every_type, db_session, key, value, message):
    alice = users("alice")
    response = post(alice, f"/inbox/tasks/{every_type.id}", _submission(key, value))
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    found = re.search(rf'<p class="error" id="field-{key}-msg">([^<]*)</p>', page)
    assert found, f"no inline message for {key}"
    assert found.group(1).startswith(message.replace("<", "&lt;"))
    assert page.count('class="error"') == 1, "only the wrong field complains"
    summary = page.split('<div class="alert error-summary" id="errors"')[1].split("</div>")[0]
    assert "Some values need fixing; nothing was saved:" in summary
    grouped = key in ("tags", "size")
    target = f"field-{key}-0" if grouped else f"field-{key}"
    # The message starts with the field's label, so it is the link (the label is not repeated).
    listed = rf'<li><a href="#{target}">{re.escape(found.group(1))}</a></li>'
    assert re.search(listed, summary)
    assert summary.count("<li>") == 1, "the summary lists the wrong field only"
    assert f'id="{target}"' in page, "the link leads to the field"
    db_session.refresh(every_type)
    assert every_type.status == "open"
    assert ("task_completed", "alice") not in kinds(db_session, every_type.instance_id)


def test_a_valid_submission_is_coerced_to_the_field_types(users, every_type, db_session):
    alice = users("alice")
    response = post(alice, f"/inbox/tasks/{every_type.id}", [*VALID, ("info", "ignored")])
    assert response.status_code == 303
    db_session.refresh(every_type)
    assert every_type.status == "completed"
    assert every_type.result == {
        "name": "Ada",
        "notes": "  two lines\nhere ",
        "amount": 12.5,
        "count": 3,
        "agree": True,
        "day": "2026-05-01",
        "at": "2026-05-01T10:30:00",
        "mail": "ada@example.org",
        "site": "https://example.org/x",
        "color": "red",
        "tags": ["a", "b"],
        "size": "m",
    }
    assert every_type.instance.vars["filled"] == every_type.result


def test_the_form_keeps_what_was_typed_after_an_error(users, every_type):
    alice = users("alice")
    page = post(alice, f"/inbox/tasks/{every_type.id}", _submission("amount", "0")).get_data(
        as_text=True
    )
    assert 'value="0"' in page and 'aria-invalid="true"' in page
    assert 'aria-describedby="field-amount-msg"' in page
    assert '<option selected value="red">Red</option>' in page
    assert re.search(
        r'<input checked id="field-tags-0" name="tags" type="checkbox" value="a">', page
    )
    assert re.search(r'<input checked id="field-size-1" name="size" required type="radio"', page)
    assert re.search(r'<input checked id="field-agree" name="agree" required type="checkbox"', page)
    assert ">\r\n  two lines\nhere </textarea>" in page


def test_every_type_renders_a_labelled_control(users, every_type):
    page = users("alice").get(f"/inbox/tasks/{every_type.id}").get_data(as_text=True)
    expected = {
        "name": 'maxlength="10" minlength="2" name="name" required type="text"',
        "amount": 'max="100" min="1" name="amount" step="any" type="number"',
        "count": 'max="5" min="0" name="count" step="1" type="number"',
        "day": 'max="2026-12-31" min="2026-01-01" name="day" type="date"',
        "at": 'name="at" type="datetime-local"',
        "mail": 'name="mail" type="email"',
        "site": 'name="site" type="url"',
    }
    for key, attributes in expected.items():
        assert f'<label for="field-{key}">' in page, key
        assert attributes in page, key
    notes = '<textarea id="field-notes" maxlength="20" name="notes" placeholder="Anything else?">'
    assert notes in page
    assert '<select id="field-color" name="color"><option value="">Choose…</option>' in page
    assert "<legend>Size *</legend>" in page and '<label for="field-size-1">Medium</label>' in page
    assert '<label class="check"><input id="field-agree" name="agree" required' in page
    assert 'id="field-name-help">Capitalised</p>' in page
    assert 'aria-describedby="field-name-help"' in page
    assert '<p class="display-value" id="field-info">SHOWN &lt;B&gt;SAFELY&lt;/B&gt;</p>' in page
    assert "hx-post" not in page.split('id="spec-fields"')[1].split("</form>")[0], (
        "no field controls another, so no field refreshes the form"
    )


def test_visible_if_is_applied_on_the_server(users, flows, app, db_session):
    instance_id = start_latest(app, "expense", input={"requested": 250})
    task = open_task(db_session, instance_id, "review")
    alice = users("alice")
    page = alice.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    assert 'id="field-amount"' in page and 'id="field-reason"' not in page
    assert f'hx-post="/inbox/tasks/{task.id}/form"' in page, "amount controls the reason field"
    assert '<p class="display-value" id="field-requested">250</p>' in page

    refreshed = post(alice, f"/inbox/tasks/{task.id}/form", {"amount": "500"}, headers=htmx("x"))
    fragment = refreshed.get_data(as_text=True)
    assert refreshed.status_code == 200
    assert fragment.lstrip().startswith('<div id="spec-fields"') and "<html" not in fragment
    assert 'id="field-reason"' in fragment and 'value="500"' in fragment
    small = post(alice, f"/inbox/tasks/{task.id}/form", {"amount": "50"}).get_data(as_text=True)
    assert 'id="field-reason"' not in small

    missing = post(alice, f"/inbox/tasks/{task.id}", {"amount": "500"})
    assert missing.status_code == 422 and "Reason is required" in missing.get_data(as_text=True)
    done = post(alice, f"/inbox/tasks/{task.id}", {"amount": "50", "reason": "hidden, dropped"})
    assert done.status_code == 303
    db_session.refresh(task)
    assert task.result == {"amount": 50.0}, "a hidden field is neither required nor kept"


def test_without_javascript_the_update_button_refreshes_the_form(users, flows, app, db_session):
    task = open_task(db_session, start_latest(app, "expense"), "review")
    alice = users("alice")
    page = alice.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    assert '<noscript><button type="submit" name="refresh" value="1">' in page
    response = post(alice, f"/inbox/tasks/{task.id}", {"amount": "500", "refresh": "1"})
    assert response.status_code == 200
    assert 'id="field-reason"' in response.get_data(as_text=True)
    db_session.refresh(task)
    assert task.status == "open"


def test_htmx_submissions_swap_the_form_or_navigate(users, flows, app, db_session):
    task = open_task(db_session, start_latest(app, "expense"), "review")
    alice = users("alice")
    bad = post(alice, f"/inbox/tasks/{task.id}", {"amount": "-1"}, headers=htmx("task-form"))
    fragment = bad.get_data(as_text=True)
    assert bad.status_code == 422
    assert fragment.lstrip().startswith('<form id="task-form"') and "<html" not in fragment
    assert "Amount must be at least 1" in fragment
    good = post(alice, f"/inbox/tasks/{task.id}", {"amount": "5"}, headers=htmx("task-form"))
    assert good.status_code == 200 and good.get_data(as_text=True) == ""
    next_task = open_task(db_session, task.instance_id, "approve")
    assert good.headers["HX-Redirect"] == f"/inbox/tasks/{next_task.id}"


def test_generated_forms_are_built_per_spec(app):
    from webapp.process import forms
    from webapp.web import spec_forms

    spec = {
        "fields": [
            {"key": "data", "label": "<i>Data</i>", "type": "text", "default": "x"},
            {"key": "meta", "label": "Meta", "type": "boolean", "default": True},
            {"key": "when", "label": "When", "type": "datetime",
             "default": "2026-03-01T08:15:00+00:00"},
            {"key": "n", "label": "N", "type": "integer", "default": {"expr": "$input.n + 1"}},
            {"key": "more", "label": "More", "type": "text", "visibleIf": "$form.meta"},
        ]
    }  # fmt: skip
    with app.test_request_context():
        form = spec_forms.build(spec, {"$input": {"n": 41}}, refresh_url="/r")
        shown = {item.key: item for item in form.shown}
        assert list(shown) == ["data", "meta", "when", "n", "more"]
        assert shown["data"].field.data == "x" and shown["data"].label == "<i>Data</i>"
        assert shown["meta"].field.data is True and shown["meta"].controls
        assert shown["meta"].attrs["hx-post"] == "/r" and "hx-post" not in shown["data"].attrs
        assert shown["when"].field._value() == "2026-03-01T08:15"
        assert shown["n"].field.data == "42"
        hidden = spec_forms.build(spec, {"$input": {"n": 1}}, MultiDict({"data": "y"}))
        assert [item.key for item in hidden.shown] == ["data", "meta", "when", "n"]
        assert hidden.shown[0].field.data == "y"
    assert spec_forms.controlling_keys(spec) == {"meta"}
    assert forms.display_text([1.0, True, None]) == "1, Yes, "


CONDITIONAL = {
    "fields": [
        {"key": "reason", "label": "Reason", "type": "text", "required": True,
         "visibleIf": "$input.amount > 1000"},
        {"key": "note", "label": "Note", "type": "text", "required": True,
         "visibleIf": "$vars.review.flagged"},
    ]
}  # fmt: skip


@pytest.mark.parametrize(
    ("data", "missing"),
    [
        ({"amount": 5000}, ["Reason is required"]),
        ({"amount": 10, "flag": True}, ["Note is required"]),
        ({"amount": 10}, []),
    ],
)
def test_the_server_decides_visibility_with_the_instance_data(
    users, app, db_session, data, missing
):
    """A required field shown because of $input or $vars must be filled; hidden, it must not."""
    flag_form = {"fields": [{"key": "flagged", "label": "Flagged", "type": "boolean"}]}
    with app.app_context():
        publish_document(
            chain(
                ("prep", user_task("Prepare", "user", "alice", flag_form, saveTo="review")),
                ("fill", user_task("Explain", "user", "alice", CONDITIONAL, saveTo="filled")),
            ),
            key="conditional",
        )
    alice = users("alice")
    instance_id = start_latest(app, "conditional", input={"amount": data["amount"]})
    prep = open_task(db_session, instance_id, "prep")
    answer = {"flagged": "true"} if data.get("flag") else {}
    assert post(alice, f"/inbox/tasks/{prep.id}", answer).status_code == 303
    task = open_task(db_session, instance_id, "fill")
    response = post(alice, f"/inbox/tasks/{task.id}", {})
    text = response.get_data(as_text=True)
    if missing:
        assert response.status_code == 422
        assert all(message in text for message in missing)
    else:
        assert response.status_code == 303


def test_a_task_page_shows_the_request_it_decides(users, flows, app, db_session):
    """The approver sees what was asked for and what earlier steps collected, read-only."""
    instance_id = start_latest(
        app, "expense", input={"requested": 250, "item": "Monitor"}, business_key="EXP-9"
    )
    review = open_task(db_session, instance_id, "review")
    assert post(users("alice"), f"/inbox/tasks/{review.id}", {"amount": "80"}).status_code == 303
    approve = open_task(db_session, instance_id, "approve")
    page = users("alice").get(f"/inbox/tasks/{approve.id}").get_data(as_text=True)
    context = page.split('id="context-heading"')[1].split("</section>")[0]
    assert "About this EXP-9" in context
    assert "<dt>Item</dt><dd>Monitor</dd>" in context
    assert "<dt>Requested</dt><dd>250</dd>" in context
    collected = context.split("Collected so far")[1]
    assert "<dt>Review expense</dt>" in collected, "titled by the step that saved it"
    assert "<dt>Amount</dt><dd>80</dd>" in collected, "labelled by that step's form"
    assert "{" not in context and "&#34;" not in context, "no raw JSON"


def test_text_inputs_carry_their_length_limit(users, every_type):
    page = users("alice").get(f"/inbox/tasks/{every_type.id}").get_data(as_text=True)
    notes = page.split('id="field-notes"')[1].split(">")[0]
    assert 'maxlength="20"' in notes
    mail = page.split('id="field-mail"')[1].split(">")[0]
    assert 'maxlength="254"' in mail, "the default for e-mail addresses"


def test_the_request_panel_reads_with_form_labels_and_nested_values(users, app, demo, db_session):
    """The start form labels the input (an option by its label), the step that saved a variable
    titles it and labels its answers; nested objects and lists read as nested facts, not JSON."""
    from tests.helpers.documents import chain
    from tests.helpers.inbox import DECISION, user_task
    from tests.helpers.processes import publish_document

    document = chain(
        ("choose", user_task("Choose offer", "role", "clerk", DECISION, saveTo="choice")),
        ("approve", user_task("Approve purchase", "user", "alice")),
    )
    document["nodes"]["start"]["config"]["form"] = {
        "fields": [
            {"key": "item", "label": "What to buy", "type": "text"},
            {"key": "urgency", "label": "Urgency", "type": "select",
             "options": [{"value": "hi", "label": "Needed this week"}]},
        ]
    }  # fmt: skip
    with app.app_context():
        publish_document(document, key="buy")
    quotes = {"offers": [{"vendor": "Acme", "unit_price": 12.5}, {"vendor": "<b>Bolt</b>"}]}
    instance_id = start_latest(
        app, "buy", input={"item": "Desk", "urgency": "hi", "quotes": quotes}, business_key="B-1"
    )
    choose = open_task(db_session, instance_id, "choose")
    alice = users("alice")
    assert post(alice, f"/inbox/tasks/{choose.id}", {"decision": "yes"}).status_code == 303
    approve = open_task(db_session, instance_id, "approve")
    page = alice.get(f"/inbox/tasks/{approve.id}").get_data(as_text=True)
    context = page.split('id="context-heading"')[1].split("</section>")[0]
    compact = " ".join(context.split()).replace("> <", "><")
    assert "<dt>What to buy</dt><dd>Desk</dd>" in compact
    assert "<dt>Urgency</dt><dd>Needed this week</dd>" in compact, "the option's label"
    assert "<dt>Quotes</dt><dd><dl" in compact and "<dt>Offers</dt><dd><dl" in compact
    assert "<dt>1.</dt><dd><dl" in compact and "<dt>Vendor</dt><dd>Acme</dd>" in compact
    assert "<dt>Unit price</dt><dd>12.5</dd>" in compact
    assert "&lt;b&gt;Bolt&lt;/b&gt;" in compact, "escaped"
    assert "<dt>Choose offer</dt><dd><dl" in compact
    assert "<dt>Decision</dt><dd>Approve</dd>" in compact
    assert "{" not in context and "&#34;" not in context and "unit_price" not in context
