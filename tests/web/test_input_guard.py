"""Pages refuse what the databases cannot hold with a 4xx naming the field, never a 500.

Ids beyond the 32-bit columns, Unicode digits where a number goes, NUL characters in forms
and query arguments, and JSON typed into fields: each answered 500 on PostgreSQL, SQLite or
both before the request guard (`webapp/web/guard.py`) and the shared checks (`webapp/inputs.py`).
"""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from tests.helpers.app import csrf_token, failed_page, login
from tests.helpers.documents import waiting_doc
from tests.helpers.instances import start
from tests.helpers.pages import listed_ids
from tests.helpers.processes import publish_document
from webapp.models import BulkOperation, HistoryEntry, Instance, RetentionPolicy

TOO_LARGE = ("2147483648", "9223372036854775808", "9" * 30)
INT_ARG = re.compile(r"<int:(\w+)>")


@pytest.fixture
def admin(login_as):
    return login_as("admin")


@pytest.fixture
def engine(app):
    from webapp.extensions import db

    with app.app_context():
        yield db.session
        db.session.remove()


@pytest.fixture
def waiting(engine, demo) -> int:
    return start(engine, publish_document(waiting_doc(), key="invoice"))


def test_every_route_with_an_id_answers_404_beyond_the_column_range(app, admin, waiting):
    token = csrf_token(admin, "/")
    rules = [rule for rule in app.url_map.iter_rules() if INT_ARG.search(rule.rule)]
    assert len(rules) > 30, "the list is read from the app, so new routes are covered"
    for rule in rules:
        for number in TOO_LARGE:
            path = INT_ARG.sub(number, rule.rule).replace("<node_id>", "n")
            path = path.replace("<flow_id>", "f").replace("<element_id>", "e")
            if "GET" in rule.methods:
                response = admin.get(path)
            else:
                response = admin.post(path, data={"csrf_token": token})
            assert response.status_code == 404, (rule.rule, number, response.status_code)
    assert admin.get(f"/operations/instances/{waiting}").status_code == 200


@pytest.mark.parametrize(
    ("path", "data", "field"),
    [
        ("/admin/users/new", {"username": "eve", "name": "E\u0000ve"}, "name"),
        ("/inbox/filters", {"name": "mine\u0000", "tab": "mine"}, "name"),
        (
            "/operations/bulk",
            {"action": "cancel", "reason": "r\u0000", "scope": "filter"},
            "reason",
        ),
        ("/designer/check-expression?field=x", {"x": "$vars.a == '\u0000'"}, "x"),
    ],
)
def test_nul_in_a_form_field_is_refused_naming_it(admin, path, data, field):
    token = csrf_token(admin, "/")
    response = admin.post(path, data={**data, "csrf_token": token})
    assert response.status_code == 400, response.get_data(as_text=True)[-800:]
    page = response.get_data(as_text=True)
    assert f"{field}: Remove the NUL character" in page
    assert "<!doctype html>" in page.lower()


def test_a_cancel_reason_with_nul_is_refused_and_the_instance_keeps_running(
    admin, waiting, db_session
):
    path = f"/operations/instances/{waiting}"
    token = csrf_token(admin, path)
    response = admin.post(f"{path}/cancel", data={"reason": "dup\u0000", "csrf_token": token})
    assert response.status_code == 400
    assert "reason: Remove the NUL character" in response.get_data(as_text=True)
    assert db_session.get(Instance, waiting).status == "running"


@pytest.mark.parametrize(
    "path",
    [
        "/designer/?q=a%00",
        "/admin/users?q=%00",
        "/operations/heat/a%00b",
        "/inbox/processes/x%00/start",
    ],
)
def test_nul_in_a_query_argument_or_the_address_is_refused(admin, demo, path):
    response = admin.get(path)
    assert response.status_code in (400, 404), response.status_code
    assert "NUL" in response.get_data(as_text=True) or response.status_code == 404


def test_variables_take_only_json_the_databases_store(admin, waiting, db_session):
    entries = db_session.scalar(select(func.count()).select_from(HistoryEntry))
    path = f"/operations/instances/{waiting}"
    token = csrf_token(admin, path)
    for value, message in [
        ('{"a": "x\\u0000"}', "value.a: Remove the NUL character"),
        ('{"a\\u0000": 1}', "A key: Remove the NUL character"),
        ('["\\ud800"]', "value[0]: Remove the unpaired surrogate"),
        ("[" * 900 + "]" * 900, "Nested more than 32 levels"),
        ("1e400", "Use a finite number"),
        ("NaN", "NaN is not allowed in JSON"),
    ]:
        response = admin.post(
            f"{path}/variables", data={"name": "v", "value": value, "csrf_token": token}
        )
        assert message in failed_page(admin, response, path), value
    huge = "[" * 1500 + "]" * 1500
    response = admin.post(
        f"{path}/variables", data={"name": "v", "value": huge, "csrf_token": token}
    )
    page = failed_page(admin, response, path)
    assert "Nested more than 32 levels" in page
    assert "What you typed here was too long to keep; enter it again." in page
    assert db_session.get(Instance, waiting).vars == {}
    assert db_session.scalar(select(func.count()).select_from(HistoryEntry)) == entries


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"process": "a\u0000"}, "process"),
        ({"business_key": "\u0000"}, "business_key"),
        ({"started_by": "bob\u0000"}, "started_by"),
        ({"partition": "\u0000"}, "partition"),
        ({"error_node": "\u0000"}, "error_node"),
        ({"error_code": "\u0000"}, "error_code"),
        ({"data": "$vars.amount == 'a\u0000'"}, "data"),
        ({"data": "$vars['a\u0000b'] == 1"}, "data"),
    ],
)
def test_operations_filters_report_unusable_text_inline(admin, waiting, query, field):
    response = admin.get("/operations/instances", query_string=query)
    assert response.status_code == 422, response.get_data(as_text=True)[-800:]
    page = response.get_data(as_text=True)
    assert f'<p class="error" id="{field}-msg">Remove the NUL character' in page
    assert listed_ids(page) == []


def test_the_inbox_drops_a_search_it_cannot_run_with_a_notice(login_as, demo):
    alice = login_as("alice")
    response = alice.get("/inbox/?q=a%00b&process=%00&page=%C2%B2")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert "The q filter held a character text cannot contain." in page
    assert "The process filter held a character text cannot contain." in page


def test_numbers_and_dates_in_arguments_and_forms_stay_in_range(admin, waiting, db_session):
    assert admin.get(f"/operations/instances/{waiting}?before=%C2%B2").status_code == 200
    assert admin.get(f"/operations/instances/{waiting}?before=9{'9' * 40}").status_code == 200
    assert admin.get("/operations/instances?after=99999999999999999999.1").status_code == 422
    assert admin.get("/operations/instances?until=9999-12-31").status_code == 200
    token = csrf_token(admin, "/operations/instances")
    bulk = admin.post(
        "/operations/bulk",
        data={"action": "cancel", "reason": "x", "ids": ["²", "99999999999"], "csrf_token": token},
    )
    assert "Select at least one instance" in failed_page(admin, bulk, "/operations/instances")
    assert db_session.scalar(select(func.count()).select_from(BulkOperation)) == 0
    days = admin.post("/operations/retention/invoice", data={"days": "²", "csrf_token": token})
    assert "Use a number of days" in failed_page(admin, days, "/operations/retention")
    assert db_session.scalar(select(func.count()).select_from(RetentionPolicy)) == 0


def test_designer_compare_and_panel_refuse_out_of_range_input(admin, engine, demo):
    version = publish_document(waiting_doc(), key="twice")
    publish_document(waiting_doc("bob"), key="twice")
    process_id = version.process_id
    compare = admin.get(f"/designer/{process_id}/compare?a=99999999999999999999&b=%C2%B2")
    assert compare.status_code == 200
    deep = "[" * 100_000 + "]" * 100_000
    panel = admin.get(
        f"/designer/{process_id}/panel",
        query_string={"id": "review", "kind": "userTask", "config": deep},
    )
    assert panel.status_code == 400
    assert "could not be read" in panel.get_data(as_text=True)


def test_http_basic_and_the_form_refuse_a_nul_username_anonymously(client, demo):
    token = csrf_token(client, "/login")
    response = client.post(
        "/login", data={"username": "admin\u0000", "password": "flowdesk-demo", "csrf_token": token}
    )
    assert response.status_code == 400
    assert "username: Remove the NUL character" in response.get_data(as_text=True)
    assert login(client, "admin").status_code == 302
