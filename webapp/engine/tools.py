"""The tool registry: what a service task can call, and what a call receives and raises.

Tools register with `@tool(name, inputs=..., description=...)` when their module is imported;
the composition root imports them (`flowdesk.tools` entry points, FLOWDESK_EXTRA_TOOL_MODULES).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from webapp.process.tools import ToolInput, ToolSpec


@dataclass(frozen=True)
class ToolCall:
    """What a tool receives besides its inputs."""

    idempotency_key: str
    actor: str | None
    timeout: float
    instance_id: int
    node_id: str
    attempt: int
    config: Mapping[str, Any] = field(default_factory=dict)


class ToolError(Exception):
    """A tool failed; `code` is a short stable word shown in incidents (e.g. http_500).

    With `bpmn_error=True` it is a business error, not a technical failure: it is never retried
    and goes at once to the model's error catcher for `code` (a boundary or event sub-process).
    """

    def __init__(
        self, code: str, message: str, *, retryable: bool = True, bpmn_error: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable and not bpmn_error
        self.bpmn_error = bpmn_error


class BusinessError(ToolError):
    """A business error with `code` for the model to route (``ToolError(..., bpmn_error=True)``)."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(code, message or code, bpmn_error=True)


@dataclass(frozen=True)
class Tool:
    """A registered tool; `pure` tools (no side effects, fast) run inside the engine's step;
    `safe` ones may run for real in a test scenario (pure tools are safe)."""

    spec: ToolSpec
    function: Callable[[dict[str, Any], ToolCall], Any]
    pure: bool = False
    safe: bool = False


_REGISTRY: dict[str, Tool] = {}


def tool(
    name: str,
    *,
    inputs: Mapping[str, str] | list[ToolInput] | tuple[ToolInput, ...] = (),
    optional: tuple[str, ...] = (),
    description: str = "",
    pure: bool = False,
    any_inputs: bool = False,
    safe: bool | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a tool; `inputs` maps input name -> description (all required unless optional;
    `any_inputs=True`: inputs of other names are welcome too).

    `pure=True` declares a tool without side effects that returns quickly: the engine may run it
    inside the step's transaction instead of leasing its job first. `safe=True` (the default
    for pure tools) lets test scenarios call it for real instead of asking for a stubbed output.
    """
    if isinstance(inputs, Mapping):
        declared = tuple(
            ToolInput(key, required=key not in optional, description=text)
            for key, text in inputs.items()
        )
    else:
        declared = tuple(inputs)

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        if name in _REGISTRY and _REGISTRY[name].function is not function:
            raise ValueError(f"tool {name!r} is registered twice")
        _REGISTRY[name] = Tool(
            ToolSpec(name, description or (function.__doc__ or "").strip(), declared, any_inputs),
            function,
            pure,
            pure if safe is None else safe,
        )
        return function

    return register


def get(name: str) -> Tool | None:
    return _REGISTRY.get(name)


def specs() -> dict[str, ToolSpec]:
    """The registered tools' specs, for validation and the designer's tool picker."""
    return {name: registered.spec for name, registered in sorted(_REGISTRY.items())}
