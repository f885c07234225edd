"""The inbox area: starting processes and working the tasks offered to you."""

from webapp.inbox import (  # noqa: F401  (importing the views registers their routes)
    start,
    tasks,
)
from webapp.inbox.blueprint import bp

__all__ = ["bp"]
