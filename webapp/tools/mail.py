"""The `email.send` tool: SMTP when SMTP_HOST is set, otherwise a row in the outbox table
(webapp/services/mail.py), once-only per the job's idempotency key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webapp.engine.tools import ToolCall, tool
from webapp.services import mail
from webapp.services.mail import ADDRESS, MAX_RECIPIENTS, recipients

__all__ = ["ADDRESS", "MAX_RECIPIENTS", "recipients", "send_email"]


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
def send_email(inputs: Mapping[str, Any], call: ToolCall) -> dict[str, Any]:
    return mail.send(
        call.config,
        key=call.idempotency_key,
        to=recipients(inputs.get("to")),
        subject=str(inputs.get("subject") or ""),
        body=str(inputs.get("body") or ""),
        instance_id=call.instance_id,
        timeout=call.timeout,
    )
