"""The decisions benchmark still runs and prints a rate for each table."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.benchmarks import run_benchmark


def test_decisions_benchmark_prints_a_rate_per_table(tmp_path: Path) -> None:
    output = run_benchmark("decisions.py", ["--evaluations=20"], tmp_path, timeout=120)
    rates = re.findall(r"^(\w+) +100 rules: Flowdesk +([\d,]+) evaluations/s", output, re.M)
    assert [policy for policy, _ in rates] == ["UNIQUE", "FIRST", "COLLECT"], output
    assert all(int(rate.replace(",", "")) > 0 for _, rate in rates)
    assert output.count("SpiffWorkflow") == 3
