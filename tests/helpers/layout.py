"""Graphs for the automatic layout, built from edges."""

from __future__ import annotations

from typing import Any


def graph(edges: list[tuple[str, str]], kinds: dict[str, str] | None = None) -> dict[str, Any]:
    names = list(dict.fromkeys([n for edge in edges for n in edge]))
    kinds = kinds or {}
    return {
        "format_version": 1,
        "nodes": {n: {"kind": kinds.get(n, "userTask"), "title": n, "config": {}} for n in names},
        "flows": {
            f"f{i}": {"source": s, "target": t, "waypoints": [{"x": 0, "y": 0}, {"x": 1, "y": 1}]}
            for i, (s, t) in enumerate(edges)
        },
    }
