"""The Start page, the start form and the small instance page, through real HTTP requests."""

from __future__ import annotations

import re

from flask import render_template
from sqlalchemy import select
from werkzeug.datastructures import MultiDict

from tests.helpers.app import csrf_token, make_user
from tests.helpers.documents import FORM
from webapp.models import Instance
from webapp.process import forms
from webapp.web import spec_forms


def _start(client, key: str, **data):
    token = csrf_token(client, "/inbox/processes")
    return client.post(f"/inbox/processes/{key}/start", data={"csrf_token": token, **data})


def test_the_start_page_lists_what_the_user_may_start(login_as, published):
    client = login_as("alice")
    page = client.get("/inbox/processes").get_data(as_text=True)
    assert "Start open" in page and "Start fin" in page
    assert "hr-only" not in page
    assert 'href="/inbox/processes/form/start"' in page  # a start form opens its own page


def test_users_without_instances_start_are_refused(client, app, published):
    from tests.helpers.app import login

    with app.app_context():
        make_user("reader", ["tasks.work"], role="reader", password="reader-password")
    login(client, "reader", "reader-password")
    assert client.get("/inbox/processes").status_code == 403
    assert client.post("/inbox/processes/open/start").status_code in (400, 403)


def test_starting_without_a_form_redirects_to_the_instance(login_as, published, db_session):
    client = login_as("alice")
    response = _start(client, "open", business_key=" PO-9 ")
    assert response.status_code == 302
    instance_id = int(re.search(r"/inbox/instances/(\d+)$", response.headers["Location"])[1])
    instance = db_session.get(Instance, instance_id)
    assert (instance.status, instance.business_key, instance.started_via) == (
        "running",
        "PO-9",
        "ui",
    )
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert f"Started instance {instance_id}" in page
    assert "Running" in page and "Review" in page
    assert "Waiting for Review" in page, "the steps so far, as the requester reads them"


def test_the_start_form_shows_errors_inline_and_saves_nothing(login_as, published, db_session):
    client = login_as("alice")
    page = client.get("/inbox/processes/form/start").get_data(as_text=True)
    assert '<label for="field-amount">Amount *</label>' in page
    assert 'name="amount"' in page and 'type="number"' in page
    bad = _start(client, "form", amount="", kind="food", business_key="x" * 201)
    text = bad.get_data(as_text=True)
    assert bad.status_code == 422
    assert "Amount is required" in text
    assert 'aria-invalid="true"' in text
    assert "Use at most 200 characters." in text
    summary = text.split('id="errors" role="alert" tabindex="-1" autofocus>')[1].split("</div>")[0]
    assert '<li><a href="#field-amount">Amount is required</a></li>' in summary
    assert '<li><a href="#business_key">Business key</a>: Use at most 200 characters.' in summary
    assert re.search(r'<option selected value="food">|<option value="food" selected>', text)
    assert db_session.scalar(select(Instance)) is None
    good = _start(client, "form", amount="12.5", kind="travel")
    assert good.status_code == 302
    assert db_session.scalar(select(Instance)).input == {"amount": 12.5, "kind": "travel"}


def test_the_start_form_shows_fields_as_answers_make_them_relevant(login_as, published):
    client = login_as("alice")
    page = client.get("/inbox/processes/form/start").get_data(as_text=True)
    assert 'hx-post="/inbox/processes/form/start/form"' in page, "Kind controls Venue"
    assert "field-venue" not in page
    token = csrf_token(client, "/inbox/processes/form/start")
    url = "/inbox/processes/form/start/form"
    food = client.post(url, data={"csrf_token": token, "kind": "food"})
    assert food.status_code == 200 and "<html" not in food.get_data(as_text=True)
    assert 'id="field-venue"' in food.get_data(as_text=True)
    travel = client.post(url, data={"csrf_token": token, "kind": "travel"}).get_data(as_text=True)
    assert "field-venue" not in travel
    assert (
        client.post("/inbox/processes/open/start/form", data={"csrf_token": token}).status_code
        == 404
    )
    no_js = _start(client, "form", amount="3", kind="food", refresh="1")
    assert no_js.status_code == 200 and 'id="field-venue"' in no_js.get_data(as_text=True)


def test_missing_processes_and_csrf(login_as, published):
    client = login_as("alice")
    assert client.get("/inbox/processes/hr-only/start").status_code == 404
    assert _start(client, "nope").status_code == 404
    assert client.post("/inbox/processes/open/start", data={}).status_code == 400


def test_the_instance_page_is_for_its_starter_and_readers(login_as, client, published):
    alice = login_as("alice")
    location = _start(alice, "open").headers["Location"]
    page = alice.get(location).get_data(as_text=True)
    assert 'hx-trigger="every 30s"' in page, "waiting on an approver: a slow check, no 2 s poll"
    poll = re.search(r'id="instance-poll"[^>]* hx-get="([^"]+)"', page)[1].replace("&amp;", "&")
    assert poll.startswith(f"{location}/live?")
    assert alice.get(poll).status_code == 204, "nothing changed since the page was rendered"
    assert alice.get(f"{location}/live").get_data(as_text=True).count('id="instance-') >= 4
    from tests.helpers.app import login

    client.post("/logout", data={"csrf_token": csrf_token(client, "/")})
    login(client, "bob")
    assert client.get(location).status_code == 404
    assert client.get(f"{location}/live").status_code == 404
    client.post("/logout", data={"csrf_token": csrf_token(client, "/")})
    login(client, "operator")
    assert client.get(location).status_code == 200
    assert client.get("/inbox/instances/99999").status_code == 404


def test_form_fields_render_every_type_escaped(app):
    spec = {
        "fields": [
            {"key": "name", "label": "<b>Name</b>", "type": "text", "maxLength": 5, "help": "Hi"},
            {"key": "note", "label": "Note", "type": "textarea"},
            {"key": "ok", "label": "OK", "type": "boolean"},
            {
                "key": "pick",
                "label": "Pick",
                "type": "radio",
                "required": True,
                "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}],
            },
            {
                "key": "many",
                "label": "Many",
                "type": "multiselect",
                "options": [{"value": "x", "label": "X"}, {"value": "y", "label": "Y"}],
            },
            {"key": "when", "label": "When", "type": "date"},
            {"key": "shown", "label": "Shown", "type": "display", "value": "$input.n * 2"},
            {"key": "extra", "label": "Extra", "type": "text", "visibleIf": "$form.ok == true"},
        ]
    }

    def render(formdata=None, errors=None, context=None):
        form = spec_forms.build(spec, context, formdata, errors=errors, refresh_url="/r")
        return render_template("_spec_fields.html", form=form)

    with app.test_request_context():
        html = render(context={"$input": {"n": 21}})
        assert "&lt;b&gt;Name&lt;/b&gt;" in html and "<b>" not in html
        assert 'maxlength="5"' in html and 'id="field-name-help"' in html
        note = r'<textarea[^>]*id="field-note"[^>]*maxlength="10000"[^>]*name="note"'
        assert re.search(note, html), "a text area carries its default length limit"
        assert re.search(r'<input[^>]*name="ok"[^>]*type="checkbox"[^>]*value="true"', html)
        assert re.search(r'name="pick"[^>]*required[^>]*type="radio"[^>]*value="b"', html)
        assert re.search(r'name="many"[^>]*type="checkbox"[^>]*value="y"', html)
        assert 'type="date"' in html
        assert "42" in html
        assert "field-extra" not in html  # hidden until OK is ticked
        assert 'hx-post="/r"' in html, "OK controls Extra, so changing it refreshes the fields"
        assert spec_forms.refreshes(spec)
        raw = MultiDict([("ok", "true"), ("many", "y"), ("pick", "b"), ("name", "toolong")])
        values, errors = forms.coerce_submission(spec, raw)
        assert errors == {"name": "<b>Name</b> must be at most 5 characters"}
        again = render(raw, errors)
    assert "field-extra" in again
    assert re.search(r'checked[^>]*value="y"', again) and re.search(r'checked[^>]*value="b"', again)
    assert 'id="field-name-msg"' in again and "&lt;b&gt;Name&lt;/b&gt; must be at most" in again
    assert values["many"] == ["y"]
    assert FORM["fields"][0]["key"] == "amount"
