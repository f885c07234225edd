"""Benchmark: validate a realistic 1,000-node process document and print timing statistics.

Run as ``.venv/bin/python benchmarks/validate_1000.py [runs]``. The document chains task
sequences, exclusive and parallel blocks, retry loops and catch events, with expressions reading
``$input``, ``$vars`` and ``$nodes`` as real models do.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webapp.process.tools import ToolInput, ToolSpec
from webapp.process.validation import has_errors, validate

TOOLS = {
    "http.post": ToolSpec("http.post", inputs=(ToolInput("url"), ToolInput("body", False))),
    "mail.send": ToolSpec("mail.send", inputs=(ToolInput("to"), ToolInput("subject"))),
}

FORM = {
    "fields": [
        {"key": "decision", "label": "Decision", "type": "select", "required": True,
         "options": [{"value": "ok", "label": "OK"}, {"value": "no", "label": "No"}]},
        {"key": "amount", "label": "Amount", "type": "number", "min": 0, "max": 100000},
        {"key": "note", "label": "Note", "type": "textarea", "maxLength": 2000,
         "visibleIf": "$input.amount > 1000"},
    ]
}  # fmt: skip


class Builder:
    """Appends nodes and flows in document order, tracking the last node and saved variables."""

    def __init__(self) -> None:
        self.nodes: dict[str, Any] = {}
        self.flows: dict[str, Any] = {}
        self.saved: list[str] = []
        self.last = self.add("start", "startEvent", "Order received")

    def add(self, node_id: str, kind: str, title: str, config: dict | None = None) -> str:
        x = 100 + 150 * (len(self.nodes) % 40)
        y = 100 + 120 * (len(self.nodes) // 40)
        self.nodes[node_id] = {
            "kind": kind,
            "title": title,
            "config": config or {},
            "position": {"x": x, "y": y},
        }
        return node_id

    def connect(self, source: str, target: str, **extra: Any) -> None:
        self.flows[f"f{len(self.flows) + 1}"] = {"source": source, "target": target, **extra}

    def task(self, node_id: str, reads: str | None = None) -> str:
        """Add a user or service task reading ``reads`` (default: the latest saved variable)."""
        n = len(self.nodes)
        if n % 2:
            config = {
                "assignee": {"type": "role", "value": "clerk"},
                "form": FORM,
                "saveTo": f"v{n}",
                "dueIn": "P2D",
            }
            kind = "userTask"
        else:
            reads = reads or (self.saved[-1] if self.saved else None)
            earlier = f"$vars.{reads}.amount" if reads else "$input.amount"
            config = {
                "tool": "http.post",
                "inputs": {"url": "'https://example.com/' + lower($input.kind)", "body": earlier},
                "saveTo": f"v{n}",
            }
            kind = "serviceTask"
        self.add(node_id, kind, f"Step {n}", config)
        self.saved.append(f"v{n}")
        return node_id

    def chain(self, prefix: str, length: int) -> None:
        for i in range(length):
            node = self.task(f"{prefix}_{i}")
            self.connect(self.last, node)
            self.last = node

    def exclusive(self, prefix: str, branches: int = 3) -> None:
        split = self.add(f"{prefix}_x", "exclusiveGateway", "Which way?")
        merge = self.add(f"{prefix}_m", "exclusiveGateway", "")
        self.connect(self.last, split)
        var = self.saved[-1] if self.saved else None
        for b in range(branches):
            first = self.task(f"{prefix}_b{b}_0", var)
            second = self.task(f"{prefix}_b{b}_1")
            if b == branches - 1:
                self.connect(split, first, default=True)
            else:
                subject = f"$vars.{var}.decision" if var else "$input.kind"
                self.connect(split, first, condition=f"{subject} == 'opt{b}'")
            self.connect(first, second)
            self.connect(second, merge)
        self.last = merge

    def parallel(self, prefix: str, branches: int = 3) -> None:
        split = self.add(f"{prefix}_p", "parallelGateway", "Fork")
        join = self.add(f"{prefix}_j", "parallelGateway", "Join")
        self.connect(self.last, split)
        var = self.saved[-1] if self.saved else None
        for b in range(branches):
            first = self.task(f"{prefix}_b{b}_0", var)
            second = self.task(f"{prefix}_b{b}_1")
            self.connect(split, first)
            self.connect(first, second)
            self.connect(second, join)
        self.last = join

    def retry_loop(self, prefix: str) -> None:
        merge = self.add(f"{prefix}_m", "exclusiveGateway", "")
        self.connect(self.last, merge)
        work = self.task(f"{prefix}_work")
        check = self.add(f"{prefix}_x", "exclusiveGateway", "Done?")
        self.connect(merge, work)
        self.connect(work, check)
        self.connect(check, merge, condition=f"$nodes.{work}.decision == 'no'")
        self.last = check
        wait = self.add(
            f"{prefix}_wait",
            "messageCatch",
            "Await reply",
            {"message": "reply", "correlationKey": "$input.orderId"},
        )
        self.connect(check, wait, default=True)
        timer = self.add(f"{prefix}_timer", "timerCatch", "Cool down", {"duration": "PT5M"})
        self.connect(wait, timer)
        self.last = timer

    def finish(self) -> dict[str, Any]:
        end = self.add("end", "endEvent", "Done")
        self.connect(self.last, end)
        return {"format_version": 1, "key": "bench", "nodes": self.nodes, "flows": self.flows}


def build_document(size: int = 1000) -> dict[str, Any]:
    """Build a valid document of exactly ``size`` nodes mixing every block type."""
    builder = Builder()
    block = 0
    while len(builder.nodes) < size - 20:
        prefix = f"k{block}"
        [builder.chain, builder.exclusive, builder.parallel, builder.retry_loop][block % 4](
            *((prefix, 3) if block % 4 == 0 else (prefix,))
        )
        block += 1
    builder.chain("tail", size - 1 - len(builder.nodes))
    return builder.finish()


def main(runs: int = 50) -> None:
    doc = build_document()
    problems = validate(doc, TOOLS)
    assert not has_errors(problems), [p for p in problems if p.severity == "error"][:5]
    timings, cpu = [], []
    for _ in range(runs):
        began, began_cpu = time.perf_counter(), time.process_time()
        validate(doc, TOOLS)
        timings.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - began_cpu) * 1000)
    timings.sort()
    p95 = timings[min(len(timings) - 1, round(0.95 * len(timings)) - 1)]
    print(
        f"validate(): {len(doc['nodes'])} nodes, {len(doc['flows'])} flows, "
        f"{len(problems)} warnings, {runs} runs"
    )
    print(f"median {statistics.median(timings):.1f} ms, p95 {p95:.1f} ms, max {timings[-1]:.1f} ms")
    print(f"CPU time median {statistics.median(cpu):.1f} ms (less sensitive to a busy machine)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
