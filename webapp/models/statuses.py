"""The statuses of instances, tokens, jobs, tasks, signal broadcasts and bulk operations, and the
kinds of history entries.

Each member equals the text stored in the database, so templates, JSON and queries that compare
with plain strings keep working.
"""

from enum import StrEnum


class InstanceStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class TokenStatus(StrEnum):
    ACTIVE = "active"
    WAITING = "waiting"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class JobStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class TaskStatus(StrEnum):
    OPEN = "open"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


class CallOutcome(StrEnum):
    """How a called child ended, as its resume job tells the call activity (and its history)."""

    COMPLETED = "completed"
    CANCELLED = "cancelled"
    ERROR = "error"
    ESCALATION = "escalation"
    # No version of the called process could start.
    MISSING = "missing"


class AttemptStatus(StrEnum):
    """How one tool attempt ended, in its `tool_attempt` history entry."""

    OK = "ok"
    ERROR = "error"
    # A late result of an attempt whose job was already settled.
    DISCARDED = "discarded"


class BroadcastStatus(StrEnum):
    """A signal broadcast: waiting for a worker to plan it, its batches delivering, or all done."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"


class BatchStatus(StrEnum):
    """One batch of a signal broadcast: still to deliver, or delivered."""

    PENDING = "pending"
    DONE = "done"


class BulkStatus(StrEnum):
    """A bulk cancel or retry: queued for a worker, being worked, or finished."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class BulkItemStatus(StrEnum):
    """One instance of a bulk operation: not yet reached, or what happened to it."""

    PENDING = "pending"
    OK = "ok"
    ERROR = "error"


class HeldKind(StrEnum):
    """What reached a suspended instance and waits in `held_events` until it is resumed."""

    MESSAGE = "message"
    SIGNAL = "signal"
    TOOL_OUTCOME = "tool_outcome"


class HistoryKind(StrEnum):
    STARTED = "started"
    ENTERED = "entered"
    LEFT = "left"
    TOOL_ATTEMPT = "tool_attempt"
    TIMER = "timer"
    MESSAGE = "message"
    TASK_CREATED = "task_created"
    TASK_CLAIMED = "task_claimed"
    TASK_COMPLETED = "task_completed"
    ERROR = "error"
    RETRIED = "retried"
    CANCELLED = "cancelled"
    COMPLETED = "completed"
    # Task types and events that leave a trace but wait for nothing.
    MANUAL = "manual"
    MILESTONE = "milestone"
    # Events that cross scopes, multi-instance and called children.
    BOUNDARY = "boundary"
    THROWN = "thrown"
    TERMINATED = "terminated"
    MULTI_INSTANCE = "multi_instance"
    INSTANCE_COMPLETED = "instance_completed"
    CHILD_ENDED = "child_ended"
    # The event that won at an event-based gateway.
    EVENT_WON = "event_won"
    # A signal thrown (broadcast after the step), or received from a broadcast.
    SIGNAL_THROWN = "signal_thrown"
    SIGNAL = "signal"
    # Actions outside a step, by a person.
    TASK_REPORTED = "task_reported"
    TASK_RELEASED = "task_released"
    TASK_REASSIGNED = "task_reassigned"
    VARIABLE_SET = "variable_set"
    # An operator moved, cancelled or added tokens (instance modification).
    MODIFIED = "modified"
    # An operator moved the instance to another version of its process.
    MIGRATED = "migrated"
    # An operator suspended or resumed the instance (who, why; on resume, what had waited).
    SUSPENDED = "suspended"
    RESUMED = "resumed"
    # A message or signal kept while suspended that nothing waited for any more on resume (an
    # operator's modification or migration removed its wait).
    HELD_DISCARDED = "held_discarded"
    # A business rule task evaluated its decision (decision, version, matched rules, result).
    DECISION_EVALUATED = "decision_evaluated"
    # A compensation throw or cancel end began undoing completed activities.
    COMPENSATION = "compensation"
    # A conditional event's condition changed from false to true (it fired).
    CONDITION = "condition"
    # A standard loop ran its activity again, or ended (`done`), after `runs` runs.
    LOOP = "loop"
    # A complex gateway took in a late branch after it went on, and reset once all had come.
    GATEWAY_CONSUMED = "gateway_consumed"
    GATEWAY_RESET = "gateway_reset"
    # An ad-hoc sub-process started one of its activities (by whom), and its condition held.
    ADHOC_ACTIVATED = "adhoc_activated"
    ADHOC_COMPLETING = "adhoc_completing"


INSTANCE_STATUSES: tuple[str, ...] = tuple(InstanceStatus)
# Instances that ended for good: retention deletes them, nothing runs them again.
FINISHED_INSTANCE = (InstanceStatus.COMPLETED, InstanceStatus.CANCELLED)
# Instances that may still move: running, or failed and waiting for a retry.
UNFINISHED_INSTANCE = (InstanceStatus.RUNNING, InstanceStatus.FAILED)

# Tokens that still move or wait for something.
LIVE_TOKEN = (TokenStatus.ACTIVE, TokenStatus.WAITING)
# Tokens not yet settled: live ones and those stopped by an incident, which a retry resumes.
OPEN_TOKEN = (*LIVE_TOKEN, TokenStatus.FAILED)
# Tokens standing at their node until something resumes them: waiting, or failed until a retry.
PAUSED_TOKEN = (TokenStatus.WAITING, TokenStatus.FAILED)

# Broadcasts still on their way to the instances they cover.
UNFINISHED_BROADCAST = (BroadcastStatus.PENDING, BroadcastStatus.RUNNING)


class CompensationStatus(StrEnum):
    """A completed activity a compensation throw may undo: still `completed`, or `compensated`
    (its handler started, so a second throw leaves it alone)."""

    COMPLETED = "completed"
    COMPENSATED = "compensated"
