"""BPMN 2.0 import and export of process documents, plus automatic layout.

`export_bpmn(doc)` writes BPMN XML with diagram interchange that bpmn.io / Camunda Modeler open;
`import_bpmn(data)` reads such files back (ours give an identical document) and best-effort
imports other modelers' files, listing what it could not import.
"""

from __future__ import annotations

from .conditions import Translation, translate
from .layout import auto_layout
from .model import BpmnImportError, ImportResult, UnsupportedElement
from .namespaces import FLOWDESK
from .reader import ProcessChoice, import_bpmn, process_choices
from .writer import BpmnExportError, export_bpmn, with_scenarios

__all__ = [
    "FLOWDESK",
    "BpmnExportError",
    "BpmnImportError",
    "ImportResult",
    "ProcessChoice",
    "Translation",
    "UnsupportedElement",
    "auto_layout",
    "export_bpmn",
    "import_bpmn",
    "process_choices",
    "translate",
    "with_scenarios",
]
