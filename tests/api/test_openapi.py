"""The OpenAPI document: generated from the views' declared contracts, served without
credentials, covering every /api route with its parameters, bodies, responses and errors."""

from __future__ import annotations

import pytest
from flask import Blueprint, Flask
from jsonschema_rs import Draft202012Validator

from webapp.api.openapi import document, undocumented


@pytest.fixture
def served(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def _resolved(contract: dict, schema: dict) -> dict:
    """`schema` with the document's components, so a validator can follow its $refs."""
    return {**schema, "$defs": {}, "components": contract["components"]}


def test_every_api_route_has_a_documented_operation(app):
    assert undocumented(app) == []


def test_a_route_without_a_contract_is_reported():
    app = Flask(__name__)
    extra = Blueprint("extra", __name__)
    extra.add_url_rule("/thing/<int:thing_id>", "thing", lambda thing_id: "", methods=["POST"])
    app.register_blueprint(extra, url_prefix="/api")
    assert undocumented(app) == ["POST /api/thing/<int:thing_id>"]


def test_the_document_is_served_without_credentials_and_names_every_route(app, served):
    assert served["openapi"].startswith("3.1")
    rules = {
        rule.rule.replace("<int:", "{").replace("<", "{").replace(">", "}")
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/api/")
    }
    assert set(served["paths"]) == rules
    assert set(served["components"]["securitySchemes"]) == {"basic", "bearer"}
    assert served["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_operations_list_parameters_bodies_answers_errors_and_token_scopes(served):
    start = served["paths"]["/api/instances"]["post"]
    assert start["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/StartRequest"
    }
    assert [p["name"] for p in start["parameters"]] == ["Idempotency-Key"]
    assert {"200", "201", "401", "403", "404", "409", "413", "415", "422", "429", "503"} <= set(
        start["responses"]
    )
    assert start["responses"]["422"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }
    assert start["security"] == [{"basic": []}, {"bearer": ["start"]}]  # webapp/api/scopes.py
    history = served["paths"]["/api/instances/{instance_id}/history"]["get"]
    assert {p["name"]: p["in"] for p in history["parameters"]} == {
        "instance_id": "path",
        "after": "query",
        "limit": "query",
    }
    assert history["security"] == [{"basic": []}, {"bearer": ["read"]}]
    assert served["paths"]["/api/openapi.json"]["get"]["security"] == []


def test_the_document_answers_the_same_to_a_signed_in_user_and_to_nobody(client, login_as, served):
    assert login_as("alice").get("/api/openapi.json").get_json() == served


def test_unknown_api_addresses_answer_with_the_documented_error_shape(client, api, served):
    """An /api address no route matches (a negative id, a wrong method) is answered by the app,
    not the API blueprint: it still gets the API's error shape and a stable code."""
    error = Draft202012Validator(
        _resolved(served, {"$ref": "#/components/schemas/Error"}), validate_formats=False
    )
    for method, path, status, code in [
        ("get", "/api/instances/-1", 404, "not_found"),
        ("get", "/api/nothing", 404, "not_found"),
        ("delete", "/api/instances", 405, "method_not_allowed"),
    ]:
        response = getattr(api("admin"), method)(path)
        assert response.status_code == status
        assert response.get_json()["error"] == code
        error.validate(response.get_json())


def test_the_document_is_built_from_the_app(app):
    assert document(app)["paths"]["/api/signals/{broadcast_id}"]["get"]["operationId"] == (
        "get_signal"
    )


def test_only_the_contract_and_its_page_answer_without_credentials(client, served):
    public = sorted(
        f"{method.upper()} {path}"
        for path, operations in served["paths"].items()
        for method, operation in operations.items()
        if operation["security"] == []
    )
    assert public == ["GET /api/docs", "GET /api/openapi.json"]
    assert client.get("/api/docs").status_code == 200
    refused = client.get("/api/instances")
    assert (refused.status_code, refused.get_json()["error"]) == (401, "unauthorized")
