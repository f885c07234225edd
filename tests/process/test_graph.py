"""Tests for the graph helpers behind validation."""

from __future__ import annotations

from webapp.process.graph import (
    ancestor_masks,
    build_graph,
    cyclic_nodes,
    dominates,
    dominator_intervals,
    immediate_dominators,
    reachable,
    sink_components,
    source_components,
    strongly_connected,
)


def graph_of(*edges: tuple[int, int], size: int) -> tuple[list[list[int]], list[list[int]]]:
    succ: list[list[int]] = [[] for _ in range(size)]
    pred: list[list[int]] = [[] for _ in range(size)]
    for a, b in edges:
        succ[a].append(b)
        pred[b].append(a)
    return succ, pred


def test_build_graph_skips_dangling_flows_and_keeps_order() -> None:
    nodes = {"a": {}, "b": {}, "c": {}}
    flows = {
        "f2": {"source": "a", "target": "c"},
        "f1": {"source": "a", "target": "b"},
        "bad": {"source": "a", "target": "ghost"},
    }
    graph = build_graph(nodes, flows)
    assert graph.ids == ["a", "b", "c"]
    assert graph.out_flows[0] == [("f2", 2), ("f1", 1)]
    assert graph.in_flows[2] == [("f2", 0)]
    assert graph.succ[0] == [2, 1]
    assert len(graph) == 3


def test_reachable() -> None:
    succ, pred = graph_of((0, 1), (1, 2), (3, 2), size=4)
    assert reachable(succ, [0]) == [True, True, True, False]
    assert reachable(pred, [2]) == [True, True, True, True]


def test_strongly_connected_components_sinks_first() -> None:
    # 0 -> 1 <-> 2 -> 3, 3 -> 3
    succ, pred = graph_of((0, 1), (1, 2), (2, 1), (2, 3), (3, 3), size=4)
    comp = strongly_connected(succ)
    assert comp[1] == comp[2]
    assert len({comp[0], comp[1], comp[3]}) == 3
    assert comp[3] < comp[1] < comp[0]
    assert cyclic_nodes(succ, comp) == [False, True, True, True]
    assert source_components(range(4), pred, comp) == [0]
    assert sink_components(range(4), succ, comp) == [3]


def test_strongly_connected_handles_long_chains_without_recursion() -> None:
    size = 20_000
    succ, _ = graph_of(*((i, i + 1) for i in range(size - 1)), (size - 1, 0), size=size)
    assert len(set(strongly_connected(succ))) == 1


def test_ancestor_masks() -> None:
    # 0 -> 1 -> 2 -> 1, 2 -> 3
    succ, _ = graph_of((0, 1), (1, 2), (2, 1), (2, 3), size=4)
    comp = strongly_connected(succ)
    masks = ancestor_masks(succ, comp, cyclic_nodes(succ, comp))
    assert masks[0] == 0
    assert masks[1] == 0b0111
    assert masks[2] == 0b0111
    assert masks[3] == 0b0111


def test_dominators_and_post_dominators() -> None:
    # 0 -> {1, 2} -> 3 -> 4 ; 5 is unreachable
    succ, pred = graph_of((0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (5, 4), size=6)
    idom = immediate_dominators(succ, pred, [0])
    assert idom == [6, 0, 0, 0, 3, None]
    intervals = dominator_intervals(idom)
    assert dominates(intervals, 0, 4)
    assert dominates(intervals, 3, 4)
    assert not dominates(intervals, 1, 3)
    assert not dominates(intervals, 5, 4)
    ipdom = immediate_dominators(pred, succ, [4])
    assert ipdom[:4] == [3, 3, 3, 4]
