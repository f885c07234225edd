"""The admin area: users, roles and partitions."""

from webapp.admin import (  # noqa: F401  (importing the views registers their routes)
    views,
)
from webapp.admin.blueprint import bp

__all__ = ["bp"]
