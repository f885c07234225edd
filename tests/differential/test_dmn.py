"""DMN decisions in Flowdesk and in SpiffWorkflow's DMN engine, the oracle, on the same inputs.

Both must match the same rules with the same outputs; the table's hit policy is then applied to
Spiff's matches as DMN 1.3 defines it (Spiff itself knows only first match and COLLECT) and must
give Flowdesk's result. Where Spiff's own result differs and the spec says otherwise, the case is
recorded in tests/differential/README.md and the spec's result is asserted for Flowdesk.
"""

from __future__ import annotations

import copy

import pytest

from tests.differential import dmn_spiff
from tests.differential.dmn_cases import CASES, NOT_COMPARED, Case
from tests.differential.dmn_generated import generate
from tests.helpers.dmn_corpus import corpus_ids, dmn_corpus_dir, dmn_file, dmn_files
from webapp.process.dmn import DecisionError, decision_ids, evaluate, read_dmn

GENERATED = generate()


def _all_matches(document: dict, decision_id: str, data: dict):
    """Flowdesk's evaluation with every matching rule kept (RULE ORDER), for the comparison."""
    every = copy.deepcopy(document)
    for decision in every["decisions"]:
        if decision["id"] == decision_id:
            decision["table"]["hitPolicy"] = "RULE ORDER"
            decision["table"]["aggregation"] = None
    return evaluate(every, decision_id, {"$vars": data})


def _compare(document: dict, xml: bytes | str, spiff_data: dict, data: dict, where: str) -> None:
    decision_id = decision_ids(document)[0]
    table = document["decisions"][0]["table"]
    rules, outputs = dmn_spiff.matches(xml, spiff_data)
    ours = _all_matches(document, decision_id, data)
    assert ours.matched == rules, where
    assert ours.outputs == outputs, where
    allowed = {o["name"]: o["values"] for o in table["outputs"] if o.get("values")}
    kind, expected = dmn_spiff.spec_result(
        table["hitPolicy"], table["aggregation"], allowed, rules, outputs
    )
    if kind == "error":
        with pytest.raises(DecisionError) as caught:
            evaluate(document, decision_id, {"$vars": data})
        assert caught.value.rules == expected, where
    else:
        assert evaluate(document, decision_id, {"$vars": data}).result == expected, where


@pytest.mark.skipif(dmn_corpus_dir() is None, reason="DMN corpus not found")
@pytest.mark.parametrize("case", CASES, ids=[f"{c.file.split('__')[-1]}-{c.data}" for c in CASES])
def test_corpus_table_agrees_with_spiff(case: Case):
    xml = dmn_file(case.file)
    imported = read_dmn(xml)
    assert not [p.message for p in imported.problems if p.blocking]
    if case.expect is not None:  # the table and inputs are those of Spiff's own test
        assert dmn_spiff.first_description(xml, case.data) == case.expect
    _compare(imported.document, xml, case.data, case.flowdesk_data, case.file)


def test_unique_overlap_spiff_takes_the_first_match_flowdesk_names_the_rules():
    """Recorded disagreement: Spiff reads UNIQUE as first match; DMN 1.3 makes two matches an
    error. string_integer_decision.dmn's ELSE row overlaps every other rule."""
    xml = dmn_file("spiffworkflow/dmn__python_engine__data__string_integer_decision.dmn")
    data = {"Gender": "m", "Age": 30}
    assert dmn_spiff.result(xml, data) == {"Result": "30"}  # Spiff: the first match, no error
    document = read_dmn(xml).document
    with pytest.raises(DecisionError, match="UNIQUE hit policy: rules 1, 3 and 6 all match"):
        evaluate(document, decision_ids(document)[0], {"$vars": data})


@pytest.mark.skipif(dmn_corpus_dir() is None, reason="DMN corpus not found")
@pytest.mark.parametrize("path", dmn_files(), ids=corpus_ids(dmn_files()))
def test_every_corpus_file_is_compared_or_refused_saying_why(path):
    name = str(path.relative_to(dmn_corpus_dir()))
    imported = read_dmn(path.read_bytes())
    blocking = [p for p in imported.problems if p.blocking]
    compared = any(case.file == name for case in CASES)
    if compared:
        assert not blocking
    elif name in NOT_COMPARED:
        assert [p.code for p in blocking] == ["dmn.untranslatable"]
    else:  # a file that only draws: its decision has no logic to evaluate
        assert [p.code for p in blocking] == ["dmn.decision-logic"]
        assert dmn_spiff.table_count(path.read_bytes()) == 0


@pytest.mark.parametrize("index", range(len(GENERATED)), ids=lambda i: f"table{i}")
def test_generated_table_agrees_with_spiff(index):
    generated = GENERATED[index]
    imported = read_dmn(generated.feel)
    assert not imported.problems
    for data in generated.inputs:
        _compare(imported.document, generated.python, data, data, f"{generated.feel}\n{data}")
