"""The admin area: users, roles, partitions, service accounts and API tokens."""

from webapp.admin import (  # noqa: F401  (importing the views registers their routes)
    tokens,
    views,
)
from webapp.admin.blueprint import bp

__all__ = ["bp"]
