"""The scope a bearer token needs for each API endpoint: the one table, by endpoint name.

An endpoint missing here is refused to every token (403), and a test checks that every /api
route is listed; a new endpoint adds its line.
"""

from __future__ import annotations

ENDPOINT_SCOPES: dict[str, str] = {
    "api.list_instances": "read",
    "api.get_instance": "read",
    "api.instance_history": "read",
    "api.get_signal": "read",
    "api.migration_progress": "read",
    "api.start_instance": "start",
    "api.send_message": "messages",
    "api.broadcast_signal": "messages",
    "api.evaluate_conditions": "start",
    "api.cancel_instance": "operate",
    "api.retry_instance": "operate",
    "api.activate_activity": "operate",
    "api.modify_instance": "operate",
    "api.migrate_instances": "operate",
    "api.list_tasks": "tasks",
    "api.get_task": "tasks",
    "api.claim_task": "tasks",
    "api.release_task": "tasks",
    "api.complete_task": "tasks",
    "api.suspend_instance": "operate",
    "api.resume_instance": "operate",
    "api.suspend_version": "operate",
    "api.resume_version": "operate",
    "api.webhook_create": "admin",
    "api.webhook_list": "admin",
    "api.webhook_get": "admin",
    "api.webhook_update": "admin",
    "api.webhook_delete": "admin",
    "api.webhook_rotate": "admin",
    "api.webhook_resume": "admin",
    "api.webhook_deliveries": "admin",
    "api.webhook_redeliver": "admin",
}


def scope_for(endpoint: str | None) -> str | None:
    """The scope `endpoint` needs, or None when tokens may not call it."""
    return ENDPOINT_SCOPES.get(endpoint or "")
