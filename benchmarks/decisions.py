"""Benchmark: decision evaluations per second for 100-rule tables, Flowdesk (and SpiffWorkflow).

Run as ``.venv/bin/python benchmarks/decisions.py [--evaluations N] [--no-spiff]``. Three tables
of 100 rules over an amount (ranges) and a category (text lists): UNIQUE (no overlaps, every rule
is tried), FIRST (stops at the first match) and COLLECT (every rule is tried and every match
kept). SpiffWorkflow runs the same tables written as its Python entries, for scale. ``check``
(what the editor runs as you type) is timed once per table.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lxml import etree
from SpiffWorkflow.bpmn.script_engine import PythonScriptEngine
from SpiffWorkflow.dmn.engine.DMNEngine import DMNEngine
from SpiffWorkflow.dmn.parser.DMNParser import DMNParser

from webapp.process.dmn import check, evaluate, read_dmn

RULES = 100
CATEGORIES = ["travel", "software", "hardware", "misc"]


def table(policy: str, language: str) -> str:
    """A 100-rule table: rule i matches amounts in [10i, 10i + width) and two categories."""
    width = 10 if policy == "UNIQUE" else 35
    rules = []
    for i in range(RULES):
        low, high = i * 10, i * 10 + width
        pair = [CATEGORIES[i % 4], CATEGORIES[(i + 1) % 4]] if policy != "UNIQUE" else []
        if language == "feel":
            amount = f"[{low}..{high}["
            category = ", ".join(f'"{c}"' for c in pair) if pair else "-"
        else:
            amount = f"{low} &lt;= ? &lt; {high}"
            category = f"? in [{', '.join(repr(c) for c in pair)}]" if pair else "-"
        amount = amount if language == "python" else amount.replace("<", "&lt;")
        rules.append(
            f'<rule id="r{i}"><inputEntry id="r{i}a"><text>{amount}</text></inputEntry>'
            f'<inputEntry id="r{i}c"><text>{category}</text></inputEntry>'
            f'<outputEntry id="r{i}o"><text>"group{i % 7}"</text></outputEntry></rule>'
        )
    return (
        '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="b" name="b" '
        f'namespace="x"><decision id="d" name="d"><decisionTable id="t" hitPolicy="{policy}">'
        f'<input id="amount" label="amount"><inputExpression id="ea" typeRef="double" '
        f'expressionLanguage="{language}"><text>amount</text></inputExpression></input>'
        f'<input id="category" label="category"><inputExpression id="ec" typeRef="string" '
        f'expressionLanguage="{language}"><text>category</text></inputExpression></input>'
        f'<output id="o" name="group" typeRef="string"/>{"".join(rules)}'
        "</decisionTable></decision></definitions>"
    )


def inputs(count: int) -> list[dict]:
    rng = random.Random(32)
    return [
        {"amount": rng.uniform(0, RULES * 10 - 1), "category": rng.choice(CATEGORIES)}
        for _ in range(count)
    ]


def rate(run: Callable[[dict], object], rows: list[dict]) -> float:
    started = time.perf_counter()
    for row in rows:
        run(row)
    return len(rows) / (time.perf_counter() - started)


class _SpiffTask:
    """The little of a task Spiff's DMN engine reads: its data and a script engine."""

    class _Workflow:
        script_engine = PythonScriptEngine()

    def __init__(self, data: dict) -> None:
        self.data = data
        self.workflow = self._Workflow()


def spiff_runner(xml: str) -> Callable[[dict], object]:
    """SpiffWorkflow's DMN engine on the table (its parser, its Python evaluation)."""
    root = etree.fromstring(xml.encode())
    nsmap = {"dmn": root.nsmap[None]}
    parser = DMNParser(None, root, nsmap)
    parser.parse()
    engine = DMNEngine(parser.decision.decisionTables[0])
    return lambda row: engine.result(_SpiffTask(dict(row)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluations", type=int, default=2000)
    parser.add_argument("--no-spiff", action="store_true")
    args = parser.parse_args()
    rows = inputs(args.evaluations)
    for policy in ("UNIQUE", "FIRST", "COLLECT"):
        document = read_dmn(table(policy, "feel")).document
        started = time.perf_counter()
        blocking = [p.message for p in check(document) if p.blocking]
        checked = (time.perf_counter() - started) * 1000
        assert not blocking, blocking[:3]
        ours = rate(lambda row, d=document: evaluate(d, "d", {"$vars": row}), rows)
        line = f"{policy:8} {RULES} rules: Flowdesk {ours:10,.0f} evaluations/s"
        line += f", check {checked:5.0f} ms"
        if not args.no_spiff:
            spiff = spiff_runner(table(policy, "python"))
            theirs = rate(spiff, rows[: max(1, len(rows) // 10)])
            line += f"   SpiffWorkflow {theirs:8,.0f} evaluations/s ({ours / theirs:.1f}x)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
