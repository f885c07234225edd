"""Front-end files built from npm: a page whose vendored files are missing says so."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from webapp.web.assets import missing_vendor_files

ROOT = Path(__file__).resolve().parents[2]


def test_a_complete_build_has_every_vendored_file():
    assert missing_vendor_files(ROOT / "static") == []


def test_missing_files_are_logged_and_shown_on_every_page(app, client, tmp_path, caplog):
    static = tmp_path / "static"
    shutil.copytree(ROOT / "static", static)
    (static / "vendor" / "htmx.org" / "htmx.min.js").unlink()
    check = app.extensions["flowdesk.assets"]
    kept = app.static_folder
    app.static_folder = str(static)
    try:
        with caplog.at_level(logging.ERROR, logger="webapp.web.assets"):
            assert check.report() == ["vendor/htmx.org/htmx.min.js"]
        assert "npm ci && python scripts/vendor.py" in caplog.text
        page = client.get("/login").get_data(as_text=True)
        assert 'role="alert" id="missing-assets"' in page
        assert "<code>static/vendor/htmx.org/htmx.min.js</code>" in page
        assert "npm ci &amp;&amp; python scripts/vendor.py" in page

        shutil.copy(ROOT / "static/vendor/htmx.org/htmx.min.js", static / "vendor/htmx.org")
        check.report()
        assert "missing-assets" not in client.get("/login").get_data(as_text=True)
    finally:
        app.static_folder = kept
        check.report()
