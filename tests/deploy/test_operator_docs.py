"""What the deployment and upgrade guides tell an operator to type or look for, checked against
what exists: commands that are on the path, log lines the code writes, the units agreeing, pins
that satisfy the package's requirements."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import rq
from packaging.requirements import Requirement

from tests.helpers.docs import doc_blocks

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = (ROOT / "docs" / "deploy.md").read_text()
UPGRADES = (ROOT / "docs" / "upgrades.md").read_text()
README = (ROOT / "README.md").read_text()


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = re.search(r"\n## ", text[start + len(heading) :])
    return text[start : start + len(heading) + following.start()] if following else text[start:]


def test_every_flask_command_is_the_virtual_environment_s():
    for name, text in (("deploy.md", DEPLOY), ("upgrades.md", UPGRADES), ("README", README)):
        bare = re.findall(r"(?<!\.venv/bin/)\bflask --app[^\n`]*", text)
        assert not bare, f"{name}: a bare `flask` is not on the service user's path: {bare}"


def test_checking_for_migrations_leaves_the_running_checkout_alone():
    upgrading = _section(UPGRADES, "## Upgrading")
    before_stopping = upgrading[: upgrading.index("2. Stop every web process")]
    for changes_files in ("git checkout", "git pull", "git switch", "git reset", "make "):
        assert changes_files not in before_stopping, changes_files
    assert "git diff" in before_stopping and "migrations/versions" in before_stopping
    steps = upgrading[upgrading.index("2. Stop every web process") :]
    assert steps.index("git checkout") < steps.index("db upgrade")


def test_the_restore_creates_its_database_with_a_role_that_may():
    restoring = _section(UPGRADES, "## Restoring")
    assert "sudo -u postgres createdb --owner flowdesk" in restoring
    assert "umask 077" in _section(UPGRADES, "## What to back up")


def test_the_upgrade_guide_says_what_0008_does_to_sign_ins_and_rows():
    assert "before migration 0008 signs everyone out" in UPGRADES
    assert "Coming migrations" not in UPGRADES
    assert "which 0008 empties on purpose" in UPGRADES


def test_the_settings_file_is_the_service_user_s_and_changes_need_a_restart():
    settings = _section(DEPLOY, "## 3. Settings")
    assert "sudo chown flowdesk:flowdesk /etc/flowdesk/flowdesk.env" in settings
    assert "sudo chmod 600 /etc/flowdesk/flowdesk.env" in settings
    assert "systemctl restart" in settings and "Rotating `SECRET_KEY`" in settings
    assert "as the service user" in _section(DEPLOY, "## 4. Create the tables")


def test_the_two_units_agree_and_wait_for_the_network():
    blocks = doc_blocks(DEPLOY)
    web, worker = blocks["web-unit"], blocks["worker-unit"]
    for unit in (web, worker):
        assert "Wants=network-online.target" in unit
        assert "After=network-online.target" in unit

    def kill_settings(unit: str) -> list[str]:
        return [line for line in unit.splitlines() if line.startswith(("KillMode=", "KillSig"))]

    assert kill_settings(web) == kill_settings(worker) == ["KillSignal=SIGTERM", "KillMode=mixed"]
    assert "KillMode=mixed" in UPGRADES and "default `KillMode=control-group`" not in UPGRADES


def test_every_line_the_guide_says_to_watch_is_one_the_code_writes():
    sources = "".join(
        path.read_text()
        for folder in (ROOT / "webapp", Path(rq.__file__).parent)
        for path in folder.rglob("*.py")
    )
    table = _section(DEPLOY, "### Lines to watch")
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) >= 10
    for row in rows:
        phrase, _level, _means, ends = (cell.strip() for cell in row.strip("|").split("|"))
        for quoted in re.findall(r"`([^`]+)`", phrase + ends):
            assert quoted in sources, f"no code logs {quoted!r}"
    assert "lost Redis while" in README and "docs/deploy.md#lines-to-watch" in README


def test_the_constraints_pin_every_runtime_requirement_and_the_install_uses_them():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    for dependency in project["dependencies"]:
        requirement = Requirement(dependency)
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        assert name in pins, f"{name} is not pinned in constraints.txt"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]} is outside"
    assert "psycopg-binary" in pins  # an extra's packages are pinned too
    assert "pip install --quiet -c constraints.txt -e ." in (ROOT / "Makefile").read_text()
    assert "pip install -c constraints.txt" in DEPLOY
    assert "pinned dependencies" not in DEPLOY
