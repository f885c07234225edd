"""What each API view promises, declared beside it: `@documented(...)` records the operation's
summary, parameters, body, responses and errors; `webapp.api.openapi` builds the document from
these records and the app's URL rules, so the contract cannot drift from the code."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

View = TypeVar("View", bound=Callable[..., Any])

# Errors every authenticated operation may answer with, besides its own.
COMMON_ERRORS = (400, 401, 429, 503)
# And those of an operation that reads a JSON body.
BODY_ERRORS = (413, 415)


@dataclass(frozen=True)
class Param:
    """A query-string or header parameter: its name, JSON Schema and meaning."""

    name: str
    schema: Mapping[str, Any]
    description: str
    where: str = "query"
    required: bool = False


@dataclass(frozen=True)
class Reply:
    """One success response: its meaning, body schema and headers (name -> description)."""

    description: str
    schema: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    media_type: str = "application/json"


@dataclass(frozen=True)
class Operation:
    """An operation as the document shows it; `errors` are statuses answered with an Error."""

    summary: str
    description: str
    responses: Mapping[int, Reply]
    body: Mapping[str, Any] | None = None
    body_required: bool = True
    params: tuple[Param, ...] = ()
    errors: tuple[int, ...] = ()
    public: bool = False
    tag: str = "instances"


def documented(
    summary: str,
    *,
    responses: Mapping[int, Reply],
    description: str = "",
    body: Mapping[str, Any] | None = None,
    body_required: bool = True,
    params: tuple[Param, ...] = (),
    errors: tuple[int, ...] = (),
    public: bool = False,
    tag: str = "instances",
) -> Callable[[View], View]:
    """Attach the operation's contract to the view (put it under the route decorator)."""

    def attach(view: View) -> View:
        view.contract = Operation(  # type: ignore[attr-defined]
            summary=summary,
            description=description,
            responses=responses,
            body=body,
            body_required=body_required,
            params=params,
            errors=errors,
            public=public,
            tag=tag,
        )
        return view

    return attach


def contract_of(view: Callable[..., Any] | None) -> Operation | None:
    """The operation declared for a view, or None for a view without one."""
    return getattr(view, "contract", None)


def is_public(view: Callable[..., Any] | None) -> bool:
    """Whether the view answers without credentials (the contract and its docs page)."""
    operation = contract_of(view)
    return operation is not None and operation.public
