"""Every corpus file's verdict (refused, imported with items left, publishable) matches
corpus_verdicts.txt; regenerate it with `python -m tests.process.corpus_verdicts --write`."""

from __future__ import annotations

import pytest

from tests.helpers.corpus_files import CORPUS, ENTRIES
from tests.helpers.requirements import needs_corpus as corpus_or_skip
from tests.process.corpus_verdicts import (
    EXECUTABLE,
    MODELLING,
    RECORDED,
    SETTING,
    Verdict,
    differences,
    recorded_lines,
    refusal_category,
    render,
    verdicts,
)
from webapp.engine import tools
from webapp.plugins import load_tools
from webapp.process.bpmn import BpmnImportError, import_bpmn
from webapp.process.validation import validate

needs_corpus = pytest.mark.corpus


@pytest.fixture(scope="module")
def found() -> list[Verdict]:
    return verdicts(corpus_or_skip())


@needs_corpus
def test_every_file_has_its_recorded_verdict(found: list[Verdict]) -> None:
    changed = differences(found, RECORDED.read_text(encoding="utf-8"))
    assert not changed, (
        "corpus verdicts changed (- recorded, + now); if intended, run "
        "`python -m tests.process.corpus_verdicts --write` and review the diff:\n"
        + "\n".join(changed)
    )


@needs_corpus
def test_recorded_file_is_sorted_and_complete(found: list[Verdict]) -> None:
    text = RECORDED.read_text(encoding="utf-8")
    names = list(recorded_lines(text))
    assert names == sorted(names) == [v.name for v in found]


def test_a_changed_verdict_shows_as_a_diff_of_its_file() -> None:
    recorded = render([Verdict("a.bpmn", "publishable"), Verdict("b.bpmn", "publishable")])
    now = [
        Verdict("a.bpmn", "publishable"),
        Verdict("b.bpmn", "imported", (("tool", "tool.unknown", "Task_1"),)),
        Verdict("c.bpmn", "refused", ((EXECUTABLE, "complexGateway", "G"),)),
    ]
    assert differences(now, recorded) == [
        "- b.bpmn: publishable",
        "+ b.bpmn: imported, 1 items: tool tool.unknown[Task_1]",
        "- c.bpmn: (not recorded)",
        "+ c.bpmn: refused: executable complexGateway[G]",
    ]


def test_refusals_are_classified() -> None:
    assert refusal_category("participant") == MODELLING
    assert refusal_category("dataObject") == MODELLING
    assert refusal_category("potentialOwner") == SETTING
    assert refusal_category("businessRuleTask") == EXECUTABLE
    assert refusal_category("boundaryEvent[conditional]") == EXECUTABLE


@needs_corpus
def test_no_file_is_refused_for_a_modelling_only_element(found: list[Verdict]) -> None:
    """Pools, message flows, data and artifacts never refuse a file."""
    refused = [v.line() for v in found if v.status == "refused" and MODELLING in v.categories()]
    assert refused == []


#: Untranslated texts that are also valid Flowdesk expressions, so nothing blocks them: XPath's
#: `true` (a path to child elements named "true" in XPath, the boolean in Flowdesk).
UNTRANSLATED_BUT_VALID = {("miwg-test-suite/reference/A.2.1.bpmn", "_To9Z7TOCEeSknpIVFCxNIQ")}


@needs_corpus
def test_every_untranslated_expression_blocks_publishing_at_its_element() -> None:
    """An expression kept as written is a publish error naming its element, never run."""
    assert CORPUS is not None
    load_tools()
    unblocked = set()
    for name in sorted(n for n, _ in ENTRIES):
        try:
            result = import_bpmn((CORPUS / name).read_bytes())
        except BpmnImportError:
            continue
        kept = {w.element_id for w in result.warnings if w.code.endswith("_untranslated")}
        if not kept:
            continue
        problems = validate(result.document, tools.specs())
        errors = {p.element_id for p in problems if p.severity == "error"}
        unblocked |= {(name, element) for element in kept - errors}
    assert unblocked == UNTRANSLATED_BUT_VALID
