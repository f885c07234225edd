"""Script, send and manual tasks, message throws and ends, link events and milestones.

A send task, a message throw and a message end call their tool exactly as a service task does
(`call_tool`: a job, retries, the idempotency key, business errors); a receive task waits as a
message catch does (`events.CatchEvent`). A message end's token ends when its tool has finished.
"""

from __future__ import annotations

from typing import Any

from webapp.engine import tools
from webapp.engine.context import jsonable, storable_text
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow as Token
from webapp.models.statuses import HistoryKind
from webapp.process import scripts
from webapp.process.kinds import EMPTY_SCRIPT, SCRIPT_LANGUAGES, TOOL_DEFAULTS


def call_tool(step: Step, token: Token, config: dict[str, Any]) -> None:
    """Evaluate the tool's inputs now; a job runs the tool (and its retries) with them. Service
    and send tasks, message throws and message ends all call their tool here."""
    config = {**TOOL_DEFAULTS, **config}
    name = config.get("tool") or ""
    if tools.get(name) is None:
        step.fail(
            token,
            "unknown_tool",
            f"The tool '{name}' of {step.definition.mentioned(token.node_id)} is not installed.",
        )
        return
    inputs = step.evaluate_inputs(token, config.get("inputs") or {})
    if inputs is None:
        return
    step.add_job(
        token,
        "tool",
        step.now,
        tool=name,
        inputs=jsonable(inputs),
        max_attempts=max(0, int(config.get("retries") or 0)) + 1,
        backoff=float(config.get("backoff") or 2.0),
        timeout=float(config.get("timeout") or 30),
    )


def message_end(step: Step, token: Token, node: dict[str, Any]) -> None:
    """A message end event: its tool runs first; the token ends when the tool has finished
    (`Step.complete` ends a token at an end event), so the scope waits for it."""
    call_tool(step, token, node.get("config") or {})


def _script(step: Step, token: Token, node: dict[str, Any]) -> None:
    """Run the script's assignments in this step: each writes `$vars.<name>`; the assigned
    values together are the task's output (`$nodes.<id>`)."""
    config = node.get("config") or {}
    language = config.get("language") or "flowdesk"
    if language not in SCRIPT_LANGUAGES:
        shown = storable_text(str(language))[:60]
        message = (
            f"The script of {step.definition.mentioned(token.node_id)} is written in '{shown}', "
            "which Flowdesk does "
            f"not run (it runs {', '.join(SCRIPT_LANGUAGES)} scripts)."
        )
        step.fail(token, "unsupported_script", message)
        return
    if config.get(EMPTY_SCRIPT) and not config.get("script"):
        step.complete(token, {})  # an empty script imported from another tool: a no-op
        return
    try:
        values = scripts.evaluate(config.get("script") or "", step.context(token), now=step.now)
    except scripts.ScriptError as error:
        line = f" at line {error.line}" if error.line is not None else ""
        at = step.definition.mentioned(token.node_id)
        message = f"The script of {at} failed{line}: {error.message}"
        step.fail(token, "script", storable_text(message), line=error.line)
        return
    values = jsonable(values)
    step.assign(values)
    step.complete(token, values)


def _manual(step: Step, token: Token, node: dict[str, Any]) -> None:
    """A manual task is done outside Flowdesk: it is recorded and passes through (a person who
    must confirm it is a user task)."""
    step.history.add(HistoryKind.MANUAL, token, title=node.get("title") or None)
    step.complete(token)


def _milestone(step: Step, token: Token, node: dict[str, Any]) -> None:
    step.history.add(HistoryKind.MILESTONE, token, title=node.get("title") or token.node_id)
    step.leave_single(token)


def _link_throw(step: Step, token: Token, node: dict[str, Any]) -> None:
    """Jump to the link catch event of the same name in the same scope; history has the token
    leave the throw for the catch (`left` naming the link), as it leaves other nodes."""
    name = str((node.get("config") or {}).get("link") or "")
    scope = step.scope_of(token)
    target = step.definition.links.get((scope, name))
    if target is None:
        where = f" in {step.definition.mentioned(scope)}" if scope else ""
        message = f"No link catch event named '{name}'{where} for the link throw to jump to."
        step.fail(token, "no_link", message)
        return
    step.history.add(HistoryKind.LEFT, token, link=name, to=target)
    step.enter(token, target, None)


class ToolTask(Behaviour):
    """A service or send task or a message throw: a job calls its tool, then the token moves on."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        call_tool(step, token, node.get("config") or {})


class ScriptTask(Behaviour):
    """A script task runs its assignments in the step and moves on."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        _script(step, token, node)


class ManualTask(Behaviour):
    """A manual task is recorded and passes through."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        _manual(step, token, node)


class Milestone(Behaviour):
    """A milestone is recorded and passes through."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        _milestone(step, token, node)


class LinkThrow(Behaviour):
    """A link throw jumps to the link catch of its name."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        _link_throw(step, token, node)


class LinkCatch(Behaviour):
    """A link catch moves on."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        step.leave_single(token)


BEHAVIOURS: dict[str, Behaviour] = {
    "serviceTask": ToolTask(),
    "sendTask": ToolTask(),
    "messageThrow": ToolTask(),
    "scriptTask": ScriptTask(),
    "manualTask": ManualTask(),
    "milestone": Milestone(),
    "linkThrow": LinkThrow(),
    "linkCatch": LinkCatch(),
}
