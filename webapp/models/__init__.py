"""Database models. Every table is created by a migration under migrations/, never create_all."""

from webapp.models.auth import LoginFailure, Partition, Role, RolePermission, User, UserSession
from webapp.models.compensation import Compensation
from webapp.models.decisions import DecisionModel, DecisionProvision, DecisionVersion
from webapp.models.inbox import SavedFilter
from webapp.models.notifications import (
    Notification,
    NotificationDefault,
    NotificationDigest,
    NotificationPreference,
)
from webapp.models.operations import BulkItem, BulkOperation, RetentionPolicy  # noqa: F401
from webapp.models.process import Process, ProcessVersion
from webapp.models.runtime import (
    HistoryEntry,
    Instance,
    Job,
    MessageSubscription,
    OutboxMessage,
    Task,
    TaskCandidate,
    Token,
)
from webapp.models.scenarios import TestScenario
from webapp.models.schedules import Schedule, ScheduleTick
from webapp.models.signals import (
    EventStart,
    MessageStart,
    SignalBatch,
    SignalBroadcast,
    SignalReceipt,
)
from webapp.models.suspension import HeldEvent
from webapp.models.tokens import ApiToken
from webapp.models.webhooks import Webhook, WebhookDelivery

__all__ = [
    "ApiToken",
    "Compensation",
    "DecisionModel",
    "DecisionProvision",
    "DecisionVersion",
    "EventStart",
    "HeldEvent",
    "HistoryEntry",
    "Instance",
    "Job",
    "LoginFailure",
    "MessageStart",
    "MessageSubscription",
    "Notification",
    "NotificationDefault",
    "NotificationDigest",
    "NotificationPreference",
    "OutboxMessage",
    "Partition",
    "Process",
    "ProcessVersion",
    "Role",
    "RolePermission",
    "SavedFilter",
    "Schedule",
    "ScheduleTick",
    "SignalBatch",
    "SignalBroadcast",
    "SignalReceipt",
    "Task",
    "TaskCandidate",
    "TestScenario",
    "Token",
    "User",
    "UserSession",
    "Webhook",
    "WebhookDelivery",
]
