"""The instance diagram of a structured process in Chromium: marks inside an expanded
sub-process, inside a collapsed one after drilling down, and a multi-instance task's "done/total"
badge, with accessible names and a clean axe audit."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.documents import document, flow, node
from tests.helpers.instances import start
from tests.helpers.processes import publish_document
from webapp.models import Task

pytestmark = pytest.mark.browser

engine = engine_conftest.engine

ALICE = {"type": "user", "value": "alice"}

# Hand-written until the BPMN writer exports nested elements: an expanded sub-process "Legal
# review", a multi-instance "Review" and a collapsed sub-process "Archive", in parallel.


def _document() -> dict:
    def inside(parent: str, kind: str, title: str = "", **config) -> dict:
        return {**node(kind, title, **config), "parent": parent}

    review = node(
        "userTask",
        "Review",
        assignee=ALICE,
        multiInstance={"collection": "$input.reviewers", "element": "reviewer"},
    )
    nodes = {
        "start": node("startEvent", "Start"),
        "split": node("parallelGateway"),
        "sub": node("subProcess", "Legal review"),
        "s_start": inside("sub", "startEvent"),
        "check": inside("sub", "userTask", "Check", assignee=ALICE),
        "s_end": inside("sub", "endEvent"),
        "review": review,
        "archive": node("subProcess", "Archive", collapsed=True),
        "a_start": inside("archive", "startEvent"),
        "file": inside("archive", "userTask", "File", assignee=ALICE),
        "a_end": inside("archive", "endEvent"),
        "join": node("parallelGateway"),
        "end": node("endEvent", "Done"),
    }
    pairs = {
        "f1": ("start", "split"),
        "f2": ("split", "sub"),
        "f3": ("split", "review"),
        "f4": ("split", "archive"),
        "f5": ("sub", "join"),
        "f6": ("review", "join"),
        "f7": ("archive", "join"),
        "f8": ("join", "end"),
        "s1": ("s_start", "check"),
        "s2": ("check", "s_end"),
        "a1": ("a_start", "file"),
        "a2": ("file", "a_end"),
    }
    return document(nodes, {fid: flow(a, b) for fid, (a, b) in pairs.items()})


def _marked(page, marker: str, element_id: str):
    return page.locator(f'.djs-element.{marker}[data-element-id="{element_id}"]')


def test_the_diagram_marks_nested_tokens_and_multi_instance_progress(page, demo, engine):
    from webapp.engine import steps
    from webapp.services.jobs import commit

    version = publish_document(_document(), key="orders", name="Orders")
    instance_id = start(engine, version, input={"reviewers": ["ann", "bob", "cy"]})
    first = engine.scalars(
        select(Task).where(Task.instance_id == instance_id, Task.node_id == "review")
    ).first()
    commit(steps.complete_task(engine, first.id, {}, actor=None))

    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')

    assert _marked(page, "op-active", "check").count() == 1, "the task inside the sub-process"
    assert _marked(page, "op-visited", "s_start").count() == 1
    assert _marked(page, "op-visited", "s1").count() == 1, "the nested flow it took"
    assert _marked(page, "op-active", "sub").count() == 1
    progress = page.get_by_role("img", name="Multi-instance: 1 of 3 done")
    assert progress.is_visible() and progress.inner_text() == "1/3"
    assert _marked(page, "op-active", "archive").count() == 1
    assert not _marked(page, "op-active", "file").is_visible(), "inside the collapsed one"
    assert serious_violations(page) == []

    page.get_by_role("button", name="Open Archive").click()
    expect(_marked(page, "op-active", "file")).to_be_visible()  # drilled down, the inner task shows
    assert _marked(page, "op-visited", "a_start").is_visible()
    assert page.locator(".bjs-breadcrumbs").filter(has_text="Archive").is_visible()
    page.locator(".bjs-breadcrumbs li").first.click()
    expect(progress).to_be_visible()  # back on the main plane


def test_a_call_activity_links_its_child_and_the_child_links_back(page, demo, engine):
    from tests.helpers.documents import caller_doc, child_doc
    from tests.helpers.workers import drain
    from webapp.models import Instance

    publish_document(child_doc(), key="child")
    parent_id = start(engine, publish_document(caller_doc(), key="caller"))
    drain(engine)
    engine.rollback()
    child_id = engine.scalar(select(Instance.id).where(Instance.parent_id == parent_id))

    sign_in(page, "operator")
    page.goto(f"/operations/instances/{parent_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    link = page.get_by_role("link", name=f"Called instance {child_id} of Check supplier")
    assert link.inner_text() == f"#{child_id}"
    assert serious_violations(page) == []
    link.click()
    page.wait_for_url(f"**/operations/instances/{child_id}")
    page.get_by_role("link", name=f"Called by instance {parent_id}").click()
    page.wait_for_url(f"**/operations/instances/{parent_id}")
