"""The instance list: every filter, the data expression translated to SQL, keyset paging."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers.app import make_user, partition_id, user
from tests.helpers.documents import waiting_doc
from tests.helpers.instances import set_columns, start, start_many
from tests.helpers.pages import listed_ids
from tests.helpers.processes import publish_document
from webapp.process.expressions import ExpressionError, evaluate
from webapp.services.operations.keyset import Cursor


@pytest.fixture
def spread(engine, demo):
    """Instances across processes, versions, partitions, starters, keys and days."""
    first = publish_document(waiting_doc(), key="invoice", partition="finance")
    second = publish_document(waiting_doc("bob"), key="invoice", partition="finance")
    leave = publish_document(waiting_doc(), key="leave", partition="hr")
    alice, bob = user(engine, "alice"), user(engine, "bob")
    finance, hr = partition_id(engine, "finance"), partition_id(engine, "hr")
    made = {
        "v1": start(engine, first, actor=alice, partition_id=finance, business_key="INV-1"),
        "v2": start(engine, second, actor=bob, partition_id=finance, business_key="INV-2"),
        "hr": start(engine, leave, actor=bob, partition_id=hr, business_key="L-1"),
    }
    day = datetime(2026, 3, 10, 12, tzinfo=UTC)
    for offset, name in enumerate(made.values()):
        set_columns(engine, [name], created_at=day + timedelta(days=offset))
    set_columns(engine, [made["v2"]], status="completed")
    return made


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("process=invoice", ["v2", "v1"]),
        ("process=invoice&version=1", ["v1"]),
        ("version=2", ["v2"]),
        ("status=completed", ["v2"]),
        ("status=running", ["hr", "v1"]),
        ("partition=hr", ["hr"]),
        ("business_key=INV-2", ["v2"]),
        ("started_by=bob", ["hr", "v2"]),
        ("since=2026-03-11", ["hr", "v2"]),
        ("until=2026-03-10", ["v1"]),
        ("since=2026-03-11&until=2026-03-11", ["v2"]),
        ("process=invoice&started_by=alice", ["v1"]),
        ("", ["hr", "v2", "v1"]),
    ],
)
def test_each_filter_narrows_the_list(operator, spread, query, expected):
    response = operator.get(f"/operations/instances?{query}")
    assert response.status_code == 200
    assert listed_ids(response.get_data(as_text=True)) == [spread[name] for name in expected]


def test_the_list_shows_only_the_users_partitions(app, login_as, spread, db_session):

    make_user("hannah", ["instances.read"], role="hr-reader")
    hannah = app.test_client()
    from tests.helpers.app import login

    login(hannah, "hannah", "password-123")
    assert listed_ids(hannah.get("/operations/instances").get_data(as_text=True)) == []
    shown = hannah.get(f"/operations/instances/{spread['hr']}")
    assert shown.status_code == 404, "another partition's instance is not found"


def test_bad_filters_are_each_named_with_a_422(operator, spread):
    response = operator.get(
        "/operations/instances?status=asleep&version=two&since=2026-13-01&started_by=nobody"
        "&partition=nowhere"
    )
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "Use one of running, completed, failed, cancelled." in page
    assert "Use a version number such as 3." in page
    assert "Use a date like 2026-01-31." in page
    assert "There is no user &#39;nobody&#39;." in page
    assert "There is no partition &#39;nowhere&#39;." in page
    assert page.count('aria-invalid="true"') == 5


# --- the data filter --------------------------------------------------------------------------

PAYLOADS = {
    "big": {"amount": 1500, "country": "NL", "ok": True, "tags": ["a", "b"], "order": {"n": 3}},
    "small": {"amount": 500, "country": "DE", "ok": False, "order": {"n": 30}},
    "text": {"amount": "2000", "country": "nl", "ok": "true"},
    "float": {"amount": 1000.5, "country": None, "order": {"n": 3.0}},
    "empty": {},
}

EXPRESSIONS = [
    "$vars.amount > 1000",
    "$vars.amount >= 500 and $vars.amount < 1000.5",
    "1000 < $vars.amount",
    "$vars.amount == 500",
    "$vars.amount != 500",
    "$vars.amount == '2000'",
    "$vars.country == 'NL'",
    "$vars.country < 'E'",
    "$vars.country == null",
    "$vars.country != null",
    "$vars.ok == true",
    "$vars.ok == false or $vars.ok == 'true'",
    "not ($vars.ok == true)",
    "$vars.order.n == 3",
    "$vars.order.n > 10",
    "$vars.tags[0] == 'a'",
    "$vars.tags[-1] == 'b'",
    "$vars['country'] in ['NL', 'DE']",
    "$vars.amount not in [500, 1500]",
    "$vars.missing == null",
    "$vars.amount > -1 and $vars.amount < 1e4",
]


def _expected(expression: str, made: dict[str, int]) -> list[int]:
    """What evaluating the expression on each instance says; an evaluation error is no match."""
    matched = []
    for name, payload in PAYLOADS.items():
        try:
            hit = evaluate(expression, {"$vars": payload, "$input": {}, "$nodes": {}}) is True
        except ExpressionError:
            hit = False
        if hit:
            matched.append(made[name])
    return sorted(matched, reverse=True)


@pytest.fixture
def with_data(engine, demo):
    version = publish_document(waiting_doc(), key="orders")
    made = {}
    for name, payload in PAYLOADS.items():
        made[name] = start(engine, version)
        set_columns(engine, [made[name]], vars=payload)
    return made


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_the_data_filter_agrees_with_evaluating_the_expression(operator, with_data, expression):
    response = operator.get("/operations/instances", query_string={"data": expression})
    assert response.status_code == 200, response.get_data(as_text=True)[-2000:]
    assert listed_ids(response.get_data(as_text=True)) == _expected(expression, with_data)


def test_the_data_filter_reads_input_and_node_outputs_too(operator, engine, with_data):
    set_columns(engine, [with_data["small"]], input={"region": "north"}, nodes={"r": {"x": 1}})
    for expression in ("$input.region == 'north'", "$nodes.r.x >= 1"):
        page = operator.get("/operations/instances", query_string={"data": expression})
        assert listed_ids(page.get_data(as_text=True)) == [with_data["small"]]


def test_a_malformed_expression_is_an_inline_error(operator, with_data):
    response = operator.get("/operations/instances", query_string={"data": "$vars.amount >"})
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert 'id="f-data"' in page and 'aria-invalid="true" aria-describedby="data-msg"' in page
    assert "unexpected end of expression at position 14" in page
    assert listed_ids(page) == []


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("len($vars.tags) > 1", "Compare one data path with a value"),
        ("$vars.amount > $vars.limit", "Compare one data path with a value"),
        ("$vars.amount * 2 > 10", "Compare one data path with a value"),
        ("$vars.ok", "A path alone is not a filter"),
        ("$vars.amount > true", "needs a number or a text"),
        ("$form.amount == 1", "$form is not stored on instances"),
        ("$vars == 1", "Name a value inside $vars"),
    ],
)
def test_expressions_the_database_cannot_search_are_refused(
    operator, with_data, expression, message
):
    response = operator.get("/operations/instances", query_string={"data": expression})
    assert response.status_code == 422
    assert message in response.get_data(as_text=True)


# --- keyset paging ----------------------------------------------------------------------------


def test_keyset_pages_visit_every_instance_once_in_both_directions(operator, engine, demo):
    version = publish_document(waiting_doc(), key="many")
    ids = start_many(engine, version, 60)
    moment = datetime(2026, 5, 1, tzinfo=UTC)
    for index, instance_id in enumerate(ids):
        # Groups of three share a timestamp, so the id must break ties.
        set_columns(engine, [instance_id], created_at=moment + timedelta(minutes=index // 3))
    expected = sorted(ids, key=lambda i: (ids.index(i) // 3, i), reverse=True)

    seen, pages, url = [], [], "/operations/instances?process=many"
    while url:
        page = operator.get(url).get_data(as_text=True)
        rows = listed_ids(page)
        pages.append(rows)
        seen += rows
        older = _link(page, "next")
        url = older
    assert seen == expected
    assert [len(rows) for rows in pages] == [25, 25, 10]

    back = operator.get(_last_url(operator, "/operations/instances?process=many")).get_data(
        as_text=True
    )
    newer = _link(back, "prev")
    assert listed_ids(operator.get(newer).get_data(as_text=True)) == pages[1]


def _link(page: str, rel: str) -> str | None:
    import html
    import re

    match = re.search(rf'<a href="([^"]+)" rel="{rel}">', page)
    return html.unescape(match.group(1)) if match else None


def _last_url(client, url: str) -> str:
    while True:
        older = _link(client.get(url).get_data(as_text=True), "next")
        if older is None:
            return url
        url = older


def test_a_damaged_list_position_is_refused(operator, with_data):
    response = operator.get("/operations/instances?after=yesterday")
    assert response.status_code == 422
    assert "This list position is not valid" in response.get_data(as_text=True)


def test_cursors_round_trip_to_the_microsecond():
    moment = datetime(2026, 5, 1, 10, 11, 12, 345678, tzinfo=UTC)
    cursor = Cursor(moment, 42)
    assert Cursor.decode(cursor.encode()) == cursor
    with pytest.raises(ValueError):
        Cursor.decode("1.2.3")


@pytest.mark.parametrize("window", [3, 30, 10_000])
def test_data_filter_pages_are_the_same_whether_found_in_the_window_or_by_a_scan(
    operator, engine, demo, monkeypatch, window
):
    from webapp.services.operations import filters

    monkeypatch.setattr(filters, "WINDOW", window)
    version = publish_document(waiting_doc(), key="many")
    ids = start_many(engine, version, 70)
    moment = datetime(2026, 5, 1, tzinfo=UTC)
    for index, instance_id in enumerate(ids):
        set_columns(engine, [instance_id], created_at=moment + timedelta(minutes=index // 4),
                    vars={"even": index % 2 == 0})  # fmt: skip
    expected = sorted(
        (i for index, i in enumerate(ids) if index % 2 == 0),
        key=lambda i: (ids.index(i) // 4, i),
        reverse=True,
    )
    pages, url, last = [], "/operations/instances?data=%24vars.even+%3D%3D+true", None
    while url:
        page = operator.get(url).get_data(as_text=True)
        pages.append(listed_ids(page))
        url, last = _link(page, "next"), page
    assert [i for rows in pages for i in rows] == expected
    back = []
    while url := _link(last, "prev"):
        last = operator.get(url).get_data(as_text=True)
        back.append(listed_ids(last))
    assert back == pages[-2::-1], "newer pages, walked back, are the same pages"


def _name_processes(engine) -> None:
    from sqlalchemy import update

    from webapp.models import Process

    engine.execute(update(Process).where(Process.key == "invoice").values(name="Refund check"))
    engine.execute(update(Process).where(Process.key == "leave").values(name="Leave request"))
    engine.commit()


@pytest.mark.parametrize(
    "text",
    ["Refund check", "refund CHECK", "  Refund check ", "Refund check (invoice)", "INVOICE"],
)
def test_the_process_filter_takes_a_name_or_key_in_any_case(operator, engine, spread, text):
    _name_processes(engine)
    response = operator.get("/operations/instances", query_string={"process": text})
    assert response.status_code == 200
    assert listed_ids(response.get_data(as_text=True)) == [spread["v2"], spread["v1"]]
    with_version = operator.get(
        "/operations/instances", query_string={"process": text, "version": "1"}
    )
    assert listed_ids(with_version.get_data(as_text=True)) == [spread["v1"]]


def test_the_process_filter_offers_names_and_keys(operator, engine, spread):
    _name_processes(engine)
    page = operator.get("/operations/instances").get_data(as_text=True)
    assert '<datalist id="process-choices">' in page
    assert '<option value="Leave request (leave)"><option value="Refund check (invoice)">' in page


def test_an_unknown_process_is_named_in_the_form(operator, engine, spread):
    _name_processes(engine)
    response = operator.get("/operations/instances?process=Refund+chek")
    assert response.status_code == 422
    assert "There is no process &#39;Refund chek&#39;" in response.get_data(as_text=True)


def test_processes_of_other_partitions_are_neither_offered_nor_found(engine, spread, user_with):
    _name_processes(engine)
    reader = user_with(["instances.read"], ["finance"])
    page = reader.get("/operations/instances").get_data(as_text=True)
    assert "Refund check (invoice)" in page
    assert "Leave request" not in page, "processes of other partitions are not offered"
    assert reader.get("/operations/instances?process=Leave+request").status_code == 422
    assert reader.get("/operations/instances?process=leave").status_code == 422
