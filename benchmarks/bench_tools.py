"""A tool with side effects as far as the engine knows (not `pure`), for `engine_throughput.py
--leased`: each call is leased in one transaction and applied in another, as real tools are."""

from __future__ import annotations

from typing import Any

from webapp.engine.tools import ToolCall, tool


@tool(
    "bench.echo",
    description="Returns its inputs; leased like any tool with side effects.",
    any_inputs=True,
)
def echo(inputs: dict[str, Any], call: ToolCall) -> dict[str, Any]:
    return dict(inputs)
