"""The contract test: schemathesis generates requests (valid and invalid ones) from the served
OpenAPI document and sends them over real HTTP to the app (live server, real database and Redis)
as an admin; no answer may be a 5xx or fall outside the document (status, content type, body
schema, headers)."""

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

from tests.helpers.http import basic

# Examples per operation: the 17 operations take well under two minutes on each database.
EXAMPLES = int(os.environ.get("FLOWDESK_CONTRACT_EXAMPLES", "30"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


def test_every_answer_keeps_the_contract(live_server, demo):
    schema = schemathesis.openapi.from_url(f"{live_server}/api/openapi.json")
    failures = {}
    labels = []
    for result in schema.get_all_operations():
        operation = result.ok()
        labels.append(operation.label)
        cases = st.one_of(
            operation.as_strategy(GenerationMode.POSITIVE),
            operation.as_strategy(GenerationMode.NEGATIVE),
        )

        @given(case=cases)
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def keeps_contract(case) -> None:
            case.call_and_validate(base_url=live_server, headers=basic("admin"), checks=CHECKS)

        try:
            keeps_contract()
        except Exception as error:
            failures[operation.label] = error
    assert len(labels) >= 17
    assert failures == {}, "\n\n".join(f"{label}:\n{error}" for label, error in failures.items())
