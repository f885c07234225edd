"""Built-in tools: http.request, email.send, send_message, vars.set, noop and fail."""

from __future__ import annotations

from typing import Any

from webapp.tools import ToolCall, ToolError, tool
from webapp.tools.mail import send_email
from webapp.tools.messages import send_message
from webapp.tools.web import http_request


@tool(
    "http.request",
    inputs={
        "url": "The address to call (its host must be allowed by HTTP_ALLOWED_HOSTS)",
        "method": "GET, POST, PUT, PATCH, DELETE or HEAD (default GET)",
        "headers": "Request headers, a mapping of names to text",
        "body": "A JSON value sent as the request body",
        "timeout": "Seconds to wait for the answer (default: the node's timeout)",
    },
    optional=("method", "headers", "body", "timeout"),
    description="Calls an HTTP API and returns {status, headers, json or text}.",
)
def http(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    return http_request(inputs, call)


@tool(
    "email.send",
    inputs={
        "to": "One address or a list of addresses",
        "subject": "The subject line",
        "body": "The plain-text message",
    },
    optional=("body",),
    description="Sends an e-mail by SMTP, or keeps it in the outbox when no SMTP is set up.",
)
def email(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    return send_email(inputs, call)


tool(
    "send_message",
    inputs={
        "name": "The message name",
        "correlationKey": "The correlation key the waiting instances expect",
        "payload": "A JSON value: the output of the catch, or the started instance's input",
        "messageId": "The message id (default: this call's idempotency key)",
    },
    optional=("correlationKey", "payload", "messageId"),
    description="Delivers a Flowdesk message to waiting instances, else starts the process "
    "whose message start listens for it; once per message id.",
)(send_message)


def echo(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """Return the inputs, already computed by their expressions."""
    return dict(inputs)


tool(
    "vars.set",
    description="Returns its inputs (computed by expressions) so saveTo can store them.",
    pure=True,
    any_inputs=True,
)(echo)
tool(
    "noop",
    description="Does nothing and returns its inputs; for demos and tests.",
    pure=True,
    any_inputs=True,
)(echo)


@tool(
    "fail",
    inputs={"message": "Why it fails"},
    optional=("message",),
    description="Always fails; for demos and tests.",
    pure=True,
)
def fail(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    raise ToolError("failed", str(inputs.get("message") or "this tool always fails"))
