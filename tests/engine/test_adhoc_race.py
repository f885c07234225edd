"""Two OS processes activate an ad-hoc sub-process's activity at the same moments while two real
RQ workers run what was activated: every activation runs exactly once, none is lost."""

from __future__ import annotations

import subprocess
import sys
import time

from sqlalchemy import func, select

from tests.engine.tools_for_tests import seen
from tests.helpers.documents import document, flow, inside, node
from tests.helpers.instances import start
from tests.helpers.processes import publish_document
from tests.helpers.workers import ROOT, tool_worker_env, wait_for
from webapp.models import HistoryEntry, Token

EACH = 8
ACTIVATE = f"""
import sys, time
from webapp import create_app
from webapp.services import accounts, adhoc
instance_id, scope, at = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
app = create_app()
with app.app_context():
    user = accounts.find_user("operator")
    time.sleep(max(0.0, at - time.time()))
    for _ in range({EACH}):
        adhoc.activate(user, instance_id, "call", scope)
print("done")
"""


def test_concurrent_activations_from_two_processes_each_run_once(
    app, app_config, engine, demo, workers, redis_client, test_tools
):
    nodes = {
        "start": node("startEvent"),
        "work": node("adHocSubProcess", "Work", completion="$input.stop == true"),
        "call": inside(
            "work", "serviceTask", "Call", tool="test.record", inputs={"name": "'adhoc-race'"}
        ),
        "end": node("endEvent"),
    }
    version = publish_document(
        document(nodes, {"f1": flow("start", "work"), "f2": flow("work", "end")}), key="race"
    )
    instance_id = start(engine, version)
    engine.rollback()
    scope = engine.scalar(select(Token.id).where(Token.node_id == "work"))
    workers.start(2)
    at = time.time() + 2.0
    env = tool_worker_env(app_config)
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", ACTIVATE, str(instance_id), str(scope), str(at)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    for run in runs:
        output, _ = run.communicate(timeout=120)
        assert run.returncode == 0 and "done" in output, output[-3000:]

    def count(kind: str, node_id: str) -> int:
        engine.rollback()
        return engine.scalar(
            select(func.count()).where(
                HistoryEntry.instance_id == instance_id,
                HistoryEntry.kind == kind,
                HistoryEntry.node_id == node_id,
            )
        )

    wait_for(lambda: count("left", "call") == 2 * EACH, timeout=60, what="every call to end")
    assert count("adhoc_activated", "work") == 2 * EACH
    assert count("entered", "call") == 2 * EACH
    calls = seen(redis_client, "adhoc-race")
    assert len({entry["key"] for entry in calls}) == 2 * EACH, workers.logs()
    assert len(calls) == 2 * EACH
