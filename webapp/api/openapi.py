"""The API's OpenAPI 3.1 document, built from the app's /api URL rules and the contract each view
declares (`webapp.api.contract`), served at /api/openapi.json with a readable page at /api/docs.

Both answer without credentials: the contract describes the API, it grants nothing.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Flask, current_app, jsonify, render_template, url_for
from werkzeug.routing import IntegerConverter, Rule

from webapp.api.blueprint import bp
from webapp.api.contract import (
    BODY_ERRORS,
    COMMON_ERRORS,
    Operation,
    Reply,
    contract_of,
    documented,
)
from webapp.api.schemas import SCHEMAS, ref
from webapp.api.scopes import scope_for
from webapp.inputs import MAX_INT32
from webapp.services.api_tokens import SCOPES

OPENAPI_VERSION = "3.1.0"
PREFIX = "/api/"
METHODS = ("get", "put", "post", "patch", "delete")
ARGUMENT = re.compile(r"<(?:[^:<>]+:)?(\w+)>")

ERRORS = {
    400: "Malformed: not JSON, a NUL character, a malformed Idempotency-Key.",
    401: "No credentials, or wrong ones.",
    403: "A permission (or partition) the caller lacks.",
    404: "Unknown, or in a partition the caller cannot see.",
    409: "The object is not in a state that allows this.",
    413: "The body is larger than 10 MB.",
    415: "The body is not JSON (send Content-Type: application/json).",
    422: "Invalid fields, named in details.fields.",
    429: "Too many failed sign-ins for that username or address; wait Retry-After seconds.",
    503: "The database is unavailable (or the outcome of a commit is unknown); retry later.",
}
ERROR_HEADERS = {
    401: {"WWW-Authenticate": "The scheme to authenticate with."},
    429: {"Retry-After": "Seconds to wait."},
    503: {"Retry-After": "Seconds to wait."},
}

DESCRIPTION = (
    "Flowdesk's JSON API: start and operate process instances, send messages and signals. "
    "Errors are `{error, message, details}` with a stable `error` code. "
    "See docs/api-contract.md and docs/engine.md in the Flowdesk checkout."
)


def path_of(rule: Rule) -> str:
    """`/api/instances/<int:instance_id>` as `/api/instances/{instance_id}`."""
    return ARGUMENT.sub(r"{\1}", rule.rule)


def api_rules(app: Flask) -> list[Rule]:
    """Every URL rule under /api, in path order."""
    return sorted(
        (rule for rule in app.url_map.iter_rules() if rule.rule.startswith(PREFIX)),
        key=lambda rule: rule.rule,
    )


def methods_of(rule: Rule) -> list[str]:
    return sorted(method.lower() for method in rule.methods or () if method.lower() in METHODS)


def undocumented(app: Flask) -> list[str]:
    """`METHOD /path` of every /api route whose view declares no contract."""
    return [
        f"{method.upper()} {rule.rule}"
        for rule in api_rules(app)
        for method in methods_of(rule)
        if contract_of(app.view_functions.get(rule.endpoint)) is None
    ]


def _path_parameter(rule: Rule, name: str) -> dict[str, Any]:
    converter = rule._converters.get(name)
    if isinstance(converter, IntegerConverter):
        schema: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": MAX_INT32}
    else:
        schema = {"type": "string", "minLength": 1, "pattern": "^[^/]+$"}
    return {"name": name, "in": "path", "required": True, "schema": schema}


def _content(schema: Any, media_type: str = "application/json") -> dict[str, Any]:
    return {media_type: {"schema": schema}} if schema is not None else {}


def _reply(reply: Reply) -> dict[str, Any]:
    answer: dict[str, Any] = {"description": reply.description}
    content = _content(reply.schema, reply.media_type)
    if content:
        answer["content"] = content
    if reply.headers:
        answer["headers"] = {
            name: {"description": text, "schema": {"type": "string"}}
            for name, text in reply.headers.items()
        }
    return answer


def _error(status: int) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "description": ERRORS.get(status, "Refused."),
        "content": _content(ref("Error")),
    }
    if status in ERROR_HEADERS:
        answer["headers"] = {
            name: {"description": text, "schema": {"type": "string"}}
            for name, text in ERROR_HEADERS[status].items()
        }
    return answer


def security_of(endpoint: str, operation: Operation) -> list[dict[str, list[str]]]:
    """Who may call it: nobody needs to for a public operation; else HTTP Basic, or a bearer
    token holding the scope `webapp/api/scopes.py` names for it (none: no token may)."""
    if operation.public:
        return []
    scope = scope_for(endpoint)
    schemes: list[dict[str, list[str]]] = [{"basic": []}]
    if scope is not None:
        schemes.append({"bearer": [scope]})
    return schemes


def _operation(rule: Rule, method: str, operation: Operation) -> dict[str, Any]:
    parameters = [_path_parameter(rule, name) for name in sorted(rule.arguments)]
    parameters += [
        {
            "name": param.name,
            "in": param.where,
            "required": param.required,
            "description": param.description,
            "schema": dict(param.schema),
        }
        for param in operation.params
    ]
    errors = set(operation.errors)
    if not operation.public:
        errors |= set(COMMON_ERRORS) | {403}
    if operation.body is not None:
        errors |= {400, *BODY_ERRORS}
    if rule.arguments:
        errors.add(404)
    responses = {str(status): _reply(reply) for status, reply in operation.responses.items()}
    responses |= {str(status): _error(status) for status in sorted(errors)}
    described: dict[str, Any] = {
        "operationId": rule.endpoint.split(".")[-1],
        "summary": operation.summary,
        "tags": [operation.tag],
        "parameters": parameters,
        "responses": dict(sorted(responses.items())),
        "security": security_of(rule.endpoint, operation),
    }
    if operation.description:
        described["description"] = operation.description
    if operation.body is not None:
        described["requestBody"] = {
            "required": operation.body_required,
            "content": _content(dict(operation.body)),
        }
    return described


def document(app: Flask) -> dict[str, Any]:
    """The OpenAPI document of every documented /api route of `app`."""
    paths: dict[str, dict[str, Any]] = {}
    for rule in api_rules(app):
        operation = contract_of(app.view_functions.get(rule.endpoint))
        if operation is None:
            continue
        for method in methods_of(rule):
            paths.setdefault(path_of(rule), {})[method] = _operation(rule, method, operation)
    return {
        "openapi": OPENAPI_VERSION,
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "info": {"title": "Flowdesk API", "version": "1", "description": DESCRIPTION},
        "security": [{"basic": []}, {"bearer": []}],
        "tags": [
            {"name": "instances", "description": "Start, read and operate instances."},
            {"name": "events", "description": "Messages, signals and conditions."},
            {"name": "processes", "description": "Versions: suspend, resume, migrate."},
            {"name": "tasks", "description": "Work tasks: list, read, claim, release, complete."},
            {"name": "webhooks", "description": "Register webhooks and follow their deliveries."},
            {"name": "contract", "description": "This document and its page."},
        ],
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "basic": {
                    "type": "http",
                    "scheme": "basic",
                    "description": "A Flowdesk username and password (legacy; throttled like "
                    "the sign-in page).",
                },
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API token: `Authorization: Bearer <token>`. An operation "
                    "lists the scopes the token needs. Scopes: "
                    + "; ".join(f"`{name}`: {text}" for name, text in SCOPES.items()),
                },
            },
        },
    }


@bp.get("/openapi.json")
@documented(
    "This OpenAPI document",
    description="The contract of every /api operation, generated from the code.",
    responses={200: Reply("The OpenAPI 3.1 document.", ref("OpenApiDocument"))},
    public=True,
    tag="contract",
)
def openapi_document():
    cached = current_app.extensions.get("flowdesk.openapi")
    if cached is None:
        cached = current_app.extensions["flowdesk.openapi"] = document(current_app)
    return jsonify(cached)


@bp.get("/docs")
@documented(
    "The API reference page",
    description="This document, readable in a browser (Swagger UI, served by Flowdesk).",
    responses={200: Reply("An HTML page.", {"type": "string"}, media_type="text/html")},
    public=True,
    tag="contract",
)
def docs_page():
    return render_template("api/docs.html", document_url=url_for("api.openapi_document"))
