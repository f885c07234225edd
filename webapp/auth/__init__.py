"""Sign-in and sign-out."""

from webapp.auth import (  # noqa: F401  (importing the views registers their routes)
    views,
)
from webapp.auth.blueprint import bp

__all__ = ["bp"]
