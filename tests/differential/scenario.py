"""What one differential run feeds both engines, and what it compares: the types and the driver
policy shared by the Flowdesk and the SpiffWorkflow side."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# A run that needs more user actions, timer firings and messages than this never settles.
MAX_ACTIONS = 60


@dataclass(frozen=True)
class Cond:
    """One flow condition as each engine reads it; None keeps what the file (Spiff) or the
    importer's translation (Flowdesk) says."""

    flowdesk: str | None = None
    python: str | None = None


@dataclass(frozen=True)
class Timer:
    """A timer whose expression needs data: Flowdesk's config (`date` or `duration`) and the
    Python expression Spiff evaluates (None keeps the file's)."""

    flowdesk: dict[str, str]
    python: str | None = None


@dataclass(frozen=True)
class Script:
    """A script task's script as each engine runs it: Flowdesk's assignments (one
    `name = expression` a line) and the Python Spiff executes; both write the same names."""

    flowdesk: str
    python: str


@dataclass(frozen=True)
class Scenario:
    """Inputs of one file: the start data, the answers of user tasks and the results of service
    (and untranslated script) tasks by node id, each a dict for every visit or a list with one
    per visit."""

    process: str | None = None
    # Other files (named as in the table) holding the processes call activities start; both
    # engines load them with the file, Flowdesk publishes each first.
    called: tuple[str, ...] = ()
    # DMN files of files/ holding the decisions business rule tasks evaluate: Flowdesk imports
    # and publishes each first, Spiff's parser reads them with the file.
    decisions: tuple[str, ...] = ()
    input: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, dict[str, Any] | list[dict[str, Any]]] = field(default_factory=dict)
    results: dict[str, dict[str, Any] | list[dict[str, Any]]] = field(default_factory=dict)
    conditions: dict[str, Cond] = field(default_factory=dict)
    timers: dict[str, Timer] = field(default_factory=dict)
    # Script tasks run for real in both engines, translated per engine (the file's script, in
    # its own language, is replaced); a script task without an entry returns `results`.
    scripts: dict[str, Script] = field(default_factory=dict)
    # Config a modeller adds in Flowdesk after importing (e.g. the name of an unnamed message);
    # a dict value is merged into the imported one (e.g. one setting of `multiInstance`).
    bind: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Messages sent, in order, once nothing else can move: (name, payload).
    messages: tuple[tuple[str, dict[str, Any]], ...] = ()
    # Tasks not in `answers` are answered with {} unless this is False (they then stay open).
    answer_all: bool = True
    # Fire waiting timers before completing tasks (a boundary timer beats its task).
    timers_first: bool = False
    # At most this many timer firings (non-interrupting cycles would go on for ever).
    timer_limit: int = 10
    # A known, justified refusal by Flowdesk's publish (validation code); the run is skipped.
    refused: str | None = None
    # What both engines must end in, when the file's point is a particular end state.
    expect: tuple[str, tuple[str, ...]] | None = None
    # Where Spiff departs from the BPMN spec (say why in `note`): its end state instead of
    # `expect`; the completed nodes must still agree.
    spiff_expect: tuple[str, tuple[str, ...]] | None = None
    # Spiff fails with an error containing this text where the spec has an outcome (a Spiff
    # bug, say which in `note`): Flowdesk is checked against `expect` alone.
    spiff_error: str | None = None
    # Spiff cannot load the file, refusing it with an error containing this text: it does not
    # know an element (compensation, in 3.2) or would run it wrong (say which in `note`).
    # Flowdesk is checked against `expect` and `completed` alone.
    flowdesk_only: str | None = None
    # With `spiff_error` or `flowdesk_only`: the nodes the spec completes (with repeats),
    # checked against Flowdesk.
    completed: dict[str, int] = field(default_factory=dict)
    # Nodes Spiff completes beyond what the spec allows (say why in `note`).
    spiff_extra: dict[str, int] = field(default_factory=dict)
    # Nodes the spec completes and Spiff does not (say why in `note`), with repeats.
    spiff_missing: dict[str, int] = field(default_factory=dict)
    # Run the file in Spiff although it has an interrupting event sub-process, which Spiff runs
    # alongside its scope; `spiff_extra` then lists what the interruption ends.
    spiff_alongside: bool = False
    note: str = ""

    def answer(self, node_id: str, visit: int) -> dict[str, Any] | None:
        """The data a user task's `visit`-th (0-based) completion submits; None: leave it open."""
        given = self.answers.get(node_id)
        if given is None:
            return {} if self.answer_all else None
        if isinstance(given, dict):
            return given
        return given[visit] if visit < len(given) else None

    def result(self, node_id: str, visit: int) -> dict[str, Any]:
        """A service task's stub result for its `visit`-th call; the last one repeats."""
        given = self.results.get(node_id, {})
        if isinstance(given, dict):
            return given
        return given[min(visit, len(given) - 1)] if given else {}


@dataclass
class Visits:
    """How often each node was answered or called so far in one run."""

    counts: Counter[str] = field(default_factory=Counter)

    def next(self, node_id: str) -> int:
        visit = self.counts[node_id]
        self.counts[node_id] += 1
        return visit


@dataclass(frozen=True)
class Outcome:
    """What a run ended with: completed node ids (with repeats), and the end state, "completed",
    "waiting" (at the nodes where tokens rest) or "failed" (at the failing node)."""

    completed: Counter[str]
    state: str
    at: tuple[str, ...] = ()
    detail: str = ""

    def key(self) -> tuple[dict[str, int], str, tuple[str, ...]]:
        return dict(sorted(self.completed.items())), self.state, self.at


def difference(flowdesk: Outcome, spiff: Outcome) -> str:
    """A readable account of where two outcomes differ ("" when they agree)."""
    lines = []
    if flowdesk.completed != spiff.completed:
        only_f = flowdesk.completed - spiff.completed
        only_s = spiff.completed - flowdesk.completed
        lines.append(f"completed only by Flowdesk: {dict(sorted(only_f.items()))}")
        lines.append(f"completed only by Spiff: {dict(sorted(only_s.items()))}")
    if (flowdesk.state, flowdesk.at) != (spiff.state, spiff.at):
        lines.append(f"end state: Flowdesk {flowdesk.state} {list(flowdesk.at)} {flowdesk.detail}")
        lines.append(f"end state: Spiff {spiff.state} {list(spiff.at)} {spiff.detail}")
    return "\n".join(lines)
