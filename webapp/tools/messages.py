"""The `send_message` tool: deliver a Flowdesk message from a process, as `POST /api/messages`
does, so a message throw, send task or message end can reach other Flowdesk processes."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from webapp.engine.tools import ToolCall, ToolError, tool
from webapp.engine.waits import correlation_text
from webapp.extensions import db
from webapp.models import Instance, User
from webapp.services import messages
from webapp.services.instances import InstanceError, clean_idempotency_key


@tool(
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
)
def send_message(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """Deliver to the instances waiting for it in the sender's partition (or in none), else start
    the listening process; the job's idempotency key is the message id unless one is given, so a
    retried call never delivers twice."""
    name = inputs.get("name")
    if not isinstance(name, str) or not name.strip():
        message = "The input 'name' must be a message name."
        raise ToolError("invalid_input", message, retryable=False)
    message_id = inputs.get("messageId") or call.idempotency_key
    try:
        message_id = clean_idempotency_key(str(message_id), "messageId")
        partition_id = db.session.scalar(
            select(Instance.partition_id).where(Instance.id == call.instance_id)
        )
        actor = None
        if call.actor:
            actor = db.session.scalar(select(User).where(User.username == call.actor))
        delivery = messages.deliver(
            name.strip(),
            correlation_text(inputs.get("correlationKey")),
            inputs.get("payload"),
            message_id=message_id,
            partitions={partition_id} if partition_id is not None else set(),
            actor=actor,
            may_start=lambda process: process.partition_id in (None, partition_id),
            partition_id=partition_id,
        )
    except InstanceError as error:
        raise ToolError(error.code, error.message, retryable=error.code == "no_match") from None
    finally:
        db.session.rollback()  # every delivery committed its own step; nothing else is kept
    return delivery.as_dict()
