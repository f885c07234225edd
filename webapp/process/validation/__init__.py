"""Check a process document before it can be deployed, one module per concept checked.

``validate`` returns every problem at once, each with a stable ``code`` the UI can key on, the id
of the element to highlight and a message for the modeller. Errors block deployment; warnings
do not. Graph rules run in linear time (see ``graph.py``), so large documents validate quickly.
"""

from webapp.process.validation.base import Site
from webapp.process.validation.data import foreign_dialect
from webapp.process.validation.problems import CODES, Problem, Severity, has_errors
from webapp.process.validation.scopes import RESULTLESS_KINDS
from webapp.process.validation.tasks import CANDIDATE_EXPRESSIONS, TOOL_DOCS
from webapp.process.validation.validator import KIND_CHECKS, expression_problems, validate

__all__ = [
    "CANDIDATE_EXPRESSIONS",
    "CODES",
    "KIND_CHECKS",
    "RESULTLESS_KINDS",
    "TOOL_DOCS",
    "Problem",
    "Severity",
    "Site",
    "expression_problems",
    "foreign_dialect",
    "has_errors",
    "validate",
]
