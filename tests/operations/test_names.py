"""Operations tables name processes, partitions and nodes as people know them; ids stay as
secondary detail."""

from __future__ import annotations

import re
from html import unescape

from sqlalchemy import update

from tests.helpers.documents import chain, failing_doc, node
from tests.helpers.instances import start_many
from tests.helpers.processes import publish_document, published
from tests.helpers.workers import drain
from webapp.models import Process


def _name(engine, key: str, name: str) -> None:
    engine.execute(update(Process).where(Process.key == key).values(name=name))
    engine.commit()


def test_the_overview_names_the_process_partition_node_and_error(operator, engine):
    start_many(engine, publish_document(failing_doc(), key="pay", partition="hr"), 1)
    drain(engine)
    _name(engine, "pay", "Card payment")
    page = operator.get("/operations/").get_data(as_text=True)
    incidents = page[page.index('id="incidents"') : page.index('id="last-day"')]
    assert 'Card payment <span class="hint">pay</span>' in incidents
    assert "in Human resources" in incidents
    assert 'Charge <span class="hint"><code>charge</code></span>' in incidents
    assert "card declined" in incidents
    by_process = page[page.index('id="by-process"') :]
    assert ">Card payment</a>" in by_process


def test_the_list_names_the_process_partition_and_failed_node(operator, engine):
    start_many(engine, publish_document(failing_doc(), key="pay", partition="hr"), 1)
    drain(engine)
    _name(engine, "pay", "Card payment")
    page = operator.get("/operations/instances").get_data(as_text=True)
    row = re.search(
        r"<tr>\s*<td><input[^>]*>.*?</tr>|<tr>\s*<td><a href=\"/operations/instances/\d+\".*?</tr>",
        page,
        re.S,
    )
    assert row, page
    cells = row.group(0)
    assert 'Card payment <span class="hint">pay v1</span>' in cells
    assert 'at Charge <span class="hint"><code>charge</code></span>' in cells
    assert 'Human resources <span class="hint">hr</span>' in cells


def test_the_jobs_and_heat_tables_name_nodes(operator, engine):
    [failed] = start_many(engine, publish_document(failing_doc(), key="pay"), 1)
    drain(engine)
    page = operator.get(f"/operations/instances/{failed}").get_data(as_text=True)
    jobs = page[page.index('id="live-jobs"') :]
    assert re.search(r'<td>Charge <span class="hint"><code>charge</code></span>', jobs)
    start_many(engine, published("invoice"), 1)
    heat = operator.get("/operations/heat/invoice").get_data(as_text=True)
    assert '<td>Review <span class="hint"><code>review</code></span></td><td>1</td>' in heat


def test_an_untitled_node_is_named_by_its_place_in_the_incident_history_and_list(operator, engine):
    doc = chain(
        ("check", node("scriptTask", "Check stock", script="y = 1")),
        ("calc", node("scriptTask", script="x = $input.a / $input.b")),
    )
    [failed] = start_many(engine, publish_document(doc, key="stock"), 1, input={"a": 1, "b": 0})
    page = unescape(operator.get(f"/operations/instances/{failed}").get_data(as_text=True))
    named = "the script task after 'Check stock'"
    assert f"Failed at {named}</strong> (<code>calc</code>)" in page, "the id stays beside it"
    assert f"The script of {named} failed" in page
    history = page[page.index('id="history"') :]
    assert f"<td>{named}</td>" in history and "<td>Check stock</td>" in history
    assert "<td>calc</td>" not in history

    listed = unescape(operator.get("/operations/instances").get_data(as_text=True))
    assert f'at {named} <span class="hint"><code>calc</code></span>' in listed
