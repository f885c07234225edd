"""Ceilings that turn a runaway model into an incident instead of an endless load.

Set from the app's settings (MULTI_INSTANCE_LIMIT, MULTI_INSTANCE_BATCH, CALL_DEPTH_LIMIT) when
the app is created; each web and worker process reads its own settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Instances one multi-instance activity may start.
MULTI_INSTANCE = 10_000
# Instances a parallel multi-instance starts in one step; a job starts each further batch, so no
# transaction grows with the collection.
MULTI_INSTANCE_BATCH = 500
# Instances in one chain of call activities, the top instance not counted.
CALL_DEPTH = 16


def configure(config: Mapping[str, Any]) -> None:
    global MULTI_INSTANCE, MULTI_INSTANCE_BATCH, CALL_DEPTH
    MULTI_INSTANCE = int(config.get("MULTI_INSTANCE_LIMIT") or MULTI_INSTANCE)
    MULTI_INSTANCE_BATCH = int(config.get("MULTI_INSTANCE_BATCH") or MULTI_INSTANCE_BATCH)
    CALL_DEPTH = int(config.get("CALL_DEPTH_LIMIT") or CALL_DEPTH)
