"""The structured Flowdesk-versus-SpiffWorkflow benchmark still runs: tiny sizes, SQLite."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.benchmarks import run_benchmark


def test_structured_benchmark_runs_every_structure_to_completion_in_both_engines(
    tmp_path: Path,
) -> None:
    output = run_benchmark(
        "versus_spiff_structured.py",
        ["--items=2,4", "--sequential=3", "--count=2", "--warm=2"],
        tmp_path,
        timeout=180,
    )
    finished = dict(re.findall(r"round 1: (.+?) \(SQLite\): .*\n\s+([\d,]+) items,", output))
    assert finished == {
        "Spiff multi-instance x2": "2",
        "Flowdesk multi-instance x2": "2",
        "Spiff multi-instance x4": "4",
        "Flowdesk multi-instance x4": "4",
        "Spiff sequential x3": "3",
        "Flowdesk sequential x3": "3",
        "Spiff boundary timer": "2",
        "Flowdesk boundary timer": "2",
        "Spiff call activity": "2",
        "Flowdesk call activity": "2",
    }, output
    assert "NOT FINISHED" not in output, output
    assert re.search(
        r"^(PASS|FAIL)  call activity: Flowdesk >= 3x Spiff: [\d.]+x rate", output, re.M
    )
    assert re.search(r"^(PASS|FAIL)  CPU per item flat from 2 to 4 items", output, re.M)
