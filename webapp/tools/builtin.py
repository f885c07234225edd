"""Built-in tools: http.request, email.send, vars.set, noop and fail."""

from __future__ import annotations

from typing import Any

from webapp.tools import ToolCall, ToolError, tool


@tool("noop", description="Does nothing and returns its inputs; for demos and tests.")
def noop(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    return dict(inputs)


@tool(
    "fail",
    inputs={"message": "Why it fails"},
    optional=("message",),
    description="Always fails; for demos and tests.",
)
def fail(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    raise ToolError("failed", str(inputs.get("message") or "this tool always fails"))
