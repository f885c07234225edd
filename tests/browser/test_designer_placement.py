"""Where the designer puts new shapes: never over another shape, never with the new flow running
through one, and a sub-process that grows pushes what is beside it instead of covering it."""

from __future__ import annotations

import pytest

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import clashes, click_shape, open_designer, pad, sign_in
from tests.helpers.documents import USER_TASK, gateway_document, placed

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process


def sub_process_document() -> dict:
    """start -> a small expanded sub-process (start -> check) -> after -> done."""
    return {
        "format_version": 1,
        "nodes": {
            "start": placed("startEvent", 100, 122),
            "checks": {
                "kind": "subProcess",
                "title": "Checks",
                "position": {"x": 180, "y": 60, "width": 260, "height": 160},
            },
            "c_start": placed("startEvent", 210, 122, parent="checks"),
            "c_check": placed(
                "userTask", 290, 100, parent="checks", title="Check", config=USER_TASK
            ),
            "after": placed("userTask", 490, 100, title="After", config=USER_TASK),
            "done": placed("endEvent", 650, 122),
        },
        "flows": {
            "f1": {"source": "start", "target": "checks"},
            "f2": {"source": "checks", "target": "after"},
            "f3": {"source": "after", "target": "done"},
            "c1": {"source": "c_start", "target": "c_check"},
        },
    }


def test_an_end_appended_in_a_sub_process_pushes_the_next_shape_aside(page, make_process):
    pid = make_process(doc=sub_process_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    assert clashes(page) == []
    before = page.evaluate("modeler.get('elementRegistry').get('after').x")
    click_shape(page, "c_check")
    end = pad(page, "append.end-event")
    page.keyboard.press("Escape")
    assert page.evaluate(f"modeler.get('elementRegistry').get('{end}').parent.id") == "checks"
    assert clashes(page) == []
    assert page.evaluate("modeler.get('elementRegistry').get('after').x") > before
    page.evaluate("modeler.get('commandStack').undo()")
    assert page.evaluate("modeler.get('elementRegistry').get('after').x") == before, "one undo step"


def test_shapes_appended_to_a_gateway_keep_clear_of_its_end_event(page, make_process):
    pid = make_process(doc=gateway_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    for action in ("append.user-task", "append.end-event", "append.gateway"):
        click_shape(page, "ok")
        pad(page, action)
        page.keyboard.press("Escape")
        assert clashes(page) == [], action
