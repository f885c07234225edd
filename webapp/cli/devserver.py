"""`flask dev`: the whole stack in one terminal, all stopped together by Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from flask import current_app
from werkzeug.serving import run_simple

from webapp.config import ROOT
from webapp.infra.queue import redis_url

ROOT_WORKER = "worker.py"


def run_all(host: str, port: int, workers: int) -> None:
    """Start Redis and `workers` worker processes, then serve the app until interrupted."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]  # a LocalProxy
    url = redis_url(app)
    env = dict(os.environ, REDIS_URL=url)
    children = [
        subprocess.Popen([sys.executable, str(ROOT / ROOT_WORKER)], env=env, cwd=ROOT)
        for _ in range(workers)
    ]
    print(f" * Redis at {url}; {workers} worker(s) started", flush=True)

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        app.config["REDIS_URL"] = url
        run_simple(host, port, app, use_reloader=False, threaded=True)
    except KeyboardInterrupt:
        pass
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
        embedded = app.extensions.get("flowdesk.embedded_redis")
        if embedded is not None:
            embedded.stop()
