"""Play on a draft with an ad-hoc sub-process: the page offers its activities while it runs,
and starting one is recorded as an `activate` step."""

from __future__ import annotations

import html
import json
import re

from tests.helpers.designer import token
from tests.helpers.documents import document, flow, inside, node
from webapp.designer.scenario_form import node_choices

ROLE = {"type": "role", "value": "approver"}


def _doc() -> dict:
    nodes = {
        "start": node("startEvent"),
        "work": node("adHocSubProcess", "Work"),
        "call": inside("work", "userTask", "Call the customer", assignee=ROLE),
        "note": inside("work", "manualTask", "Take a note"),
        "end": node("endEvent"),
    }
    return document(nodes, {"f1": flow("start", "work"), "f2": flow("work", "end")}, key="c")


def _step(client, pid, run: str, op: str, **data):
    path = f"/designer/{pid}/play"
    return client.post(path, data={"csrf_token": token(client, path), "played": run, "op": op,
                                   **data})  # fmt: skip


def _played(page: str) -> str:
    found = re.search(r'name="played" value="([^"]*)"', page)
    assert found
    return html.unescape(found.group(1))


def test_play_offers_and_records_the_ad_hoc_activities(designer, make_process):
    pid = make_process(key="cases", doc=_doc())
    started = _step(designer, pid, "", "start")
    page = started.get_data(as_text=True)
    assert started.status_code == 200, page[page.find("<main") :][:1500]
    assert "Start Call the customer" in page and "Start Take a note" in page
    answer = _step(designer, pid, _played(page), "activate", node="call")
    after = answer.get_data(as_text=True)
    assert answer.status_code == 200, after[after.find("<main") :][:1500]
    assert json.loads(_played(after))["actions"] == [{"do": "activate", "node": "call"}]
    assert "Complete “Call the customer”" in after, after[after.find("play-refused") :][:400]
    wrong = _step(designer, pid, _played(after), "activate", node="end")
    assert wrong.status_code == 422


def test_the_scenario_form_offers_the_ad_hoc_activities_for_an_activate_row():
    assert node_choices(_doc())["activate"] == [
        ("call", "Call the customer (call)"),
        ("note", "Take a note (note)"),
    ]
