"""Where the designer puts new shapes: never over another shape, never with the new flow running
through one, and a sub-process that grows pushes what is beside it instead of covering it."""

from __future__ import annotations

import pytest

from tests.browser.conftest import sign_in
from tests.browser.test_designer import click_shape, open_designer, pad
from tests.designer import conftest as designer_fixtures
from tests.designer.conftest import USER_TASK

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process

# Every pair of shapes that overlap (a shape and what it contains excepted), and every flow
# that runs through a shape other than its own source and target (and their containers).
CLASHES = """() => {
  const shapes = modeler.get('elementRegistry').filter(e => !e.waypoints && e.type !== 'label'
    && e.parent && e.width !== undefined && !e.host);
  const inside = (outer, inner) => {
    for (let p = inner.parent; p; p = p.parent) if (p === outer) return true;
    return false;
  };
  const apart = (a, b) => a.x >= b.x + b.width || b.x >= a.x + a.width
    || a.y >= b.y + b.height || b.y >= a.y + a.height;
  const clashes = [];
  shapes.forEach((a, i) => shapes.slice(i + 1).forEach((b) => {
    if (!inside(a, b) && !inside(b, a) && !apart(a, b)) clashes.push(`${a.id} overlaps ${b.id}`);
  }));
  modeler.get('elementRegistry').filter(e => e.waypoints).forEach((flow) => {
    const points = flow.waypoints;
    shapes.forEach((shape) => {
      const ends = [flow.source, flow.target];
      if (ends.some((end) => end === shape || inside(shape, end))) return;
      const box = {x: shape.x + 2, y: shape.y + 2, width: shape.width - 4,
        height: shape.height - 4};
      for (let i = 0; i + 1 < points.length; i++) {
        const a = points[i], b = points[i + 1];
        const seg = {x: Math.min(a.x, b.x), y: Math.min(a.y, b.y),
          width: Math.abs(a.x - b.x), height: Math.abs(a.y - b.y)};
        if (!apart(seg, box)) { clashes.push(`${flow.id} runs through ${shape.id}`); return; }
      }
    });
  });
  return clashes;
}"""


def node(kind: str, x: float, y: float, **extra) -> dict:
    return {"kind": kind, "position": {"x": x, "y": y}, **extra}


def sub_process_document() -> dict:
    """start -> a small expanded sub-process (start -> check) -> after -> done."""
    return {
        "format_version": 1,
        "nodes": {
            "start": node("startEvent", 100, 122),
            "checks": {
                "kind": "subProcess",
                "title": "Checks",
                "position": {"x": 180, "y": 60, "width": 260, "height": 160},
            },
            "c_start": node("startEvent", 210, 122, parent="checks"),
            "c_check": node("userTask", 290, 100, parent="checks", title="Check", config=USER_TASK),
            "after": node("userTask", 490, 100, title="After", config=USER_TASK),
            "done": node("endEvent", 650, 122),
        },
        "flows": {
            "f1": {"source": "start", "target": "checks"},
            "f2": {"source": "checks", "target": "after"},
            "f3": {"source": "after", "target": "done"},
            "c1": {"source": "c_start", "target": "c_check"},
        },
    }


def gateway_document() -> dict:
    """start -> gateway -> an end event right after it, as bpmn-js's own append leaves it."""
    return {
        "format_version": 1,
        "nodes": {
            "start": node("startEvent", 100, 122),
            "ok": node("exclusiveGateway", 180, 115, title="OK?"),
            "done": node("endEvent", 280, 122),
        },
        "flows": {
            "f1": {"source": "start", "target": "ok"},
            "f2": {"source": "ok", "target": "done"},
        },
    }


def clashes(page) -> list[str]:
    return page.evaluate(CLASHES)


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
