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
import ssl
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

from tests.helpers.app import make_user
from tests.helpers.docs import doc_blocks
from tests.helpers.scratch import is_postgres, scratch_database

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "deploy.md"
PLACE = "/opt/flowdesk/app"
SETTINGS_FILE = "/etc/flowdesk/flowdesk.env"

on_postgres = pytest.mark.skipif(
    not is_postgres(os.environ.get("DATABASE_URL")),
    reason="the production path runs on PostgreSQL: set DATABASE_URL to a PostgreSQL server",
)


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
    from webapp.infra.redis_server import EmbeddedRedis

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
    assert set(blocks) == {"install", "first-admin", "web-unit", "worker-unit", "nginx"}
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
        "from webapp.infra.queue import get_queue\n"
        "app = create_app()\n"
        "with app.app_context():\n"
        "    job = get_queue().enqueue('webapp.worker.health.healthcheck')\n"
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


CERT = ("-subj", "/CN=localhost", "-keyout", "key.pem", "-out", "cert.pem")
LETSENCRYPT = "/etc/letsencrypt/live/flowdesk.example.org/"


def _nginx_in_front(block: str, folder: Path, upstream: int) -> tuple[list[str], int]:
    """The guide's nginx block with loopback ports of its own, a self-signed certificate and
    `upstream` for gunicorn's port, in a configuration nginx runs in the foreground as this
    user; returns the command and the HTTPS port."""
    subprocess.run(
        [*("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"), *CERT],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    https_port = _free_port()
    served = (
        block.replace("listen 443 ssl;", f"listen 127.0.0.1:{https_port} ssl;")
        .replace("listen 80;", f"listen 127.0.0.1:{_free_port()};")
        .replace("http://127.0.0.1:8000", f"http://127.0.0.1:{upstream}")
        .replace(
            "/etc/letsencrypt/live/flowdesk.example.org/fullchain.pem", str(folder / "cert.pem")
        )
        .replace("/etc/letsencrypt/live/flowdesk.example.org/privkey.pem", str(folder / "key.pem"))
    )
    assert f"127.0.0.1:{https_port} ssl" in served and str(upstream) in served
    temp = "".join(
        f"{kind}_temp_path {folder / kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (folder / "nginx.conf").write_text(
        f"daemon off;\nmaster_process off;\npid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'};\nevents {{}}\n"
        f"http {{\naccess_log off;\n{temp}{served}\n}}\n"
    )
    return ["nginx", "-p", str(folder), "-c", str(folder / "nginx.conf")], https_port


def _wait_tls(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nginx did not listen on {port}")


@pytest.mark.skipif(
    not shutil.which("nginx"), reason="nginx is not installed (apt-get install nginx)"
)
def test_the_guide_s_nginx_block_lets_people_sign_in_on_another_port(
    app, app_config, db_session, tmp_path
):
    """`Host $host` dropped the port, and every form post on a port but 443 was refused."""
    password = "proxied-admin-" + secrets.token_hex(4)
    make_user("proxied-admin", ["admin"], password=password)
    db_session.commit()
    blocks = doc_blocks(DOC.read_text())
    upstream = _free_port()
    (tmp_path / "run").mkdir()
    env = {
        **_base_env(),
        # Where gunicorn would put a control socket that every instance of the user shares.
        "HOME": str(tmp_path),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "FLOWDESK_ENV": "production",
        "DATABASE_URL": app_config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": app_config["REDIS_URL"],
        "SECRET_KEY": secrets.token_urlsafe(48),
        "SESSION_COOKIE_SECURE": "1",
        "TRUSTED_PROXIES": "1",
        "GUNICORN_CMD_ARGS": f"--bind 127.0.0.1:{upstream} --workers 1",
    }
    web = _in_place(blocks["web-unit"], ROOT, Path(SETTINGS_FILE))
    nginx, port = _nginx_in_front(blocks["nginx"], tmp_path, upstream)
    started = []
    try:
        for command in (exec_start(web), nginx):
            log = open(tmp_path / f"{Path(command[0]).name}.log", "w")  # noqa: SIM115
            started.append(
                subprocess.Popen(
                    command,
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        _wait_http(f"http://127.0.0.1:{upstream}/readyz")
        _wait_tls(port)
        _sign_in_over_https(f"https://127.0.0.1:{port}", "proxied-admin", password)
        shared = [*tmp_path.glob(".gunicorn/*"), *tmp_path.glob("run/*")]
        assert not shared, "gunicorn opened a control socket every instance of the user shares"
    finally:
        for process in started:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


def _sign_in_over_https(base: str, username: str, password: str) -> None:
    """As a browser does: the form's Referer is the sign-in page (Referrer-Policy same-origin)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    browser = urllib.request.build_opener(
        urllib.request.HTTPSHandler(context=context),
        urllib.request.HTTPCookieProcessor(CookieJar()),
    )
    page = browser.open(f"{base}/login").read().decode()
    token = re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode(
        {"csrf_token": token, "username": username, "password": password}
    ).encode()
    request = urllib.request.Request(  # noqa: S310 - loopback https
        f"{base}/login", data=form, headers={"Referer": f"{base}/login"}
    )
    try:
        signed_in = browser.open(request)
    except urllib.error.HTTPError as error:
        raise AssertionError(f"sign-in through nginx answered {error.code}") from error
    assert signed_in.status == 200 and signed_in.url.rstrip("/") == base, signed_in.url
    assert browser.open(f"{base}/admin/").status == 200


def test_the_readme_shows_the_guide_s_first_admin_commands():
    readme = (ROOT / "README.md").read_text()
    for line in doc_blocks(DOC.read_text())["first-admin"].splitlines():
        if "flask" in line:
            assert line in readme, f"README shows another command than docs/deploy.md: {line}"
    assert "docs/deploy.md" in readme


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-v"]))
