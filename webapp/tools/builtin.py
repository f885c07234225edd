"""Built-in tools without side effects: vars.set, noop and fail."""

from __future__ import annotations

from typing import Any

from webapp.engine.tools import ToolCall, ToolError, tool


def echo(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    """Return the inputs, already computed by their expressions."""
    return dict(inputs)


tool(
    "vars.set",
    description="Returns its inputs (computed by expressions) so saveTo can store them.",
    pure=True,
    any_inputs=True,
)(echo)
tool(
    "noop",
    description="Does nothing and returns its inputs; for demos and tests.",
    pure=True,
    any_inputs=True,
)(echo)


@tool(
    "fail",
    inputs={"message": "Why it fails"},
    optional=("message",),
    description="Always fails; for demos and tests.",
    pure=True,
)
def fail(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    raise ToolError("failed", str(inputs.get("message") or "this tool always fails"))
