"""Differential tests against SpiffWorkflow on every file of the shared BPMN corpus: each file
Flowdesk imports and publishes runs in both engines with the same inputs; the completed nodes
(with repeats) and the end state must agree. Files the importer refuses are skipped with its
reason, so the list widens by itself as Flowdesk learns more of BPMN."""

from __future__ import annotations

import pytest

from tests.differential.harness import compare
from tests.differential.scenarios import scenarios_for
from tests.process.test_bpmn_corpus import CORPUS, ENTRIES, params

FILES = [
    pytest.param(name, index, id=f"{name}#{index}" if index else name)
    for name, _ in ENTRIES
    for index in range(len(scenarios_for(name)[0]))
]


@pytest.mark.parametrize(
    ("name", "index"), FILES or [pytest.param("", 0, marks=params([])[0].marks)]
)
def test_corpus_file_runs_alike_in_flowdesk_and_spiff(name: str, index: int, worker) -> None:
    assert CORPUS is not None
    scenarios, known = scenarios_for(name)
    compare((CORPUS / name).read_bytes(), scenarios[index], worker, known=known)
