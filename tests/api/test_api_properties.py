"""Property test: generated bodies, query strings and ids thrown at every /api endpoint never
get a 5xx. The endpoints are read from the app's URL map, so a new one is covered at once."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from tests.fuzz import PROPERTY, awkward_text, deep_json, json_values, numbers, scalars
from tests.helpers.http import basic

ARG = re.compile(r"<(?:\w+:)?(\w+)>")
USERS = ["admin", "alice", "operator", "finance-op"]
QUERY_NAMES = ["page", "per_page", "after", "limit", "status", "process", "business_key"]

known_ids = st.sampled_from(["1", "2", "3"])
ids = st.one_of(
    known_ids,
    known_ids,
    known_ids,
    st.sampled_from(["0", "2147483647", "2147483648", "9223372036854775808", "9" * 40]),
    awkward_text.map(lambda text: text if text.strip(".") else "x"),
)
keys = st.sampled_from(["amount", "kind", "order"]) | awkward_text
anything = st.one_of(
    st.integers(0, 2000), st.sampled_from(["travel", "food"]), scalars, json_values
)
starts = st.fixed_dictionaries(
    {"process_key": st.sampled_from(["open", "form", "msg", "fin", "hr-only"]) | awkward_text},
    optional={
        "input": st.dictionaries(keys, anything, max_size=4),
        "business_key": st.sampled_from(["K-1", "  K-2 "]) | awkward_text,
        "version": st.integers(min_value=-1, max_value=3) | numbers,
        "partition": st.sampled_from(["finance", "hr"]) | awkward_text,
    },
)
messages = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["paid"]) | awkward_text,
        "correlation_key": st.sampled_from(["A-1"]) | awkward_text | numbers,
    },
    optional={"payload": json_values},
)
reasons = st.fixed_dictionaries({}, optional={"reason": awkward_text | numbers})
shaped = st.one_of(starts, starts, messages, reasons, st.dictionaries(keys, anything, max_size=3))
bodies = st.one_of(
    shaped.map(json.dumps),
    shaped.map(json.dumps),
    shaped.map(json.dumps),
    st.none(),
    json_values.map(json.dumps),
    deep_json,
    deep_json.map(lambda text: '{"process_key": "open", "input": {"a": ' + text + "}}"),
    st.binary(max_size=64),
    st.text(max_size=64),
)
queries = st.lists(
    st.tuples(
        st.sampled_from(QUERY_NAMES) | awkward_text,
        st.one_of(awkward_text, numbers.map(str), st.integers(0, 3).map(str)),
    ),
    max_size=4,
)


def api_rules(app) -> list[tuple[str, str]]:
    """(method, rule) for every /api route."""
    found = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/"):
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
                found.append((method, rule.rule))
    return found


def url_part(text: str) -> str:
    return quote(text, safe="", errors="surrogatepass")


def encode_body(body: Any) -> bytes | None:
    if body is None or isinstance(body, bytes):
        return body
    return body.encode("utf-8", "surrogatepass")


@pytest.fixture
def some_instances(api) -> None:
    api("admin").post("/api/instances", json={"process_key": "open"})
    api("admin").post("/api/instances", json={"process_key": "msg", "input": {"order": "A-1"}})


def test_every_api_endpoint_is_listed(app):
    assert {rule for _, rule in api_rules(app)} >= {
        "/api/instances",
        "/api/instances/<int:instance_id>",
        "/api/instances/<int:instance_id>/history",
        "/api/instances/<int:instance_id>/cancel",
        "/api/instances/<int:instance_id>/retry",
        "/api/messages",
    }


@PROPERTY
@given(data=st.data())
def test_generated_requests_never_get_a_5xx(client, app, published, some_instances, data):
    method, rule = data.draw(st.sampled_from(api_rules(app)), label="endpoint")
    path = ARG.sub(lambda _: url_part(data.draw(ids, label="id")), rule)
    query = urlencode(data.draw(queries, label="query"), encoding="utf-8", errors="surrogatepass")
    body = encode_body(data.draw(bodies, label="body")) if method == "POST" else None
    user = data.draw(st.sampled_from(USERS), label="user")
    response = client.open(
        f"{path}?{query}" if query else path,
        method=method,
        data=body,
        content_type="application/json",
        headers=basic(user),
    )
    event(f"{method} {rule} -> {response.status_code}")
    assert response.status_code < 500, (method, path, query, body, response.get_data()[:300])
    assert response.is_json or rule == "/api/docs"  # the API reference page is HTML
