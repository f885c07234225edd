"""Descriptions of the tools a service task can call, as the engine's tool registry reports them.

The library only reads these (validation checks a service task's tool and inputs against them).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolInput:
    """One named input of a tool; required inputs must be mapped by every service task using it."""

    name: str
    required: bool = True
    description: str = ""


@dataclass(frozen=True)
class ToolSpec:
    """A tool a service task can call: its name, a description and its declared inputs."""

    name: str
    description: str = ""
    inputs: tuple[ToolInput, ...] = ()
    #: The tool takes inputs of any name (such as `vars.set`, which returns what it is given).
    any_inputs: bool = False

    @property
    def required_inputs(self) -> tuple[str, ...]:
        """Names of the inputs a service task must provide, in declaration order."""
        return tuple(item.name for item in self.inputs if item.required)

    def input_named(self, name: str) -> ToolInput | None:
        """Return the declared input called ``name``, or ``None``."""
        return next((item for item in self.inputs if item.name == name), None)
