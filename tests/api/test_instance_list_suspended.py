"""GET /api/instances narrowed to suspended instances or to the others."""

from __future__ import annotations


def _start(api) -> int:
    response = api("operator").post("/api/instances", json={"process_key": "open"})
    assert response.status_code == 201, response.json
    return response.json["id"]


def _ids(api, query: str) -> list[int]:
    response = api("operator").get(f"/api/instances?process=open&{query}")
    assert response.status_code == 200, response.json
    return [item["id"] for item in response.json["items"]]


def test_the_list_filters_by_suspended(api):
    held, running = _start(api), _start(api)
    suspended = api("operator").post(f"/api/instances/{held}/suspend", json={"reason": "audit"})
    assert suspended.status_code == 200, suspended.json
    assert _ids(api, "suspended=true") == [held]
    assert _ids(api, "suspended=false") == [running]
    assert _ids(api, "suspended=1") == [held]
    assert set(_ids(api, "")) == {held, running}
    api("operator").post(f"/api/instances/{held}/resume")
    assert _ids(api, "suspended=true") == []
    response = api("operator").get("/api/instances?suspended=maybe")
    assert response.status_code == 422
    assert "suspended" in response.json["details"]["fields"]
