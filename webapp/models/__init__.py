"""Database models. Every table is created by a migration under migrations/, never create_all."""

from webapp.models.auth import LoginFailure, Partition, Role, RolePermission, User

__all__ = ["LoginFailure", "Partition", "Role", "RolePermission", "User"]
