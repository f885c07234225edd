"""Benchmark: saving a 500-node draft from the designer, and loading the designer page.

Run as ``.venv/bin/python benchmarks/designer_save.py [runs]``. Uses a throw-away SQLite database
(or ``DATABASE_URL``'s server, in a fresh database) built by the migrations. It prints:

- the server time of ``POST /designer/<id>/save`` with the 500-node diagram (what the canvas
  posts: import, validation, storing, commit; the view's ``Server-Timing`` and the whole request);
- the same split into its library steps, and the request's CPU time (a busy machine inflates
  wall-clock figures; CPU time shows the cost of the work itself);
- the server time of ``GET /designer/<id>/`` and, when Debian's Chromium is installed, the time
  from navigation start until the modeler has drawn the diagram (``data-ready``).
"""

from __future__ import annotations

import logging
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.validate_1000 import TOOLS, build_document
from webapp.process import document as documents
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.validation import validate

PASSWORD = "benchmark-password"
CHROMIUM = os.environ.get("FLOWDESK_CHROMIUM", "/usr/bin/chromium")


def stats(label: str, values: list[float]) -> None:
    values = sorted(values)
    p95 = values[min(len(values) - 1, round(0.95 * len(values)) - 1)]
    print(
        f"{label:<52} median {statistics.median(values):7.1f} ms   p95 {p95:7.1f} ms   "
        f"max {values[-1]:7.1f} ms"
    )


def timed(function, runs: int) -> list[float]:
    result = []
    for _ in range(runs):
        began = time.perf_counter()
        function()
        result.append((time.perf_counter() - began) * 1000)
    return result


def make_app(workdir: Path):
    from flask_migrate import upgrade

    from webapp import create_app

    url = os.environ.get("DATABASE_URL") or f"sqlite:///{workdir / 'bench.sqlite3'}"
    app = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": url,
            "SECRET_KEY": "benchmark-secret-key-that-is-long-enough-for-checks",
            "INSTANCE_PATH": str(workdir),
            "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
        }
    )
    with app.app_context():
        upgrade()
    return app


def seed(app, doc: dict) -> tuple[int, int]:
    """A modeller and two processes (500 nodes, and the 2-node starter); returns their ids."""
    from webapp.extensions import db
    from webapp.services import accounts, processes

    with app.app_context():
        role = accounts.ensure_role("bench-designer", ["processes.edit", "processes.publish"])
        actor = accounts.create_user("bench", PASSWORD, roles=[role])
        big = processes.create_process(
            "bench", "Bench", partition_id=None, actor=actor, document=doc
        )
        small = processes.create_process("small", "Small", partition_id=None, actor=actor)
        db.session.commit()
        return big.id, small.id


def signed_in(app):
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', page).group(1)
    client.post("/login", data={"username": "bench", "password": PASSWORD, "csrf_token": token})
    return client, token


def browser_load(app, paths: list[str], runs: int) -> dict[str, list[float]]:
    """Navigation start to `data-ready` (modeler drawn) per path, in Chromium over real HTTP."""
    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    timings: dict[str, list[float]] = {path: [] for path in paths}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{base}/login")
            page.fill("#username", "bench")
            page.fill("#password", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/")
            for path in paths:
                page.goto(base + path)  # warm the HTTP cache once, as a returning modeller has
                page.wait_for_selector("#designer[data-ready=true]")
                for _ in range(runs):
                    page.goto(base + path)
                    page.wait_for_selector("#designer[data-ready=true]", timeout=30_000)
                    marks = page.evaluate(
                        "[performance.getEntriesByName('flowdesk:drawn')[0].startTime, "
                        "performance.getEntriesByName('flowdesk:ready')[0].startTime]"
                    )
                    timings[path].append(marks[1])
                    timings.setdefault(path + "#drawn", []).append(marks[0])
            browser.close()
    finally:
        server.shutdown()
    return timings


def main(runs: int = 20) -> None:
    for name in ("werkzeug", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    doc = documents.normalize(build_document(500))
    with tempfile.TemporaryDirectory() as tmp:
        app = make_app(Path(tmp))
        big, small = seed(app, doc)
        with app.app_context():
            from webapp.extensions import db
            from webapp.models import Process

            xml = db.session.get(Process, big).draft_xml
        print(
            f"500-node draft: {len(doc['nodes'])} nodes, {len(doc['flows'])} flows, "
            f"{len(xml) / 1024:.0f} KiB of BPMN XML"
        )
        backend = app.config["SQLALCHEMY_DATABASE_URI"].split(":")[0]
        print(f"Python {sys.version.split()[0]}, database {backend}")
        print()
        stats("library: import_bpmn (parse XML)", timed(lambda: import_bpmn(xml), runs))
        stats("library: validate", timed(lambda: validate(doc, TOOLS), runs))
        stats("library: content_hash", timed(lambda: documents.content_hash(doc), runs))
        stats("library: export_bpmn (not on the save path)", timed(lambda: export_bpmn(doc), runs))

        client, token = signed_in(app)
        view, request, cpu = [], [], []
        revision = 1
        for _ in range(runs):
            began, began_cpu = time.perf_counter(), time.process_time()
            response = client.post(
                f"/designer/{big}/save",
                data=xml,
                content_type="application/xml",
                headers={"X-CSRFToken": token, "X-Draft-Revision": str(revision)},
            )
            request.append((time.perf_counter() - began) * 1000)
            cpu.append((time.process_time() - began_cpu) * 1000)
            assert response.status_code == 200, response.get_data(as_text=True)[:500]
            body = response.get_json()
            revision = body["revision"]
            view.append(float(response.headers["Server-Timing"].split("dur=")[1]))
        print(f"save returned {len(body['problems'])} problems (warnings) for the 500-node draft")
        stats("POST save, 500 nodes: view (Server-Timing)", view)
        stats("POST save, 500 nodes: whole request", request)
        stats("POST save, 500 nodes: CPU time (less load-sensitive)", cpu)
        stats(
            "GET designer page, 500 nodes (server)",
            timed(lambda: client.get(f"/designer/{big}/"), runs),
        )
        stats(
            "GET designer page, starter (server)",
            timed(lambda: client.get(f"/designer/{small}/"), runs),
        )

        if Path(CHROMIUM).exists():
            paths = [f"/designer/{small}/", f"/designer/{big}/"]
            loads = browser_load(app, paths, max(3, runs // 4))
            stats("browser: diagram drawn, starter process", loads[paths[0] + "#drawn"])
            stats("browser: page ready, starter process", loads[paths[0]])
            stats("browser: diagram drawn, 500 nodes", loads[paths[1] + "#drawn"])
            stats("browser: page ready (with 149 markers), 500 nodes", loads[paths[1]])
        else:
            print(f"(no {CHROMIUM}: browser load time not measured)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
