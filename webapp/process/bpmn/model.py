"""Result and error types of BPMN import."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webapp.process.validation import Problem


class BpmnImportError(ValueError):
    """The file cannot be read at all: too large, malformed, unsafe (DTD/entities) or not BPMN."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class UnsupportedElement:
    """A BPMN element that was not imported, or imported without part of its meaning."""

    id: str
    type: str
    line: int | None
    detail: str = ""


@dataclass
class ImportResult:
    """The imported document, what it approximated (`Problem`s of severity "warning", codes
    `import.*`) and what it left out."""

    document: dict[str, Any]
    warnings: list[Problem] = field(default_factory=list)
    unsupported: list[UnsupportedElement] = field(default_factory=list)
