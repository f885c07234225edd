"""Idempotency-Key on starts and message ids on messages: a retry never starts or applies twice,
and a commit whose answer was lost says that the outcome is unknown."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import func, select, text

from tests.db_proxy import proxied
from tests.helpers.documents import chain, node
from tests.helpers.http import at_once, basic, post_json
from tests.helpers.processes import publish_document
from tests.helpers.scratch import is_postgres
from webapp import create_app
from webapp.models import HistoryEntry, Instance, Token

KEY = "Idempotency-Key"


def instances_with(db_session, **where) -> int:
    db_session.rollback()
    query = select(func.count()).select_from(Instance).filter_by(**where)
    return db_session.scalar(query)


def test_a_retried_start_returns_the_first_instance_and_starts_no_second(api, db_session):
    first = api("alice").post("/api/instances", json={"process_key": "open"}, headers={KEY: "k-1"})
    assert first.status_code == 201, first.json
    assert "Idempotent-Replayed" not in first.headers
    again = api("alice").post("/api/instances", json={"process_key": "open"}, headers={KEY: "k-1"})
    assert again.status_code == 200, again.json
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json["id"] == first.json["id"]
    assert again.headers["Location"] == first.headers["Location"]
    assert instances_with(db_session, process_key="open") == 1

    # Keys belong to the user who sent them; without a key every request starts anew.
    bob = api("bob").post("/api/instances", json={"process_key": "open"}, headers={KEY: "k-1"})
    assert bob.status_code == 201 and bob.json["id"] != first.json["id"]
    for _ in range(2):
        assert api("alice").post("/api/instances", json={"process_key": "open"}).status_code == 201
    assert instances_with(db_session, process_key="open") == 4


def test_a_key_reused_for_another_request_is_refused_naming_the_header(api, db_session):
    body = {"process_key": "open", "business_key": "INV-1"}
    assert api("alice").post("/api/instances", json=body, headers={KEY: "k-2"}).status_code == 201
    for other in (
        {"process_key": "open", "business_key": "INV-2"},
        {"process_key": "form", "input": {"amount": 5}},
    ):
        refused = api("alice").post("/api/instances", json=other, headers={KEY: "k-2"})
        assert refused.status_code == 422, refused.json
        assert refused.json["error"] == "idempotency_key_reused"
        assert "Idempotency-Key" in refused.json["message"]
        assert set(refused.json["details"]["fields"]) == {"Idempotency-Key"}
    assert instances_with(db_session) == 1


@pytest.mark.parametrize("bad", ["", "with space", "caf\u00e9", "x" * 256, "tab\there"])
def test_malformed_keys_are_refused_with_400_naming_the_header(api, db_session, bad):
    headers = {KEY: bad.encode("utf-8").decode("latin-1")}
    refused = api("alice").post("/api/instances", json={"process_key": "open"}, headers=headers)
    assert refused.status_code == 400, refused.json
    assert refused.json["error"] == "invalid_idempotency_key"
    assert set(refused.json["details"]["fields"]) == {"Idempotency-Key"}
    message = api("operator").post(
        "/api/messages", json={"name": "paid", "correlation_key": 1}, headers=headers
    )
    assert (message.status_code, message.json["error"]) == (400, "invalid_idempotency_key")
    assert instances_with(db_session) == 0


def test_concurrent_starts_with_one_key_make_one_instance(live_server, published, db_session):
    headers = {**basic("alice"), KEY: "race-1"}
    results = at_once(
        6, lambda: post_json(live_server, "/api/instances", {"process_key": "open"}, headers)
    )
    statuses = sorted(status for status, _ in results)
    assert statuses == [200, 200, 200, 200, 200, 201], results
    assert len({body["id"] for _, body in results}) == 1
    assert instances_with(db_session, idempotency_key="race-1") == 1


@pytest.fixture
def twice(app, published):
    """A process that waits for message "paid" twice in a row, for correlation key $input.order."""
    with app.app_context():
        catch = {"message": "paid", "correlationKey": "$input.order"}
        publish_document(
            chain(
                ("first", node("messageCatch", **catch)), ("second", node("messageCatch", **catch))
            ),
            key="twice",
        )


def waiting_at(db_session, instance_id: int) -> list[str]:
    db_session.rollback()
    return list(
        db_session.scalars(
            select(Token.node_id).where(Token.instance_id == instance_id, Token.status == "waiting")
        )
    )


def test_a_message_delivered_twice_is_applied_once(api, twice, db_session):
    started = api("alice").post(
        "/api/instances", json={"process_key": "twice", "input": {"order": 7}}
    )
    instance_id = started.json["id"]
    message = {"name": "paid", "correlation_key": 7, "payload": {"n": 1}, "message_id": "m-1"}
    first = api("operator").post("/api/messages", json=message)
    assert first.status_code == 200, first.json
    assert first.json == {"delivered": [instance_id], "message_id": "m-1", "duplicate": False}
    assert waiting_at(db_session, instance_id) == ["second"]

    # The same message again (say the sender's connection dropped): acknowledged, not applied,
    # though the instance now waits for a message of that name and key at its second catch.
    again = api("operator").post("/api/messages", json=message)
    assert again.status_code == 200, again.json
    assert again.json == {"delivered": [instance_id], "message_id": "m-1", "duplicate": True}
    assert waiting_at(db_session, instance_id) == ["second"]
    # The id may come as the Idempotency-Key header instead.
    by_header = api("operator").post(
        "/api/messages",
        json={k: v for k, v in message.items() if k != "message_id"},
        headers={KEY: "m-1"},
    )
    assert (by_header.status_code, by_header.json["duplicate"]) == (200, True)
    assert waiting_at(db_session, instance_id) == ["second"]

    changed = api("operator").post("/api/messages", json={**message, "payload": {"n": 2}})
    assert (changed.status_code, changed.json["error"]) == (422, "idempotency_key_reused")
    assert set(changed.json["details"]["fields"]) == {"message_id"}

    second = api("operator").post("/api/messages", json={**message, "message_id": "m-2"})
    assert second.json == {"delivered": [instance_id], "message_id": "m-2", "duplicate": False}
    assert waiting_at(db_session, instance_id) == []
    assert db_session.get(Instance, instance_id).status == "completed"
    kinds = db_session.scalars(
        select(HistoryEntry.kind).where(HistoryEntry.instance_id == instance_id)
    )
    assert list(kinds).count("message") == 2


def test_concurrent_deliveries_of_one_message_id_apply_it_once(live_server, twice, api, db_session):
    started = api("alice").post(
        "/api/instances", json={"process_key": "twice", "input": {"order": 8}}
    )
    instance_id = started.json["id"]
    message = {"name": "paid", "correlation_key": 8, "message_id": "m-race"}
    results = at_once(
        5, lambda: post_json(live_server, "/api/messages", message, basic("operator"))
    )
    assert [status for status, _ in results] == [200] * 5, results
    assert [body["duplicate"] for _, body in results].count(False) == 1
    assert waiting_at(db_session, instance_id) == ["second"]


# --- a commit whose answer is lost (PostgreSQL) ------------------------------------------------


@pytest.fixture
def postgres_only(database_url):
    if not is_postgres(database_url):
        pytest.skip("a lost connection during COMMIT: SQLite commits in-process")


def test_a_start_whose_commit_answer_is_lost_says_so_and_a_retry_returns_it(
    postgres_only, app, app_config, database_url, published, db_session
):
    """The commit happened, but the connection dropped before its answer came back."""
    with proxied(database_url) as (proxy, url):
        proxied_app = create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=url))
        client = proxied_app.test_client()
        headers = {**basic("alice"), KEY: "lost-1"}
        body = {"process_key": "open", "business_key": "LOST-1"}
        proxy.lose_commit_reply(after=b"INSERT INTO instances")
        lost = client.post("/api/instances", json=body, headers=headers)
        assert lost.status_code == 503, lost.json
        assert lost.json["error"] == "outcome_unknown"
        assert "outcome is unknown" in lost.json["message"]
        assert "Idempotency-Key" in lost.json["message"]
        assert "nothing was saved" not in lost.json["message"].lower()
        assert lost.headers["Retry-After"] == "5"
        assert proxy.commit_done.wait(10) and proxy.commits_lost == 1

        retried = client.post("/api/instances", json=body, headers=headers)
        assert retried.status_code == 200, retried.json
        assert retried.json["business_key"] == "LOST-1"
    assert instances_with(db_session, business_key="LOST-1") == 1


SLOW_COMMIT = """
CREATE OR REPLACE FUNCTION flowdesk_test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER flowdesk_test_slow_commit AFTER INSERT ON instances
DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.business_key = 'SLOW-1')
EXECUTE FUNCTION flowdesk_test_slow_commit();
"""


def test_a_start_whose_backend_dies_during_commit_says_so_and_a_retry_starts_it_once(
    postgres_only, app, published, db_session
):
    """A deferred trigger holds the COMMIT; the server ends that backend mid-commit, so nothing
    was committed, but the app cannot know: it says so, and the retry starts the instance."""
    db_session.execute(text(SLOW_COMMIT))
    db_session.commit()
    headers = {**basic("alice"), KEY: "slow-1"}
    body = {"process_key": "open", "business_key": "SLOW-1"}
    replies: list = []
    try:
        request = threading.Thread(
            target=lambda: replies.append(
                app.test_client().post("/api/instances", json=body, headers=headers)
            )
        )
        request.start()
        deadline = time.monotonic() + 15
        while True:
            pids = db_session.scalars(
                text(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                    " AND wait_event = 'PgSleep' AND query = 'COMMIT'"
                )
            ).all()
            db_session.rollback()
            if pids or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert pids, "the start never reached its COMMIT"
        db_session.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pids[0]})
        db_session.rollback()
        request.join(15)
    finally:
        db_session.rollback()
        db_session.execute(text("DROP TRIGGER IF EXISTS flowdesk_test_slow_commit ON instances"))
        db_session.execute(text("DROP FUNCTION IF EXISTS flowdesk_test_slow_commit()"))
        db_session.commit()
    (lost,) = replies
    assert lost.status_code == 503, lost.json
    assert lost.json["error"] == "outcome_unknown"
    assert instances_with(db_session, business_key="SLOW-1") == 0

    retried = app.test_client().post("/api/instances", json=body, headers=headers)
    assert retried.status_code == 201, retried.json
    assert instances_with(db_session, business_key="SLOW-1") == 1
