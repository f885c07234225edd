"""The panel's check of a Flowdesk script: one `name = expression` assignment per line.

The contract's grammar (CONTRACT16.md, scriptTask): blank lines and `#` comments allowed, the
name an identifier optionally written `$vars.name`. The engine's own parser is
`webapp.process.scripts` (helper H1); this check says the same thing line by line as you type.
"""

from __future__ import annotations

import re

from webapp.process import expressions
from webapp.process.document import is_identifier

_ASSIGNMENT = re.compile(r"^\s*(?:\$vars\.)?([^\s=]+)\s*=(?!=)(.*)$")


def script_problems(script: str) -> list[str]:
    """What is wrong with each line of `script`, as messages naming the line."""
    problems = []
    for number, line in enumerate(script.splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _ASSIGNMENT.match(text)
        if match is None:
            problems.append(f"Line {number}: write an assignment, name = expression.")
            continue
        name, expression = match.group(1), match.group(2).strip()
        if not is_identifier(name):
            problems.append(
                f"Line {number}: '{name[:40]}' is not a plain name (letters, digits and _, "
                "not starting with a digit)."
            )
        elif not expression:
            problems.append(f"Line {number}: give an expression after =.")
        else:
            error = expressions.check(expression)
            if error is not None:
                problems.append(f"Line {number}: not a valid expression: {error.message}.")
    return problems
