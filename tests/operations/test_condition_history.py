"""An operator's variable edit on the instance page fires a conditional catch, and the history
says what conditional events and standard loops did."""

from __future__ import annotations

import re

from tests.helpers.app import csrf_token
from tests.helpers.documents import chain, node, task
from tests.helpers.instances import complete, load, open_tasks, start
from tests.helpers.processes import publish_document


def _history_rows(page: str) -> list[str]:
    rows = re.findall(r'<tr class="op-h-[a-z_]+" data-kind="[a-z_]+">(.*?)</tr>', page, re.S)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row)).strip() for row in rows]


def test_a_variable_edit_on_the_page_fires_a_conditional_catch(operator, engine):
    doc = chain(
        ("init", node("scriptTask", "Count", script="n = 0")),
        (
            "count",
            node(
                "scriptTask",
                "Count up",
                script="n = $vars.n + 1",
                loop={"condition": "$loop.index < 2"},
            ),
        ),
        ("ask", task("Ask")),
        ("wait", node("conditionalCatch", "Approved", condition="$vars.ok == true")),
    )
    instance_id = start(engine, publish_document(doc, key="cond_page"))
    path = f"/operations/instances/{instance_id}"
    page = operator.get(path).get_data(as_text=True)
    rows = _history_rows(page)
    assert any("loop run ended" in row and "run 1 done; it runs again" in row for row in rows)
    assert any("loop run ended" in row and "done after 2 runs" in row for row in rows)
    assert load(engine, instance_id).vars["n"] == 2
    (ask,) = open_tasks(engine, instance_id)
    complete(engine, ask)
    assert load(engine, instance_id).status == "running"
    data = {"name": "ok", "value": "true", "csrf_token": csrf_token(operator, path)}
    response = operator.post(f"{path}/variables", data=data)
    assert response.status_code == 303
    assert load(engine, instance_id).status == "completed"
    rows = _history_rows(operator.get(path).get_data(as_text=True))
    assert any("condition became true" in row and "Approved" in row for row in rows)
