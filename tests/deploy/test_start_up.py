"""Start-up as an operator meets it: a DATABASE_URL that PostgreSQL refuses stops the web server,
a worker and a `flask` command with one line naming it; an unreachable server is an outage that
they ride out; a `flask` command run without the settings loaded does not quietly use the
development database."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.deploy.postgres import password_postgres

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """A production process's environment: only the settings given, none of the suite's."""
    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FLOWDESK_", "PYTEST", "GUNICORN"))
        and k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "RQ_QUEUE")
    }
    return {**kept, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), **settings}


def _production(tmp_path: Path, database_url: str) -> dict[str, str]:
    return _env(
        tmp_path,
        FLOWDESK_ENV="production",
        DATABASE_URL=database_url,
        REDIS_URL="redis://127.0.0.1:1/0",
        SECRET_KEY=secrets.token_urlsafe(48),
        RQ_QUEUE=f"start-up-{secrets.token_hex(4)}",
        FLOWDESK_SETTINGS_FILE=str(tmp_path / "no-such-settings.env"),
    )


COMMANDS = {
    "web": [str(BIN / "gunicorn"), "--workers", "2", "--no-control-socket", "webapp:create_app()"],
    "worker": [sys.executable, "worker.py"],
    "cli": [str(BIN / "flask"), "--app", "webapp", "db", "current"],
}


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with password_postgres() as url:
        yield url


def _wrong(url: str, what: str) -> str:
    parsed = make_url(url)
    if what == "password":
        return parsed.set(password="wrong-password").render_as_string(hide_password=False)
    return parsed.set(database="no_such_database").render_as_string(hide_password=False)


@pytest.mark.parametrize("process", sorted(COMMANDS))
@pytest.mark.parametrize(
    ("wrong", "reason"),
    [
        ("password", 'password authentication failed for user "postgres"'),
        ("database", 'database "no_such_database" does not exist'),
    ],
)
def test_a_refused_database_url_stops_the_process_with_one_line(
    server_url, tmp_path, process, wrong, reason
):
    env = _production(tmp_path, _wrong(server_url, wrong))
    command = COMMANDS[process]
    if process == "web":
        command = [*command[:1], "--bind", f"127.0.0.1:{_free_port()}", *command[1:]]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if "DATABASE_URL is wrong" in line]
    assert lines, output
    assert all(reason in line for line in lines), output
    assert "wrong-password" not in output  # the password itself is never printed
    if process == "web":
        assert "App failed to load" in output  # gunicorn's master stops, no retry loop


def _readyz(port: int) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_an_unreachable_database_is_an_outage_the_web_and_workers_ride_out(tmp_path):
    env = _production(tmp_path, f"postgresql://flowdesk:pw@127.0.0.1:{_free_port()}/flowdesk")
    port = _free_port()
    web_command = [*COMMANDS["web"][:1], "--bind", f"127.0.0.1:{port}", *COMMANDS["web"][1:]]
    started = [
        subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for command in (web_command, COMMANDS["worker"])
    ]
    try:
        deadline = time.monotonic() + 30
        answer: tuple[int, dict[str, str]] | None = None
        while answer is None and time.monotonic() < deadline:
            try:
                answer = _readyz(port)
            except OSError:
                time.sleep(0.3)
        assert answer is not None, "the web server did not start"
        status, body = answer
        assert status == 503 and body["database"] == "unavailable"
        assert all(process.poll() is None for process in started)
    finally:
        for process in started:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def _flask(tmp_path: Path, *args: str, **settings: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "flask"), "--app", "webapp", *args],
        cwd=ROOT,
        env=_env(tmp_path, **settings),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_command_without_the_settings_refuses_where_production_settings_exist(tmp_path):
    settings = tmp_path / "flowdesk.env"
    settings.write_text("FLOWDESK_ENV=production\n")
    done = _flask(tmp_path, "db", "current", FLOWDESK_SETTINGS_FILE=str(settings))
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"no settings loaded, but this machine has {settings}" in done.stderr
    assert f". {settings}" in done.stderr  # says how to load them


def test_a_command_without_the_settings_warns_that_it_uses_the_development_database(tmp_path):
    missing = str(tmp_path / "no-settings.env")
    done = _flask(tmp_path, "routes", FLOWDESK_SETTINGS_FILE=missing)
    assert done.returncode == 0, done.stderr
    assert "WARNING: no settings loaded" in done.stderr
    chosen = _flask(tmp_path, "routes", FLOWDESK_SETTINGS_FILE=missing, FLOWDESK_ENV="development")
    assert chosen.returncode == 0 and "WARNING" not in chosen.stderr
