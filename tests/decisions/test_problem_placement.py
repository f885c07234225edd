"""Placing the DMN checks' problems on the table editor's rules and cells."""

from __future__ import annotations

from tests.helpers.decisions import DISCOUNT_DMN
from webapp.designer.decisions.problems import place, rule_numbers
from webapp.process import dmn


def _document() -> dict:
    return dmn.read_dmn(DISCOUNT_DMN).document


def test_problems_land_on_the_rules_and_cells_they_name():
    assert rule_numbers("rules 1 and 2 can both match; rule 5 too") == [1, 2, 5]
    decision = _document()["decisions"][0]
    problems = [
        dmn.DmnProblem(
            "dmn.overlap", "discount", None, "Decision 'discount': rules 2 and 3 overlap"
        ),
        dmn.DmnProblem(
            "dmn.untranslatable", "discount", 4,
            "Decision 'discount', rule 1, input column 'Tier': cannot translate",
        ),
        dmn.DmnProblem("dmn.other", "elsewhere", None, "Decision 'elsewhere': rule 1 is odd"),
    ]  # fmt: skip
    placed = place(decision, problems)
    assert len(placed.problems) == 2
    assert set(placed.rules) == {0, 1, 2}
    assert list(placed.cells) == [(0, "input", 1)]
