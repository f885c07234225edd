"""The built-in tools install like any tool package: through the `flowdesk.tools` entry points."""

from __future__ import annotations

import tomllib
from importlib.metadata import entry_points
from pathlib import Path

from webapp import TOOL_ENTRY_POINTS, load_tools
from webapp.engine import tools

ROOT = Path(__file__).resolve().parents[2]
BUILT_IN_MODULES = {
    f"webapp.tools.{path.stem}"
    for path in (ROOT / "webapp" / "tools").glob("*.py")
    if path.stem != "__init__"
}
BUILT_IN_TOOLS = {"http.request", "email.send", "send_message", "vars.set", "noop", "fail"}


def test_every_built_in_tool_module_is_listed_in_the_entry_point_group() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = project["project"]["entry-points"][TOOL_ENTRY_POINTS]
    assert set(listed.values()) >= BUILT_IN_MODULES


def test_the_installed_entry_point_group_loads_the_built_in_tools() -> None:
    """Fails until the package is installed again (`pip install -e .`) after the group changed."""
    installed = {entry.value for entry in entry_points(group=TOOL_ENTRY_POINTS)}
    assert installed >= BUILT_IN_MODULES
    load_tools()
    assert set(tools.specs()) >= BUILT_IN_TOOLS
