"""Linear-time graph helpers for validation: index-based adjacency, reachability, SCCs, ancestors.

Ancestor sets are Python ints used as bitsets (bit ``i`` = node ``i`` in document order), so
"can X come before Y" costs one shift for any pair once ``ancestor_masks`` has run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Graph:
    """The nodes of a normalized document in order, with the flows whose both ends exist."""

    ids: list[str]
    index: dict[str, int]
    succ: list[list[int]] = field(default_factory=list)
    pred: list[list[int]] = field(default_factory=list)
    out_flows: list[list[tuple[str, int]]] = field(default_factory=list)
    in_flows: list[list[tuple[str, int]]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)


def build_graph(nodes: Mapping[str, Any], flows: Mapping[str, Mapping[str, Any]]) -> Graph:
    """Index ``nodes`` and connect them by every flow whose source and target exist."""
    ids = list(nodes)
    graph = Graph(ids, {node_id: i for i, node_id in enumerate(ids)})
    size = len(ids)
    graph.succ = [[] for _ in range(size)]
    graph.pred = [[] for _ in range(size)]
    graph.out_flows = [[] for _ in range(size)]
    graph.in_flows = [[] for _ in range(size)]
    for flow_id, flow in flows.items():
        source_id, target_id = flow.get("source"), flow.get("target")
        if not isinstance(source_id, str) or not isinstance(target_id, str):
            continue
        source = graph.index.get(source_id)
        target = graph.index.get(target_id)
        if source is None or target is None:
            continue
        graph.succ[source].append(target)
        graph.pred[target].append(source)
        graph.out_flows[source].append((flow_id, target))
        graph.in_flows[target].append((flow_id, source))
    return graph


def reachable(adjacency: Sequence[Sequence[int]], starts: Iterable[int]) -> list[bool]:
    """Return which nodes a walk along ``adjacency`` reaches from ``starts`` (starts included)."""
    seen = [False] * len(adjacency)
    stack = []
    for start in starts:
        if not seen[start]:
            seen[start] = True
            stack.append(start)
    while stack:
        node = stack.pop()
        for nxt in adjacency[node]:
            if not seen[nxt]:
                seen[nxt] = True
                stack.append(nxt)
    return seen


def strongly_connected(succ: Sequence[Sequence[int]]) -> list[int]:
    """Tarjan's algorithm, iterative: component number per node, sinks numbered first.

    Higher component numbers therefore come earlier in a topological order of the condensation.
    """
    size = len(succ)
    index = [-1] * size
    low = [0] * size
    on_stack = [False] * size
    comp = [-1] * size
    stack: list[int] = []
    counter = 0
    components = 0
    for root in range(size):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            node, position = work[-1]
            children = succ[node]
            if position < len(children):
                work[-1] = (node, position + 1)
                child = children[position]
                if index[child] == -1:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack[child] = True
                    work.append((child, 0))
                elif on_stack[child] and index[child] < low[node]:
                    low[node] = index[child]
                continue
            work.pop()
            if work and low[node] < low[work[-1][0]]:
                low[work[-1][0]] = low[node]
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    comp[member] = components
                    if member == node:
                        break
                components += 1
    return comp


def cyclic_nodes(succ: Sequence[Sequence[int]], comp: Sequence[int]) -> list[bool]:
    """Return which nodes lie on a cycle (a component of several nodes, or a self-loop)."""
    sizes: dict[int, int] = {}
    for c in comp:
        sizes[c] = sizes.get(c, 0) + 1
    return [sizes[comp[n]] > 1 or n in succ[n] for n in range(len(succ))]


def ancestor_masks(
    succ: Sequence[Sequence[int]], comp: Sequence[int], cyclic: Sequence[bool]
) -> list[int]:
    """Bitset of the nodes that can come before each node (itself included only on a cycle)."""
    count = max(comp, default=-1) + 1
    members = [0] * count
    comp_preds: list[set[int]] = [set() for _ in range(count)]
    for node, c in enumerate(comp):
        members[c] |= 1 << node
        for nxt in succ[node]:
            if comp[nxt] != c:
                comp_preds[comp[nxt]].add(c)
    before = [0] * count
    for c in range(count - 1, -1, -1):
        mask = 0
        for p in comp_preds[c]:
            mask |= before[p] | members[p]
        before[c] = mask
    return [before[comp[n]] | (members[comp[n]] if cyclic[n] else 0) for n in range(len(comp))]


def source_components(
    nodes: Iterable[int], pred: Sequence[Sequence[int]], comp: Sequence[int]
) -> list[int]:
    """Return the given nodes whose component has no flow coming in from another component."""
    chosen = list(nodes)
    fed = {comp[n] for n in chosen if any(comp[p] != comp[n] for p in pred[n])}
    return [n for n in chosen if comp[n] not in fed]


def sink_components(
    nodes: Iterable[int], succ: Sequence[Sequence[int]], comp: Sequence[int]
) -> list[int]:
    """Return the given nodes whose component has no flow leaving to another component."""
    return source_components(nodes, succ, comp)


def immediate_dominators(
    down: Sequence[Sequence[int]], up: Sequence[Sequence[int]], roots: Sequence[int]
) -> list[int | None]:
    """Immediate dominator of each node along ``down`` from a virtual root before ``roots``.

    Cooper-Harvey-Kennedy. The virtual root is numbered ``len(down)``; nodes the roots do not
    reach get ``None``. With ``(pred, succ, ends)`` this computes post-dominators.
    """
    root = len(down)
    order: list[int] = []
    seen = [False] * (root + 1)
    seen[root] = True
    work = [(root, iter(roots))]
    while work:
        node, children = work[-1]
        child = next(children, None)
        if child is None:
            work.pop()
            order.append(node)
        elif not seen[child]:
            seen[child] = True
            work.append((child, iter(down[child])))
    number = [-1] * (root + 1)
    for position, node in enumerate(order):
        number[node] = position
    rooted = set(roots)
    idom: list[int | None] = [None] * (root + 1)
    idom[root] = root
    changed = True
    while changed:
        changed = False
        for node in reversed(order[:-1]):
            new = None
            for other in [*up[node], root] if node in rooted else up[node]:
                if idom[other] is None:
                    continue
                new = other if new is None else _intersect(other, new, idom, number)
            if new is not None and idom[node] != new:
                idom[node] = new
                changed = True
    return idom[:root]


def dominator_intervals(idom: Sequence[int | None]) -> list[tuple[int, int]]:
    """Pre/post numbers of each node in the dominator tree, for O(1) ``dominates`` checks.

    Nodes without a dominator get ``(-1, -1)``.
    """
    size = len(idom)
    children: list[list[int]] = [[] for _ in range(size + 1)]
    for node, parent in enumerate(idom):
        if parent is not None:
            children[parent].append(node)
    intervals = [(-1, -1)] * size
    pre = [0] * (size + 1)
    clock = 0
    work = [(size, iter(children[size]))]
    while work:
        node, todo = work[-1]
        child = next(todo, None)
        if child is None:
            work.pop()
            if node < size:
                intervals[node] = (pre[node], clock)
            clock += 1
        else:
            pre[child] = clock
            clock += 1
            work.append((child, iter(children[child])))
    return intervals


def dominates(intervals: Sequence[tuple[int, int]], a: int, b: int) -> bool:
    """Tell whether ``a`` dominates ``b`` (every path from the roots to ``b`` passes ``a``)."""
    start_a, end_a = intervals[a]
    start_b, end_b = intervals[b]
    return start_a >= 0 and start_b >= 0 and start_a <= start_b and end_b <= end_a


def _intersect(a: int, b: int, idom: list[int | None], number: list[int]) -> int:
    while a != b:
        while number[a] < number[b]:
            a = idom[a]  # type: ignore[assignment]
        while number[b] < number[a]:
            b = idom[b]  # type: ignore[assignment]
    return a


class FlowAnalysis:
    """Token-flow questions about parallel joins, answered from precomputed graph facts."""

    def __init__(
        self,
        graph: Graph,
        cyclic: Sequence[bool],
        ancestors: Sequence[int],
        starts: Sequence[int],
        ends: Sequence[int],
    ) -> None:
        self.graph = graph
        self.cyclic = cyclic
        self.ancestors = ancestors
        self.dominance = dominator_intervals(immediate_dominators(graph.succ, graph.pred, starts))
        self.ipdom = immediate_dominators(graph.pred, graph.succ, ends)

    def self_fed_inputs(self, join: int) -> list[str]:
        """Incoming flows of ``join`` that only carry a token after ``join`` itself has fired.

        Such an input's source is dominated by the join (every path from the start to it passes
        the join), so on the join's first activation that input is empty: a deadlock. When every
        input is like that the join is simply unreachable, which is reported elsewhere.
        """
        inputs = self.graph.in_flows[join]
        own = [flow_id for flow_id, source in inputs if dominates(self.dominance, join, source)]
        return own if len(own) < len(inputs) else []

    def refilled_inputs(self, join: int) -> list[str]:
        """Incoming flows of ``join`` that can get a token again after ``join`` has fired, when
        some other input cannot.

        The join's own output reaches those inputs' sources, so a token coming round that loop
        arrives while the other inputs stay empty for good: the join waits forever.
        """
        inputs = self.graph.in_flows[join]
        again = [flow_id for flow_id, source in inputs if self.ancestors[source] >> join & 1]
        return again if 0 < len(again) < len(inputs) else []

    def separates(
        self, split: int, join: int, choices: Sequence[frozenset[str]] | None = None
    ) -> bool:
        """Tell whether ``split`` lets only some of ``join``'s incoming flows get a token.

        ``choices`` are the sets of outgoing flows the split may take together (an inclusive
        split); None: exactly one (exclusive). Splits whose paths all meet again (at their
        post-dominator) before the join are skipped. Otherwise, for each branch collect the
        join's incoming flows it reaches without passing the split again or the join. Deadlock
        when two choices reach different non-empty sets, or when one reaches only part of them
        while another leaves without ever reaching the join or coming back to the split.
        """
        ancestors = self.ancestors
        if split == join or not ancestors[join] >> split & 1:
            return False
        merge = self.ipdom[split]
        if (
            merge is not None
            and merge not in (join, len(ancestors))
            and ancestors[join] >> merge & 1
            and not ancestors[merge] >> join & 1
        ):
            return False  # every path from the split to the join passes its merge point first
        everything = frozenset(flow_id for flow_id, _ in self.graph.in_flows[join])
        reach = {
            branch: self._branch_reach(split, join, branch, target)
            for branch, target in self.graph.out_flows[split]
        }
        if choices is None:
            choices = [frozenset({branch}) for branch in reach]
        reached: list[frozenset[str]] = []
        escapes = False
        for choice in choices:
            flows = frozenset().union(*(reach[branch][0] for branch in choice if branch in reach))
            reached.append(flows)
            loops = all(reach[branch][1] for branch in choice if branch in reach)
            escapes = escapes or (not flows and not loops)
        nonempty = {flows for flows in reached if flows}
        if len(nonempty) > 1:
            return True
        return escapes and any(flows != everything for flows in nonempty)

    def _branch_reach(
        self, split: int, join: int, branch: str, target: int
    ) -> tuple[frozenset[str], bool]:
        """Return the join's incoming flows a branch reaches, and whether it loops to the split."""
        if target == join:
            return frozenset({branch}), False
        if target == split:
            return frozenset(), True
        ancestors = self.ancestors
        if not self.cyclic[split] and not self.cyclic[join]:
            inputs = self.graph.in_flows[join]
            found = [f for f, s in inputs if s == target or ancestors[s] >> target & 1]
            return frozenset(found), False
        scope = ancestors[join] | ancestors[split]
        seen = {target}
        stack = [target]
        found_set: set[str] = set()
        loops = False
        while stack:
            node = stack.pop()
            for flow_id, nxt in self.graph.out_flows[node]:
                if nxt == join:
                    found_set.add(flow_id)
                elif nxt == split:
                    loops = True
                elif nxt not in seen and scope >> nxt & 1:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(found_set), loops
