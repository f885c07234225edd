"""The built-in tools, one module each, registered through the `flowdesk.tools` entry points.

The registry itself is `webapp.engine.tools`; its names stay importable from here for tool
modules written against this package.
"""

from __future__ import annotations

from webapp.engine.tools import BusinessError, Tool, ToolCall, ToolError, get, specs, tool

__all__ = ["BusinessError", "Tool", "ToolCall", "ToolError", "get", "specs", "tool"]
