"""JSON Schemas of the API's bodies and answers, named for the document's `components`.

Statuses come from the models' enums, so a new status reaches the contract by itself.
"""

from __future__ import annotations

from typing import Any

from webapp.inputs import MAX_INT32
from webapp.models.statuses import (
    OPEN_TOKEN,
    BroadcastStatus,
    BulkItemStatus,
    BulkStatus,
    HistoryKind,
    InstanceStatus,
    TaskStatus,
)
from webapp.services import webhooks
from webapp.services.instances import MAX_BUSINESS_KEY, MAX_REASON
from webapp.services.operations import migration

JSON = dict[str, Any]


def ref(name: str) -> JSON:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: JSON) -> JSON:
    return {"anyOf": [schema, {"type": "null"}]}


def page_schema(item: str) -> JSON:
    """A list operation's answer: one page of `item`s with its number, size and the total."""
    return closed(
        {
            "items": {"type": "array", "items": ref(item)},
            "page": {"type": "integer", "minimum": 1},
            "per_page": {"type": "integer", "minimum": 1},
            "total": {"type": "integer", "minimum": 0},
        }
    )


def closed(properties: JSON, required: tuple[str, ...] | None = None) -> JSON:
    """An object with exactly these properties (all present unless `required` says which)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
        "additionalProperties": False,
    }


TEXT = {"type": "string"}
ID = {"type": "integer", "minimum": 0}
TIME = {"type": "string", "format": "date-time"}
ANY_OBJECT = {"type": "object"}
REASON = {"type": "string", "maxLength": MAX_REASON, "description": "Why, for the history."}
VERSION_NUMBER = {"type": "integer", "minimum": 1, "maximum": MAX_INT32}


def _enum(values: Any) -> JSON:
    return {"type": "string", "enum": [str(value) for value in values]}


INSTANCE: JSON = {
    "id": ID,
    "process_key": TEXT,
    "version": VERSION_NUMBER,
    "status": _enum(InstanceStatus),
    "business_key": nullable(TEXT),
    "partition": nullable(TEXT),
    "started_via": TEXT,
    "started_by": nullable(TEXT),
    "error": nullable(ANY_OBJECT),
    "created_at": TIME,
    "updated_at": nullable(TIME),
    "ended_at": nullable(TIME),
    "called_by": nullable(ref("CalledBy")),
    "suspended": nullable(ref("Suspension")),
}

SCHEMAS: dict[str, JSON] = {
    "Error": closed(
        {
            "error": {"type": "string", "description": "A stable code, such as `invalid`."},
            "message": {"type": "string", "description": "What is wrong, for people."},
            "details": {
                "description": "More, such as `fields` naming each wrong field, or `retry_after`.",
                "anyOf": [{"type": "object"}, {"type": "null"}],
            },
            "status": {"type": "integer", "description": "The HTTP status, on some answers."},
        },
        required=("error", "message", "details"),
    ),
    "CalledBy": closed({"instance": ID, "node": TEXT}),
    "Suspension": closed({"at": TIME, "by": nullable(TEXT), "reason": nullable(TEXT)}),
    "Instance": closed(INSTANCE),
    "Token": closed({"id": ID, "node": TEXT, "status": _enum(OPEN_TOKEN), "scope": nullable(ID)}),
    "Task": closed(
        {
            "id": ID,
            "node": TEXT,
            "title": nullable(TEXT),
            "status": _enum(TaskStatus),
            "assignee": nullable(TEXT),
            "role": nullable(TEXT),
            "open_to_partition": {"type": "boolean"},
            "due_at": nullable(TIME),
        }
    ),
    "InstanceDetail": closed(
        {
            **INSTANCE,
            "input": ANY_OBJECT,
            "vars": ANY_OBJECT,
            "nodes": ANY_OBJECT,
            "tokens": {"type": "array", "items": ref("Token")},
            "tasks": {"type": "array", "items": ref("Task")},
        }
    ),
    "InstancePage": page_schema("Instance"),
    "HistoryEntry": closed(
        {
            "id": ID,
            "kind": _enum(HistoryKind),
            "node": nullable(TEXT),
            "token": nullable(ID),
            "actor": nullable(TEXT),
            "details": ANY_OBJECT,
            "at": TIME,
        }
    ),
    "HistoryPage": closed(
        {
            "items": {"type": "array", "items": ref("HistoryEntry")},
            "next_after": nullable(ID),
        }
    ),
    "StartRequest": closed(
        {
            "process_key": {"type": "string", "minLength": 1},
            "version": VERSION_NUMBER,
            "input": {"type": "object", "description": "Checked against the start form."},
            "business_key": {"type": "string", "maxLength": MAX_BUSINESS_KEY},
            "partition": {"type": "string", "description": "A partition key."},
        },
        required=("process_key",),
    ),
    "ReasonRequest": closed({"reason": REASON}, required=()),
    "ActivationRequest": closed(
        {
            "activity": {"type": "string", "minLength": 1, "maxLength": 255},
            "scope": {**ID, "description": "The ad-hoc sub-process's token (when several run)."},
        },
        required=("activity",),
    ),
    "RequiredReasonRequest": closed({"reason": {**REASON, "minLength": 1}}),
    "MessageRequest": closed(
        {
            "name": {"type": "string", "minLength": 1, "maxLength": 200},
            "correlation_key": {"type": "string", "maxLength": 200},
            "payload": {"description": "Any JSON value; the receiver's message output."},
            "message_id": {"type": "string", "pattern": "^[!-~]{1,255}$"},
        },
        required=("name",),
    ),
    "MessageDelivery": closed(
        {
            "delivered": {"type": "array", "items": ID},
            "started": ID,
            "message_id": TEXT,
            "duplicate": {"type": "boolean"},
        },
        required=("delivered",),
    ),
    "ConditionsRequest": closed(
        {
            "variables": {
                "type": "object",
                "description": "The data the start conditions read (as `$input` and `$vars`); "
                "each started instance's input.",
            },
            "process": {"type": "string", "minLength": 1, "description": "A process key."},
            "partition": {"type": "string", "minLength": 1, "description": "A partition key."},
        },
        required=(),
    ),
    "ConditionsResult": closed(
        {
            "evaluated": {
                "type": "array",
                "items": closed(
                    {
                        "process": TEXT,
                        "version": {"type": "integer", "minimum": 1},
                        "node": TEXT,
                        "instance": ID,
                        "error": TEXT,
                    },
                    required=("process", "version", "node"),
                ),
            },
            "started": {"type": "array", "items": ID},
        },
        required=("evaluated", "started"),
    ),
    "SignalRequest": closed(
        {
            "name": {"type": "string", "minLength": 1, "maxLength": 200},
            "payload": ANY_OBJECT,
            "partition": nullable(TEXT),
        },
        required=("name",),
    ),
    "Broadcast": closed(
        {
            "id": ID,
            "name": TEXT,
            "payload": nullable(ANY_OBJECT),
            "partition": nullable(TEXT),
            "status": _enum(BroadcastStatus),
            "total": nullable({"type": "integer", "minimum": 0}),
            "delivered": {"type": "integer", "minimum": 0},
            "started": {"type": "integer", "minimum": 0},
            "thrown_by": {
                "oneOf": [
                    closed({"instance": nullable(ID), "node": TEXT}),
                    closed({"user": nullable(TEXT)}),
                ]
            },
            "created_at": TIME,
            "finished_at": nullable(TIME),
        }
    ),
    "ModificationRequest": closed(
        {
            "operations": {
                "type": "array",
                "maxItems": 100,
                "items": {
                    "oneOf": [
                        closed({"move": ID, "to": TEXT}),
                        closed({"cancel": ID}),
                        closed({"cancel_branch": ID}),
                        closed({"add": TEXT}),
                    ]
                },
            },
            "variables": {"type": "object", "description": "Names and JSON values, set first."},
            "reason": REASON,
            "dry_run": {"type": "boolean"},
            "stamp": {"type": "string", "minLength": 1, "maxLength": 64},
        },
        required=(),
    ),
    "ModificationPreview": {
        "type": "object",
        "properties": {
            "instance": ID,
            "stamp": TEXT,
            "stamp_after": TEXT,
            "status": _enum(InstanceStatus),
            **{
                name: {"type": "array", "items": ANY_OBJECT}
                for name in (
                    "tokens_before",
                    "tokens_after",
                    "tasks_withdrawn",
                    "tasks_created",
                    "jobs_cancelled",
                    "jobs_created",
                    "subscriptions_withdrawn",
                    "subscriptions_created",
                )
            },
            "variables": ANY_OBJECT,
            "warnings": {"type": "array", "items": TEXT},
            "applied": {"type": "boolean"},
        },
        "required": ["instance", "stamp", "tokens_before", "tokens_after", "applied"],
        "additionalProperties": False,
    },
    "MigrationRequest": closed(
        {
            "from": VERSION_NUMBER,
            "to": VERSION_NUMBER,
            "mapping": {
                "type": "object",
                "additionalProperties": TEXT,
                "description": "Old node id to new node id.",
            },
            "instances": {"type": "array", "items": ID},
            "dry_run": {"type": "boolean"},
            "reason": REASON,
        },
        required=("from", "to"),
    ),
    "MigrationVerdict": closed(
        {
            "instance": ID,
            "verdict": _enum(migration.GROUPS),
            "reason": nullable(TEXT),
            "mapping": {"type": "object", "additionalProperties": TEXT},
        }
    ),
    "MigrationDryRun": closed(
        {
            "process": TEXT,
            "from": VERSION_NUMBER,
            "to": VERSION_NUMBER,
            "mapping": {"type": "object", "additionalProperties": TEXT},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "verdicts": {"type": "array", "items": ref("MigrationVerdict")},
        }
    ),
    "MigrationStarted": closed(
        {
            "operation": ID,
            "total": {"type": "integer", "minimum": 0},
            "progress": {"type": "string", "description": "The API URL of its progress."},
            "page": {"type": "string", "description": "The operations page of its progress."},
        }
    ),
    "MigrationProgress": closed(
        {
            "operation": ID,
            "status": _enum(BulkStatus),
            "params": ANY_OBJECT,
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "items": {
                "type": "array",
                "items": closed(
                    {
                        "instance": ID,
                        "status": _enum(BulkItemStatus),
                        "message": nullable(TEXT),
                    }
                ),
            },
        }
    ),
    "VersionChangeRequest": closed(
        {"reason": REASON, "instances": {"type": "boolean"}}, required=()
    ),
    "VersionSuspension": closed(
        {
            "process_key": TEXT,
            "version": VERSION_NUMBER,
            "suspended": {"type": "boolean"},
            "suspended_at": nullable(TIME),
            "suspended_by": nullable(TEXT),
            "reason": nullable(TEXT),
            "bulk_operation": nullable(ID),
        }
    ),
    "TaskRow": {
        "type": "object",
        "properties": {
            "id": ID,
            "title": nullable(TEXT),
            "node": TEXT,
            "status": _enum(TaskStatus),
            "instance": ID,
            "process_key": TEXT,
            "version": VERSION_NUMBER,
            "business_key": nullable(TEXT),
            "assignee": nullable(TEXT),
            "offered_to": closed(
                {
                    "roles": {"type": "array", "items": TEXT},
                    "users": {"type": "array", "items": TEXT},
                    "everyone": {"type": "boolean"},
                }
            ),
            "created_at": TIME,
            "due_at": nullable(TIME),
            "claimed_at": nullable(TIME),
            "completed_at": nullable(TIME),
        },
        "required": ["id", "node", "status", "instance", "process_key", "assignee"],
    },
    "TaskPage": page_schema("TaskRow"),
    "TaskDetail": {
        "allOf": [ref("TaskRow")],
        "type": "object",
        "description": "The row's fields, and the form, its values, the instance's data, what "
        "you may do and, once completed, the result.",
        "properties": {
            "partition": nullable(TEXT),
            "suspended": {"type": "boolean"},
            "completed_by": nullable(TEXT),
            "form": nullable(ANY_OBJECT),
            "values": ANY_OBJECT,
            "display": {"type": "array", "items": ANY_OBJECT},
            "input": ANY_OBJECT,
            "vars": ANY_OBJECT,
            "result": nullable(ANY_OBJECT),
            "actions": closed(
                {
                    "claim": {"type": "boolean"},
                    "release": {"type": "boolean"},
                    "complete": {"type": "boolean"},
                }
            ),
            "moved_on": ANY_OBJECT,
        },
        "required": ["form", "values", "input", "vars", "actions"],
    },
    "EmptyRequest": {"type": "object", "maxProperties": 0},
    "TaskValues": {
        "type": "object",
        "description": "The form's values by field key (`{}` for a task without a form).",
    },
    "WebhookRequest": closed(
        {
            "url": {"type": "string", "format": "uri"},
            "events": {"type": "array", "items": _enum(webhooks.EVENTS)},
            "partition": nullable(TEXT),
            "process_key": nullable({"type": "string", "maxLength": 100}),
            "description": nullable({"type": "string", "maxLength": 200}),
            "active": {"type": "boolean"},
        },
        required=(),
    ),
    "Webhook": {
        "type": "object",
        "properties": {
            "id": ID,
            "url": TEXT,
            "description": nullable(TEXT),
            "events": {"type": "array", "items": TEXT},
            "process_key": nullable(TEXT),
            "partition": nullable(TEXT),
            "active": {"type": "boolean"},
            "paused": nullable(closed({"at": nullable(TIME), "reason": nullable(TEXT)})),
            "rotation_ends_at": nullable(TIME),
            "created_by": nullable(TEXT),
            "created_at": nullable(TIME),
            "secret": {"type": "string", "description": "`whsec_…`: only in single answers."},
        },
        "required": ["id", "url", "events", "active", "paused"],
        "additionalProperties": False,
    },
    "WebhookList": closed({"items": {"type": "array", "items": ref("Webhook")}}),
    "RotateRequest": closed(
        {"overlap_hours": {"type": "number", "minimum": 0, "maximum": 168}}, required=()
    ),
    "Delivery": {
        "type": "object",
        "properties": {
            "id": ID,
            "webhook_id": {"type": "string", "description": "The `webhook-id` header sent."},
            "type": TEXT,
            "instance": nullable(ID),
            "status": TEXT,
            "attempts": {"type": "integer", "minimum": 0},
            "response_code": nullable({"type": "integer"}),
            "error": nullable(TEXT),
            "created_at": nullable(TIME),
            "last_attempt_at": nullable(TIME),
            "next_attempt_at": nullable(TIME),
        },
        "required": ["id", "type", "status", "attempts"],
        "additionalProperties": False,
    },
    "DeliveryPage": page_schema("Delivery"),
    "OpenApiDocument": {
        "type": "object",
        "required": ["openapi", "info", "paths"],
        "properties": {"openapi": TEXT, "info": ANY_OBJECT, "paths": ANY_OBJECT},
    },
}
