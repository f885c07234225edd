"""POST /api/instances/<id>/modifications: preview and apply moves of tokens, bad input named
and refused with nothing changed, and who may do it in which partition."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from webapp.models import Task, Token

PATH = "/api/instances/{}/modifications"


def started(api, key: str = "open", user: str = "operator") -> int:
    response = api(user).post("/api/instances", json={"process_key": key})
    assert response.status_code == 201, response.json
    return response.json["id"]


def live(db_session, instance_id: int) -> list[tuple[int, str]]:
    rows = db_session.execute(
        select(Token.id, Token.node_id)
        .where(Token.instance_id == instance_id, Token.status.in_(("active", "waiting")))
        .order_by(Token.id)
    )
    return [(row.id, row.node_id) for row in rows]


def open_task_nodes(db_session, instance_id: int) -> list[str]:
    return list(
        db_session.scalars(
            select(Task.node_id)
            .where(Task.instance_id == instance_id, Task.status == "open")
            .order_by(Task.id)
        )
    )


def test_a_dry_run_previews_and_the_apply_with_its_stamp_changes_the_instance(api, db_session):
    instance_id = started(api)
    [(token, node_id)] = live(db_session, instance_id)
    assert node_id == "review"
    body = {
        "operations": [{"add": "review"}, {"cancel": token}],
        "variables": {"approved": False},
        "dry_run": True,
    }
    preview = api("operator").post(PATH.format(instance_id), json=body)
    assert preview.status_code == 200, preview.json
    assert preview.json["applied"] is False
    assert [t["name"] for t in preview.json["tokens_before"]] == ["Review"]
    assert len(preview.json["tasks_created"]) == 1
    assert len(preview.json["tasks_withdrawn"]) == 1
    assert preview.json["variables"] == {"approved": {"before": None, "after": False}}
    assert live(db_session, instance_id) == [(token, "review")]
    body = {**body, "dry_run": False, "stamp": preview.json["stamp"], "reason": "reopened"}
    applied = api("operator").post(PATH.format(instance_id), json=body)
    assert applied.status_code == 200, applied.json
    assert applied.json["applied"] is True
    [(new_token, node_id)] = live(db_session, instance_id)
    assert (node_id, new_token != token) == ("review", True)
    history = api("operator").get(f"/api/instances/{instance_id}/history").json["items"]
    [entry] = [item for item in history if item["kind"] == "modified"]
    assert entry["actor"] == "operator"
    assert entry["details"]["reason"] == "reopened"
    assert entry["details"]["before"] == [{"token": token, "node": "review", "name": "Review"}]
    assert entry["details"]["after"][0]["token"] == new_token
    instance = api("operator").get(f"/api/instances/{instance_id}").json
    assert instance["vars"] == {"approved": False}
    again = api("operator").post(PATH.format(instance_id), json=body)
    assert (again.status_code, again.json["error"]) == (409, "stale")
    assert "moved since the preview" in again.json["message"]


@pytest.mark.parametrize(
    ("body", "status", "field", "words"),
    [
        ({"operations": [{"move": "TOKEN", "to": "nowhere"}]}, 422, "operations[0]", "no node"),
        ({"operations": [{"cancel": 987654}]}, 422, "operations[0]", "no live token"),
        ({"operations": [{"teleport": 1}]}, 422, "operations[0]", "unknown operation"),
        ({"operations": [{"move": "TOKEN"}]}, 422, "operations[0]", "unknown operation"),
        ({"operations": {"add": "review"}}, 422, "operations", "list of operations"),
        ({"operations": [{"add": "review"}], "color": 1}, 422, "color", "Unknown field"),
        ({"operations": [{"add": "review"}]}, 422, "reason", "say why"),
        ({"variables": {"1st": 1}, "reason": "x"}, 422, "variables.1st", "no variable name"),
        ({"operations": [], "reason": "x"}, 422, "operations", "Nothing to change"),
        ({"operations": [{"add": "review"}], "dry_run": "yes"}, 422, "dry_run", "true or false"),
        ({"operations": [{"add": "review"}], "stamp": "old", "reason": "x"}, 409, "stamp", "moved"),
    ],
)
def test_bad_input_is_refused_naming_it_and_nothing_changes(
    api, db_session, body, status, field, words
):
    instance_id = started(api)
    [(token, _)] = live(db_session, instance_id)
    if field != "reason":
        body = {"reason": "fix", **body}
    operations = body.get("operations")
    if isinstance(operations, list):
        body = {
            **body,
            "operations": [
                {key: token if value == "TOKEN" else value for key, value in item.items()}
                for item in operations
            ],
        }
    answer = api("operator").post(PATH.format(instance_id), json=body)
    assert answer.status_code == status, answer.json
    assert field in (answer.json["details"] or {}).get("fields", {}), answer.json
    assert words in answer.json["message"]
    assert live(db_session, instance_id) == [(token, "review")]
    assert open_task_nodes(db_session, instance_id) == ["review"]


def test_a_body_that_is_not_json_is_refused(api, db_session):
    instance_id = started(api)
    form = api("operator").post(PATH.format(instance_id), data={"move": "1"})
    assert (form.status_code, form.json["error"]) == (415, "unsupported_media_type")
    broken = api("operator").post(
        PATH.format(instance_id), data="{", headers={"Content-Type": "application/json"}
    )
    assert (broken.status_code, broken.json["error"]) == (400, "malformed_json")


def test_a_finished_instance_cannot_be_modified(api, db_session):
    instance_id = started(api)
    api("operator").post(f"/api/instances/{instance_id}/cancel", json={"reason": "done"})
    body = {"operations": [{"add": "review"}], "dry_run": True}
    answer = api("operator").post(PATH.format(instance_id), json=body)
    assert (answer.status_code, answer.json["error"]) == (409, "not_active")


def test_who_may_move_tokens_in_which_partition(api, db_session):
    finance = started(api, "fin")
    hr = started(api, "hr-only")
    body = {"operations": [{"add": "review"}], "dry_run": True}
    # finance-op sees finance instances but may not modify them; hr ones it cannot see.
    assert api("finance-op").post(PATH.format(finance), json=body).status_code == 403
    assert api("finance-op").post(PATH.format(hr), json=body).status_code == 404
    assert api("alice").post(PATH.format(finance), json=body).status_code == 404
    assert api("operator").post(PATH.format(finance), json=body).status_code == 200
    assert api("admin").post(PATH.format(hr), json=body).status_code == 200
