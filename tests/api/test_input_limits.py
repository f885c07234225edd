"""Input the databases cannot hold is refused with a 4xx naming the field, never a 500.

Each case below answered 500 on PostgreSQL, SQLite or both before the shared input checks
(`webapp/inputs.py`, `webapp/web/guard.py`); nothing is written by a refused request.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from tests.helpers.http import basic
from webapp.models import Instance

DEEP = "[" * 100_000 + "]" * 100_000


def post_raw(caller, path: str, text: str):
    return caller.post(
        path, data=text.encode("utf-8", "surrogatepass"), content_type="application/json"
    )


def field_error(response, field: str, status: int = 422) -> str:
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    assert response.is_json
    fields = (response.json.get("details") or {}).get("fields") or {}
    assert field in fields, response.json
    assert field in response.json["message"]
    return fields[field]


def instance_count(db_session) -> int:
    return db_session.scalar(select(func.count()).select_from(Instance))


@pytest.fixture
def running(api):
    return api("admin").post("/api/instances", json={"process_key": "open"}).json["id"]


def test_a_100000_deep_body_is_refused_on_every_post_endpoint(api, running, app):
    posts = [
        rule.rule.replace("<int:instance_id>", str(running))
        .replace("<int:task_id>", "1")
        .replace("<key>", "open")
        .replace("<int:number>", "1")
        .replace("<int:webhook_id>", "1")
        .replace("<int:delivery_id>", "1")
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/api/") and "POST" in (rule.methods or ())
    ]
    assert len(posts) >= 4
    for path in posts:
        for body in (DEEP, '{"reason": ' + DEEP + "}"):
            response = post_raw(api("admin"), path, body)
            assert response.status_code in (400, 422), (path, response.status_code)
            assert "Nested more than 32 levels" in response.json["message"]
    field_error(post_raw(api("admin"), "/api/messages", '{"name": ' + DEEP + "}"), "name")


def test_a_900_deep_list_in_the_input_names_input(api, db_session):
    before = instance_count(db_session)
    body = '{"process_key": "open", "input": {"a": ' + "[" * 900 + "]" * 900 + "}}"
    assert "Nested more than" in field_error(
        post_raw(api("alice"), "/api/instances", body), "input"
    )
    nested_ok = {"process_key": "open", "input": {"a": json.loads("[" * 20 + "]" * 20)}}
    assert api("alice").post("/api/instances", json=nested_ok).status_code == 201
    assert instance_count(db_session) == before + 1


@pytest.mark.parametrize("bad", ["\ud800", "a\u0000b", "\udfff x"])
def test_nul_and_lone_surrogates_are_refused_naming_the_field(api, running, db_session, bad):
    before = instance_count(db_session)
    start = {"process_key": "open"}
    cases = [
        ("/api/instances", {**start, "process_key": bad}, "process_key"),
        ("/api/instances", {**start, "business_key": bad}, "business_key"),
        ("/api/instances", {**start, "input": {"note": bad}}, "input.note"),
        (
            "/api/instances",
            {**start, "input": {"list": ["ok", {"deep": bad}]}},
            "input.list[1].deep",
        ),
        ("/api/instances", {**start, "input": {bad: 1}}, "input"),
        ("/api/instances", {**start, "partition": bad}, "partition"),
        ("/api/messages", {"name": bad, "correlation_key": "k"}, "name"),
        ("/api/messages", {"name": "paid", "correlation_key": bad}, "correlation_key"),
        ("/api/messages", {"name": "paid", "correlation_key": "k", "payload": [bad]}, "payload[0]"),
        (f"/api/instances/{running}/cancel", {"reason": bad}, "reason"),
    ]
    for path, body, field in cases:
        message = field_error(post_raw(api("admin"), path, json.dumps(body)), field)
        assert "text cannot contain it" in message
    assert instance_count(db_session) == before
    assert api("admin").get(f"/api/instances/{running}").json["status"] == "running"


def test_numbers_beyond_what_the_databases_hold_are_refused(api, db_session):
    before = instance_count(db_session)
    caller = api("alice")
    version = post_raw(
        caller, "/api/instances", '{"process_key": "open", "version": 18446744073709551616}'
    )
    field_error(version, "version")
    field_error(
        caller.post("/api/instances", json={"process_key": "open", "version": 2**31}), "version"
    )
    for number in ("1e400", "-1e999", str(2**64), "9" * 400):
        body = '{"process_key": "open", "input": {"amount": ' + number + "}}"
        field_error(post_raw(caller, "/api/instances", body), "input.amount")
    for constant in ("NaN", "Infinity", "-Infinity"):
        body = '{"process_key": "open", "input": {"amount": ' + constant + "}}"
        bad = post_raw(caller, "/api/instances", body)
        assert (bad.status_code, bad.json["error"]) == (400, "malformed_json")
    key = post_raw(api("operator"), "/api/messages", '{"name": "paid", "correlation_key": 1e400}')
    field_error(key, "correlation_key")
    assert instance_count(db_session) == before
    exact = caller.post("/api/instances", json={"process_key": "open", "input": {"n": 2**63 - 1}})
    assert exact.json["input"] == {"n": 2**63 - 1}


@pytest.mark.parametrize("value", ["%C2%B2", "%EF%BC%91", "1_0", "%201", "-1", "1e3", "9" * 30])
def test_query_numbers_take_only_ascii_digits(api, running, value):
    caller = api("admin")
    for name in ("page", "per_page"):
        field_error(caller.get(f"/api/instances?{name}={value}"), name)
    for name in ("after", "limit"):
        field_error(caller.get(f"/api/instances/{running}/history?{name}={value}"), name)


@pytest.mark.parametrize("instance_id", ["2147483648", "9223372036854775808", "9" * 40, "%C2%B2"])
def test_ids_beyond_the_column_range_are_unknown(api, instance_id):
    caller = api("admin")
    for path in ("", "/history"):
        response = caller.get(f"/api/instances/{instance_id}{path}")
        assert response.status_code == 404, response.get_data(as_text=True)[:300]
        assert response.is_json
    for action in ("cancel", "retry"):
        assert caller.post(f"/api/instances/{instance_id}/{action}").status_code == 404
    assert caller.get("/api/instances/2147483647").status_code == 404


@pytest.mark.parametrize("name", ["process", "business_key", "partition", "status"])
def test_nul_in_a_list_filter_is_refused_naming_it(api, name):
    response = api("admin").get(f"/api/instances?{name}=a%00b")
    assert "NUL" in field_error(response, name, 400)


def test_nul_in_http_basic_credentials_is_refused(client, published):
    for username, password in (("ad\u0000min", "flowdesk-demo"), ("admin", "x\u0000")):
        response = client.get("/api/instances", headers=basic(username, password))
        assert response.status_code == 400, response.get_data(as_text=True)[:300]
        assert "NUL" in response.json["message"]
    assert client.get("/api/instances", headers=basic("admin")).status_code == 200
