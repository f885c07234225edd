"""Count the corpus files that are refused, imported with items left, or publishable as imported.

Run as ``FLOWDESK_BPMN_CORPUS=/path/to/bpmn-corpus .venv/bin/python
benchmarks/corpus_publishable.py [-v]``. Prints the counts, the refusals by kind and the remaining
items by category and code; `-v` lists each file with its verdict. The verdicts come from
`tests/process/corpus_verdicts.py`, which the corpus verdict test asserts file by file.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.corpus import corpus_dir
from tests.process.corpus_verdicts import summary, verdicts


def main(verbose: bool) -> None:
    corpus = corpus_dir()
    if corpus is None:
        sys.exit("BPMN corpus not found: set FLOWDESK_BPMN_CORPUS")
    found = verdicts(corpus)
    if verbose:
        for verdict in found:
            print(verdict.line())
    print(summary(found))


if __name__ == "__main__":
    main("-v" in sys.argv[1:])
