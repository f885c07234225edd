"""Differential tests on the hand-made BPMN files in `files/`: flat edge cases, and each element
of issue 15 (sub-processes, boundary timers, errors, escalations, terminate ends, multi-instance).
Files Flowdesk's importer refuses are skipped with its reason until support lands."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.differential.harness import compare, precheck
from tests.differential.scenarios import scenarios_for

FOLDER = Path(__file__).resolve().parent / "files"


def _params(path: Path) -> list[object]:
    name = f"files/{path.name}"
    xml = path.read_bytes()
    found = []
    for index, scenario in enumerate(scenarios_for(name)[0]):
        reason = precheck(xml, scenario)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        found.append(pytest.param(name, index, id=f"{path.stem}#{index}", marks=marks))
    return found


FILES = [param for path in sorted(FOLDER.glob("*.bpmn")) for param in _params(path)]


def test_every_hand_made_file_has_a_scenario() -> None:
    names = {f"files/{path.name}" for path in FOLDER.glob("*.bpmn")}
    assert names and all(scenarios_for(name)[1] for name in names)


@pytest.mark.parametrize(("name", "index"), FILES)
def test_file_runs_alike_in_flowdesk_and_spiff(name: str, index: int, worker) -> None:
    scenarios, known = scenarios_for(name)
    xml = (FOLDER / name.removeprefix("files/")).read_bytes()
    compare(xml, scenarios[index], worker, known=known)
