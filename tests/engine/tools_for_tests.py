"""Tools for engine tests; they record what they saw in Redis so the test process can check.

Worker processes import this module through FLOWDESK_EXTRA_TOOL_MODULES; the test process
registers them with the `test_tools` fixture (and removes them afterwards).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from redis import Redis

from webapp.engine import tools
from webapp.engine.tools import BusinessError, ToolCall, ToolError, tool

PREFIX = "fdtest"
_clients: dict[str, Redis] = {}


def redis_for(call: ToolCall) -> Redis:
    url = call.config.get("REDIS_URL") or os.environ["REDIS_URL"]
    if url not in _clients:
        _clients[url] = Redis.from_url(url)
    return _clients[url]


def seen(client: Redis, name: str) -> list[dict[str, Any]]:
    return [json.loads(item) for item in client.lrange(f"{PREFIX}:seen:{name}", 0, -1)]


def record(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """Note the call; `block_first` seconds of sleep on the first call, `sleep` on every call."""
    client = redis_for(call)
    name = inputs["name"]
    entry = {
        "key": call.idempotency_key,
        "attempt": call.attempt,
        "actor": call.actor,
        "inputs": inputs,
        "pid": os.getpid(),
    }
    count = client.rpush(f"{PREFIX}:seen:{name}", json.dumps(entry))
    client.rpush(f"{PREFIX}:started:{name}", count)
    if inputs.get("block_first") and count == 1:
        time.sleep(float(inputs["block_first"]))
    elif inputs.get("sleep"):
        time.sleep(float(inputs["sleep"]))
    return {"calls": count}


def flaky(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """Fails (retryably) the first `fail_times` calls for `name`, then succeeds."""
    client = redis_for(call)
    count = client.incr(f"{PREFIX}:flaky:{inputs['name']}")
    client.rpush(f"{PREFIX}:flaky-times:{inputs['name']}", time.time())
    if count <= int(inputs["fail_times"]):
        raise ToolError("flaky", f"failure number {count}")
    return {"calls": count}


def barrier(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """Waits until `parties` calls for `name` arrived, so they all return at the same moment."""
    client = redis_for(call)
    key = f"{PREFIX}:barrier:{inputs['name']}"
    arrived = client.incr(key)
    deadline = time.monotonic() + 20
    while int(client.get(key) or 0) < int(inputs["parties"]) and time.monotonic() < deadline:
        time.sleep(0.002)
    return {"arrived": arrived}


def gate(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """Touches `<dir>/started`, then waits until the test creates `<dir>/open`; uses no Redis,
    so it keeps running while the test takes Redis down."""
    folder = Path(inputs["dir"])
    (folder / "started").touch()
    deadline = time.monotonic() + 60
    while not (folder / "open").exists():
        if time.monotonic() > deadline:
            raise ToolError("gate_closed", "the test never opened the gate")
        time.sleep(0.01)
    return {"pid": os.getpid()}


def fatal(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    raise ToolError("bad_request", "this request can never succeed", retryable=False)


def business(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """A business outcome the model routes: raises the error `code` unless it is empty."""
    if inputs.get("code"):
        raise BusinessError(str(inputs["code"]), f"business error {inputs['code']}")
    return {"ok": True}


def odd_text(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """Text PostgreSQL cannot store (NUL, a lone surrogate), as a remote service might send."""
    if inputs.get("fail"):
        raise ToolError("odd\x00code", "upstream said \x00\ud800", retryable=False)
    return {"key\x00": ["nul \x00", "surrogate \ud800"], "fine": "ok"}


TOOLS = {
    "test.record": (record, {"name": "", "sleep": "", "block_first": ""}, ("sleep", "block_first")),
    "test.flaky": (flaky, {"name": "", "fail_times": ""}, ()),
    "test.barrier": (barrier, {"name": "", "parties": ""}, ()),
    "test.fatal": (fatal, {}, ()),
    "test.gate": (gate, {"dir": ""}, ()),
    "test.odd_text": (odd_text, {"fail": ""}, ("fail",)),
    "test.business": (business, {"code": ""}, ("code",)),
}


def register() -> None:
    for name, (function, inputs, optional) in TOOLS.items():
        tool(name, inputs=inputs, optional=optional)(function)


def unregister() -> None:
    for name in TOOLS:
        tools._REGISTRY.pop(name, None)


register()
