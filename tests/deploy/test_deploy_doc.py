"""docs/deploy.md, followed literally: install a fresh copy of the checkout, create the tables
and the first admin, start the web and worker units' commands, sign in, run a job.

The production path runs on PostgreSQL, so this runs when DATABASE_URL names a PostgreSQL
server (CI's second run). It builds a new virtual environment, so it takes a minute or two.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.cookiejar import CookieJar
from pathlib import Path

import pytest

from webapp.scratch import is_postgres, scratch_database

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "deploy.md"
PLACE = "/opt/flowdesk/app"
SETTINGS_FILE = "/etc/flowdesk/flowdesk.env"

on_postgres = pytest.mark.skipif(
    not is_postgres(os.environ.get("DATABASE_URL")),
    reason="the production path runs on PostgreSQL: set DATABASE_URL to a PostgreSQL server",
)


def doc_blocks(text: str) -> dict[str, str]:
    """The fenced block after each `<!-- test: NAME -->` marker, by name."""
    found = re.findall(r"<!-- test: ([\w-]+) -->\n```\w*\n(.*?)\n```", text, re.S)
    return dict(found)


def exec_start(unit: str) -> list[str]:
    line = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart="))


def _copy_checkout(target: Path) -> None:
    """The files a `git clone` would give: tracked and new, never ignored ones."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (item.decode() for item in listed)):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback
                if response.status == 200:
                    return
        except OSError:  # refused, reset or timed out while the server starts
            time.sleep(0.3)
    raise AssertionError(f"{url} did not answer 200 within {timeout} s")


def _base_env() -> dict[str, str]:
    """This machine's environment without any Flowdesk setting: those come from the file."""
    dropped = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "RQ_QUEUE", "VIRTUAL_ENV")
    return {
        k: v
        for k, v in os.environ.items()
        if k not in dropped and not k.startswith(("FLOWDESK_", "PYTEST", "GUNICORN"))
    }


@pytest.fixture(scope="module")
def production_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis of its own, as a production Redis would be (the embedded server's binary)."""
    from webapp.redis_server import EmbeddedRedis

    server = EmbeddedRedis(tmp_path_factory.mktemp("deploy-redis"))
    server.ensure_running()
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def installed(
    tmp_path_factory: pytest.TempPathFactory, production_redis: str
) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """A fresh copy of the checkout installed by the guide's install block, a new database, and a
    settings file standing in for the guide's; returns the folder, the file and its settings."""
    app_dir = tmp_path_factory.mktemp("flowdesk") / "app"
    app_dir.mkdir()
    _copy_checkout(app_dir)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", doc_blocks(DOC.read_text())["install"]],
        cwd=app_dir,
        env=_base_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    folder = tmp_path_factory.mktemp("deploy-etc")
    with scratch_database(os.environ["DATABASE_URL"], folder, "flowdesk_deploy") as url:
        values = {
            "FLOWDESK_ENV": "production",
            "DATABASE_URL": url,
            "REDIS_URL": production_redis,
            "SECRET_KEY": secrets.token_urlsafe(48),
            "RQ_QUEUE": f"deploy-{secrets.token_hex(4)}",
            "GUNICORN_CMD_ARGS": f"--bind 127.0.0.1:{_free_port()} --workers 2",
        }
        settings = folder / "flowdesk.env"
        settings.write_text("".join(f'{key}="{value}"\n' for key, value in values.items()))
        yield app_dir, settings, values


def _in_place(text: str, app_dir: Path, settings: Path) -> str:
    return text.replace(PLACE, str(app_dir)).replace(SETTINGS_FILE, str(settings))


@pytest.mark.slow
@on_postgres
def test_the_guide_installs_a_working_production_system(installed):
    app_dir, settings, values = installed
    env = {**_base_env(), **values}  # what systemd's EnvironmentFile= gives each unit
    blocks = doc_blocks(DOC.read_text())
    assert set(blocks) == {"install", "first-admin", "web-unit", "worker-unit"}
    password = "first-admin-" + secrets.token_hex(6)

    first_admin = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", _in_place(blocks["first-admin"], app_dir, settings)],
        cwd=app_dir,
        env=_base_env(),
        input=f"{password}\n{password}\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert first_admin.returncode == 0, first_admin.stdout + first_admin.stderr
    assert "created user admin" in first_admin.stdout

    processes = []
    try:
        for name in ("web-unit", "worker-unit"):
            unit = _in_place(blocks[name], app_dir, settings)
            assert f"EnvironmentFile={settings}" in unit and f"WorkingDirectory={app_dir}" in unit
            log = open(settings.parent / f"{name}.log", "w")  # noqa: SIM115
            processes.append(
                subprocess.Popen(
                    exec_start(unit),
                    cwd=app_dir,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        port = env["GUNICORN_CMD_ARGS"].split("127.0.0.1:")[1].split()[0]
        base = f"http://127.0.0.1:{port}"
        _wait_http(f"{base}/readyz")
        _sign_in_as_admin(base, password)
        _a_worker_runs_jobs(app_dir, env)
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
    logs = "".join(p.read_text() for p in sorted(settings.parent.glob("*-unit.log")))
    assert "front-end files missing" not in logs


def _sign_in_as_admin(base: str, password: str) -> None:
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    page = browser.open(f"{base}/login").read().decode()
    assert "missing-assets" not in page, "the install block built the front-end files"
    htmx = re.search(r'src="(/static/vendor/htmx\.org/htmx\.min\.js[^"]*)"', page).group(1)
    assert browser.open(f"{base}{htmx}").status == 200
    token = re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode(
        {"csrf_token": token, "username": "admin", "password": password}
    ).encode()
    signed_in = browser.open(f"{base}/login", data=form)
    assert signed_in.status == 200 and signed_in.url.rstrip("/") == base
    assert browser.open(f"{base}/admin/").status == 200


def _a_worker_runs_jobs(app_dir: Path, env: dict[str, str]) -> None:
    """The worker unit's process picks up a job from the production queue."""
    script = (
        "import time\n"
        "from webapp import create_app\n"
        "from webapp.queue import get_queue\n"
        "app = create_app()\n"
        "with app.app_context():\n"
        "    job = get_queue().enqueue('webapp.jobs.healthcheck')\n"
        "deadline = time.monotonic() + 60\n"
        "while not job.is_finished and time.monotonic() < deadline:\n"
        "    time.sleep(0.2)\n"
        "print('finished' if job.is_finished else job.get_status(), job.return_value())\n"
    )
    done = subprocess.run(
        [str(app_dir / ".venv" / "bin" / "python"), "-c", script],
        cwd=app_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip() == "finished {'users': 1}", done.stdout + done.stderr


@pytest.mark.slow
@on_postgres
def test_a_plain_pip_install_refuses_to_start_and_says_how(installed, tmp_path):
    app_dir, _, values = installed
    env = {**_base_env(), **values}
    site = tmp_path / "site"
    venv_python = str(app_dir / ".venv" / "bin" / "python")
    subprocess.run(
        [venv_python, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), "."],
        cwd=app_dir,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    refused = subprocess.run(
        [venv_python, "-c", "from webapp import create_app; create_app()"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0
    assert "runs from its checkout" in refused.stderr and "make setup" in refused.stderr


def test_the_readme_shows_the_guide_s_first_admin_commands():
    readme = (ROOT / "README.md").read_text()
    for line in doc_blocks(DOC.read_text())["first-admin"].splitlines():
        if "flask" in line:
            assert line in readme, f"README shows another command than docs/deploy.md: {line}"
    assert "docs/deploy.md" in readme


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-v"]))
