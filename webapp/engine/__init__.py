"""The process engine: runs published versions durably, one locked transaction per step."""

from webapp.engine.errors import EngineError

__all__ = ["EngineError"]
