"""Users, roles, permissions and partitions (tenant scopes such as a department)."""

from __future__ import annotations

from datetime import datetime

from flask import current_app, has_app_context
from flask_login import UserMixin
from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Integer,
    String,
    Table,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship
from werkzeug.security import check_password_hash, generate_password_hash

from webapp.extensions import db
from webapp.models.base import Model, UTCDateTime, utcnow

user_roles = Table(
    "user_roles",
    db.metadata,
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("role_id", Integer, ForeignKey("roles.id", ondelete="CASCADE"), primary_key=True),
)

user_partitions = Table(
    "user_partitions",
    db.metadata,
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column(
        "partition_id", Integer, ForeignKey("partitions.id", ondelete="CASCADE"), primary_key=True
    ),
)


class Partition(Model):
    """A tenant scope; every process, instance and task belongs to one partition or to none."""

    __tablename__ = "partitions"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    def __repr__(self) -> str:
        return f"<Partition {self.key}>"


class RolePermission(Model):
    """One permission granted by a role."""

    __tablename__ = "role_permissions"
    __table_args__ = (UniqueConstraint("role_id", "permission"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    role_id: Mapped[int] = mapped_column(ForeignKey("roles.id", ondelete="CASCADE"), index=True)
    permission: Mapped[str] = mapped_column(String(64))


class Role(Model):
    """A named set of permissions; users hold roles, tasks can be offered to a role."""

    __tablename__ = "roles"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    description: Mapped[str] = mapped_column(String(500), default="")
    grants: Mapped[list[RolePermission]] = relationship(
        cascade="all, delete-orphan", lazy="selectin", order_by=RolePermission.permission
    )

    @property
    def permissions(self) -> set[str]:
        return {grant.permission for grant in self.grants}

    def set_permissions(self, permissions: set[str] | list[str]) -> None:
        wanted = set(permissions)
        self.grants = [g for g in self.grants if g.permission in wanted] + [
            RolePermission(permission=p) for p in sorted(wanted - self.permissions)
        ]

    def __repr__(self) -> str:
        return f"<Role {self.name}>"


class User(UserMixin, Model):
    """A person who signs in: modeller, assignee, operator or admin."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    email: Mapped[str] = mapped_column(String(254), default="")
    password_hash: Mapped[str] = mapped_column(String(256), default="")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # A service account: roles and partitions like a person, reached only by its API tokens.
    service_account: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    roles: Mapped[list[Role]] = relationship(secondary=user_roles, lazy="selectin")
    partitions: Mapped[list[Partition]] = relationship(secondary=user_partitions, lazy="selectin")

    @property
    def is_active(self) -> bool:  # Flask-Login refuses inactive users
        return self.active

    @property
    def session_token(self) -> str | None:
        """The token of the sign-in this object was loaded for (not stored on the user)."""
        token = self.__dict__.get("_session_token")
        return token if isinstance(token, str) else None

    @session_token.setter
    def session_token(self, token: str | None) -> None:
        self.__dict__["_session_token"] = token

    def get_id(self) -> str:
        """What Flask-Login keeps in the session and remember-me cookie: user id and sign-in."""
        return f"{self.id}:{self.session_token or ''}"

    @property
    def name(self) -> str:
        return self.display_name or self.username

    def set_password(self, password: str) -> None:
        method = (
            current_app.config.get("PASSWORD_HASH_METHOD", "scrypt")
            if has_app_context()
            else "scrypt"
        )
        self.password_hash = generate_password_hash(password, method=method)

    def check_password(self, password: str) -> bool:
        return bool(self.password_hash) and check_password_hash(self.password_hash, password)

    @property
    def permissions(self) -> set[str]:
        return {p for role in self.roles for p in role.permissions}

    @property
    def partition_ids(self) -> set[int]:
        return {p.id for p in self.partitions}

    def __repr__(self) -> str:
        return f"<User {self.username}>"


class UserSession(Model):
    """One sign-in (a browser): its cookies carry the token; deleting the row signs it out."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class LoginFailure(Model):
    """Recent failed sign-ins per key (a username from an address, or an address), shared by
    every process for throttling; `key` is a hash, so any username or address fits."""

    __tablename__ = "login_failures"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)
    last_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
