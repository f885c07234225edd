"""Multi-instance activities: a body token waits at the activity while its instances run.

The collection (or cardinality) is evaluated once when the body starts. Parallel bodies start
their instances in batches of `limits.MULTI_INSTANCE_BATCH`: the first in the body's own step,
each further one in the step of a job on the body (a timer due at once, at the body's node), so
no transaction grows with the collection; sequential bodies start one after another in
collection order. Each instance is a token inside the body with its `index` and `item` as
locals; the body keeps the counters, the items not started yet and the outputs (in collection
order) in its own locals.
"""

from __future__ import annotations

from typing import Any

from webapp.engine import limits, tree
from webapp.engine.context import jsonable
from webapp.engine.runtime import MULTI_INSTANCE, NO_OUTPUT, Behaviour, Step, Wrapper
from webapp.engine.store import TokenRow
from webapp.engine.tree import is_body
from webapp.models.statuses import OPEN_TOKEN, HistoryKind, TokenStatus
from webapp.process.expressions import ExpressionError, evaluate


def begin(step: Step, body: TokenRow) -> None:
    """Evaluate the collection or cardinality and start the first (or every) instance."""
    node_id = body.node_id
    settings = step.definition.multi_instance(node_id) or {}
    context = step.context(body)
    try:
        if settings.get("collection"):
            items = evaluate(settings["collection"], context)
            if not isinstance(items, list):
                raise ValueError(f"the collection is {type(items).__name__}, not a list")
        else:
            count = evaluate(str(settings.get("cardinality") or "0"), context)
            if isinstance(count, float) and count.is_integer():
                count = int(count)
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(f"the cardinality is {count!r}, not a whole number")
            if count > limits.MULTI_INSTANCE:
                raise ValueError(f"{count} instances are over the limit of {limits.MULTI_INSTANCE}")
            items = [None] * count
    except (ExpressionError, ValueError) as error:
        step.fail(
            body,
            "multi_instance",
            f"The multi-instance of {step.definition.mentioned(node_id)} failed: {error}",
        )
        return
    if len(items) > limits.MULTI_INSTANCE:
        message = (
            f"The multi-instance of {step.definition.mentioned(node_id)} failed: {len(items)}"
            f" instances are over the limit of {limits.MULTI_INSTANCE}."
        )
        step.fail(body, "multi_instance", message)
        return
    sequential = bool(settings.get("sequential"))
    first = 1 if sequential else min(len(items), limits.MULTI_INSTANCE_BATCH)
    body.status = TokenStatus.WAITING
    body.locals = {
        "count": len(items),
        "completed": 0,
        "next": first,
        "outputs": [None] * len(items),
        "items": jsonable(items) if first < len(items) else None,
    }
    step.history.add(HistoryKind.MULTI_INSTANCE, body, count=len(items), sequential=sequential)
    if not items:
        _finish(step, body)
        return
    for index in range(first):
        _start(step, body, index, items[index])
    if not sequential and first < len(items):
        step.add_job(body, "timer", step.now, node_id=body.node_id)


def is_fan_out(token: TokenRow, node_id: str) -> bool:
    """Whether a timer job at `node_id` held by `token` starts the next batch of a parallel body
    (a body's own node has no timer of its own)."""
    return token.node_id == node_id and is_body(token.locals)


def fan_out(step: Step, body: TokenRow) -> None:
    """Start the next batch of a parallel body's instances; another job starts the rest."""
    state = dict(body.locals or {})
    count = int(state.get("count") or 0)
    first = int(state.get("next") or 0)
    if body.status != TokenStatus.WAITING or first >= count:
        return
    last = min(count, first + limits.MULTI_INSTANCE_BATCH)
    items = list(state.get("items") or [])
    state["next"] = last
    if last >= count:
        state["items"] = None
    body.locals = state
    for index in range(first, last):
        _start(step, body, index, items[index] if index < len(items) else None)
    if last < count:
        body.step += 1  # a job's key names its token's step: one key per batch
        step.add_job(body, "timer", step.now, node_id=body.node_id)


def _start(step: Step, body: TokenRow, index: int, item: Any) -> None:
    inner = step.new_token(
        body.node_id, body.arrived_via, parent=body, locals={"index": index, "item": jsonable(item)}
    )
    step.enter(inner, body.node_id, body.arrived_via)


def scope_values(step: Step, body: TokenRow, inner: TokenRow) -> dict[str, Any]:
    """`$item`, `$loop` and the element variable as an instance of `body` sees them."""
    active = step.live_children(body)
    element = (step.definition.multi_instance(body.node_id) or {}).get("element")
    return tree.loop_values(inner.locals, body.locals, active, element, step.vars)


def instance_completed(step: Step, body: TokenRow, inner: TokenRow, output: Any) -> None:
    """One instance finished: keep its output, check the completion condition, start the next
    (sequential) or complete the body when none is left."""
    settings = step.definition.multi_instance(body.node_id) or {}
    state = dict(body.locals or {})
    inner.status = TokenStatus.DONE
    state["completed"] = int(state.get("completed") or 0) + 1
    body.locals = state
    value = None if output is NO_OUTPUT else output
    context = step.context(inner)
    context["$nodes"] = {**context["$nodes"], body.node_id: value}
    try:
        if settings.get("output"):
            value = evaluate(settings["output"], context)
        outputs = list(state.get("outputs") or [])
        index = int((inner.locals or {}).get("index") or 0)
        if 0 <= index < len(outputs):
            outputs[index] = jsonable(value)
        state["outputs"] = outputs
        context = step.context(inner)
        done = bool(settings.get("completion")) and bool(evaluate(settings["completion"], context))
    except ExpressionError as error:
        step.fail(
            body,
            "expression",
            f"The multi-instance of {step.definition.mentioned(body.node_id)} failed: {error}",
        )
        return
    body.locals = state
    step.history.add(HistoryKind.INSTANCE_COMPLETED, inner, index=index, early=done or None)
    if done:
        for other in step.children(body):
            if other is not inner and other.status in OPEN_TOKEN:
                step.cancel_tree(other)
        _finish(step, body)
        return
    count = int(state.get("count") or 0)
    if settings.get("sequential") and int(state.get("next") or 0) < count:
        index = int(state["next"])
        state["next"] = index + 1
        items = state.get("items") or []
        _start(step, body, index, items[index] if index < len(items) else None)
        return
    if state["completed"] >= count:
        _finish(step, body)


def _finish(step: Step, body: TokenRow) -> None:
    state = body.locals or {}
    if int(state.get("next") or 0) < int(state.get("count") or 0):
        step.close_waits([body], (body.node_id,))  # the batches not started yet
    outputs = list(state.get("outputs") or [])
    body.locals = {key: value for key, value in state.items() if key not in ("items", "outputs")}
    body.status = TokenStatus.ACTIVE
    step.complete(body, outputs)


class MultiInstance(Wrapper):
    """The body of a multi-instance activity: entered instead of the activity, it runs one
    instance of it per item and completes when they are done (or its condition holds)."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        begin(step, token)

    def instance_completed(self, step: Step, body: TokenRow, inner: TokenRow, output: Any) -> None:
        instance_completed(step, body, inner, output)

    def loop_values(self, step: Step, body: TokenRow, inner: TokenRow) -> dict[str, Any]:
        return scope_values(step, body, inner)


BEHAVIOURS: dict[str, Behaviour] = {MULTI_INSTANCE: MultiInstance()}
