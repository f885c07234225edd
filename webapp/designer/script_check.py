"""The panel's check of a Flowdesk script, line by line as you type.

Each line is parsed by the engine's own parser (`webapp.process.scripts`), so the panel and
publishing say the same thing; the panel lists every bad line, not only the first.
"""

from __future__ import annotations

from webapp.process import scripts


def script_problems(script: str) -> list[str]:
    """What is wrong with each line of `script`, as messages naming the line."""
    problems = []
    for number, line in enumerate(script.splitlines(), start=1):
        if not line.strip() or line.strip().startswith("#"):
            continue
        error = scripts.check(line)
        if error is not None:
            problems.append(f"Line {number}: {error.message}")
    return problems
