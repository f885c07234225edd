"""The process engine: runs published versions durably, one locked transaction per step.

Every function takes a SQLAlchemy session and no Flask object; only `jobs.py` (the RQ entry points
and commit-then-enqueue) is bound to the app. Start with `steps` (the public step functions),
`runtime` (how tokens move) and `store` (how a step reads and writes its rows).
"""

from webapp.engine.errors import EngineError

__all__ = ["EngineError"]
