"""Operations services: instance lists and filters, overview numbers, one instance's details and
variable edits, bulk cancel/retry, retention and worker health. Views stay thin over these.

`run_retention(session, now)` (or `retention_tick(app)`, paced by Redis) is the periodic hook
the worker's sweep loop calls.
"""

from webapp.services.operations.bulk import run as run_bulk
from webapp.services.operations.common import OperationsError
from webapp.services.operations.filters import Filters, list_page, read_filters
from webapp.services.operations.retention import retention_tick, run_retention

__all__ = [
    "Filters",
    "OperationsError",
    "list_page",
    "read_filters",
    "retention_tick",
    "run_bulk",
    "run_retention",
]
