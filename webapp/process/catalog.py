"""What validation may know about other processes: the ones a call activity can start.

Validation is pure, so callers pass a ``ProcessCatalog`` (the service builds one over the
database for the partition of the process being checked) or just the set of callable keys.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class ProcessCatalog(Protocol):
    """The processes a call activity may call, with their published versions."""

    def exists(self, key: str) -> bool:
        """Tell whether a published process ``key`` can be called."""

    def has_version(self, key: str, version: int) -> bool:
        """Tell whether process ``key`` has a published version ``version``."""

    def document(self, key: str, version: int | None) -> Mapping[str, Any] | None:
        """The document of that version (``None``: the latest), or ``None`` when unknown."""


@dataclass(frozen=True)
class KnownProcesses:
    """A catalog held in memory: published documents by key and version number."""

    documents: Mapping[str, Mapping[int, Mapping[str, Any]]] = field(default_factory=dict)

    def exists(self, key: str) -> bool:
        return bool(self.documents.get(key))

    def has_version(self, key: str, version: int) -> bool:
        return version in self.documents.get(key, {})

    def document(self, key: str, version: int | None) -> Mapping[str, Any] | None:
        versions = self.documents.get(key) or {}
        if version is None:
            return versions[max(versions)] if versions else None
        return versions.get(version)


@dataclass(frozen=True)
class KnownKeys:
    """A catalog that knows only which keys can be called (versions and documents unchecked)."""

    keys: Collection[str]

    def exists(self, key: str) -> bool:
        return key in self.keys

    def has_version(self, key: str, version: int) -> bool:
        return key in self.keys

    def document(self, key: str, version: int | None) -> Mapping[str, Any] | None:
        return None


def as_catalog(processes: ProcessCatalog | Collection[str] | None) -> ProcessCatalog | None:
    """Accept a catalog, or a plain collection of callable keys."""
    if processes is None or hasattr(processes, "exists"):
        return processes  # type: ignore[return-value]
    return KnownKeys(frozenset(processes))
