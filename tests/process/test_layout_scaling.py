"""Auto layout of files without diagram data takes time about linear in the number of flows,
whatever the shape: a wide fan-out once hung a web worker (n = 72 ran past four minutes)."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

import pytest

from tests.helpers.layout_shapes import SHAPES, bpmn_file, fan
from webapp.process.bpmn import auto_layout, export_bpmn, import_bpmn
from webapp.process.bpmn.layout import node_box

#: Generous: each case takes well under a second alone, but the machine may be busy.
BOUND = 10.0


@contextmanager
def _at_most(seconds: float) -> Iterator[None]:
    """Fail (instead of hanging) when the block runs past `seconds`."""

    def stop(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    with _at_most(3 * BOUND):
        began = time.process_time()
        result = action()
        return time.process_time() - began, result


def _assert_drawn(doc: dict[str, Any]) -> None:
    """Every node has a box; every flow has an orthogonal route from its source's border to its
    target's."""
    boxes = {node_id: node_box(node) for node_id, node in doc["nodes"].items()}
    assert all(boxes.values())
    for flow_id, flow in doc["flows"].items():
        points = [(p["x"], p["y"]) for p in flow["waypoints"]]
        assert len(points) >= 2, flow_id
        assert all(a[0] == b[0] or a[1] == b[1] for a, b in pairwise(points)), flow_id
        for end, node_id in ((points[0], flow["source"]), (points[-1], flow["target"])):
            x, y, w, h = boxes[node_id]  # type: ignore[misc]
            assert x - 1 <= end[0] <= x + w + 1 and y - 1 <= end[1] <= y + h + 1, flow_id


@pytest.mark.parametrize("n", [10, 100, 1000])
def test_a_wide_parallel_fan_out_without_diagram_imports_in_bounded_time(n: int) -> None:
    seconds, result = _timed(lambda: import_bpmn(bpmn_file(fan(n))))
    assert seconds < BOUND
    assert any(w.code == "import.auto_layout" for w in result.warnings)
    assert len(result.document["nodes"]) == n + 4
    _assert_drawn(result.document)


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_of_1000_elements_is_laid_out_in_bounded_time(shape: str) -> None:
    doc = SHAPES[shape](1000)
    seconds, laid_out = _timed(lambda: auto_layout(doc))
    assert seconds < BOUND
    _assert_drawn(laid_out)
    for flow in laid_out["flows"].values():
        flow["waypoints"] = []
    seconds, _ = _timed(lambda: export_bpmn(laid_out))
    assert seconds < BOUND, "the export routes flows without waypoints the same way"


def test_the_layout_time_grows_about_linearly_with_the_fan_out() -> None:
    small = min(_timed(lambda: auto_layout(fan(100)))[0] for _ in range(3))
    large = min(_timed(lambda: auto_layout(fan(1000)))[0] for _ in range(2))
    assert large < 40 * max(small, 0.005), (small, large)


def test_a_crowded_fan_out_leaves_and_enters_as_one_bus() -> None:
    """More exits than a gateway's side has distinct ports for: they leave from its middle and
    turn in one column (a trunk) instead of tangling a tiny distance apart."""
    doc = auto_layout(fan(100))
    x, y, w, h = node_box(doc["nodes"]["split"])  # type: ignore[misc]
    exits = [f["waypoints"] for f in doc["flows"].values() if f["source"] == "split"]
    assert {(p[0]["x"], p[0]["y"]) for p in exits} == {(x + w, y + h / 2)}
    assert len({p[1]["x"] for p in exits if len(p) > 2}) == 1
    jx, jy, _, jh = node_box(doc["nodes"]["join"])  # type: ignore[misc]
    entries = [f["waypoints"] for f in doc["flows"].values() if f["target"] == "join"]
    assert {(p[-1]["x"], p[-1]["y"]) for p in entries} == {(jx, jy + jh / 2)}
