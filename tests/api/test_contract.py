"""The contract test: schemathesis generates requests (valid and invalid ones) from the served
OpenAPI document and sends them over real HTTP to the app (live server, real database and Redis)
as an admin with a bearer token of every scope; no answer may be a 5xx or fall outside the
document (status, content type, body schema, headers). Besides random ids, the paths name real
instances, processes, versions, a broadcast and a migration, so the answers of found objects are
checked too."""

from __future__ import annotations

import os

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.generation import GenerationMode
from sqlalchemy import select

from tests.helpers.documents import chain, node
from tests.helpers.http import post_json
from tests.helpers.processes import publish_document
from webapp.extensions import db
from webapp.models import Task, User, WebhookDelivery
from webapp.services import api_tokens

# Examples per operation: the 28 operations take about a minute on each database.
EXAMPLES = int(os.environ.get("FLOWDESK_CONTRACT_EXAMPLES", "60"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


def _admin_token(app) -> dict[str, str]:
    """The admin's bearer token with every scope, as a service would call the API."""
    with app.app_context():
        admin = db.session.scalar(select(User).where(User.username == "admin"))
        scopes = list(api_tokens.SCOPES)
        _, token = api_tokens.create_token(admin, "contract", scopes, 0, created_by=admin)
    return {"Authorization": f"Bearer {token}"}


def _world(app, live_server, admin: dict[str, str]) -> dict[str, list]:
    """Real objects for the paths: a webhook and its deliveries, instances (waiting, in a
    partition, failed, migrating) and their tasks, the processes' keys and versions, a signal
    broadcast and a migration."""
    with app.app_context():
        wait = ("check", node("userTask", "Check", assignee={"type": "role", "value": "approver"}))
        publish_document(chain(wait), key="open")  # version 2, to migrate to
    hook = {"url": "https://hooks.example.org/flowdesk", "events": ["instance.started"]}
    status, webhook = post_json(live_server, "/api/webhooks", hook, admin)
    assert status == 201, webhook
    instances = []
    for key in ("open", "open", "fin", "msg", "fail", "open"):
        body = {"process_key": key, "input": {"order": "A-1"}}
        status, started = post_json(live_server, "/api/instances", body, admin)
        assert status == 201, started
        instances.append(started["id"])
    status, broadcast = post_json(live_server, "/api/signals", {"name": "contract"}, admin)
    assert status == 202, broadcast
    migrating = {"from": 1, "to": 2, "instances": [instances[-1]], "reason": "contract"}
    status, migration = post_json(live_server, "/api/processes/open/migrations", migrating, admin)
    assert status == 202, migration
    with app.app_context():
        tasks = list(db.session.scalars(select(Task.id)))
        deliveries = list(db.session.scalars(select(WebhookDelivery.id)))
        db.session.remove()
    assert tasks and deliveries
    return {
        "task_id": tasks,
        "webhook_id": [webhook["id"]],
        "delivery_id": deliveries,
        "instance_id": instances,
        "key": ["open", "fin", "msg", "fail", "form"],
        "number": [1, 2],
        "broadcast_id": [broadcast["id"]],
        "operation_id": [migration["operation"]],
    }


def _cases(operation, world: dict[str, list]):
    """Valid and invalid requests, half of them on real objects when the path names any."""
    names = [p.name for p in operation.path_parameters]
    generated = st.one_of(
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.NEGATIVE),
    )
    if not names:
        return generated
    real = st.fixed_dictionaries({name: st.sampled_from(world[name]) for name in names})
    on_real = real.flatmap(
        lambda values: st.one_of(
            operation.as_strategy(GenerationMode.POSITIVE, path_parameters=values),
            operation.as_strategy(GenerationMode.NEGATIVE, path_parameters=values),
        )
    )
    return st.one_of(generated, on_real)


def test_every_answer_keeps_the_contract(app, live_server, published):
    admin = _admin_token(app)
    world = _world(app, live_server, admin)
    schema = schemathesis.openapi.from_url(f"{live_server}/api/openapi.json")
    failures = {}
    labels = []
    for result in schema.get_all_operations():
        operation = result.ok()
        labels.append(operation.label)

        @given(case=_cases(operation, world))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def keeps_contract(case) -> None:
            case.call_and_validate(base_url=live_server, headers=admin, checks=CHECKS)

        try:
            keeps_contract()
        except Exception as error:
            failures[operation.label] = error
    assert len(labels) >= 28
    assert failures == {}, "\n\n".join(f"{label}:\n{error}" for label, error in failures.items())
