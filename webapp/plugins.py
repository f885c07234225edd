"""Loading tool modules once per process: the `flowdesk.tools` entry points (built-in tools first,
so a package cannot take their names), then the modules named in FLOWDESK_EXTRA_TOOL_MODULES."""

from __future__ import annotations

import importlib
import logging
import os
from importlib.metadata import entry_points

from webapp.config import ConfigError

TOOL_ENTRY_POINTS = "flowdesk.tools"
EXTRA_TOOL_MODULES = "FLOWDESK_EXTRA_TOOL_MODULES"

log = logging.getLogger(__name__)
_tools_loaded = False


def load_tools() -> None:
    """Import the tool modules, once per process: every `flowdesk.tools` entry point, the built-in
    tools first (a package cannot take their names), then the modules named in
    FLOWDESK_EXTRA_TOOL_MODULES (comma-separated)."""
    global _tools_loaded
    if _tools_loaded:
        return
    entries = entry_points(group=TOOL_ENTRY_POINTS)
    if not any(entry.value.startswith("webapp.") for entry in entries):
        raise ConfigError(
            f"the built-in tools are not installed (no {TOOL_ENTRY_POINTS} entry points of "
            "Flowdesk): the package metadata predates this checkout. Run `make setup` (or "
            "`pip install -e .`) in the checkout, then start again."
        )
    _tools_loaded = True
    for entry in sorted(entries, key=lambda entry: not entry.value.startswith("webapp.")):
        try:
            entry.load()
        except Exception:
            log.exception("could not load tool entry point %s", entry.name)
    for module in os.environ.get(EXTRA_TOOL_MODULES, "").split(","):
        if module.strip():
            try:
                importlib.import_module(module.strip())
            except Exception:
                log.exception("could not import tool module %s", module.strip())
