"""The built-in tools install like any tool package: through the `flowdesk.tools` entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.helpers.workers import worker_env
from webapp import plugins
from webapp.config import ConfigError
from webapp.engine import tools
from webapp.plugins import TOOL_ENTRY_POINTS, load_tools

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


def _dist(folder: Path, name: str, entries: str) -> None:
    """A distribution as an installed package leaves it: its metadata and entry points."""
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{TOOL_ENTRY_POINTS}]\n{entries}")


def test_tools_from_an_installed_package_and_from_extra_modules_are_there_after_start(
    app, app_config, tmp_path
) -> None:
    """A tool package's entry point and FLOWDESK_EXTRA_TOOL_MODULES are imported by create_app;
    one module that fails to import (or takes a built-in tool's name) is logged and the others
    still load."""
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    (first / "acme_tools.py").write_text(
        "from webapp.engine.tools import tool\n"
        "tool('acme.ping', description='Answers.')(lambda inputs, call: {'pong': True})\n"
    )
    (first / "local_tools.py").write_text(
        "from webapp.engine.tools import tool\n"
        "tool('local.ping', description='Answers.')(lambda inputs, call: {'pong': True})\n"
    )
    (first / "acme_clash.py").write_text(
        "from webapp.engine.tools import tool\n"
        "tool('noop', description='Not the built-in one.')(lambda inputs, call: {})\n"
    )
    _dist(first, "acme_tools", "acme = acme_tools\nclash = acme_clash\nbroken = acme_missing\n")
    # The built-in tools' entry point, found after the package's (as site-packages is).
    _dist(later, "flowdesk_builtins", "builtin = webapp.tools.builtin\n")
    env = worker_env(app_config, FLOWDESK_EXTRA_TOOL_MODULES="local_tools, missing_local")
    env["PYTHONPATH"] = os.pathsep.join([str(first), str(later), str(ROOT)])
    started = subprocess.run(
        [sys.executable, "-c", START_AND_LIST_TOOLS],
        cwd=first,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    registered = json.loads(started.stdout.splitlines()[-1])
    assert {"acme.ping", "local.ping"} <= set(registered)
    assert registered["noop"] == "Does nothing and returns its inputs; for demos and tests."
    assert "could not load tool entry point clash" in started.stderr
    assert "could not load tool entry point broken" in started.stderr
    assert "could not import tool module missing_local" in started.stderr


START_AND_LIST_TOOLS = """
import json
from webapp import create_app
from webapp.engine import tools
create_app()
print(json.dumps({name: spec.description for name, spec in tools.specs().items()}))
"""


def test_a_checkout_whose_built_in_tools_are_not_installed_refuses_to_start(monkeypatch) -> None:
    """Metadata older than the checkout (no `make setup` after an upgrade) would leave every
    service task failing with an unknown tool; start-up says what to run instead."""
    monkeypatch.setattr(plugins, "_tools_loaded", False)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [])
    with pytest.raises(ConfigError, match="make setup"):
        plugins.load_tools()
