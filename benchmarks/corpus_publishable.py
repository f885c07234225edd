"""Count the corpus files that publish as imported (no validation error with the built-in tools).

Run as ``FLOWDESK_BPMN_CORPUS=/path/to/bpmn-corpus .venv/bin/python
benchmarks/corpus_publishable.py [-v]``. Prints the count and, per error code, how many
imported files it blocks; `-v` lists each file with its verdict.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.process.test_bpmn_corpus import OTHER_POOLS, corpus_dir, manifest
from webapp import tools
from webapp.process.bpmn import BpmnImportError, import_bpmn
from webapp.process.validation import validate


def main(verbose: bool) -> None:
    corpus = corpus_dir()
    if corpus is None:
        sys.exit("BPMN corpus not found: set FLOWDESK_BPMN_CORPUS")
    specs = tools.specs()
    refused = imported = publishable = 0
    blockers: Counter[str] = Counter()
    for name, _ in manifest(corpus):
        try:
            result = import_bpmn((corpus / name).read_bytes())
        except BpmnImportError as exc:
            refused += 1
            verdict = f"refused: {exc.message[:80]}"
        else:
            if [u for u in result.unsupported if u.type not in OTHER_POOLS]:
                refused += 1
                verdict = "refused: unsupported elements"
            else:
                imported += 1
                errors = [p for p in validate(result.document, specs) if p.severity == "error"]
                codes = sorted({p.code for p in errors})
                blockers.update(codes)
                publishable += not errors
                verdict = "publishable" if not errors else "blocked: " + ", ".join(codes)
        if verbose:
            print(f"{verdict:60} {name}")
    print(
        f"files {refused + imported}, refused {refused}, imported {imported}, "
        f"publishable as imported {publishable}"
    )
    for code, count in blockers.most_common():
        print(f"  {count:3} blocked by {code}")


if __name__ == "__main__":
    main("-v" in sys.argv[1:])
