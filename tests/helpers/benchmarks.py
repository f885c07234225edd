"""Running a benchmark script the way a person does, with tiny sizes, on SQLite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_benchmark(script: str, args: list[str], tmp_path: Path, timeout: float) -> str:
    """Run `benchmarks/<script>` on SQLite (no database URL reaches it); its output, asserting
    it exited 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "BENCH_DATABASE_URL")}
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return done.stdout
