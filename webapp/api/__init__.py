"""The JSON API under /api: instances, messages and tasks, for scripts and other systems.

Authenticated by a bearer token (with the endpoint's scope), the session cookie (unsafe methods
then need the X-CSRFToken header) or HTTP Basic with a Flowdesk username and password (legacy).
"""

from webapp.api import (  # noqa: F401  (importing the views registers their routes)
    adhoc,
    auth,
    errors,
    openapi,
    tasks,
    views,
    webhooks,
)
from webapp.api.blueprint import bp

__all__ = ["bp"]
