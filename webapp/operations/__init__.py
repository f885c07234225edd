"""The operations area: overview, instances, bulk actions, heat, health, retention, schedules.

Every route needs `instances.read`; cancel and retry need `instances.manage`, suspending, moving
tokens and migrating need `instances.modify`, in the object's partition.
"""

from webapp.operations import (  # noqa: F401  (importing the views registers their routes)
    bulk,
    detail,
    formatting,
    health,
    heat,
    instances,
    migration,
    modification,
    overview,
    retention,
    schedules,
    signals,
    suspension,
)
from webapp.operations.blueprint import bp

__all__ = ["bp"]
