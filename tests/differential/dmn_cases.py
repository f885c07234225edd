"""The DMN corpus's tables with the inputs SpiffWorkflow's own tests give them (written out here,
not copied), and the description of the rule those tests expect; one row per evaluation.

`data` is the task data (Spiff) and `$vars` (Flowdesk); Spiff's tests pass some numbers as
Decimal, which JSON-based Flowdesk data cannot hold, so `flowdesk` gives them as floats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

P = "spiffworkflow/dmn__python_engine__data__"


@dataclass(frozen=True)
class Case:
    file: str
    data: dict[str, Any]
    expect: str | None = None  # description of the first matching rule, per Spiff's tests
    flowdesk: dict[str, Any] | None = field(default=None)

    @property
    def flowdesk_data(self) -> dict[str, Any]:
        return self.data if self.flowdesk is None else self.flowdesk


def _ages(file: str, pairs: list[tuple[Any, str]]) -> list[Case]:
    return [
        Case(
            P + file,
            {"Age": age},
            expect,
            {"Age": float(age)} if isinstance(age, Decimal) else None,
        )
        for age, expect in pairs
    ]


INCL, EXCL = "100-110 Inclusive Annotation", "100-110 Exclusive Annotation"
ELSE = "ELSE Row Annotation"
D_INCL, D_EXCL = "100.05-110.05 Inclusive Annotation", "100.05-110.05 Exclusive Annotation"
D_EI, D_IE = "100.05-110.05 ExclInclusive Annotation", "100.05-110.05 InclExclusive Annotation"
D = Decimal

CASES: list[Case] = [
    Case(P + "bool_decision.dmn", {"input": True}, "Y Row Annotation"),
    Case(P + "bool_decision.dmn", {"input": False}, "N Row Annotation"),
    Case(P + "bool_decision.dmn", {"input": None}, ELSE),
    *(
        Case(P + "date_decision.dmn", {"input": datetime.fromisoformat(when)}, expect)
        for when, expect in [
            ("2017-11-01T10:00:00", "111 Row Annotation"),
            ("2017-11-03T00:00:00", "311 Row Annotation"),
            ("2017-11-02T00:00:00", "<3.11 Row Annotation"),
            ("2017-11-04T00:00:00", ">3.11 Row Annotation"),
            ("2017-11-13T12:00:00", ">13.11<14.11 Row Annotation"),
        ]
    ),
    Case(
        P + "dict_decision.dmn",
        {"allergies": {"PEANUTS": {"delicious": True}, "SPAM": {"delicious": False}}},
        "They are allergic to peanuts",
    ),
    Case(
        P + "dict_decision.dmn",
        {"allergies": {"SpAm": {"delicious": False}, "SPAM": {"delicious": False}}},
        "They are not allergic to peanuts",
    ),
    *_ages(
        "integer_decision_comparison.dmn",
        [(30, "30 Row Annotation"), (24, "L Row Annotation"), (25, "H Row Annotation")],
    ),
    *_ages(
        "integer_decision_range_inclusive.dmn", [(100, INCL), (99, ELSE), (110, INCL), (111, ELSE)]
    ),
    *_ages(
        "integer_decision_range_exclusive.dmn", [(100, ELSE), (101, EXCL), (110, ELSE), (109, EXCL)]
    ),
    *_ages(
        "integer_decision_range_excl_inclusive.dmn",
        [
            (100, ELSE),
            (101, "100-110 ExclInclusive Annotation"),
            (110, "100-110 ExclInclusive Annotation"),
            (111, ELSE),
        ],
    ),
    *_ages(
        "integer_decision_range_incl_exclusive.dmn",
        [
            (100, "100-110 InclExclusive Annotation"),
            (99, ELSE),
            (110, ELSE),
            (109, "100-110 InclExclusive Annotation"),
        ],
    ),
    *(
        Case(P + "list_decision.dmn", {"allergies": allergies}, expect)
        for allergies, expect in [
            (["PEANUTS", "SPAM"], "They are allergic to peanuts"),
            (["SPAM", "SPAM"], "They are not allergic to peanuts"),
        ]
    ),
    *_ages(
        "long_or_double_decision_comparison.dmn",
        [
            (D("30.5"), "30.5 Row Annotation"),
            (D("25.3"), "L Row Annotation"),
            (D("25.4"), "H Row Annotation"),
        ],
    ),
    *_ages(
        "long_or_double_decision_range_inclusive.dmn",
        [(D("100.05"), D_INCL), (D("99"), ELSE), (D("110.05"), D_INCL), (D("111"), ELSE)],
    ),
    *_ages(
        "long_or_double_decision_range_exclusive.dmn",
        [(D("100.05"), ELSE), (D("101"), D_EXCL), (D("110.05"), ELSE), (D("109"), D_EXCL)],
    ),
    *_ages(
        "long_or_double_decision_range_excl_inclusive.dmn",
        [(D("100.05"), ELSE), (D("101"), D_EI), (D("110.05"), D_EI), (D("111"), ELSE)],
    ),
    *_ages(
        "long_or_double_decision_range_incl_exclusive.dmn",
        [(D("100.05"), D_IE), (D("99"), ELSE), (D("110.05"), ELSE), (D("109"), D_IE)],
    ),
    *(
        Case(P + "string_decision.dmn", {"Gender": gender}, expect)
        for gender, expect in [
            ("m", "m Row Annotation"),
            ("f", "f Row Annotation"),
            ("y", "NOT x Row Annotation"),
            ("x", ELSE),
        ]
    ),
    *(
        Case(P + "string_integer_decision.dmn", {"Gender": gender, "Age": age}, expect)
        for gender, age, expect in [
            ("m", 30, "m30 Row Annotation"),
            ("m", 24, "mL Row Annotation"),
            ("m", 25, "mH Row Annotation"),
            ("f", -1, "fL Row Annotation"),
            ("x", 0, ELSE),
        ]
    ),
    # Files Spiff's tests only load or run inside a process: inputs chosen here.
    *(Case(P + "kwargs_parameter.dmn", {"Gender": g}) for g in ("m", "f", "x")),
    *(Case(P + "test_integer_decision.dmn", {"x": x}) for x in (2, 3, 4, 5, 6, 9)),
    *(
        Case("spiffworkflow/camunda__data__dmn__test_integer_decision.dmn", {"x": x})
        for x in (3, 4, 5, 6, 2)
    ),
    *(
        Case(
            "spiffworkflow/camunda__data__dmn__test_integer_decision_multi.dmn", {"item": {"x": x}}
        )
        for x in (3, 4, 5, 7)
    ),
    Case("spiffworkflow/dmn__data__input_dash.dmn", {"a": ""}),
    *(
        Case("spiffworkflow/dmn__data__unique_hit.dmn", {"name": n})
        for n in ("Larry", "Mo", "Nobody")
    ),
    *(
        Case("spiffworkflow/dmn__data__collect_hit.dmn", {"type": t})
        for t in ("stooge", "farmer", "cat")
    ),
    *(
        Case(
            f"spiffworkflow/dmn__data__dmn_version_test__dmn_version_{v}_test.dmn", {"allergies": a}
        )
        for v in ("20151101", "20191111")
        for a in (["PEANUTS", "SPAM"], ["SPAM"])
    ),
    *(
        Case("spiffworkflow/spiff__data__dmn__business_rules.dmn", {"question": q})
        for q in ("X", "A", "Q")
    ),
]

#: Corpus files with no table to compare, and why.
NOT_COMPARED = {
    "spiffworkflow/bpmn__data__call_activity_nested__level2c.dmn": "an empty table whose input "
    "has neither an expression nor a label: Flowdesk refuses it (dmn.untranslatable)",
    P + "exclusive.dmn": "its input expression is a Python list comprehension; Flowdesk refuses "
    "it (dmn.untranslatable), and Spiff's own test expects it to fail on misspelt data",
}
