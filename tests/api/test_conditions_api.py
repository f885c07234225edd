"""`POST /api/conditions`: the conditional starts whose condition holds for the variables start
one instance each; others, suspended versions, processes the caller may not start and failing
conditions start nothing; bad requests are refused naming the field."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from tests.helpers.app import make_user
from tests.helpers.documents import chain, node
from tests.helpers.processes import publish_document
from webapp.models import Instance, Process, ProcessVersion
from webapp.models.base import utcnow

CLERK = {"type": "role", "value": "approver"}


def _conditional(condition: str) -> dict:
    doc = chain(("review", node("userTask", assignee=CLERK)))
    doc["nodes"]["start"]["config"] = {"event": "conditional", "condition": condition}
    return doc


@pytest.fixture
def starters(app, published):
    """`big` starts when amount > 100, `small` when amount <= 100, `fin_big` (finance) on
    amount > 100 too."""
    with app.app_context():
        publish_document(_conditional("$input.amount > 100"), "big")
        publish_document(_conditional("$input.amount <= 100"), "small")
        publish_document(_conditional("$input.amount > 100"), "fin_big", partition="finance")


def _count(db_session, key: str) -> int:
    db_session.rollback()
    return db_session.scalar(
        select(func.count()).select_from(Instance).where(Instance.process_key == key)
    )


def test_each_start_whose_condition_holds_starts_one_instance(api, starters, db_session):
    answer = api("operator").post("/api/conditions", json={"variables": {"amount": 500}})
    assert answer.status_code == 200, answer.json
    started = {item["process"]: item for item in answer.json["evaluated"]}
    assert set(started) == {"big", "fin_big"}
    assert sorted(answer.json["started"]) == sorted(i["instance"] for i in started.values())
    instance = db_session.get(Instance, started["big"]["instance"])
    assert (instance.input, instance.started_via) == ({"amount": 500}, "condition")
    assert _count(db_session, "small") == 0


def test_a_process_key_or_partition_narrows_the_starts(api, starters, db_session):
    one = api("operator").post(
        "/api/conditions", json={"variables": {"amount": 5}, "process": "small"}
    )
    assert [item["process"] for item in one.json["evaluated"]] == ["small"]
    finance = api("operator").post(
        "/api/conditions", json={"variables": {"amount": 500}, "partition": "finance"}
    )
    assert [item["process"] for item in finance.json["evaluated"]] == ["fin_big"]


def test_a_suspended_version_or_a_process_the_caller_may_not_start_starts_nothing(
    api, starters, db_session, app
):
    db_session.rollback()
    big = db_session.scalar(select(Process).where(Process.key == "big"))
    version = db_session.scalar(select(ProcessVersion).where(ProcessVersion.process_id == big.id))
    version.suspended_at = utcnow()
    db_session.commit()
    answer = api("operator").post("/api/conditions", json={"variables": {"amount": 500}})
    assert [item["process"] for item in answer.json["evaluated"]] == ["fin_big"]
    assert _count(db_session, "big") == 0
    before = _count(db_session, "fin_big")
    with app.app_context():
        make_user(
            "hr-starter", ["instances.start"], ["hr"], role="hr-starter", password="flowdesk-demo"
        )
    in_hr = api("hr-starter").post("/api/conditions", json={"variables": {"amount": 500}})
    assert in_hr.status_code == 200, in_hr.json
    assert [item["process"] for item in in_hr.json["evaluated"]] == []
    assert _count(db_session, "fin_big") == before


def test_a_failing_condition_is_answered_and_starts_nothing(api, starters, db_session):
    answer = api("operator").post("/api/conditions", json={"variables": {"amount": "many"}})
    assert answer.status_code == 200
    errors = {item["process"]: item.get("error") for item in answer.json["evaluated"]}
    assert errors["big"] and "compare" in errors["big"]
    assert answer.json["started"] == []


def test_bad_requests_name_the_field(api, starters):
    bad = api("operator").post("/api/conditions", json={"variables": [1], "extra": 1})
    assert bad.status_code == 422
    assert set(bad.json["details"]["fields"]) == {"variables", "extra"}
    unknown = api("operator").post(
        "/api/conditions", json={"variables": {}, "partition": "nowhere"}
    )
    assert unknown.status_code == 422 and "partition" in unknown.json["details"]["fields"]
