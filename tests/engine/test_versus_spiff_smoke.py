"""The Flowdesk-versus-SpiffWorkflow benchmark still runs: tiny counts, SQLite, one round."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_versus_spiff_runs_every_variant_to_completion_on_sqlite(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "BENCH_DATABASE_URL")}
    env["TMPDIR"] = str(tmp_path)
    command = [
        sys.executable,
        "benchmarks/versus_spiff.py",
        "--sqlite-only",
        "--rounds=1",
        "--count=8",
        "--tasks-count=2",
        "--more-workers=0",
        "--warm=2",
    ]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    output = done.stdout
    assert done.returncode == 0, output + done.stderr[-3000:]
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
