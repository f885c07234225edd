"""The one exception the engine raises for refused steps; `status` is the HTTP status that fits."""

from __future__ import annotations

from typing import Any


class EngineError(Exception):
    """A step was refused (unknown instance, wrong state, bad input); nothing was changed."""

    def __init__(self, code: str, message: str, *, status: int = 409, details: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.details = details
