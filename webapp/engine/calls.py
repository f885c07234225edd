"""Calling a tool: the registry lookup, the node's timeout, and the outcome the step applies."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from webapp.engine import tools
from webapp.engine.context import storable_text
from webapp.engine.tools import ToolCall, ToolError

log = logging.getLogger(__name__)

MAX_MESSAGE = 1000


class ToolTimeout(Exception):
    """The tool ran past the node's timeout."""


@dataclass(frozen=True)
class Outcome:
    """How one attempt ended: the output, or an error code and message (maybe retryable)."""

    ok: bool
    output: Any = None
    code: str = ""
    message: str = ""
    retryable: bool = True
    duration_ms: int = 0
    bpmn_error: bool = False


@dataclass(frozen=True)
class Call:
    """Everything an attempt needs, read from the job row before the tool runs."""

    job_id: int
    instance_id: int
    node_id: str
    tool: str
    inputs: Mapping[str, Any]
    key: str
    actor: str | None
    timeout: float
    attempt: int


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise ToolTimeout in the block after `seconds` (main thread only; elsewhere no limit)."""
    usable = (
        seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def expire(_signum: int, _frame: Any) -> None:
        raise ToolTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    earlier, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if earlier > 0:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, earlier - (time.monotonic() - started)))


def invoke(call: Call, config: Mapping[str, Any]) -> Outcome:
    """Run the tool once; every failure becomes an Outcome, never an exception."""
    registered = tools.get(call.tool)
    if registered is None:
        message = f"The tool '{call.tool}' is not installed."
        return Outcome(False, code="unknown_tool", message=message, retryable=False)
    tool_call = ToolCall(
        idempotency_key=call.key,
        actor=call.actor,
        timeout=call.timeout,
        instance_id=call.instance_id,
        node_id=call.node_id,
        attempt=call.attempt,
        config=config,
    )
    started = time.perf_counter()
    try:
        with deadline(call.timeout):
            output = registered.function(dict(call.inputs), tool_call)
    except ToolError as error:
        outcome = Outcome(
            False,
            code=error.code,
            message=error.message,
            retryable=error.retryable,
            bpmn_error=error.bpmn_error,
        )
    except ToolTimeout:
        message = f"The tool did not finish within {call.timeout:g} seconds."
        outcome = Outcome(False, code="timeout", message=message)
    except Exception as error:
        log.exception("tool %s failed on job %s", call.tool, call.job_id)
        outcome = Outcome(False, code="tool_error", message=f"{type(error).__name__}: {error}")
    else:
        outcome = Outcome(True, output=output)
    elapsed = int((time.perf_counter() - started) * 1000)
    return Outcome(
        outcome.ok,
        outcome.output,
        storable_text(outcome.code[:64]),
        storable_text(outcome.message[:MAX_MESSAGE]),
        outcome.retryable,
        elapsed,
        outcome.bpmn_error,
    )
