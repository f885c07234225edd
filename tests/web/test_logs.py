"""Web and workers log in one format: UTC date and time, level, logger, instance and job."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers.workers import worker_env

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR) [\w.]+")

SCRIPT = """
import logging
from webapp import create_app
from webapp.infra.logs import about
app = create_app({"INSTANCE_PATH": %(folder)r})
with about(instance=12, job=40):
    logging.getLogger("webapp.engine.sweep").warning("could not enqueue %%d job(s)", 3)
logging.getLogger("webapp.services").info("plain line")
try:
    1 / 0
except ZeroDivisionError:
    logging.getLogger("webapp.web.error_pages").exception("unhandled")
"""


def _run(tmp_path: Path, **env: str) -> list[str]:
    settings = {"FLOWDESK_ENV": "development", "REDIS_URL": "redis://127.0.0.1:1/0", **env}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT % {"folder": str(tmp_path)}],
        cwd=ROOT,
        env={**worker_env({"SQLALCHEMY_DATABASE_URI": "", "REDIS_URL": "", "SECRET_KEY": "",
                           "RQ_QUEUE": "q"}), **settings},
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stderr.splitlines()


def test_lines_carry_time_level_logger_and_the_ids_they_are_about(tmp_path):
    lines = _run(tmp_path)
    warning = next(line for line in lines if "could not enqueue" in line)
    assert LINE.match(warning), warning
    assert warning.endswith(
        " WARNING webapp.engine.sweep [instance=12 job=40] could not enqueue 3 job(s)"
    )
    info = next(line for line in lines if "plain line" in line)
    assert LINE.match(info) and info.endswith(" INFO webapp.services plain line"), "INFO is kept"
    error = lines.index(next(line for line in lines if line.endswith("unhandled")))
    assert lines[error + 1] == "Traceback (most recent call last):"


def test_json_lines_for_log_collectors(tmp_path):
    entries = [json.loads(line) for line in _run(tmp_path, LOG_FORMAT="json")]
    warning = next(e for e in entries if e["logger"] == "webapp.engine.sweep")
    assert warning["level"] == "WARNING" and (warning["instance"], warning["job"]) == (12, 40)
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", warning["time"])
    error = next(e for e in entries if e["message"] == "unhandled")
    assert "ZeroDivisionError" in error["exception"]


def test_worker_lines_from_rq_carry_the_date(app, app_config):
    from tests.helpers.workers import run_burst

    done = run_burst(app_config)
    output = (done.stdout + done.stderr).splitlines()
    rq_lines = [line for line in output if " rq.worker " in line]
    assert rq_lines, output
    assert all(LINE.match(line) for line in rq_lines), rq_lines
