"""Damaged DMN files never crash the library: reading raises DmnImportError or gives a document
that checks, writes, reads back the same and evaluates or raises DecisionError."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import PROPERTY
from tests.helpers.dmn import INVOICE_DMN
from tests.helpers.dmn_corpus import dmn_files
from webapp.process.dmn import (
    DecisionError,
    DmnImportError,
    check,
    decision_ids,
    evaluate,
    evaluate_table,
    read_dmn,
    write_dmn,
)

FILES = [INVOICE_DMN.encode(), *(path.read_bytes() for path in dmn_files())]
PIECES = [
    b"<", b">", b'"', b"[", b"..", b"not(", b")", b"?", b"-", b'"a","b"', b"&lt;", b"date(",
    b'hitPolicy="ANY"', b'hitPolicy="PRIORITY"', b'aggregation="SUM"', b'id="dup"', b"", b"\xff",
    b'<informationRequirement><requiredDecision href="#x"/></informationRequirement>',
    b"<inputEntry><text>1</text></inputEntry>", b"<outputEntry><text>x</text></outputEntry>",
]  # fmt: skip
DATA = [{}, {"x": 3, "amount": 500, "invoiceCategory": "Misc", "Age": 30}, {"x": "s", "Age": None}]


def _damage(data: bytes, edits: list[tuple[float, int, bytes]]) -> bytes:
    damaged = bytearray(data)
    for where, width, piece in edits:
        start = int(where * len(damaged))
        damaged[start : start + width] = piece
    return bytes(damaged)


@PROPERTY
@given(
    st.sampled_from(FILES),
    st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 6), st.sampled_from(PIECES)),
        min_size=1,
        max_size=4,
    ),
)
def test_damaged_files_never_crash(original, edits):
    try:
        imported = read_dmn(_damage(original, edits))
    except DmnImportError as exc:
        assert exc.message
        return
    check(imported.document)
    assert read_dmn(write_dmn(imported.document)).document == imported.document
    for decision_id in decision_ids(imported.document):
        for data in DATA:
            try:
                evaluate(imported.document, decision_id, {"$vars": data}).to_json()
            except DecisionError as exc:
                assert exc.decision_id and exc.message
        try:
            evaluate_table(imported.document, decision_id, {})
        except DecisionError as exc:
            assert exc.message


def test_unsafe_and_foreign_files_are_refused_with_a_line():
    for data, words in [
        (b'<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY e "x">]><definitions/>', "DTD"),
        (b"<definitions xmlns='https://www.omg.org/spec/DMN/20191111/MODEL/'>\n<decision", "line"),
        (b'<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"/>', "Not a DMN file"),
        (b"", "empty"),
    ]:
        try:
            read_dmn(data)
        except DmnImportError as exc:
            assert words in exc.message
        else:
            raise AssertionError(f"{data!r} was read")
