"""Live regions: page parts a poll refreshes one by one, so what a person opened stays as it is.

A page renders its regions (each an element with its own id) and a hidden poller element whose
URL carries a short digest of every region as rendered. The poll answers 204 when nothing changed,
else the changed regions (swapped by id through the poller's `hx-select-oob`) and a new poller:
`every 2s` while the instance can change by itself, `every 30s` while it waits on people, none
once it ended; `every 5s` ("steady") for lists that may always change (the operations overview
and instance list). Nothing around the regions (open `<details>`, typed text, scroll) is touched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from flask import Response, render_template, request, url_for
from markupsafe import Markup

# How often the page polls in each mode of `services.watch.live_mode` (and "steady" for lists);
# "off" does not poll.
INTERVALS = {"fast": "2s", "slow": "30s", "steady": "5s"}


def digest(html: str) -> str:
    return hashlib.sha256(html.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def render_regions(templates: Mapping[str, str], context: Mapping[str, Any]) -> dict[str, Markup]:
    """Each region's template rendered with the same context, by region name."""
    # render_template output is escaped by Jinja's autoescape: safe to place as it is.
    return {name: Markup(render_template(path, **context)) for name, path in templates.items()}  # noqa: S704


def poller(
    element_id: str,
    endpoint: str,
    regions: Mapping[str, Markup],
    mode: str,
    **url_args: Any,
) -> Markup:
    """The hidden element that polls `endpoint` for the regions that changed since this render."""
    seen: dict[str, Any] = {name: digest(html) for name, html in regions.items()}
    url = url_for(endpoint, **url_args, mode=mode, **seen)
    return Markup(  # noqa: S704 - autoescaped template output
        render_template(
            "_live_poller.html",
            element_id=element_id,
            url=url,
            mode=mode,
            interval=INTERVALS.get(mode),
            selectors=",".join(f"#{name}" for name in regions),
        )
    )


def poll_response(
    element_id: str,
    endpoint: str,
    regions: Mapping[str, Markup],
    mode: str,
    **url_args: Any,
) -> Response:
    """204 when the client has every region and the mode as they are now; else the changed
    regions and a fresh poller (region names are their element ids)."""
    changed = [name for name, html in regions.items() if request.args.get(name) != digest(html)]
    if not changed and request.args.get("mode") == mode:
        return Response(status=204)
    body = poller(element_id, endpoint, regions, mode, **url_args) + Markup("").join(
        regions[name] for name in changed
    )
    return Response(str(body), mimetype="text/html")
