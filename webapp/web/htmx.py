"""htmx request helpers that understand htmx 4's `tag#id` target header."""

from __future__ import annotations

from flask import request


def is_htmx() -> bool:
    return bool(getattr(request, "htmx", False))


def htmx_target() -> str | None:
    """The id of the element an htmx request will swap into, or None for full page loads."""
    if not is_htmx():
        return None
    target = request.headers.get("HX-Target") or ""
    return target.rsplit("#", 1)[-1] or None
