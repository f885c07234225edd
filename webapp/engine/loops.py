"""Standard loops (BPMN 2.0.2 §13.3.7, `standardLoopCharacteristics`): an activity runs again
while its loop condition holds, tested before each run (`testBefore`) or after it, at most
`maximum` times. The token keeps the runs completed in `locals["loop"]`; expressions in and
around the activity read it as `$loop.index`."""

from __future__ import annotations

from typing import Any

from webapp.engine.runtime import Looper, Step
from webapp.engine.store import TokenRow
from webapp.models.statuses import HistoryKind
from webapp.process.expressions import ExpressionError, evaluate


def _runs(token: TokenRow) -> int:
    return int((token.locals or {}).get("loop") or 0)


def _again(step: Step, token: TokenRow, settings: dict[str, Any]) -> bool | None:
    """Whether the activity runs once more after `_runs(token)` runs; None (the token failed)
    when the condition cannot be evaluated."""
    maximum = settings.get("maximum")
    if isinstance(maximum, int) and _runs(token) >= maximum:
        return False
    condition = settings.get("condition")
    if not isinstance(condition, str) or not condition.strip():
        return True
    try:
        return bool(evaluate(condition, step.context(token)))
    except ExpressionError as error:
        where = step.definition.mentioned(token.node_id)
        step.fail(token, "expression", f"The loop condition of {where} failed: {error}")
        return None


def _end(step: Step, token: TokenRow) -> None:
    """The loop is over: the token forgets its count and moves on as after one run."""
    step.history.add(HistoryKind.LOOP, token, runs=_runs(token), done=True)
    token.locals = {k: v for k, v in (token.locals or {}).items() if k != "loop"} or None


class StandardLoop(Looper):
    """Runs a looped activity again and again; see the module's docstring."""

    def begins(self, step: Step, token: TokenRow) -> bool:
        settings = step.definition.standard_loop(token.node_id) or {}
        token.locals = {**(token.locals or {}), "loop": 0}
        if not settings.get("testBefore"):
            return True
        again = _again(step, token, settings)
        if again:
            return True
        if again is False:
            _end(step, token)
            step.leave_single(token)
        return False

    def repeats(self, step: Step, token: TokenRow) -> bool:
        settings = step.definition.standard_loop(token.node_id) or {}
        token.locals = {**(token.locals or {}), "loop": _runs(token) + 1}
        again = _again(step, token, settings)
        if again is None:
            return True
        if not again:
            _end(step, token)
            return False
        step.history.add(HistoryKind.LOOP, token, runs=_runs(token))
        step.enter(token, token.node_id, token.arrived_via)
        return True

    def loop_values(self, step: Step, token: TokenRow) -> dict[str, Any]:
        runs = _runs(token)
        return {"$loop": {"index": runs, "completed": runs, "active": 1, "count": None}}


BEHAVIOURS = {"standardLoop": StandardLoop()}
