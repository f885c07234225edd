"""The automatic layout as bpmn-js draws it: routes that read the way the process runs."""

from __future__ import annotations

from itertools import pairwise

import pytest

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import open_designer, sign_in
from webapp.cli.demo_processes import purchase_request

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process


def test_the_demo_reminder_flow_runs_below_the_review_not_along_its_border(page, make_process):
    """In the Purchase request demo as bpmn-js draws it, the daily reminder's flow leaves the
    timer's bottom and runs below the Review sub-process, so it does not read as its exit."""
    pid = make_process("purchase-request", doc=purchase_request())
    sign_in(page, "designer")
    open_designer(page, pid)
    drawn = page.evaluate(
        """(() => {
          const registry = modeler.get('elementRegistry');
          const box = (id) => { const e = registry.get(id); return [e.x, e.y, e.width, e.height]; };
          const flow = registry.filter((e) => e.businessObject.sourceRef
            && e.businessObject.sourceRef.id === 'reminder')[0];
          return {points: flow.waypoints.map((p) => [p.x, p.y]), event: box('reminder'),
                  host: box('review')};
        })()"""
    )
    (x, y, w, h), (hx, hy, hw, hh) = drawn["event"], drawn["host"]
    points = drawn["points"]
    assert points[0] == [x + w / 2, y + h], "leaves from the timer's bottom"
    assert points[1][0] == points[0][0] and points[1][1] > points[0][1], "and goes down first"
    for (ax, ay), (bx, by) in pairwise(points):
        along = ay == by and abs(ay - (hy + hh)) < 10 and min(ax, bx) < hx + hw
        assert not along, f"runs along the Review's bottom border: {points}"
