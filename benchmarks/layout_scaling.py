"""Benchmark: auto layout of processes without diagram data, by shape and size.

For each shape of tests/process/layout_shapes.py (wide parallel, exclusive and inclusive
fan-outs, flows skipping layers, crossing flows, loops, nested sub-processes, boundary events)
and n = 10, 100, 1,000 elements, prints the seconds `auto_layout` takes on the document and
`import_bpmn` takes on the same process as a BPMN file without diagram data (reading,
converting, laying out). Both must grow about linearly with n.

    .venv/bin/python benchmarks/layout_scaling.py [--sizes 10,100,1000] [--shape fan]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.layout_shapes import SHAPES, bpmn_file  # noqa: E402
from webapp.process.bpmn import BpmnImportError, auto_layout, import_bpmn  # noqa: E402


def _seconds(action: object) -> float:
    began = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--shape", default="", help="only shapes whose name contains this")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"{'shape':<24}{'n':>6}{'flows':>7}{'layout s':>10}{'import s':>10}")
    for name, build in SHAPES.items():
        if args.shape not in name:
            continue
        for n in sizes:
            doc = build(n)
            text = bpmn_file(doc)
            layout = _seconds(lambda doc=doc: auto_layout(doc))
            try:
                shown = f"{_seconds(lambda text=text: import_bpmn(text)):>10.3f}"
            except BpmnImportError as error:
                shown = f"  refused: {error}"
            print(f"{name:<24}{n:>6}{len(doc['flows']):>7}{layout:>10.3f}{shown}")


if __name__ == "__main__":
    main()
