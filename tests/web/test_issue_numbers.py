"""Code, templates and styles name the behaviour they implement, not the issue that asked."""

import re

from webapp.config import ROOT

ISSUE = re.compile(r"\bissue[ _-]?#?\d+", re.IGNORECASE)
SOURCES = {"webapp": "*.py", "templates": "*.html", "static/css": "*.css", "static/js": "*.js"}


def test_no_issue_numbers_in_sources():
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder, pattern in SOURCES.items()
        for path in sorted((ROOT / folder).rglob(pattern))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ISSUE.search(line)
    ]
    assert found == []
