"""Database models. Every table is created by a migration under migrations/, never create_all."""

from webapp.models.auth import LoginFailure, Partition, Role, RolePermission, User, UserSession
from webapp.models.inbox import SavedFilter
from webapp.models.operations import BulkItem, BulkOperation, RetentionPolicy  # noqa: F401
from webapp.models.process import Process, ProcessVersion
from webapp.models.runtime import (
    HistoryEntry,
    Instance,
    Job,
    MessageSubscription,
    OutboxMessage,
    Task,
    Token,
)
from webapp.models.schedules import Schedule, ScheduleTick

__all__ = [
    "HistoryEntry",
    "Instance",
    "Job",
    "LoginFailure",
    "MessageSubscription",
    "OutboxMessage",
    "Partition",
    "Process",
    "ProcessVersion",
    "Role",
    "RolePermission",
    "SavedFilter",
    "Schedule",
    "ScheduleTick",
    "Task",
    "Token",
    "User",
    "UserSession",
]
