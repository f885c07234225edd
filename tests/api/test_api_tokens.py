"""Bearer tokens on the API: scopes, refusals with reasons, partitions from the owner, no
sign-in throttling, last use, and history naming the token."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask import Flask
from sqlalchemy import func, select

from tests.helpers.http import basic
from webapp.api.contract import is_public
from webapp.api.scopes import ENDPOINT_SCOPES
from webapp.models import ApiToken, HistoryEntry, LoginFailure
from webapp.models.base import utcnow
from webapp.services import accounts, api_tokens


@pytest.fixture
def make_token(db_session, published):
    """make_token("alice", ["read"]) -> the whole token text (an `fdp_...` or `fds_...`)."""

    def make(username: str, scopes: list[str], days: int = 0, name: str = "deploy-bot") -> str:
        owner = accounts.find_user(username)
        _, text = api_tokens.create_token(owner, name, scopes, days, created_by=owner)
        return text

    return make


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_every_api_route_names_the_scope_a_token_needs(app: Flask):
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules() if rule.rule.startswith("/api")}
    public = {e for e in endpoints if is_public(app.view_functions.get(e))}  # the contract
    missing = sorted(endpoints - set(ENDPOINT_SCOPES) - {"api.static"} - public)
    assert not missing, f"give these endpoints a scope in webapp/api/scopes.py: {missing}"
    assert set(ENDPOINT_SCOPES.values()) <= set(api_tokens.SCOPES)


def test_a_bearer_token_starts_and_reads_as_its_owner(client, make_token, db_session):
    token = make_token("alice", ["start", "read"])
    assert token.startswith("fdp_") and len(token) == api_tokens.TOKEN_LENGTH
    started = client.post("/api/instances", json={"process_key": "open"}, headers=bearer(token))
    assert started.status_code == 201, started.json
    assert started.json["started_by"] == "alice"
    read = client.get(f"/api/instances/{started.json['id']}", headers=bearer(token))
    assert (read.status_code, read.json["id"]) == (200, started.json["id"])
    listed = client.get("/api/instances", headers=bearer(token))
    assert [item["id"] for item in listed.json["items"]] == [started.json["id"]]


def test_history_names_the_owner_and_the_token(client, make_token, db_session):
    token = make_token("alice", ["start", "read"], name="deploy-bot")
    started = client.post("/api/instances", json={"process_key": "open"}, headers=bearer(token))
    entry = db_session.scalars(
        select(HistoryEntry).where(
            HistoryEntry.instance_id == started.json["id"], HistoryEntry.kind == "started"
        )
    ).one()
    assert (entry.actor, entry.details["api_token"]) == ("alice", "deploy-bot")
    # a later request with a password names no token
    again = client.post("/api/instances", json={"process_key": "open"}, headers=basic("alice"))
    plain = db_session.scalars(
        select(HistoryEntry).where(
            HistoryEntry.instance_id == again.json["id"], HistoryEntry.kind == "started"
        )
    ).one()
    assert "api_token" not in (plain.details or {})


def test_a_missing_scope_is_403_naming_it(client, make_token):
    token = make_token("alice", ["read"])
    refused = client.post("/api/instances", json={"process_key": "open"}, headers=bearer(token))
    assert refused.status_code == 403
    assert refused.json["error"] == "insufficient_scope"
    assert refused.json["details"] == {"scope": "start"}
    assert "'start'" in refused.json["message"]
    message = client.post(
        "/api/messages", json={"name": "paid", "correlation_key": "1"}, headers=bearer(token)
    )
    assert (message.status_code, message.json["details"]) == (403, {"scope": "messages"})


def test_revoked_and_expired_tokens_get_401_naming_why(client, make_token, db_session):
    token = make_token("alice", ["read"])
    row = db_session.scalars(select(ApiToken)).one()
    api_tokens.revoke(row)
    revoked = client.get("/api/instances", headers=bearer(token))
    assert (revoked.status_code, revoked.json["message"]) == (401, "token revoked")
    assert 'error="invalid_token"' in revoked.headers["WWW-Authenticate"]

    expiring = make_token("alice", ["read"], days=30, name="short")
    row = db_session.scalars(select(ApiToken).where(ApiToken.name == "short")).one()
    row.expires_at = utcnow() - timedelta(seconds=1)
    db_session.commit()
    expired = client.get("/api/instances", headers=bearer(expiring))
    assert (expired.status_code, expired.json["message"]) == (401, "token expired")


@pytest.mark.parametrize(
    "text", ["nonsense", "fdp_" + "0" * 55, "fdp_short", "fds_" + "é" * 55, ""]
)
def test_unknown_tokens_get_401(client, published, text):
    response = client.get("/api/instances", headers={"Authorization": f"Bearer {text}"})
    assert response.status_code == 401
    assert response.json["error"] == "unauthorized"


def test_a_wrong_secret_with_a_real_key_is_refused(client, make_token):
    token = make_token("alice", ["read"])
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")
    response = client.get("/api/instances", headers=bearer(forged))
    assert (response.status_code, response.json["message"]) == (401, "token not recognised")


def test_bad_tokens_never_count_as_failed_sign_ins(client, make_token, db_session):
    token = make_token("bob", ["read"])
    for _ in range(20):
        client.get("/api/instances", headers=bearer(token[:-2] + "xx"))
        client.get("/api/instances", headers=bearer("fdp_nonsense"))
    assert db_session.scalar(select(func.count()).select_from(LoginFailure)) == 0
    assert client.get("/api/instances", headers=bearer(token)).status_code == 200
    assert client.get("/api/instances", headers=basic("bob")).status_code == 200


def test_partitions_come_from_the_owner(client, make_token, api):
    hr = api("operator").post("/api/instances", json={"process_key": "hr-only"}).json["id"]
    alice = make_token("alice", ["read", "start"])
    assert client.get(f"/api/instances/{hr}", headers=bearer(alice)).status_code == 404
    hidden = client.post("/api/instances", json={"process_key": "hr-only"}, headers=bearer(alice))
    assert hidden.status_code == 404
    admin = make_token("admin", ["read"])
    assert client.get(f"/api/instances/{hr}", headers=bearer(admin)).status_code == 200


def test_a_token_never_exceeds_its_owners_permissions(client, make_token, api):
    started = api("alice").post("/api/instances", json={"process_key": "open"}).json["id"]
    token = make_token("alice", ["operate"])  # alice may not cancel instances
    refused = client.post(f"/api/instances/{started}/cancel", json={}, headers=bearer(token))
    assert refused.status_code in (403, 404)


def test_a_deactivated_owner_stops_the_token(client, make_token, db_session):
    token = make_token("alice", ["read"])
    accounts.find_user("alice").active = False
    db_session.commit()
    response = client.get("/api/instances", headers=bearer(token))
    assert (response.status_code, response.json["message"]) == (401, "token's account deactivated")


def test_last_use_is_recorded_at_most_once_a_minute(client, make_token, db_session):
    token = make_token("alice", ["read"])
    row = db_session.scalars(select(ApiToken)).one()
    assert row.last_used_at is None
    assert client.get("/api/instances", headers=bearer(token)).status_code == 200
    db_session.refresh(row)
    first = row.last_used_at
    assert first is not None and utcnow() - first < timedelta(seconds=30)
    assert client.get("/api/instances", headers=bearer(token)).status_code == 200
    db_session.refresh(row)
    assert row.last_used_at == first
    row.last_used_at = first - timedelta(minutes=2)
    db_session.commit()
    assert client.get("/api/instances", headers=bearer(token)).status_code == 200
    db_session.refresh(row)
    assert row.last_used_at > first - timedelta(minutes=2)


def test_service_account_tokens_use_its_roles_and_partitions(client, db_session, published):
    role = accounts.ensure_role("integration", ["instances.start", "instances.read"])
    finance = accounts.ensure_partition("finance", "Finance")
    db_session.commit()
    robot = api_tokens.create_service_account("erp-sync", roles=[role], partitions=[finance])
    admin = accounts.find_user("admin")
    _, token = api_tokens.create_token(robot, "erp", ["start", "read"], 90, created_by=admin)
    assert token.startswith("fds_")
    started = client.post("/api/instances", json={"process_key": "fin"}, headers=bearer(token))
    assert (started.status_code, started.json["started_by"]) == (201, "erp-sync")
    hidden = client.post("/api/instances", json={"process_key": "hr-only"}, headers=bearer(token))
    assert hidden.status_code == 404


def test_the_stored_row_holds_no_secret(make_token, db_session):
    token = make_token("alice", ["read"])
    row = db_session.scalars(select(ApiToken)).one()
    assert token[4:] not in (row.key + row.secret_hash)
    assert row.secret_hash != token and len(row.secret_hash) == 64
