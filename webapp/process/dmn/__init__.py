"""Flowdesk's DMN library: read, check, evaluate and write decision models (pure, no Flask or DB).

The document format and every translation and semantic choice are described in docs/decisions.md.
"""

from __future__ import annotations

from .checks import check
from .evaluation import evaluate, evaluate_table
from .model import (
    DecisionError,
    DmnImport,
    DmnImportError,
    DmnProblem,
    Evaluation,
    decision_ids,
    input_columns,
    result_name,
)
from .reader import read_dmn
from .translate import translate_document
from .writer import write_dmn

__all__ = [
    "DecisionError",
    "DmnImport",
    "DmnImportError",
    "DmnProblem",
    "Evaluation",
    "check",
    "decision_ids",
    "evaluate",
    "evaluate_table",
    "input_columns",
    "read_dmn",
    "result_name",
    "translate_document",
    "write_dmn",
]
