"""Reading server-rendered pages: one region, the diagram state, the text without tags."""

from __future__ import annotations

import html
import json
import re


def region(page: str, region: str) -> str:
    start = page.index(f'id="{region}"')
    return page[start : page.index("</div>", start)]


def diagram_state(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="instance-state">(.*?)</script>', page)
    assert match, "the page carries the diagram state"
    return json.loads(match.group(1))


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)))


ROW_ID = re.compile(r'href="/operations/instances/(\d+)"')


def listed_ids(html: str) -> list[int]:
    """Instance ids in the list page's table, in order."""
    return [int(match) for match in ROW_ID.findall(html)]
