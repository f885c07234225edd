"""The admin area: users, roles, partitions, service accounts, API tokens and webhooks."""

from webapp.admin import (  # noqa: F401  (importing the views registers their routes)
    tokens,
    views,
    webhooks,
)
from webapp.admin.blueprint import bp

__all__ = ["bp"]
