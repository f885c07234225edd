"""What expressions see of an instance, and making values safe to store as JSON."""

from __future__ import annotations

import math
import re
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from webapp.models import Instance


def context(instance: Instance) -> dict[str, Any]:
    """The expression context: `$input`, `$vars`, `$nodes` and `$instance` of the instance."""
    return {
        "$input": instance.input or {},
        "$vars": instance.vars or {},
        "$nodes": instance.nodes or {},
        "$instance": instance_values(instance),
    }


def instance_values(instance: Any) -> dict[str, Any]:
    """What `$instance` reads of an instance (model or a step's row): its business key."""
    return {"businessKey": instance.business_key}


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    """`text` with NUL and lone surrogates (which PostgreSQL and UTF-8 refuse) as U+FFFD."""
    return _UNSTORABLE.sub("\ufffd", text)


def jsonable(value: Any) -> Any:
    """A copy of `value` that JSON columns accept: datetimes as ISO text, NaN as null, NUL and
    lone surrogates in text (from a tool's output or error) as U+FFFD."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {storable_text(str(key)): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(item) for item in value]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return jsonable(float(value))
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return storable_text(str(value))
