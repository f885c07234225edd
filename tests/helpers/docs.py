"""Reading the guides: the fenced blocks that tests run."""

from __future__ import annotations

import re


def doc_blocks(text: str) -> dict[str, str]:
    """The fenced block after each `<!-- test: NAME -->` marker, by name."""
    found = re.findall(r"<!-- test: ([\w-]+) -->\n```\w*\n(.*?)\n```", text, re.S)
    return dict(found)
