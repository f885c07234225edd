"""The Flowdesk-versus-SpiffWorkflow benchmark still runs: tiny counts, SQLite, one round."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.benchmarks import run_benchmark


def test_versus_spiff_runs_every_variant_to_completion_on_sqlite(tmp_path: Path) -> None:
    output = run_benchmark(
        "versus_spiff.py",
        [
            "--sqlite-only",
            "--rounds=1",
            "--count=8",
            "--tasks-count=2",
            "--more-workers=0",
            "--warm=2",
        ],
        tmp_path,
        timeout=120,
    )
    finished = dict(re.findall(r"round 1: (.+?) \(SQLite\): (\d+) in", output))
    assert finished == {
        "Spiff sample": "8",
        "Flowdesk leased, 2 workers": "8",
        "Flowdesk pure, 2 workers": "8",
        "Spiff tasks": "2",
        "Flowdesk tasks, 2 workers": "2",
    }, output
    assert re.search(
        r"^(PASS|FAIL)  SQLite leased >= 1.5x Spiff-on-SQLite: [\d.]+x   \[rounds: [\d., ]+\]$",
        output,
        re.M,
    )
