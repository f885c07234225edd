"""Write constraints.txt: the exact version of every runtime dependency (and theirs) installed in
this virtual environment, for `pip install -c constraints.txt` on production machines.

Run after upgrading and testing a dependency: `.venv/bin/python scripts/constraints.py`.
Test-only packages (the `test` extra) are left out.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
BUILD_TOOLS = {"setuptools", "pip", "wheel"}
HEADER = (
    "# Exact versions of Flowdesk's runtime dependencies, as tested: production installs use\n"
    "# `pip install -c constraints.txt -e .` (make setup does). Regenerate with\n"
    "# `.venv/bin/python scripts/constraints.py` after upgrading and testing a dependency.\n"
)


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _needed(line: str, extras: set[str]) -> Requirement | None:
    """The requirement `line` of a package installed with `extras`, if it applies here."""
    requirement = Requirement(line)
    marker = requirement.marker
    if marker and not any(marker.evaluate({"extra": extra}) for extra in {"", *extras}):
        return None
    return requirement


def runtime_closure(root: str = "flowdesk") -> dict[str, str]:
    """Installed name -> version for every package `root` needs at run time, transitively
    (build tools such as setuptools left out: pip brings its own to build)."""
    found: dict[str, str] = {}
    pending = [r for line in metadata.requires(root) or [] if (r := _needed(line, set()))]
    while pending:
        requirement = pending.pop()
        key = _key(requirement.name)
        if key in found or key in BUILD_TOOLS:
            continue
        try:
            distribution = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            continue  # a dependency for another platform
        found[key] = distribution.version
        for line in distribution.requires or []:
            needed = _needed(line, set(requirement.extras))
            if needed is not None:
                pending.append(needed)
    return found


def main() -> int:
    pins = runtime_closure()
    lines = "".join(f"{name}=={version}\n" for name, version in sorted(pins.items()))
    (ROOT / "constraints.txt").write_text(HEADER + lines)
    print(f"wrote {len(pins)} pins to constraints.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
