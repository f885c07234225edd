"""The front-end files built from npm into static/vendor/, and telling people when they are missing.

Without them htmx, the designer and every diagram silently stop working, so a missing file is
logged at start-up and shown on every page until an administrator builds them.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from flask import Flask

log = logging.getLogger(__name__)

BUILD_COMMAND = "npm ci && python scripts/vendor.py"

# npm package -> files copied from it (paths inside the package); served under vendor/<package>/
# with a leading dist/ removed.
VENDOR_FILES: dict[str, list[str]] = {
    "htmx.org": ["dist/htmx.min.js", "LICENSE"],
    "bpmn-js": [
        "dist/bpmn-modeler.production.min.js",
        "dist/bpmn-navigated-viewer.production.min.js",
        "dist/assets/diagram-js.css",
        "dist/assets/bpmn-js.css",
        "dist/assets/bpmn-font/css/bpmn-embedded.css",
        "LICENSE",
    ],
    "swagger-ui-dist": ["swagger-ui-bundle.js", "swagger-ui.css", "LICENSE"],
}

# Copied as well when npm installed them, but no page needs them, so their absence is no notice:
# the accessibility audit the browser tests run on every page.
TEST_VENDOR_FILES: dict[str, list[str]] = {"axe-core": ["axe.min.js", "LICENSE"]}


def served_path(package: str, name: str) -> str:
    """Where a vendored file is served from, relative to the static folder."""
    return f"vendor/{package}/{name.removeprefix('dist/')}"


def missing_vendor_files(static_folder: str | Path) -> list[str]:
    """The vendored files (relative to the static folder) that are not there."""
    root = Path(static_folder)
    return [
        path
        for package, names in VENDOR_FILES.items()
        for path in (served_path(package, name) for name in names)
        if not (root / path).is_file()
    ]


class AssetCheck:
    """Re-checks at most every few seconds, so building the files clears the notice untouched."""

    def __init__(self, app: Flask, every: float = 5.0) -> None:
        self.app = app
        self.every = every
        self.checked = -every
        self.missing: list[str] = []

    def __call__(self) -> list[str]:
        if time.monotonic() - self.checked >= self.every:
            self.missing = missing_vendor_files(str(self.app.static_folder))
            self.checked = time.monotonic()
        return self.missing

    def report(self) -> list[str]:
        """Check now and log an error naming the missing files and the command that builds them."""
        self.checked = -self.every
        missing = self()
        if missing:
            log.error(
                "front-end files missing from %s/: %s. Pages will not work until you run: %s",
                self.app.static_folder,
                ", ".join(missing),
                BUILD_COMMAND,
            )
        return missing


def register(app: Flask) -> None:
    """Log missing files once at start-up and offer `missing_assets` to every template."""
    check = AssetCheck(app)
    app.extensions["flowdesk.assets"] = check
    check.report()

    @app.context_processor
    def inject_missing_assets() -> dict[str, object]:
        return {"missing_assets": check(), "assets_build_command": BUILD_COMMAND}
