"""Post/Redirect/Get for a form post that failed: the errors and what the person typed are kept
in the session and the browser is sent to the page's own GET URL, so a reload shows the same
errors instead of re-posting (or a 405), and going back or away leaves a clean page.

The URL carries `?failed=<token>` for the one failure kept (a session holds one at a time, small
enough for its cookie); the page shows that failure while the token matches.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit, urlunsplit

from flask import redirect, request, session
from werkzeug.wrappers import Response

SLOT = "_failed_form"
ARG = "failed"
MAX_KEPT = 2000  # characters of typed values kept across the redirect (the cookie holds ~4 kB)
TOO_LONG = "What you typed here was too long to keep; enter it again."

Value = str | list[str]


@dataclass
class FailedForm:
    """One failed post: which form, its field messages and the values typed into it."""

    form: str
    errors: dict[str, str] = field(default_factory=dict)
    values: dict[str, Value] = field(default_factory=dict)

    def value(self, name: str, default: str = "") -> str:
        kept = self.values.get(name, default)
        return kept if isinstance(kept, str) else default

    def value_map(self) -> dict[str, str]:
        """The single-valued fields, for templates that read `values.get(name)`."""
        return {name: value for name, value in self.values.items() if isinstance(value, str)}

    def values_of(self, name: str) -> list[str]:
        kept = self.values.get(name, [])
        return [kept] if isinstance(kept, str) else list(kept)


def _keep(values: Mapping[str, Value], errors: dict[str, str]) -> dict[str, Value]:
    """The typed values within the size budget; a value beyond it gets a message instead."""
    kept: dict[str, Value] = {}
    budget = MAX_KEPT
    for name, value in values.items():
        size = len(value) if isinstance(value, str) else sum(len(v) + 1 for v in value)
        if size > budget:
            errors[name] = f"{errors[name]} {TOO_LONG}" if errors.get(name) else TOO_LONG
            continue
        budget -= size
        kept[name] = value
    return kept


def redirect_failed(
    url: str,
    form: str,
    errors: Mapping[str, str],
    values: Mapping[str, Value] | None = None,
) -> Response:
    """Keep the failure for `url` (a GET page) and answer 303 to it with the token added."""
    token = secrets.token_urlsafe(6)
    errors = dict(errors)
    kept = _keep(values or {}, errors)
    parts = urlsplit(url)
    path = parts.path
    session[SLOT] = {"token": token, "path": path, "form": form, "errors": errors, "values": kept}
    query = "&".join(q for q in (parts.query, urlencode({ARG: token})) if q)
    return redirect(urlunsplit(("", "", path, query, "")), 303)


def failed_form(form: str | None = None) -> FailedForm | None:
    """The failure kept for this page (and `form`, when given) if the URL carries its token."""
    token = request.args.get(ARG)
    state = session.get(SLOT)
    if not token or not isinstance(state, dict) or state.get("token") != token:
        return None
    if state.get("path") != request.script_root + request.path or (
        form is not None and state.get("form") != form
    ):
        return None
    return FailedForm(state["form"], dict(state["errors"]), dict(state["values"]))
