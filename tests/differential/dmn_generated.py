"""A seeded set of FEEL-style decision tables and inputs for the DMN differential test.

Each table is written twice: in FEEL for Flowdesk and in SpiffWorkflow's Python for Spiff (its
engine runs entries as Python: a range is ``1 <= ? <= 5``, a list ``in [...]``), meaning the
same tests; both engines must then match the same rules. Columns hold numbers, text, booleans
or dates (days of January 2020: FEEL's ``date("...")``, Spiff's ``datetime.datetime(...)``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any

POLICIES = [
    ("UNIQUE", None),
    ("FIRST", None),
    ("PRIORITY", None),
    ("ANY", None),
    ("RULE ORDER", None),
    ("OUTPUT ORDER", None),
    ("COLLECT", None),
    ("COLLECT", "SUM"),
    ("COLLECT", "MIN"),
    ("COLLECT", "MAX"),
    ("COLLECT", "COUNT"),
]
TEXTS = ["a", "b", "c", "d"]


@dataclass(frozen=True)
class Generated:
    feel: str
    python: str
    policy: str
    aggregation: str | None
    allowed: dict[str, list[Any]]
    inputs: list[dict[str, Any]]


def _number(rng: random.Random) -> int | float:
    return rng.choice([rng.randint(-5, 20), rng.randint(-5, 20) + 0.5])


def _number_cell(rng: random.Random, used: list[float]) -> tuple[str, str]:
    kind = rng.choice(["any", "cmp", "eq", "range", "list", "not list", "not cmp", "empty"])
    if kind == "any":
        return "-", "-"
    if kind == "empty":
        return "", ""
    if kind in ("cmp", "not cmp"):
        op, value = rng.choice(["<", "<=", ">", ">="]), _number(rng)
        used.append(value)
        if kind == "cmp":
            return f"{op} {value}", f"{op} {value}"
        return f"not({op} {value})", f"not (? {op} {value})"
    if kind == "eq":
        value = rng.randint(-5, 20)
        used.append(value)
        return str(value), str(value)
    if kind == "range":
        low = _number(rng)
        high = low + rng.choice([0, 1, 2.5, 5, 10])
        used.extend([low, high])
        opening, closing = rng.choice("[]("), rng.choice("[])")
        low_op = "<=" if opening == "[" else "<"
        high_op = "<=" if closing == "]" else "<"
        return f"{opening}{low}..{high}{closing}", f"{low} {low_op} ? {high_op} {high}"
    values = sorted({rng.randint(-5, 20) for _ in range(rng.randint(1, 3))})
    used.extend(values)
    listed = ", ".join(map(str, values))
    if kind == "list":
        return listed, f"? in [{listed}]"
    return f"not({listed})", f"? not in [{listed}]"


def _boolean_cell(rng: random.Random) -> tuple[str, str]:
    return rng.choice([("true", "True"), ("false", "False"), ("-", "-")])


def _date_cell(rng: random.Random) -> tuple[str, str]:
    """Days of January 2020: FEEL's date() and Spiff's datetime.datetime(...)."""
    kind = rng.choice(["any", "cmp", "eq", "range"])
    day, other = sorted(rng.sample(range(1, 29), 2))
    feel, python = f'date("2020-01-{day:02d}")', f"datetime.datetime(2020, 1, {day})"
    if kind == "any":
        return "-", "-"
    if kind == "eq":
        return feel, python
    if kind == "cmp":
        op = rng.choice(["<", "<=", ">", ">="])
        return f"{op} {feel}", f"{op} {python}"
    feel_end, python_end = f'date("2020-01-{other:02d}")', f"datetime.datetime(2020, 1, {other})"
    return f"[{feel}..{feel_end}]", f"{python} <= ? <= {python_end}"


def _text_cell(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["any", "eq", "eq", "list", "not list", "cmp"])
    if kind == "any":
        return "-", "-"
    if kind == "cmp":
        op, value = rng.choice(["<", "<=", ">", ">="]), rng.choice(TEXTS)
        return f'{op} "{value}"', f'{op} "{value}"'
    if kind == "eq":
        value = rng.choice(TEXTS)
        return f'"{value}"', f'"{value}"'
    values = rng.sample(TEXTS, rng.randint(1, 3))
    listed = ", ".join(f'"{v}"' for v in values)
    if kind == "list":
        return listed, f"? in [{listed}]"
    return f"not({listed})", f"? not in [{listed}]"


CELLS = {"text": _text_cell, "boolean": _boolean_cell, "date": _date_cell}


def _xml(policy: str, aggregation: str | None, columns, outputs, rules, language: str) -> str:
    agg = f' aggregation="{aggregation}"' if aggregation else ""
    parts = [
        '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="g" name="g" '
        f'namespace="x"><decision id="d" name="d"><decisionTable id="t" hitPolicy="{policy}"{agg}>'
    ]
    for name in columns:
        parts.append(
            f'<input id="in_{name}" label="{name}"><inputExpression id="e_{name}" '
            f'expressionLanguage="{language}"><text>{name}</text></inputExpression></input>'
        )
    for name, allowed in outputs:
        values = ""
        if allowed:
            listed = ",".join(_literal(v) for v in allowed)
            values = f"<outputValues><text>{listed}</text></outputValues>"
        parts.append(f'<output id="out_{name}" name="{name}">{values}</output>')
    for number, (cells, results) in enumerate(rules, 1):
        entries = "".join(
            f'<inputEntry id="r{number}i{k}"><text>{_escape(cell)}</text></inputEntry>'
            for k, cell in enumerate(cells)
        )
        entries += "".join(
            f'<outputEntry id="r{number}o{k}"><text>{_literal(v)}</text></outputEntry>'
            for k, v in enumerate(results)
        )
        parts.append(f'<rule id="r{number}">{entries}</rule>')
    parts.append("</decisionTable></decision></definitions>")
    return "".join(parts)


def _literal(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def generate(count: int = 200, seed: int = 32) -> list[Generated]:
    rng = random.Random(seed)
    tables = []
    for index in range(count):
        policy, aggregation = POLICIES[index % len(POLICIES)]
        kinds = [
            rng.choice(["number", "number", "text", "text", "boolean", "date"])
            for _ in range(rng.randint(1, 3))
        ]
        columns = [f"c{i}" for i in range(len(kinds))]
        numeric_out = aggregation is not None
        two_outputs = (
            not numeric_out and policy not in ("PRIORITY", "OUTPUT ORDER") and rng.random() < 0.3
        )
        rule_count = rng.randint(2, 8)
        pool = [f"o{i}" for i in range(rng.randint(2, 4) if policy == "ANY" else rule_count)]
        allowed: dict[str, list[Any]] = {}
        if policy in ("PRIORITY", "OUTPUT ORDER"):
            allowed["y"] = rng.sample(pool, len(pool))
        outputs = [("y", allowed.get("y"))] + ([("z", None)] if two_outputs else [])
        used: list[float] = []
        feel_rules, python_rules = [], []
        for _ in range(rule_count):
            pairs = [_number_cell(rng, used) if k == "number" else CELLS[k](rng) for k in kinds]
            y = rng.randint(0, 9) if numeric_out else rng.choice(pool)
            results = [y] + ([rng.randint(0, 3)] if two_outputs else [])
            feel_rules.append(([p[0] for p in pairs], results))
            python_rules.append(([p[1] for p in pairs], results))
        inputs = []
        for _ in range(6):
            row: dict[str, Any] = {}
            for name, kind in zip(columns, kinds, strict=True):
                if kind == "text":
                    row[name] = rng.choice([*TEXTS, "e"])
                elif kind == "boolean":
                    row[name] = rng.choice([True, False])
                elif kind == "date":
                    row[name] = datetime(2020, 1, rng.randint(1, 28))
                else:
                    base = rng.choice(used) if used and rng.random() < 0.8 else rng.randint(-10, 25)
                    row[name] = base + rng.choice([0, 0, 0, 0.5, -0.5, 1, -1])
            inputs.append(row)
        tables.append(
            Generated(
                _xml(policy, aggregation, columns, outputs, feel_rules, "feel"),
                _xml(policy, aggregation, columns, outputs, python_rules, "python"),
                policy,
                aggregation,
                allowed,
                inputs,
            )
        )
    return tables
