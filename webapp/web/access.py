"""Permission checks for views: the decorator that needs a permission, and the per-object check
that answers 404 so guessed ids reveal nothing. The policy itself is `webapp.permissions.can`."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import abort
from flask_login import current_user

from webapp.extensions import login_manager
from webapp.permissions import can

F = TypeVar("F", bound=Callable[..., Any])


def permission_required(permission: str) -> Callable[[F], F]:
    """View decorator: sign-in required, then 403 unless the user holds the permission."""

    def decorator(view: F) -> F:
        @wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if not current_user.is_authenticated:
                return login_manager.unauthorized()
            if not can(current_user, permission, scoped=False):
                abort(403)
            return view(*args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorator


def require(permission: str, partition_id: int | None) -> None:
    """Abort with 404 when the current user may not act on an object in that partition.

    404 rather than 403, so guessing ids does not reveal what exists in other partitions.
    """
    if not can(current_user, permission, partition_id):
        abort(404)
