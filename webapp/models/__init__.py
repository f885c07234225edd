"""Database models. Every table is created by a migration under migrations/, never create_all."""

from webapp.models.auth import LoginFailure, Partition, Role, RolePermission, User
from webapp.models.process import Process, ProcessVersion

__all__ = [
    "LoginFailure",
    "Partition",
    "Process",
    "ProcessVersion",
    "Role",
    "RolePermission",
    "User",
]
